package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * REPLACE USING (docs/semantics.md S5) end to end: plain JSON rows through the flows-file launcher
 * (parallelism 2) into Iceberg, in two runs, the table checked row for row after each. A key value
 * replaced several times within one checkpoint (its rows are then position-deleted), rows committed
 * by the first run replaced by the second (equality deletes on all columns, a null value among
 * them), late rows, replayed rows, equal-sequence sets, null key values matching each other, and a
 * row with a null sequence quarantined as NULL_SEQUENCE.
 */
class ReplaceUsingITCase {
    @TempDir Path tmp;

    /**
     * The flows file of job {@code payments}: one flow into {@code shop.payments}, REPLACE USING
     * (booking) SEQUENCE BY seq over plain JSON rows of {@link #row}, with {@code jobSettings}
     * (lines) before {@code flows:} and {@code flowSettings} (indented lines) before the schema.
     */
    private static String flows(List<String> jobSettings, List<String> flowSettings) {
        List<String> lines =
                new ArrayList<>(List.of("name: payments", "format: json", "namespace: shop"));
        lines.addAll(jobSettings);
        lines.addAll(
                List.of(
                        "flows:",
                        "  - table: payments",
                        "    replace-using: [booking]",
                        "    sequence-by: seq"));
        lines.addAll(flowSettings);
        lines.add("    schema: 'booking STRING, payment STRING, status STRING, seq BIGINT'");
        return String.join("\n", lines);
    }

    /** Plans {@code flows} over the files in {@code input} and runs it into {@code warehouse}. */
    private static void ingest(String flows, Path input, Path warehouse) throws Exception {
        LocalIngest.run(
                IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of(input)),
                List.of(input),
                KeysCasesITCase.quiet(warehouse));
    }

    private static String row(String booking, String payment, String status, Long seq) {
        return "{\"booking\":"
                + (booking == null ? "null" : "\"" + booking + "\"")
                + ",\"payment\":\""
                + payment
                + "\",\"status\":"
                + (status == null ? "null" : "\"" + status + "\"")
                + ",\"seq\":"
                + seq
                + "}";
    }

    /**
     * The SQL form of the README ({@code FLOW REPLACE USING ... SEQUENCE BY payment_date BY NAME},
     * a TIMESTAMP sequence) run twice with {@code changeflow run}, into an Iceberg v3 table
     * (deletion vectors for rows replaced within a checkpoint).
     */
    @Test
    void theSqlFormRunsIntoAFormatV3Table() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Path sql = tmp.resolve("payments.sql");
        Files.writeString(
                sql,
                String.join(
                        "\n",
                        "USE SCHEMA shop;",
                        "CREATE OR REFRESH STREAMING TABLE payments_current",
                        "  (booking_id STRING, payment_id STRING, status STRING, payment_date"
                                + " TIMESTAMP(3))",
                        "  TBLPROPERTIES ('changeflow.format-version' = '3')",
                        "  FLOW REPLACE USING (booking_id) SEQUENCE BY payment_date BY NAME",
                        "  SELECT * FROM STREAM read_files('in', format => 'json', table =>"
                                + " 'payments');"));
        Files.write(
                in.resolve("1.jsonl"),
                List.of(
                        payment("b1", "p1", "new", "10:00"),
                        payment("b1", "p2", "new", "10:00"),
                        payment("b1", "p3", "paid", "11:00"),
                        payment("b1", "p1", "new", "09:00"),
                        payment(null, "n1", "new", "10:00"),
                        payment("b2", "p4", "new", "10:00"),
                        payment("b2", "p4", "new", "10:00")));
        String w = tmp.resolve("warehouse").toString();
        assertThat(Main.execute("run", "--warehouse", w, sql.toString())).isZero();
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("warehouse").toAbsolutePath()).open();
        TableIdentifier id = TableIdentifier.of("shop", "payments_current");
        assertThat(TableRows.toCsvLines(cat.loadTable(id)))
                .containsExactly(
                        ",n1,new,2024-01-01 10:00:00",
                        "b1,p3,paid,2024-01-01 11:00:00",
                        "b2,p4,new,2024-01-01 10:00:00");

        Files.write(
                in.resolve("2.jsonl"),
                List.of(
                        payment("b1", "p5", "paid", "12:00"),
                        payment("b1", "p6", "paid", "12:00"),
                        payment(null, "n2", "new", "10:00")));
        assertThat(Main.execute("run", "--warehouse", w, sql.toString())).isZero();
        Table table = cat.loadTable(id);
        assertThat(
                        ((org.apache.iceberg.HasTableOperations) table)
                                .operations()
                                .current()
                                .formatVersion())
                .isEqualTo(3);
        assertThat(TableRows.toCsvLines(table))
                .containsExactly(
                        ",n1,new,2024-01-01 10:00:00",
                        ",n2,new,2024-01-01 10:00:00",
                        "b1,p5,paid,2024-01-01 12:00:00",
                        "b1,p6,paid,2024-01-01 12:00:00",
                        "b2,p4,new,2024-01-01 10:00:00");
    }

    private static String payment(String booking, String payment, String status, String time) {
        return "{\"booking_id\":"
                + (booking == null ? "null" : "\"" + booking + "\"")
                + ",\"payment_id\":\""
                + payment
                + "\",\"status\":\""
                + status
                + "\",\"payment_date\":\"2024-01-01T"
                + time
                + ":00\"}";
    }

    @Test
    void partialSnapshotsReplaceTheRowsOfTheirKeyAcrossCommits() throws Exception {
        String flows = flows(List.of("parallelism: 2"), List.of());
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(
                input.resolve("payments_1.jsonl"),
                List.of(
                        row("b1", "p1", "new", 1L),
                        row("b1", "p2", "new", 1L),
                        row("b1", "p3", null, 2L), // replaces p1, p2 in the same checkpoint
                        row("b1", "p4", "new", 2L), // joins p3 (same sequence)
                        row("b1", "p1", "new", 1L), // late: nothing
                        row("b1", "p3", null, 2L), // replay: nothing
                        row("b2", "p5", "paid", 1L),
                        row(null, "n1", "new", 1L),
                        row(null, "n2", "new", 3L), // null matches null: replaces n1
                        row(null, "n3", "paid", 3L),
                        row(null, "n4", "new", 2L), // late
                        row("b3", "p6", "new", null))); // NULL_SEQUENCE
        Path warehouse = tmp.resolve("warehouse");
        ingest(flows, input, warehouse);

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        TableIdentifier id = TableIdentifier.of("shop", "payments");
        assertThat(cat.loadTable(id).schema().identifierFieldIds()).isEmpty();
        assertThat(TableRows.toCsvLines(cat.loadTable(id)))
                .containsExactly(
                        ",n2,new,3", ",n3,paid,3", "b1,p3,,2", "b1,p4,new,2", "b2,p5,paid,1");

        Files.write(
                input.resolve("payments_2.jsonl"),
                List.of(
                        row("b1", "p7", "new", 3L), // replaces p3 (null status), p4 of run 1
                        row("b1", "p8", "new", 3L),
                        row("b1", "p9", "paid", 4L), // replaces p7, p8 of this checkpoint
                        row("b2", "p5", "new", 0L), // late
                        row(null, "n5", "new", 3L), // joins n2, n3
                        row("b4", "p10", "new", 1L)));
        ingest(flows, input, warehouse);

        Table table = cat.loadTable(id);
        assertThat(TableRows.toCsvLines(table))
                .containsExactly(
                        ",n2,new,3",
                        ",n3,paid,3",
                        ",n5,new,3",
                        "b1,p9,paid,4",
                        "b2,p5,paid,1",
                        "b4,p10,new,1");
        // both delete paths were taken: rows of this run's checkpoint by position, rows of the
        // first run by equality on all columns
        long positionDeletes = 0;
        long equalityDeletes = 0;
        for (org.apache.iceberg.Snapshot s : table.snapshots()) {
            positionDeletes +=
                    Long.parseLong(s.summary().getOrDefault("added-position-delete-files", "0"));
            equalityDeletes +=
                    Long.parseLong(s.summary().getOrDefault("added-equality-delete-files", "0"));
        }
        assertThat(positionDeletes).isPositive();
        assertThat(equalityDeletes).isPositive();
        // the decoder finds the null sequence: the quarantine row names the file and line (S5)
        assertThat(quarantine(cat))
                .containsExactly(
                        "payments | file:"
                                + input.resolve("payments_1.jsonl").toAbsolutePath()
                                + " | null | 12 | NULL_SEQUENCE | sequence column 'seq' is null | "
                                + row("b3", "p6", "new", null));
    }

    /** The quarantine table's rows: flow, source, partition, offset, reason, detail, raw. */
    private static List<String> quarantine(Catalog cat) {
        List<String> out = new ArrayList<>();
        for (Record r :
                TableRows.read(
                        cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            java.nio.ByteBuffer raw = ((java.nio.ByteBuffer) r.getField("raw")).duplicate();
            byte[] bytes = new byte[raw.remaining()];
            raw.get(bytes);
            out.add(
                    String.join(
                            " | ",
                            String.valueOf(r.getField("flow")),
                            String.valueOf(r.getField("source")),
                            String.valueOf(r.getField("partition")),
                            String.valueOf(r.getField("offset")),
                            String.valueOf(r.getField("reason")),
                            String.valueOf(r.getField("detail")),
                            new String(bytes, java.nio.charset.StandardCharsets.UTF_8)));
        }
        out.sort(null);
        return out;
    }

    /**
     * Bad sequences are found by the decoder (S5), like AUTO CDC's (A2, A5): a null SEQUENCE BY
     * value is quarantined as {@code NULL_SEQUENCE} and an absent one as {@code MISSING_COLUMN},
     * each naming its file and line; the other rows are applied. With {@code on-invalid-record:
     * fail} the run stops at the first, naming the file and the line.
     */
    @Test
    void aNullSequenceIsQuarantinedWithItsFileAndLine() throws Exception {
        String flows = flows(List.of(), List.of());
        Path input = Files.createDirectories(tmp.resolve("in"));
        Path file = input.resolve("payments_1.jsonl");
        String absent = "{\"booking\":\"b2\",\"payment\":\"p3\",\"status\":\"new\"}";
        Files.write(
                file,
                List.of(
                        row("b1", "p1", "new", 1L),
                        row("b1", "p2", "paid", null),
                        absent,
                        row(null, "n1", "new", 2L)));
        Path warehouse = tmp.resolve("warehouse");
        ingest(flows, input, warehouse);
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "payments"))))
                .containsExactly(",n1,new,2", "b1,p1,new,1");
        String source = "file:" + file.toAbsolutePath();
        assertThat(quarantine(cat))
                .containsExactly(
                        "payments | "
                                + source
                                + " | null | 2 | NULL_SEQUENCE | sequence column 'seq' is null | "
                                + row("b1", "p2", "paid", null),
                        "payments | "
                                + source
                                + " | null | 3 | MISSING_COLUMN | sequence column 'seq' absent"
                                + " from record | "
                                + absent);

        IngestPlan failing =
                IngestPlanner.plan(
                        FlowsFile.parse(flows + "\n    on-invalid-record: fail", "flows.yaml"),
                        List.of(input));
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () ->
                                LocalIngest.run(
                                        failing,
                                        List.of(input),
                                        KeysCasesITCase.quiet(tmp.resolve("warehouse2"))))
                .satisfies(
                        e -> {
                            Throwable root = e;
                            while (root.getCause() != null) {
                                root = root.getCause();
                            }
                            assertThat(root)
                                    .hasMessage(
                                            "NULL_SEQUENCE: sequence column 'seq' is null (flow"
                                                    + " 'payments', source "
                                                    + source
                                                    + ", offset 2)");
                        });
    }

    /**
     * The change feed of a REPLACE USING table is exact (semantics.md S5, F2): three runs, one
     * commit each (the checkpoint interval exceeds a run), then every version read on its own. The
     * table has no identifier fields, so a replaced row is a {@code delete} with all its old values
     * and a new row an {@code insert}, never an update pair; rows inserted and replaced within one
     * checkpoint do not appear; an identical row given twice is stored once and deleted once. The
     * delete rows are read from the equality-delete files (every commit names the flow as its
     * changelog writer) and equal the rows an Iceberg scan of the parent snapshot finds; each
     * version applied to the table before it gives the table after it.
     */
    @ParameterizedTest(name = "format v{0}")
    @ValueSource(ints = {2, 3})
    void theChangeFeedHoldsExactlyTheReplacedAndNewRows(int formatVersion) throws Exception {
        String flows =
                flows(
                        List.of("parallelism: 2", "checkpoint-interval: 1h"),
                        List.of("    format-version: " + formatVersion));
        Path input = Files.createDirectories(tmp.resolve("in"));
        Path warehouse = tmp.resolve("warehouse");
        List<List<String>> runs =
                List.of(
                        List.of(
                                row("b1", "p1", "new", 1L),
                                row("b1", "p2", "new", 1L), // two rows of a key in one commit
                                row("b2", "p5", "paid", 1L),
                                row("b2", "p5", "paid", 1L), // identical: stored once
                                row(null, "n1", "new", 1L),
                                row("b3", "p6", "new", 1L),
                                row("b3", "p7", "new", 2L)), // replaces p6 in the same commit
                        List.of(
                                row("b1", "p3", "paid", 2L), // replaces p1, p2 of version 1
                                row("b1", "p4", "new", 2L), // joins p3
                                row("b2", "p8", "new", 0L), // lower: nothing
                                row("b2", "p5", "paid", 1L), // replay: nothing
                                row(null, "n2", "new", 1L), // null key, same sequence: joins n1
                                row("b3", "p7", "new", 2L)), // replay: nothing
                        List.of(
                                row(null, "n3", null, 5L), // replaces n1, n2 (null matches null)
                                row("b1", "p9", null, 3L), // replaces p3, p4
                                row("b2", "p11", "new", 2L), // replaces the one p5
                                row("b4", "p10", "new", 1L)));
        for (int i = 0; i < runs.size(); i++) {
            Files.write(input.resolve("payments_" + (i + 1) + ".jsonl"), runs.get(i));
            ingest(flows, input, warehouse);
        }

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table table = cat.loadTable(TableIdentifier.of("shop", "payments"));
        assertThat(table.schema().identifierFieldIds()).isEmpty();
        assertThat(table.properties())
                .containsEntry(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true");
        List<org.apache.iceberg.Snapshot> snapshots = new ArrayList<>();
        table.snapshots().forEach(snapshots::add);
        List<String> writers = new ArrayList<>();
        for (org.apache.iceberg.Snapshot s : snapshots) {
            writers.add(
                    s.sequenceNumber() + " " + s.summary().get(StreamingTables.CHANGELOG_WRITER));
        }
        assertThat(writers).containsExactly("1 payments", "2 payments", "3 payments");

        List<List<String>> expected =
                List.of(
                        List.of(
                                "insert \\N,n1,new,1",
                                "insert b1,p1,new,1",
                                "insert b1,p2,new,1",
                                "insert b2,p5,paid,1",
                                "insert b3,p7,new,2"),
                        List.of(
                                "delete b1,p1,new,1",
                                "delete b1,p2,new,1",
                                "insert \\N,n2,new,1",
                                "insert b1,p3,paid,2",
                                "insert b1,p4,new,2"),
                        List.of(
                                "delete \\N,n1,new,1",
                                "delete \\N,n2,new,1",
                                "delete b1,p3,paid,2",
                                "delete b1,p4,new,2",
                                "delete b2,p5,paid,1",
                                "insert \\N,n3,\\N,5",
                                "insert b1,p9,\\N,3",
                                "insert b2,p11,new,2",
                                "insert b4,p10,new,1"));
        List<List<String>> carried = perVersion(table, snapshots, expected);
        // the same feed without trusting the delete files: deleted rows looked up in the parent
        table.updateProperties().set(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "false").commit();
        table.refresh();
        assertThat(perVersion(table, snapshots, expected)).isEqualTo(carried);
    }

    /**
     * K8 for REPLACE USING: a run over saved state with other REPLACE USING columns or another
     * SEQUENCE BY fails before its job starts, naming the change and the fix, and leaves the table
     * and the state as they were; the unchanged definition then runs on.
     */
    @Test
    void aChangedDefinitionIsRefusedBeforeTheJobStarts() throws Exception {
        String flows = flows(List.of(), List.of());
        Path input = Files.createDirectories(tmp.resolve("in"));
        Path warehouse = tmp.resolve("warehouse");
        Files.write(
                input.resolve("payments_1.jsonl"),
                List.of(row("b1", "p1", "new", 1L), row("b1", "p2", "new", 1L)));
        ingest(flows, input, warehouse);
        Files.write(input.resolve("payments_2.jsonl"), List.of(row("b1", "p3", "paid", 2L)));
        String state =
                " but the saved state of job 'payments' was built with the old definition (each"
                        + " key's applied sequence and rows would be compared with the new ones and"
                        + " rows silently dropped as late or left in the table). Restore the old"
                        + " definition, or rebuild the table from its source with --from-scratch.";
        for (String[] change :
                List.of(
                        new String[] {
                            "replace-using: [booking]",
                            "replace-using: [booking, payment]",
                            "replace-using changed from [\"booking\"] to"
                                    + " [\"booking\",\"payment\"]"
                        },
                        new String[] {
                            "sequence-by: seq",
                            "sequence-by: payment",
                            "sequence-by changed from [\"seq\"] to [\"payment\"]"
                        })) {
            IngestPlan changed =
                    IngestPlanner.plan(
                            FlowsFile.parse(flows.replace(change[0], change[1]), "flows.yaml"),
                            List.of(input));
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () ->
                                    LocalIngest.run(
                                            changed,
                                            List.of(input),
                                            KeysCasesITCase.quiet(warehouse)))
                    .isInstanceOfSatisfying(
                            dev.changeflow.operators.AutoCdcException.class,
                            e ->
                                    assertThat(e.code())
                                            .isEqualTo(
                                                    dev.changeflow.operators.AutoCdcException.Code
                                                            .FLOW_CHANGED_FOR_EXISTING_STATE))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'payments': "
                                    + change[2]
                                    + state);
        }
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        TableIdentifier id = TableIdentifier.of("shop", "payments");
        assertThat(TableRows.toCsvLines(cat.loadTable(id)))
                .containsExactly("b1,p1,new,1", "b1,p2,new,1");
        ingest(flows, input, warehouse);
        assertThat(TableRows.toCsvLines(cat.loadTable(id))).containsExactly("b1,p3,paid,2");
    }

    /**
     * Reads each version's change feed and checks it against {@code expected} (per version, {@code
     * <type> <columns>} sorted), its {@code _commit_version}, and that it turns the table before
     * the version into the table after it; returns the rendered rows of every version.
     */
    private static List<List<String>> perVersion(
            Table table, List<org.apache.iceberg.Snapshot> snapshots, List<List<String>> expected)
            throws Exception {
        int columns = 4;
        List<List<String>> all = new ArrayList<>();
        Map<List<String>, Integer> before = new HashMap<>();
        for (int i = 0; i < snapshots.size(); i++) {
            org.apache.iceberg.Snapshot snapshot = snapshots.get(i);
            long v = snapshot.sequenceNumber();
            List<List<String>> changes =
                    ChangeFeedDifferentialITCase.changes(
                            TableChanges.forTable(table)
                                    .startingVersion(v)
                                    .endingVersion(v)
                                    .build(),
                            columns);
            List<String> rendered = new ArrayList<>();
            for (List<String> c : changes) {
                assertThat(c.get(columns + 1)).as("_commit_version of " + c).isEqualTo("" + v);
                rendered.add(c.get(columns) + " " + String.join(",", c.subList(0, columns)));
            }
            rendered.sort(null);
            assertThat(rendered).as("version " + v).isEqualTo(expected.get(i));
            Map<List<String>, Integer> after =
                    ChangeFeedDifferentialITCase.multiset(
                            TableRows.readSnapshot(table, snapshot.snapshotId()), columns);
            ChangeFeedDifferentialITCase.assertSameRows(
                    "version " + v + ": state(v-1) + changes(v) vs state(v)",
                    ChangeFeedDifferentialITCase.apply(before, changes, columns, "version " + v),
                    after);
            before = after;
            all.add(rendered);
        }
        return all;
    }
}

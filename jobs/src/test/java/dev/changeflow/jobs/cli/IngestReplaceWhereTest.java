package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.jobs.sql.TableStatements;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * REPLACE WHERE flows of a flows file (docs/semantics.md S4) run by {@code ingest --flows}, over a
 * Hadoop catalog on disk with real Flink jobs: an AUTO CDC flow of plain JSON records into {@code
 * shop.orders} and a REPLACE WHERE aggregate of it into {@code gold.daily}, refreshed after the
 * ingest. A first run fills the window, {@code --refresh-where} backfills an older day (and runs no
 * ingest), late data recomputes only the window in one commit whose change feed holds only the
 * changed rows, and a run that changes nothing commits nothing. Bad input fails with the codes of
 * the SQL path, at its place in the flows file, before anything is written.
 */
class IngestReplaceWhereTest {
    @TempDir Path tmp;
    private Path in;
    private Path warehouse;

    private static final String ORDERS =
            String.join(
                    "\n",
                    "name: shop",
                    "format: json",
                    "namespace: shop",
                    "parallelism: 1",
                    "flows:",
                    "  - table: orders",
                    "    keys: [id]",
                    "    sequence-by: seq",
                    "    schema: 'id BIGINT, d BIGINT, amount BIGINT, seq BIGINT'");

    private static final String DAILY =
            String.join(
                    "\n",
                    "  - name: daily",
                    "    target: gold.daily",
                    "    replace-where: d >= 2",
                    "    query: SELECT d, SUM(amount) AS total FROM changeflow.shop.orders GROUP"
                            + " BY d");

    @BeforeEach
    void folders() throws Exception {
        in = Files.createDirectories(tmp.resolve("in"));
        warehouse = tmp.resolve("warehouse");
    }

    private static String order(long id, long d, long amount, long seq) {
        return "{\"id\":" + id + ",\"d\":" + d + ",\"amount\":" + amount + ",\"seq\":" + seq + "}";
    }

    @Test
    void recomputesTheWindowBackfillsAndCommitsNothingWhenNothingChanged() throws Exception {
        Path flows = write("shop.yaml", ORDERS + "\n" + DAILY + "\n");
        Files.write(
                in.resolve("orders_1.jsonl"),
                List.of(
                        order(1, 1, 10, 1),
                        order(2, 2, 5, 1),
                        order(3, 2, 7, 1),
                        order(4, 3, 1, 1)));
        String out = ingest("--flows", flows.toString(), in.toString());
        assertThat(out)
                .contains("REPLACE WHERE d >= 2 into gold.daily: 0 rows deleted, 2 inserted");
        assertThat(rows("shop", "orders"))
                .containsExactly("1,1,10,1", "2,2,5,1", "3,2,7,1", "4,3,1,1");
        assertThat(rows("gold", "daily")).containsExactly("2,12", "3,1");

        // backfill: only the refresh runs, replacing d >= 1 this once
        Files.write(in.resolve("orders_2.jsonl"), List.of(order(1, 1, 100, 2), order(2, 2, 6, 2)));
        out = ingest("--flows", flows.toString(), "--refresh-where", "daily=d >= 1 AND d < 2");
        assertThat(out)
                .contains("note: the flows of change records are not run: --refresh-where names")
                .contains(
                        "REPLACE WHERE d >= 1 AND d < 2 into gold.daily: 0 rows deleted, 1"
                                + " inserted in snapshot");
        assertThat(rows("shop", "orders")).as("no ingest ran").contains("1,1,10,1");
        assertThat(rows("gold", "daily")).containsExactly("1,10", "2,12", "3,1");
        Table daily = table("gold", "daily");
        long before = daily.currentSnapshot().snapshotId();

        // the late data of orders_2 (day 1, outside the window, and day 2): only day 2 changes
        out = ingest("--flows", flows.toString(), in.toString());
        assertThat(out)
                .contains("REPLACE WHERE d >= 2 into gold.daily: 1 rows deleted, 1 inserted");
        assertThat(rows("gold", "daily")).containsExactly("1,10", "2,13", "3,1");
        daily.refresh();
        assertThat(daily.currentSnapshot().parentId()).isEqualTo(before); // one commit
        assertThat(changes(daily, daily.currentSnapshot().sequenceNumber()))
                .containsExactlyInAnyOrder("delete 2,12", "insert 2,13");

        // nothing new: nothing changes, nothing is committed
        long current = daily.currentSnapshot().snapshotId();
        out = ingest("--flows", flows.toString(), in.toString());
        assertThat(out)
                .contains(
                        "REPLACE WHERE d >= 2 into gold.daily: 0 rows deleted, 0 inserted"
                                + " (nothing changed, no commit)");
        daily.refresh();
        assertThat(daily.currentSnapshot().snapshotId()).isEqualTo(current);
    }

    @Test
    void aFileOfReplaceWhereFlowsAloneTakesNoInputAndCreatesItsTableFromTheQuery()
            throws Exception {
        Path flows =
                write(
                        "only.yaml",
                        String.join(
                                "\n",
                                "flows:",
                                "  - target: gold.consts",
                                "    replace-where: k >= 2",
                                "    query: >",
                                "      SELECT * FROM (VALUES (CAST(1 AS BIGINT), CAST('a' AS STRING)),",
                                "      (CAST(2 AS BIGINT), CAST('b' AS STRING))) AS v(k, s)",
                                ""));
        String out = ingest("--flows", flows.toString());
        assertThat(out)
                .contains("REPLACE WHERE k >= 2 into gold.consts: 0 rows deleted, 1 inserted");
        assertThat(rows("gold", "consts")).containsExactly("2,b");
        // S9: the refresh that created the table is recorded, its one snapshot written
        assertThat(catalog().loadTable(TableIdentifier.of("gold", "consts")).properties())
                .containsEntry(TableStatements.STATUS, "SUCCEEDED")
                .containsEntry(TableStatements.RECORDS, "1")
                .containsEntry(TableStatements.VERSIONS, "1");
        assertThatThrownBy(() -> ingest("--flows", flows.toString(), in.toString()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "the flows file has only REPLACE WHERE flows, whose queries name the"
                                + " tables they read: give no input files or Kafka");
    }

    /**
     * A predicate calling RAND() fails before the ingest runs, at the call in the flows file; an
     * override calling UUID() at its place in the flag.
     */
    @Test
    void aNonDeterministicPredicateFailsBeforeAnythingRuns() throws Exception {
        Files.write(in.resolve("orders_1.jsonl"), List.of(order(1, 1, 10, 1)));
        Path flows =
                write(
                        "bad.yaml",
                        ORDERS
                                + "\n"
                                + DAILY.replace("d >= 2", "\"d >= 2 AND RAND() < 0.5\"")
                                + "\n");
        // line 12 is '    replace-where: "d >= 2 AND RAND() < 0.5"': the quote at column 20
        assertThatThrownBy(() -> ingest("--flows", flows.toString(), in.toString()))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.NON_DETERMINISTIC_PREDICATE);
                            assertThat(e.position())
                                    .isEqualTo(new SqlPosition(flows.toString(), 12, 32));
                        })
                .hasMessageContaining("calls RAND()");
        assertThat(catalog().tableExists(TableIdentifier.of("shop", "orders"))).isFalse();

        Path good = write("shop.yaml", ORDERS + "\n" + DAILY + "\n");
        assertThatThrownBy(
                        () ->
                                ingest(
                                        "--flows",
                                        good.toString(),
                                        "--refresh-where",
                                        "daily=d = 1 OR uuid() = ''"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.NON_DETERMINISTIC_PREDICATE);
                            assertThat(e.position())
                                    .isEqualTo(new SqlPosition("--refresh-where daily", 1, 10));
                        });
        assertThat(catalog().tableExists(TableIdentifier.of("gold", "daily"))).isFalse();
    }

    /**
     * Unknown columns in the predicate and in the query: UNKNOWN_COLUMN at each, nothing written.
     */
    @Test
    void unknownColumnsAreRefusedAtTheirPlace() throws Exception {
        String query = "    query: SELECT CAST(2 AS BIGINT) AS d, CAST(5 AS BIGINT) AS total";
        Path predicate =
                write(
                        "p.yaml",
                        String.join(
                                "\n",
                                "flows:",
                                "  - target: gold.k",
                                "    schema: 'd BIGINT, total BIGINT'",
                                "    replace-where: dd >= 2",
                                query,
                                ""));
        assertThatThrownBy(() -> ingest("--flows", predicate.toString()))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.UNKNOWN_COLUMN);
                            assertThat(e.position())
                                    .isEqualTo(new SqlPosition(predicate.toString(), 4, 20));
                        })
                .hasMessageContaining("dd");
        Path extra =
                write(
                        "q.yaml",
                        String.join(
                                "\n",
                                "flows:",
                                "  - target: gold.k",
                                "    schema: 'd BIGINT, total BIGINT'",
                                "    replace-where: d >= 2",
                                query + ", 1 AS extra",
                                ""));
        assertThatThrownBy(() -> ingest("--flows", extra.toString()))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.UNKNOWN_COLUMN);
                            assertThat(e.position())
                                    .isEqualTo(new SqlPosition(extra.toString(), 5, 12));
                        })
                .hasMessageContaining("'extra'");
        assertThat(table("gold", "k").currentSnapshot()).isNull(); // nothing written
    }

    /** The usage errors of --refresh-where and of a bad flow, exit code 2 from the command line. */
    @Test
    void badFlagsAndFlowsAreUsageErrors() throws Exception {
        Path flows = write("shop.yaml", ORDERS + "\n" + DAILY + "\n");
        assertThatThrownBy(
                        () -> ingest("--flows", flows.toString(), "--refresh-where", "weekly=d=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--refresh-where weekly: no REPLACE WHERE flow is named 'weekly'"
                                + " (REPLACE WHERE flows of "
                                + flows
                                + ": daily)");
        assertThatThrownBy(
                        () -> ingest("--flows", flows.toString(), "--refresh-where", "orders=d=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--refresh-where orders: 'orders' is a flow of change records, which has"
                                + " no predicate to override (REPLACE WHERE flows of "
                                + flows
                                + ": daily)");
        assertThatThrownBy(
                        () ->
                                ingest(
                                        "--flows",
                                        flows.toString(),
                                        "--refresh-where",
                                        "daily=d = 1",
                                        in.toString()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--refresh-where refreshes the named REPLACE WHERE flows only: give no"
                                + " input files and no --cluster");
        Path noQuery =
                write(
                        "nq.yaml",
                        "flows:\n  - target: gold.d\n    replace-where: d >= 2\n    keys: [d]\n");
        assertThat(
                        Main.execute(
                                "ingest",
                                "--warehouse",
                                warehouse.toString(),
                                "--flows",
                                noQuery.toString()))
                .isEqualTo(2);
        assertThat(warehouse).doesNotExist();
        // a FlinkDeployment runs the flows of change records until stopped: refused at deploy
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "deploy",
                        "--print",
                        "--flows",
                        flows.toString(),
                        "--state-dir",
                        "s3://lake/flink",
                        "--kafka-bootstrap",
                        "kafka:9092",
                        "--catalog",
                        "type=rest",
                        "--catalog",
                        "uri=http://rest:8181");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.stderr())
                .contains(
                        flows
                                + ": INVALID_OPTION: REPLACE WHERE flows (daily) are refreshed by batch jobs"
                                + " (ingest --flows)");
    }

    // ------------------------------------------------------------------------------ helpers

    private Path write(String name, String text) throws Exception {
        Path p = tmp.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    /** Runs {@code ingest --warehouse W args...}; returns what it printed, throws what it threw. */
    private String ingest(String... args) throws Exception {
        IngestCommand c = new IngestCommand();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        c.out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        List<String> all = new ArrayList<>(List.of("--warehouse", warehouse.toString()));
        all.addAll(List.of(args));
        new CommandLine(c).parseArgs(all.toArray(new String[0]));
        c.call();
        String out = bytes.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        return out;
    }

    private Catalog catalog() {
        return CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
    }

    private Table table(String namespace, String name) {
        return catalog().loadTable(TableIdentifier.of(namespace, name));
    }

    private List<String> rows(String namespace, String name) {
        List<String> out = new ArrayList<>(TableRows.toCsvLines(table(namespace, name)));
        out.sort(null);
        return out;
    }

    private static List<String> changes(Table t, long version) throws Exception {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read =
                TableChanges.forTable(t)
                        .startingVersion(version)
                        .endingVersion(version)
                        .build()
                        .read()) {
            read.forEach(r -> out.add(r.get(2) + " " + r.get(0) + "," + r.get(1)));
        }
        return out;
    }
}

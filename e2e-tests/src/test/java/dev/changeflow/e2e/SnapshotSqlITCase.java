package dev.changeflow.e2e;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code AUTO CDC ... FROM SNAPSHOT} in a pipeline file end to end through {@code changeflow run
 * FILE.sql} (docs/semantics.md A6, example (c)): one file holds a change-record table (JSON files,
 * the ingest job) and an SCD type 2 table from a folder of CSV snapshot files (the snapshot job
 * {@code <name>-snapshots}, run after the ingest job). The first run applies snapshots 1 and 2 and
 * gives example (c) row for row; {@code --dry-run} prints both jobs; a second run, after {@code
 * snapshot_3.csv} appears, applies only that snapshot; DESCRIBE EXTENDED names the kind, source,
 * keys, SCD type and TRACK HISTORY of the snapshot table; DROP TABLE deletes it with the snapshot
 * job's saved state.
 */
@Timeout(120)
class SnapshotSqlITCase {
    @TempDir Path tmp;

    private static final String PIPELINE =
            String.join(
                    "\n",
                    "SET checkpoint-interval = 100ms;",
                    "USE SCHEMA geo;",
                    "CREATE OR REFRESH STREAMING TABLE orders",
                    "  FLOW AUTO CDC FROM STREAM read_files('in', format => 'json', table =>"
                            + " 'orders')",
                    "  KEYS (id) SEQUENCE BY seq;",
                    "CREATE OR REFRESH STREAMING TABLE cities (id BIGINT, city STRING);",
                    "CREATE FLOW cities_from_snapshots AS AUTO CDC INTO cities",
                    "  FROM SNAPSHOT read_files('snapshots', format => 'csv')",
                    "  KEYS (id)",
                    "  STORED AS SCD TYPE 2",
                    "  TRACK HISTORY ON (city);");

    @Test
    void exampleCThroughAPipelineFile() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Path snapshots = Files.createDirectories(tmp.resolve("snapshots"));
        Path staging = Files.createDirectories(tmp.resolve("staging"));
        Path sql = tmp.resolve("geo.sql");
        Files.writeString(sql, PIPELINE + "\n");
        Files.write(
                in.resolve("1.jsonl"),
                List.of(
                        "{\"id\":1,\"amount\":10,\"seq\":1}",
                        "{\"id\":2,\"amount\":5,\"seq\":1}",
                        "{\"id\":1,\"amount\":11,\"seq\":2}"));
        publish(staging, snapshots, "snapshot_1.csv", "id,city", "1,Lyon", "2,Porto", "3,Graz");
        publish(staging, snapshots, "snapshot_2.csv", "id,city", "2,Braga", "3,Linz", "4,Turku");
        String w = tmp.resolve("warehouse").toString();

        ByteArrayOutputStream plan = new ByteArrayOutputStream();
        assertThat(run(plan, "run", "--dry-run", "--warehouse", w, sql.toString())).isZero();
        assertThat(plan.toString(StandardCharsets.UTF_8))
                .contains("  geo.orders <- table orders: AUTO CDC KEYS (id) SEQUENCE BY seq")
                .contains(
                        "Snapshot job geo-snapshots: 1 flow, run after the ingest job (AUTO CDC"
                                + " FROM SNAPSHOT, A6)")
                .contains(
                        "  geo.cities <- snapshot files in "
                                + snapshots
                                + " (read_files, FROM SNAPSHOT): AUTO CDC FROM SNAPSHOT KEYS (id)"
                                + " STORED AS SCD TYPE 2 TRACK HISTORY ON (city) (id BIGINT, city"
                                + " STRING)")
                .contains("Dry run: no table or state was written.");
        Catalog cat = CatalogSettings.localHadoop(Path.of(w).toAbsolutePath()).open();
        assertThat(cat.tableExists(CITIES)).isFalse();

        ByteArrayOutputStream run1 = new ByteArrayOutputStream();
        assertThat(run(run1, "run", "--warehouse", w, sql.toString())).isZero();
        String out1 = run1.toString(StandardCharsets.UTF_8);
        // the ingest job first, then the snapshot job
        assertThat(out1.indexOf("Applying snapshots")).isGreaterThan(out1.indexOf("geo.orders"));
        assertThat(out1).contains("Done: 2 snapshot(s) applied, 0 skipped");
        assertThat(rows(cat, ORDERS)).containsExactly("1,11,2", "2,5,1");
        assertThat(rows(cat, CITIES))
                .containsExactly(
                        "1,Lyon,1,2",
                        "2,Porto,1,2",
                        "2,Braga,2,",
                        "3,Graz,1,2",
                        "3,Linz,2,",
                        "4,Turku,2,");

        // a new snapshot: only it is applied; key 4 left, key 5 came, key 3 moved
        publish(staging, snapshots, "snapshot_3.csv", "id,city", "2,Braga", "3,Wels", "5,Turin");
        // the same pipeline with a DESCRIBE; SET name keeps the jobs (and saved state) of geo.sql
        Path describe = tmp.resolve("describe.sql");
        Files.writeString(
                describe, "SET name = geo;\n" + PIPELINE + "\nDESCRIBE TABLE EXTENDED cities;\n");
        ByteArrayOutputStream run2 = new ByteArrayOutputStream();
        assertThat(run(run2, "run", "--warehouse", w, describe.toString())).isZero();
        String out2 = run2.toString(StandardCharsets.UTF_8);
        assertThat(out2).contains("Done: 1 snapshot(s) applied, 0 skipped");
        assertThat(rows(cat, CITIES))
                .containsExactly(
                        "1,Lyon,1,2",
                        "2,Porto,1,2",
                        "2,Braga,2,",
                        "3,Graz,1,2",
                        "3,Linz,2,3",
                        "3,Wels,3,",
                        "4,Turku,2,3",
                        "5,Turin,3,");
        assertThat(out2)
                .contains("  flow: cities_from_snapshots")
                .contains("  kind: AUTO CDC FROM SNAPSHOT")
                .contains(
                        "  source: snapshot files in " + snapshots + " (read_files, FROM SNAPSHOT)")
                .contains("  KEYS: id")
                .contains("  SCD type: 2")
                .contains("  TRACK HISTORY ON: (city)")
                .contains("  records: 1")
                .contains("  status: SUCCEEDED");

        // a changed SCD type over the snapshot job's saved state: refused before it runs, naming
        // the way to rebuild a snapshot table (DROP TABLE, no full refresh for these yet)
        Path changed = tmp.resolve("changed.sql");
        Files.writeString(
                changed,
                "SET name = geo;\n"
                        + PIPELINE.replace("SCD TYPE 2\n  TRACK HISTORY ON (city);", "SCD TYPE 1;")
                        + "\n");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int refused =
                CapturedOutput.stderr(
                        err,
                        () ->
                                run(
                                        new ByteArrayOutputStream(),
                                        "run",
                                        "--warehouse",
                                        w,
                                        changed.toString()));
        assertThat(refused).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .startsWith("error: FLOW_CHANGED_FOR_EXISTING_STATE: ")
                .contains(
                        "rebuild table cities under the new definition: put DROP TABLE cities;"
                                + " before its definition in "
                                + changed);
        assertThat(rows(cat, CITIES)).hasSize(8);

        // DROP TABLE of the snapshot table deletes it and the snapshot job's saved state only
        Path drop = tmp.resolve("drop.sql");
        Files.writeString(drop, "USE SCHEMA geo;\nDROP TABLE cities;\n");
        ByteArrayOutputStream run3 = new ByteArrayOutputStream();
        assertThat(run(run3, "run", "--warehouse", w, drop.toString())).isZero();
        assertThat(run3.toString(StandardCharsets.UTF_8))
                .contains(
                        "DROP TABLE cities: dropped geo.cities; deleted the saved state of job"
                                + " geo-snapshots");
        assertThat(cat.tableExists(CITIES)).isFalse();
        Path checkpoints = Path.of(w, ".changeflow", "checkpoints");
        assertThat(checkpoints.resolve("geo-snapshots")).doesNotExist();
        assertThat(checkpoints.resolve("geo")).isDirectory();
    }

    /**
     * {@code FROM SNAPSHOT table}: an SCD type 2 history of the current versions of a table the
     * same file writes (the ingest job commits before the snapshot job starts), with {@code
     * snapshot-versions = latest}, so each run applies the table as it stands (the versions a run's
     * checkpoints commit in between are not snapshots) and {@code __START_AT} / {@code __END_AT}
     * are the table's sequence numbers after each run.
     */
    @Test
    void aHistoryOfTheVersionsOfATableTheFileWrites() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Path sql = tmp.resolve("shop.sql");
        Files.writeString(
                sql,
                String.join(
                        "\n",
                        "SET checkpoint-interval = 100ms;",
                        "USE SCHEMA shop;",
                        "CREATE OR REFRESH STREAMING TABLE orders",
                        "  FLOW AUTO CDC FROM STREAM read_files('in', format => 'json', table =>"
                                + " 'orders')",
                        "  KEYS (id) SEQUENCE BY seq;",
                        "CREATE OR REFRESH STREAMING TABLE orders_history",
                        "  TBLPROPERTIES ('changeflow.snapshot-versions' = 'latest');",
                        "APPLY CHANGES INTO orders_history FROM SNAPSHOT orders",
                        "  KEYS (id) STORED AS SCD TYPE 2;",
                        ""));
        Files.write(
                in.resolve("1.jsonl"),
                List.of(
                        "{\"id\":1,\"amount\":10,\"seq\":1}",
                        "{\"id\":2,\"amount\":5,\"seq\":1}",
                        "{\"id\":1,\"amount\":11,\"seq\":2}"));
        String w = tmp.resolve("warehouse").toString();
        Catalog cat = CatalogSettings.localHadoop(Path.of(w).toAbsolutePath()).open();
        TableIdentifier orders = TableIdentifier.of("shop", "orders");
        TableIdentifier history = TableIdentifier.of("shop", "orders_history");

        ByteArrayOutputStream run1 = new ByteArrayOutputStream();
        assertThat(run(run1, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(run1.toString(StandardCharsets.UTF_8))
                .contains("Done: 1 snapshot(s) applied, 0 skipped");
        long v1 = cat.loadTable(orders).currentSnapshot().sequenceNumber();
        assertThat(rows(cat, orders)).containsExactly("1,11,2", "2,5,1");
        assertThat(rows(cat, history)).containsExactly("1,11,2," + v1 + ",", "2,5,1," + v1 + ",");

        Files.write(
                in.resolve("2.jsonl"),
                List.of("{\"id\":2,\"amount\":6,\"seq\":2}", "{\"id\":3,\"amount\":7,\"seq\":1}"));
        ByteArrayOutputStream run2 = new ByteArrayOutputStream();
        assertThat(run(run2, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(run2.toString(StandardCharsets.UTF_8))
                .contains("Done: 1 snapshot(s) applied, 0 skipped");
        long v2 = cat.loadTable(orders).currentSnapshot().sequenceNumber();
        assertThat(v2).isGreaterThan(v1);
        assertThat(rows(cat, history))
                .containsExactly(
                        "1,11,2," + v1 + ",",
                        "2,5,1," + v1 + "," + v2,
                        "2,6,2," + v2 + ",",
                        "3,7,1," + v2 + ",");

        // nothing new: the snapshot job applies nothing
        ByteArrayOutputStream run3 = new ByteArrayOutputStream();
        assertThat(run(run3, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(cat.loadTable(orders).currentSnapshot().sequenceNumber()).isEqualTo(v2);
        assertThat(rows(cat, history)).hasSize(4);
    }

    private static final TableIdentifier ORDERS = TableIdentifier.of("geo", "orders");
    private static final TableIdentifier CITIES = TableIdentifier.of("geo", "cities");

    /**
     * Writes a snapshot file elsewhere, then moves it into the folder (files appear atomically).
     */
    private static void publish(Path staging, Path folder, String name, String... lines)
            throws Exception {
        Path f = staging.resolve(name);
        Files.write(f, List.of(lines));
        Files.move(f, folder.resolve(name), StandardCopyOption.ATOMIC_MOVE);
    }

    private static List<String> rows(Catalog cat, TableIdentifier id) {
        return TableRows.toCsvLines(cat.loadTable(id));
    }

    private static int run(ByteArrayOutputStream out, String... args) {
        return CapturedOutput.stdoutEchoed(out, () -> Main.execute(args));
    }
}

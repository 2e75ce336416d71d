package dev.changeflow.e2e;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * REPLACE WHERE (docs/semantics.md S4) end to end through {@code changeflow run FILE.sql}: an AUTO
 * CDC table ingested from JSON files and a {@code FLOW REPLACE WHERE d >= 2 BY NAME SELECT ...}
 * table aggregating it, in one file. A first run fills the window, a {@code REFRESH STREAMING TABLE
 * daily WHERE d >= 1} backfills the older day, a run after late data recomputes only the window
 * (the older day keeps its total) in one commit whose change feed holds only the changed rows; a
 * predicate calling RAND() fails at its position.
 */
class ReplaceWhereITCase {
    @TempDir Path tmp;

    private static String order(long id, long d, long amount, long seq) {
        return "{\"id\":" + id + ",\"d\":" + d + ",\"amount\":" + amount + ",\"seq\":" + seq + "}";
    }

    private static final String TABLES =
            String.join(
                    "\n",
                    "USE SCHEMA shop;",
                    "CREATE OR REFRESH STREAMING TABLE orders",
                    "  FLOW AUTO CDC FROM STREAM read_files('in', format => 'json', table =>"
                            + " 'orders')",
                    "  KEYS (id) SEQUENCE BY seq;",
                    "CREATE OR REFRESH STREAMING TABLE daily (d BIGINT, total BIGINT)",
                    "  FLOW REPLACE WHERE d >= 2 BY NAME",
                    "  SELECT d, SUM(amount) AS total FROM orders GROUP BY d;");

    @Test
    void recomputesTheWindowAndBackfillsWithAnOverride() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Path sql = tmp.resolve("daily.sql");
        Files.writeString(sql, TABLES + "\n");
        Files.write(
                in.resolve("1.jsonl"),
                List.of(
                        order(1, 1, 10, 1),
                        order(2, 2, 5, 1),
                        order(3, 2, 7, 1),
                        order(4, 3, 1, 1)));
        String w = tmp.resolve("warehouse").toString();
        assertThat(run(new ByteArrayOutputStream(), "run", "--warehouse", w, sql.toString()))
                .isZero();
        assertThat(rows(w)).containsExactly("2,12", "3,1");

        // backfill: the override replaces d >= 1 once
        Path backfill = tmp.resolve("backfill.sql");
        Files.writeString(
                backfill,
                TABLES
                        + "\nREFRESH STREAMING TABLE daily WHERE d >= 1;\n"
                        + "DESCRIBE TABLE EXTENDED daily;\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, backfill.toString())).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("REPLACE WHERE d >= 1 into shop.daily: 0 rows deleted, 1 inserted");
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("  kind: REPLACE WHERE (a slice recomputed by each refresh)")
                .contains("  predicate: d >= 2")
                .contains("  query: SELECT d, SUM(amount) AS total FROM orders GROUP BY d")
                .contains("  status: SUCCEEDED");
        assertThat(rows(w)).containsExactly("1,10", "2,12", "3,1");
        Table daily = table(w);
        long before = daily.currentSnapshot().snapshotId();

        // late data: an update of order 1 (day 1, outside the window) and of order 2 (day 2)
        Files.write(in.resolve("2.jsonl"), List.of(order(1, 1, 100, 2), order(2, 2, 6, 2)));
        assertThat(run(new ByteArrayOutputStream(), "run", "--warehouse", w, sql.toString()))
                .isZero();
        assertThat(rows(w)).containsExactly("1,10", "2,13", "3,1");
        daily.refresh();
        assertThat(daily.currentSnapshot().parentId()).isEqualTo(before); // one commit
        long version = daily.currentSnapshot().sequenceNumber();
        assertThat(changes(daily, version)).containsExactlyInAnyOrder("delete 2,12", "insert 2,13");
    }

    @Test
    void aNonDeterministicPredicateFailsAtItsPosition() throws Exception {
        Files.createDirectories(tmp.resolve("in"));
        Path sql = tmp.resolve("bad.sql");
        Files.writeString(
                sql,
                "CREATE OR REFRESH STREAMING TABLE daily (d BIGINT)\n"
                        + "  FLOW REPLACE WHERE d >= 2 AND\n"
                        + "    RAND() < 0.5 BY NAME SELECT CAST(1 AS BIGINT) AS d;\n");
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "run", "--warehouse", tmp.resolve("w").toString(), sql.toString());
        assertThat(run.code()).isNotZero();
        assertThat(run.stderr())
                .contains("bad.sql:3:5: NON_DETERMINISTIC_PREDICATE: ")
                .contains("calls RAND()");
    }

    // ------------------------------------------------------------------------------ helpers

    private static Table table(String warehouse) {
        return CatalogSettings.localHadoop(Path.of(warehouse))
                .open()
                .loadTable(TableIdentifier.of("shop", "daily"));
    }

    private static List<String> rows(String warehouse) throws Exception {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read = IcebergGenerics.read(table(warehouse)).build()) {
            read.forEach(r -> out.add(r.get(0) + "," + r.get(1)));
        }
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

    private static int run(ByteArrayOutputStream out, String... args) {
        return CapturedOutput.stdoutEchoed(out, () -> Main.execute(args));
    }
}

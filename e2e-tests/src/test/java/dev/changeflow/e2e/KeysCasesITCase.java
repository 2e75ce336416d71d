package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The field cases of semantics.md K1, K2, K3, K5, K7 (and a late record against a tombstone across
 * a restart, A3/K8) through the whole ingest job: Debezium JSON lines → MiniCluster with RocksDB →
 * Iceberg table partitioned by a non-key column.
 */
class KeysCasesITCase {
    @TempDir Path tmp;

    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: keys-cases",
                    "format: debezium-json",
                    "namespace: shop",
                    "flows:",
                    "  - table: items",
                    "    keys: [id]",
                    "    schema: 'id INT, region STRING, v INT'",
                    "    partitioned-by: [region]");

    static String ev(String op, String before, String after, long lsn) {
        return "{\"key\":null,\"value\":{\"before\":"
                + before
                + ",\"after\":"
                + after
                + ",\"source\":{\"connector\":\"postgresql\",\"schema\":\"shop\",\"table\":\"items\",\"lsn\":"
                + lsn
                + "},\"op\":\""
                + op
                + "\",\"ts_ms\":1},\"topic\":\"db.shop.items\"}";
    }

    static String row(int id, String region, Integer v) {
        return "{\"id\":"
                + id
                + ",\"region\":"
                + (region == null ? "null" : "\"" + region + "\"")
                + ",\"v\":"
                + v
                + "}";
    }

    @Test
    void fieldCasesLeaveExactlyTheExpectedRows() throws Exception {
        List<String> lines = new ArrayList<>();
        // K1: an update moving id 1 from partition a to b leaves no copy in a
        lines.add(ev("c", "null", row(1, "a", 10), 100));
        lines.add(ev("u", row(1, "a", 10), row(1, "b", 11), 110));
        // K2: a key-only delete (other columns, incl. the partition column, null) deletes id 2
        lines.add(ev("c", "null", row(2, "a", 20), 120));
        lines.add(ev("d", row(2, null, null), "null", 130));
        lines.add("{\"key\":{\"id\":2},\"value\":null,\"topic\":\"db.shop.items\"}");
        // K3: the replaced value 30 and the deleted value 40 never come back under a filter on v
        lines.add(ev("c", "null", row(3, "a", 30), 140));
        lines.add(ev("u", row(3, "a", 30), row(3, "a", 31), 150));
        lines.add(ev("c", "null", row(4, "b", 40), 160));
        lines.add(ev("d", row(4, "b", 40), "null", 170));
        // K5: an update without before, then a tombstone line, both fine
        lines.add(ev("c", "null", row(5, "a", 50), 180));
        lines.add(ev("u", "null", row(5, "a", 51), 190));
        lines.add("{\"key\":{\"id\":5},\"value\":null,\"topic\":\"db.shop.items\"}");
        // K7: at-least-once duplicates change nothing
        lines.add(ev("c", "null", row(6, "b", 60), 200));
        lines.add(ev("c", "null", row(6, "b", 60), 200));
        lines.add(ev("u", row(6, "b", 60), row(6, "b", 61), 210));
        lines.add(ev("u", row(6, "b", 60), row(6, "b", 61), 210));
        // out of order: the older update of 7 arrives after the newer one and loses
        lines.add(ev("u", row(7, "a", 70), row(7, "a", 72), 230));
        lines.add(ev("c", "null", row(7, "a", 70), 220));
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("batch-1.jsonl"), lines);

        Path warehouse = tmp.resolve("warehouse");
        IngestConfig cfg = FlowsFile.parse(FLOWS, "flows.yaml");
        IngestPlan plan = IngestPlanner.plan(cfg, List.of(input));
        LocalIngest.Summary s = LocalIngest.run(plan, List.of(input), quiet(warehouse));
        assertThat(s.quarantined).isZero();

        Table items =
                CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                        .open()
                        .loadTable(TableIdentifier.of("shop", "items"));
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,b,11", "3,a,31", "5,a,51", "6,b,61", "7,a,72");
        assertThat(filtered(items, "region", "a"))
                .containsExactlyInAnyOrder("3,a,31", "5,a,51", "7,a,72");
        assertThat(filtered(items, "v", 30)).isEmpty();
        assertThat(filtered(items, "v", 40)).isEmpty();
        assertThat(filtered(items, "v", 10)).isEmpty();

        // a second run resumes from the savepoint: a late upsert of deleted id 4 (lsn 165 < 170)
        // stays deleted (tombstone), a newer one (lsn 300) re-creates it
        Files.write(
                input.resolve("batch-2.jsonl"),
                List.of(
                        ev("u", row(4, "b", 40), row(4, "b", 41), 165),
                        ev("c", "null", row(8, "a", 80), 250)));
        LocalIngest.run(plan, List.of(input), quiet(warehouse));
        items.refresh();
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,b,11", "3,a,31", "5,a,51", "6,b,61", "7,a,72", "8,a,80");
        Files.write(input.resolve("batch-3.jsonl"), List.of(ev("c", "null", row(4, "a", 42), 300)));
        LocalIngest.run(plan, List.of(input), quiet(warehouse));
        items.refresh();
        assertThat(TableRows.toCsvLines(items))
                .containsExactly(
                        "1,b,11", "3,a,31", "4,a,42", "5,a,51", "6,b,61", "7,a,72", "8,a,80");
    }

    @Test
    void debeziumTruncateRemovesOlderRowsAndKeepsNewerOnes() throws Exception {
        String flows =
                FLOWS.replace("name: keys-cases", "name: truncates") + "\n    truncate: true";
        List<String> lines = new ArrayList<>();
        lines.add(ev("c", "null", row(1, "a", 10), 100));
        lines.add(ev("c", "null", row(2, "b", 20), 300)); // newer than the truncate: stays
        lines.add(ev("t", "null", "null", 200)); // TRUNCATE at lsn 200 (A3)
        lines.add(ev("c", "null", row(3, "a", 30), 150)); // late, older than the truncate: ignored
        lines.add(ev("u", row(1, "a", 10), row(1, "a", 11), 250)); // newer: re-creates id 1
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("t.jsonl"), lines);
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of(input));
        LocalIngest.Summary s = LocalIngest.run(plan, List.of(input), quiet(warehouse));
        assertThat(s.quarantined).isZero();
        Table items =
                CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                        .open()
                        .loadTable(TableIdentifier.of("shop", "items"));
        assertThat(TableRows.toCsvLines(items)).containsExactly("1,a,11", "2,b,20");

        // the truncate is a table-wide tombstone kept in the savepoint: a later run still ignores
        // older records
        Files.write(
                input.resolve("t2.jsonl"),
                List.of(
                        ev("c", "null", row(4, "b", 40), 120),
                        ev("c", "null", row(5, "b", 50), 400)));
        LocalIngest.run(plan, List.of(input), quiet(warehouse));
        items.refresh();
        assertThat(TableRows.toCsvLines(items)).containsExactly("1,a,11", "2,b,20", "5,b,50");
    }

    static List<String> filtered(Table t, String column, Object value) {
        List<String> out = new ArrayList<>();
        for (Record r : TableRows.read(t, Expressions.equal(column, value))) {
            out.add(TableRows.toCsvLine(r));
        }
        return out;
    }

    static LocalIngest.Options quiet(Path warehouse) {
        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = warehouse;
        o.out = new PrintStream(OutputStream.nullOutputStream());
        return o;
    }
}

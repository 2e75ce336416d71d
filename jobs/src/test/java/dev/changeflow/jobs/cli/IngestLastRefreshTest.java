package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.sql.TableStatements;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * S9: a local {@code bin/changeflow ingest} records itself in the last-refresh properties of every
 * table it writes, as a refresh of {@code run} does: after a run that succeeds {@code SUCCEEDED},
 * the records read, the snapshots committed, start and end; after one that fails (here another job
 * name writing a table that exists, K8) {@code FAILED} with the error, no record count and no
 * snapshot.
 */
class IngestLastRefreshTest {
    @TempDir Path dir;

    private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");

    @Test
    void ingestRecordsItsRunInTheTablesProperties() throws Exception {
        Path capture = dir.resolve("c.jsonl");
        Files.write(capture, List.of(item(1, "a", 10, "c"), item(2, "b", 11, "c")));
        Path warehouse = dir.resolve("warehouse");
        Instant before = Instant.now();
        assertThat(
                        Main.execute(
                                "ingest",
                                "--warehouse",
                                warehouse.toString(),
                                "--table",
                                "items",
                                "--keys",
                                "id",
                                capture.toString()))
                .isEqualTo(0);
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Map<String, String> props = catalog.loadTable(ITEMS).properties();
        assertThat(props)
                .containsEntry(TableStatements.STATUS, "SUCCEEDED")
                .containsEntry(TableStatements.RECORDS, "2")
                .containsEntry(TableStatements.VERSIONS, "1")
                .containsEntry(TableStatements.FULL, "false")
                .doesNotContainKey(TableStatements.ERROR);
        Instant start = Instant.parse(props.get(TableStatements.START));
        assertThat(start).isAfterOrEqualTo(before);
        assertThat(Instant.parse(props.get(TableStatements.END))).isAfterOrEqualTo(start);

        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "ingest",
                        "--warehouse",
                        warehouse.toString(),
                        "--name",
                        "other",
                        "--table",
                        "items",
                        "--keys",
                        "id",
                        capture.toString());
        assertThat(run.code()).isNotZero();
        assertThat(run.stderr()).contains("STATE_MISSING_FOR_EXISTING_TABLE");
        Table items = catalog.loadTable(ITEMS);
        assertThat(items.properties())
                .containsEntry(TableStatements.STATUS, "FAILED")
                .containsEntry(TableStatements.VERSIONS, "0")
                .doesNotContainKey(TableStatements.RECORDS);
        assertThat(items.properties().get(TableStatements.ERROR))
                .startsWith("STATE_MISSING_FOR_EXISTING_TABLE");
        assertThat(Instant.parse(items.properties().get(TableStatements.START))).isAfter(start);
    }

    /** A flows file of snapshot flows (A6) run by {@code ingest} is recorded too. */
    @Test
    void snapshotIngestRecordsItsRunInTheTablesProperties() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("cities"));
        Files.write(folder.resolve("snapshot_1.csv"), List.of("id,city", "1,Berlin", "2,Lyon"));
        Files.write(folder.resolve("snapshot_2.csv"), List.of("id,city", "1,Berlin", "3,Oslo"));
        Path flows = dir.resolve("cities.yaml");
        Files.writeString(
                flows,
                String.join(
                        "\n",
                        "name: cities",
                        "namespace: geo",
                        "checkpoint-interval: 100ms",
                        "flows:",
                        "  - table: cities",
                        "    from-snapshot: " + folder,
                        "    keys: [id]",
                        "    schema: \"id BIGINT, city STRING\"",
                        ""));
        Path warehouse = dir.resolve("warehouse");
        Instant before = Instant.now();
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "ingest", "--flows", flows.toString(), "--warehouse", warehouse.toString());
        assertThat(run.code()).as(run.stderr()).isZero();
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table cities = catalog.loadTable(TableIdentifier.of("geo", "cities"));
        assertThat(cities.properties())
                .containsEntry(TableStatements.STATUS, "SUCCEEDED")
                .containsEntry(TableStatements.RECORDS, "2")
                .containsEntry(TableStatements.FULL, "false")
                .doesNotContainKey(TableStatements.ERROR);
        assertThat(Long.parseLong(cities.properties().get(TableStatements.VERSIONS)))
                .isEqualTo(cities.history().size());
        assertThat(Instant.parse(cities.properties().get(TableStatements.START)))
                .isAfterOrEqualTo(before);
    }

    /** A Debezium change of {@code inventory.items} (id, name, n). */
    private static String item(int id, String name, int lsn, String op) {
        return "{\"key\":{\"id\":"
                + id
                + "},\"value\":{\"before\":null,\"after\":{\"id\":"
                + id
                + ",\"name\":\""
                + name
                + "\",\"n\":2},\"source\":{\"schema\":\"inventory\",\"table\":\"items\",\"lsn\":"
                + lsn
                + "},\"op\":\""
                + op
                + "\",\"ts_ms\":1},\"topic\":\"srv.inventory.items\"}";
    }
}

package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.LocalSnapshotIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AUTO CDC FROM SNAPSHOT end to end (docs/semantics.md A6, example (c)): a folder of CSV snapshot
 * files read in version order by a continuous job on a MiniCluster (RocksDB, checkpoints) into two
 * Iceberg tables, SCD type 2 and SCD type 1, through {@link AutoCdcFlow#fromSnapshots}. The SCD
 * type 2 table equals example (c) row for row; the change feed of the SCD type 1 table holds only
 * the rows that changed. Each test runs its own local MiniCluster (the launcher's metric reporter
 * is configured per cluster).
 */
@Timeout(180)
class SnapshotFilesITCase {
    @TempDir Path tmp;

    private static final TableIdentifier HISTORY = TableIdentifier.of("geo", "cities_history");
    private static final TableIdentifier CURRENT = TableIdentifier.of("geo", "cities");

    /**
     * Two runs of the launcher over a flows file with two flows: example (c) from folder {@code
     * history} into an SCD type 2 table, and from folder {@code current} into an SCD type 1 table
     * that gets a third snapshot (snapshot 2 plus one key) and a late file, {@code snapshot_0.csv},
     * in the second run, skipped and named by its path in the run summary. Each run applies the
     * files new since the last and stops with a savepoint.
     */
    @Test
    void exampleCThroughAFlowsFile() throws Exception {
        Path history = Files.createDirectories(tmp.resolve("history"));
        Path current = Files.createDirectories(tmp.resolve("current"));
        Path staging = Files.createDirectories(tmp.resolve("staging"));
        Path warehouse = tmp.resolve("warehouse");
        String flows =
                String.join(
                        "\n",
                        "name: cities",
                        "namespace: geo",
                        "checkpoint-interval: 100ms",
                        "parallelism: 2",
                        "flows:",
                        "  - table: cities_history",
                        "    from-snapshot: '" + history + "'",
                        "    keys: [id]",
                        "    schema: 'id BIGINT, city STRING'",
                        "    scd-type: 2",
                        "  - table: cities",
                        "    from-snapshot: '" + current + "'",
                        "    keys: [id]",
                        "    schema: 'id BIGINT, city STRING'");
        for (Path folder : List.of(history, current)) {
            publish(staging, folder, "snapshot_1.csv", SNAPSHOT_1);
        }
        LocalSnapshotIngest.Summary run1 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run1.applied).isEqualTo(2); // snapshot 1 of each flow
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(rows(cat, CURRENT)).containsExactly("1,Oaxaca", "2,Monterrey", "3,Tijuana");
        long first = cat.loadTable(CURRENT).currentSnapshot().sequenceNumber();

        for (Path folder : List.of(history, current)) {
            publish(staging, folder, "snapshot_2.csv", SNAPSHOT_2);
        }
        publish(staging, current, "snapshot_0.csv", "id,city", "9,Late");
        // snapshot 3 repeats snapshot 2 and adds a key: only the new key reaches the change feed
        publish(
                staging,
                current,
                "snapshot_3.csv",
                "id,city",
                "5,Yuma",
                "2,Carmel",
                "3,Los Angeles",
                "4,Death Valley");
        LocalSnapshotIngest.Summary run2 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run2.applied).isEqualTo(3); // snapshot 2 of each flow, snapshot 3 of one
        assertThat(run2.skipped).isEqualTo(1); // snapshot_0, older than the applied 1
        assertThat(run2.skippedNames)
                .containsExactly(
                        "cities: snapshot 0 (file " + current.resolve("snapshot_0.csv") + ")");
        assertThat(rows(cat, HISTORY)).containsExactly(EXAMPLE_C_SCD2);
        assertThat(rows(cat, CURRENT))
                .containsExactly("2,Carmel", "3,Los Angeles", "4,Death Valley", "5,Yuma");
        assertThat(ChangeFeedLines.from(cat.loadTable(CURRENT), first + 1, "id", "city"))
                .containsExactlyInAnyOrder(EXAMPLE_C_SCD1_FEED);
    }

    /**
     * K8 for AUTO CDC FROM SNAPSHOT: a run over saved state with other KEYS or another SCD type
     * fails before its job starts, naming the change and the fix; the table keeps its rows and the
     * unchanged definition then applies the next snapshot.
     */
    @Test
    void aChangedDefinitionIsRefusedBeforeTheJobStarts() throws Exception {
        Path current = Files.createDirectories(tmp.resolve("current"));
        Path staging = Files.createDirectories(tmp.resolve("staging"));
        Path warehouse = tmp.resolve("warehouse");
        String flows =
                String.join(
                        "\n",
                        "name: cities",
                        "namespace: geo",
                        "flows:",
                        "  - table: cities",
                        "    from-snapshot: '" + current + "'",
                        "    keys: [id]",
                        "    schema: 'id BIGINT, city STRING'");
        publish(staging, current, "snapshot_1.csv", SNAPSHOT_1);
        LocalSnapshotIngest.run(
                FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        publish(staging, current, "snapshot_2.csv", SNAPSHOT_2);
        String state =
                " but the saved state of job 'cities' was built with the old definition (each key's"
                        + " last values and the applied snapshot version would be compared with the"
                        + " new snapshots and rows silently kept, changed or deleted). Restore the"
                        + " old definition, or rebuild the table from its source with"
                        + " --from-scratch.";
        for (String[] change :
                List.of(
                        new String[] {
                            "keys: [id]",
                            "keys: [id, city]",
                            "keys changed from [\"id\"] to [\"id\",\"city\"]"
                        },
                        new String[] {
                            "keys: [id]",
                            "keys: [id]\n    scd-type: 2",
                            "scd-type changed from \"TYPE_1\" to \"TYPE_2\""
                        })) {
            String changed = flows.replace(change[0], change[1]);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () ->
                                    LocalSnapshotIngest.run(
                                            FlowsFile.parse(changed, "flows.yaml"),
                                            KeysCasesITCase.quiet(warehouse)))
                    .isInstanceOfSatisfying(
                            dev.changeflow.operators.AutoCdcException.class,
                            e ->
                                    assertThat(e.code())
                                            .isEqualTo(
                                                    dev.changeflow.operators.AutoCdcException.Code
                                                            .FLOW_CHANGED_FOR_EXISTING_STATE))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'cities': " + change[2] + state);
        }
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(rows(cat, CURRENT)).containsExactly("1,Oaxaca", "2,Monterrey", "3,Tijuana");
        LocalSnapshotIngest.Summary run =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run.applied).isEqualTo(1);
        assertThat(rows(cat, CURRENT))
                .containsExactly("2,Carmel", "3,Los Angeles", "4,Death Valley");
    }

    private static final String[] SNAPSHOT_1 = {"id,city", "1,Oaxaca", "2,Monterrey", "3,Tijuana"};
    private static final String[] SNAPSHOT_2 = {
        "id,city", "2,Carmel", "3,Los Angeles", "4,Death Valley"
    };

    private static final String[] EXAMPLE_C_SCD2 = {
        "1,Oaxaca,1,2",
        "2,Monterrey,1,2",
        "2,Carmel,2,",
        "3,Tijuana,1,2",
        "3,Los Angeles,2,",
        "4,Death Valley,2,"
    };

    /**
     * The SCD type 1 change feed after snapshot 1: snapshot 2's changes, then snapshot 3's one new
     * key (whether the two land in one Iceberg commit or two); unchanged rows never appear.
     */
    private static final String[] EXAMPLE_C_SCD1_FEED = {
        "delete 1,Oaxaca",
        "update_preimage 2,Monterrey",
        "update_postimage 2,Carmel",
        "update_preimage 3,Tijuana",
        "update_postimage 3,Los Angeles",
        "insert 4,Death Valley",
        "insert 5,Yuma"
    };

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
}

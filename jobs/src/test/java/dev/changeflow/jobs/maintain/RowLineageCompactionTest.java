package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Compaction of a format v3 table (row lineage) on a real Hadoop catalog on disk (docs/semantics.md
 * M1, M3, F2): Iceberg 1.11's Flink rewrite action refuses such a table, so {@code maintain
 * --rewrite} / {@code OPTIMIZE} compact it with Iceberg's {@code RewriteDataFiles} maintenance task
 * — the task the in-job maintenance runs, which reads and writes the row lineage columns. Every row
 * keeps its {@code _row_id}; the change feed of the compaction version is empty; a task that fails
 * is reported, not taken for a compaction.
 *
 * <p>The table: v1 inserts (1, a), (2, b); v2 inserts (3, c); v3 updates 1 to A (equality delete +
 * insert); v4 deletes 2 (equality delete). Row ids: (1, a) 0, (2, b) 1, (3, c) 2, (1, A) 3.
 */
class RowLineageCompactionTest {
    @TempDir Path warehouse;

    private final TableIdentifier id = TableIdentifier.of("db", "v3");

    private Table table() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.createV3("v3");
        tables.insert(t, row(1, "a"), row(2, "b"));
        tables.insert(t, row(3, "c"));
        tables.ingest(t, List.of(row(1, "a")), List.of(row(1, "A")));
        tables.ingest(t, List.of(row(2, "b")), List.of());
        assertThat(rowsWithIds(t)).containsExactly("(1, A) row 3", "(3, c) row 2");
        return t;
    }

    @Test
    void flinkRewriteActionPathRefusesV3NamingTheTableAndTheWayOut() {
        Table t = table();
        assertThatThrownBy(() -> TableCompaction.rewrite(null, t))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "table hadoop.db.v3 has format version 3 (row lineage), which Iceberg's"
                                + " Flink rewrite action refuses: compact it with"
                                + " TableCompaction.rewrite(env, loader, table)");
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(4);
    }

    @Test
    void maintainRewriteCompactsV3KeepingRowIdsAndYieldsNoChanges() throws Exception {
        Table t = table();
        List<String> feedBefore = MaintenanceTestTables.changes(t, 1, 4);

        String report = MaintenanceActions.rewrite(CatalogSettings.localHadoop(warehouse), id, t);

        t.refresh();
        assertThat(report)
                .isEqualTo(
                        "Rewrite of hadoop.db.v3 at version 4: 3 data files rewritten into 1,"
                                + " committed as version 5 (data sequence number 4 kept)"
                                + System.lineSeparator()
                                + "  data files   3 -> 1"
                                + System.lineSeparator()
                                + "  delete files 2 -> 1"
                                + System.lineSeparator()
                                + "  data rows    4 -> 2 (before deletes)"
                                + System.lineSeparator()
                                + "Dangling delete files of hadoop.db.v3 at version 5: 1 removed"
                                + " (1 equality, 0 position), 0 still apply; committed as version"
                                + " 6 (replace)");
        // Iceberg's commit dropped the update's equality delete, not the older delete of 2
        Snapshot dangling = t.currentSnapshot();
        Snapshot compaction = t.snapshot(dangling.parentId());
        assertThat(compaction.operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(compaction.sequenceNumber()).isEqualTo(5);
        assertThat(dangling.operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(dangling.sequenceNumber()).isEqualTo(6);
        assertThat(dangling.summary().get("total-delete-files")).isEqualTo("0");
        assertThat(dataSequenceNumbers(t)).containsExactly(4L);
        assertThat(rowsWithIds(t)).containsExactly("(1, A) row 3", "(3, c) row 2");
        assertThat(MaintenanceTestTables.changes(t, 5, 6)).isEmpty();
        assertThat(MaintenanceTestTables.changes(t, 1, 6)).isEqualTo(feedBefore);
    }

    /** The task exactly as the in-job maintenance configures it (InJobMaintenance), run once. */
    @Test
    void inJobRewriteTaskCompactsV3() throws Exception {
        Table t = table();
        OrphanFileRemoval.runOnce(
                env(),
                TableLoader.fromHadoopTable(t.location()),
                t,
                RewriteDataFiles.builder().deleteFileThreshold(1).scheduleOnCommitCount(1),
                "in-job task on v3");
        t.refresh();
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(5);
        assertThat(dataSequenceNumbers(t)).containsExactly(4L);
        assertThat(rowsWithIds(t)).containsExactly("(1, A) row 3", "(3, c) row 2");
        assertThat(MaintenanceTestTables.changes(t, 5, 5)).isEmpty();
    }

    @Test
    void purgeOfV3LeavesOnlyLiveRows() throws Exception {
        Table t = table();
        TablePurge.Result r =
                MaintenanceActions.purge(
                        CatalogSettings.localHadoop(warehouse),
                        id,
                        t,
                        ChangeFeedExpiry.DEFAULT_CONSUMER_EXPIRY);
        assertThat(r.complete()).isTrue();
        t.refresh();
        assertThat(rowsWithIds(t)).containsExactly("(1, A) row 3", "(3, c) row 2");
        assertThat(t.currentSnapshot().summary().get("total-delete-files")).isEqualTo("0");
        assertThat(t.currentSnapshot().summary().get("total-records")).isEqualTo("2");
    }

    /** A data file gone from storage: Iceberg's task fails reading it and commits nothing. */
    @Test
    void failedV3RewriteIsAnErrorAndChangesNothing() throws Exception {
        Table t = table();
        DataFile first = dataFiles(t).get(0);
        Files.delete(Path.of(java.net.URI.create(first.location())));
        long before = t.currentSnapshot().snapshotId();

        assertThatThrownBy(
                        () ->
                                MaintenanceActions.rewrite(
                                        CatalogSettings.localHadoop(warehouse), id, t))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage(
                        "the compaction of hadoop.db.v3 (format v3) at version 4 committed"
                                + " nothing: 3 of its 3 data file(s) are still live, so Iceberg's"
                                + " RewriteDataFiles task failed (its error is in the log; a"
                                + " concurrent commit that removed or position-deleted one of the"
                                + " files makes it fail); the table is unchanged, run it again");
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(before);

        assertThatThrownBy(
                        () ->
                                MaintenanceActions.purge(
                                        CatalogSettings.localHadoop(warehouse),
                                        id,
                                        t,
                                        ChangeFeedExpiry.DEFAULT_CONSUMER_EXPIRY))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage(
                        "the purge of hadoop.db.v3 stopped: its rewrite at version 4 committed"
                                + " nothing (3 of 3 data file(s) still live), so Iceberg's"
                                + " RewriteDataFiles task failed (its error is in the log; a"
                                + " concurrent commit that removed or position-deleted one of the"
                                + " files makes it fail); nothing was expired, run it again");
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(before);
        assertThat(t.snapshots()).hasSize(4);
    }

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        return env;
    }

    /** Live rows with their row ids, as {@code (id, name) row <_row_id>}, sorted. */
    private static List<String> rowsWithIds(Table t) {
        t.refresh();
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read =
                IcebergGenerics.read(t)
                        .project(MetadataColumns.schemaWithRowLineage(t.schema()))
                        .build()) {
            read.forEach(
                    r ->
                            out.add(
                                    "("
                                            + r.getField("id")
                                            + ", "
                                            + r.getField("name")
                                            + ") row "
                                            + r.getField(MetadataColumns.ROW_ID.name())));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(null);
        return out;
    }

    private static List<DataFile> dataFiles(Table t) {
        List<DataFile> out = new ArrayList<>();
        try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
            tasks.forEach(task -> out.add(task.file()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort((a, b) -> a.location().compareTo(b.location()));
        return out;
    }

    private static List<Long> dataSequenceNumbers(Table t) {
        List<Long> out = new ArrayList<>();
        for (DataFile f : dataFiles(t)) {
            out.add(f.dataSequenceNumber());
        }
        return out;
    }
}

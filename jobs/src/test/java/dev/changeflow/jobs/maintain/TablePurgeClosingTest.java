package dev.changeflow.jobs.maintain;

import dev.changeflow.sources.cdf.retention.FlinkCommitters;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.stamp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The purge's closing commits (M3, issue #17) on a real Hadoop table: they carry the {@code
 * flink.*} stamps of every Flink sink committer's newest commit, oldest first, and a closing commit
 * is never made on top of a snapshot other than the one its stamp was read from.
 */
class TablePurgeClosingTest {
    @TempDir Path warehouse;

    private Table table;

    @BeforeEach
    void createTable() {
        HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
        table =
                catalog.createTable(
                        TableIdentifier.of("db", "t"),
                        new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get())),
                        PartitionSpec.unpartitioned(),
                        Map.of("format-version", "2"));
    }

    @Test
    void closingCommitsCarryEachCommittersNewestStampOldestFirst() {
        commit(Map.of("a", "1")); // not a Flink commit
        commit(stamp("job-1", "op-a", 3));
        commit(stamp("job-2", "op-b", 7));
        commit(stamp("job-3", "op-a", 4));
        commit(Map.of("changeflow.rewrite", "x")); // e.g. a compaction on top
        long before = table.currentSnapshot().sequenceNumber();

        long first = TablePurge.closingCommits(table, Duration.ofDays(7));

        table.refresh();
        List<Snapshot> history = new ArrayList<>();
        SnapshotUtil.currentAncestors(table).forEach(history::add);
        assertThat(first).isEqualTo(before + 1);
        assertThat(history.get(1).sequenceNumber()).isEqualTo(first);
        assertThat(FlinkCommitters.flinkProperties(history.get(1)))
                .isEqualTo(stamp("job-2", "op-b", 7));
        assertThat(FlinkCommitters.flinkProperties(history.get(0)))
                .isEqualTo(stamp("job-3", "op-a", 4));
        assertThat(history.get(0).summary()).containsEntry(TablePurge.PURGE_PROPERTY, "true");
        assertThat(history.get(1).summary()).containsEntry(TablePurge.PURGE_PROPERTY, "true");
        assertThat(history.get(0).addedDataFiles(table.io())).isEmpty();
    }

    @Test
    void withoutAFlinkCommitOneUnstampedClosingCommit() {
        commit(Map.of("a", "1"));
        long first = TablePurge.closingCommits(table, Duration.ofDays(7));
        table.refresh();
        Snapshot head = table.currentSnapshot();
        assertThat(head.sequenceNumber()).isEqualTo(first);
        assertThat(head.summary()).containsEntry(TablePurge.PURGE_PROPERTY, "true");
        assertThat(FlinkCommitters.flinkProperties(head)).isEmpty();
    }

    @Test
    void aClosingCommitOnTopOfAnotherParentIsRefused() {
        commit(stamp("job-1", "op-a", 3));
        long stale = table.currentSnapshot().snapshotId();
        commit(stamp("job-1", "op-a", 4)); // the ingest commits its next checkpoint meanwhile
        long head = table.currentSnapshot().snapshotId();

        assertThatThrownBy(() -> TablePurge.commitOnTop(table, stale, stamp("job-1", "op-a", 3)))
                .isInstanceOf(ParentGuard.MainMovedException.class)
                .hasMessageContaining("not at the expected parent " + stale);
        table.refresh();
        assertThat(table.currentSnapshot().snapshotId()).isEqualTo(head);

        Snapshot closing = TablePurge.commitOnTop(table, head, stamp("job-1", "op-a", 4));
        table.refresh();
        assertThat(table.currentSnapshot().snapshotId()).isEqualTo(closing.snapshotId());
        assertThat(closing.parentId()).isEqualTo(head);
    }

    /**
     * A table whose retained history is an earlier purge's closing commits, then appends without
     * delete files, needs no purge (no new version); anything else does.
     */
    @Test
    void onlyClosingCommitsFollowedByCleanAppendsCountAsAlreadyPurged() {
        assertThat(TablePurge.alreadyPurged(table)).as("no snapshot").isFalse();
        commit(Map.of("a", "1"));
        assertThat(TablePurge.alreadyPurged(table)).as("never purged").isFalse();
        TablePurge.closingCommits(table, Duration.ofDays(7));
        table.refresh();
        assertThat(TablePurge.alreadyPurged(table))
                .as("an older version than the closing commit is kept")
                .isFalse();
        table.expireSnapshots()
                .expireOlderThan(System.currentTimeMillis() + 1)
                .retainLast(1)
                .commit();
        table.refresh();
        assertThat(TablePurge.alreadyPurged(table)).as("only the closing commit").isTrue();
        commit(stamp("job-1", "op-a", 3)); // an ingest appends rows, deleting none
        table.refresh();
        assertThat(TablePurge.alreadyPurged(table)).as("a clean append on top").isTrue();
        table.newOverwrite().set("x", "y").commit(); // any other operation may delete rows
        table.refresh();
        assertThat(TablePurge.alreadyPurged(table)).as("an overwrite on top").isFalse();
    }

    /**
     * A closing commit whose snapshot still holds delete files (an ingest committed deletes while
     * the purge ran) does not count as purged; clean closing commits with older versions kept need
     * only the expiry (no second rewrite).
     */
    @Test
    void closingCommitsWithLiveDeleteFilesNeedAPurgeAndCleanOnesOnlyTheExpiry() {
        commit(Map.of("a", "1"));
        TablePurge.closingCommits(table, Duration.ofDays(7));
        table.refresh();
        long closing = table.currentSnapshot().sequenceNumber();
        assertThat(TablePurge.state(table)).isEqualTo(new TablePurge.State(closing, true));

        table.newRowDelta().addDeletes(positionDeletes("d1")).commit();
        TablePurge.closingCommits(table, Duration.ofDays(7));
        table.refresh();
        assertThat(TablePurge.state(table)).isEqualTo(new TablePurge.State(-1, false));
        table.expireSnapshots()
                .expireOlderThan(System.currentTimeMillis() + 1)
                .retainLast(1)
                .commit();
        table.refresh();
        assertThat(TablePurge.alreadyPurged(table)).as("its delete file is live").isFalse();
    }

    /** The versions between a purge's start and its closing commit that added delete files. */
    @Test
    void racingDeletesAreTheCommitsBetweenTheStartAndTheClosingThatAddedDeleteFiles() {
        commit(Map.of("a", "1")); // 1
        commit(Map.of("a", "2")); // 2: the version the purge's rewrite read
        table.newRowDelta().addDeletes(positionDeletes("d1")).commit(); // 3
        commit(Map.of("a", "3")); // 4: an append only
        table.newRowDelta().addDeletes(positionDeletes("d2")).commit(); // 5
        long closing = TablePurge.closingCommits(table, Duration.ofDays(7)); // 6
        table.refresh();
        table.newRowDelta().addDeletes(positionDeletes("d3")).commit(); // 7: after the purge
        table.refresh();
        assertThat(closing).isEqualTo(6);
        assertThat(TablePurge.racingDeletes(table, 2, closing)).containsExactly(3L, 5L);
        assertThat(TablePurge.racingDeletes(table, 5, closing)).isEmpty();
    }

    /** A malformed consumer file stops the purge before its rewrite: nothing is committed. */
    @Test
    void aMalformedConsumerFileStopsThePurgeBeforeAnythingIsWritten() throws Exception {
        commit(Map.of("a", "1"));
        long head = table.currentSnapshot().snapshotId();
        Path consumers = Files.createDirectories(Path.of(table.location(), "changeflow/consumers"));
        Files.writeString(consumers.resolve("gold.json"), "{\"consumer-id\":\"gold\"");
        // no environment: the rewrite job must not even be planned
        assertThatThrownBy(() -> TablePurge.run(null, null, table, Duration.ofDays(7)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gold.json of table ")
                .hasMessageContaining(" is malformed: ");
        table.refresh();
        assertThat(table.currentSnapshot().snapshotId()).isEqualTo(head);
    }

    /** A position delete file's metadata (no file is read: the tests only commit metadata). */
    private DeleteFile positionDeletes(String name) {
        return FileMetadata.deleteFileBuilder(table.spec())
                .ofPositionDeletes()
                .withPath(warehouse.resolve(name + ".parquet").toString())
                .withFormat(FileFormat.PARQUET)
                .withFileSizeInBytes(10)
                .withRecordCount(1)
                .build();
    }

    private void commit(Map<String, String> summary) {
        AppendFiles append = table.newFastAppend();
        summary.forEach(append::set);
        append.commit();
    }
}

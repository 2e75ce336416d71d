package dev.changeflow.jobs.maintain;

import dev.changeflow.sources.cdf.retention.FlinkCommitters;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
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

    private void commit(Map<String, String> summary) {
        AppendFiles append = table.newFastAppend();
        summary.forEach(append::set);
        append.commit();
    }
}

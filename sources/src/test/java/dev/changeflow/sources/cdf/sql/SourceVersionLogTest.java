package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.stream.enumerator.CheckpointVersionListener;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SourceVersionLog} and {@link SourceVersionStamping} (G2): what changelog reads record per
 * checkpoint, and the Gold commit of a checkpoint carrying exactly those versions.
 */
class SourceVersionLogTest {
    @TempDir Path dir;

    @Test
    void eachTableGetsTheSmallestVersionItsReadsRecordedForTheCheckpoint() {
        SourceVersionLog log = new SourceVersionLog(dir.resolve("log").toUri().toString());
        CheckpointVersionListener a1 = log.listener("silver.accounts");
        CheckpointVersionListener a2 = log.listener("silver.accounts"); // a self-join
        CheckpointVersionListener b = log.listener("silver.branches");
        assertThat(log.versionsAt(1)).isEmpty(); // nothing written yet
        a1.checkpointing(1, 5);
        a2.checkpointing(1, 4);
        b.checkpointing(1, 2);
        a1.checkpointing(2, 6);
        assertThat(log.versionsAt(1))
                .isEqualTo(Map.of("silver.accounts", 4L, "silver.branches", 2L));
        // a read that recorded nothing for a checkpoint (its snapshot not emitted) adds nothing
        assertThat(log.versionsAt(2)).isEqualTo(Map.of("silver.accounts", 6L));
        a1.checkpointing(2, 7); // a checkpoint taken again after a failover: the last write wins
        assertThat(log.versionsAt(2)).isEqualTo(Map.of("silver.accounts", 7L));
        assertThat(log.versionsAt(3)).isEmpty();
        // a bounded read that emitted everything: the end-of-input commit's entry
        b.ended(3);
        assertThat(log.versionsAt(SourceVersionLog.END_OF_INPUT))
                .isEqualTo(Map.of("silver.branches", 3L));
    }

    @Test
    void aReadKeepsTheEntriesOfItsLastCheckpointsOnly() throws Exception {
        SourceVersionLog log = new SourceVersionLog(dir.resolve("log").toString());
        CheckpointVersionListener a = log.listener("silver.accounts");
        a.ended(99);
        for (long c = 1; c <= SourceVersionLog.KEEP + 5; c++) {
            a.checkpointing(c, c * 10);
            a.checkpointCompleted(c);
        }
        assertThat(log.versionsAt(4)).isEmpty();
        assertThat(log.versionsAt(SourceVersionLog.END_OF_INPUT))
                .isEqualTo(Map.of("silver.accounts", 99L));
        assertThat(log.versionsAt(5)).isEqualTo(Map.of("silver.accounts", 50L));
        assertThat(log.versionsAt(SourceVersionLog.KEEP + 5))
                .isEqualTo(Map.of("silver.accounts", (SourceVersionLog.KEEP + 5) * 10L));
        try (var files = Files.list(dir.resolve("log"))) {
            Path read = files.findFirst().orElseThrow();
            try (var entries = Files.list(read)) {
                // the last KEEP + 1 checkpoints and the end-of-input entry
                assertThat(entries.count()).isEqualTo(SourceVersionLog.KEEP + 2);
            }
        }
    }

    @Test
    void aCommitOfACheckpointCarriesTheVersionsRecordedForIt() throws Exception {
        HadoopCatalog catalog =
                new HadoopCatalog(new Configuration(), dir.resolve("wh").toString());
        Schema schema = new Schema(Types.NestedField.required(1, "k", Types.LongType.get()));
        catalog.createTable(
                TableIdentifier.of("gold", "t"),
                schema,
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "2"));
        SourceVersionLog log = new SourceVersionLog(dir.resolve("log").toString());
        log.listener("silver.accounts").checkpointing(7, 42);
        log.listener("silver.branches").checkpointing(7, 3);
        TableLoader loader =
                new SourceVersionStamping(
                        TableLoader.fromHadoopTable(
                                dir.resolve("wh").resolve("gold").resolve("t").toString()),
                        log);
        loader.open();
        Table table = loader.loadTable();

        // as Iceberg's Flink committer commits checkpoint 7: set the checkpoint id, then commit
        table.newAppend().set(SourceVersionStamping.CHECKPOINT_ID, "7").commit();
        table.refresh();
        assertThat(table.currentSnapshot().summary())
                .containsEntry("changeflow.source-version.silver.accounts", "42")
                .containsEntry("changeflow.source-version.silver.branches", "3")
                .containsEntry(SourceVersionStamping.CHECKPOINT_ID, "7");

        // a checkpoint nothing was recorded for, and a commit not made by a committer: no versions
        loader.loadTable().newRowDelta().set(SourceVersionStamping.CHECKPOINT_ID, "8").commit();
        table.refresh();
        assertThat(table.currentSnapshot().summary())
                .doesNotContainKeys(
                        "changeflow.source-version.silver.accounts",
                        "changeflow.source-version.silver.branches");
        loader.loadTable().newAppend().commit();
        table.refresh();
        assertThat(table.currentSnapshot().summary())
                .doesNotContainKey("changeflow.source-version.silver.accounts");
        loader.close();
    }

    /**
     * Issue #16: a Gold table's loader made with the Silver tables its own INSERT reads stamps
     * those tables' versions only, though the job's other reads recorded theirs for the same
     * checkpoint; an empty set stamps none.
     */
    @Test
    void aCommitCarriesOnlyTheVersionsOfTheTablesItsInsertReads() throws Exception {
        HadoopCatalog catalog =
                new HadoopCatalog(new Configuration(), dir.resolve("wh").toString());
        Schema schema = new Schema(Types.NestedField.required(1, "k", Types.LongType.get()));
        for (String name : new String[] {"x", "none"}) {
            catalog.createTable(
                    TableIdentifier.of("gold", name),
                    schema,
                    PartitionSpec.unpartitioned(),
                    Map.of("format-version", "2"));
        }
        SourceVersionLog log = new SourceVersionLog(dir.resolve("log").toString());
        log.listener("silver.accounts").checkpointing(7, 42);
        log.listener("silver.branches").checkpointing(7, 3);
        log.listener("silver.tellers").checkpointing(7, 9);
        assertThat(log.versionsAt(7, Set.of("silver.branches", "silver.tellers")))
                .isEqualTo(Map.of("silver.branches", 3L, "silver.tellers", 9L));
        assertThat(log.versionsAt(7, Set.of("silver.history"))).isEmpty();

        TableLoader x =
                new SourceVersionStamping(
                        TableLoader.fromHadoopTable(
                                dir.resolve("wh").resolve("gold").resolve("x").toString()),
                        log,
                        Set.of("silver.branches"));
        x.open();
        Table tx = x.loadTable();
        tx.newAppend().set(SourceVersionStamping.CHECKPOINT_ID, "7").commit();
        tx.refresh();
        assertThat(tx.currentSnapshot().summary())
                .containsEntry("changeflow.source-version.silver.branches", "3")
                .doesNotContainKeys(
                        "changeflow.source-version.silver.accounts",
                        "changeflow.source-version.silver.tellers");
        x.close();

        TableLoader none =
                new SourceVersionStamping(
                        TableLoader.fromHadoopTable(
                                dir.resolve("wh").resolve("gold").resolve("none").toString()),
                        log,
                        Set.of());
        none.open();
        Table tn = none.loadTable();
        tn.newAppend().set(SourceVersionStamping.CHECKPOINT_ID, "7").commit();
        tn.refresh();
        assertThat(tn.currentSnapshot().summary().keySet())
                .noneMatch(k -> k.startsWith(SourceVersionLog.SOURCE_VERSION_PREFIX));
        none.close();
    }
}

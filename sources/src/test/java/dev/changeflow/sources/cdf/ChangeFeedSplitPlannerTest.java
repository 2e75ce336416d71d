package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedSplitPlanner;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedSplitPlanner.Cycle;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Planning of the streaming change feed (F6): splits per version, empty and compaction-only
 * versions, rate limits admitting whole versions, the initial snapshot split over cycles, and the
 * F4/F8 errors of a running stream.
 */
class ChangeFeedSplitPlannerTest {

    @TempDir Path warehouse;

    private CdfTestTables tables;
    private Table table;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
        table = tables.create("t", 2);
    }

    /**
     * v1: append of 2 files; v2: an update (equality delete + data file); v3: compaction; v4:
     * empty.
     */
    private void fourVersions() {
        DataFile b = tables.dataFile(table, row(2L, "b", "us"));
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu")))
                .appendFile(b)
                .commit();
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema().select("id"), row(1L, "a", "eu")))
                .addRows(tables.dataFile(table, row(1L, "a2", "eu")))
                .commit();
        DataFile copy = tables.dataFile(table, row(2L, "b", "us"));
        table.newRewrite().rewriteFiles(Set.of(b), Set.of(copy)).commit();
        table.newAppend().commit();
    }

    /**
     * {@code "<version>: <split ids>"} per planned version, {@code "+"} marking a partial version.
     */
    private static List<String> render(Cycle cycle) {
        List<String> lines = new ArrayList<>();
        for (ChangeFeedSplitPlanner.PlannedVersion v : cycle.versions()) {
            List<String> ids = new ArrayList<>();
            v.splits().forEach(s -> ids.add(s.splitId()));
            lines.add(v.version() + ": " + ids + (v.lastPart() ? "" : " +"));
        }
        return lines;
    }

    @Test
    void splitsPerVersionAndEmptyVersionsAdvance() {
        fourVersions();

        Cycle cycle =
                new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE)
                        .plan(PlanningPosition.at(1), Long.MAX_VALUE);

        assertThat(render(cycle))
                .containsExactly("1: [1-A0, 1-A1]", "2: [2-R0, 2-A0]", "3: []", "4: []");
        assertThat(cycle.to())
                .isEqualTo(new PlanningPosition(5, table.currentSnapshot().snapshotId(), -1, 0));
        String addedInV2 = null;
        for (Snapshot snapshot : table.snapshots()) {
            if (snapshot.sequenceNumber() == 2) {
                addedInV2 = snapshot.addedDataFiles(table.io()).iterator().next().location();
            }
        }
        assertThat(cycle.versions().get(1).splits().get(0).file()).isNull();
        assertThat(cycle.versions().get(1).splits().get(1).file()).isEqualTo(addedInV2);
    }

    @Test
    void boundStopsPlanning() {
        fourVersions();

        Cycle cycle =
                new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE)
                        .plan(PlanningPosition.at(2), 3);

        assertThat(render(cycle)).containsExactly("2: [2-R0, 2-A0]", "3: []");
        assertThat(cycle.to().nextVersion()).isEqualTo(4);
    }

    /**
     * F6: whole versions per cycle; a deferred version blocks later ones; a large one goes alone.
     */
    @Test
    void rateLimitsAdmitWholeVersions() {
        fourVersions();
        ChangeFeedSplitPlanner twoFiles = new ChangeFeedSplitPlanner(table, 2, Long.MAX_VALUE);
        ChangeFeedSplitPlanner oneFile = new ChangeFeedSplitPlanner(table, 1, Long.MAX_VALUE);

        Cycle first = twoFiles.plan(PlanningPosition.at(1), Long.MAX_VALUE);
        Cycle second = twoFiles.plan(first.to(), Long.MAX_VALUE);
        Cycle alone = oneFile.plan(PlanningPosition.at(1), Long.MAX_VALUE);
        Cycle aloneNext = oneFile.plan(alone.to(), Long.MAX_VALUE);
        Cycle aloneLast = oneFile.plan(aloneNext.to(), Long.MAX_VALUE);

        assertThat(render(first)).containsExactly("1: [1-A0, 1-A1]");
        assertThat(render(second)).containsExactly("2: [2-R0, 2-A0]", "3: []", "4: []");
        assertThat(render(alone)).containsExactly("1: [1-A0, 1-A1]");
        assertThat(render(aloneNext)).containsExactly("2: [2-R0, 2-A0]");
        assertThat(render(aloneLast)).containsExactly("3: []", "4: []");
    }

    @Test
    void bytesLimitAdmitsWholeVersions() {
        fourVersions();
        long firstVersionBytes = 0;
        for (DataFile f :
                table.snapshot(table.history().get(0).snapshotId()).addedDataFiles(table.io())) {
            firstVersionBytes += f.fileSizeInBytes();
        }

        Cycle cycle =
                new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, firstVersionBytes + 1)
                        .plan(PlanningPosition.at(1), Long.MAX_VALUE);

        assertThat(render(cycle)).containsExactly("1: [1-A0, 1-A1]");
    }

    /**
     * F6: the initial snapshot may be split over cycles; its version completes with the last part.
     */
    @Test
    void initialSnapshotIsSplitOverCycles() {
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu")))
                .appendFile(tables.dataFile(table, row(2L, "b", "eu")))
                .appendFile(tables.dataFile(table, row(3L, "c", "eu")))
                .commit();
        long snapshotId = table.currentSnapshot().snapshotId();
        table.newAppend().appendFile(tables.dataFile(table, row(4L, "d", "eu"))).commit();
        ChangeFeedSplitPlanner planner = new ChangeFeedSplitPlanner(table, 2, Long.MAX_VALUE);

        Cycle first = planner.plan(PlanningPosition.initialSnapshot(snapshotId, 1), Long.MAX_VALUE);
        Cycle second = planner.plan(first.to(), Long.MAX_VALUE);

        assertThat(render(first)).containsExactly("1: [1-I0, 1-I1] +");
        assertThat(first.to()).isEqualTo(new PlanningPosition(1, -1, snapshotId, 2));
        assertThat(render(second)).containsExactly("1: [1-I2]", "2: [2-A0]");
    }

    /** F8: a rollback past a version the stream already read fails the stream. */
    @Test
    void rewrittenHistoryFails() {
        table.newAppend().appendFile(tables.dataFile(table, row(1L, "a", "eu"))).commit();
        long first = table.currentSnapshot().snapshotId();
        table.newAppend().appendFile(tables.dataFile(table, row(2L, "b", "eu"))).commit();
        ChangeFeedSplitPlanner planner =
                new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE);
        Cycle read = planner.plan(PlanningPosition.at(1), Long.MAX_VALUE);
        table.manageSnapshots().rollbackTo(first).commit();
        table.newAppend().appendFile(tables.dataFile(table, row(3L, "c", "eu"))).commit();

        assertThatThrownBy(() -> planner.plan(read.to(), Long.MAX_VALUE))
                .isInstanceOfSatisfying(
                        CdfException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(CdfException.ErrorCode.TABLE_HISTORY_REWRITTEN))
                .hasMessageContaining("version 2 (snapshot " + read.to().lastSnapshotId() + ")");
    }

    /** F4: the next version to read has expired while the stream was away. */
    @Test
    void expiredNextVersionFails() {
        for (long id = 1; id <= 3; id++) {
            table.newAppend().appendFile(tables.dataFile(table, row(id, "n", "eu"))).commit();
        }
        table.expireSnapshots()
                .expireOlderThan(table.currentSnapshot().timestampMillis())
                .retainLast(1)
                .commit();
        table.refresh();

        assertThatThrownBy(
                        () ->
                                new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE)
                                        .plan(PlanningPosition.at(2), Long.MAX_VALUE))
                .isInstanceOfSatisfying(
                        CdfException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(CdfException.ErrorCode.VERSION_NOT_AVAILABLE))
                .hasMessageContaining("Version 2 of table")
                .hasMessageContaining("earliest available version: 4");
    }
}

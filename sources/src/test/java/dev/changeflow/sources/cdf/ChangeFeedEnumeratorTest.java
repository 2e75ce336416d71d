package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumState;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumerator;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedSplitPlanner;
import dev.changeflow.sources.cdf.stream.enumerator.CheckpointVersionListener;
import dev.changeflow.sources.cdf.stream.enumerator.ConsumerPositionListener;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;
import dev.changeflow.sources.cdf.stream.event.SplitsFinishedEvent;
import dev.changeflow.sources.cdf.stream.event.VersionCompletedEvent;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;

import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.api.connector.source.mocks.MockSplitEnumeratorContext;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The enumerator of the streaming change feed on Flink's enumerator harness over a real table:
 * split requests, version-completion events to every reader, bounded end, the checkpointed
 * position, the F7 consumer hook, and splits handed back after a failover.
 */
class ChangeFeedEnumeratorTest {

    @TempDir Path warehouse;

    private Table table;
    private RecordingContext context;
    private ChangeFeedEnumerator enumerator;

    /**
     * Flink's enumerator harness that also records, per reader and in the order the enumerator sent
     * them, the versions completed ({@code "completed v"}) and the end ({@code "no more splits"}).
     */
    private static final class RecordingContext
            extends MockSplitEnumeratorContext<ChangeFeedSplit> {
        private final Map<Integer, List<String>> sent =
                Collections.synchronizedMap(new TreeMap<>());

        RecordingContext(int parallelism) {
            super(parallelism);
        }

        private void record(int subtask, String what) {
            sent.computeIfAbsent(subtask, s -> Collections.synchronizedList(new ArrayList<>()))
                    .add(what);
        }

        @Override
        public void sendEventToSourceReader(int subtaskId, SourceEvent event) {
            record(subtaskId, "completed " + ((VersionCompletedEvent) event).version());
            super.sendEventToSourceReader(subtaskId, event);
        }

        @Override
        public void signalNoMoreSplits(int subtask) {
            record(subtask, "no more splits");
            super.signalNoMoreSplits(subtask);
        }

        /** What reader {@code subtask} was sent, in order (waits for pending handlers first). */
        List<String> sentTo(int subtask) throws Exception {
            getSentSourceEvent();
            return new ArrayList<>(sent.getOrDefault(subtask, List.of()));
        }
    }

    private final List<String> consumerPositions = new ArrayList<>();

    /** v1: 2 files appended; v2: an update (equality delete + file); v3: an empty commit. */
    @BeforeEach
    void setUp() throws Throwable {
        CdfTestTables tables = new CdfTestTables(warehouse);
        table = tables.create("t", 2);
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu")))
                .appendFile(tables.dataFile(table, row(2L, "b", "us")))
                .commit();
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema().select("id"), row(1L, "a", "eu")))
                .addRows(tables.dataFile(table, row(1L, "a2", "eu")))
                .commit();
        table.newAppend().commit();

        context = new RecordingContext(2);
        enumerator =
                new ChangeFeedEnumerator(
                        context,
                        new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE),
                        "db.t",
                        1000,
                        "gold",
                        (id, next, checkpoint) ->
                                consumerPositions.add(id + " " + next + " " + checkpoint),
                        new ChangeFeedEnumState(
                                PlanningPosition.at(1), 3, -1, List.of(), Map.of()));
        enumerator.start();
        for (int subtask = 0; subtask < 2; subtask++) {
            context.registerReader(new ReaderInfo(subtask, "localhost"));
            enumerator.addReader(subtask);
        }
        context.runPeriodicCallable(0);
        context.getSentSourceEvent(); // waits for the cycle's handler
    }

    private List<String> assigned() {
        List<String> out = new ArrayList<>();
        for (SplitsAssignment<ChangeFeedSplit> a : context.getSplitsAssignmentSequence()) {
            a.assignment()
                    .forEach(
                            (subtask, splits) ->
                                    splits.forEach(s -> out.add(subtask + ":" + s.splitId())));
        }
        return out;
    }

    private List<Long> completedSentTo(int subtask) throws Exception {
        List<Long> versions = new ArrayList<>();
        for (SourceEvent e : context.getSentSourceEvent().getOrDefault(subtask, List.of())) {
            versions.add(((VersionCompletedEvent) e).version());
        }
        return versions;
    }

    private void finished(int subtask, String... ids) {
        enumerator.handleSourceEvent(subtask, new SplitsFinishedEvent(List.of(ids)));
    }

    @Test
    void versionsCompleteForEveryReaderAndTheBoundedStreamEnds() throws Throwable {
        enumerator.handleSplitRequest(0, "localhost");
        enumerator.handleSplitRequest(1, "localhost");
        assertThat(assigned()).containsExactly("0:1-A0", "1:1-A1");

        finished(1, "1-A1");
        assertThat(completedSentTo(0)).containsExactly(0L); // version 1 still has 1-A0
        finished(0, "1-A0");
        assertThat(completedSentTo(0)).containsExactly(0L, 1L);
        assertThat(completedSentTo(1)).containsExactly(0L, 1L);

        ChangeFeedEnumState state = enumerator.snapshotState(5);
        enumerator.notifyCheckpointComplete(5);
        assertThat(state.position().nextVersion()).isEqualTo(4);
        assertThat(state.completedVersion()).isEqualTo(1);
        assertThat(state.pendingSplits())
                .extracting(ChangeFeedSplit::splitId)
                .containsExactly("2-R0", "2-A0");
        assertThat(state.outstandingVersions().get(2L).unfinished())
                .containsExactly("2-R0", "2-A0");
        assertThat(consumerPositions).containsExactly("gold 2 5");

        enumerator.handleSplitRequest(0, "localhost");
        enumerator.handleSplitRequest(1, "localhost");
        assertThat(assigned()).containsExactly("0:1-A0", "1:1-A1", "0:2-R0", "1:2-A0");
        // bound 3 planned and handed out, but not read yet: the readers go on
        assertThat(context.hasNoMoreSplits(0)).isFalse();
        assertThat(context.hasNoMoreSplits(1)).isFalse();

        finished(0, "2-R0");
        assertThat(context.hasNoMoreSplits(0)).isFalse();
        finished(1, "2-A0");
        assertThat(completedSentTo(1)).containsExactly(0L, 1L, 3L); // 2 and the empty 3
        assertThat(context.hasNoMoreSplits(0)).isTrue();
        assertThat(context.hasNoMoreSplits(1)).isTrue();
        // later cycles and requests send nothing more: a reader finishes on "no more splits"
        context.runPeriodicCallable(0);
        enumerator.handleSplitRequest(0, "localhost");
        for (int subtask = 0; subtask < 2; subtask++) {
            assertThat(context.sentTo(subtask))
                    .containsExactly("completed 0", "completed 1", "completed 3", "no more splits");
        }
    }

    /**
     * A bounded read with nothing to read ({@code starting-version} = {@code latest} with {@code
     * bounded}: the start is after the bound) ends at once, and cleanly: each reader is sent the
     * completed bound, then the end, then nothing — before the fix the end came first and the
     * completion event then reached a finished reader, which fails the job ("Task is not running,
     * but in state FINISHED").
     */
    @Test
    void boundedReadWithNothingToReadEndsWithNoEventAfterTheEnd() throws Throwable {
        RecordingContext empty = new RecordingContext(2);
        ChangeFeedEnumerator afterBound =
                new ChangeFeedEnumerator(
                        empty,
                        new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE),
                        "db.t",
                        1000,
                        null,
                        ConsumerPositionListener.NONE,
                        new ChangeFeedEnumState(
                                PlanningPosition.at(4), 3, -1, List.of(), Map.of()));
        afterBound.start();
        for (int subtask = 0; subtask < 2; subtask++) {
            empty.registerReader(new ReaderInfo(subtask, "localhost"));
            afterBound.addReader(subtask);
        }
        empty.runPeriodicCallable(0);
        empty.getSentSourceEvent(); // waits for the cycle's handler
        afterBound.handleSplitRequest(0, "localhost");
        afterBound.handleSplitRequest(1, "localhost");
        empty.runPeriodicCallable(0);

        assertThat(empty.getSplitsAssignmentSequence()).isEmpty();
        for (int subtask = 0; subtask < 2; subtask++) {
            assertThat(empty.sentTo(subtask)).containsExactly("completed 3", "no more splits");
        }
    }

    /** A regional failover hands a finished split back: its version is outstanding again. */
    @Test
    void splitsHandedBackReopenTheirVersion() throws Exception {
        for (int i = 0; i < 2; i++) {
            enumerator.handleSplitRequest(0, "localhost");
            enumerator.handleSplitRequest(1, "localhost");
        }
        finished(0, "1-A0", "2-R0");
        finished(1, "1-A1", "2-A0");
        assertThat(enumerator.snapshotState(7).completedVersion()).isEqualTo(3);

        ChangeFeedSplit back =
                context.getSplitsAssignmentSequence().get(3).assignment().get(1).get(0);
        enumerator.addSplitsBack(List.of(back), 1);

        ChangeFeedEnumState state = enumerator.snapshotState(8);
        assertThat(state.completedVersion()).isEqualTo(1);
        assertThat(state.outstandingVersions().get(2L).unfinished()).containsExactly("2-A0");
        enumerator.notifyCheckpointComplete(8);
        assertThat(consumerPositions).containsExactly("gold 2 8");

        enumerator.handleSplitRequest(0, "localhost");
        assertThat(assigned()).endsWith("0:2-A0");
        finished(0, "2-A0");
        assertThat(enumerator.snapshotState(9).completedVersion()).isEqualTo(3);
    }

    /**
     * G2: the {@link CheckpointVersionListener} is told a checkpoint's completed version only once
     * the initial snapshot (snapshot-then-changes) is emitted — before that the stream holds part
     * of Silver's rows, and a Gold commit must claim no version — and then at every checkpoint.
     */
    @Test
    void checkpointVersionsAreToldOnlyOnceTheInitialSnapshotIsEmitted() throws Throwable {
        RecordingContext ctx = new RecordingContext(1);
        List<String> told = new ArrayList<>();
        CheckpointVersionListener listener =
                new CheckpointVersionListener() {
                    @Override
                    public void checkpointing(long checkpointId, long completedVersion) {
                        told.add(checkpointId + ":" + completedVersion);
                    }

                    @Override
                    public void checkpointCompleted(long checkpointId) {
                        told.add("completed " + checkpointId);
                    }

                    @Override
                    public void ended(long completedVersion) {
                        told.add("ended " + completedVersion);
                    }
                };
        long snapshotOfVersion2 = table.snapshot(table.currentSnapshot().parentId()).snapshotId();
        ChangeFeedEnumerator e =
                new ChangeFeedEnumerator(
                        ctx,
                        new ChangeFeedSplitPlanner(table, Long.MAX_VALUE, Long.MAX_VALUE),
                        "db.t",
                        1000,
                        null,
                        ConsumerPositionListener.NONE,
                        listener,
                        new ChangeFeedEnumState(
                                PlanningPosition.initialSnapshot(snapshotOfVersion2, 2),
                                3,
                                -1,
                                List.of(),
                                Map.of()));
        e.start();
        ctx.registerReader(new ReaderInfo(0, "localhost"));
        e.addReader(0);
        ctx.runPeriodicCallable(0);
        ctx.getSentSourceEvent();
        e.snapshotState(1);
        e.notifyCheckpointComplete(1);
        assertThat(told).containsExactly("completed 1");

        List<String> splits = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            e.handleSplitRequest(0, "localhost");
        }
        for (SplitsAssignment<ChangeFeedSplit> a : ctx.getSplitsAssignmentSequence()) {
            a.assignment().values().forEach(l -> l.forEach(split -> splits.add(split.splitId())));
        }
        assertThat(splits).isNotEmpty().allMatch(id -> id.startsWith("2-I"));
        for (String id : splits.subList(0, splits.size() - 1)) {
            e.handleSourceEvent(0, new SplitsFinishedEvent(List.of(id)));
        }
        e.snapshotState(2);
        assertThat(told).containsExactly("completed 1"); // one snapshot split still unfinished
        e.handleSourceEvent(0, new SplitsFinishedEvent(List.of(splits.get(splits.size() - 1))));
        e.snapshotState(3);
        e.notifyCheckpointComplete(3);
        // the snapshot (version 2) and the empty version 3 are complete: the bounded stream ends
        // (the end-of-input commit holds everything up to 3), and checkpoint 3 holds 3
        assertThat(told).containsExactly("completed 1", "ended 3", "3:3", "completed 3");
    }
}

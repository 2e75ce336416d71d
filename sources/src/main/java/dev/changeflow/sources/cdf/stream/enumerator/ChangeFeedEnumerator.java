package dev.changeflow.sources.cdf.stream.enumerator;

import dev.changeflow.sources.cdf.stream.event.SplitsFinishedEvent;
import dev.changeflow.sources.cdf.stream.event.VersionCompletedEvent;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Enumerator of the streaming change feed, shaped like Iceberg's {@code
 * ContinuousIcebergEnumerator}: every {@code monitor-interval} it plans the next cycle of versions
 * of {@code main} ({@link ChangeFeedSplitPlanner}, off the coordinator thread), hands splits to
 * readers that ask for one, learns from {@link SplitsFinishedEvent}s which splits were emitted, and
 * when every split of version {@code v} and of all earlier versions is done sends {@link
 * VersionCompletedEvent}{@code (v)} to every reader, which then emits watermark {@code v}
 * (design.md "Order and pairing — how").
 *
 * <p>Bounded (available-now) mode: once every version up to the bound was planned and every split
 * of them finished — the last {@link VersionCompletedEvent} sent — readers are told there are no
 * more splits, and they finish (F6). Nothing is sent to a reader after that signal: a reader
 * finishes as soon as it has it, and an event to a finished task fails the job ("Task is not
 * running, but in state FINISHED"), which a bounded read with nothing to read (say {@code
 * starting-version} = {@code latest}) used to hit.
 *
 * <p>State: {@link ChangeFeedEnumState}. A regional failover resets the readers to a checkpoint but
 * keeps this enumerator: splits handed back re-open their versions, and each reader holds its
 * watermark below the versions of the splits it holds, so a re-read row never arrives behind the
 * watermark. A planning cycle that started from a position that is no longer current (a checkpoint
 * restore or an overlapping cycle) is discarded.
 */
@Internal
public final class ChangeFeedEnumerator
        implements SplitEnumerator<ChangeFeedSplit, ChangeFeedEnumState> {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeFeedEnumerator.class);

    private final SplitEnumeratorContext<ChangeFeedSplit> context;
    private final ChangeFeedSplitPlanner planner;
    private final String tableName;
    private final long monitorIntervalMillis;
    private final long boundVersion;
    @Nullable private final String consumerId;
    private final ConsumerPositionListener consumerListener;
    private final CheckpointVersionListener versionListener;

    private final AtomicReference<PlanningPosition> position;
    private final Deque<ChangeFeedSplit> pending;
    private final VersionTracker tracker;
    private final Set<Integer> awaitingReaders = new LinkedHashSet<>();
    private final TreeMap<Long, Long> nextVersionByCheckpoint = new TreeMap<>();
    private boolean noMoreSplitsSignalled;

    public ChangeFeedEnumerator(
            SplitEnumeratorContext<ChangeFeedSplit> context,
            ChangeFeedSplitPlanner planner,
            String tableName,
            long monitorIntervalMillis,
            @Nullable String consumerId,
            ConsumerPositionListener consumerListener,
            ChangeFeedEnumState state) {
        this(
                context,
                planner,
                tableName,
                monitorIntervalMillis,
                consumerId,
                consumerListener,
                CheckpointVersionListener.NONE,
                state);
    }

    /**
     * As above, with a {@link CheckpointVersionListener} told each checkpoint's completed version
     * (G2: the Silver version recorded on Gold commits).
     */
    public ChangeFeedEnumerator(
            SplitEnumeratorContext<ChangeFeedSplit> context,
            ChangeFeedSplitPlanner planner,
            String tableName,
            long monitorIntervalMillis,
            @Nullable String consumerId,
            ConsumerPositionListener consumerListener,
            CheckpointVersionListener versionListener,
            ChangeFeedEnumState state) {
        this.context = context;
        this.planner = planner;
        this.tableName = tableName;
        this.monitorIntervalMillis = monitorIntervalMillis;
        this.boundVersion = state.boundVersion();
        this.consumerId = consumerId;
        this.consumerListener = consumerListener;
        this.versionListener = versionListener;
        this.position = new AtomicReference<>(state.position());
        this.pending = new ArrayDeque<>(state.pendingSplits());
        this.tracker = new VersionTracker(state.completedVersion(), state.outstandingVersions());
    }

    @Override
    public void start() {
        LOG.info(
                "Change feed of {} starts planning at {} (bound {}), completed version {}",
                tableName,
                position.get(),
                boundVersion == Long.MAX_VALUE ? "none" : boundVersion,
                tracker.completedVersion());
        context.callAsync(
                () -> planner.plan(position.get(), boundVersion),
                this::processCycle,
                0L,
                monitorIntervalMillis);
    }

    private void processCycle(ChangeFeedSplitPlanner.Cycle cycle, Throwable error) {
        if (error != null) {
            // fail the job: a missing version or a rewritten history must never be skipped (F4, F8)
            throw new IllegalStateException(
                    "Planning the change feed of table "
                            + tableName
                            + " failed: "
                            + error.getMessage(),
                    error);
        }
        if (!cycle.from().equals(position.get())) {
            LOG.info(
                    "Discarding a stale planning cycle from {} (now at {})",
                    cycle.from(),
                    position.get());
            return;
        }
        for (ChangeFeedSplitPlanner.PlannedVersion version : cycle.versions()) {
            tracker.planned(version.version(), version.splits(), version.lastPart());
            pending.addAll(version.splits());
        }
        position.set(cycle.to());
        if (!cycle.versions().isEmpty()) {
            LOG.info(
                    "Planned {} version(s) of {} up to {} ({} pending splits)",
                    cycle.versions().size(),
                    tableName,
                    cycle.versions().get(cycle.versions().size() - 1).version(),
                    pending.size());
        }
        assignPending();
        advance();
        signalNoMoreSplitsIfDone();
    }

    private void assignPending() {
        var readers = context.registeredReaders().keySet();
        var it = awaitingReaders.iterator();
        while (it.hasNext() && !pending.isEmpty()) {
            int subtask = it.next();
            it.remove();
            if (readers.contains(subtask)) {
                context.assignSplit(pending.poll(), subtask);
            }
        }
    }

    /**
     * Bounded mode: once every version up to the bound is planned and complete (its completion
     * event already sent by {@link #advance}), tells every reader once that no more splits come.
     */
    private void signalNoMoreSplitsIfDone() {
        if (noMoreSplitsSignalled
                || boundVersion == Long.MAX_VALUE
                || !pending.isEmpty()
                || !tracker.isEmpty()) {
            return;
        }
        PlanningPosition p = position.get();
        if (p.planningInitialSnapshot() || p.nextVersion() <= boundVersion) {
            return;
        }
        for (int subtask : context.registeredReaders().keySet()) {
            context.signalNoMoreSplits(subtask);
        }
        LOG.info(
                "Change feed of {} read every version up to {} (bounded)", tableName, boundVersion);
        noMoreSplitsSignalled = true;
        if (completeVersionReached()) {
            versionListener.ended(tracker.completedVersion());
        }
    }

    private void advance() {
        long before = tracker.completedVersion();
        long completed = tracker.advance(position.get().nextVersion() - 1);
        if (completed > before) {
            for (int subtask : context.registeredReaders().keySet()) {
                context.sendEventToSourceReader(subtask, new VersionCompletedEvent(completed));
            }
        }
    }

    @Override
    public void handleSplitRequest(int subtaskId, @Nullable String requesterHostname) {
        awaitingReaders.add(subtaskId);
        assignPending();
    }

    @Override
    public void handleSourceEvent(int subtaskId, SourceEvent sourceEvent) {
        if (sourceEvent instanceof SplitsFinishedEvent finished) {
            finished.splitIds().forEach(tracker::finished);
            advance();
            signalNoMoreSplitsIfDone();
        } else {
            LOG.warn("Ignoring unknown source event {} from subtask {}", sourceEvent, subtaskId);
        }
    }

    @Override
    public void addSplitsBack(List<ChangeFeedSplit> splits, int subtaskId) {
        // splits assigned after the last checkpoint: hand them out again, ahead of later versions
        // (a regional failover resets the readers but not this enumerator: their versions are
        // outstanding again, and the restarted readers get the lowered completed version)
        tracker.reopen(splits);
        tracker.advance(position.get().nextVersion() - 1);
        List<ChangeFeedSplit> back = new ArrayList<>(splits);
        back.sort((a, b) -> Long.compare(b.version(), a.version()));
        back.forEach(pending::addFirst);
        assignPending();
    }

    @Override
    public void addReader(int subtaskId) {
        if (tracker.completedVersion() >= 0) {
            context.sendEventToSourceReader(
                    subtaskId, new VersionCompletedEvent(tracker.completedVersion()));
        }
        if (noMoreSplitsSignalled) {
            context.signalNoMoreSplits(subtaskId);
        }
    }

    @Override
    public ChangeFeedEnumState snapshotState(long checkpointId) {
        nextVersionByCheckpoint.put(checkpointId, tracker.completedVersion() + 1);
        if (completeVersionReached()) {
            versionListener.checkpointing(checkpointId, tracker.completedVersion());
        }
        Map<Long, VersionTracker.VersionProgress> versions = new TreeMap<>(tracker.versions());
        return new ChangeFeedEnumState(
                position.get(),
                boundVersion,
                tracker.completedVersion(),
                new ArrayList<>(pending),
                versions);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        Long nextVersion = nextVersionByCheckpoint.get(checkpointId);
        nextVersionByCheckpoint.headMap(checkpointId, true).clear();
        versionListener.checkpointCompleted(checkpointId);
        if (nextVersion != null && consumerId != null) {
            commitConsumerPosition(checkpointId, nextVersion);
        }
    }

    /**
     * Whether the completed version stands for Silver as of that version: a version completed and
     * no split of the initial snapshot is unplanned or unfinished (while it is, the stream holds
     * part of Silver's rows only).
     */
    boolean completeVersionReached() {
        if (tracker.completedVersion() < 0 || position.get().planningInitialSnapshot()) {
            return false;
        }
        for (VersionTracker.VersionProgress progress : tracker.versions().values()) {
            for (String split : progress.unfinished()) {
                if (split.contains("-" + ChangeFeedSplit.Kind.INITIAL.code())) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * F7 hook: the consumer registry records that this stream's consumer needs versions from {@code
     * nextVersion} on. Called after each completed checkpoint when a {@code consumer-id} is set;
     * delegates to the {@link ConsumerPositionListener} given to the source.
     */
    void commitConsumerPosition(long checkpointId, long nextVersion) {
        consumerListener.positionCommitted(consumerId, nextVersion, checkpointId);
    }

    /** The consumer id given to the stream, or null. */
    @Nullable
    public String consumerId() {
        return consumerId;
    }

    @Override
    public void close() {}
}

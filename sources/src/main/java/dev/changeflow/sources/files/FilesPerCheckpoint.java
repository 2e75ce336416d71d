package dev.changeflow.sources.files;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.PendingSplitsCheckpoint;
import org.apache.flink.metrics.groups.SplitEnumeratorMetricGroup;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;

/**
 * A file source that takes at most {@code max} new files per checkpoint: {@code read_files(...,
 * maxFilesPerTrigger => n)} (docs/semantics.md S2). The vendor's micro-batch is a checkpoint here
 * (each checkpoint is one Iceberg commit), so the rows of at most n files reach one commit.
 *
 * <p>The wrapped source's enumerator is left as it is (discovery, the processed paths, its
 * checkpoint); only its split assignments pass a gate. At the start the gate lets {@code max} files
 * through to the readers; the others are held, in the order the enumerator assigns them, and
 * released {@code max} at a time when a checkpoint completes that was taken after the readers had
 * emitted every record of the files released before (a reader asks for its next file only then). So
 * the rows of one release reach the commits after the rows of the release before, and no commit
 * holds rows of two releases; a release larger than a checkpoint interval can take is spread over
 * several commits. An aborted checkpoint releases nothing. Held files are not assigned yet, so the
 * enumerator's checkpoint lists them among its pending files: a restored job reads each of them
 * once, as the wrapped source would ({@link PendingSplitsCheckpoint}, the same state as the wrapped
 * source's, so a savepoint restores with or without the limit). A reader told "no more files" is
 * told so only once its held files are released.
 */
@PublicEvolving
public final class FilesPerCheckpoint<T> extends FileSourceWrapper<T> {
    private static final long serialVersionUID = 1L;

    private final int max;

    /**
     * @param files the file source ({@link ChangeFiles}'s {@code FileSource} or {@link
     *     NewFilesOnly})
     * @param max the most files per checkpoint, at least 1
     * @throws IllegalArgumentException when {@code max} is below 1
     */
    public FilesPerCheckpoint(
            Source<T, FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>> files, int max) {
        super(files);
        if (max < 1) {
            throw new IllegalArgumentException("at most 0 files per checkpoint reads nothing");
        }
        this.max = max;
    }

    @Override
    public SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>
            createEnumerator(SplitEnumeratorContext<FileSourceSplit> context) throws Exception {
        Gate gate = new Gate(context, max);
        gate.delegate = files.createEnumerator(gate);
        return gate.enumerator;
    }

    @Override
    public SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>
            restoreEnumerator(
                    SplitEnumeratorContext<FileSourceSplit> context,
                    PendingSplitsCheckpoint<FileSourceSplit> checkpoint)
                    throws Exception {
        Gate gate = new Gate(context, max);
        gate.delegate = files.restoreEnumerator(gate, checkpoint);
        return gate.enumerator;
    }

    /** A file held back for a reader. */
    private record Held(FileSourceSplit split, int subtask) {}

    /**
     * The context the wrapped enumerator assigns through (the gate), and the enumerator the job
     * sees.
     */
    private static final class Gate implements SplitEnumeratorContext<FileSourceSplit> {
        private final SplitEnumeratorContext<FileSourceSplit> context;
        private final int max;
        private final ArrayDeque<Held> held = new ArrayDeque<>();
        private final Set<Integer> noMoreSplitsDue = new LinkedHashSet<>();

        /** Readers given a file they have not finished (no split request since). */
        private final Set<Integer> busy = new LinkedHashSet<>();

        /** Checkpoints taken while no reader was busy: every released file is before them. */
        private final java.util.TreeSet<Long> clean = new java.util.TreeSet<>();

        private int budget;
        SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>> delegate;
        final Enumerator enumerator = new Enumerator();

        Gate(SplitEnumeratorContext<FileSourceSplit> context, int max) {
            this.context = context;
            this.max = max;
            this.budget = max;
        }

        private void offer(FileSourceSplit split, int subtask) {
            if (budget > 0 && held.isEmpty()) {
                budget--;
                busy.add(subtask);
                context.assignSplit(split, subtask);
            } else {
                held.add(new Held(split, subtask));
            }
        }

        /** After a completed checkpoint: the next {@code max} files. */
        private void nextCycle() {
            budget = max;
            while (budget > 0 && !held.isEmpty()) {
                Held h = held.poll();
                budget--;
                busy.add(h.subtask());
                context.assignSplit(h.split(), h.subtask());
            }
            for (Iterator<Integer> it = noMoreSplitsDue.iterator(); it.hasNext(); ) {
                int subtask = it.next();
                if (held.stream().noneMatch(h -> h.subtask() == subtask)) {
                    it.remove();
                    context.signalNoMoreSplits(subtask);
                }
            }
        }

        @Override
        public SplitEnumeratorMetricGroup metricGroup() {
            return context.metricGroup();
        }

        @Override
        public void sendEventToSourceReader(int subtaskId, SourceEvent event) {
            context.sendEventToSourceReader(subtaskId, event);
        }

        @Override
        public int currentParallelism() {
            return context.currentParallelism();
        }

        @Override
        public Map<Integer, ReaderInfo> registeredReaders() {
            return context.registeredReaders();
        }

        @Override
        public void assignSplits(SplitsAssignment<FileSourceSplit> newSplitAssignments) {
            for (Map.Entry<Integer, List<FileSourceSplit>> e :
                    newSplitAssignments.assignment().entrySet()) {
                for (FileSourceSplit split : e.getValue()) {
                    offer(split, e.getKey());
                }
            }
        }

        @Override
        public void assignSplit(FileSourceSplit split, int subtask) {
            offer(split, subtask);
        }

        @Override
        public void signalNoMoreSplits(int subtask) {
            if (held.stream().anyMatch(h -> h.subtask() == subtask)) {
                noMoreSplitsDue.add(subtask);
            } else {
                context.signalNoMoreSplits(subtask);
            }
        }

        @Override
        public <R> void callAsync(Callable<R> callable, BiConsumer<R, Throwable> handler) {
            context.callAsync(callable, handler);
        }

        @Override
        public <R> void callAsync(
                Callable<R> callable,
                BiConsumer<R, Throwable> handler,
                long initialDelay,
                long period) {
            context.callAsync(callable, handler, initialDelay, period);
        }

        @Override
        public void runInCoordinatorThread(Runnable runnable) {
            context.runInCoordinatorThread(runnable);
        }

        @Override
        public void setIsProcessingBacklog(boolean isProcessingBacklog) {
            context.setIsProcessingBacklog(isProcessingBacklog);
        }

        /** The wrapped enumerator, its checkpoints listing the held files as pending. */
        private final class Enumerator
                implements SplitEnumerator<
                        FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>> {
            @Override
            public void start() {
                delegate.start();
            }

            @Override
            public void handleSplitRequest(int subtaskId, String requesterHostname) {
                // a reader asks when it has emitted every record of its files
                busy.remove(subtaskId);
                delegate.handleSplitRequest(subtaskId, requesterHostname);
            }

            @Override
            public void addSplitsBack(List<FileSourceSplit> splits, int subtaskId) {
                List<FileSourceSplit> back = new ArrayList<>(splits);
                for (Iterator<Held> it = held.iterator(); it.hasNext(); ) {
                    Held h = it.next();
                    if (h.subtask() == subtaskId) {
                        back.add(h.split());
                        it.remove();
                    }
                }
                noMoreSplitsDue.remove(subtaskId);
                busy.remove(subtaskId);
                delegate.addSplitsBack(back, subtaskId);
            }

            @Override
            public void addReader(int subtaskId) {
                delegate.addReader(subtaskId);
            }

            @Override
            public PendingSplitsCheckpoint<FileSourceSplit> snapshotState(long checkpointId)
                    throws Exception {
                PendingSplitsCheckpoint<FileSourceSplit> state =
                        delegate.snapshotState(checkpointId);
                if (busy.isEmpty()) {
                    clean.add(checkpointId);
                }
                List<FileSourceSplit> pending = new ArrayList<>();
                for (Held h : held) {
                    pending.add(h.split());
                }
                pending.addAll(state.getSplits());
                return PendingSplitsCheckpoint.fromCollectionSnapshot(
                        pending, state.getAlreadyProcessedPaths());
            }

            @Override
            public void notifyCheckpointComplete(long checkpointId) throws Exception {
                delegate.notifyCheckpointComplete(checkpointId);
                // the released files are committed once a checkpoint taken after they were read
                // completes: the next ones go out now, after it, so their rows go to later commits
                // than every row of the files before (an aborted checkpoint releases none)
                if (!clean.isEmpty() && clean.first() <= checkpointId) {
                    clean.headSet(checkpointId, true).clear();
                    nextCycle();
                }
            }

            @Override
            public void notifyCheckpointAborted(long checkpointId) throws Exception {
                delegate.notifyCheckpointAborted(checkpointId);
            }

            @Override
            public void handleSourceEvent(int subtaskId, SourceEvent sourceEvent) {
                delegate.handleSourceEvent(subtaskId, sourceEvent);
            }

            @Override
            public void close() throws IOException {
                try {
                    delegate.close();
                } catch (IOException | RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IOException(e);
                }
            }
        }
    }
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.core.io.InputStatus;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A test source that paces batches by checkpoints: it emits 0..n-1, number i+1 only after a
 * checkpoint that was taken after number i completed, so each number (a batch index, expanded by a
 * downstream flatMap) is the whole content of exactly one checkpoint — and of one Iceberg version —
 * however the timing falls. Restored from a checkpoint, it continues after the last number that
 * checkpoint covers. Shared by the sinks tests and e2e-tests (sinks' test-jar).
 *
 * <p>The end of input, too, waits for one more completed checkpoint after the last number's: only
 * then is it certain that Iceberg's {@code FlinkSink} committer was told of the last number's
 * checkpoint before its {@code endInput}. Had it not been (the completion notices reach the source
 * and the committer in either order), its {@code endInput} commits that checkpoint's files together
 * with the writer's empty end-of-input result, one snapshot each — an empty version after the last
 * batch's (Iceberg 1.11 {@code IcebergFilesCommitter#commitDeltaTxn} on a table with deletes).
 */
public final class OneBatchPerCheckpointSource extends NumberSequenceSource {
    private static final long serialVersionUID = 1L;

    /**
     * Holds by name: a held source emits nothing from its hold number on until {@link #release}.
     */
    private static final Map<String, CompletableFuture<Void>> HOLDS = new ConcurrentHashMap<>();

    private final long holdAt;
    private final String holdName;

    /**
     * @param batches how many numbers (batches) to emit: 0 .. batches-1
     */
    public OneBatchPerCheckpointSource(int batches) {
        this(batches, -1, null);
    }

    /**
     * A source that, in addition, emits number {@code holdAt} only after {@link #release}{@code
     * (holdName)} was called in this JVM (a MiniCluster test pauses the upstream writer there). Not
     * meant for restored runs: the hold counts numbers emitted by this reader.
     */
    public OneBatchPerCheckpointSource(int batches, long holdAt, String holdName) {
        super(0, batches - 1);
        this.holdAt = holdAt;
        this.holdName = holdName;
        if (holdName != null) {
            HOLDS.putIfAbsent(holdName, new CompletableFuture<>());
        }
    }

    /** Lets the sources held under {@code holdName} go on. */
    public static void release(String holdName) {
        HOLDS.computeIfAbsent(holdName, k -> new CompletableFuture<>()).complete(null);
    }

    @Override
    public SourceReader<Long, NumberSequenceSplit> createReader(SourceReaderContext context) {
        CompletableFuture<Void> hold =
                holdName == null
                        ? null
                        : HOLDS.computeIfAbsent(holdName, k -> new CompletableFuture<>());
        return new CheckpointGatedReader(super.createReader(context), holdAt, hold);
    }

    private static final class CheckpointGatedReader
            implements SourceReader<Long, NumberSequenceSource.NumberSequenceSplit> {
        private final SourceReader<Long, NumberSequenceSource.NumberSequenceSplit> delegate;
        private CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);
        private boolean emittedSinceSnapshot;
        private long releasingCheckpoint = -1;
        private final long holdAt;
        private final CompletableFuture<Void> hold;
        private long emittedNumbers;

        /** The delegate reached its end and one more checkpoint has been asked for (see above). */
        private boolean endDeferred;

        CheckpointGatedReader(
                SourceReader<Long, NumberSequenceSource.NumberSequenceSplit> delegate,
                long holdAt,
                CompletableFuture<Void> hold) {
            this.delegate = delegate;
            this.holdAt = holdAt;
            this.hold = hold;
        }

        private boolean held() {
            return hold != null && emittedNumbers == holdAt && !hold.isDone();
        }

        @Override
        public void start() {
            delegate.start();
        }

        @Override
        public InputStatus pollNext(ReaderOutput<Long> output) throws Exception {
            if (!gate.isDone() || held()) {
                return InputStatus.NOTHING_AVAILABLE;
            }
            if (endDeferred) {
                return InputStatus.END_OF_INPUT;
            }
            boolean[] emitted = {false};
            InputStatus status =
                    delegate.pollNext(
                            new ReaderOutput<Long>() {
                                @Override
                                public void collect(Long record) {
                                    emitted[0] = true;
                                    output.collect(record);
                                }

                                @Override
                                public void collect(Long record, long timestamp) {
                                    emitted[0] = true;
                                    output.collect(record, timestamp);
                                }

                                @Override
                                public void emitWatermark(Watermark watermark) {
                                    output.emitWatermark(watermark);
                                }

                                @Override
                                public void markIdle() {
                                    output.markIdle();
                                }

                                @Override
                                public void markActive() {
                                    output.markActive();
                                }

                                @Override
                                public SourceOutput<Long> createOutputForSplit(String splitId) {
                                    return output.createOutputForSplit(splitId);
                                }

                                @Override
                                public void releaseOutputForSplit(String splitId) {
                                    output.releaseOutputForSplit(splitId);
                                }
                            });
            if (emitted[0]) {
                emittedNumbers++;
                gate = new CompletableFuture<>();
                emittedSinceSnapshot = true;
                return status == InputStatus.END_OF_INPUT ? status : InputStatus.NOTHING_AVAILABLE;
            }
            if (status == InputStatus.END_OF_INPUT && emittedNumbers > 0) {
                // one more completed checkpoint, then the end (see the class comment)
                endDeferred = true;
                gate = new CompletableFuture<>();
                emittedSinceSnapshot = true;
                return InputStatus.NOTHING_AVAILABLE;
            }
            return status;
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            if (!gate.isDone()) {
                return gate;
            }
            return held() ? hold : delegate.isAvailable();
        }

        @Override
        public void addSplits(List<NumberSequenceSource.NumberSequenceSplit> splits) {
            delegate.addSplits(splits);
        }

        @Override
        public void notifyNoMoreSplits() {
            delegate.notifyNoMoreSplits();
        }

        @Override
        public List<NumberSequenceSource.NumberSequenceSplit> snapshotState(long checkpointId) {
            if (emittedSinceSnapshot) {
                releasingCheckpoint = checkpointId;
                emittedSinceSnapshot = false;
            }
            return delegate.snapshotState(checkpointId);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
            delegate.notifyCheckpointComplete(checkpointId);
            if (releasingCheckpoint >= 0 && checkpointId >= releasingCheckpoint) {
                releasingCheckpoint = -1;
                gate.complete(null);
            }
        }

        @Override
        public void close() throws Exception {
            delegate.close();
        }
    }
}

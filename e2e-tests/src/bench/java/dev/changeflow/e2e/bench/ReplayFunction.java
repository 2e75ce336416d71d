package dev.changeflow.e2e.bench;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.Collector;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Turns the index {@code i} of a number sequence into replayed record {@code i}: base row {@code i
 * mod n} of a {@link DecodedInput} file, with its {@code source.lsn} raised by {@code (i div n) ×
 * shift} (round {@code i div n}). Runs at parallelism 1 behind a parallelism-1 sequence source, so
 * records leave in file order, round after round. The rows are read from the file in {@link #open},
 * not shipped in the job graph.
 *
 * <p>For the steady-state rate it records, in this JVM, how many records it had emitted and when,
 * at each checkpoint barrier ({@link #marks()}); for the active rate, when it emitted the record at
 * 10% of the input and the last one ({@link #activeRate()}).
 *
 * <p>Indexes from {@code records} on are a hold tail (state-size runs): they emit nothing, and
 * until a checkpoint taken after the last record has completed each waits a millisecond — so the
 * job keeps its keyed state until one checkpoint holds all of it (a finished operator's state is
 * not in the final checkpoint).
 */
final class ReplayFunction extends RichFlatMapFunction<Long, RowData>
        implements CheckpointedFunction, CheckpointListener {
    private static final long serialVersionUID = 1L;

    /** {checkpoint id, records emitted before the barrier, System.nanoTime()} per checkpoint. */
    private static final List<long[]> MARKS = new ArrayList<>();

    private static volatile boolean allEmitted;
    private static volatile long tenthNanos;
    private static volatile long tenthCount;
    private static volatile long lastNanos;
    private static volatile long lastCount;

    private final String file;
    private final RowType type;
    private final int sequenceIndex;
    private final long shift;
    private final long records;
    private transient RowData[] base;
    private transient long emitted;
    private transient long endCheckpoint;
    private transient volatile boolean endCheckpointed;

    ReplayFunction(Path file, RowType type, int sequenceIndex, long shift, long records) {
        this.file = file.toString();
        this.type = type;
        this.sequenceIndex = sequenceIndex;
        this.shift = shift;
        this.records = records;
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        base = DecodedInput.read(Path.of(file), type).toArray(new RowData[0]);
        endCheckpoint = Long.MAX_VALUE;
    }

    @Override
    public void flatMap(Long index, Collector<RowData> out) {
        long i = index;
        if (i >= records) {
            if (!endCheckpointed) {
                LockSupport.parkNanos(1_000_000L);
            }
            return;
        }
        out.collect(row(i));
        if (emitted == records / 10) {
            tenthNanos = System.nanoTime();
            tenthCount = emitted;
        }
        if (emitted == records) {
            lastNanos = System.nanoTime();
            lastCount = emitted;
            allEmitted = true;
        }
    }

    private RowData row(long i) {
        GenericRowData row = (GenericRowData) base[(int) (i % base.length)];
        long round = i / base.length;
        emitted++;
        if (round == 0) {
            return row;
        }
        GenericRowData copy = new GenericRowData(row.getRowKind(), row.getArity());
        for (int f = 0; f < row.getArity(); f++) {
            copy.setField(f, row.getField(f));
        }
        copy.setField(sequenceIndex, row.getLong(sequenceIndex) + round * shift);
        return copy;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        synchronized (MARKS) {
            MARKS.add(new long[] {context.getCheckpointId(), emitted, System.nanoTime()});
        }
        if (emitted == records && endCheckpoint == Long.MAX_VALUE) {
            endCheckpoint = context.getCheckpointId();
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        if (checkpointId >= endCheckpoint) {
            endCheckpointed = true;
        }
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}

    /** The marks recorded so far in this JVM, in checkpoint order. */
    static List<long[]> marks() {
        synchronized (MARKS) {
            return new ArrayList<>(MARKS);
        }
    }

    /** Forgets the marks (before a new run in the same JVM). */
    static void clearMarks() {
        synchronized (MARKS) {
            MARKS.clear();
        }
        allEmitted = false;
        tenthNanos = 0;
        lastNanos = 0;
    }

    /**
     * Records per second between the emission of the record at 10% of the input and the last one
     * (start-up and the final commit excluded; the source is back-pressured, so this is the rate
     * the job consumed at), or -1 when the replay has not finished.
     */
    static double activeRate() {
        long from = tenthNanos;
        long to = lastNanos;
        return from <= 0 || to <= from ? -1 : (double) (lastCount - tenthCount) * 1e9 / (to - from);
    }

    /** Whether the replay in this JVM has emitted its last record. */
    static boolean allEmitted() {
        return allEmitted;
    }
}

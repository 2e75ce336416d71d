package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.state.Scd1RowValue;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinarySegmentUtils;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.OutputTag;

import javax.annotation.Nullable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The keyed AUTO CDC operator of flows without truncate records, SCD type 1 (semantics.md A3) and
 * type 2 (A4): every record is applied by {@link Scd1Logic} / {@link Scd2Logic} when it arrives
 * (same rules, same counters), but the state of the keys it touches and their <b>net changes</b>
 * stay in memory until the next checkpoint barrier ({@code prepareSnapshotPreBarrier}), the end of
 * the input, or until {@link AutoCdcSpec#applyBufferKeys()} keys are held, whichever comes first. A
 * key updated n times between two checkpoints then costs one state read and one state write instead
 * of n of each, and the Iceberg writer receives one change per row instead of n.
 *
 * <p><b>Why this is exact.</b> The state written at a flush holds what the per-record path would
 * have written after the same records (SCD type 2: the same history entries, in one chunk instead
 * of one chunk per record), and a checkpoint always follows a flush, so checkpoints and savepoints
 * hold the complete state (same descriptors, {@link AutoCdcStateDescriptors}). The target table
 * changes only at Iceberg commits, one per checkpoint (K4), so changes that start and end between
 * two barriers are never visible: per target row identity (KEYS, and {@code __START_AT} for SCD
 * type 2) the operator emits the difference between the row at the last flush and the row now —
 * nothing (absent → absent, or identical), {@code +I} (absent → row), {@code -D} with the complete
 * old row (row → absent), or {@code -U} complete old row directly followed by {@code +U} new row.
 * Rows of one key are emitted together (SCD type 2: in {@link Scd2Logic}'s order); keys in the
 * order they were first touched.
 *
 * <p>Output rows carry no timestamp; watermarks pass through unchanged and may overtake buffered
 * rows (the Iceberg writer downstream ignores both). With {@code applyBufferKeys = 0} every record
 * is flushed at once: the output is then exactly the per-record changelog of the logic classes.
 *
 * <p>Memory per subtask: at most {@code applyBufferKeys} keys, each with its stored row bytes (SCD
 * type 1: as loaded and as now; SCD type 2: the head then and now) and, SCD type 2, the history
 * entries applied since the flush (one per applied record, A4, encoded as the chunk that the flush
 * writes as one state value; a key that received a late record holds its whole loaded history), at
 * most {@code applyBufferKeys × 512} bytes of them (50 MB at the default) before an early flush.
 *
 * <p>Records the logic cannot apply (A3/A4 unavailable values without a stored row) leave at once
 * on the side output {@link AutoCdcOperators#quarantineTag} as quarantine rows.
 *
 * <p>Metrics besides the logic's counters: {@code bufferFlushes} (flushes of a non-empty buffer),
 * {@code bufferedKeysFlushed} (keys written back to the state backend) and {@code quarantined}
 * (records sent to the quarantine side output; the decoders' counter of the same name, so a run's
 * quarantined count includes them).
 *
 * <p>Widened columns (A7 item 4): every snapshot records the row type the keyed state's rows are
 * encoded with ({@link AutoCdcStateDescriptors#ROW_TYPE}); a restore under a flow whose row type
 * changed a column's stored form since (FLOAT → DOUBLE, DECIMAL across 18 digits) rewrites the
 * stored rows in the new form before the first record ({@link StateMigration}).
 */
@Internal
public final class AutoCdcApplyOperator extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData>, BoundedOneInput {
    private static final long serialVersionUID = 1L;

    /**
     * SCD2: heap bytes of buffered history entries allowed per {@code applyBufferKeys} key (100,000
     * keys: 50 MB).
     */
    static final long ENTRY_BYTES_PER_KEY = 512;

    private final AutoCdcSpec spec;

    private transient Scd1Logic scd1;
    private transient Scd2Logic scd2;
    private transient ValueState<byte[]> rowState;
    private transient ValueState<byte[]> tombstoneState;
    private transient ValueState<byte[]> currentState;
    private transient MapState<String, byte[]> historyState;
    private transient BufferedScd1State scd1State;
    private transient Scd2Store scd2Store;
    private transient ChangeOutput collector;
    private transient LinkedHashMap<KeyBytes, KeyBuffer> buffer;

    /** SCD2: estimated heap bytes of the history entries applied since the last flush. */
    private transient long bufferedEntryBytes;

    private transient KeyBytes probe;
    private transient KeyBuffer active;
    private transient StreamRecord<RowData> reuse;
    private transient Counter flushes;
    private transient Counter keysFlushed;
    private transient ApplyCodecs codecs;
    private transient Scd1RowValue view;
    private transient OutputTag<RowData> quarantineTag;
    private transient QuarantineRows quarantineRows;
    private transient Counter quarantined;
    private transient StateMigration.RowTypeRecord rowType;

    /**
     * @param spec the flow; its truncate records, if any, are not seen here ({@link
     *     Scd1TruncateFunction} applies those)
     */
    public AutoCdcApplyOperator(AutoCdcSpec spec) {
        this.spec = spec;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        rowType =
                StateMigration.RowTypeRecord.initialize(
                        context, getKeyedStateBackend(), spec, getUserCodeClassloader());
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        rowType.snapshot();
    }

    @Override
    public void open() throws Exception {
        super.open();
        FlinkAutoCdcMetrics metrics = new FlinkAutoCdcMetrics(getMetricGroup());
        if (spec.scdType() == ScdType.TYPE_2) {
            scd2 = new Scd2Logic(spec, metrics);
            currentState = getRuntimeContext().getState(AutoCdcStateDescriptors.scd2Current());
            historyState = getRuntimeContext().getMapState(AutoCdcStateDescriptors.scd2History());
            scd2Store = new Scd2Store();
        } else {
            scd1 = new Scd1Logic(spec, metrics);
            rowState = getRuntimeContext().getState(AutoCdcStateDescriptors.scd1Row());
            tombstoneState =
                    getRuntimeContext()
                            .getState(
                                    AutoCdcStateDescriptors.scd1Tombstone(
                                            spec.tombstoneGcThreshold()));
            scd1State = new BufferedScd1State();
            codecs = new ApplyCodecs(spec);
            view = new Scd1RowValue();
        }
        quarantineTag = AutoCdcOperators.quarantineTag(spec);
        quarantined = getMetricGroup().counter(QuarantineRows.COUNTER);
        quarantineRows = new QuarantineRows(spec, quarantined);
        buffer = new LinkedHashMap<>();
        probe = new KeyBytes();
        reuse = new StreamRecord<>(null);
        collector = row -> output.collect(reuse.replace(row));
        flushes = getMetricGroup().counter("bufferFlushes");
        keysFlushed = getMetricGroup().counter("bufferedKeysFlushed");
    }

    /**
     * Records this instance sent to the quarantine side output (the {@code quarantined} counter).
     */
    @VisibleForTesting
    long quarantinedRecords() {
        return quarantined.getCount();
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        // the key selector gives a fresh, never mutated BinaryRowData per record: safe to keep
        RowData key = (RowData) getCurrentKey();
        probe.set(key);
        KeyBuffer b = buffer.get(probe);
        if (b == null) {
            b = new KeyBuffer(key, probe);
            buffer.put(b, b);
        }
        if (scd2 != null) {
            long before = b.changes.heapBytes();
            scd2.apply(element.getValue(), b.changes, scd2Store, b);
            bufferedEntryBytes += b.changes.heapBytes() - before;
        } else {
            active = b;
            scd1.apply(element.getValue(), scd1State, b);
            active = null;
        }
        if (buffer.size() >= spec.applyBufferKeys()
                || bufferedEntryBytes >= (long) spec.applyBufferKeys() * ENTRY_BYTES_PER_KEY) {
            flush();
        }
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        flush();
    }

    @Override
    public void endInput() throws Exception {
        flush();
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }

    /** Writes every buffered key's state back to the state backend and emits its net changes. */
    private void flush() throws Exception {
        if (buffer == null || buffer.isEmpty()) { // null: not opened (its restore failed)
            return;
        }
        Object keyBefore = getCurrentKey();
        for (KeyBuffer b : buffer.values()) {
            setCurrentKey(b.key);
            if (scd2 != null) {
                scd2.flush(b.changes, scd2Store, collector);
            } else {
                b.writeState();
                b.emitScd1NetChange();
            }
        }
        flushes.inc();
        keysFlushed.inc(buffer.size());
        buffer.clear();
        bufferedEntryBytes = 0;
        if (keyBefore != null) {
            setCurrentKey(keyBefore);
        }
    }

    /**
     * The binary form of a key, as a hash map key: compared by its bytes, hash precomputed (fewer
     * dependent loads per lookup than {@code BinaryRowData}'s segment-based equals).
     */
    private static class KeyBytes {
        private static final VarHandle LONGS =
                MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
        byte[] bytes;
        int offset;
        int length;
        int hash;

        final void set(RowData key) {
            if (key instanceof BinaryRowData) {
                BinaryRowData binary = (BinaryRowData) key;
                MemorySegment[] segments = binary.getSegments();
                if (segments.length == 1 && !segments[0].isOffHeap()) {
                    bytes = segments[0].getArray();
                    offset = binary.getOffset();
                    length = binary.getSizeInBytes();
                } else {
                    bytes =
                            BinarySegmentUtils.copyToBytes(
                                    segments, binary.getOffset(), binary.getSizeInBytes());
                    offset = 0;
                    length = bytes.length;
                }
                hash = hash(bytes, offset, length);
                return;
            }
            throw new IllegalStateException(
                    "AUTO CDC keys are BinaryRowData (AutoCdcKeySelector), got "
                            + key.getClass().getName());
        }

        /**
         * A cheap, well-mixed hash of a few bytes (keys are short): 8 bytes a step, then a murmur3
         * finalizer.
         */
        private static int hash(byte[] b, int off, int len) {
            long h = len;
            int i = off;
            int end = off + len;
            for (; i + 8 <= end; i += 8) {
                h = h * 0x9E3779B97F4A7C15L + (long) LONGS.get(b, i);
            }
            for (; i < end; i++) {
                h = h * 31 + b[i];
            }
            h ^= h >>> 33;
            h *= 0xFF51AFD7ED558CCDL;
            h ^= h >>> 33;
            return (int) h;
        }

        @Override
        public final boolean equals(Object o) {
            if (this == o) {
                return true;
            }
            if (!(o instanceof KeyBytes)) {
                return false;
            }
            KeyBytes k = (KeyBytes) o;
            return hash == k.hash
                    && Arrays.equals(
                            bytes, offset, offset + length, k.bytes, k.offset, k.offset + k.length);
        }

        @Override
        public final int hashCode() {
            return hash;
        }
    }

    /**
     * What the operator holds for one key between flushes; for SCD type 1 also the logic's {@link
     * ChangeOutput}.
     */
    private final class KeyBuffer extends KeyBytes implements ChangeOutput {
        final RowData key;

        @Override
        public void quarantine(RowData record, QuarantineReason reason, String detail) {
            // quarantine rows are append-only: they bypass the net-change buffer
            output.collect(
                    quarantineTag, new StreamRecord<>(quarantineRows.row(record, reason, detail)));
        }

        /** SCD2: the key's changes since the flush. */
        @Nullable final Scd2Logic.KeyChanges changes;

        // SCD1: row and tombstone
        @Nullable byte[] row;

        /** SCD1: the row as loaded from the state backend (the table's row at the last flush). */
        @Nullable byte[] initialRow;

        boolean rowLoaded;
        boolean rowDirty;
        @Nullable byte[] tombstone;
        boolean tombstoneLoaded;
        boolean tombstoneDirty;

        KeyBuffer(RowData key, KeyBytes bytesOfKey) {
            this.key = key;
            this.changes = scd2 != null ? new Scd2Logic.KeyChanges() : null;
            this.bytes = bytesOfKey.bytes;
            this.offset = bytesOfKey.offset;
            this.length = bytesOfKey.length;
            this.hash = bytesOfKey.hash;
        }

        /**
         * SCD type 1 output is the difference of {@link #initialRow} and {@link #row}, computed at
         * the flush.
         */
        @Override
        public boolean wantsRows() {
            return false;
        }

        @Override
        public void emit(RowData row) {
            throw new IllegalStateException(
                    "SCD type 1 rows are derived from the state at the flush");
        }

        void writeState() {
            if (rowDirty) {
                StateValues.set(rowState, row);
            }
            if (tombstoneDirty) {
                StateValues.set(tombstoneState, tombstone);
            }
        }

        void emitScd1NetChange() {
            if (!rowDirty || (initialRow == null && row == null)) {
                return;
            }
            if (initialRow == null) {
                collect(decodeScd1(row), RowKind.INSERT);
            } else if (row == null) {
                collect(decodeScd1(initialRow), RowKind.DELETE);
            } else {
                view.wrap(initialRow);
                int beforeOff = view.rowOffset();
                view.wrap(row);
                if (!Arrays.equals(
                        initialRow,
                        beforeOff,
                        initialRow.length,
                        row,
                        view.rowOffset(),
                        row.length)) {
                    collect(decodeScd1(initialRow), RowKind.UPDATE_BEFORE);
                    collect(decodeScd1(row), RowKind.UPDATE_AFTER);
                }
            }
        }
    }

    private RowData decodeScd1(byte[] value) {
        view.wrap(value);
        return codecs.decodeRow(value, view.rowOffset(), view.rowLength());
    }

    private void collect(RowData row, RowKind kind) {
        row.setRowKind(kind);
        output.collect(reuse.replace(row));
    }

    /**
     * {@link Scd1Logic.State} over the active key's buffer, loading from keyed state on first use.
     */
    private final class BufferedScd1State implements Scd1Logic.State {
        @Override
        public byte[] row() {
            KeyBuffer b = active;
            if (!b.rowLoaded) {
                b.row = StateValues.get(rowState);
                b.initialRow = b.row;
                b.rowLoaded = true;
            }
            return b.row;
        }

        @Override
        public void setRow(byte[] value) {
            row(); // the row at the last flush must be known before it is replaced
            active.row = value;
            active.rowLoaded = true;
            active.rowDirty = true;
        }

        @Override
        public void clearRow() {
            setRow(null);
        }

        @Override
        public byte[] tombstone() {
            KeyBuffer b = active;
            if (!b.tombstoneLoaded) {
                b.tombstone = StateValues.get(tombstoneState);
                b.tombstoneLoaded = true;
            }
            return b.tombstone;
        }

        @Override
        public void setTombstone(byte[] value) {
            active.tombstone = value;
            active.tombstoneLoaded = true;
            active.tombstoneDirty = true;
        }

        @Override
        public void clearTombstone() {
            setTombstone(null);
        }

        @Override
        public byte[] truncate() {
            return null;
        }
    }

    /** {@link Scd2Logic.Store} over the keyed state of the operator's current key. */
    private final class Scd2Store implements Scd2Logic.Store {
        @Override
        public byte[] head() {
            return StateValues.get(currentState);
        }

        @Override
        public void setHead(byte[] value) {
            StateValues.set(currentState, value);
        }

        @Override
        public Iterable<Map.Entry<String, byte[]>> history() {
            try {
                Iterable<Map.Entry<String, byte[]>> stored = historyState.entries();
                return stored == null ? List.of() : stored;
            } catch (Exception e) {
                throw new IllegalStateException("cannot read SCD2 history state", e);
            }
        }

        @Override
        public void putHistory(String mapKey, byte[] value) {
            try {
                historyState.put(mapKey, value);
            } catch (Exception e) {
                throw new IllegalStateException("cannot write SCD2 history state", e);
            }
        }

        @Override
        public void clearHistory() {
            historyState.clear();
        }
    }
}

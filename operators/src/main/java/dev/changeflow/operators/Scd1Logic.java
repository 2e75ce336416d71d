package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.Scd1RowValue;
import dev.changeflow.state.SequenceValue;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.util.Arrays;

/**
 * What one change record does to one key of an SCD type 1 streaming table (semantics.md A2, A3), as
 * plain logic over a small {@link State} interface (the Flink adapter backs it with keyed state;
 * tests with fields).
 *
 * <p>Input: a source row of {@link AutoCdcSpec#sourceType()}; {@code RowKind.DELETE} deletes the
 * key (other columns may be null), every other kind upserts it. Output ({@link ChangeOutput}):
 * {@code +I} new row, {@code -U} complete previous row then {@code +U} new row, {@code -D} complete
 * previous row. Rules, with the sequence compared on its memcomparable encoding:
 *
 * <ul>
 *   <li>upsert of a key without a row: {@code +I}, unless a tombstone (per key, or the table-wide
 *       truncate tombstone) is higher (late: ignored) or equal (a delete wins over an upsert at the
 *       same sequence: ignored, {@code duplicateSequence});
 *   <li>upsert of a live key: lower sequence → ignored ({@code late}); higher → {@code -U}/{@code
 *       +U}, or nothing when the projected values are identical (A3 Decision: {@code noop}; the
 *       applied sequence still advances, so a late record in between stays ignored); equal sequence
 *       → identical values are an exact duplicate (K7, {@code noop}), different values count {@code
 *       duplicateSequence} and the larger byte-wise encoding of the projected row wins (A2
 *       Decision);
 *   <li>delete of a live key with a sequence ≥ the applied one: {@code -D} with the complete row,
 *       and a tombstone at the delete's sequence (a delete at the same sequence wins, A2);
 *   <li>delete of a key without a row: a tombstone only, never a {@code -D} (A3);
 *   <li>truncate at s ({@link #truncate}): a live row with applied sequence &lt; s gets {@code -D};
 *       s stays as the table-wide tombstone, records with a sequence &lt; s are ignored later,
 *       records at s or above apply.
 * </ul>
 *
 * <p>Decision: with IGNORE NULL UPDATES, a null in a covered column keeps the stored value (nested
 * ROW fields too) before the no-op / tie-break comparisons; a new key stores the nulls. Such flows
 * are exempt from the order-independence property (A2): a late record changes nothing.
 *
 * <p>Unavailable values (A3): a column the record marks unavailable ({@link
 * AutoCdcSpec#UNAVAILABLE_COLUMNS}, the connector's placeholder for an unchanged PostgreSQL TOAST
 * value) keeps the stored value, merged before the no-op / tie-break comparisons like IGNORE NULL
 * UPDATES; a key without a stored row cannot supply it, so such an upsert (one that would otherwise
 * apply) goes to {@link ChangeOutput#quarantine} with {@code UNAVAILABLE_VALUE} and changes
 * nothing.
 *
 * <p>Decision: the tombstone is removed when an upsert re-creates the row (the row's applied
 * sequence then protects the key); the tombstone state is read only when the row state is empty.
 *
 * <p>Not thread-safe; one instance per operator subtask (it reuses its buffers).
 */
@Internal
public final class Scd1Logic {

    /**
     * The keyed state of the current key, as the logic sees it (values are {@code
     * dev.changeflow.state} layouts).
     */
    public interface State {
        /** The {@link Scd1RowValue} of the live row, or null. */
        @Nullable
        byte[] row();

        void setRow(byte[] value);

        void clearRow();

        /** The {@link SequenceValue} tombstone of the key, or null (never set / expired). */
        @Nullable
        byte[] tombstone();

        void setTombstone(byte[] value);

        void clearTombstone();

        /** The table-wide truncate tombstone ({@link SequenceValue}), or null. */
        @Nullable
        byte[] truncate();
    }

    private final ApplyCodecs codecs;
    private final AutoCdcMetrics metrics;
    private final ByteWriter seq = new ByteWriter(32);
    private final ByteWriter row = new ByteWriter();
    private final ByteWriter value = new ByteWriter();
    private final Scd1RowValue view = new Scd1RowValue();

    public Scd1Logic(AutoCdcSpec spec, AutoCdcMetrics metrics) {
        if (spec.scdType() != ScdType.TYPE_1) {
            throw new IllegalArgumentException("Scd1Logic needs an SCD TYPE 1 flow, got " + spec);
        }
        this.codecs = new ApplyCodecs(spec);
        this.metrics = metrics;
    }

    /**
     * Applies one change record (upsert, or delete for {@code RowKind.DELETE}) to the current key.
     */
    public void apply(RowData record, State state, ChangeOutput out) {
        seq.reset();
        codecs.encodeSequence(record, seq);
        if (record.getRowKind() == RowKind.DELETE) {
            delete(state, out);
        } else {
            upsert(record, state, out);
        }
    }

    private int compareToStored(byte[] stored) {
        return Arrays.compareUnsigned(
                seq.buffer(),
                0,
                seq.size(),
                stored,
                view.sequenceOffset(),
                view.sequenceOffset() + view.sequenceLength());
    }

    private void upsert(RowData record, State state, ChangeOutput out) {
        boolean[] unavailable = codecs.unavailable(record);
        row.reset();
        codecs.encodeRow(record, row);
        byte[] current = state.row();
        if (current == null) {
            byte[] truncate = state.truncate();
            if (truncate != null
                    && SequenceValue.compare(seq.buffer(), 0, seq.size(), truncate) < 0) {
                metrics.late();
                return;
            }
            byte[] tombstone = state.tombstone();
            if (tombstone != null) {
                int c = SequenceValue.compare(seq.buffer(), 0, seq.size(), tombstone);
                if (c < 0) {
                    metrics.late();
                    return;
                }
                if (c == 0) {
                    metrics.duplicateSequence();
                    return;
                }
            }
            if (unavailable != null) {
                out.quarantine(
                        record,
                        QuarantineReason.UNAVAILABLE_VALUE,
                        codecs.unavailableText(record, unavailable)
                                + " and the key has no stored row to keep their values from");
                return;
            }
            if (tombstone != null) {
                state.clearTombstone();
            }
            emit(RowKind.INSERT, row.buffer(), 0, row.size(), out);
            store(state);
            metrics.applied();
            return;
        }
        view.wrap(current);
        int cmp = compareToStored(current);
        if (cmp < 0) {
            metrics.late();
            return;
        }
        GenericRowData previous = null;
        if (codecs.ignoreNulls() || unavailable != null) {
            previous = codecs.decodeRow(current, view.rowOffset(), view.rowLength());
            GenericRowData merged = codecs.decodeRow(row.buffer(), 0, row.size());
            if (unavailable != null) {
                codecs.mergeUnavailable(merged, previous, unavailable);
            }
            if (codecs.ignoreNulls()) {
                codecs.mergeIgnoredNulls(merged, previous);
            }
            row.reset();
            codecs.rowCodec.encode(merged, row);
        }
        int rowCmp =
                Arrays.compareUnsigned(
                        row.buffer(), 0, row.size(), current, view.rowOffset(), current.length);
        if (rowCmp == 0) {
            if (cmp > 0) {
                store(state); // identical values: the applied sequence advances, nothing is emitted
            }
            metrics.noop();
            return;
        }
        if (cmp == 0) {
            metrics.duplicateSequence();
            if (rowCmp < 0) {
                return;
            }
        }
        if (out.wantsRows()) {
            if (previous == null) {
                previous = codecs.decodeRow(current, view.rowOffset(), view.rowLength());
            }
            previous.setRowKind(RowKind.UPDATE_BEFORE);
            out.emit(previous);
            emit(RowKind.UPDATE_AFTER, row.buffer(), 0, row.size(), out);
        }
        store(state);
        metrics.applied();
    }

    private void delete(State state, ChangeOutput out) {
        byte[] current = state.row();
        if (current != null) {
            view.wrap(current);
            int cmp = compareToStored(current);
            if (cmp < 0) {
                metrics.late();
                return;
            }
            if (cmp == 0) {
                metrics.duplicateSequence();
            }
            emit(RowKind.DELETE, current, view.rowOffset(), view.rowLength(), out);
            state.clearRow();
            state.setTombstone(SequenceValue.encode(seq.buffer(), 0, seq.size()));
            metrics.applied();
            metrics.tombstone();
            return;
        }
        byte[] truncate = state.truncate();
        if (truncate != null && SequenceValue.compare(seq.buffer(), 0, seq.size(), truncate) <= 0) {
            metrics.late();
            return;
        }
        byte[] tombstone = state.tombstone();
        if (tombstone != null) {
            int c = SequenceValue.compare(seq.buffer(), 0, seq.size(), tombstone);
            if (c <= 0) {
                if (c < 0) {
                    metrics.late();
                } else {
                    metrics.noop();
                }
                return;
            }
        }
        state.setTombstone(SequenceValue.encode(seq.buffer(), 0, seq.size()));
        metrics.applied();
        metrics.tombstone();
    }

    /**
     * A truncate at the sequence held by {@code truncateValue} ({@link SequenceValue}) reaching one
     * key's row (A3): emits {@code -D} with the complete row when its applied sequence is lower.
     *
     * @return whether the caller must clear the key's row state
     */
    public boolean truncate(byte[] rowValue, byte[] truncateValue, ChangeOutput out) {
        view.wrap(rowValue);
        int off = SequenceValue.sequenceOffset(truncateValue);
        int c =
                Arrays.compareUnsigned(
                        rowValue,
                        view.sequenceOffset(),
                        view.sequenceOffset() + view.sequenceLength(),
                        truncateValue,
                        off,
                        truncateValue.length);
        if (c >= 0) {
            return false;
        }
        emit(RowKind.DELETE, rowValue, view.rowOffset(), view.rowLength(), out);
        return true;
    }

    /**
     * The table-wide truncate tombstone after a truncate record: the higher of {@code current}
     * (nullable) and the record's sequence (a {@link SequenceValue}).
     */
    public byte[] truncateTombstone(@Nullable byte[] current, RowData truncateRecord) {
        seq.reset();
        codecs.encodeSequence(truncateRecord, seq);
        if (current != null && SequenceValue.compare(seq.buffer(), 0, seq.size(), current) <= 0) {
            return current;
        }
        return SequenceValue.encode(seq.buffer(), 0, seq.size());
    }

    private void store(State state) {
        value.reset();
        Scd1RowValue.write(value, seq.buffer(), 0, seq.size(), row.buffer(), 0, row.size());
        state.setRow(value.toByteArray());
    }

    private void emit(RowKind kind, byte[] bytes, int off, int len, ChangeOutput out) {
        if (!out.wantsRows()) {
            return;
        }
        GenericRowData r = codecs.decodeRow(bytes, off, len);
        r.setRowKind(kind);
        out.emit(r);
    }
}

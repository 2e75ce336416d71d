package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.state.ByteReader;
import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.RowCodec;
import dev.changeflow.state.SequenceCodec;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.OutputTag;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The keyed REPLACE USING operator (semantics.md S5), keyed by the REPLACE USING columns ({@link
 * ReplaceUsingKeySelector}: a null key value matches another null).
 *
 * <p>Input: rows of {@link ReplaceUsingSpec#rowType()} in any order (the row kind is not read:
 * every row is an incoming row of a partial snapshot). Per key value the operator keeps the applied
 * sequence and the set of rows the target holds for that key. For a row with sequence s:
 *
 * <ul>
 *   <li>no rows yet for the key: {@code +I} row; s becomes the applied sequence;
 *   <li>s greater than the applied sequence: {@code -D} for every stored row of the key (complete
 *       rows), then {@code +I} row; the key's set is now this row alone ({@code replaced});
 *   <li>s equal: the row joins the key's set with {@code +I} ({@code added}), unless an identical
 *       row is already in it (a replay: nothing, {@code duplicate}) — so ties keep every distinct
 *       tied row, and replaying input changes nothing;
 *   <li>s lower: nothing ({@code late}).
 * </ul>
 *
 * Whatever the arrival order, each key ends with the distinct rows of its highest sequence, which
 * is the table the rows give in sequence order. Decision: the rows of a key are a set — two
 * identical rows (same values in every column, sequence included) are stored once; this is what
 * makes a replay change nothing, and it is what the Iceberg write needs (it identifies a row by all
 * its columns).
 *
 * <p>A row with a null SEQUENCE BY column changes nothing: it goes to the side output {@link
 * #quarantineTag} ({@link QuarantineRecords#ROW_TYPE}, reason {@code NULL_SEQUENCE}, {@code source}
 * {@code "flow <name>"}, {@code raw} the row as text), or fails the job with {@link
 * IllegalArgumentException} naming the row when {@link ReplaceUsingSpec#failOnInvalid()}. This is a
 * safety net: an ingest job's decoder already sets such records aside with their file and line or
 * Kafka offset (semantics.md S5); rows that reach the flow undecoded (a change feed source, S7) are
 * checked here.
 *
 * <p>State: per key one {@code byte[]} under {@link #STATE_NAME}: a format byte (1), the sequence
 * (length-prefixed memcomparable {@link SequenceCodec} encoding), the number of rows, then each row
 * length-prefixed in {@link RowCodec}'s encoding. RocksDB reads and writes one value per record.
 * Counters: {@code replaceUsingInserted}, {@code replaceUsingReplaced}, {@code replaceUsingAdded},
 * {@code replaceUsingDuplicate}, {@code replaceUsingLate}, {@code quarantined}.
 */
@Internal
public final class ReplaceUsingOperator extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    /**
     * The counters of rows that changed the table (a new key, a higher sequence, an equal sequence
     * with a new row): their sum is the flow's "applied", as AUTO CDC's {@code applied}.
     */
    public static final java.util.List<String> APPLIED_COUNTERS =
            java.util.List.of("replaceUsingInserted", "replaceUsingReplaced", "replaceUsingAdded");

    /** The counter of rows older than the sequence applied for their key (nothing changes). */
    public static final String LATE_COUNTER = "replaceUsingLate";

    /** The keyed state's name; part of savepoint compatibility: never rename it. */
    public static final String STATE_NAME = "replace-using-key";

    private static final int FORMAT = 1;

    private final ReplaceUsingSpec spec;

    private transient ValueState<byte[]> keyState;
    private transient SequenceCodec sequences;
    private transient RowCodec rows;
    private transient int[] sequencePositions;
    private transient ByteWriter seq;
    private transient ByteWriter value;
    private transient StreamRecord<RowData> reuse;
    private transient RowData.FieldGetter[] getters;
    private transient Counter inserted;
    private transient Counter replaced;
    private transient Counter added;
    private transient Counter duplicate;
    private transient Counter late;
    private transient Counter quarantined;

    public ReplaceUsingOperator(ReplaceUsingSpec spec) {
        this.spec = spec;
    }

    /** The descriptor of the per-key state. */
    public static ValueStateDescriptor<byte[]> stateDescriptor() {
        return new ValueStateDescriptor<>(STATE_NAME, BytePrimitiveArraySerializer.INSTANCE);
    }

    /** The side output of rows set aside (null sequence). */
    public static OutputTag<RowData> quarantineTag(ReplaceUsingSpec spec) {
        return new OutputTag<>(
                "replace-using-quarantine-" + spec.name(),
                org.apache.flink.table.runtime.typeutils.InternalTypeInfo.of(
                        QuarantineRecords.ROW_TYPE));
    }

    @Override
    public void open() throws Exception {
        super.open();
        keyState = getRuntimeContext().getState(stateDescriptor());
        sequences = new SequenceCodec(spec.sequenceType());
        rows = new RowCodec(spec.rowType());
        sequencePositions = spec.sequenceIndexes();
        seq = new ByteWriter(32);
        value = new ByteWriter();
        reuse = new StreamRecord<>(null);
        getters = new RowData.FieldGetter[spec.rowType().getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(spec.rowType().getTypeAt(i), i);
        }
        inserted = getMetricGroup().counter(APPLIED_COUNTERS.get(0));
        replaced = getMetricGroup().counter(APPLIED_COUNTERS.get(1));
        added = getMetricGroup().counter(APPLIED_COUNTERS.get(2));
        duplicate = getMetricGroup().counter("replaceUsingDuplicate");
        late = getMetricGroup().counter(LATE_COUNTER);
        quarantined = getMetricGroup().counter(QuarantineRows.COUNTER);
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        RowData row = element.getValue();
        for (int p : sequencePositions) {
            if (row.isNullAt(p)) {
                nullSequence(row, p);
                return;
            }
        }
        seq.reset();
        sequences.encode(row, sequencePositions, seq);
        byte[] encoded = rows.encode(row);
        byte[] stored = keyState.value();
        if (stored == null) {
            keyState.update(state(List.of(encoded)));
            inserted.inc();
            emitInsert(row);
            return;
        }
        ByteReader in = new ByteReader(stored);
        int format = in.readUnsignedByte();
        if (format != FORMAT) {
            throw new IllegalStateException(
                    "flow '"
                            + spec.name()
                            + "': REPLACE USING state has the unknown format "
                            + format
                            + " (written by a newer changeflow?)");
        }
        int seqLen = in.readVarInt();
        int seqOff = in.position();
        in.skip(seqLen);
        int cmp =
                Arrays.compareUnsigned(
                        seq.buffer(), 0, seq.size(), stored, seqOff, seqOff + seqLen);
        if (cmp < 0) {
            late.inc();
            return;
        }
        int n = in.readVarInt();
        List<byte[]> current = new ArrayList<>(n + 1);
        for (int i = 0; i < n; i++) {
            current.add(in.readBytes(in.readVarInt()));
        }
        if (cmp == 0) {
            for (byte[] r : current) {
                if (Arrays.equals(r, encoded)) {
                    duplicate.inc();
                    return;
                }
            }
            current.add(encoded);
            keyState.update(state(current));
            added.inc();
            emitInsert(row);
            return;
        }
        for (byte[] r : current) {
            GenericRowData old = rows.decode(r);
            old.setRowKind(RowKind.DELETE);
            output.collect(reuse.replace(old));
        }
        keyState.update(state(List.of(encoded)));
        replaced.inc();
        emitInsert(row);
    }

    private byte[] state(List<byte[]> set) {
        value.reset();
        value.writeByte(FORMAT);
        value.writeLengthPrefixed(seq.buffer(), 0, seq.size());
        value.writeVarInt(set.size());
        for (byte[] r : set) {
            value.writeLengthPrefixed(r, 0, r.length);
        }
        return value.toByteArray();
    }

    private void emitInsert(RowData row) {
        GenericRowData copy = copy(row);
        copy.setRowKind(RowKind.INSERT);
        output.collect(reuse.replace(copy));
    }

    private GenericRowData copy(RowData row) {
        GenericRowData copy = new GenericRowData(getters.length);
        for (int i = 0; i < getters.length; i++) {
            copy.setField(i, getters[i].getFieldOrNull(row));
        }
        return copy;
    }

    private void nullSequence(RowData row, int position) {
        String column = spec.rowType().getFieldNames().get(position);
        String detail =
                "SEQUENCE BY column '"
                        + column
                        + "' is null; REPLACE USING needs a sequence to order a key's partial"
                        + " snapshots (semantics.md S5)";
        GenericRowData copy = copy(row);
        if (spec.failOnInvalid()) {
            throw new IllegalArgumentException(
                    "NULL_SEQUENCE: flow '" + spec.name() + "': " + detail + ": " + copy);
        }
        quarantined.inc();
        output.collect(
                quarantineTag(spec),
                new StreamRecord<>(
                        QuarantineRecords.of(
                                spec.name(),
                                "flow " + spec.name(),
                                null,
                                -1L,
                                copy.toString().getBytes(StandardCharsets.UTF_8),
                                QuarantineReason.NULL_SEQUENCE,
                                detail,
                                System.currentTimeMillis())));
    }
}

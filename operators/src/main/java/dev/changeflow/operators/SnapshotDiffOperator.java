package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

/**
 * The keyed diff of AUTO CDC FROM SNAPSHOT (semantics.md A6), keyed by KEYS, between {@link
 * SnapshotSequencer} and the AUTO CDC apply operator: turns whole snapshots into change records.
 *
 * <p>Input: snapshot rows ({@link AutoCdcSpec#sourceType()}, version column set), and after the
 * last row of snapshot v the watermark v (the sequencer's end of snapshot; a watermark reaches
 * every subtask, after every row before it). Output: change records of the same type, for the apply
 * operator with SEQUENCE BY = the version column: {@code +I} row of a new key, {@code +U} row of a
 * key whose values changed (nothing for an unchanged key), and at watermark v a {@code -D} record
 * (KEYS and version v, all else null) for every key last seen before v. Watermarks are forwarded
 * after the deletes they cause; {@code Long.MAX_VALUE} (end of input) deletes nothing.
 *
 * <p>State: per key one {@code byte[]} value ({@code dev.changeflow.state.SnapshotKeyValue}, 25
 * bytes: last seen version and 128-bit hash of the values) under {@link #STATE_NAME}; no copy of
 * the table. Absent keys are found by one pass over this operator's own keys ({@code
 * applyToAllKeys}) per snapshot, never by reading the target.
 *
 * <p>Errors: {@code DUPLICATE_KEY_VIOLATION} ({@link AutoCdcException}) when a key appears twice in
 * one snapshot, naming the key, the version and, with a {@link SnapshotOrigin}, the snapshot file.
 * Counters: {@code snapshotInserts}, {@code snapshotUpdates}, {@code snapshotUnchanged}, {@code
 * snapshotDeletes}, {@code snapshotLateRows} (rows older than the key's last snapshot: ignored).
 */
@Internal
public final class SnapshotDiffOperator extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    /** The keyed state's name; part of savepoint compatibility: never rename it. */
    public static final String STATE_NAME = "snapshot-diff-key";

    private final AutoCdcSpec spec;
    private final SnapshotVersions versions;
    @Nullable private final SnapshotOrigin origin;

    private transient SnapshotDiffLogic logic;
    private transient ValueState<byte[]> keyState;
    private transient StreamRecord<RowData> reuse;
    private transient RowData.FieldGetter[] keyGetters;
    private transient int[] keyPositions;
    private transient long lastEnded;
    private transient Counter inserts;
    private transient Counter updates;
    private transient Counter unchanged;
    private transient Counter deletes;
    private transient Counter late;

    /** A diff whose messages name versions only (no {@link SnapshotOrigin}). */
    public SnapshotDiffOperator(AutoCdcSpec spec) {
        this(spec, null);
    }

    /**
     * @param origin names the input of a version in messages (the snapshot file), or null
     */
    public SnapshotDiffOperator(AutoCdcSpec spec, @Nullable SnapshotOrigin origin) {
        this.spec = spec;
        this.versions = new SnapshotVersions(spec);
        this.origin = origin;
    }

    /** The descriptor of the per-key state. */
    public static ValueStateDescriptor<byte[]> stateDescriptor() {
        return new ValueStateDescriptor<>(STATE_NAME, BytePrimitiveArraySerializer.INSTANCE);
    }

    @Override
    public void open() throws Exception {
        super.open();
        logic = new SnapshotDiffLogic(spec);
        keyState = getRuntimeContext().getState(stateDescriptor());
        reuse = new StreamRecord<>(null);
        RowType keyType = new AutoCdcKeySelector(spec).keyType();
        keyPositions = spec.keyIndexesInSource();
        keyGetters = new RowData.FieldGetter[keyPositions.length];
        for (int i = 0; i < keyGetters.length; i++) {
            keyGetters[i] = RowData.createFieldGetter(keyType.getTypeAt(i), i);
        }
        lastEnded = Long.MIN_VALUE;
        inserts = getMetricGroup().counter("snapshotInserts");
        updates = getMetricGroup().counter("snapshotUpdates");
        unchanged = getMetricGroup().counter("snapshotUnchanged");
        deletes = getMetricGroup().counter("snapshotDeletes");
        late = getMetricGroup().counter("snapshotLateRows");
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        RowData row = element.getValue();
        long version = versions.versionOf(row);
        switch (logic.apply(keyState.value(), version, row)) {
            case INSERT:
                keyState.update(logic.nextValue());
                inserts.inc();
                emit(row, RowKind.INSERT);
                break;
            case UPDATE:
                keyState.update(logic.nextValue());
                updates.inc();
                emit(row, RowKind.UPDATE_AFTER);
                break;
            case UNCHANGED:
                keyState.update(logic.nextValue());
                unchanged.inc();
                break;
            case LATE:
                late.inc();
                break;
            case DUPLICATE:
            default:
                throw new AutoCdcException(
                        AutoCdcException.Code.DUPLICATE_KEY_VIOLATION,
                        "flow '"
                                + spec.name()
                                + "': key "
                                + keyText((RowData) getCurrentKey())
                                + " appears more than once in "
                                + SnapshotOrigin.phrase(origin, versions, version)
                                + "; a snapshot holds one row per key (KEYS "
                                + spec.keys()
                                + ")");
        }
    }

    private void emit(RowData row, RowKind kind) {
        row.setRowKind(kind);
        output.collect(reuse.replace(row));
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        long ended = mark.getTimestamp();
        if (ended != Long.MAX_VALUE && ended > lastEnded) {
            deleteAbsentKeys(ended);
            lastEnded = ended;
        }
        super.processWatermark(mark);
    }

    /** Emits a delete at {@code ended} for every key last seen before it, and forgets the key. */
    private void deleteAbsentKeys(long ended) throws Exception {
        Object version = versions.valueOf(ended);
        this.<RowData>getKeyedStateBackend()
                .applyToAllKeys(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        stateDescriptor(),
                        (RowData key, ValueState<byte[]> state) -> {
                            byte[] stored = state.value();
                            if (stored != null && SnapshotDiffLogic.absent(stored, ended)) {
                                state.clear();
                                deletes.inc();
                                output.collect(reuse.replace(deleteOf(key, version)));
                            }
                        });
    }

    private RowData deleteOf(RowData key, Object version) {
        GenericRowData d = new GenericRowData(RowKind.DELETE, spec.sourceType().getFieldCount());
        for (int i = 0; i < keyPositions.length; i++) {
            d.setField(keyPositions[i], keyGetters[i].getFieldOrNull(key));
        }
        d.setField(versions.index(), version);
        return d;
    }

    private String keyText(RowData key) {
        StringBuilder b = new StringBuilder("(");
        for (int i = 0; i < keyGetters.length; i++) {
            if (i > 0) {
                b.append(", ");
            }
            b.append(spec.keys().get(i)).append('=').append(keyGetters[i].getFieldOrNull(key));
        }
        return b.append(')').toString();
    }
}

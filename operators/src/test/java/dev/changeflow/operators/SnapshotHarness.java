package dev.changeflow.operators;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;

/**
 * AUTO CDC FROM SNAPSHOT (A6) in Flink's operator test harnesses: {@link SnapshotSequencer} →
 * {@link SnapshotDiffOperator} → {@link AutoCdcApplyOperator} (through {@link OperatorHarness}),
 * each output handed to the next in order (records and watermarks), with snapshot → restore of all
 * three and the materialized target table.
 */
final class SnapshotHarness implements AutoCloseable {
    private final AutoCdcSpec spec;
    private final SnapshotVersions versions;
    private final boolean rocksDb;
    @Nullable private final SnapshotOrigin origin;
    private OneInputStreamOperatorTestHarness<RowData, RowData> sequencer;
    private KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> diff;
    final OperatorHarness apply;
    private final List<String> changes = new ArrayList<>();
    private long checkpointId;

    SnapshotHarness(AutoCdcSpec spec, boolean rocksDb) throws Exception {
        this(spec, rocksDb, null);
    }

    /** With {@code origin} naming versions in the operators' messages. */
    SnapshotHarness(AutoCdcSpec spec, boolean rocksDb, @Nullable SnapshotOrigin origin)
            throws Exception {
        this.spec = spec;
        this.origin = origin;
        this.versions = new SnapshotVersions(spec);
        this.rocksDb = rocksDb;
        this.apply = new OperatorHarness(spec, rocksDb, false);
        start(null, null);
    }

    private void start(OperatorSubtaskState sequencerState, OperatorSubtaskState diffState)
            throws Exception {
        sequencer = new OneInputStreamOperatorTestHarness<>(new SnapshotSequencer(spec, origin));
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        diff =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new SnapshotDiffOperator(spec, origin),
                        keys,
                        InternalTypeInfo.of(keys.keyType()));
        StateBackend backend =
                rocksDb ? new EmbeddedRocksDBStateBackend(false) : new HashMapStateBackend();
        diff.setStateBackend(backend);
        if (sequencerState != null) {
            sequencer.initializeState(sequencerState);
            diff.initializeState(diffState);
        }
        sequencer.open();
        diff.open();
    }

    /**
     * Snapshot {@code version}: each row (without the version column, in source column order), then
     * the end marker.
     */
    SnapshotHarness snapshot(Object version, Object[]... rows) throws Exception {
        for (Object[] values : rows) {
            row(version, values);
        }
        return end(version);
    }

    /** One row of snapshot {@code version} (no end marker). */
    SnapshotHarness row(Object version, Object... values) throws Exception {
        GenericRowData r = new GenericRowData(spec.sourceType().getFieldCount());
        int v = 0;
        for (int i = 0; i < r.getArity(); i++) {
            r.setField(i, i == versions.index() ? version : field(values[v++]));
        }
        sequencer.processElement(new StreamRecord<>(r));
        pump();
        return this;
    }

    /** The end marker of snapshot {@code version}. */
    SnapshotHarness end(Object version) throws Exception {
        sequencer.processElement(new StreamRecord<>(versions.endOf(version)));
        pump();
        return this;
    }

    /** Hands every output of the sequencer to the diff, and every output of the diff onwards. */
    private void pump() throws Exception {
        Queue<Object> out = sequencer.getOutput();
        for (Object o = out.poll(); o != null; o = out.poll()) {
            if (o instanceof Watermark) {
                diff.processWatermark((Watermark) o);
            } else {
                @SuppressWarnings("unchecked")
                StreamRecord<RowData> r = (StreamRecord<RowData>) o;
                diff.processElement(new StreamRecord<>(r.getValue()));
            }
            Queue<Object> changed = diff.getOutput();
            for (Object c = changed.poll(); c != null; c = changed.poll()) {
                if (c instanceof StreamRecord) {
                    RowData row = (RowData) ((StreamRecord<?>) c).getValue();
                    changes.add(OperatorHarness.toGeneric(row, spec.sourceType()).toString());
                    apply.apply(row);
                }
            }
        }
    }

    /** The change records the diff emitted since the last call ({@code +I(...)}, ...). */
    List<String> takeChanges() {
        List<String> r = new ArrayList<>(changes);
        changes.clear();
        return r;
    }

    /** The target rows (materialized from the apply operator's output). */
    List<String> table() {
        return apply.table.snapshot();
    }

    /** Checkpoint all three operators, close them, and restore fresh instances. */
    SnapshotHarness restart() throws Exception {
        checkpointId++;
        OperatorSubtaskState s = sequencer.snapshot(checkpointId, checkpointId);
        OperatorSubtaskState d = diff.snapshot(checkpointId, checkpointId);
        sequencer.close();
        diff.close();
        start(s, d);
        apply.restart();
        return this;
    }

    /** Snapshots the sequencer skipped since the last restart (A6: older than the applied one). */
    long skippedSnapshots() {
        return ((SnapshotSequencer) sequencer.getOperator()).skippedSnapshots();
    }

    /** The sequencer's gauge {@link SnapshotSequencer#SKIPPED_GAUGE} (since the last restart). */
    String skippedSnapshotNames() {
        return ((SnapshotSequencer) sequencer.getOperator()).skippedSnapshotNames();
    }

    private static Object field(Object value) {
        return value instanceof String ? StringData.fromString((String) value) : value;
    }

    @Override
    public void close() throws Exception {
        sequencer.close();
        diff.close();
        apply.close();
    }
}

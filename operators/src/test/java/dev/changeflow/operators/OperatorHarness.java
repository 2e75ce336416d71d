package dev.changeflow.operators;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The AUTO CDC Flink operators in Flink's operator test harnesses, with snapshot → restore and a
 * materialized target table. {@code rocksDb} selects the embedded RocksDB backend (else heap).
 * {@link AutoCdcApplyOperator} is flushed after every record (its per-record changelog) unless
 * {@link #batched()} is called: then only {@link #barrier()}, {@link #restart()} and {@link
 * #endInput()} flush.
 */
final class OperatorHarness implements AutoCloseable {
    private AutoCdcSpec spec;
    private final boolean rocksDb;
    private final boolean withTruncates;
    private AbstractStreamOperatorTestHarness<RowData> harness;
    private long checkpointId;
    private long processingTime;
    final TestFlows.Materialized table;
    private final List<String> out = new ArrayList<>();
    private final List<String> quarantined = new ArrayList<>();
    private int consumed;
    private boolean batched;

    OperatorHarness(AutoCdcSpec spec, boolean rocksDb, boolean withTruncates) throws Exception {
        this.spec = spec;
        this.rocksDb = rocksDb;
        this.withTruncates = withTruncates;
        this.table = new TestFlows.Materialized(spec);
        start(null);
    }

    private void start(OperatorSubtaskState restore) throws Exception {
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        InternalTypeInfo<RowData> keyType = InternalTypeInfo.of(keys.keyType());
        if (withTruncates) {
            harness =
                    new KeyedBroadcastOperatorTestHarness<>(
                            new Scd1TruncateOperator(spec), keys, keyType, 1, 1, 0);
        } else {
            harness =
                    new KeyedOneInputStreamOperatorTestHarness<>(
                            new AutoCdcApplyOperator(spec), keys, keyType);
        }
        // non-incremental: the harness cannot restore incremental snapshots (placeholder handles)
        StateBackend backend =
                rocksDb ? new EmbeddedRocksDBStateBackend(false) : new HashMapStateBackend();
        harness.setStateBackend(backend);
        harness.setStateTtlProcessingTime(processingTime);
        if (restore != null) {
            harness.initializeState(restore);
        }
        harness.open();
        consumed = 0;
    }

    @SuppressWarnings("unchecked")
    OperatorHarness apply(RowData... records) throws Exception {
        for (RowData r : records) {
            if (harness instanceof KeyedBroadcastOperatorTestHarness) {
                ((KeyedBroadcastOperatorTestHarness<RowData, RowData, RowData, RowData>) harness)
                        .processElement(r, 0L);
            } else {
                ((KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData>) harness)
                        .processElement(r, 0L);
                if (!batched) {
                    harness.prepareSnapshotPreBarrier(checkpointId + 1);
                }
            }
        }
        drain();
        return this;
    }

    /**
     * From now on the apply operator flushes only at barriers, restarts, end of input (or its key
     * limit).
     */
    OperatorHarness batched() {
        batched = true;
        return this;
    }

    /** A checkpoint barrier arrives: the operator flushes (no snapshot is taken). */
    OperatorHarness barrier() throws Exception {
        harness.prepareSnapshotPreBarrier(++checkpointId);
        drain();
        return this;
    }

    /** The input ends. */
    @SuppressWarnings("unchecked")
    OperatorHarness endInput() throws Exception {
        ((KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData>) harness).endInput();
        drain();
        return this;
    }

    @SuppressWarnings("unchecked")
    OperatorHarness truncate(RowData record) throws Exception {
        ((KeyedBroadcastOperatorTestHarness<RowData, RowData, RowData, RowData>) harness)
                .processBroadcastElement(record, 0L);
        drain();
        return this;
    }

    /** Snapshot, close, and restore into a fresh operator instance. */
    OperatorHarness restart() throws Exception {
        harness.prepareSnapshotPreBarrier(++checkpointId);
        drain();
        OperatorSubtaskState snapshot = harness.snapshot(checkpointId, checkpointId);
        harness.close();
        start(snapshot);
        return this;
    }

    /**
     * Snapshot, close, and restore into a fresh operator instance of {@code evolved} (a flow whose
     * columns changed, A7): the target table is kept.
     */
    OperatorHarness restartWith(AutoCdcSpec evolved) throws Exception {
        harness.prepareSnapshotPreBarrier(++checkpointId);
        drain();
        OperatorSubtaskState snapshot = harness.snapshot(checkpointId, checkpointId);
        harness.close();
        spec = evolved;
        start(snapshot);
        return this;
    }

    /**
     * As {@link #restartWith}, keeping only the keyed state of the snapshot: what a release before
     * the row-type record (A7 item 4) left.
     */
    OperatorHarness restartFromEarlierReleaseWith(AutoCdcSpec evolved) throws Exception {
        harness.prepareSnapshotPreBarrier(++checkpointId);
        drain();
        OperatorSubtaskState snapshot = harness.snapshot(checkpointId, checkpointId);
        harness.close();
        spec = evolved;
        start(
                OperatorSubtaskState.builder()
                        .setManagedKeyedState(snapshot.getManagedKeyedState())
                        .build());
        return this;
    }

    /** Sets the processing time the tombstone TTL sees (milliseconds). */
    OperatorHarness processingTime(long millis) {
        processingTime = millis;
        harness.setStateTtlProcessingTime(millis);
        return this;
    }

    private void drain() {
        List<RowData> values = harness.extractOutputValues();
        for (int i = consumed; i < values.size(); i++) {
            GenericRowData g = toGeneric(values.get(i), spec.targetType());
            out.add(g.toString());
            table.accept(g);
        }
        consumed = values.size();
        drainQuarantine();
    }

    static GenericRowData toGeneric(RowData row, RowType type) {
        if (row instanceof GenericRowData) {
            return (GenericRowData) row;
        }
        GenericRowData g = new GenericRowData(row.getRowKind(), type.getFieldCount());
        for (int i = 0; i < g.getArity(); i++) {
            g.setField(i, RowData.createFieldGetter(type.getTypeAt(i), i).getFieldOrNull(row));
        }
        return g;
    }

    List<String> take() {
        drain();
        List<String> r = new ArrayList<>(out);
        out.clear();
        return r;
    }

    /**
     * The quarantine rows of the operator's side output so far (across restarts), as {@code REASON:
     * detail | raw}; flow, source and offset are checked here (the flow's name, {@code "flow
     * <name>"}, -1).
     */
    List<String> quarantined() {
        drain();
        return new ArrayList<>(quarantined);
    }

    private void drainQuarantine() {
        var q = harness.getSideOutput(AutoCdcOperators.quarantineTag(spec));
        if (q == null) {
            return;
        }
        for (var r = q.poll(); r != null; r = q.poll()) {
            RowData row = r.getValue();
            if (!row.getString(0).toString().equals(spec.name())
                    || !row.getString(1).toString().equals("flow " + spec.name())
                    || !row.isNullAt(2)
                    || row.getLong(3) != -1L) {
                throw new AssertionError("unexpected quarantine row header: " + row);
            }
            quarantined.add(
                    row.getString(5)
                            + ": "
                            + row.getString(6)
                            + " | "
                            + new String(row.getBinary(4), StandardCharsets.UTF_8));
        }
    }

    AbstractStreamOperatorTestHarness<RowData> harness() {
        return harness;
    }

    @Override
    public void close() throws Exception {
        harness.close();
    }
}

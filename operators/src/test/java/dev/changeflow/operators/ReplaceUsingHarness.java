package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.RowKind;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * {@link ReplaceUsingOperator} in Flink's keyed operator test harness, with snapshot → restore and
 * the materialized target table: a multiset of rows as text, where every {@code -D} must remove a
 * row the table holds (else the test fails: the Iceberg write would delete nothing).
 */
final class ReplaceUsingHarness implements AutoCloseable {
    private final ReplaceUsingSpec spec;
    private final boolean rocksDb;
    private KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h;
    private final Map<String, Integer> table = new TreeMap<>();
    private final List<String> changes = new ArrayList<>();
    private final List<String> quarantine = new ArrayList<>();
    private long checkpoint;

    ReplaceUsingHarness(ReplaceUsingSpec spec, boolean rocksDb) throws Exception {
        this.spec = spec;
        this.rocksDb = rocksDb;
        start(null);
    }

    private void start(OperatorSubtaskState state) throws Exception {
        ReplaceUsingKeySelector keys = new ReplaceUsingKeySelector(spec);
        h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new ReplaceUsingOperator(spec), keys, InternalTypeInfo.of(keys.keyType()));
        h.setStateBackend(
                rocksDb ? new EmbeddedRocksDBStateBackend(false) : new HashMapStateBackend());
        if (state != null) {
            h.initializeState(state);
        }
        h.open();
    }

    /** A row of strings / longs / nulls in column order (Strings become StringData). */
    static GenericRowData row(Object... values) {
        GenericRowData r = new GenericRowData(values.length);
        for (int i = 0; i < values.length; i++) {
            Object v = values[i];
            r.setField(i, v instanceof String ? StringData.fromString((String) v) : v);
        }
        return r;
    }

    ReplaceUsingHarness send(Object[]... rows) throws Exception {
        for (Object[] values : rows) {
            h.processElement(new StreamRecord<>(row(values)));
        }
        drain();
        return this;
    }

    void sendRow(RowData r) throws Exception {
        h.processElement(new StreamRecord<>(r));
        drain();
    }

    /** Snapshot, close, and restore a fresh operator from the snapshot. */
    ReplaceUsingHarness restart() throws Exception {
        OperatorSubtaskState state = h.snapshot(++checkpoint, checkpoint);
        h.close();
        start(state);
        return this;
    }

    private void drain() {
        for (Object o : h.getOutput()) {
            if (!(o instanceof StreamRecord)) {
                continue;
            }
            RowData r = (RowData) ((StreamRecord<?>) o).getValue();
            String text = text(r);
            changes.add(r.getRowKind().shortString() + text);
            if (r.getRowKind() == RowKind.INSERT) {
                table.merge(text, 1, Integer::sum);
            } else if (r.getRowKind() == RowKind.DELETE) {
                Integer n = table.get(text);
                if (n == null) {
                    throw new AssertionError("-D of a row the table does not hold: " + text);
                }
                if (n == 1) {
                    table.remove(text);
                } else {
                    table.put(text, n - 1);
                }
            } else {
                throw new AssertionError("unexpected row kind " + r);
            }
        }
        h.getOutput().clear();
        if (h.getSideOutput(ReplaceUsingOperator.quarantineTag(spec)) != null) {
            for (StreamRecord<RowData> q :
                    h.getSideOutput(ReplaceUsingOperator.quarantineTag(spec))) {
                RowData r = q.getValue();
                quarantine.add(
                        r.getString(QuarantineRecords.ROW_TYPE.getFieldIndex("reason"))
                                + " "
                                + new String(
                                        r.getBinary(
                                                QuarantineRecords.ROW_TYPE.getFieldIndex("raw"))));
            }
            h.getSideOutput(ReplaceUsingOperator.quarantineTag(spec)).clear();
        }
    }

    private String text(RowData r) {
        StringBuilder b = new StringBuilder("(");
        for (int i = 0; i < spec.rowType().getFieldCount(); i++) {
            if (i > 0) {
                b.append(",");
            }
            Object v = RowData.createFieldGetter(spec.rowType().getTypeAt(i), i).getFieldOrNull(r);
            b.append(Objects.toString(v));
        }
        return b.append(")").toString();
    }

    /** The target table's rows, sorted, each repeated by its count. */
    List<String> table() {
        List<String> out = new ArrayList<>();
        table.forEach(
                (k, n) -> {
                    for (int i = 0; i < n; i++) {
                        out.add(k);
                    }
                });
        return out;
    }

    /** The changes emitted so far ({@code +I(..)}, {@code -D(..)}), in order; then forgets them. */
    List<String> takeChanges() {
        List<String> out = new ArrayList<>(changes);
        changes.clear();
        return out;
    }

    List<String> quarantine() {
        return quarantine;
    }

    @Override
    public void close() throws Exception {
        h.close();
    }
}

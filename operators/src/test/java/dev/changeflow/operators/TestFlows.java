package dev.changeflow.operators;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Shared fixtures: a Debezium-shaped source, row builders, in-memory state and a table
 * materializer.
 */
final class TestFlows {
    /**
     * id BIGINT NOT NULL, name STRING, v INT, _source_lsn BIGINT, _op STRING (the last two are
     * metadata).
     */
    static final RowType SOURCE =
            RowType.of(
                    new LogicalType[] {
                        new BigIntType(false),
                        VarCharType.STRING_TYPE,
                        new IntType(),
                        new BigIntType(),
                        VarCharType.STRING_TYPE
                    },
                    new String[] {"id", "name", "v", "_source_lsn", "_op"});

    static final List<String> METADATA = List.of("_source_lsn", "_op");

    private TestFlows() {}

    static AutoCdcSpec.Builder scd1() {
        return AutoCdcSpec.builder("t", SOURCE)
                .metadataColumns(METADATA)
                .keys("id")
                .sequenceBy("_source_lsn");
    }

    static AutoCdcSpec.Builder scd2() {
        return scd1().scdType(ScdType.TYPE_2);
    }

    static RowData up(long id, String name, Integer v, long lsn) {
        return GenericRowData.ofKind(RowKind.INSERT, id, str(name), v, lsn, str("u"));
    }

    static RowData upd(long id, String name, Integer v, long lsn) {
        return GenericRowData.ofKind(RowKind.UPDATE_AFTER, id, str(name), v, lsn, str("u"));
    }

    static RowData del(long id, long lsn) {
        return GenericRowData.ofKind(RowKind.DELETE, id, null, null, lsn, str("d"));
    }

    static StringData str(String s) {
        return s == null ? null : StringData.fromString(s);
    }

    /** In-memory {@link Scd1Logic.State} per key. */
    static final class MemScd1 implements Scd1Logic.State {
        byte[] row;
        byte[] tombstone;
        byte[] truncate;

        public byte[] row() {
            return row;
        }

        public void setRow(byte[] v) {
            row = v;
        }

        public void clearRow() {
            row = null;
        }

        public byte[] tombstone() {
            return tombstone;
        }

        public void setTombstone(byte[] v) {
            tombstone = v;
        }

        public void clearTombstone() {
            tombstone = null;
        }

        public byte[] truncate() {
            return truncate;
        }
    }

    /** In-memory {@link Scd2Logic.Store} per key. */
    static final class MemScd2 implements Scd2Logic.Store {
        byte[] current;
        final Map<String, byte[]> history = new HashMap<>();

        public byte[] head() {
            return current;
        }

        public void setHead(byte[] v) {
            current = v;
        }

        public Iterable<Map.Entry<String, byte[]>> history() {
            return history.entrySet();
        }

        public void putHistory(String k, byte[] v) {
            history.put(k, v);
        }

        public void clearHistory() {
            history.clear();
        }
    }

    /** Drives {@link Scd1Logic} over in-memory state keyed by column 0 (BIGINT id). */
    static final class Scd1Driver {
        final AutoCdcMetrics.Counting metrics = new AutoCdcMetrics.Counting();
        final Scd1Logic logic;
        final Map<Long, MemScd1> keys = new LinkedHashMap<>();
        final List<String> out = new ArrayList<>();
        byte[] truncate;

        Scd1Driver(AutoCdcSpec spec) {
            logic = new Scd1Logic(spec, metrics);
        }

        Scd1Driver apply(RowData... records) {
            for (RowData r : records) {
                MemScd1 s = keys.computeIfAbsent(r.getLong(0), k -> new MemScd1());
                s.truncate = truncate;
                logic.apply(r, s, row -> out.add(row.toString()));
            }
            return this;
        }

        Scd1Driver truncate(RowData record) {
            metrics.truncate();
            truncate = logic.truncateTombstone(truncate, record);
            for (MemScd1 s : keys.values()) {
                if (s.row != null
                        && logic.truncate(s.row, truncate, row -> out.add(row.toString()))) {
                    s.row = null;
                }
            }
            return this;
        }

        List<String> take() {
            List<String> r = new ArrayList<>(out);
            out.clear();
            return r;
        }
    }

    /** Drives {@link Scd2Logic} over in-memory state keyed by column 0 (BIGINT id). */
    static final class Scd2Driver {
        final AutoCdcMetrics.Counting metrics = new AutoCdcMetrics.Counting();
        final Scd2Logic logic;
        final Map<Long, MemScd2> keys = new LinkedHashMap<>();
        final List<String> out = new ArrayList<>();
        final Materialized table;

        Scd2Driver(AutoCdcSpec spec) {
            logic = new Scd2Logic(spec, metrics);
            table = new Materialized(spec);
        }

        Scd2Driver apply(RowData... records) {
            for (RowData r : records) {
                logic.apply(
                        r,
                        keys.computeIfAbsent(r.getLong(0), k -> new MemScd2()),
                        row -> {
                            out.add(row.toString());
                            table.accept(row);
                        });
            }
            return this;
        }

        List<String> take() {
            List<String> r = new ArrayList<>(out);
            out.clear();
            return r;
        }
    }

    /**
     * The target table materialized from the emitted changes, keyed by the identifier fields. Fails
     * on a retraction that does not match the current row exactly, and on an insert of an identity
     * that is already present.
     */
    static final class Materialized {
        private final int[] identity;
        final TreeMap<String, String> rows = new TreeMap<>();

        Materialized(AutoCdcSpec spec) {
            List<String> names = spec.targetType().getFieldNames();
            identity = spec.identifierFields().stream().mapToInt(names::indexOf).toArray();
        }

        void accept(RowData row) {
            GenericRowData g = (GenericRowData) row;
            StringBuilder id = new StringBuilder();
            for (int i : identity) {
                id.append(g.getField(i)).append('|');
            }
            String key = id.toString();
            String content = content(g);
            switch (row.getRowKind()) {
                case INSERT:
                case UPDATE_AFTER:
                    if (rows.containsKey(key)) {
                        throw new AssertionError(
                                "insert of present identity "
                                        + key
                                        + ": "
                                        + row
                                        + " over "
                                        + rows.get(key));
                    }
                    rows.put(key, content);
                    break;
                default:
                    String present = rows.remove(key);
                    if (!content.equals(present)) {
                        throw new AssertionError(
                                "retraction " + row + " does not match the table row " + present);
                    }
            }
        }

        static String content(GenericRowData g) {
            StringBuilder sb = new StringBuilder("(");
            for (int i = 0; i < g.getArity(); i++) {
                sb.append(i == 0 ? "" : ",").append(g.getField(i));
            }
            return sb.append(')').toString();
        }

        List<String> snapshot() {
            return new ArrayList<>(rows.values());
        }
    }
}

package dev.changeflow.jobs.demo;

import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Compares the demo's Iceberg tables with the {@link TpcbGenerator}'s truth and describes every
 * difference (missing, extra or different rows), so the demo can say exactly what went wrong.
 */
public final class DemoCheck {
    private DemoCheck() {}

    /** Rows of a table as lists of column values (Iceberg generic values). */
    public static List<List<Object>> rows(Table table) {
        List<List<Object>> out = new ArrayList<>();
        for (Record r : TableRows.read(table)) {
            List<Object> row = new ArrayList<>(r.size());
            for (int i = 0; i < r.size(); i++) {
                row.add(r.get(i));
            }
            out.add(row);
        }
        return out;
    }

    /**
     * Differences between a keyed table (key = first column) and the expected rows; empty = equal.
     */
    public static List<String> compareKeyed(Table table, TreeMap<Integer, Object[]> expected) {
        List<String> diffs = new ArrayList<>();
        Map<Integer, List<Object>> actual = new TreeMap<>();
        for (List<Object> row : rows(table)) {
            Integer key = ((Number) row.get(0)).intValue();
            if (actual.put(key, row) != null) {
                diffs.add("duplicate key " + key);
            }
        }
        for (Map.Entry<Integer, Object[]> e : expected.entrySet()) {
            List<Object> a = actual.remove(e.getKey());
            List<Object> exp = normalize(e.getValue());
            if (a == null) {
                diffs.add("missing " + exp);
            } else if (!normalize(a.toArray()).equals(exp)) {
                diffs.add("expected " + exp + " but found " + normalize(a.toArray()));
            }
        }
        actual.values().forEach(a -> diffs.add("unexpected " + a));
        return diffs;
    }

    /** Differences between two multisets of rows; empty = equal. */
    public static List<String> compareMultiset(Table table, List<Object[]> expected) {
        List<String> exp = new ArrayList<>();
        expected.forEach(r -> exp.add(normalize(r).toString()));
        List<String> act = new ArrayList<>();
        rows(table).forEach(r -> act.add(normalize(r.toArray()).toString()));
        exp.sort(null);
        act.sort(null);
        List<String> diffs = new ArrayList<>();
        if (!exp.equals(act)) {
            List<String> missing = new ArrayList<>(exp);
            act.forEach(missing::remove);
            List<String> extra = new ArrayList<>(act);
            exp.forEach(extra::remove);
            missing.stream().limit(10).forEach(m -> diffs.add("missing " + m));
            extra.stream().limit(10).forEach(m -> diffs.add("unexpected " + m));
            if (diffs.isEmpty()) {
                diffs.add("row counts differ: expected " + exp.size() + ", found " + act.size());
            }
        }
        return diffs;
    }

    /** Numbers as longs, timestamps as epoch micros, strings as-is. */
    static List<Object> normalize(Object[] values) {
        List<Object> out = new ArrayList<>(values.length);
        for (Object v : values) {
            if (v instanceof Number) {
                out.add(((Number) v).longValue());
            } else if (v instanceof LocalDateTime) {
                LocalDateTime t = (LocalDateTime) v;
                out.add(t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + t.getNano() / 1_000);
            } else if (v instanceof CharSequence) {
                out.add(v.toString());
            } else {
                out.add(v);
            }
        }
        return out;
    }

    static String describe(List<String> diffs) {
        StringBuilder b = new StringBuilder();
        diffs.stream().limit(10).forEach(d -> b.append("\n    ").append(d));
        if (diffs.size() > 10) {
            b.append("\n    ... ").append(diffs.size() - 10).append(" more");
        }
        return b.toString();
    }

    static boolean same(Object a, Object b) {
        return Objects.equals(a, b) || Arrays.deepEquals(new Object[] {a}, new Object[] {b});
    }
}

package dev.changeflow.e2e.bench;

import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The final tables an exact AUTO CDC apply must produce from a replay (base rows repeated {@code
 * rounds} times, {@code source.lsn} shifted by {@code round × shift}), computed without Flink by
 * the rule of semantics.md A2-A4 and of the capture's oracle: per key, every record in sequence
 * order; an upsert sets the row, a delete removes it (SCD type 1); for SCD type 2 an upsert whose
 * data differs from the open version closes it and opens a new one at its sequence, an identical
 * one opens nothing, a delete closes the open version. Arrival order and duplicate deliveries do
 * not matter.
 *
 * <p>Rows are CSV lines ({@link TableRows#formatValue}) of {@code aid, bid, abalance, filler}
 * (SCD1, also the Iceberg upsert and Paimon tables) and {@code aid, bid, abalance, filler,
 * __START_AT, __END_AT} (SCD2, empty end = open).
 */
final class ExpectedTables {
    /** SCD type 1 rows by key. */
    final Map<Integer, String> scd1;

    /** SCD type 2 versions, sorted. */
    final List<String> scd2;

    private ExpectedTables(Map<Integer, String> scd1, List<String> scd2) {
        this.scd1 = scd1;
        this.scd2 = scd2;
    }

    static ExpectedTables compute(List<RowData> base, int rounds, long shift, BenchFlows flows) {
        RowType type = flows.sourceType();
        int keyIdx = flows.keyIndex();
        int seqIdx = flows.sequenceIndex();
        int[] dataIdx = flows.dataIndexes();
        RowData.FieldGetter[] data = new RowData.FieldGetter[dataIdx.length];
        for (int i = 0; i < dataIdx.length; i++) {
            data[i] = RowData.createFieldGetter(type.getTypeAt(dataIdx[i]), dataIdx[i]);
        }
        // per key, the base records in sequence order (stable: ties keep arrival order)
        Map<Integer, List<RowData>> perKey = new TreeMap<>();
        for (RowData r : base) {
            perKey.computeIfAbsent(r.getInt(keyIdx), k -> new ArrayList<>()).add(r);
        }
        Map<Integer, String> scd1 = new HashMap<>();
        List<String> scd2 = new ArrayList<>();
        for (Map.Entry<Integer, List<RowData>> e : perKey.entrySet()) {
            List<RowData> events = e.getValue();
            events.sort((a, b) -> Long.compare(a.getLong(seqIdx), b.getLong(seqIdx)));
            String open = null;
            long openAt = 0;
            for (int round = 0; round < rounds; round++) {
                for (RowData r : events) {
                    long seq = r.getLong(seqIdx) + round * shift;
                    if (r.getRowKind() == RowKind.DELETE) {
                        if (open != null) {
                            scd2.add(open + "," + openAt + "," + seq);
                        }
                        open = null;
                        continue;
                    }
                    String row = csv(r, data);
                    if (row.equals(open)) {
                        continue;
                    }
                    if (open != null) {
                        scd2.add(open + "," + openAt + "," + seq);
                    }
                    open = row;
                    openAt = seq;
                }
            }
            if (open != null) {
                scd1.put(e.getKey(), open);
                scd2.add(open + "," + openAt + ",");
            }
        }
        scd2.sort(null);
        return new ExpectedTables(scd1, scd2);
    }

    private static String csv(RowData r, RowData.FieldGetter[] data) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < data.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            Object v = data[i].getFieldOrNull(r);
            b.append(TableRows.formatValue(v instanceof StringData ? v.toString() : v));
        }
        return b.toString();
    }

    /**
     * Rows of {@code actual} (key → CSV line) that differ from the expected SCD1 table: missing,
     * extra or different keys, each counted once. Up to three differences are added to {@code
     * sample}.
     */
    long wrongScd1Rows(Map<Integer, String> actual, List<String> sample) {
        long wrong = 0;
        for (Map.Entry<Integer, String> e : new TreeMap<>(scd1).entrySet()) {
            if (!e.getValue().equals(actual.get(e.getKey()))) {
                wrong++;
                if (sample.size() < 3) {
                    sample.add("expected " + e.getValue() + ", got " + actual.get(e.getKey()));
                }
            }
        }
        for (Integer k : actual.keySet()) {
            if (!scd1.containsKey(k)) {
                wrong++;
                if (sample.size() < 3) {
                    sample.add("unexpected " + actual.get(k));
                }
            }
        }
        return wrong;
    }

    /**
     * Size of the symmetric difference between the expected SCD2 versions and {@code actual}
     * (multisets). Up to three differences are added to {@code sample}.
     */
    long wrongScd2Rows(Collection<String> actual, List<String> sample) {
        String[] a = actual.toArray(new String[0]);
        Arrays.sort(a);
        long wrong = 0;
        int i = 0, j = 0;
        while (i < scd2.size() || j < a.length) {
            int c = i == scd2.size() ? 1 : j == a.length ? -1 : scd2.get(i).compareTo(a[j]);
            if (c == 0) {
                i++;
                j++;
            } else if (c < 0) {
                wrong++;
                if (sample.size() < 3) {
                    sample.add("missing " + scd2.get(i));
                }
                i++;
            } else {
                wrong++;
                if (sample.size() < 3) {
                    sample.add("unexpected " + a[j]);
                }
                j++;
            }
        }
        return wrong;
    }
}

package dev.changeflow.e2e;

import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The final rows of a Flink SQL query whose result is a changelog. */
final class ChangelogResults {
    private ChangelogResults() {}

    /**
     * Applies the result's rows in order — {@code +I} and {@code +U} add a row, {@code -U} and
     * {@code -D} remove one that was added before (else the assertion fails) — and returns what is
     * left, each as {@code +I[...]}, sorted.
     */
    static List<String> finalRows(TableResult result) throws Exception {
        Map<String, Integer> counts = new HashMap<>();
        try (CloseableIterator<Row> it = result.collect()) {
            while (it.hasNext()) {
                Row row = it.next();
                RowKind kind = row.getKind();
                row.setKind(RowKind.INSERT);
                String text = row.toString();
                if (kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER) {
                    counts.merge(text, 1, Integer::sum);
                } else {
                    Integer n = counts.get(text);
                    if (n == null) {
                        throw new AssertionError(kind + " of a row never added: " + text);
                    }
                    if (n == 1) {
                        counts.remove(text);
                    } else {
                        counts.put(text, n - 1);
                    }
                }
            }
        }
        List<String> rows = new ArrayList<>();
        counts.forEach((text, n) -> rows.addAll(Collections.nCopies(n, text)));
        rows.sort(null);
        return rows;
    }
}

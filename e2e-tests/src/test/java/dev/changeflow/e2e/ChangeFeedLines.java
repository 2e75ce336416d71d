package dev.changeflow.e2e;

import dev.changeflow.sources.cdf.TableChanges;

import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

import java.util.ArrayList;
import java.util.List;

/** The change feed of a table (docs/semantics.md F1, F2) as text lines a test compares. */
final class ChangeFeedLines {
    private ChangeFeedLines() {}

    /**
     * Reads the change feed of {@code table} from version {@code from} to its current version and
     * returns one line per change row, in the order read: {@code <_change_type> <v1>,<v2>,...}, the
     * values of {@code columns} in that order ({@code null} for a null value).
     */
    static List<String> from(Table table, long from, String... columns) throws Exception {
        List<String> feed = new ArrayList<>();
        try (CloseableIterable<Record> rows =
                TableChanges.forTable(table).startingVersion(from).build().read()) {
            for (Record r : rows) {
                List<String> values = new ArrayList<>();
                for (String column : columns) {
                    values.add(String.valueOf(r.getField(column)));
                }
                feed.add(r.getField("_change_type") + " " + String.join(",", values));
            }
        }
        return feed;
    }
}

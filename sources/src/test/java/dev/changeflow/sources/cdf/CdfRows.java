package dev.changeflow.sources.cdf;

import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

/**
 * Renders change rows as {@code "<version> <change type> (col1, col2, ...)"} for exact assertions.
 */
final class CdfRows {

    private CdfRows() {}

    /** The rendered changes of versions {@code start..end} of {@code table} (batch API). */
    static List<String> changes(Table table, long start, long end) {
        return render(
                TableChanges.forTable(table).startingVersion(start).endingVersion(end).build());
    }

    static List<String> render(TableChanges changes) {
        List<String> lines = new ArrayList<>();
        int dataColumns = changes.schema().columns().size() - 3;
        try (CloseableIterable<Record> rows = changes.read()) {
            for (Record row : rows) {
                StringJoiner values = new StringJoiner(", ", "(", ")");
                for (int i = 0; i < dataColumns; i++) {
                    values.add(String.valueOf(row.get(i)));
                }
                lines.add(row.get(dataColumns + 1) + " " + row.get(dataColumns) + " " + values);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return lines;
    }
}

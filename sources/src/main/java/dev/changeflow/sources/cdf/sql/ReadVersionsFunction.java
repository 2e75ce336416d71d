package dev.changeflow.sources.cdf.sql;

import java.io.IOException;
import java.util.Map;

import dev.changeflow.sources.cdf.TableChanges;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.Collector;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Reads the changes of each version it receives (a version of the range planned by {@link
 * ChangeFeedTableSource}) and emits them as rows of the SQL table's row type: columns are matched
 * by name, a column the range's ending schema lacks is null. Holds one version's changes at a time.
 */
@Internal
final class ReadVersionsFunction extends RichFlatMapFunction<Long, RowData> {

    private static final long serialVersionUID = 1L;

    /** Stands for "no version" (the element of an empty range), produces nothing. */
    static final long NO_VERSION = -1L;

    private final TableLoader tableLoader;
    private final Map<String, String> options;
    private final RowType rowType;

    private transient TableChanges changes;
    private transient RowData.FieldGetter[] getters;

    ReadVersionsFunction(TableLoader tableLoader, Map<String, String> options, RowType rowType) {
        this.tableLoader = tableLoader;
        this.options = Map.copyOf(options);
        this.rowType = rowType;
    }

    @Override
    public void open(OpenContext openContext) {
        tableLoader.open();
    }

    @Override
    public void flatMap(Long version, Collector<RowData> out) throws IOException {
        if (version == NO_VERSION) {
            return;
        }
        if (changes == null) {
            // the same resolution as at planning time; the range's snapshots are immutable
            changes = TableChanges.forTable(tableLoader.loadTable()).options(options).build();
            RowType source = changes.rowType();
            getters = new RowData.FieldGetter[rowType.getFieldCount()];
            for (int i = 0; i < getters.length; i++) {
                int from = source.getFieldNames().indexOf(rowType.getFieldNames().get(i));
                getters[i] = from < 0 ? null : RowData.createFieldGetter(source.getTypeAt(from), from);
            }
        }
        try (CloseableIterable<RowData> rows = changes.readRowData(version)) {
            for (RowData row : rows) {
                GenericRowData projected = new GenericRowData(getters.length);
                for (int i = 0; i < getters.length; i++) {
                    projected.setField(i, getters[i] == null ? null : getters[i].getFieldOrNull(row));
                }
                out.collect(projected);
            }
        }
    }

    @Override
    public void close() throws Exception {
        tableLoader.close();
    }
}

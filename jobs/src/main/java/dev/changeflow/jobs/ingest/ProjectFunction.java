package dev.changeflow.jobs.ingest;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

/** Copies selected fields of a row into a new insert row (append-only tables). */
final class ProjectFunction implements MapFunction<RowData, RowData> {
    private static final long serialVersionUID = 1L;
    private final RowData.FieldGetter[] getters;

    ProjectFunction(RowType source, int[] indexes) {
        getters = new RowData.FieldGetter[indexes.length];
        for (int i = 0; i < indexes.length; i++) {
            getters[i] = RowData.createFieldGetter(source.getTypeAt(indexes[i]), indexes[i]);
        }
    }

    @Override
    public RowData map(RowData row) {
        GenericRowData out = new GenericRowData(getters.length);
        for (int i = 0; i < getters.length; i++) {
            out.setField(i, getters[i].getFieldOrNull(row));
        }
        return out;
    }
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

/**
 * Re-types rows to the Flink row type Iceberg derives from the table's schema ({@code
 * FlinkSchemaUtil.convert(schema)}: TIMESTAMP(6), TIMESTAMP_LTZ(6), INT for TINYINT and SMALLINT,
 * STRING for CHAR/VARCHAR), keeping row kind and values (a TINYINT or SMALLINT value becomes an
 * Integer).
 *
 * <p>Why: Iceberg's Flink equality-delete writer reads a deleted row with the Flink type of its
 * delete schema, derived from the Iceberg schema, not with the stream's type. A row serialized as
 * TIMESTAMP(3) (compact binary layout) read as TIMESTAMP(6) fails ({@code
 * ArrayIndexOutOfBoundsException} in {@code BinarySegmentUtils}); typing the stream as the
 * canonical type makes data and delete writers read what was written.
 */
@Internal
final class CanonicalRows implements MapFunction<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final RowType from;
    private transient RowData.FieldGetter[] getters;
    private transient boolean[] toInt;

    /**
     * @param from the rows' type; the output type must be the canonical type of the same columns
     */
    CanonicalRows(RowType from) {
        this.from = from;
    }

    @Override
    public RowData map(RowData row) {
        if (getters == null) {
            getters = new RowData.FieldGetter[from.getFieldCount()];
            toInt = new boolean[getters.length];
            for (int i = 0; i < getters.length; i++) {
                getters[i] = RowData.createFieldGetter(from.getTypeAt(i), i);
                LogicalTypeRoot root = from.getTypeAt(i).getTypeRoot();
                toInt[i] = root == LogicalTypeRoot.TINYINT || root == LogicalTypeRoot.SMALLINT;
            }
        }
        GenericRowData out = new GenericRowData(row.getRowKind(), getters.length);
        for (int i = 0; i < getters.length; i++) {
            Object v = getters[i].getFieldOrNull(row);
            if (v != null && toInt[i]) {
                v = ((Number) v).intValue();
            }
            out.setField(i, v);
        }
        return out;
    }
}

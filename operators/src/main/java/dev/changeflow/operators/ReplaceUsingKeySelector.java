package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;

import java.util.ArrayList;
import java.util.List;

/**
 * Selects the REPLACE USING columns of a row as a {@link BinaryRowData} (row kind {@code +I}, key
 * columns nullable) for {@link ReplaceUsingOperator} (semantics.md S5). A null column is a null bit
 * with a zeroed slot, so two key values that are null in the same columns and equal elsewhere have
 * the same bytes: they hash to the same key group and are one key (null matches null).
 */
@Internal
public final class ReplaceUsingKeySelector
        implements KeySelector<RowData, RowData>, ResultTypeQueryable<RowData> {
    private static final long serialVersionUID = 1L;

    private final RowType keyType;
    private final int[] positions;
    private transient RowDataSerializer serializer;
    private transient RowData.FieldGetter[] getters;

    public ReplaceUsingKeySelector(ReplaceUsingSpec spec) {
        this.positions = spec.keyIndexes();
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : positions) {
            RowType.RowField f = spec.rowType().getFields().get(p);
            fields.add(new RowType.RowField(f.getName(), f.getType().copy(true)));
        }
        this.keyType = new RowType(fields);
    }

    /** The key row type: the REPLACE USING columns, nullable. */
    public RowType keyType() {
        return keyType;
    }

    @Override
    public RowData getKey(RowData row) {
        if (serializer == null) {
            serializer = new RowDataSerializer(keyType);
            getters = new RowData.FieldGetter[positions.length];
            for (int i = 0; i < positions.length; i++) {
                getters[i] = RowData.createFieldGetter(keyType.getTypeAt(i), positions[i]);
            }
        }
        GenericRowData key = new GenericRowData(positions.length);
        for (int i = 0; i < positions.length; i++) {
            key.setField(i, getters[i].getFieldOrNull(row));
        }
        return serializer.toBinaryRow(key).copy();
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(keyType);
    }
}

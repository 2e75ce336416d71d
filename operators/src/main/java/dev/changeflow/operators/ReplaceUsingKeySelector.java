package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.types.logical.RowType;

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

    private final AutoCdcKeySelector keys;

    public ReplaceUsingKeySelector(ReplaceUsingSpec spec) {
        this.keys = new AutoCdcKeySelector(spec.rowType(), spec.keyIndexes(), true);
    }

    /** The key row type: the REPLACE USING columns, nullable. */
    public RowType keyType() {
        return keys.keyType();
    }

    @Override
    public RowData getKey(RowData row) {
        return keys.getKey(row);
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return keys.getProducedType();
    }
}

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

import java.util.List;

/**
 * Selects the KEYS of a source row as a {@link BinaryRowData} (row kind {@code +I}) typed {@code
 * InternalTypeInfo.of(keyType())}. Binary rows hash and compare by their bytes, so key groups are
 * the same in every JVM ({@code GenericRowData#hashCode} mixes in the {@code RowKind} enum's
 * identity hash and is not).
 *
 * @throws IllegalStateException from {@link #getKey} for a null key column (the decoder must
 *     quarantine such records, A2 {@code NULL_KEY})
 */
@Internal
public final class AutoCdcKeySelector
        implements KeySelector<RowData, RowData>, ResultTypeQueryable<RowData> {
    private static final long serialVersionUID = 1L;

    private final RowType keyType;
    private final int[] positions;
    private final boolean nullable;
    private transient RowDataSerializer serializer;
    private transient RowData.FieldGetter[] getters;

    public AutoCdcKeySelector(AutoCdcSpec spec) {
        this(spec.sourceType(), spec.keyIndexesInSource());
    }

    /**
     * Selects the columns at {@code positions} of rows of type {@code source} (for keyed operators
     * other than AUTO CDC, e.g. the Silver→Gold aggregate's GROUP BY).
     */
    public AutoCdcKeySelector(RowType source, int[] positions) {
        this(source, positions, false);
    }

    /**
     * Selects the columns at {@code positions} of rows of type {@code source}; with {@code
     * nullable} the key columns are nullable and a null is a null bit with a zeroed slot, so keys
     * null in the same columns and equal elsewhere have the same bytes (REPLACE USING, S5: null
     * matches null), else a null key column fails ({@link #getKey}).
     */
    AutoCdcKeySelector(RowType source, int[] positions, boolean nullable) {
        this.positions = positions.clone();
        this.nullable = nullable;
        RowType.RowField[] fields = new RowType.RowField[positions.length];
        for (int i = 0; i < positions.length; i++) {
            RowType.RowField f = source.getFields().get(positions[i]);
            fields[i] = new RowType.RowField(f.getName(), f.getType().copy(nullable));
        }
        this.keyType = new RowType(List.of(fields));
    }

    /** The key row type: the KEYS columns, NOT NULL (nullable for REPLACE USING). */
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
            Object v = getters[i].getFieldOrNull(row);
            if (v == null && !nullable) {
                throw new IllegalStateException(
                        "null KEYS column '"
                                + keyType.getFieldNames().get(i)
                                + "' reached the AUTO CDC operator; the decoder must quarantine it (A2 NULL_KEY)");
            }
            key.setField(i, v);
        }
        return serializer.toBinaryRow(key).copy();
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(keyType);
    }
}

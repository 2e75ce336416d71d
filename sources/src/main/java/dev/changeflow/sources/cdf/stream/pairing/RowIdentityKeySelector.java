package dev.changeflow.sources.cdf.stream.pairing;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Keys change-feed rows by row identity for the pairing operator (design.md "Order and pairing —
 * how"): the identifier columns; else, for a format v3 table, the row's {@code _row_id} ({@link
 * #forRowLineage}; rows without one by every data column); else every data column. The key is a
 * 32-bit hash of the identity's binary form (Flink's {@code BinaryRowData} hash; {@link
 * Long#hashCode} of a {@code _row_id}), the same in every JVM; two identities that share a hash
 * share a key, which the pairing operator tolerates (it pairs by exact identity within a key).
 */
@Internal
public final class RowIdentityKeySelector implements KeySelector<RowData, Integer> {

    private static final long serialVersionUID = 1L;

    private final int[] positions;
    private final LogicalType[] types;

    /** Position of {@code _row_id} in the row, or -1 when the identity is {@link #positions}. */
    private final int rowIdPosition;

    private transient RowData.FieldGetter[] getters;
    private transient RowDataSerializer serializer;

    /**
     * @param rowType the change feed's row type
     * @param positions positions of the identity columns in {@code rowType}
     */
    public RowIdentityKeySelector(RowType rowType, int[] positions) {
        this(rowType, positions, -1);
    }

    /**
     * Keys by row lineage: the {@code _row_id} at {@code rowIdPosition}, or, when it is null, the
     * columns at {@code positions}.
     *
     * @param rowType the source's row type (with {@code _row_id})
     */
    public static RowIdentityKeySelector forRowLineage(
            RowType rowType, int rowIdPosition, int[] positions) {
        return new RowIdentityKeySelector(rowType, positions, rowIdPosition);
    }

    private RowIdentityKeySelector(RowType rowType, int[] positions, int rowIdPosition) {
        this.rowIdPosition = rowIdPosition;
        this.positions = positions.clone();
        this.types = new LogicalType[positions.length];
        for (int i = 0; i < positions.length; i++) {
            types[i] = rowType.getTypeAt(positions[i]);
        }
    }

    @Override
    public Integer getKey(RowData row) {
        if (rowIdPosition >= 0 && !row.isNullAt(rowIdPosition)) {
            return Long.hashCode(row.getLong(rowIdPosition));
        }
        if (getters == null) {
            getters = new RowData.FieldGetter[positions.length];
            for (int i = 0; i < positions.length; i++) {
                getters[i] = RowData.createFieldGetter(types[i], positions[i]);
            }
            serializer = new RowDataSerializer(types);
        }
        GenericRowData key = new GenericRowData(positions.length);
        for (int i = 0; i < positions.length; i++) {
            key.setField(i, getters[i].getFieldOrNull(row));
        }
        return serializer.toBinaryRow(key).hashCode();
    }
}

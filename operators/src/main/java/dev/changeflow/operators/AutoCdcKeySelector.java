package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.flink.table.data.writer.BinaryWriter;
import org.apache.flink.table.runtime.typeutils.InternalSerializers;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
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
    private transient RowData.FieldGetter[] getters;
    private transient LogicalType[] types;
    private transient TypeSerializer<?>[] serializers;

    /** Per key column: {@link #INT}, {@link #BIGINT} (read and written unboxed) or 0 (generic). */
    private transient int[] kinds;

    private static final int INT = 1;
    private static final int BIGINT = 2;

    /** Bytes reserved for the variable-length part of a key with such columns (grown if needed). */
    private transient int varLengthHint;

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

    /**
     * The key row, written straight into a fresh {@link BinaryRowData}: the same bytes as Flink's
     * {@code RowDataSerializer#toBinaryRow} gives for a {@code GenericRowData} of the key values
     * (row kind {@code +I}, null bits, fixed slots, variable-length part), so key groups and the
     * keys in the state backend are those of earlier versions; INT and BIGINT columns are copied
     * without boxing. Called twice per record (the partitioner before the keyBy and the keyed
     * operator), so it is on the hot path of every ingest (issue #18).
     */
    @Override
    public RowData getKey(RowData row) {
        if (getters == null) {
            int n = positions.length;
            RowData.FieldGetter[] g = new RowData.FieldGetter[n];
            types = new LogicalType[n];
            serializers = new TypeSerializer<?>[n];
            kinds = new int[n];
            for (int i = 0; i < n; i++) {
                LogicalType t = keyType.getTypeAt(i);
                g[i] = RowData.createFieldGetter(t, positions[i]);
                types[i] = t;
                serializers[i] = InternalSerializers.create(t);
                if (!BinaryRowData.isInFixedLengthPart(t)) {
                    varLengthHint = 32;
                }
                kinds[i] =
                        t.getTypeRoot() == LogicalTypeRoot.INTEGER
                                ? INT
                                : t.getTypeRoot() == LogicalTypeRoot.BIGINT ? BIGINT : 0;
            }
            getters = g; // last: set only once everything above is
        }
        BinaryRowData key = new BinaryRowData(positions.length);
        BinaryRowWriter writer = new BinaryRowWriter(key, varLengthHint);
        for (int i = 0; i < positions.length; i++) {
            int pos = positions[i];
            if (row.isNullAt(pos)) {
                if (!nullable) {
                    throw new IllegalStateException(
                            "null KEYS column '"
                                    + keyType.getFieldNames().get(i)
                                    + "' reached the AUTO CDC operator; the decoder must quarantine it (A2 NULL_KEY)");
                }
                writer.setNullAt(i);
            } else if (kinds[i] == INT) {
                writer.writeInt(i, row.getInt(pos));
            } else if (kinds[i] == BIGINT) {
                writer.writeLong(i, row.getLong(pos));
            } else {
                BinaryWriter.write(
                        writer, i, getters[i].getFieldOrNull(row), types[i], serializers[i]);
            }
        }
        writer.complete();
        return key;
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(keyType);
    }
}

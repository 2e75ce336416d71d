package dev.changeflow.operators;

import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link AutoCdcKeySelector} writes its key rows straight into binary rows (issue #18): the bytes
 * must be exactly those of the way keys were built before (a {@code GenericRowData} of the key
 * values through {@code RowDataSerializer#toBinaryRow}), since key groups and the keys in the state
 * backend of existing savepoints are made of them.
 */
class AutoCdcKeySelectorTest {
    private static final LogicalType[] TYPES = {
        new IntType(),
        new BigIntType(),
        VarCharType.STRING_TYPE,
        new DecimalType(10, 2),
        new DecimalType(30, 5),
        new TimestampType(3),
        new TimestampType(9),
        new DateType(),
        new SmallIntType(),
        new BooleanType(),
        new DoubleType(),
        new VarBinaryType(VarBinaryType.MAX_LENGTH)
    };

    private static RowType source() {
        List<RowType.RowField> fields = new ArrayList<>();
        for (int i = 0; i < TYPES.length; i++) {
            fields.add(new RowType.RowField("c" + i, TYPES[i]));
        }
        fields.add(new RowType.RowField("payload", VarCharType.STRING_TYPE));
        return new RowType(fields);
    }

    private static Object value(int column, Random r) {
        switch (column) {
            case 0:
                return r.nextInt();
            case 1:
                return r.nextLong();
            case 2:
                return StringData.fromString(
                        "k-" + r.nextInt(1000) + "-\u00e9".repeat(r.nextInt(4)));
            case 3:
                return DecimalData.fromBigDecimal(
                        BigDecimal.valueOf(r.nextInt(1_000_000), 2), 10, 2);
            case 4:
                return DecimalData.fromBigDecimal(
                        new BigDecimal(r.nextLong() + "12345.12345"), 30, 5);
            case 5:
                return TimestampData.fromEpochMillis(r.nextInt(1 << 30));
            case 6:
                return TimestampData.fromEpochMillis(r.nextInt(1 << 30), r.nextInt(1_000_000));
            case 7:
                return r.nextInt(30_000);
            case 8:
                return (short) r.nextInt(30_000);
            case 9:
                return r.nextBoolean();
            case 10:
                return r.nextDouble();
            default:
                byte[] b = new byte[r.nextInt(20)];
                r.nextBytes(b);
                return b;
        }
    }

    /** The key as it was built before: key values in a generic row, through the serializer. */
    private static BinaryRowData before(
            RowType source, int[] positions, boolean nullable, RowData row) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : positions) {
            RowType.RowField f = source.getFields().get(p);
            fields.add(new RowType.RowField(f.getName(), f.getType().copy(nullable)));
        }
        RowType keyType = new RowType(fields);
        GenericRowData key = new GenericRowData(positions.length);
        for (int i = 0; i < positions.length; i++) {
            key.setField(
                    i,
                    RowData.createFieldGetter(keyType.getTypeAt(i), positions[i])
                            .getFieldOrNull(row));
        }
        return new RowDataSerializer(keyType).toBinaryRow(key).copy();
    }

    private static byte[] bytes(RowType keyType, RowData key) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        new RowDataSerializer(keyType).serialize(key, out);
        return out.getCopyOfBuffer();
    }

    @Test
    void keyRowsHaveTheBytesOfTheGenericRowThroughTheSerializer() throws Exception {
        RowType source = source();
        RowDataSerializer sourceSerializer = new RowDataSerializer(source);
        Random r = new Random(18);
        int[][] keySets = {{0}, {1}, {2}, {0, 2}, {3, 4}, {5, 6, 7}, {8, 9, 10, 11}, {2, 11, 4, 0}};
        for (boolean nullable : new boolean[] {false, true}) {
            for (int[] positions : keySets) {
                AutoCdcKeySelector selector = new AutoCdcKeySelector(source, positions, nullable);
                for (int n = 0; n < 200; n++) {
                    GenericRowData row = new GenericRowData(source.getFieldCount());
                    for (int c = 0; c < TYPES.length; c++) {
                        boolean isNull = nullable && r.nextInt(4) == 0;
                        row.setField(c, isNull ? null : value(c, r));
                    }
                    row.setField(TYPES.length, StringData.fromString("payload " + n));
                    BinaryRowData expected = before(source, positions, nullable, row);
                    // from the decoder (generic rows) and after the keyBy (binary rows)
                    for (RowData in : List.of(row, sourceSerializer.toBinaryRow(row).copy())) {
                        RowData key = selector.getKey(in);
                        assertThat(key).isInstanceOf(BinaryRowData.class).isEqualTo(expected);
                        assertThat(key.hashCode()).isEqualTo(expected.hashCode());
                        assertThat(bytes(selector.keyType(), key))
                                .isEqualTo(bytes(selector.keyType(), expected));
                    }
                }
            }
        }
    }

    @Test
    void aNullKeyColumnFailsUnlessTheKeysAreNullable() {
        RowType source = source();
        GenericRowData row = new GenericRowData(source.getFieldCount());
        row.setField(1, 7L);
        assertThatThrownBy(() -> new AutoCdcKeySelector(source, new int[] {1, 0}).getKey(row))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("null KEYS column 'c0'")
                .hasMessageContaining("NULL_KEY");
    }
}

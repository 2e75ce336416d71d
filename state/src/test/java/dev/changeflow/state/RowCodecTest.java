package dev.changeflow.state;

import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BinaryType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RawType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RowCodecTest {

    /** Every type the codec supports, one column each, plus a nested row. */
    static final RowType ALL_TYPES =
            RowType.of(
                    new LogicalType[] {
                        new BooleanType(),
                        new TinyIntType(),
                        new SmallIntType(),
                        new IntType(),
                        new BigIntType(),
                        new FloatType(),
                        new DoubleType(),
                        new DecimalType(10, 2),
                        new DecimalType(30, 5),
                        new CharType(3),
                        VarCharType.STRING_TYPE,
                        new BinaryType(2),
                        new VarBinaryType(VarBinaryType.MAX_LENGTH),
                        new DateType(),
                        new TimeType(3),
                        new TimestampType(3),
                        new TimestampType(9),
                        new LocalZonedTimestampType(6),
                        RowType.of(
                                new LogicalType[] {new IntType(), VarCharType.STRING_TYPE},
                                new String[] {"a", "b"}),
                        new ArrayType(new IntType()),
                        new MapType(VarCharType.STRING_TYPE, new BigIntType())
                    },
                    new String[] {
                        "bo", "ti", "sm", "i", "bi", "f", "d", "dec", "bigdec", "ch", "s", "bin",
                        "vbin", "dt", "tm", "ts3", "ts9", "ltz6", "nested", "arr", "map"
                    });

    static GenericRowData sampleRow() {
        return GenericRowData.of(
                true,
                (byte) -7,
                (short) -300,
                -123456,
                1234567890123L,
                1.5f,
                -2.25d,
                DecimalData.fromBigDecimal(new BigDecimal("-12345678.90"), 10, 2),
                DecimalData.fromBigDecimal(
                        new BigDecimal("1234567890123456789012345.12345"), 30, 5),
                StringData.fromString("abc"),
                StringData.fromString("héllo wörld \u0000 ✓"),
                new byte[] {1, 2},
                new byte[] {0, -1, 127},
                19000,
                45_296_789,
                TimestampData.fromEpochMillis(1_700_000_000_123L),
                TimestampData.fromEpochMillis(-1_000L, 999_999),
                TimestampData.fromEpochMillis(1_700_000_000_123L, 456_000),
                GenericRowData.of(7, null),
                new GenericArrayData(new Object[] {1, null, 3}),
                new GenericMapData(Map.of(StringData.fromString("k"), 9L)));
    }

    @Test
    void roundTripsEveryType() {
        RowCodec codec = new RowCodec(ALL_TYPES);
        GenericRowData row = sampleRow();
        byte[] bytes = codec.encode(row);
        GenericRowData back = codec.decode(bytes);
        assertThat(back.toString()).isEqualTo(row.toString());
        assertThat(codec.encode(back)).isEqualTo(bytes);
    }

    @Test
    void roundTripsNulls() {
        RowCodec codec = new RowCodec(ALL_TYPES);
        GenericRowData allNull = new GenericRowData(ALL_TYPES.getFieldCount());
        byte[] bytes = codec.encode(allNull);
        assertThat(bytes).hasSize(3); // only the null bitmap: 21 fields -> 3 bytes
        assertThat(codec.decode(bytes).toString()).isEqualTo(allNull.toString());
    }

    @Test
    void rowsWrittenBeforeTrailingColumnsWereAddedDecodeThemAsNull() {
        RowType old =
                RowType.of(new BigIntType(), VarCharType.STRING_TYPE, RowType.of(new IntType()));
        RowType wider =
                RowType.of(
                        new BigIntType(),
                        VarCharType.STRING_TYPE,
                        RowType.of(new IntType()),
                        VarCharType.STRING_TYPE,
                        new IntType());
        RowCodec codec = new RowCodec(wider);
        byte[] full =
                new RowCodec(old)
                        .encode(
                                GenericRowData.of(
                                        5L, StringData.fromString("ab"), GenericRowData.of(7)));
        assertThat(codec.decode(full).toString()).isEqualTo("+I(5,ab,+I(7),null,null)");
        byte[] lastNull = new RowCodec(old).encode(GenericRowData.of(5L, null, null));
        assertThat(codec.decode(lastNull).toString()).isEqualTo("+I(5,null,null,null,null)");
        // rows of the wider type itself are unaffected
        byte[] current =
                codec.encode(GenericRowData.of(5L, null, null, StringData.fromString("w"), 3));
        assertThat(codec.decode(current).toString()).isEqualTo("+I(5,null,null,w,3)");
    }

    @Test
    void widensOnlyWithinTheSameNullBitmapSize() {
        assertThat(RowCodec.canWiden(3, 5)).isTrue();
        assertThat(RowCodec.canWiden(3, 8)).isTrue();
        assertThat(RowCodec.canWiden(8, 9)).isFalse();
        assertThat(RowCodec.canWiden(9, 16)).isTrue();
        assertThat(RowCodec.canWiden(5, 3)).isFalse();
    }

    @Test
    void encodesCompactly() {
        RowType t = RowType.of(new BigIntType(), VarCharType.STRING_TYPE, new IntType());
        byte[] bytes =
                new RowCodec(t).encode(GenericRowData.of(5L, StringData.fromString("ab"), null));
        // bitmap (1) + varint 5 zig-zag (1) + length (1) + "ab" (2)
        assertThat(bytes).containsExactly(0b100, 10, 2, 'a', 'b');
    }

    @Test
    void encodesProjectionStraightFromTheSourceRow() {
        RowType target = RowType.of(new IntType(), VarCharType.STRING_TYPE);
        RowCodec codec = new RowCodec(target);
        GenericRowData source = GenericRowData.of(StringData.fromString("x"), 42, 99L);
        ByteWriter w = new ByteWriter();
        codec.encode(source, new int[] {1, 0}, w);
        assertThat(codec.decode(w.toByteArray()).toString()).isEqualTo("+I(42,x)");
    }

    @Test
    void equalRowsGiveEqualBytesWhateverTheRowImplementation() {
        RowType t = RowType.of(new BigIntType(), VarCharType.STRING_TYPE);
        RowCodec codec = new RowCodec(t);
        RowData a = GenericRowData.of(1L, StringData.fromString("v"));
        RowData b =
                GenericRowData.of(1L, StringData.fromBytes("v".getBytes(StandardCharsets.UTF_8)));
        assertThat(codec.encode(a)).isEqualTo(codec.encode(b));
    }

    @Test
    void rejectsUnsupportedTypesNamingTheColumn() {
        RowType t =
                RowType.of(
                        new LogicalType[] {new RawType<>(String.class, StringSerializer.INSTANCE)},
                        new String[] {"blob"});
        assertThatThrownBy(() -> new RowCodec(t))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'blob'");
    }

    @Test
    void corruptInputFailsClearly() {
        RowCodec codec = new RowCodec(RowType.of(VarCharType.STRING_TYPE));
        assertThatThrownBy(() -> codec.decode(new byte[] {0, 50, 'a'}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("corrupt");
    }
}

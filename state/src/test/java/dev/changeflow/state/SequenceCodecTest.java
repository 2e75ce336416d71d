package dev.changeflow.state;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SequenceCodecTest {
    private static final long SEED = 20261130L;

    private static <T> void assertOrderPreserving(
            LogicalType type, List<T> values, Comparator<T> order, Function<T, Object> internal) {
        SequenceCodec codec = new SequenceCodec(type);
        for (T a : values) {
            byte[] ea = codec.encodeValue(internal.apply(a));
            assertThat(codec.encodeValue(codec.decode(ea))).as("round trip of %s", a).isEqualTo(ea);
            for (T b : values) {
                byte[] eb = codec.encodeValue(internal.apply(b));
                assertThat(Integer.signum(Arrays.compareUnsigned(ea, eb)))
                        .as("%s vs %s (%s)", a, b, type)
                        .isEqualTo(Integer.signum(order.compare(a, b)));
            }
        }
    }

    @Test
    void integersSortNumerically() {
        Random r = new Random(SEED);
        List<Long> longs =
                new ArrayList<>(List.of(Long.MIN_VALUE, -1L, 0L, 1L, 255L, 256L, Long.MAX_VALUE));
        for (int i = 0; i < 40; i++) {
            longs.add(r.nextLong());
        }
        assertOrderPreserving(new BigIntType(), longs, Long::compare, v -> v);
        List<Integer> ints =
                new ArrayList<>(List.of(Integer.MIN_VALUE, -1, 0, 1, Integer.MAX_VALUE));
        for (int i = 0; i < 30; i++) {
            ints.add(r.nextInt());
        }
        assertOrderPreserving(new IntType(), ints, Integer::compare, v -> v);
        assertOrderPreserving(new DateType(), ints, Integer::compare, v -> v);
        assertOrderPreserving(new TimeType(3), List.of(0, 1, 86_399_999), Integer::compare, v -> v);
        assertOrderPreserving(
                new SmallIntType(),
                List.of((short) -32768, (short) -1, (short) 0, (short) 5, (short) 32767),
                Short::compare,
                v -> v);
        assertOrderPreserving(
                new TinyIntType(),
                List.of((byte) -128, (byte) -1, (byte) 0, (byte) 127),
                Byte::compare,
                v -> v);
        assertOrderPreserving(new BooleanType(), List.of(false, true), Boolean::compare, v -> v);
    }

    @Test
    void decimalsSortNumericallyCompactAndWide() {
        List<BigDecimal> small =
                List.of(
                        new BigDecimal("-99.99"),
                        new BigDecimal("-0.01"),
                        new BigDecimal("0.00"),
                        new BigDecimal("0.10"),
                        new BigDecimal("12.34"));
        assertOrderPreserving(
                new DecimalType(4, 2),
                small,
                BigDecimal::compareTo,
                v -> DecimalData.fromBigDecimal(v, 4, 2));
        List<BigDecimal> wide =
                List.of(
                        new BigDecimal("-99999999999999999999999999999999.999999"),
                        new BigDecimal("-1.000000"),
                        new BigDecimal("0.000000"),
                        new BigDecimal("0.000001"),
                        new BigDecimal("123456789012345678901234.5"),
                        new BigDecimal("99999999999999999999999999999999.999999"));
        assertOrderPreserving(
                new DecimalType(38, 6),
                wide,
                BigDecimal::compareTo,
                v -> DecimalData.fromBigDecimal(v, 38, 6));
    }

    @Test
    void timestampsSortByMillisThenNanos() {
        List<long[]> ts =
                List.of(
                        new long[] {-5, 999_999},
                        new long[] {-5, 0},
                        new long[] {0, 0},
                        new long[] {0, 1},
                        new long[] {1_700_000_000_000L, 5});
        Comparator<long[]> order =
                Comparator.<long[]>comparingLong(a -> a[0]).thenComparingLong(a -> a[1]);
        assertOrderPreserving(
                new TimestampType(9),
                ts,
                order,
                a -> TimestampData.fromEpochMillis(a[0], (int) a[1]));
        assertOrderPreserving(
                new LocalZonedTimestampType(6),
                ts,
                order,
                a -> TimestampData.fromEpochMillis(a[0], (int) a[1]));
        List<Long> millis = List.of(-1L, 0L, 3L);
        assertOrderPreserving(
                new TimestampType(3), millis, Long::compare, m -> TimestampData.fromEpochMillis(m));
    }

    @Test
    void stringsSortLikeFlinkIncludingZeroBytesAndPrefixes() {
        List<String> s =
                List.of(
                        "",
                        "\u0000",
                        "\u0000\u0000",
                        "a",
                        "a\u0000",
                        "a\u0000b",
                        "ab",
                        "b",
                        "é",
                        "✓",
                        "\uD83D\uDE00");
        Comparator<String> flinkOrder =
                (a, b) -> StringData.fromString(a).compareTo(StringData.fromString(b));
        assertOrderPreserving(VarCharType.STRING_TYPE, s, flinkOrder, StringData::fromString);
    }

    @Test
    void structsSortFieldByField() {
        RowType struct = RowType.of(VarCharType.STRING_TYPE, new BigIntType());
        List<Object[]> values = new ArrayList<>();
        for (String f : List.of("", "a", "a\u0000", "ab", "b")) {
            for (long p : new long[] {-1, 0, 7}) {
                values.add(new Object[] {f, p});
            }
        }
        Comparator<Object[]> order =
                Comparator.<Object[], String>comparing(
                                a -> (String) a[0],
                                (a, b) ->
                                        StringData.fromString(a)
                                                .compareTo(StringData.fromString(b)))
                        .thenComparingLong(a -> (Long) a[1]);
        assertOrderPreserving(
                struct,
                values,
                order,
                a -> GenericRowData.of(StringData.fromString((String) a[0]), a[1]));
        Object decoded =
                new SequenceCodec(struct)
                        .decode(
                                new SequenceCodec(struct)
                                        .encodeValue(
                                                GenericRowData.of(StringData.fromString("f"), 3L)));
        assertThat(decoded.toString()).isEqualTo("+I(f,3)");
    }

    @Test
    void rejectsNonOrderableTypesAndNullValues() {
        assertThatThrownBy(() -> new SequenceCodec(new MapType(new IntType(), new IntType())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not orderable");
        SequenceCodec codec = new SequenceCodec(new BigIntType());
        assertThatThrownBy(
                        () ->
                                codec.encode(
                                        GenericRowData.of((Object) null),
                                        new int[] {0},
                                        new ByteWriter()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("NULL_SEQUENCE");
    }

    @Test
    void mapKeysKeepTheBytesAndTheirOrder() {
        byte[] a = {0, (byte) 0x80, (byte) 0xFF};
        byte[] b = {0, (byte) 0x81};
        String ka = SequenceCodec.toMapKey(a, 0, a.length);
        String kb = SequenceCodec.toMapKey(b, 0, b.length);
        assertThat(SequenceCodec.fromMapKey(ka)).isEqualTo(a);
        assertThat(ka.compareTo(kb)).isNegative();
        assertThat(ka)
                .isEqualTo(SequenceCodec.toMapKey(a.clone(), 0, 3))
                .hasSameHashCodeAs(SequenceCodec.toMapKey(a.clone(), 0, 3));
    }
}

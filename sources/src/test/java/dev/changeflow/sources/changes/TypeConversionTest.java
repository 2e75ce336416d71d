package dev.changeflow.sources.changes;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** JSON → Flink internal conversion per column type (A5), and TYPE_MISMATCH for each rejection. */
class TypeConversionTest {

    private final Collected out = new Collected();

    private void decodeOne(String type, String json) {
        DecoderFlow f =
                DecoderFlow.builder(
                                "t",
                                ChangeRecordFormat.JSON,
                                SchemaSampler.parseColumns("v " + type))
                        .appendOnly(true)
                        .build();
        new ChangeRecordDecoder(List.of(f))
                .decode(
                        ("{\"v\":" + json + "}").getBytes(StandardCharsets.UTF_8),
                        "f",
                        null,
                        1,
                        0L,
                        out);
    }

    static Stream<Arguments> conversions() {
        return Stream.of(
                Arguments.of("TINYINT", "-128", (byte) -128),
                Arguments.of("SMALLINT", "32767", (short) 32767),
                Arguments.of("INT", "-2147483648", Integer.MIN_VALUE),
                Arguments.of("BIGINT", "9223372036854775807", Long.MAX_VALUE),
                Arguments.of("FLOAT", "1.5", 1.5f),
                Arguments.of("DOUBLE", "2", 2.0d),
                Arguments.of("DOUBLE", "-1.25e3", -1250.0d),
                Arguments.of("DOUBLE", "\"NaN\"", Double.NaN),
                Arguments.of(
                        "DECIMAL(10, 2)",
                        "12.3",
                        DecimalData.fromBigDecimal(new BigDecimal("12.30"), 10, 2)),
                Arguments.of(
                        "DECIMAL(10, 2)",
                        "\"-7.25\"",
                        DecimalData.fromBigDecimal(new BigDecimal("-7.25"), 10, 2)),
                Arguments.of(
                        "DECIMAL(38, 0)",
                        "123456789012345678901234567890",
                        DecimalData.fromBigDecimal(
                                new BigDecimal("123456789012345678901234567890"), 38, 0)),
                Arguments.of("BOOLEAN", "true", true),
                Arguments.of("CHAR(6)", "\"ab    \"", StringData.fromString("ab    ")),
                Arguments.of("STRING", "\"h\\u00e9\\n\"", StringData.fromString("hé\n")),
                Arguments.of("STRING", "12", StringData.fromString("12")),
                Arguments.of("STRING", "{\"a\": [1, 2]}", StringData.fromString("{\"a\": [1, 2]}")),
                Arguments.of("BYTES", "\"AQID\"", new byte[] {1, 2, 3}),
                Arguments.of("DATE", "19000", 19000),
                Arguments.of(
                        "DATE", "\"2024-02-29\"", (int) LocalDate.of(2024, 2, 29).toEpochDay()),
                Arguments.of("TIME(3)", "3723004", 3723004),
                Arguments.of("TIME(6)", "3723004000", 3723004),
                Arguments.of("TIME(6)", "\"01:02:03.004\"", 3723004),
                Arguments.of("TIME(0)", "\"01:02:03\"", 3723000),
                Arguments.of(
                        "TIMESTAMP(3)",
                        "1796008641882",
                        TimestampData.fromEpochMillis(1796008641882L)),
                Arguments.of(
                        "TIMESTAMP(6)",
                        "1796008641882801",
                        TimestampData.fromEpochMillis(1796008641882L, 801_000)),
                Arguments.of(
                        "TIMESTAMP(9)",
                        "1796008641882801123",
                        TimestampData.fromEpochMillis(1796008641882L, 801_123)),
                Arguments.of("TIMESTAMP(6)", "-1", TimestampData.fromEpochMillis(-1L, 999_000)),
                Arguments.of(
                        "TIMESTAMP(6)",
                        "\"2026-11-30 03:17:21.882801\"",
                        TimestampData.fromLocalDateTime(
                                LocalDateTime.of(2026, 11, 30, 3, 17, 21, 882_801_000))),
                Arguments.of(
                        "TIMESTAMP(3)",
                        "\"2026-11-30T04:17:21.5+01:00\"",
                        TimestampData.fromLocalDateTime(
                                LocalDateTime.of(2026, 11, 30, 3, 17, 21, 500_000_000))),
                Arguments.of(
                        "TIMESTAMP_LTZ(6)",
                        "\"2026-11-30T03:17:21.882801Z\"",
                        TimestampData.fromInstant(Instant.parse("2026-11-30T03:17:21.882801Z"))),
                Arguments.of("TIMESTAMP_LTZ(3)", "1000", TimestampData.fromEpochMillis(1000L)),
                Arguments.of(
                        "ROW<a INT, b STRING>",
                        "{\"b\": \"x\", \"a\": 1}",
                        GenericRowData.of(1, StringData.fromString("x"))),
                Arguments.of(
                        "ROW<a INT, r ROW<c BIGINT>>",
                        "{\"a\": 1, \"r\": {\"c\": 2}}",
                        GenericRowData.of(1, GenericRowData.of(2L))),
                Arguments.of(
                        "ARRAY<INT>",
                        "[1, null, 3]",
                        new GenericArrayData(new Object[] {1, null, 3})),
                Arguments.of(
                        "MAP<STRING, DOUBLE>",
                        "{\"a\": 1.5}",
                        new GenericMapData(Map.of(StringData.fromString("a"), 1.5d))),
                Arguments.of("INT", "null", null));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("conversions")
    void converts(String type, String json, Object expected) {
        decodeOne(type, json);
        assertThat(out.quarantined).isEmpty();
        GenericRowData expectedRow = new GenericRowData(RowKind.INSERT, 1);
        expectedRow.setField(0, expected);
        assertThat(out.changes).containsExactly(expectedRow);
    }

    static Stream<Arguments> mismatches() {
        return Stream.of(
                Arguments.of("TINYINT", "200", "column 'v' TINYINT: integer 200 out of range"),
                Arguments.of(
                        "BIGINT",
                        "99999999999999999999",
                        "column 'v' BIGINT: integer 99999999999999999999 out of range"),
                Arguments.of(
                        "INT",
                        "1.5",
                        "column 'v' INT: decimal number 1.5 expected an integer number"),
                Arguments.of(
                        "INT", "\"1\"", "column 'v' INT: string \"1\" expected an integer number"),
                Arguments.of(
                        "DOUBLE", "\"x\"", "column 'v' DOUBLE: string \"x\" expected a number"),
                Arguments.of(
                        "BOOLEAN",
                        "\"yes\"",
                        "column 'v' BOOLEAN: string \"yes\" expected true or false"),
                Arguments.of(
                        "DECIMAL(5, 2)",
                        "1.234",
                        "column 'v' DECIMAL(5, 2): decimal number 1.234 has more than 2 fractional digits"),
                Arguments.of(
                        "DECIMAL(3, 1)",
                        "123.4",
                        "column 'v' DECIMAL(3, 1): decimal number 123.4 exceeds precision 3"),
                Arguments.of(
                        "DECIMAL(3, 1)",
                        "\"1x\"",
                        "column 'v' DECIMAL(3, 1): string \"1x\" not a decimal number"),
                Arguments.of(
                        "BYTES",
                        "\"***\"",
                        "column 'v' BYTES: string \"***\" not base64: Illegal base64 character 2a"),
                Arguments.of(
                        "DATE",
                        "\"2024-13-01\"",
                        "column 'v' DATE: string \"2024-13-01\" not an ISO date"),
                Arguments.of(
                        "TIME(6)",
                        "3723004005",
                        "column 'v' TIME(6): integer 3723004005 has digits below the millisecond,"
                                + " which TIME cannot hold (Flink's TIME is milliseconds): declare"
                                + " BIGINT for µs/ns since midnight"),
                Arguments.of(
                        "TIME(6)",
                        "\"01:02:03.004005\"",
                        "column 'v' TIME(6): string \"01:02:03.004005\" has digits below the"
                                + " millisecond, which TIME cannot hold (Flink's TIME is"
                                + " milliseconds): declare BIGINT for µs/ns since midnight"),
                Arguments.of(
                        "TIME(3)",
                        "86400000",
                        "column 'v' TIME(3): integer 86400000 out of range for a time of day"),
                Arguments.of(
                        "TIMESTAMP(6)",
                        "\"soon\"",
                        "column 'v' TIMESTAMP(6): string \"soon\" not an ISO timestamp"),
                Arguments.of(
                        "TIMESTAMP(6)",
                        "true",
                        "column 'v' TIMESTAMP(6): boolean true expected an integer since the epoch or an ISO timestamp"),
                Arguments.of(
                        "ROW<a INT>",
                        "[1]",
                        "column 'v' ROW<`a` INT>: array [1] expected an object"),
                Arguments.of(
                        "ROW<a INT NOT NULL>", "{}", "column 'v.a' INT NOT NULL: null or absent"),
                Arguments.of(
                        "ROW<a INT>",
                        "{\"a\": \"x\"}",
                        "column 'v.a' INT: string \"x\" expected an integer number"),
                Arguments.of(
                        "ARRAY<INT>",
                        "[1, \"x\"]",
                        "column 'v[]' INT: string \"x\" expected an integer number"));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("mismatches")
    void rejectsWithTypeMismatch(String type, String json, String detail) {
        decodeOne(type, json);
        assertThat(out.changes).isEmpty();
        assertThat(out.quarantined).hasSize(1);
        RowData q = out.quarantined.get(0);
        assertThat(q.getString(5).toString()).isEqualTo("TYPE_MISMATCH");
        assertThat(q.getString(6).toString()).isEqualTo(detail);
    }

    @Test
    void schemaWrapperDrivesDecimalAndTemporalUnits() {
        DecoderFlow f =
                DecoderFlow.builder(
                                "t",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns(
                                        "id INT, price DECIMAL(10, 2), ts TIMESTAMP(6), d DATE"))
                        .keys("id")
                        .build();
        String price = Base64.getEncoder().encodeToString(BigInteger.valueOf(12345).toByteArray());
        String valueSchema =
                "{'type':'struct','optional':true,'field':'after','fields':["
                        + "{'type':'int32','optional':false,'field':'id'},"
                        + "{'type':'bytes','optional':true,'name':'org.apache.kafka.connect.data.Decimal','parameters':{'scale':'2','connect.decimal.precision':'10'},'field':'price'},"
                        + "{'type':'int64','optional':true,'name':'io.debezium.time.Timestamp','field':'ts'},"
                        + "{'type':'int32','optional':true,'name':'io.debezium.time.Date','field':'d'}]}";
        String payload =
                "{'before':null,'after':{'id':1,'price':'"
                        + price
                        + "','ts':1000,'d':1},'source':{'table':'t','lsn':5},'op':'c'}";
        String wrapped =
                ("{'schema':{'type':'struct','fields':["
                                + valueSchema
                                + "]},'payload':"
                                + payload
                                + "}")
                        .replace('\'', '"');
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(f));
        d.decode(wrapped.getBytes(StandardCharsets.UTF_8), "f", null, 1, 0L, out);
        // without the wrapper, the same ts value is read by the column's precision (µs)
        d.decode(
                payload.replace("'" + price + "'", "'123.45'")
                        .replace('\'', '"')
                        .getBytes(StandardCharsets.UTF_8),
                "f",
                null,
                2,
                0L,
                out);
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).hasSize(2);
        RowData withSchema = out.changes.get(0);
        RowData without = out.changes.get(1);
        assertThat(withSchema.getDecimal(1, 10, 2))
                .isEqualTo(DecimalData.fromBigDecimal(new BigDecimal("123.45"), 10, 2));
        assertThat(withSchema.getTimestamp(2, 6)).isEqualTo(TimestampData.fromEpochMillis(1000L));
        assertThat(withSchema.getInt(3)).isEqualTo(1);
        assertThat(without.getDecimal(1, 10, 2))
                .isEqualTo(DecimalData.fromBigDecimal(new BigDecimal("123.45"), 10, 2));
        assertThat(without.getTimestamp(2, 6)).isEqualTo(TimestampData.fromEpochMillis(1L));
    }
}

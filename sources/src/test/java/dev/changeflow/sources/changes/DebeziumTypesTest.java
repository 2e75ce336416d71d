package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Debezium logical type (PostgreSQL connector wire forms, default settings unless named) to
 * its Flink / Iceberg type and value (semantics.md A5): the type inferred from the schema wrapper,
 * and the value decoded both with the wrapper and from the bare envelope with that type declared.
 */
class DebeziumTypesTest {
    private static final long NOW = 1_700_000_000_000L;

    private final Collected out = new Collected();

    static String q(String s) {
        return s.replace('\'', '"');
    }

    /** Base64 of a Connect {@code Decimal}'s unscaled two's-complement big-endian bytes. */
    static String unscaled(String unscaledValue) {
        return Base64.getEncoder().encodeToString(new BigInteger(unscaledValue).toByteArray());
    }

    static DecimalData dec(String v, int p, int s) {
        return DecimalData.fromBigDecimal(new BigDecimal(v), p, s);
    }

    static TimestampData ts(LocalDateTime t) {
        return TimestampData.fromLocalDateTime(t);
    }

    static final String GEOMETRY_WKB = "AQEAAAAAAAAAAADwPwAAAAAAAABA"; // POINT(1 2)

    /**
     * name, the column's Connect schema (without {@code field}), its JSON value, the Flink type
     * expected from the schema (and declared without it), the internal value expected.
     */
    static Stream<Arguments> types() {
        String nines = "9".repeat(38);
        return Stream.of(
                Arguments.of(
                        "Decimal numeric(10,2) negative",
                        "{'type':'bytes','optional':true,'name':'org.apache.kafka.connect.data.Decimal',"
                                + "'version':1,'parameters':{'scale':'2','connect.decimal.precision':'10'}}",
                        "'" + unscaled("-1234") + "'",
                        "DECIMAL(10, 2)",
                        dec("-12.34", 10, 2)),
                Arguments.of(
                        "Decimal numeric(38,0) 38 digits",
                        "{'type':'bytes','optional':true,'name':'org.apache.kafka.connect.data.Decimal',"
                                + "'parameters':{'scale':'0','connect.decimal.precision':'38'}}",
                        "'" + unscaled(nines) + "'",
                        "DECIMAL(38, 0)",
                        dec(nines, 38, 0)),
                Arguments.of(
                        "Decimal numeric(38,10) negative 38 digits",
                        "{'type':'bytes','optional':true,'name':'org.apache.kafka.connect.data.Decimal',"
                                + "'parameters':{'scale':'10','connect.decimal.precision':'38'}}",
                        "'" + unscaled("-" + nines) + "'",
                        "DECIMAL(38, 10)",
                        dec("-" + "9".repeat(28) + "." + "9".repeat(10), 38, 10)),
                Arguments.of(
                        "VariableScaleDecimal numeric",
                        "{'type':'struct','optional':true,'name':'io.debezium.data.VariableScaleDecimal',"
                                + "'fields':[{'type':'int32','optional':false,'field':'scale'},"
                                + "{'type':'bytes','optional':false,'field':'value'}]}",
                        "{'scale':3,'value':'" + unscaled("-12345") + "'}",
                        "DECIMAL(38, 18)",
                        dec("-12.345", 38, 18)),
                Arguments.of(
                        "Date",
                        "{'type':'int32','optional':true,'name':'io.debezium.time.Date'}",
                        "19000",
                        "DATE",
                        19000),
                Arguments.of(
                        "Time time(3)",
                        "{'type':'int32','optional':true,'name':'io.debezium.time.Time'}",
                        "3723004",
                        "TIME(3)",
                        3723004),
                Arguments.of(
                        "MicroTime time(6)",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.MicroTime'}",
                        "3723004005",
                        "BIGINT",
                        3723004005L),
                Arguments.of(
                        "NanoTime",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.NanoTime'}",
                        "3723004005006",
                        "BIGINT",
                        3723004005006L),
                Arguments.of(
                        "Timestamp timestamp(3)",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.Timestamp'}",
                        "1796008641882",
                        "TIMESTAMP(3)",
                        TimestampData.fromEpochMillis(1796008641882L)),
                Arguments.of(
                        "MicroTimestamp timestamp(6)",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.MicroTimestamp'}",
                        "1796008641882801",
                        "TIMESTAMP(6)",
                        TimestampData.fromEpochMillis(1796008641882L, 801_000)),
                Arguments.of(
                        "MicroTimestamp before 1970",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.MicroTimestamp'}",
                        "-1",
                        "TIMESTAMP(6)",
                        ts(LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000))),
                Arguments.of(
                        "NanoTimestamp",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.NanoTimestamp'}",
                        "1796008641882801123",
                        "TIMESTAMP(9)",
                        TimestampData.fromEpochMillis(1796008641882L, 801_123)),
                Arguments.of(
                        "MicroTimestamp +infinity",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.MicroTimestamp'}",
                        "9223372036825200000",
                        "TIMESTAMP(6)",
                        ts(LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000))),
                Arguments.of(
                        "MicroTimestamp -infinity",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.MicroTimestamp'}",
                        "-9223372036832400000",
                        "TIMESTAMP(6)",
                        ts(LocalDateTime.of(1, 1, 1, 0, 0))),
                Arguments.of(
                        "Timestamp +infinity",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.Timestamp'}",
                        "9223372036825200000",
                        "TIMESTAMP(3)",
                        ts(LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_000_000))),
                Arguments.of(
                        "ZonedTimestamp timestamptz",
                        "{'type':'string','optional':true,'name':'io.debezium.time.ZonedTimestamp'}",
                        "'2026-11-30T03:17:21.882801Z'",
                        "TIMESTAMP_LTZ(6)",
                        TimestampData.fromInstant(Instant.parse("2026-11-30T03:17:21.882801Z"))),
                Arguments.of(
                        "ZonedTimestamp infinity",
                        "{'type':'string','optional':true,'name':'io.debezium.time.ZonedTimestamp'}",
                        "'infinity'",
                        "TIMESTAMP_LTZ(6)",
                        ts(LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000))),
                Arguments.of(
                        "ZonedTimestamp -infinity",
                        "{'type':'string','optional':true,'name':'io.debezium.time.ZonedTimestamp'}",
                        "'-infinity'",
                        "TIMESTAMP_LTZ(6)",
                        ts(LocalDateTime.of(1, 1, 1, 0, 0))),
                Arguments.of(
                        "ZonedTime timetz",
                        "{'type':'string','optional':true,'name':'io.debezium.time.ZonedTime'}",
                        "'03:17:21.882801Z'",
                        "STRING",
                        StringData.fromString("03:17:21.882801Z")),
                Arguments.of(
                        "MicroDuration interval",
                        "{'type':'int64','optional':true,'name':'io.debezium.time.MicroDuration'}",
                        "93784000005",
                        "BIGINT",
                        93784000005L),
                Arguments.of(
                        "Interval (interval.handling.mode=string)",
                        "{'type':'string','optional':true,'name':'io.debezium.time.Interval'}",
                        "'P1Y2M3DT4H5M6.78S'",
                        "STRING",
                        StringData.fromString("P1Y2M3DT4H5M6.78S")),
                Arguments.of(
                        "Enum",
                        "{'type':'string','optional':true,'name':'io.debezium.data.Enum',"
                                + "'parameters':{'allowed':'sad,ok,happy'}}",
                        "'happy'",
                        "STRING",
                        StringData.fromString("happy")),
                Arguments.of(
                        "EnumSet",
                        "{'type':'string','optional':true,'name':'io.debezium.data.EnumSet',"
                                + "'parameters':{'allowed':'a,b,c'}}",
                        "'a,c'",
                        "STRING",
                        StringData.fromString("a,c")),
                Arguments.of(
                        "Json jsonb",
                        "{'type':'string','optional':true,'name':'io.debezium.data.Json'}",
                        "'{\\'a\\': [1, 2]}'",
                        "STRING",
                        StringData.fromString("{\"a\": [1, 2]}")),
                Arguments.of(
                        "Uuid",
                        "{'type':'string','optional':true,'name':'io.debezium.data.Uuid'}",
                        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
                        "STRING",
                        StringData.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
                Arguments.of(
                        "Bits bit(10)",
                        "{'type':'bytes','optional':true,'name':'io.debezium.data.Bits',"
                                + "'parameters':{'length':'10'}}",
                        "'BQI='",
                        "BYTES",
                        new byte[] {5, 2}),
                Arguments.of(
                        "bit(1) as boolean",
                        "{'type':'boolean','optional':true}",
                        "true",
                        "BOOLEAN",
                        true),
                Arguments.of(
                        "Geometry",
                        "{'type':'struct','optional':true,'name':'io.debezium.data.geometry.Geometry',"
                                + "'fields':[{'type':'bytes','optional':false,'field':'wkb'},"
                                + "{'type':'int32','optional':true,'field':'srid'}]}",
                        "{'wkb':'" + GEOMETRY_WKB + "','srid':4326}",
                        "ROW<wkb BYTES NOT NULL, srid INT>",
                        GenericRowData.of(Base64.getDecoder().decode(GEOMETRY_WKB), 4326)),
                Arguments.of(
                        "Geography",
                        "{'type':'struct','optional':true,'name':'io.debezium.data.geometry.Geography',"
                                + "'fields':[{'type':'bytes','optional':false,'field':'wkb'},"
                                + "{'type':'int32','optional':true,'field':'srid'}]}",
                        "{'wkb':'" + GEOMETRY_WKB + "','srid':null}",
                        "ROW<wkb BYTES NOT NULL, srid INT>",
                        GenericRowData.of(Base64.getDecoder().decode(GEOMETRY_WKB), null)));
    }

    private static String envelope(String value) {
        return q(
                "{'before':null,'after':{'id':1,'v':"
                        + value
                        + "},'source':{'connector':'postgresql','schema':'public','table':'t',"
                        + "'lsn':42},'op':'c','ts_ms':2000}");
    }

    /** The envelope's {@code before} or {@code after} struct schema: {@code id INT}, then v. */
    private static String image(String field, String columnSchema) {
        return "{'type':'struct','optional':true,'field':'"
                + field
                + "','name':'pg.public.t.Value','fields':["
                + "{'type':'int32','optional':false,'field':'id'},"
                + columnSchema.substring(0, columnSchema.length() - 1)
                + ",'field':'v'}]}";
    }

    private static String wrapped(String columnSchema, String value) {
        return q(
                        "{'schema':{'type':'struct','name':'pg.public.t.Envelope','fields':["
                                + image("before", columnSchema)
                                + ","
                                + image("after", columnSchema)
                                + "]},'payload':")
                + envelope(value)
                + "}";
    }

    /**
     * The data type inferred from the wrapper's {@code after} struct (as {@link SchemaSampler}).
     */
    private static RowType inferred(String line) throws IOException {
        JsonFactory factory = new JsonFactory();
        try (JsonParser p = factory.createParser(line)) {
            p.nextToken();
            while (p.nextToken() != null) {
                if ("schema".equals(p.currentName()) && p.nextToken() != null) {
                    return ConnectSchema.parse(p).field("after").toRowType(true);
                }
            }
        }
        throw new AssertionError("no schema in " + line);
    }

    private Object decodeOne(RowType data, String line) {
        DecoderFlow flow =
                DecoderFlow.builder("t", ChangeRecordFormat.DEBEZIUM_JSON, data)
                        .sourceNames("t")
                        .keys("id")
                        .sequenceBy("source.lsn")
                        .build();
        out.changes.clear();
        new ChangeRecordDecoder(List.of(flow))
                .decode(line.getBytes(StandardCharsets.UTF_8), "t.jsonl", null, 1, NOW, out);
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).hasSize(1);
        return ((GenericRowData) out.changes.get(0)).getField(1);
    }

    private static LogicalType declared(String type) {
        return SchemaSampler.parseColumns("v " + type).getTypeAt(0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void withSchemaWrapper(String name, String schema, String value, String type, Object expected)
            throws IOException {
        String line = wrapped(schema, value);
        RowType data = inferred(line);
        assertThat(data.getTypeAt(1)).isEqualTo(declared(type));
        assertThat(decodeOne(data, line)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void withoutSchemaWrapper(
            String name, String schema, String value, String type, Object expected) {
        RowType data = SchemaSampler.parseColumns("id INT NOT NULL, v " + type);
        assertThat(decodeOne(data, envelope(q(value)))).isEqualTo(expected);
    }

    // ------------------------------------------------------------- declared other than inferred

    @Test
    void variableScaleDecimalTakesADeclaredScale() {
        RowType data = SchemaSampler.parseColumns("id INT NOT NULL, v DECIMAL(38, 2)");
        assertThat(decodeOne(data, envelope(q("{'scale':1,'value':'" + unscaled("125") + "'}"))))
                .isEqualTo(dec("12.50", 38, 2));
    }

    @Test
    void geometryDeclaredAsBytesIsItsWkb() {
        RowType data = SchemaSampler.parseColumns("id INT NOT NULL, v BYTES");
        assertThat(decodeOne(data, envelope(q("{'wkb':'" + GEOMETRY_WKB + "','srid':4326}"))))
                .isEqualTo(Base64.getDecoder().decode(GEOMETRY_WKB));
    }

    @Test
    void dateInfinityStrings() {
        RowType data = SchemaSampler.parseColumns("id INT NOT NULL, v DATE");
        assertThat(decodeOne(data, envelope(q("'infinity'"))))
                .isEqualTo((int) LocalDate.of(9999, 12, 31).toEpochDay());
        assertThat(decodeOne(data, envelope(q("'-infinity'"))))
                .isEqualTo((int) LocalDate.of(1, 1, 1).toEpochDay());
    }

    // ------------------------------------------------------------------ quarantined, with reason

    private RowData quarantinedOne(String columns, String line) {
        DecoderFlow flow =
                DecoderFlow.builder(
                                "t",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns(columns))
                        .sourceNames("t")
                        .keys("id")
                        .sequenceBy("source.lsn")
                        .build();
        out.quarantined.clear();
        new ChangeRecordDecoder(List.of(flow))
                .decode(line.getBytes(StandardCharsets.UTF_8), "t.jsonl", null, 1, NOW, out);
        assertThat(out.changes).isEmpty();
        assertThat(out.quarantined).hasSize(1);
        return out.quarantined.get(0);
    }

    private static RowData typeMismatch(String line, String detail) {
        return QuarantineRecords.of(
                "t",
                "t.jsonl",
                null,
                1,
                line.getBytes(StandardCharsets.UTF_8),
                QuarantineReason.TYPE_MISMATCH,
                detail,
                NOW);
    }

    @Test
    void variableScaleDecimalOverflowIsQuarantinedNeverRounded() {
        String tooFine = envelope(q("{'scale':19,'value':'" + unscaled("1") + "'}"));
        assertThat(quarantinedOne("id INT NOT NULL, v DECIMAL(38, 18)", tooFine))
                .isEqualTo(
                        typeMismatch(
                                tooFine,
                                "column 'v' DECIMAL(38, 18): object {\"scale\":19,\"value\":\"AQ==\"}"
                                        + " has more than 18 fractional digits"));
        String tooLarge =
                envelope(q("{'scale':0,'value':'" + unscaled("1" + "0".repeat(20)) + "'}"));
        assertThat(quarantinedOne("id INT NOT NULL, v DECIMAL(38, 18)", tooLarge))
                .isEqualTo(
                        typeMismatch(
                                tooLarge,
                                "column 'v' DECIMAL(38, 18): object {\"scale\":0,\"value\":\""
                                        + unscaled("1" + "0".repeat(20))
                                        + "\"} exceeds precision 38"));
    }

    @Test
    void microsecondsInATimeColumnAreQuarantinedNeverTruncated() {
        String line = envelope("3723004005");
        assertThat(quarantinedOne("id INT NOT NULL, v TIME(6)", line))
                .isEqualTo(
                        typeMismatch(
                                line,
                                "column 'v' TIME(6): integer 3723004005 has digits below the"
                                        + " millisecond, which TIME cannot hold (Flink's TIME is"
                                        + " milliseconds): declare BIGINT for µs/ns since midnight"));
    }
}

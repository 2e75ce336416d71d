package dev.changeflow.sources.changes;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Debezium's MongoDB envelope (semantics.md A5 "MongoDB documents"): {@code after} / {@code before}
 * are JSON strings holding an Extended JSON document, the key is {@code {"id": "<_id as Extended
 * JSON>"}}, records name {@code source.collection} (not {@code table}). Captures shaped like the
 * connector's documented output (Debezium 2.x/3.x, {@code capture.mode} {@code
 * change_streams_update_full}: updates carry the full {@code after} and an {@code
 * updateDescription}).
 */
class MongoDocumentDecodeTest {
    private static final String COLUMNS =
            "_id BIGINT, first_name STRING, balance DECIMAL(10, 2), created TIMESTAMP(3), ref STRING";

    private final Collected out = new Collected();

    private static DecoderFlow.Builder customers() {
        return DecoderFlow.builder(
                        "customers",
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        SchemaSampler.parseColumns(COLUMNS))
                .sourceNames("inventory.customers")
                .keys("_id")
                .sequenceBy("source.ord")
                .connector("mongodb");
    }

    /** A Debezium MongoDB change event as a capture line (no topic: routed by its source). */
    private static String event(
            long id, String op, String after, String before, String extra, int ord) {
        return "{\"key\":{\"id\":\""
                + id
                + "\"},\"value\":{\"before\":"
                + before
                + ",\"after\":"
                + after
                + extra
                + ",\"source\":{\"version\":\"2.7.3.Final\",\"connector\":\"mongodb\","
                + "\"name\":\"fulfillment\",\"ts_ms\":1558965508000,\"snapshot\":\"false\","
                + "\"db\":\"inventory\",\"sequence\":null,\"rs\":\"rs0\","
                + "\"collection\":\"customers\",\"ord\":"
                + ord
                + ",\"lsid\":null,\"txnNumber\":null,\"wallTime\":1558965508123},\"op\":\""
                + op
                + "\",\"ts_ms\":1558965515240}}";
    }

    /** A JSON string literal holding {@code doc}. */
    private static String str(String doc) {
        return "\"" + doc.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static final String DOC_1004 =
            "{\"_id\": {\"$numberLong\": \"1004\"}, \"first_name\": \"Anne\","
                    + " \"balance\": {\"$numberDecimal\": \"12.30\"},"
                    + " \"created\": {\"$date\": 1558965508123},"
                    + " \"ref\": {\"$oid\": \"596e275826f08b2730779e1f\"}}";

    private static final String DOC_1004_UPDATED =
            "{\"_id\": {\"$numberLong\": \"1004\"}, \"first_name\": \"Anne Marie\","
                    + " \"balance\": {\"$numberDecimal\": \"-0.05\"},"
                    + " \"created\": {\"$date\": {\"$numberLong\": \"1558965508123\"}},"
                    + " \"ref\": {\"$oid\": \"596e275826f08b2730779e1f\"}}";

    private void decode(ChangeRecordDecoder d, String line) {
        d.decode(line.getBytes(StandardCharsets.UTF_8), "mongo.jsonl", null, 1, 0L, out);
    }

    /** Data columns, the 12 metadata columns of {@link #event}, then {@code _source_ord}. */
    private static GenericRowData row(RowKind kind, String op, int ord, Object... data) {
        GenericRowData r = new GenericRowData(kind, 5 + 12 + 1);
        for (int i = 0; i < data.length; i++) {
            r.setField(i, data[i]);
        }
        Object[] meta = {
            StringData.fromString(op),
            1558965515240L,
            null,
            1558965508000L,
            null,
            StringData.fromString("false"),
            StringData.fromString("inventory"),
            null,
            null,
            null,
            null,
            null,
            (long) ord
        };
        for (int i = 0; i < meta.length; i++) {
            r.setField(5 + i, meta[i]);
        }
        return r;
    }

    private static Object[] anne(String name, String balance) {
        return new Object[] {
            1004L,
            StringData.fromString(name),
            DecimalData.fromBigDecimal(new BigDecimal(balance), 10, 2),
            TimestampData.fromEpochMillis(1558965508123L),
            StringData.fromString("596e275826f08b2730779e1f")
        };
    }

    @Test
    void insertUpdateDeleteAndTombstoneGiveExactRows() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(d, event(1004, "c", str(DOC_1004), "null", "", 29));
        decode(
                d,
                event(
                        1004,
                        "u",
                        str(DOC_1004_UPDATED),
                        "null",
                        ",\"updateDescription\":{\"removedFields\":null,"
                                + "\"updatedFields\":"
                                + str("{\"first_name\": \"Anne Marie\"}")
                                + ",\"truncatedArrays\":null}",
                        30));
        // delete: after null, before null (no pre-images): key columns from the record key
        decode(d, event(1004, "d", "null", "null", ",\"updateDescription\":null", 31));
        // the tombstone that follows a delete: nothing
        decode(d, "{\"key\":{\"id\":\"1004\"},\"value\":null}");
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes)
                .containsExactly(
                        row(RowKind.INSERT, "c", 29, anne("Anne", "12.30")),
                        row(RowKind.INSERT, "u", 30, anne("Anne Marie", "-0.05")),
                        row(RowKind.DELETE, "d", 31, 1004L, null, null, null, null));
    }

    /**
     * The row of a partial update: {@code mask} in the {@code _unavailable_columns} column, with
     * the partial-update bit 18 (one past the last of the 18 source columns, {@code
     * AutoCdcSpec.markPartialUpdate}) set.
     */
    private static GenericRowData partial(String op, int ord, int mask, Object... data) {
        GenericRowData r = row(RowKind.INSERT, op, ord, data);
        r.setField(5 + 11, new byte[] {(byte) mask, 0, 0b100});
        return r;
    }

    /**
     * Debezium's change-streams capture without full documents ({@code capture.mode
     * change_streams}): {@code after} null, {@code updateDescription} with the changed fields. The
     * changed columns take their values, removed ones null, the others are marked unavailable (kept
     * from the stored row by the AUTO CDC apply).
     */
    @Test
    void updateDescriptionWithoutFullDocumentMarksUntouchedColumnsUnavailable() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(
                d,
                event(
                        1004,
                        "u",
                        "null",
                        "null",
                        ",\"updateDescription\":{\"removedFields\":[\"ref\"],"
                                + "\"updatedFields\":"
                                + str("{\"first_name\": \"Anne Marie\"}")
                                + ",\"truncatedArrays\":[]}",
                        30));
        assertThat(out.quarantined).isEmpty();
        // balance (2) and created (3) unavailable: mask 0b01100
        assertThat(out.changes)
                .containsExactly(
                        partial("u", 30, 0b01100, 1004L, StringData.fromString("Anne Marie")));
    }

    /** The oplog connector's {@code patch}: {@code $set} / {@code $unset}, or a replacement. */
    @Test
    void oplogPatchSetAndUnsetAndReplacement() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        String set =
                ",\"patch\":"
                        + str(
                                "{\"$v\": 1, \"$set\": {\"balance\": {\"$numberDecimal\": \"7.10\"}},"
                                        + " \"$unset\": {\"first_name\": true}}")
                        + ",\"filter\":"
                        + str("{\"_id\": {\"$numberLong\": \"1004\"}}");
        decode(d, event(1004, "u", "null", "null", set, 31));
        decode(d, event(1004, "u", "null", "null", ",\"patch\":" + str(DOC_1004), 32));
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes)
                .containsExactly(
                        // created (3) and ref (4) unavailable
                        partial(
                                "u",
                                31,
                                0b11000,
                                1004L,
                                null,
                                DecimalData.fromBigDecimal(new BigDecimal("7.10"), 10, 2)),
                        row(RowKind.INSERT, "u", 32, anne("Anne", "12.30")));
    }

    /** Changes the columns cannot express are set aside with PARTIAL_UPDATE, never guessed. */
    @Test
    void nestedFieldsTruncatedArraysAndOtherOperatorsArePartialUpdates() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(
                d,
                event(
                        1004,
                        "u",
                        "null",
                        "null",
                        ",\"updateDescription\":{\"removedFields\":null,\"updatedFields\":"
                                + str("{\"address.city\": \"Oslo\"}")
                                + ",\"truncatedArrays\":null}",
                        33));
        decode(
                d,
                event(
                        1004,
                        "u",
                        "null",
                        "null",
                        ",\"updateDescription\":{\"removedFields\":null,\"updatedFields\":"
                                + str("{}")
                                + ",\"truncatedArrays\":[{\"field\":\"tags\",\"size\":1}]}",
                        34));
        decode(
                d,
                event(
                        1004,
                        "u",
                        "null",
                        "null",
                        ",\"patch\":" + str("{\"$inc\": {\"balance\": 1}}"),
                        35));
        assertThat(out.changes).isEmpty();
        assertThat(
                        out.quarantined.stream()
                                .map(q -> q.getString(5) + ": " + q.getString(6))
                                .collect(java.util.stream.Collectors.toList()))
                .containsExactly(
                        "PARTIAL_UPDATE: MongoDB update changes the nested field 'address.city'"
                                + " without sending the whole top-level value; capture full"
                                + " documents (capture.mode change_streams_update_full)",
                        "PARTIAL_UPDATE: MongoDB update truncates the arrays [tags] without"
                                + " sending their new value; capture full documents"
                                + " (capture.mode change_streams_update_full)",
                        "PARTIAL_UPDATE: MongoDB update operator $inc in 'patch' does not carry"
                                + " the new values; capture full documents");
    }

    /** $timestamp as a (t, i) ROW, regular expressions as /pattern/options, $symbol, $undefined. */
    @Test
    void timestampRegexSymbolAndUndefinedWrappers() {
        DecoderFlow flow =
                DecoderFlow.builder(
                                "events",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns(
                                        "_id BIGINT, ts ROW<t BIGINT, i BIGINT>, re STRING,"
                                                + " legacy STRING, sym STRING, u STRING"))
                        .sourceNames("customers")
                        .keys("_id")
                        .sequenceBy("source.ord")
                        .connector("mongodb")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow));
        String doc =
                "{\"_id\": 7, \"ts\": {\"$timestamp\": {\"t\": 1565545664, \"i\": 3}},"
                        + " \"re\": {\"$regularExpression\": {\"pattern\": \"^a.*\", \"options\": \"i\"}},"
                        + " \"legacy\": {\"$regex\": \"b+\", \"$options\": \"\"},"
                        + " \"sym\": {\"$symbol\": \"s\"}, \"u\": {\"$undefined\": true}}";
        decode(d, event(7, "c", str(doc), "null", "", 1));
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).hasSize(1);
        RowData r = out.changes.get(0);
        RowData ts = r.getRow(1, 2);
        assertThat(new long[] {ts.getLong(0), ts.getLong(1)}).containsExactly(1565545664L, 3L);
        assertThat(r.getString(2).toString()).isEqualTo("/^a.*/i");
        assertThat(r.getString(3).toString()).isEqualTo("/b+/");
        assertThat(r.getString(4).toString()).isEqualTo("s");
        assertThat(r.isNullAt(5)).isTrue();
    }

    @Test
    void deleteWithPreImageReadsTheBeforeString() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(d, event(1004, "d", "null", str(DOC_1004), "", 31));
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes)
                .containsExactly(row(RowKind.DELETE, "d", 31, anne("Anne", "12.30")));
    }

    @Test
    void objectIdKeyOfAKeyOnlyDelete() {
        DecoderFlow flow =
                DecoderFlow.builder(
                                "products",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns("_id STRING, name STRING"))
                        .sourceNames("products")
                        .keys("_id")
                        .sequenceBy("source.ord")
                        .connector("mongodb")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow));
        String line =
                event(0, "d", "null", "null", "", 7)
                        .replace(
                                "{\"id\":\"0\"}",
                                "{\"id\":" + str("{\"$oid\": \"596e275826f08b2730779e1f\"}") + "}")
                        .replace("customers", "products");
        decode(d, line);
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).hasSize(1);
        RowData r = out.changes.get(0);
        assertThat(r.getRowKind()).isEqualTo(RowKind.DELETE);
        assertThat(r.getString(0).toString()).isEqualTo("596e275826f08b2730779e1f");
        assertThat(r.isNullAt(1)).isTrue();
    }

    @Test
    void routesBySourceCollection() {
        DecoderFlow orders =
                DecoderFlow.builder(
                                "orders",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns(COLUMNS))
                        .sourceNames("orders")
                        .keys("_id")
                        .sequenceBy("source.ord")
                        .connector("mongodb")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build(), orders));
        decode(d, event(1004, "c", str(DOC_1004), "null", "", 29)); // inventory.customers
        decode(
                d,
                event(1004, "c", str(DOC_1004), "null", "", 30)
                        .replace("\"collection\":\"customers\"", "\"collection\":\"orders\""));
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changeFlows).containsExactly(0, 1);
    }

    @Test
    void aStringAfterOfAnotherConnectorIsMalformed() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(
                d,
                event(1004, "c", str(DOC_1004), "null", "", 29)
                        .replace("\"connector\":\"mongodb\"", "\"connector\":\"mysql\""));
        assertThat(out.changes).isEmpty();
        assertThat(out.quarantined).hasSize(1);
        RowData q = out.quarantined.get(0);
        assertThat(q.getString(5).toString()).isEqualTo("MALFORMED_JSON");
        assertThat(q.getString(6).toString())
                .isEqualTo(
                        "envelope member 'after' is a string, not an object (a string document is"
                                + " read only for source.connector 'mongodb'; this record's"
                                + " connector is 'mysql')");
    }

    @Test
    void aMongoStringThatIsNotADocumentIsMalformed() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(d, event(1004, "c", str("{\"_id\": 1004, \"first_name\": "), "null", "", 29));
        decode(d, event(1004, "c", str("[1, 2]"), "null", "", 30));
        decode(d, event(1004, "c", str("{\"_id\": {\"$numberLong\": \"x1\"}}"), "null", "", 31));
        assertThat(out.changes).isEmpty();
        assertThat(out.quarantined)
                .extracting(q -> q.getString(5).toString())
                .containsExactly("MALFORMED_JSON", "MALFORMED_JSON", "MALFORMED_JSON");
        assertThat(out.quarantined)
                .extracting(q -> q.getString(6).toString())
                .satisfiesExactly(
                        m ->
                                assertThat(m)
                                        .startsWith(
                                                "envelope member 'after' (MongoDB document) is a"
                                                        + " string that is not a MongoDB Extended"
                                                        + " JSON document: Unexpected end-of-input"),
                        m ->
                                assertThat(m)
                                        .isEqualTo(
                                                "envelope member 'after' (MongoDB document) is a"
                                                        + " string holding array, not a MongoDB"
                                                        + " document (an object)"),
                        m ->
                                assertThat(m)
                                        .isEqualTo(
                                                "envelope member 'after' (MongoDB document):"
                                                        + " $numberLong \"x1\" is not an integer"));
    }

    @Test
    void extendedJsonDateFormsAndIntegers() throws Exception {
        String iso =
                "{\"_id\": 5, \"first_name\": null, \"balance\": {\"$numberDecimal\": \"1E+1\"},"
                        + " \"created\": {\"$date\": \"2019-05-27T13:58:28.123Z\"},"
                        + " \"ref\": \"plain\"}";
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(customers().build()));
        decode(d, event(5, "r", str(iso), "null", "", 1));
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes)
                .containsExactly(
                        row(
                                RowKind.INSERT,
                                "r",
                                1,
                                5L,
                                null,
                                DecimalData.fromBigDecimal(new BigDecimal("10.00"), 10, 2),
                                TimestampData.fromEpochMillis(1558965508123L),
                                StringData.fromString("plain")));
    }
}

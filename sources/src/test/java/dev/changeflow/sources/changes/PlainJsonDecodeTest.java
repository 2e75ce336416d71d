package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Plain JSON records (A5): columns by name, every record an upsert, capture and wrapper forms. */
class PlainJsonDecodeTest {
    static final long NOW = 42L;

    static DecoderFlow.Builder orders() {
        return DecoderFlow.builder(
                        "orders",
                        ChangeRecordFormat.JSON,
                        SchemaSampler.parseColumns("id BIGINT, op STRING, seq BIGINT, note STRING"))
                .keys("id")
                .sequenceBy("seq");
    }

    static byte[] b(String s) {
        return s.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
    }

    static GenericRowData row(long id, String op, Long seq, String note) {
        return GenericRowData.ofKind(
                RowKind.INSERT,
                id,
                op == null ? null : StringData.fromString(op),
                seq,
                note == null ? null : StringData.fromString(note));
    }

    private final Collected out = new Collected();

    private DecodeOutcome decode(ChangeRecordDecoder d, String json, long line) {
        return d.decode(b(json), "in.jsonl", null, line, NOW, out);
    }

    private RowData quarantine(
            String flow, long line, String json, QuarantineReason reason, String detail) {
        return QuarantineRecords.of(flow, "in.jsonl", null, line, b(json), reason, detail, NOW);
    }

    @Test
    void everyRecordIsAnUpsertEvenWithADeleteLikeColumn() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(orders().build()));
        decode(d, "{'id':1,'op':'INSERT','seq':1,'note':'a'}", 1);
        decode(d, "{'op':'DELETE','id':1,'seq':2}", 2);
        assertThat(out.changes)
                .containsExactly(row(1, "INSERT", 1L, "a"), row(1, "DELETE", 2L, null));
    }

    @Test
    void withATruncatePredicateAKeylessRecordPassesOnForFlinkSqlToDecide() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(List.of(orders().truncateEnabled(true).build()));
        decode(d, "{'op':'TRUNCATE','seq':8}", 1);
        decode(d, "{'id':null,'op':'INSERT','seq':9}", 2);
        GenericRowData truncate =
                GenericRowData.ofKind(
                        RowKind.INSERT, null, StringData.fromString("TRUNCATE"), 8L, null);
        GenericRowData nullKey =
                GenericRowData.ofKind(
                        RowKind.INSERT, null, StringData.fromString("INSERT"), 9L, null);
        assertThat(out.changes).containsExactly(truncate, nullKey);
        assertThat(out.quarantined).isEmpty();
    }

    @Test
    void withoutATruncatePredicateAKeylessRecordIsQuarantined() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(orders().build()));
        decode(d, "{'op':'TRUNCATE','seq':8}", 1);
        assertThat(out.changes).isEmpty();
        assertThat(out.quarantined)
                .extracting(r -> r.getString(5).toString())
                .containsExactly("MISSING_COLUMN");
    }

    @Test
    void captureLineRoutesByTopicAndWrapperIsUnwrapped() {
        DecoderFlow a = orders().sourceNames("orders").build();
        DecoderFlow c =
                DecoderFlow.builder(
                                "customers",
                                ChangeRecordFormat.JSON,
                                SchemaSampler.parseColumns("cid INT"))
                        .sourceNames("shop.customers")
                        .appendOnly(true)
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(a, c));
        decode(d, "{'key':null,'value':{'id':5,'seq':1},'topic':'shop.orders'}", 1);
        decode(
                d,
                "{'key':null,'value':{'schema':{'type':'struct'},'payload':{'cid':9}},'topic':'shop.customers'}",
                2);
        decode(d, "{'key':{'id':5},'value':null,'topic':'shop.orders'}", 3);
        assertThat(out.changes)
                .containsExactly(row(5, null, 1L, null), GenericRowData.ofKind(RowKind.INSERT, 9));
        assertThat(out.changeFlows).containsExactly(0, 1);
        assertThat(out.quarantined).isEmpty();
    }

    @Test
    void aRowWithAColumnNamedValueIsNotACaptureLine() {
        DecoderFlow f =
                DecoderFlow.builder(
                                "kv",
                                ChangeRecordFormat.JSON,
                                SchemaSampler.parseColumns("key STRING, value INT"))
                        .keys("key")
                        .sequenceBy("value")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(f));
        d.decode(b("{'key':'k','value':3}"), "in.jsonl", null, 1, NOW, out);
        assertThat(out.changes)
                .containsExactly(
                        GenericRowData.ofKind(RowKind.INSERT, StringData.fromString("k"), 3));
    }

    @Test
    void missingSequenceColumnAndNullSequence() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(orders().build()));
        decode(d, "{'id':1,'note':'a'}", 1);
        decode(d, "{'id':1,'seq':null}", 2);
        decode(d, "{'seq':3}", 3);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "orders",
                                1,
                                "{'id':1,'note':'a'}",
                                QuarantineReason.MISSING_COLUMN,
                                "sequence column 'seq' absent from record"),
                        quarantine(
                                "orders",
                                2,
                                "{'id':1,'seq':null}",
                                QuarantineReason.NULL_SEQUENCE,
                                "sequence column 'seq' is null"),
                        quarantine(
                                "orders",
                                3,
                                "{'seq':3}",
                                QuarantineReason.MISSING_COLUMN,
                                "key column 'id' absent from record"));
    }

    @Test
    void unknownFieldIsASchemaChange() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(orders().onSchemaChange(OnSchemaChange.QUARANTINE).build()));
        decode(d, "{'id':1,'seq':1,'extra':{'a':1}}", 1);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "orders",
                                1,
                                "{'id':1,'seq':1,'extra':{'a':1}}",
                                QuarantineReason.SCHEMA_CHANGED,
                                "table 'orders': fields [extra] are not among the declared columns [id, op, seq, note]"));
    }

    /**
     * S2: the cells of a CSV line are named by its file's header, matched to the columns ignoring
     * case as the vendor's reader does; a header column no column matches is SCHEMA_CHANGED naming
     * the header, not "declared columns" (the columns may come from the first file's header).
     */
    @Test
    void csvHeaderNamesMatchTheColumnsIgnoringCase() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(orders().onSchemaChange(OnSchemaChange.QUARANTINE).build()));
        d.textCells(true);
        decode(d, "{'ID':'1','Op':'upsert','SEQ':'2','note':'a'}", 2);
        assertThat(out.changes).containsExactly(row(1, "upsert", 2L, "a"));
        decode(d, "{'id':'2','seq':'1','Extra':'x'}", 3);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "orders",
                                3,
                                "{'id':'2','seq':'1','Extra':'x'}",
                                QuarantineReason.SCHEMA_CHANGED,
                                "table 'orders': the CSV header's columns [Extra] are not among the"
                                        + " table's columns [id, op, seq, note] (matched ignoring"
                                        + " case)"));
    }

    @Test
    void unknownTopicWithSeveralFlows() {
        DecoderFlow a = orders().sourceNames("orders").build();
        DecoderFlow c =
                DecoderFlow.builder(
                                "c", ChangeRecordFormat.JSON, SchemaSampler.parseColumns("cid INT"))
                        .sourceNames("customers")
                        .appendOnly(true)
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(a, c));
        decode(d, "{'id':1,'seq':1}", 7);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                null,
                                7,
                                "{'id':1,'seq':1}",
                                QuarantineReason.UNKNOWN_TOPIC,
                                "no flow for record (no topic or source.table); flows read [orders, customers]"));
    }

    @Test
    void notNullNonKeyColumnMustBePresent() {
        DecoderFlow f =
                DecoderFlow.builder(
                                "n",
                                ChangeRecordFormat.JSON,
                                SchemaSampler.parseColumns("id INT NOT NULL, v INT NOT NULL"))
                        .keys("id")
                        .sequenceBy("id")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(f));
        decode(d, "{'id':1}", 1);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "n",
                                1,
                                "{'id':1}",
                                QuarantineReason.TYPE_MISMATCH,
                                "column 'v' INT NOT NULL: null or absent"));
    }
}

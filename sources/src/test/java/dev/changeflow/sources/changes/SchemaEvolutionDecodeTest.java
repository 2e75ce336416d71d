package dev.changeflow.sources.changes;

import org.apache.flink.table.data.RowData;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Columns absent from a Debezium image (semantics.md A7 item 1): a change written before a column
 * was added, or after the source dropped it, decodes with null there instead of being quarantined
 * as {@code MISSING_COLUMN} — with and without the schema wrapper, for inserts and updates,
 * distinct from a present JSON null only in that KEYS columns stay {@code MISSING_COLUMN} when
 * absent and {@code NULL_KEY} when null.
 */
class SchemaEvolutionDecodeTest {
    private static final long NOW = 1_700_000_000_000L;

    private final Collected out = new Collected();

    private static DecoderFlow flow(OnSchemaChange onSchemaChange) {
        return DecoderFlow.builder(
                        "items",
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        SchemaSampler.parseColumns("id INT, region STRING, v INT, n BIGINT"))
                .sourceNames("items")
                .keys("id")
                .onSchemaChange(onSchemaChange)
                .build();
    }

    private static String q(String s) {
        return s.replace('\'', '"');
    }

    private static String ev(String op, String after, long lsn) {
        return q(
                "{'before':null,'after':"
                        + after
                        + ",'source':{'connector':'postgresql','schema':'shop','table':'items',"
                        + "'lsn':"
                        + lsn
                        + "},'op':'"
                        + op
                        + "','ts_ms':1}");
    }

    /** The envelope in Kafka Connect's schema wrapper whose after struct lists {@code fields}. */
    private static String wrapped(String envelope, String fields) {
        return q(
                        "{'schema':{'type':'struct','fields':[{'type':'struct','field':'before',"
                                + "'optional':true,'fields':[]},{'type':'struct','field':'after',"
                                + "'optional':true,'fields':["
                                + fields
                                + "]}]},'payload':")
                + envelope
                + "}";
    }

    private void decode(DecoderFlow flow, String... lines) {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow));
        long offset = 1;
        for (String line : lines) {
            d.decode(
                    line.getBytes(StandardCharsets.UTF_8), "items.jsonl", null, offset++, NOW, out);
        }
    }

    /** The data columns (id, region, v, n) and the LSN of each decoded change. */
    private List<String> changes() {
        List<String> rows = new ArrayList<>();
        for (RowData r : out.changes) {
            rows.add(
                    r.getRowKind().shortString()
                            + "("
                            + (r.isNullAt(0) ? "null" : r.getInt(0))
                            + ","
                            + (r.isNullAt(1) ? "null" : r.getString(1))
                            + ","
                            + (r.isNullAt(2) ? "null" : r.getInt(2))
                            + ","
                            + (r.isNullAt(3) ? "null" : r.getLong(3))
                            + ") lsn "
                            + r.getLong(6));
        }
        return rows;
    }

    private List<String> quarantined() {
        List<String> rows = new ArrayList<>();
        for (RowData r : out.quarantined) {
            rows.add(r.getString(5) + ": " + r.getString(6));
        }
        return rows;
    }

    @Test
    void absentColumnsAreNullInInsertsAndUpdatesUnderEveryPolicy() {
        for (OnSchemaChange policy : OnSchemaChange.values()) {
            out.changes.clear();
            decode(
                    flow(policy),
                    ev("c", "{'id':1,'region':'a','v':1}", 100), // before n was added
                    ev("u", "{'id':1,'region':'b','v':2,'n':20}", 101),
                    ev("u", "{'id':1,'v':3,'n':30}", 102), // after region was dropped
                    ev("c", "{'id':2,'v':4}", 103),
                    ev("u", "{'id':2,'region':null,'v':5,'n':null}", 104)); // present nulls
            assertThat(changes())
                    .as(policy.toString())
                    .containsExactly(
                            "+I(1,a,1,null) lsn 100",
                            "+I(1,b,2,20) lsn 101",
                            "+I(1,null,3,30) lsn 102",
                            "+I(2,null,4,null) lsn 103",
                            "+I(2,null,5,null) lsn 104");
            assertThat(out.quarantined).as(policy.toString()).isEmpty();
        }
    }

    @Test
    void absentColumnsAreNullWithTheSchemaWrapperListingOnlyTheSourceColumns() {
        String before =
                "{'type':'int32','field':'id','optional':false},"
                        + "{'type':'string','field':'region','optional':true},"
                        + "{'type':'int32','field':'v','optional':true}";
        String dropped =
                "{'type':'int32','field':'id','optional':false},"
                        + "{'type':'int32','field':'v','optional':true},"
                        + "{'type':'int64','field':'n','optional':true}";
        decode(
                flow(OnSchemaChange.ADD_COLUMNS),
                wrapped(ev("c", "{'id':1,'region':'a','v':1}", 100), before),
                wrapped(ev("u", "{'id':1,'v':3,'n':30}", 102), dropped));
        assertThat(changes()).containsExactly("+I(1,a,1,null) lsn 100", "+I(1,null,3,30) lsn 102");
        assertThat(out.quarantined).isEmpty();
    }

    @Test
    void anAbsentKeyStaysMissingColumnAndANullKeyNullKey() {
        decode(
                flow(OnSchemaChange.ADD_COLUMNS),
                ev("u", "{'region':'a','v':1}", 100),
                ev("u", "{'id':null,'region':'a','v':1}", 101),
                ev("u", "{'id':3}", 102));
        assertThat(quarantined())
                .containsExactly(
                        "MISSING_COLUMN: key column 'id' absent from after",
                        "NULL_KEY: key column 'id' is null");
        assertThat(changes()).containsExactly("+I(3,null,null,null) lsn 102");
    }

    @Test
    void underAddColumnsAWrapperWideningAColumnStopsTheJobBeforeTheRecordApplies() {
        String widened =
                "{'type':'int64','field':'id','optional':false},"
                        + "{'type':'string','field':'region','optional':true},"
                        + "{'type':'int64','field':'v','optional':true},"
                        + "{'type':'int64','field':'n','optional':true}";
        String line = wrapped(ev("u", "{'id':1,'region':'a','v':3000000000,'n':1}", 100), widened);
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow(OnSchemaChange.ADD_COLUMNS)));
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> d.decode(bytes, "items.jsonl", null, 7, NOW, out))
                .isInstanceOfSatisfying(
                        SchemaChangeException.class,
                        e -> {
                            // the key id is not widened (its state is bound to its type)
                            assertThat(SchemaChangeException.describe(e.widenedColumns()))
                                    .isEqualTo("v BIGINT");
                            assertThat(e.newColumns()).isEmpty();
                            assertThat(e.offset()).isEqualTo(7);
                        })
                .hasMessageContaining(
                        "table 'items' has widened column(s) v BIGINT (on-schema-change ="
                                + " add-columns: the table is evolved and the job resumes)");
        assertThat(out.total()).isZero();
        // under quarantine the column keeps its type: a value beyond it is TYPE_MISMATCH
        decode(flow(OnSchemaChange.QUARANTINE), line);
        assertThat(quarantined())
                .containsExactly("TYPE_MISMATCH: column 'v' INT: integer 3000000000 out of range");
    }

    private static DecoderFlow typedFlow(OnSchemaChange onSchemaChange) {
        return DecoderFlow.builder(
                        "items",
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        SchemaSampler.parseColumns(
                                "id INT, v INT, f FLOAT, d DECIMAL(10, 2), seq INT"))
                .sourceNames("items")
                .keys("id")
                .sequenceBy("seq")
                .onSchemaChange(onSchemaChange)
                .build();
    }

    /** The SchemaChangeException that decoding {@code after} raises, as "columns @ offset". */
    private String widenedBy(DecoderFlow flow, String after) {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow));
        byte[] bytes = ev("u", after, 100).getBytes(StandardCharsets.UTF_8);
        try {
            d.decode(bytes, "items.jsonl", null, 9, NOW, out);
        } catch (SchemaChangeException e) {
            assertThat(e.newColumns()).isEmpty();
            return SchemaChangeException.describe(e.widenedColumns()) + " @ " + e.offset();
        }
        return "decoded";
    }

    /**
     * A7 item 4 without the schema wrapper: under add-columns the value itself shows the wider type
     * — an INT beyond 32 bits (BIGINT), a FLOAT value a FLOAT cannot hold exactly (DOUBLE), a
     * DECIMAL beyond its precision at its scale (DECIMAL(18, s), or (38, s) beyond 18 digits) — and
     * the job stops before the record applies, so the table widens and nothing is lost. Values a
     * FLOAT holds (0.1 as Debezium writes a float32) decode as before; KEYS and SEQUENCE BY columns
     * and a scale change stay TYPE_MISMATCH, as does every overflow under quarantine.
     */
    @Test
    void withoutTheWrapperAValueBeyondItsColumnWidensItUnderAddColumns() {
        DecoderFlow add = typedFlow(OnSchemaChange.ADD_COLUMNS);
        assertThat(widenedBy(add, "{'id':1,'v':3000000000,'f':1,'d':1,'seq':1}"))
                .isEqualTo("v BIGINT @ 9");
        assertThat(widenedBy(add, "{'id':1,'v':1,'f':0.123456789012,'d':1,'seq':1}"))
                .isEqualTo("f DOUBLE @ 9");
        assertThat(widenedBy(add, "{'id':1,'v':1,'f':16777217,'d':1,'seq':1}"))
                .isEqualTo("f DOUBLE @ 9");
        assertThat(widenedBy(add, "{'id':1,'v':1,'f':1,'d':123456789012.25,'seq':1}"))
                .isEqualTo("d DECIMAL(18, 2) @ 9");
        assertThat(widenedBy(add, "{'id':1,'v':1,'f':1,'d':12345678901234567890.25,'seq':1}"))
                .isEqualTo("d DECIMAL(38, 2) @ 9");
        assertThat(out.total()).isZero();
        // values the columns hold decode as before, 0.1 and 3.4028235E38 included
        assertThat(widenedBy(add, "{'id':1,'v':2147483647,'f':0.1,'d':12345678.99,'seq':1}"))
                .isEqualTo("decoded");
        assertThat(widenedBy(add, "{'id':2,'v':-2147483648,'f':3.4028235E38,'d':-1,'seq':2}"))
                .isEqualTo("decoded");
        assertThat(out.changes).hasSize(2);
        assertThat(out.changes.get(0).getFloat(2)).isEqualTo(0.1f);
        assertThat(out.changes.get(1).getFloat(2)).isEqualTo(Float.MAX_VALUE);
        out.changes.clear();
        // keys, sequence, a scale change: quarantined, under add-columns too
        assertThat(widenedBy(add, "{'id':3000000000,'v':1,'f':1,'d':1,'seq':1}"))
                .isEqualTo("decoded");
        assertThat(widenedBy(add, "{'id':1,'v':1,'f':1,'d':1,'seq':3000000000}"))
                .isEqualTo("decoded");
        assertThat(widenedBy(add, "{'id':1,'v':1,'f':1,'d':1.125,'seq':1}")).isEqualTo("decoded");
        // under quarantine: TYPE_MISMATCH, and a FLOAT rounds as a FLOAT column does
        DecoderFlow quarantine = typedFlow(OnSchemaChange.QUARANTINE);
        assertThat(widenedBy(quarantine, "{'id':1,'v':3000000000,'f':1,'d':1,'seq':1}"))
                .isEqualTo("decoded");
        assertThat(widenedBy(quarantine, "{'id':1,'v':1,'f':0.123456789012,'d':1,'seq':1}"))
                .isEqualTo("decoded");
        assertThat(out.changes).hasSize(1);
        assertThat(out.changes.get(0).getFloat(2)).isEqualTo(0.12345679f);
        assertThat(quarantined())
                .containsExactly(
                        "TYPE_MISMATCH: column 'id' INT: integer 3000000000 out of range",
                        "TYPE_MISMATCH: column 'seq' INT: integer 3000000000 out of range",
                        "TYPE_MISMATCH: column 'd' DECIMAL(10, 2): decimal number 1.125 has more than 2"
                                + " fractional digits",
                        "TYPE_MISMATCH: column 'v' INT: integer 3000000000 out of range");
    }
}

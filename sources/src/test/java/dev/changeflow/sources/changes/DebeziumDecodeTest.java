package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Debezium JSON through {@link ChangeRecordDecoder}: every op, forms, and every reason code (A5,
 * K5).
 */
class DebeziumDecodeTest {
    static final String TOPIC = "pg.public.pgbench_accounts";
    static final long NOW = 1_700_000_000_000L;

    static DecoderFlow.Builder accounts() {
        return DecoderFlow.builder(
                        "accounts",
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        SchemaSampler.parseColumns("aid INT, bid INT, abalance INT, filler STRING"))
                .sourceNames("pgbench_accounts")
                .keys("aid")
                .sequenceBy("source.lsn");
    }

    static DecoderFlow history() {
        return DecoderFlow.builder(
                        "history",
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        SchemaSampler.parseColumns(
                                "tid INT, bid INT, aid INT, delta INT, mtime TIMESTAMP(6), filler STRING"))
                .sourceNames("pgbench_history")
                .appendOnly(true)
                .sequenceBy("source.lsn")
                .build();
    }

    static String q(String s) {
        return s.replace('\'', '"');
    }

    static String source(String table, long lsn) {
        return q(
                "{'version':'3.6.1.Final','connector':'postgresql','name':'pg','ts_ms':1000,'snapshot':'false',"
                        + "'db':'pgbench','sequence':'[null,\\'1\\']','schema':'public','table':'"
                        + table
                        + "','txId':7,'lsn':"
                        + lsn
                        + ",'xmin':null}");
    }

    static String envelope(String op, String before, String after, long lsn) {
        return envelope(op, before, after, source("pgbench_accounts", lsn));
    }

    static String envelope(String op, String before, String after, String source) {
        return q(
                "{'before':"
                        + before
                        + ",'after':"
                        + after
                        + ",'source':"
                        + source
                        + ",'transaction':null,'op':'"
                        + op
                        + "','ts_ms':2000,'ts_us':2000000}");
    }

    static String capture(String key, String value) {
        return q("{'key':" + key + ",'value':" + value + ",'topic':'" + TOPIC + "'}");
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The expected source row: data values then the 12 metadata columns for op and lsn (the last,
     * {@code _unavailable_columns}, null).
     */
    static GenericRowData row(
            RowKind kind,
            Object aid,
            Object bid,
            Object abalance,
            String filler,
            String op,
            Long lsn) {
        GenericRowData r = new GenericRowData(kind, 16);
        r.setField(0, aid);
        r.setField(1, bid);
        r.setField(2, abalance);
        r.setField(3, filler == null ? null : StringData.fromString(filler));
        r.setField(4, StringData.fromString(op));
        r.setField(5, 2000L);
        r.setField(6, lsn);
        r.setField(7, 1000L);
        r.setField(8, 7L);
        r.setField(9, StringData.fromString("false"));
        r.setField(10, StringData.fromString("pgbench"));
        r.setField(11, StringData.fromString("public"));
        r.setField(12, StringData.fromString("pgbench_accounts"));
        r.setField(13, null);
        r.setField(14, null);
        return r;
    }

    static RowData quarantine(
            String flow, long offset, String raw, QuarantineReason reason, String detail) {
        return QuarantineRecords.of(
                flow, "capture.jsonl", null, offset, b(raw), reason, detail, NOW);
    }

    private final Collected out = new Collected();

    private DecodeOutcome decode(ChangeRecordDecoder d, String line, long offset) {
        return d.decode(b(line), "capture.jsonl", null, offset, NOW, out);
    }

    private DecodeOutcome decode(String line) {
        return decode(new ChangeRecordDecoder(List.of(accounts().build())), line, 1);
    }

    // ---------------------------------------------------------------- operations

    @Test
    void createAndSnapshotReadAreUpsertsOfAfter() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        assertThat(
                        decode(
                                d,
                                capture(
                                        "{'aid':1}",
                                        envelope(
                                                "r",
                                                "null",
                                                "{'aid':1,'bid':1,'abalance':0,'filler':'  '}",
                                                10)),
                                1))
                .isEqualTo(DecodeOutcome.CHANGE);
        assertThat(
                        decode(
                                d,
                                capture(
                                        "{'aid':2}",
                                        envelope(
                                                "c",
                                                "null",
                                                "{'aid':2,'bid':1,'abalance':5,'filler':null}",
                                                11)),
                                2))
                .isEqualTo(DecodeOutcome.CHANGE);
        assertThat(out.changes)
                .containsExactly(
                        row(RowKind.INSERT, 1, 1, 0, "  ", "r", 10L),
                        row(RowKind.INSERT, 2, 1, 5, null, "c", 11L));
        assertThat(out.changeFlows).containsExactly(0, 0);
    }

    @Test
    void updateWithAndWithoutBeforeIsAnUpsertOfAfter() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        decode(
                d,
                capture(
                        "{'aid':1}",
                        envelope(
                                "u",
                                "{'aid':1,'bid':1,'abalance':0,'filler':null}",
                                "{'aid':1,'bid':1,'abalance':-40,'filler':null}",
                                20)),
                1);
        // K5: an update without a before image works
        decode(
                d,
                capture(
                        "{'aid':1}",
                        envelope(
                                "u", "null", "{'aid':1,'bid':1,'abalance':-50,'filler':null}", 21)),
                2);
        assertThat(out.changes)
                .containsExactly(
                        row(RowKind.INSERT, 1, 1, -40, null, "u", 20L),
                        row(RowKind.INSERT, 1, 1, -50, null, "u", 21L));
        assertThat(out.quarantined).isEmpty();
    }

    @Test
    void deleteTakesColumnsFromBefore() {
        decode(
                capture(
                        "{'aid':3}",
                        envelope("d", "{'aid':3,'bid':1,'abalance':9,'filler':'x'}", "null", 30)));
        assertThat(out.changes).containsExactly(row(RowKind.DELETE, 3, 1, 9, "x", "d", 30L));
    }

    @Test
    void deleteWithoutBeforeTakesTheKeyFromTheRecordKey() {
        decode(capture("{'aid':4}", envelope("d", "null", "null", 31)));
        assertThat(out.changes).containsExactly(row(RowKind.DELETE, 4, null, null, null, "d", 31L));
    }

    @Test
    void deleteWithoutBeforeTakesTheKeyFromASchemaWrappedKafkaKey() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        String key =
                q(
                        "{'schema':{'type':'struct','fields':[{'type':'int32','optional':false,'field':'aid'}]},'payload':{'aid':5}}");
        DecodeOutcome o =
                d.decode(b(key), b(envelope("d", "null", "null", 32)), TOPIC, 3, 77L, NOW, out);
        assertThat(o).isEqualTo(DecodeOutcome.CHANGE);
        assertThat(out.changes).containsExactly(row(RowKind.DELETE, 5, null, null, null, "d", 32L));
    }

    @Test
    void tombstonesAreSkippedSilently() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        assertThat(decode(d, q("{'key':{'aid':4},'value':null,'topic':'" + TOPIC + "'}"), 1))
                .isEqualTo(DecodeOutcome.TOMBSTONE_SKIPPED);
        assertThat(d.decode(b("{\"aid\":4}"), null, TOPIC, 0, 5L, NOW, out))
                .isEqualTo(DecodeOutcome.TOMBSTONE_SKIPPED);
        assertThat(d.decode(null, "capture.jsonl", null, 2, NOW, out))
                .isEqualTo(DecodeOutcome.TOMBSTONE_SKIPPED);
        assertThat(decode(d, q("{'schema':null,'payload':null}"), 3))
                .isEqualTo(DecodeOutcome.TOMBSTONE_SKIPPED);
        assertThat(out.total()).isZero();
    }

    @Test
    void truncateIsEmittedAtItsLsnWhenEnabled() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(List.of(accounts().truncateEnabled(true).build()));
        assertThat(decode(d, capture("null", envelope("t", "null", "null", 40)), 1))
                .isEqualTo(DecodeOutcome.TRUNCATE);
        assertThat(out.truncates)
                .containsExactly(row(RowKind.INSERT, null, null, null, null, "t", 40L));
        assertThat(out.truncateFlows).containsExactly(0);
    }

    @Test
    void truncateNotEnabledIsQuarantined() {
        String line = capture("null", envelope("t", "null", "null", 40));
        assertThat(decode(line)).isEqualTo(DecodeOutcome.QUARANTINED);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.TRUNCATE_NOT_ENABLED,
                                "truncate of table 'pgbench_accounts' at source.lsn 40; flow 'accounts' does not enable TRUNCATE"));
    }

    @Test
    void appendOnlyFlowAppendsCreatesAndQuarantinesUpdates() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build(), history()));
        String after =
                "{'tid':4,'bid':1,'aid':71926,'delta':-4018,'mtime':1796008641882801,'filler':null}";
        String c =
                q(
                        "{'key':null,'value':"
                                + envelope("c", "null", after, source("pgbench_history", 50))
                                + ",'topic':'pg.public.pgbench_history'}");
        String u =
                q(
                        "{'key':null,'value':"
                                + envelope("u", "null", after, source("pgbench_history", 51))
                                + ",'topic':'pg.public.pgbench_history'}");
        decode(d, c, 1);
        decode(d, u, 2);
        GenericRowData expected = new GenericRowData(RowKind.INSERT, 18);
        expected.setField(0, 4);
        expected.setField(1, 1);
        expected.setField(2, 71926);
        expected.setField(3, -4018);
        expected.setField(4, TimestampData.fromEpochMillis(1796008641882L, 801_000));
        expected.setField(5, null);
        Object[] meta = {
            StringData.fromString("c"),
            2000L,
            50L,
            1000L,
            7L,
            StringData.fromString("false"),
            StringData.fromString("pgbench"),
            StringData.fromString("public"),
            StringData.fromString("pgbench_history"),
            null,
            null
        };
        for (int i = 0; i < meta.length; i++) {
            expected.setField(6 + i, meta[i]);
        }
        assertThat(out.changes).containsExactly(expected);
        assertThat(out.changeFlows).containsExactly(1);
        assertThat(out.quarantined)
                .containsExactly(
                        QuarantineRecords.of(
                                "history",
                                "capture.jsonl",
                                null,
                                2,
                                b(u),
                                QuarantineReason.UNKNOWN_OP,
                                "op on append-only flow 'history' (no KEYS): only c and r records can be appended",
                                NOW));
    }

    @Test
    void bareEnvelopeAndSchemaWrapperDecodeLikeTheCaptureLine() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        String env = envelope("c", "null", "{'aid':7,'bid':2,'abalance':3,'filler':'f'}", 60);
        String wrapped =
                q(
                        "{'schema':{'type':'struct','fields':[],'name':'x.Envelope'},'payload':"
                                + env
                                + "}");
        decode(d, env, 1);
        decode(d, wrapped, 2);
        decode(d, capture("{'aid':7}", wrapped), 3);
        GenericRowData expected = row(RowKind.INSERT, 7, 2, 3, "f", "c", 60L);
        assertThat(out.changes).containsExactly(expected, expected, expected);
    }

    @Test
    void routesBySourceTableThenTopicSegment() {
        DecoderFlow other =
                DecoderFlow.builder(
                                "tellers",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns("tid INT"))
                        .sourceNames("pgbench_tellers")
                        .keys("tid")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build(), other));
        // no topic: source.table routes
        decode(d, envelope("c", "null", "{'tid':1}", source("pgbench_tellers", 1)), 1);
        // no source.table: the topic's last segment routes
        d.decode(
                null,
                b(q("{'op':'c','after':{'tid':2},'source':{'lsn':2}}")),
                "pg.public.pgbench_tellers",
                0,
                1,
                NOW,
                out);
        assertThat(out.changeFlows).containsExactly(1, 1);
        assertThat(out.changes).extracting(r -> r.getInt(0)).containsExactly(1, 2);
    }

    @Test
    void nestedColumnsOfABeforeImageAndOfAKafkaValueDecode() {
        DecoderFlow f =
                DecoderFlow.builder(
                                "n",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns(
                                        "id INT, r ROW<a INT, tags ARRAY<STRING>>"))
                        .keys("id")
                        .build();
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(f));
        String before = "{'id':1,'r':{'a':2,'tags':['x','y']}}";
        decode(d, capture("{'id':1}", envelope("d", before, "null", 5)), 1);
        d.decode(null, b(q(envelope("c", "null", before, 6))), "t", 0, 0L, NOW, out);
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).hasSize(2);
        for (RowData r : out.changes) {
            RowData nested = r.getRow(1, 2);
            assertThat(nested.getInt(0)).isEqualTo(2);
            assertThat(nested.getArray(1).getString(1).toString()).isEqualTo("y");
        }
    }

    // ---------------------------------------------------------------- reason codes

    @Test
    void notJson() {
        decode("hello world");
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                "hello world",
                                QuarantineReason.NOT_JSON,
                                "record does not start like JSON: first byte 0x68 'h'"));
    }

    @Test
    void emptyLineIsNotJson() {
        decode("   ");
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts", 1, "   ", QuarantineReason.NOT_JSON, "blank record"));
    }

    @Test
    void malformedJsonTruncatedRecord() {
        String line = capture("{'aid':1}", envelope("c", "null", "{'aid':1}", 1)).substring(0, 60);
        decode(line);
        assertThat(out.quarantined).hasSize(1);
        RowData r = out.quarantined.get(0);
        assertThat(r.getString(5).toString()).isEqualTo("MALFORMED_JSON");
        assertThat(r.getString(6).toString())
                .startsWith("JSON parse error: Unexpected end-of-input")
                .endsWith(" at byte 60");
        assertThat(r.getString(0).toString()).isEqualTo("accounts");
        assertThat(r.getLong(3)).isEqualTo(1L);
        assertThat(r.getBinary(4)).isEqualTo(b(line));
    }

    @Test
    void malformedJsonTrailingContentAndNonObject() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        decode(d, "{\"op\":\"c\"} x", 1);
        decode(d, "[1,2]", 2);
        assertThat(out.quarantined)
                .extracting(r -> r.getString(6).toString())
                .containsExactly(
                        "JSON parse error: Unrecognized token 'x': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false') at byte 12",
                        "expected a JSON object, found an array");
        assertThat(out.quarantined)
                .extracting(r -> r.getString(5).toString())
                .containsExactly("MALFORMED_JSON", "MALFORMED_JSON");
    }

    @Test
    void typeMismatchNamesColumnTypeAndValue() {
        String line =
                capture(
                        "{'aid':1}",
                        envelope(
                                "c",
                                "null",
                                "{'aid':1,'bid':1,'abalance':3000000000,'filler':null}",
                                1));
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.TYPE_MISMATCH,
                                "column 'abalance' INT: integer 3000000000 out of range"));
    }

    @Test
    void typeMismatchInEnvelopeField() {
        String line =
                capture(
                        "{'aid':1}",
                        q(
                                "{'after':{'aid':1},'source':{'table':'pgbench_accounts','lsn':'abc'},'op':'c'}"));
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.TYPE_MISMATCH,
                                "envelope field 'source.lsn': \"abc\" not an integer"));
    }

    @Test
    void missingKeyColumn() {
        String line =
                capture(
                        "{'aid':1}",
                        envelope("c", "null", "{'bid':1,'abalance':0,'filler':null}", 1));
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.MISSING_COLUMN,
                                "key column 'aid' absent from after"));
    }

    @Test
    void nullKey() {
        String line =
                capture(
                        "{'aid':null}",
                        envelope(
                                "c", "null", "{'aid':null,'bid':1,'abalance':0,'filler':null}", 1));
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.NULL_KEY,
                                "key column 'aid' is null"));
    }

    @Test
    void deleteWithoutBeforeAndWithoutKeyIsNullKey() {
        String line = capture("null", envelope("d", "null", "null", 1));
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.NULL_KEY,
                                "delete without before image and without record key"));
    }

    @Test
    void nullSequence() {
        String line =
                capture(
                        "{'aid':1}",
                        q(
                                "{'after':{'aid':1,'bid':1,'abalance':0,'filler':null},"
                                        + "'source':{'table':'pgbench_accounts','lsn':null},'op':'c','ts_ms':2000}"));
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.NULL_SEQUENCE,
                                "sequence column '_source_lsn' is null"));
    }

    @Test
    void unknownOpAndNullAfter() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        String x = capture("{'aid':1}", envelope("x", "null", "{'aid':1}", 1));
        String nullAfter = capture("{'aid':1}", envelope("u", "{'aid':1}", "null", 1));
        String noOp =
                capture(
                        "{'aid':1}",
                        q("{'after':{'aid':1},'source':{'table':'pgbench_accounts','lsn':1}}"));
        decode(d, x, 1);
        decode(d, nullAfter, 2);
        decode(d, noOp, 3);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                x,
                                QuarantineReason.UNKNOWN_OP,
                                "op 'x' is not one of c, r, u, d, t"),
                        quarantine(
                                "accounts",
                                2,
                                nullAfter,
                                QuarantineReason.UNKNOWN_OP,
                                "op 'u' with null after"),
                        quarantine(
                                "accounts",
                                3,
                                noOp,
                                QuarantineReason.UNKNOWN_OP,
                                "missing op (not a Debezium change event)"));
    }

    @Test
    void recordTooLargeBeforeParsingAndPerFlow() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(List.of(accounts().maxRecordBytes(100).build()));
        String line =
                capture(
                        "{'aid':1}",
                        envelope("c", "null", "{'aid':1,'bid':1,'abalance':0,'filler':null}", 1));
        decode(d, line, 9);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                9,
                                line,
                                QuarantineReason.RECORD_TOO_LARGE,
                                "record of "
                                        + line.length()
                                        + " bytes exceeds max-record-bytes 100"));
    }

    @Test
    void recordTooLargeKeepsOnlyTheFirst64KiB() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(List.of(accounts().maxRecordBytes(70_000).build()));
        byte[] big = new byte[100_000];
        Arrays.fill(big, (byte) ' ');
        big[0] = '{';
        d.decode(big, "f", null, 1, NOW, out);
        assertThat(out.quarantined)
                .containsExactly(
                        QuarantineRecords.of(
                                "accounts",
                                "f",
                                null,
                                1,
                                Arrays.copyOf(big, 65536),
                                QuarantineReason.RECORD_TOO_LARGE,
                                "record of 100000 bytes exceeds max-record-bytes 70000",
                                NOW));
    }

    @Test
    void unknownTopic() {
        String line =
                q(
                        "{'key':{'tid':1},'value':"
                                + envelope("c", "null", "{'tid':1}", source("pgbench_tellers", 1))
                                + ",'topic':'pg.public.pgbench_tellers'}");
        decode(line);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                null,
                                1,
                                line,
                                QuarantineReason.UNKNOWN_TOPIC,
                                "no flow for table 'pgbench_tellers' (topic 'pg.public.pgbench_tellers'); flows read [pgbench_accounts]"));
    }

    @Test
    void schemaChangedUnderQuarantine() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(accounts().onSchemaChange(OnSchemaChange.QUARANTINE).build()));
        String line =
                capture(
                        "{'aid':1}",
                        envelope(
                                "c",
                                "null",
                                "{'aid':1,'bid':1,'abalance':0,'filler':null,'note':'x','z':1}",
                                1));
        decode(d, line, 1);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                "accounts",
                                1,
                                line,
                                QuarantineReason.SCHEMA_CHANGED,
                                "table 'pgbench_accounts': fields [note, z] are not among the declared columns [aid, bid, abalance, filler]"));
    }

    @Test
    void addColumnsStopsAtTheRecordNamingTheNewColumnsWithInferredTypes() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(accounts().onSchemaChange(OnSchemaChange.ADD_COLUMNS).build()));
        String line =
                capture(
                        "{'aid':1}",
                        envelope(
                                "c",
                                "null",
                                "{'aid':1,'bid':1,'abalance':0,'filler':null,"
                                        + "'note':'x','n':1,'f':1.5,'b':true,'z':null,'o':{'a':1},'big':123456789012345678901234567890}",
                                1));
        assertThatThrownBy(() -> decode(d, line, 7))
                .isInstanceOfSatisfying(
                        SchemaChangeException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(QuarantineReason.SCHEMA_CHANGED);
                            assertThat(e.flowId()).isEqualTo("accounts");
                            assertThat(e.table()).isEqualTo("pgbench_accounts");
                            assertThat(e.offset()).isEqualTo(7L);
                            assertThat(SchemaChangeException.describe(e.newColumns()))
                                    .isEqualTo(
                                            "note STRING, n BIGINT, f DOUBLE, b BOOLEAN, z STRING, o STRING, big DECIMAL(38, 0)");
                        })
                .hasMessage(
                        "SCHEMA_CHANGED: table 'pgbench_accounts' has new column(s) note STRING, n BIGINT, f DOUBLE,"
                                + " b BOOLEAN, z STRING, o STRING, big DECIMAL(38, 0) (on-schema-change = add-columns: the table is"
                                + " evolved and the job resumes) (flow 'accounts', source capture.jsonl, offset 7)");
        assertThat(out.changes).isEmpty();
        assertThat(out.quarantined).isEmpty();
    }

    @Test
    void addColumnsTypesNewColumnsFromTheSchemaWrapper() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(accounts().onSchemaChange(OnSchemaChange.ADD_COLUMNS).build()));
        String schema =
                "{'type':'struct','fields':[{'field':'before','type':'struct','optional':true,'fields':[]},"
                        + "{'field':'after','type':'struct','optional':true,'fields':["
                        + "{'field':'aid','type':'int32','optional':false},{'field':'bid','type':'int32','optional':true},"
                        + "{'field':'abalance','type':'int32','optional':true},{'field':'filler','type':'string','optional':true},"
                        + "{'field':'qty','type':'int16','optional':true},"
                        + "{'field':'at','type':'int64','optional':true,'name':'io.debezium.time.MicroTimestamp'}]}]}";
        String line =
                capture(
                        "{'aid':1}",
                        "{'schema':"
                                + schema
                                + ",'payload':"
                                + envelope(
                                        "c",
                                        "null",
                                        "{'aid':1,'bid':1,'abalance':0,'filler':null,'qty':3,'at':1000000}",
                                        1)
                                + "}");
        assertThatThrownBy(() -> decode(d, line, 1))
                .isInstanceOfSatisfying(
                        SchemaChangeException.class,
                        e ->
                                assertThat(SchemaChangeException.describe(e.newColumns()))
                                        .isEqualTo("qty SMALLINT, at TIMESTAMP(6)"));
    }

    @Test
    void addColumnsQuarantinesUnknownNestedFields() {
        RowType t =
                RowType.of(
                        new LogicalType[] {
                            new IntType(false),
                            RowType.of(new LogicalType[] {new IntType()}, new String[] {"x"})
                        },
                        new String[] {"aid", "pos"});
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(
                                DecoderFlow.builder("accounts", ChangeRecordFormat.DEBEZIUM_JSON, t)
                                        .sourceNames("pgbench_accounts")
                                        .keys("aid")
                                        .sequenceBy("source.lsn")
                                        .onSchemaChange(OnSchemaChange.ADD_COLUMNS)
                                        .build()));
        decode(
                d,
                capture("{'aid':1}", envelope("c", "null", "{'aid':1,'pos':{'x':1,'y':2}}", 1)),
                1);
        assertThat(out.quarantined)
                .extracting(r -> r.getString(5).toString())
                .containsExactly("SCHEMA_CHANGED");
    }

    @Test
    void schemaChangedFailsByDefaultNamingTableAndFields() {
        String line =
                capture(
                        "{'aid':1}",
                        envelope(
                                "c",
                                "null",
                                "{'aid':1,'bid':1,'abalance':0,'filler':null,'note':'x'}",
                                1));
        assertThatThrownBy(() -> decode(line))
                .isInstanceOfSatisfying(
                        ChangeRecordException.class,
                        e -> {
                            assertThat(e.reason()).isEqualTo(QuarantineReason.SCHEMA_CHANGED);
                            assertThat(e.flowId()).isEqualTo("accounts");
                            assertThat(e.offset()).isEqualTo(1L);
                        })
                .hasMessage(
                        "SCHEMA_CHANGED: table 'pgbench_accounts': fields [note] are not among the declared columns "
                                + "[aid, bid, abalance, filler]; set on-schema-change = quarantine or add-columns, or declare the columns"
                                + " (flow 'accounts', source capture.jsonl, offset 1)");
    }

    @Test
    void metadataFieldsAreNotDataFields() {
        // source.*, op, ts_ms, transaction, ts_us and unknown envelope members never count as
        // schema changes
        String line =
                capture(
                        "{'aid':1}",
                        q(
                                "{'before':null,'after':{'aid':1,'bid':1,'abalance':0,'filler':null},"
                                        + "'source':{'table':'pgbench_accounts','lsn':5,'newField':1},'op':'c','ts_ms':2000,'ts_ns':1,'extra':{'a':1}}"));
        decode(line);
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).hasSize(1);
    }

    @Test
    void onInvalidRecordFailThrowsWithTheReason() {
        ChangeRecordDecoder d =
                new ChangeRecordDecoder(
                        List.of(accounts().onInvalidRecord(OnInvalidRecord.FAIL).build()));
        String line = capture("{'aid':null}", envelope("c", "null", "{'aid':null}", 1));
        assertThatThrownBy(() -> decode(d, line, 4))
                .isInstanceOfSatisfying(
                        ChangeRecordException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuarantineReason.NULL_KEY))
                .hasMessage(
                        "NULL_KEY: key column 'aid' is null (flow 'accounts', source capture.jsonl, offset 4)");
        assertThatThrownBy(() -> decode(d, "oops", 5))
                .isInstanceOfSatisfying(
                        ChangeRecordException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuarantineReason.NOT_JSON));
    }

    @Test
    void unroutableRecordsWithSeveralFlowsCarryNoFlow() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build(), history()));
        decode(d, "oops", 3);
        assertThat(out.quarantined)
                .containsExactly(
                        quarantine(
                                null,
                                3,
                                "oops",
                                QuarantineReason.NOT_JSON,
                                "record does not start like JSON: first byte 0x6f 'o'"));
    }

    @Test
    void kafkaPartitionAndOffsetAreKept() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(accounts().build()));
        d.decode(null, b("xyz"), TOPIC, 2, 1234L, NOW, out);
        assertThat(out.quarantined)
                .containsExactly(
                        QuarantineRecords.of(
                                "accounts",
                                TOPIC,
                                2,
                                1234L,
                                b("xyz"),
                                QuarantineReason.NOT_JSON,
                                "record does not start like JSON: first byte 0x78 'x'",
                                NOW));
    }
}

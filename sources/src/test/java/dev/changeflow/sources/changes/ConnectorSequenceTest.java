package dev.changeflow.sources.changes;

import dev.changeflow.operators.AutoCdcApplyOperator;
import dev.changeflow.operators.AutoCdcKeySelector;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ScdType;
import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The default sequence per Debezium connector and sequence-only {@code source.*} columns
 * (semantics.md A5 "Default sequence per connector"): captures built from each connector's
 * documented envelope are decoded ({@link ChangeRecordDecoder}) and applied by the AUTO CDC
 * operator ({@link AutoCdcApplyOperator} in Flink's keyed operator test harness, SCD type 1 or 2)
 * in an arrival order that is not the log order; the tables must be those of the log order.
 */
class ConnectorSequenceTest {
    private static final RowType DATA =
            SchemaSampler.parseColumns("id BIGINT NOT NULL, name STRING");

    /**
     * A change of table {@code customers}: op, id, name, and the members of source after {@code
     * connector}.
     */
    private static String change(String connector, String op, long id, String name, String source) {
        String image = "{\"id\":" + id + ",\"name\":\"" + name + "\"}";
        String before = op.equals("d") ? image : "null";
        String after = op.equals("d") ? "null" : image;
        return "{\"key\":{\"id\":"
                + id
                + "},\"topic\":\"server1.inventory.customers\",\"value\":{\"before\":"
                + before
                + ",\"after\":"
                + after
                + ",\"source\":{\"version\":\"3.6.1.Final\",\"connector\":\""
                + connector
                + "\",\"name\":\"server1\",\"db\":\"inventory\","
                + source
                + "},\"op\":\""
                + op
                + "\",\"ts_ms\":1700000000000}}";
    }

    private static DecoderFlow flow(String connector, String... sequenceBy) {
        return DecoderFlow.builder("customers", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                .sourceNames("customers")
                .keys("id")
                .sequenceBy(sequenceBy)
                .connector(connector)
                .build();
    }

    /** Decodes {@code lines} in the given order and applies them; returns the target's rows. */
    private static List<String> apply(DecoderFlow flow, ScdType scd, String... lines)
            throws Exception {
        ChangeRecordDecoder decoder = new ChangeRecordDecoder(List.of(flow));
        Collected out = new Collected();
        for (int i = 0; i < lines.length; i++) {
            decoder.decode(
                    lines[i].getBytes(StandardCharsets.UTF_8), "in.jsonl", null, i + 1, 0L, out);
        }
        assertThat(out.quarantined).isEmpty();
        AutoCdcSpec spec =
                AutoCdcSpec.builder(flow.flowId(), flow.sourceType())
                        .metadataColumns(flow.metadataColumns())
                        .keys(flow.keys())
                        .sequenceBy(flow.sequenceBy())
                        .scdType(scd)
                        .build();
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        Map<String, String> table = new TreeMap<>();
        try (KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new AutoCdcApplyOperator(spec),
                        keys,
                        InternalTypeInfo.of(keys.keyType()))) {
            h.setStateBackend(new HashMapStateBackend());
            h.open();
            for (RowData r : out.changes) {
                h.processElement(r, 0L);
                h.prepareSnapshotPreBarrier(0L);
            }
            h.endInput();
            RowType target = spec.targetType();
            for (RowData r : h.extractOutputValues()) {
                GenericRowData g = new GenericRowData(target.getFieldCount());
                for (int i = 0; i < g.getArity(); i++) {
                    g.setField(
                            i, RowData.createFieldGetter(target.getTypeAt(i), i).getFieldOrNull(r));
                }
                String row = g.toString();
                // SCD 1: the key; SCD 2: the key and __START_AT (field 2) name a row
                String id =
                        scd == ScdType.TYPE_1
                                ? row.substring(0, row.indexOf(','))
                                : row.substring(0, row.lastIndexOf(','));
                if (r.getRowKind() == RowKind.INSERT || r.getRowKind() == RowKind.UPDATE_AFTER) {
                    table.put(id, row);
                } else {
                    table.remove(id);
                }
            }
        }
        return new ArrayList<>(table.values());
    }

    // ---- defaults per connector ------------------------------------------------------------

    @Test
    void defaultsPerConnector() {
        assertThat(flow("postgresql").sequenceBy()).containsExactly("_source_lsn");
        assertThat(flow(null).sequenceBy()).containsExactly("_source_lsn");
        assertThat(flow("postgresql").sourceType()).isEqualTo(flow(null).sourceType());
        assertThat(flow("postgresql").sequenceOnlyColumns()).isEmpty();
        for (String c : List.of("mysql", "mariadb", "sqlserver", "oracle", "db2", "mongodb")) {
            DecoderFlow f = flow(c);
            assertThat(f.sequenceBy()).containsExactly("_log_position");
            assertThat(f.sequenceOnlyColumns()).containsExactly("_log_position");
            assertThat(f.sourceType().getFieldNames())
                    .endsWith(
                            "_source_file", "_source_pos", "_unavailable_columns", "_log_position");
            assertThat(f.metadataColumns()).contains("_op", "_log_position");
        }
    }

    // ---- MySQL -----------------------------------------------------------------------------

    private static String mysql(String op, long id, String name, String file, long pos, int row) {
        return change(
                "mysql",
                op,
                id,
                name,
                "\"ts_ms\":1700000000000,\"snapshot\":\"false\",\"table\":\"customers\","
                        + "\"server_id\":223344,\"gtid\":null,\"file\":\""
                        + file
                        + "\",\"pos\":"
                        + pos
                        + ",\"row\":"
                        + row
                        + ",\"thread\":7,\"query\":null");
    }

    @Test
    void mysqlMultiRowEventAndBinlogNumbersOutOfOrder() throws Exception {
        String snapshot =
                change(
                        "mysql",
                        "r",
                        1,
                        "snap",
                        "\"ts_ms\":0,\"snapshot\":\"true\",\"table\":\"customers\",\"server_id\":0,"
                                + "\"file\":\"mysql-bin.999999\",\"pos\":154,\"row\":0");
        // one UPDATE statement's rows event at pos 154 of the same file as the snapshot point
        String e0 = mysql("u", 1, "a", "mysql-bin.999999", 154, 0);
        // one multi-row rows event: rows 0, 1, 2 share file and pos
        String r0 = mysql("c", 2, "two", "mysql-bin.999999", 900, 0);
        String r1 = mysql("u", 1, "b", "mysql-bin.999999", 900, 1);
        String r2 = mysql("c", 3, "three", "mysql-bin.999999", 900, 2);
        // the next binlog file: "mysql-bin.1000000" sorts before "mysql-bin.999999" as text
        String next = mysql("u", 1, "c", "mysql-bin.1000000", 4, 0);
        String del = mysql("d", 3, "three", "mysql-bin.1000000", 120, 0);
        DecoderFlow f = flow("mysql");
        List<String> expected = List.of("+I(1,c)", "+I(2,two)");
        assertThat(apply(f, ScdType.TYPE_1, snapshot, e0, r0, r1, r2, next, del))
                .isEqualTo(expected);
        assertThat(apply(f, ScdType.TYPE_1, del, next, r2, r1, r0, e0, snapshot))
                .isEqualTo(expected);
        assertThat(apply(f, ScdType.TYPE_1, r1, next, snapshot, del, r0, e0, r2))
                .isEqualTo(expected);
        // the history (SCD 2) keeps every version, in log order, whatever the arrival order
        assertThat(apply(f, ScdType.TYPE_2, next, r2, del, r1, snapshot, e0, r0))
                .containsExactlyInAnyOrder(
                        "+I(1,snap,"
                                + "00000000000000999999/00000000000000000154/-"
                                + ","
                                + "00000000000000999999/00000000000000000154/00000000000000000000)",
                        "+I(1,a,00000000000000999999/00000000000000000154/00000000000000000000,"
                                + "00000000000000999999/00000000000000000900/00000000000000000001)",
                        "+I(1,b,00000000000000999999/00000000000000000900/00000000000000000001,"
                                + "00000000000001000000/00000000000000000004/00000000000000000000)",
                        "+I(1,c,00000000000001000000/00000000000000000004/00000000000000000000,null)",
                        "+I(2,two,00000000000000999999/00000000000000000900/00000000000000000000,null)",
                        "+I(3,three,00000000000000999999/00000000000000000900/00000000000000000002,"
                                + "00000000000001000000/00000000000000000120/00000000000000000000)");
    }

    // ---- SQL Server ------------------------------------------------------------------------

    private static String sqlserver(
            String op, long id, String name, String commitLsn, String changeLsn, Integer serial) {
        return change(
                "sqlserver",
                op,
                id,
                name,
                "\"ts_ms\":1700000000000,\"snapshot\":\"false\",\"schema\":\"dbo\","
                        + "\"table\":\"customers\",\"change_lsn\":"
                        + (changeLsn == null ? "null" : "\"" + changeLsn + "\"")
                        + ",\"commit_lsn\":\""
                        + commitLsn
                        + "\",\"event_serial_no\":"
                        + serial);
    }

    @Test
    void sqlServerTransactionTiesAndHexLsns() throws Exception {
        // snapshot: change_lsn and event_serial_no null, before any streamed change
        String snap = sqlserver("r", 1, "snap", "00000025:00000d58:0003", null, null);
        // one transaction (one commit_lsn) updating row 1 twice: ts_ms ties, change_lsn orders
        String t1 = sqlserver("u", 1, "mid", "00000027:00000758:0005", "00000027:00000740:0002", 2);
        String t2 = sqlserver("u", 1, "end", "00000027:00000758:0005", "00000027:00000748:0002", 2);
        // 0x75b > 0x75a, but as text "0000075B" < "0000075a": LSNs compare as hex parts
        String t3 = sqlserver("c", 2, "two", "00000027:0000075a:0003", "00000027:0000075a:0002", 1);
        String t4 =
                sqlserver("u", 2, "zwei", "00000027:0000075B:0003", "00000027:0000075B:0002", 2);
        DecoderFlow f = flow("sqlserver");
        List<String> expected = List.of("+I(1,end)", "+I(2,zwei)");
        assertThat(apply(f, ScdType.TYPE_1, snap, t1, t2, t3, t4)).isEqualTo(expected);
        assertThat(apply(f, ScdType.TYPE_1, t4, t2, t1, t3, snap)).isEqualTo(expected);
        assertThat(apply(f, ScdType.TYPE_1, t2, snap, t4, t3, t1)).isEqualTo(expected);
        // explicit LSN columns compare as hex triples too
        DecoderFlow explicit = flow("sqlserver", "source.commit_lsn", "source.change_lsn");
        assertThat(explicit.sourceType().getFieldNames())
                .endsWith("_source_commit_lsn", "_source_change_lsn");
        assertThat(apply(explicit, ScdType.TYPE_1, t4, t2, t1, t3)).isEqualTo(expected);
        assertThat(LogPosition.normalizeLsn("sqlserver", "27:758:5"))
                .isEqualTo("00000027:00000758:0005");
    }

    // ---- Oracle ----------------------------------------------------------------------------

    private static String oracle(
            String op, long id, String name, String scn, String commitScn, String rsId, int ssn) {
        return change(
                "oracle",
                op,
                id,
                name,
                "\"ts_ms\":1700000000000,\"snapshot\":\"false\",\"schema\":\"DEBEZIUM\","
                        + "\"table\":\"customers\",\"txId\":\"02000a0037030000\",\"scn\":\""
                        + scn
                        + "\",\"commit_scn\":"
                        + (commitScn == null ? "null" : "\"" + commitScn + "\"")
                        + ",\"rs_id\":"
                        + (rsId == null ? "null" : "\"" + rsId + "\"")
                        + ",\"ssn\":"
                        + ssn
                        + ",\"redo_thread\":1,\"user_name\":\"DEBEZIUM\"");
    }

    @Test
    void oracleNumericScnsAndSameScnTies() throws Exception {
        // snapshot at SCN 9 (no commit_scn); "9" > "10" as text
        String snap = oracle("r", 1, "snap", "9", null, null, 0);
        // one transaction committed at SCN 10, two updates of row 1 at the same SCN: rs_id orders
        String a = oracle("u", 1, "mid", "10", "10", " 0x000004.00000b1d.0010 ", 0);
        String b = oracle("u", 1, "end", "10", "10", " 0x000004.00000b1e.0010 ", 0);
        // a change made at SCN 8 (before the snapshot) but committed at 11 comes after it
        String c = oracle("c", 2, "two", "8", "11", " 0x000004.00000b2a.0010 ", 0);
        DecoderFlow f = flow("oracle");
        List<String> expected = List.of("+I(1,end)", "+I(2,two)");
        assertThat(apply(f, ScdType.TYPE_1, snap, a, b, c)).isEqualTo(expected);
        assertThat(apply(f, ScdType.TYPE_1, b, a, c, snap)).isEqualTo(expected);
        assertThat(apply(f, ScdType.TYPE_1, c, b, snap, a)).isEqualTo(expected);
        // source.scn as an explicit column is a number: DECIMAL(38, 0)
        DecoderFlow explicit = flow("oracle", "source.commit_scn", "source.scn");
        assertThat(
                        explicit.sourceType()
                                .getTypeAt(explicit.sourceType().getFieldIndex("_source_scn")))
                .hasToString("DECIMAL(38, 0)");
        assertThat(
                        apply(
                                explicit,
                                ScdType.TYPE_1,
                                oracle("u", 1, "x", "10", "10", null, 0),
                                oracle("u", 1, "y", "9", "9", null, 0)))
                .containsExactly("+I(1,x)");
    }

    // ---- Db2 -------------------------------------------------------------------------------

    @Test
    void db2LsnsOutOfOrder() throws Exception {
        String s =
                "\"ts_ms\":1700000000000,\"snapshot\":\"false\",\"schema\":\"DB2INST1\",\"table\":\"customers\",";
        String a =
                change(
                        "db2",
                        "u",
                        1,
                        "mid",
                        s
                                + "\"change_lsn\":\"00000000:00000000:0000000000047e10\",\"commit_lsn\":\"00000000:00000000:0000000000047e18\"");
        String b =
                change(
                        "db2",
                        "u",
                        1,
                        "end",
                        s
                                + "\"change_lsn\":\"00000000:00000000:0000000000047e14\",\"commit_lsn\":\"00000000:00000000:0000000000047e18\"");
        String c =
                change(
                        "db2",
                        "u",
                        1,
                        "later",
                        s
                                + "\"change_lsn\":\"00000000:00000000:0000000000047f01\",\"commit_lsn\":\"00000000:00000000:0000000000047f02\"");
        DecoderFlow f = flow("db2");
        assertThat(apply(f, ScdType.TYPE_1, a, b)).containsExactly("+I(1,end)");
        assertThat(apply(f, ScdType.TYPE_1, b, a)).containsExactly("+I(1,end)");
        assertThat(apply(f, ScdType.TYPE_1, c, b, a)).containsExactly("+I(1,later)");
    }

    // ---- MongoDB ---------------------------------------------------------------------------

    private static String mongo(String op, long id, String name, long tsMs, int ord) {
        return change(
                "mongodb",
                op,
                id,
                name,
                "\"ts_ms\":"
                        + tsMs
                        + ",\"snapshot\":\"false\",\"rs\":\"rs0\","
                        + "\"collection\":\"customers\",\"ord\":"
                        + ord
                        + ",\"lsid\":null,\"txnNumber\":null");
    }

    @Test
    void mongoSecondsAndOrdinals() throws Exception {
        // three changes in one second (ts_ms ties), ordered by ord; then the next second, ord 1
        String a = mongo("c", 1, "a", 1558965508000L, 29);
        String b = mongo("u", 1, "b", 1558965508000L, 30);
        String c = mongo("u", 1, "c", 1558965508000L, 31);
        String d = mongo("u", 1, "d", 1558965509000L, 1);
        DecoderFlow f = flow("mongodb");
        assertThat(apply(f, ScdType.TYPE_1, a, b, c)).containsExactly("+I(1,c)");
        assertThat(apply(f, ScdType.TYPE_1, c, a, b)).containsExactly("+I(1,c)");
        assertThat(apply(f, ScdType.TYPE_1, d, c, b, a)).containsExactly("+I(1,d)");
    }

    // ---- PostgreSQL stays as it was --------------------------------------------------------

    @Test
    void postgresDefaultIsLsn() throws Exception {
        String s1 =
                "\"ts_ms\":1,\"snapshot\":\"false\",\"schema\":\"public\",\"table\":\"customers\",\"txId\":500,\"lsn\":";
        String a = change("postgresql", "u", 1, "a", s1 + "24023128");
        String b = change("postgresql", "u", 1, "b", s1 + "24023200");
        assertThat(apply(flow("postgresql"), ScdType.TYPE_1, b, a)).containsExactly("+I(1,b)");
    }

    // ---- sequences that cannot order the records: a clear error ---------------------------

    @Test
    void lsnDefaultOnMysqlRecordsFailsClearly() {
        // the connector was not known when the flow was planned: the default is source.lsn
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow(null)));
        byte[] line =
                mysql("c", 1, "a", "mysql-bin.000003", 154, 0).getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> d.decode(line, "in.jsonl", null, 1, 0L, new Collected()))
                .isInstanceOf(ChangeRecordException.class)
                .hasMessage(
                        "NULL_SEQUENCE: SEQUENCE BY column '_source_lsn' cannot order the records"
                                + " of flow 'customers': Debezium connector 'mysql' does not write"
                                + " source.lsn, and no earlier record of the flow had a sequence."
                                + " Declare 'sequence-by' with fields this connector writes (its"
                                + " default: log_position = binlog file number of source.file,"
                                + " source.pos, source.row) (flow 'customers', source in.jsonl,"
                                + " offset 1)");
    }

    @Test
    void textMemberHoldingNumbersFailsClearly() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow("mysql", "source.seqno")));
        byte[] line =
                change("mysql", "c", 1, "a", "\"table\":\"customers\",\"seqno\":9")
                        .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> d.decode(line, "in.jsonl", null, 1, 0L, new Collected()))
                .isInstanceOf(ChangeRecordException.class)
                .hasMessage(
                        "TYPE_MISMATCH: SEQUENCE BY column '_source_seqno' cannot order the"
                                + " records of flow 'customers': source.seqno is 9 (integer), but"
                                + " changeflow reads source.seqno as text, which orders numbers"
                                + " wrongly (\"9\" after \"10\"); use log_position or another"
                                + " source field (flow 'customers', source in.jsonl, offset 1)");
    }

    @Test
    void oneRecordsNullSequenceStaysAQuarantine() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow("mysql")));
        Collected out = new Collected();
        d.decode(
                mysql("c", 1, "a", "mysql-bin.000003", 154, 0).getBytes(StandardCharsets.UTF_8),
                "in.jsonl",
                null,
                1,
                0L,
                out);
        String noPos =
                change(
                        "mysql",
                        "c",
                        2,
                        "b",
                        "\"table\":\"customers\",\"file\":\"mysql-bin.000003\",\"pos\":null");
        d.decode(noPos.getBytes(StandardCharsets.UTF_8), "in.jsonl", null, 2, 0L, out);
        assertThat(out.changes).hasSize(1);
        assertThat(out.quarantined).hasSize(1);
        RowData q = out.quarantined.get(0);
        assertThat(q.getString(5).toString()).isEqualTo(QuarantineReason.NULL_SEQUENCE.name());
        assertThat(q.getString(6).toString()).isEqualTo("sequence column '_log_position' is null");
    }

    @Test
    void unknownConnectorFailsClearly() {
        ChangeRecordDecoder d = new ChangeRecordDecoder(List.of(flow("vitess")));
        byte[] line =
                change("vitess", "c", 1, "a", "\"table\":\"customers\",\"vgtid\":\"x\"")
                        .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> d.decode(line, "in.jsonl", null, 1, 0L, new Collected()))
                .isInstanceOf(ChangeRecordException.class)
                .hasMessageContaining(
                        "SEQUENCE BY column '_log_position' cannot order the records of flow"
                                + " 'customers': Debezium connector 'vitess' has no log position"
                                + " known to changeflow");
    }
}

package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sources.changes.ChangeRecordFormat;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.changes.OnInvalidRecord;
import dev.changeflow.sources.changes.SchemaSampler;

import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;

import static org.assertj.core.api.Assertions.assertThat;

class DecodeFunctionTest {
    static final long NOW = 1_800_000_000_000L;
    static final String FILE = "file:/data/capture.jsonl.gz";

    static List<DecoderFlow> flows() {
        return List.of(
                DecoderFlow.builder(
                                "accounts",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns("aid INT, abalance INT"))
                        .sourceNames("pgbench_accounts")
                        .keys("aid")
                        .truncateEnabled(true)
                        .build(),
                DecoderFlow.builder(
                                "history",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns("tid INT, delta INT"))
                        .sourceNames("pgbench_history")
                        .appendOnly(true)
                        .onInvalidRecord(OnInvalidRecord.FAIL)
                        .build());
    }

    static SourceLine line(long n, String json) {
        return SourceLine.data(FILE, n, json.replace('\'', '"').getBytes(StandardCharsets.UTF_8));
    }

    static List<RowData> values(Queue<StreamRecord<RowData>> q) {
        List<RowData> out = new ArrayList<>();
        if (q != null) {
            q.forEach(r -> out.add(r.getValue()));
        }
        return out;
    }

    @Test
    void routesToSideOutputsQuarantinesMarkersAndCounts() throws Exception {
        DecodeFunction fn = new DecodeFunction(flows());
        try (OneInputStreamOperatorTestHarness<SourceLine, RowData> h =
                ProcessFunctionTestHarnesses.forProcessFunction(fn)) {
            h.setProcessingTime(NOW);
            h.processElement(
                    line(
                            1,
                            "{'key':{'aid':1},'value':{'op':'c','after':{'aid':1,'abalance':5},'source':{'table':'pgbench_accounts','lsn':10}},'topic':'pg.public.pgbench_accounts'}"),
                    0L);
            h.processElement(
                    line(
                            2,
                            "{'key':{'aid':1},'value':{'op':'d','before':{'aid':1,'abalance':5},'source':{'table':'pgbench_accounts','lsn':11}},'topic':'pg.public.pgbench_accounts'}"),
                    0L);
            h.processElement(
                    line(3, "{'key':{'aid':1},'value':null,'topic':'pg.public.pgbench_accounts'}"),
                    0L);
            h.processElement(
                    line(
                            4,
                            "{'key':null,'value':{'op':'c','after':{'tid':2,'delta':-3},'source':{'table':'pgbench_history','lsn':12}},'topic':'pg.public.pgbench_history'}"),
                    0L);
            h.processElement(
                    line(
                            5,
                            "{'key':null,'value':{'op':'t','source':{'table':'pgbench_accounts','lsn':13}},'topic':'pg.public.pgbench_accounts'}"),
                    0L);
            h.processElement(
                    line(
                            6,
                            "{'key':null,'value':{'op':'c','after':{'x':1},'source':{'table':'other','lsn':14}},'topic':'pg.public.other'}"),
                    0L);
            h.processElement(
                    SourceLine.damage(
                            FILE,
                            7,
                            "compressed stream damaged after line 6: java.io.EOFException: x",
                            new byte[] {'{'}),
                    0L);
            h.processElement(SourceLine.endOfFile(FILE, 6), 0L);

            List<RowData> accounts =
                    values(h.getSideOutput(DecodeFunction.changesTag(0, flows().get(0))));
            assertThat(accounts)
                    .extracting(RowData::getRowKind)
                    .containsExactly(RowKind.INSERT, RowKind.DELETE);
            assertThat(accounts).extracting(r -> r.getInt(0)).containsExactly(1, 1);
            assertThat(accounts)
                    .extracting(r -> r.getLong(4))
                    .containsExactly(10L, 11L); // _source_lsn
            List<RowData> history = values(h.getSideOutput(fn.changesTag(1)));
            assertThat(history).extracting(r -> r.getInt(1)).containsExactly(-3);
            List<RowData> truncates = values(h.getSideOutput(fn.truncatesTag(0)));
            assertThat(truncates).extracting(r -> r.getLong(4)).containsExactly(13L);
            assertThat(values(h.getSideOutput(fn.truncatesTag(1)))).isEmpty();
            assertThat(values(h.getSideOutput(DecodeFunction.quarantineTag())))
                    .containsExactly(
                            QuarantineRecords.of(
                                    null,
                                    FILE,
                                    null,
                                    6,
                                    line(
                                                    6,
                                                    "{'key':null,'value':{'op':'c','after':{'x':1},'source':{'table':'other','lsn':14}},'topic':'pg.public.other'}")
                                            .getBytes(),
                                    QuarantineReason.UNKNOWN_TOPIC,
                                    "no flow for table 'other' (topic 'pg.public.other'); flows read [pgbench_accounts, pgbench_history]",
                                    NOW),
                            QuarantineRecords.of(
                                    null,
                                    FILE,
                                    null,
                                    7,
                                    new byte[] {'{'},
                                    QuarantineReason.TRUNCATED_FILE,
                                    "compressed stream damaged after line 6: java.io.EOFException: x",
                                    NOW));
            assertThat(h.extractOutputValues()).isEmpty();
            // recordsIn, quarantined, tombstonesSkipped, filesCompleted
            assertThat(fn.counts()).containsExactly(6L, 2L, 1L, 1L);
        }
    }

    @Test
    void oversizedLineIsQuarantinedAsRecordTooLarge() throws Exception {
        DecodeFunction fn = new DecodeFunction(flows().subList(0, 1));
        try (OneInputStreamOperatorTestHarness<SourceLine, RowData> h =
                ProcessFunctionTestHarnesses.forProcessFunction(fn)) {
            h.setProcessingTime(NOW);
            h.processElement(
                    new SourceLine(FILE, 3, new byte[] {'{', '"'}, 9_000_000, null, false), 0L);
            assertThat(values(h.getSideOutput(DecodeFunction.quarantineTag())))
                    .containsExactly(
                            QuarantineRecords.of(
                                    "accounts",
                                    FILE,
                                    null,
                                    3,
                                    new byte[] {'{', '"'},
                                    QuarantineReason.RECORD_TOO_LARGE,
                                    "line of 9000000 bytes exceeds the reader's limit; first 2 bytes kept",
                                    NOW));
            assertThat(fn.counts()).containsExactly(1L, 1L, 0L, 0L);
        }
    }

    @Test
    void damagedFileMarkerIsQuarantinedWithItsReasonEvenUnderFail() throws Exception {
        DecodeFunction fn = new DecodeFunction(flows().subList(1, 2)); // on-invalid-record = fail
        try (OneInputStreamOperatorTestHarness<SourceLine, RowData> h =
                ProcessFunctionTestHarnesses.forProcessFunction(fn)) {
            h.setProcessingTime(NOW);
            h.processElement(
                    SourceLine.damage(
                            FILE,
                            1,
                            QuarantineReason.DAMAGED_FILE,
                            "damaged gzip file "
                                    + FILE
                                    + ": member 1 (at compressed byte 0): CRC mismatch; first untrusted line: 1",
                            null),
                    0L);
            h.processElement(SourceLine.endOfFile(FILE, 0), 0L);
            assertThat(values(h.getSideOutput(DecodeFunction.quarantineTag())))
                    .containsExactly(
                            QuarantineRecords.of(
                                    "history",
                                    FILE,
                                    null,
                                    1,
                                    null,
                                    QuarantineReason.DAMAGED_FILE,
                                    "damaged gzip file "
                                            + FILE
                                            + ": member 1 (at compressed byte 0): CRC mismatch; first untrusted line: 1",
                                    NOW));
            assertThat(fn.counts()).containsExactly(0L, 1L, 0L, 1L);
        }
    }

    @Test
    void tagsAreEqualAcrossCallsAndTyped() {
        DecoderFlow f = flows().get(0);
        assertThat(DecodeFunction.changesTag(0, f)).isEqualTo(DecodeFunction.changesTag(0, f));
        assertThat(DecodeFunction.changesTag(0, f)).isNotEqualTo(DecodeFunction.truncatesTag(0, f));
        assertThat(DecodeFunction.changesTag(0, f).getTypeInfo())
                .isEqualTo(InternalTypeInfo.of(f.sourceType()));
        assertThat(DecodeFunction.quarantineTag().getTypeInfo())
                .isEqualTo(InternalTypeInfo.of(QuarantineRecords.ROW_TYPE));
        assertThat(new DecodeFunction(flows()).getProducedType())
                .isEqualTo(InternalTypeInfo.of(QuarantineRecords.ROW_TYPE));
    }
}

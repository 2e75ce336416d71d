package dev.changeflow.sources.kafka;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.ChangeRecordFormat;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.changes.OnInvalidRecord;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.files.DecodeFunction;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KafkaDecodeFunctionTest {
    static final long NOW = 1_800_000_000_000L;
    static final String ACCOUNTS = "pg.public.pgbench_accounts";
    static final String HISTORY = "pg.public.pgbench_history";

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

    static byte[] json(String s) {
        return s == null ? null : s.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
    }

    static KafkaChangeRecord record(
            String topic, int partition, long offset, String key, String value) {
        return new KafkaChangeRecord(topic, partition, offset, NOW - 1, json(key), json(value));
    }

    static List<RowData> values(Queue<StreamRecord<RowData>> q) {
        List<RowData> out = new ArrayList<>();
        if (q != null) {
            q.forEach(r -> out.add(r.getValue()));
        }
        return out;
    }

    @Test
    void deserializerKeepsTopicPartitionOffsetKeyAndValueAndPassesTombstones() throws Exception {
        KafkaChangeRecordDeserializationSchema schema =
                new KafkaChangeRecordDeserializationSchema();
        List<KafkaChangeRecord> out = new ArrayList<>();
        Collector<KafkaChangeRecord> collector =
                new Collector<>() {
                    @Override
                    public void collect(KafkaChangeRecord r) {
                        out.add(r);
                    }

                    @Override
                    public void close() {}
                };
        schema.deserialize(
                new ConsumerRecord<>(ACCOUNTS, 1, 41L, json("{'aid':1}"), json("{'op':'c'}")),
                collector);
        schema.deserialize(
                new ConsumerRecord<>(ACCOUNTS, 0, 7L, json("{'aid':2}"), null), collector);
        assertThat(out).hasSize(2);
        assertThat(out.get(0).topic).isEqualTo(ACCOUNTS);
        assertThat(out.get(0).partition).isEqualTo(1);
        assertThat(out.get(0).offset).isEqualTo(41L);
        assertThat(out.get(0).key).isEqualTo(json("{'aid':1}"));
        assertThat(out.get(0).value).isEqualTo(json("{'op':'c'}"));
        assertThat(out.get(1).tombstone()).isTrue();
        assertThat(out.get(1).key).isEqualTo(json("{'aid':2}"));

        // a Flink POJO (no Kryo fallback), and its serializer keeps every field, nulls included
        assertThat(schema.getProducedType()).isInstanceOf(PojoTypeInfo.class);
        TypeSerializer<KafkaChangeRecord> ser =
                schema.getProducedType().createSerializer(new SerializerConfigImpl());
        for (KafkaChangeRecord r : out) {
            DataOutputSerializer buf = new DataOutputSerializer(64);
            ser.serialize(r, buf);
            assertThat(ser.deserialize(new DataInputDeserializer(buf.getCopyOfBuffer())))
                    .isEqualTo(r);
        }
    }

    @Test
    void decodesKeyAndValueRoutesByTopicAndQuarantinesWithTopicPartitionOffset() throws Exception {
        KafkaDecodeFunction fn = new KafkaDecodeFunction(flows());
        String other = "{'op':'c','after':{'x':1},'source':{'table':'other','lsn':14}}";
        try (OneInputStreamOperatorTestHarness<KafkaChangeRecord, RowData> h =
                ProcessFunctionTestHarnesses.forProcessFunction(fn)) {
            h.setProcessingTime(NOW);
            h.processElement(
                    record(
                            ACCOUNTS,
                            0,
                            0,
                            "{'aid':1}",
                            "{'op':'c','after':{'aid':1,'abalance':5},'source':{'table':'pgbench_accounts','lsn':10}}"),
                    0L);
            // a delete without before: the key comes from the Kafka record key
            h.processElement(
                    record(
                            ACCOUNTS,
                            0,
                            1,
                            "{'aid':1}",
                            "{'op':'d','before':null,'source':{'table':'pgbench_accounts','lsn':11}}"),
                    0L);
            h.processElement(record(ACCOUNTS, 0, 2, "{'aid':1}", null), 0L);
            h.processElement(
                    record(
                            HISTORY,
                            1,
                            5,
                            null,
                            "{'op':'c','after':{'tid':2,'delta':-3},'source':{'table':'pgbench_history','lsn':12}}"),
                    0L);
            h.processElement(
                    record(
                            ACCOUNTS,
                            1,
                            3,
                            null,
                            "{'op':'t','source':{'table':'pgbench_accounts','lsn':13}}"),
                    0L);
            h.processElement(record("pg.public.other", 0, 9, null, other), 0L);
            h.processElement(
                    record(ACCOUNTS, 1, 4, "{'aid':3}", "{'op':'c','after':{'aid':3,"), 0L);

            List<RowData> accounts =
                    values(h.getSideOutput(DecodeFunction.changesTag(0, flows().get(0))));
            assertThat(accounts)
                    .extracting(RowData::getRowKind)
                    .containsExactly(RowKind.INSERT, RowKind.DELETE);
            assertThat(accounts).extracting(r -> r.getInt(0)).containsExactly(1, 1);
            assertThat(accounts.get(1).isNullAt(1)).isTrue();
            assertThat(accounts)
                    .extracting(r -> r.getLong(4))
                    .containsExactly(10L, 11L); // _source_lsn
            assertThat(values(h.getSideOutput(DecodeFunction.changesTag(1, flows().get(1)))))
                    .extracting(r -> r.getInt(1))
                    .containsExactly(-3);
            assertThat(values(h.getSideOutput(DecodeFunction.truncatesTag(0, flows().get(0)))))
                    .extracting(r -> r.getLong(4))
                    .containsExactly(13L);
            List<RowData> quarantine = values(h.getSideOutput(DecodeFunction.quarantineTag()));
            assertThat(quarantine).hasSize(2);
            assertThat(quarantine.get(0))
                    .isEqualTo(
                            QuarantineRecords.of(
                                    null,
                                    "pg.public.other",
                                    0,
                                    9,
                                    json(other),
                                    QuarantineReason.UNKNOWN_TOPIC,
                                    "no flow for table 'other' (topic 'pg.public.other'); flows read [pgbench_accounts, pgbench_history]",
                                    NOW));
            RowData malformed = quarantine.get(1);
            assertThat(malformed.getString(0).toString()).isEqualTo("accounts");
            assertThat(malformed.getString(1).toString()).isEqualTo(ACCOUNTS);
            assertThat(malformed.getInt(2)).isEqualTo(1);
            assertThat(malformed.getLong(3)).isEqualTo(4L);
            assertThat(malformed.getString(5).toString())
                    .isEqualTo(QuarantineReason.MALFORMED_JSON.name());
            assertThat(h.extractOutputValues()).isEmpty();
            // recordsIn, quarantined, tombstonesSkipped
            assertThat(fn.counts()).containsExactly(7L, 2L, 1L);
        }
    }

    @Test
    void failPolicyStopsWithTheReason() throws Exception {
        KafkaDecodeFunction fn = new KafkaDecodeFunction(flows());
        try (OneInputStreamOperatorTestHarness<KafkaChangeRecord, RowData> h =
                ProcessFunctionTestHarnesses.forProcessFunction(fn)) {
            assertThatThrownBy(
                            () ->
                                    h.processElement(
                                            record(
                                                    HISTORY,
                                                    2,
                                                    3,
                                                    null,
                                                    "{'op':'c','after':{'tid':'x','delta':1},'source':{'table':'pgbench_history','lsn':1}}"),
                                            0L))
                    .isInstanceOfSatisfying(
                            ChangeRecordException.class,
                            e -> {
                                assertThat(e.code()).isEqualTo(QuarantineReason.TYPE_MISMATCH);
                                assertThat(e.source()).isEqualTo(HISTORY);
                                assertThat(e.partition()).isEqualTo(2);
                                assertThat(e.offset()).isEqualTo(3L);
                            })
                    .hasMessageEndingWith(", source " + HISTORY + ", partition 2, offset 3)");
        }
    }

    @Test
    void startingOffsetsParseAndNameTheAcceptedValues() {
        assertThat(StartingOffsets.parse("earliest")).isEqualTo(StartingOffsets.earliest());
        assertThat(StartingOffsets.parse("LATEST")).isEqualTo(StartingOffsets.latest());
        assertThat(StartingOffsets.parse("committed")).isEqualTo(StartingOffsets.committed());
        assertThat(StartingOffsets.parse("timestamp:1700000000000").timestampMillis())
                .isEqualTo(1_700_000_000_000L);
        assertThat(StartingOffsets.parse("timestamp:5").toString()).isEqualTo("timestamp:5");
        assertThatThrownBy(() -> StartingOffsets.parse("timestamp:soon"))
                .hasMessage(
                        "starting-offsets: expected earliest, latest, committed, timestamp:<epoch"
                                + " ms> or per-partition offsets {\"topic\":{\"0\":23,\"1\":-2}},"
                                + " got 'timestamp:soon'");
    }

    @Test
    void inputValidationNamesTheOption() {
        KafkaInput in = new KafkaInput();
        assertThatThrownBy(in::validate).hasMessageContaining("bootstrap-servers");
        in.bootstrapServers = "127.0.0.1:9092";
        assertThatThrownBy(in::validate).hasMessageContaining("exactly one of 'topics'");
        in.topicPattern = "pg\\.public\\.(";
        assertThatThrownBy(in::validate)
                .hasMessageContaining("'topic-pattern' is not a valid regex");
        in.topicPattern = "pg\\.public\\..*";
        assertThat(in.validate().subscribes("pg.public.pgbench_accounts")).isTrue();
        assertThat(in.subscribes("other.public.x")).isFalse();
        in.topics = List.of("a");
        assertThatThrownBy(in::validate).hasMessageContaining("not both");
        in.topicPattern = null;
        assertThat(KafkaChangeSource.create(in, "changeflow-test")).isNotNull();
    }
}

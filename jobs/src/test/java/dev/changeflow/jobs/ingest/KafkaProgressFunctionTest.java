package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.sources.kafka.KafkaChangeRecord;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.ProcessOperator;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KafkaProgressFunctionTest {
    static final String A0 = KafkaProgressFunction.partitionKey("pg.public.a", 0);
    static final String A1 = KafkaProgressFunction.partitionKey("pg.public.a", 1);
    static final String B0 = KafkaProgressFunction.partitionKey("pg.public.b", 0);

    static KafkaChangeRecord record(String topic, int partition, long offset) {
        return new KafkaChangeRecord(topic, partition, offset, 0L, null, new byte[] {'{', '}'});
    }

    static OneInputStreamOperatorTestHarness<KafkaChangeRecord, KafkaChangeRecord> harness(
            KafkaProgressFunction fn) throws Exception {
        return new OneInputStreamOperatorTestHarness<>(new ProcessOperator<>(fn));
    }

    static OneInputStreamOperatorTestHarness<KafkaChangeRecord, KafkaChangeRecord> harness(
            KafkaProgressFunction fn, int parallelism, int subtask) throws Exception {
        return new OneInputStreamOperatorTestHarness<>(
                new ProcessOperator<>(fn), 128, parallelism, subtask);
    }

    @Test
    void partitionsArePendingUntilTheRecordBeforeTheirEndOffsetPassedAlsoAcrossARestore()
            throws Exception {
        // a0 holds offsets 0..2, a1 is empty, b0 starts at 5 (earlier records deleted) and ends at
        // 7
        Map<String, Long> end = Map.of(A0, 3L, A1, 0L, B0, 7L);
        Map<String, Long> start = Map.of(A0, 0L, A1, 0L, B0, 5L);
        KafkaProgressFunction fn = new KafkaProgressFunction(end, start);
        OperatorSubtaskState snapshot;
        try (var h = harness(fn)) {
            h.open();
            assertThat(fn.pending()).containsExactlyInAnyOrder(A0, B0);
            h.processElement(record("pg.public.a", 0, 0), 0L);
            h.processElement(record("pg.public.b", 0, 5), 0L);
            h.processElement(record("pg.public.b", 0, 6), 0L);
            assertThat(fn.pending()).containsExactly(A0);
            h.processElement(record("pg.public.a", 0, 1), 0L);
            snapshot = h.snapshot(1L, 1L);
            assertThat(h.extractOutputValues()).hasSize(4);
        }
        // resumed: a0 continues at 2, b0 got two more records, a1 one, and a new partition b1 is
        // not awaited
        Map<String, Long> end2 = Map.of(A0, 3L, A1, 1L, B0, 9L);
        KafkaProgressFunction resumed =
                new KafkaProgressFunction(end2, Map.of(A0, 0L, A1, 0L, B0, 0L));
        try (var h = harness(resumed)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(resumed.pending()).containsExactlyInAnyOrder(A0, A1, B0);
            h.processElement(record("pg.public.a", 0, 2), 0L);
            h.processElement(record("pg.public.b", 1, 0), 0L);
            h.processElement(record("pg.public.a", 1, 0), 0L);
            h.processElement(record("pg.public.b", 0, 7), 0L);
            assertThat(resumed.pending()).containsExactly(B0);
            h.processElement(record("pg.public.b", 0, 8), 0L);
            assertThat(resumed.pending()).isEmpty();
        }
        // resumed with nothing new: nothing pending from the start
        KafkaProgressFunction idle =
                new KafkaProgressFunction(
                        Map.of(A0, 3L, A1, 0L, B0, 7L), Map.of(A0, 0L, A1, 0L, B0, 0L));
        try (var h = harness(idle)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(idle.pending()).containsExactly(A0);
        }
    }

    /**
     * Two readers: subtask 0 reports the partitions pending at the start, each subtask subtracts
     * those it read to the end, so only the sum over both is the job's pending count; the union
     * state gives both subtasks every position after a restore.
     */
    @Test
    void twoReadersSumToThePendingPartitionsAlsoAfterARestore() throws Exception {
        Map<String, Long> end = Map.of(A0, 3L, A1, 2L, B0, 7L);
        Map<String, Long> start = Map.of(A0, 0L, A1, 0L, B0, 5L);
        KafkaProgressFunction r0 = new KafkaProgressFunction(end, start);
        KafkaProgressFunction r1 = new KafkaProgressFunction(end, start);
        OperatorSubtaskState s0;
        OperatorSubtaskState s1;
        try (var h0 = harness(r0, 2, 0);
                var h1 = harness(r1, 2, 1)) {
            h0.open();
            h1.open();
            assertThat(r0.gauge() + r1.gauge()).isEqualTo(3);
            // reader 1 reads a1 to its end and b0 half-way, reader 0 reads a0 to its end
            h1.processElement(record("pg.public.a", 1, 0), 0L);
            h1.processElement(record("pg.public.a", 1, 1), 0L);
            h1.processElement(record("pg.public.b", 0, 5), 0L);
            h0.processElement(record("pg.public.a", 0, 2), 0L);
            assertThat(r0.gauge()).isEqualTo(2);
            assertThat(r1.gauge()).isEqualTo(-1);
            assertThat(r0.gauge() + r1.gauge()).isEqualTo(1);
            s0 = h0.snapshot(1L, 1L);
            s1 = h1.snapshot(1L, 1L);
        }
        OperatorSubtaskState both = AbstractStreamOperatorTestHarness.repackageState(s0, s1);
        KafkaProgressFunction q0 = new KafkaProgressFunction(end, start);
        KafkaProgressFunction q1 = new KafkaProgressFunction(end, start);
        try (var h0 = harness(q0, 2, 0);
                var h1 = harness(q1, 2, 1)) {
            h0.initializeState(
                    AbstractStreamOperatorTestHarness.repartitionOperatorState(both, 128, 2, 2, 0));
            h1.initializeState(
                    AbstractStreamOperatorTestHarness.repartitionOperatorState(both, 128, 2, 2, 1));
            h0.open();
            h1.open();
            // every subtask knows every position: only b0 is pending, counted once
            assertThat(q0.pending()).containsExactly(B0);
            assertThat(q1.pending()).containsExactly(B0);
            assertThat(q0.gauge() + q1.gauge()).isEqualTo(1);
            // after the restore b0 is read by the other reader
            h0.processElement(record("pg.public.b", 0, 6), 0L);
            assertThat(q0.gauge() + q1.gauge()).isZero();
        }
    }

    @Test
    void flowsFileKafkaBlock() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        String.join(
                                "\n",
                                "kafka:",
                                "  bootstrap-servers: 127.0.0.1:9092",
                                "  topics: pg.public.a, pg.public.b",
                                "  group-id: g1",
                                "  starting-offsets: timestamp:1700000000000",
                                "  until-idle: 10s",
                                "  properties: {security.protocol: PLAINTEXT}",
                                "flows:",
                                "  - table: a",
                                "    keys: [id]"),
                        "flows.yaml");
        assertThat(cfg.kafka.bootstrapServers).isEqualTo("127.0.0.1:9092");
        assertThat(cfg.kafka.topics).containsExactly("pg.public.a", "pg.public.b");
        assertThat(cfg.kafka.groupId).isEqualTo("g1");
        assertThat(cfg.kafka.startingOffsets)
                .isEqualTo(StartingOffsets.timestamp(1_700_000_000_000L));
        assertThat(cfg.kafka.properties).containsEntry("security.protocol", "PLAINTEXT");
        assertThat(cfg.untilIdle).isEqualTo(Duration.ofSeconds(10));
        assertThatThrownBy(() -> FlowsFile.parse("kafka: {bootstrap: x}\n", "f.yaml"))
                .hasMessageContaining("bootstrap");
        assertThatThrownBy(() -> FlowsFile.parse("kafka: {starting-offsets: soon}\n", "f.yaml"))
                .hasMessageContaining(
                        "f.yaml: kafka: starting-offsets: expected earliest, latest, committed,"
                                + " timestamp:<epoch ms> or per-partition offsets");
        // per-partition offsets as a YAML mapping or as Spark's JSON string
        assertThat(
                        FlowsFile.parse(
                                        "kafka: {bootstrap-servers: b:9092, topics: [pg.public.a],"
                                                + " starting-offsets: {pg.public.a: {0: 5, 1: -2}}}\n",
                                        "f.yaml")
                                .kafka
                                .startingOffsets)
                .isEqualTo(StartingOffsets.offsets(Map.of("pg.public.a", Map.of(0, 5L, 1, -2L))));
        assertThat(
                        FlowsFile.parse(
                                        "kafka: {bootstrap-servers: b:9092, topics: [pg.public.a],"
                                                + " starting-offsets: '{\"pg.public.a\":{\"0\":5}}'}\n",
                                        "f.yaml")
                                .kafka
                                .startingOffsets)
                .isEqualTo(StartingOffsets.offsets(Map.of("pg.public.a", Map.of(0, 5L))));
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "kafka: {starting-offsets: {pg.public.a: {0: -3}}}\n",
                                        "f.yaml"))
                .hasMessageContaining(
                        "f.yaml: kafka: starting-offsets: partition 0 of topic 'pg.public.a' at"
                                + " offset -3: partitions are numbers >= 0, offsets are >= 0, -2"
                                + " (earliest) or -1 (latest)");
        assertThat(List.of(cfg.kafka.validate())).hasSize(1);
    }
}

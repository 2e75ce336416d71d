package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The recorded pgbench capture ({@code ../shared/data/pgbench-s1}) produced to a real Kafka broker
 * (embedded, KRaft, loopback) — one topic per table (the capture line's {@code topic}), 2
 * partitions each, keyed with the exact key bytes Debezium wrote (tombstones as null values) — and
 * ingested over Kafka by the local launcher: half the capture, then (appended) the other half
 * resuming from the savepoint, then a run with nothing new. Every table must equal PostgreSQL's
 * final table exactly (history as an exact multiset: a record read twice would show), and each run
 * must read exactly the records that are new to it. Without its saved state, the ingest then
 * refuses to start on the non-empty tables ({@code STATE_MISSING_FOR_EXISTING_TABLE}, K8) and
 * leaves them untouched.
 */
class KafkaPgbenchITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    private static final int PARTITIONS = 2;

    @TempDir Path tmp;

    @Test
    void captureOverKafkaEqualsPostgresAndResumesFromTheSavepoint() throws Exception {
        List<ProducerRecord<byte[], byte[]>> records =
                records(SharedData.readLines(SharedData.pgbenchCapture()));
        TreeSet<String> topics = new TreeSet<>();
        records.forEach(r -> topics.add(r.topic()));
        KAFKA.createTopics(PARTITIONS, new ArrayList<>(topics));
        int half = records.size() / 2;

        Path warehouse = tmp.resolve("warehouse");
        IngestConfig cfg = PgbenchCaptureITCase.config();
        // two readers (kafka-readers) over the 2 partitions of each topic; the positions, in union
        // state, reach both on every resume
        cfg.kafkaReaders = 2;
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        KafkaInput kafka = earliest(KAFKA, topics, "it-pgbench");

        long t = System.nanoTime();
        produce(records.subList(0, half));
        System.out.printf(
                "Produced %,d records to %s (%d partitions each) in %.1f s%n",
                half, topics, PARTITIONS, (System.nanoTime() - t) / 1e9);
        LocalIngest.Summary first = run(plan, kafka, warehouse);
        assertThat(first.records).isEqualTo(half);
        assertThat(first.quarantined).isZero();
        // the first half holds only snapshot records (op r) of the accounts: one row each
        assertThat(PgbenchCaptureITCase.rows(warehouse, "public.pgbench_accounts")).hasSize(half);

        produce(records.subList(half, records.size()));
        LocalIngest.Summary second = run(plan, kafka, warehouse);
        assertThat(second.records).isEqualTo(records.size() - half);
        assertThat(second.quarantined).isZero();
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
        double rate = (first.records + second.records) / (first.runSeconds + second.runSeconds);
        System.out.printf(
                "Kafka ingest: %,d events in %.1f s of job time: %,.0f events/s%n",
                first.records + second.records, first.runSeconds + second.runSeconds, rate);

        // offsets are committed to the group on completed checkpoints, asynchronously: the commit
        // of the final savepoint may not land before the reader closes, so they may lag (the
        // positions that count are in the savepoint); they never run ahead of what was read
        try (var admin = KAFKA.admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets("it-pgbench")
                            .partitionsToOffsetAndMetadata()
                            .get(60, TimeUnit.SECONDS);
            System.out.println("Committed offsets of group it-pgbench: " + committed);
            long total = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            assertThat(total).isLessThanOrEqualTo(records.size());
        }

        LocalIngest.Summary third = run(plan, kafka, warehouse);
        assertThat(third.records).isZero();
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);

        // K8: without its saved state the Kafka ingest refuses to start on the non-empty tables
        LocalIngest.deleteState(
                LocalIngest.checkpointRoot(plan, PgbenchCaptureITCase.options(warehouse, false)));
        assertThatThrownBy(() -> run(plan, kafka, warehouse))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(
                                                AutoCdcException.Code
                                                        .STATE_MISSING_FOR_EXISTING_TABLE))
                .hasMessageContaining("table public.pgbench_accounts already holds rows")
                .hasMessageContaining("no checkpoint or savepoint of 'pgbench'")
                .hasMessageContaining("--from-scratch");
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
    }

    /**
     * A failover in a local Kafka run with two readers (the first commit of the accounts fails
     * after its checkpoint completed): the run still ends once every partition is read — the
     * launcher sums the pending gauges of the running attempt's readers only, where the failed
     * attempt's froze above 0 — and the tables equal PostgreSQL's.
     */
    @Test
    void aLocalRunThatFailsOverStillEndsAndIsExact() throws Exception {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> r :
                records(SharedData.readLines(SharedData.pgbenchCapture()))) {
            records.add(new ProducerRecord<>("failover." + r.topic(), r.key(), r.value()));
        }
        TreeSet<String> topics = new TreeSet<>();
        records.forEach(r -> topics.add(r.topic()));
        KAFKA.createTopics(PARTITIONS, new ArrayList<>(topics));
        produce(records);

        Path warehouse = tmp.resolve("warehouse");
        IngestConfig cfg = PgbenchCaptureITCase.config();
        cfg.kafkaReaders = 2;
        cfg.checkpointInterval = Duration.ofMillis(500);
        cfg.catalog.put("catalog-impl", FailingCommitCatalog.class.getName());
        cfg.catalog.put("warehouse", warehouse.toAbsolutePath().toString());
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        KafkaInput kafka = earliest(KAFKA, topics, "it-failover");
        FailingCommitCatalog.failNextCommits("pgbench_accounts", 1);
        LocalIngest.Summary summary =
                assertTimeoutPreemptively(Duration.ofMinutes(5), () -> run(plan, kafka, warehouse));
        assertThat(FailingCommitCatalog.failed()).isEqualTo(1);
        assertThat(summary.quarantined).isZero();
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
    }

    /**
     * The Kafka input of a test: {@code topics} of {@code broker} from the earliest offsets, group
     * {@code group}.
     */
    static KafkaInput earliest(
            EmbeddedKafka broker, java.util.Collection<String> topics, String group) {
        KafkaInput kafka = new KafkaInput();
        kafka.bootstrapServers = broker.bootstrapServers();
        kafka.topics = new ArrayList<>(topics);
        kafka.groupId = group;
        kafka.startingOffsets = StartingOffsets.earliest();
        return kafka;
    }

    static LocalIngest.Summary run(IngestPlan plan, KafkaInput kafka, Path warehouse)
            throws Exception {
        return run(plan, kafka, warehouse, null);
    }

    /**
     * One local run over Kafka (to the end offsets at launch, or until idle for {@code untilIdle});
     * its output is printed.
     */
    static LocalIngest.Summary run(
            IngestPlan plan, KafkaInput kafka, Path warehouse, @Nullable Duration untilIdle)
            throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        LocalIngest.Options o = PgbenchCaptureITCase.options(warehouse, false);
        o.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        try {
            return LocalIngest.runKafka(plan, kafka, untilIdle, o);
        } finally {
            System.out.print(buf.toString(StandardCharsets.UTF_8));
        }
    }

    static void produce(List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
            for (ProducerRecord<byte[], byte[]> r : records) {
                producer.send(r);
            }
            producer.flush();
        }
    }

    /**
     * Capture lines {@code {"key": ..., "value": ..., "topic": "..."}} as Kafka records with the
     * exact bytes of key and value as recorded (null key → no key; null value → tombstone).
     */
    static List<ProducerRecord<byte[], byte[]>> records(List<String> lines) throws IOException {
        JsonFactory f = new JsonFactory();
        List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>(lines.size());
        for (String line : lines) {
            byte[] b = line.getBytes(StandardCharsets.UTF_8);
            String topic = null;
            byte[] key = null;
            byte[] value = null;
            try (JsonParser p = f.createParser(b)) {
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    throw new IOException("not a capture line: " + line);
                }
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    JsonToken v = p.nextToken();
                    int start = (int) p.currentTokenLocation().getByteOffset();
                    p.skipChildren();
                    int end = (int) p.currentLocation().getByteOffset();
                    byte[] raw =
                            v == JsonToken.VALUE_NULL ? null : Arrays.copyOfRange(b, start, end);
                    switch (name) {
                        case "topic":
                            topic = p.getText();
                            break;
                        case "key":
                            key = raw;
                            break;
                        case "value":
                            value = raw;
                            break;
                        default:
                            throw new IOException("unexpected member '" + name + "' in " + line);
                    }
                }
            }
            out.add(new ProducerRecord<>(topic, key, value));
        }
        return out;
    }
}

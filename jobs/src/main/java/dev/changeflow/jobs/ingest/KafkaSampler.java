package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Reads, before a Kafka job is planned, the first record of every subscribed partition from the
 * offset the job will start at (semantics.md A5 "Default sequence per connector"): the records
 * {@link IngestPlanner#plan(dev.changeflow.jobs.config.IngestConfig, List, List)} samples, as it
 * samples input files, so that a flow's default {@code sequence-by} follows the {@code
 * source.connector} of its records also with Kafka input.
 *
 * <p>One short-lived consumer ({@code read_committed}, no group: partitions assigned, nothing
 * committed), closed before returning. A partition whose start offset is its end offset (empty, or
 * {@code latest}) gives nothing; a partition that gives no record within the timeout (e.g. only
 * aborted transactions) is left out. No sample keeps today's default ({@code source.lsn}).
 */
public final class KafkaSampler {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaSampler.class);

    /** How long the sampling consumer waits for the first records, in total. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    private KafkaSampler() {}

    /**
     * The first record of each non-empty subscribed partition, from the job's starting offsets, in
     * partition-key order ({@code topic/partition}).
     *
     * @param groupId the group whose committed offsets a {@code committed} start reads
     * @param timeout how long to wait for records in total; partitions still silent then are left
     *     out
     * @throws IllegalArgumentException when a listed topic does not exist
     * @throws KafkaUnreachableException ({@code SOURCE_NOT_FOUND}) when no broker answers within 20
     *     s
     */
    public static List<SchemaSampler.KafkaSample> firstRecords(
            KafkaInput input, String groupId, Duration timeout) {
        KafkaOffsets.Snapshot offsets = KafkaOffsets.fetch(input, groupId);
        Map<TopicPartition, Long> start = new HashMap<>();
        List<String> order = new ArrayList<>();
        offsets.startOffsets.forEach(
                (key, from) -> {
                    Long end = offsets.endOffsets.get(key);
                    if (end != null && from < end) {
                        int slash = key.lastIndexOf('/');
                        start.put(
                                new TopicPartition(
                                        key.substring(0, slash),
                                        Integer.parseInt(key.substring(slash + 1))),
                                from);
                        order.add(key);
                    }
                });
        Map<String, SchemaSampler.KafkaSample> first = new HashMap<>();
        if (!start.isEmpty()) {
            Properties props = new Properties();
            props.putAll(input.properties);
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, input.bootstrapServers);
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, "changeflow-launcher-sample");
            props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
            props.remove(ConsumerConfig.GROUP_ID_CONFIG);
            try (KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(
                            props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.assign(start.keySet());
                start.forEach(consumer::seek);
                long deadline = System.nanoTime() + timeout.toNanos();
                while (first.size() < start.size()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    for (ConsumerRecord<byte[], byte[]> r :
                            consumer.poll(Duration.ofNanos(Math.min(left, 1_000_000_000L)))) {
                        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                        String key = KafkaProgressFunction.partitionKey(r.topic(), r.partition());
                        if (first.putIfAbsent(
                                        key,
                                        new SchemaSampler.KafkaSample(
                                                r.topic(), r.key(), r.value()))
                                == null) {
                            consumer.pause(List.of(tp));
                        }
                    }
                }
            }
        }
        List<SchemaSampler.KafkaSample> out = new ArrayList<>();
        for (String key : order) {
            SchemaSampler.KafkaSample s = first.get(key);
            if (s != null) {
                out.add(s);
            }
        }
        LOG.info(
                "Sampled the first record of {} of {} non-empty partition(s) of {}",
                out.size(),
                start.size(),
                KafkaUnreachableException.describe(input, groupId));
        return out;
    }
}

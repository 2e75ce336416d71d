package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Asks the brokers, at launch of a local Kafka run, for every subscribed partition: its end offset
 * (the last stable offset, as a {@code read_committed} consumer sees it) and the offset the
 * source's starting position resolves to (earliest / latest / the group's committed offset, else
 * earliest / the first offset at or after a timestamp, else the end / the per-partition offset,
 * else earliest). Keys are {@link KafkaProgressFunction#partitionKey}. One admin client, closed
 * before returning; 60 s timeout.
 */
final class KafkaOffsets {
    /** End and start offsets per partition key. */
    static final class Snapshot {
        final Map<String, Long> endOffsets = new TreeMap<>();
        final Map<String, Long> startOffsets = new TreeMap<>();
    }

    private KafkaOffsets() {}

    /**
     * @throws IllegalArgumentException when a listed topic does not exist, or per-partition
     *     starting offsets name a partition not subscribed or an offset outside its records
     * @throws IllegalStateException when the brokers cannot be reached (cause attached)
     */
    static Snapshot fetch(KafkaInput input, String groupId) {
        Properties props = new Properties();
        props.putAll(input.properties);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, input.bootstrapServers);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "changeflow-launcher");
        try (Admin admin = Admin.create(props)) {
            Collection<String> topics;
            if (input.topicPattern != null) {
                Pattern p = input.pattern();
                topics = new ArrayList<>();
                for (String t : admin.listTopics().names().get(60, TimeUnit.SECONDS)) {
                    if (p.matcher(t).matches()) {
                        topics.add(t);
                    }
                }
            } else {
                topics = input.topics;
            }
            List<TopicPartition> partitions = new ArrayList<>();
            if (!topics.isEmpty()) {
                Map<String, TopicDescription> described;
                try {
                    described =
                            admin.describeTopics(topics).allTopicNames().get(60, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                        throw new IllegalArgumentException(
                                "kafka: a topic of "
                                        + topics
                                        + " does not exist on "
                                        + input.bootstrapServers
                                        + " ("
                                        + e.getCause().getMessage()
                                        + ")");
                    }
                    throw e;
                }
                described
                        .values()
                        .forEach(
                                d ->
                                        d.partitions()
                                                .forEach(
                                                        p ->
                                                                partitions.add(
                                                                        new TopicPartition(
                                                                                d.name(),
                                                                                p.partition()))));
            }
            Snapshot s = new Snapshot();
            Map<TopicPartition, Long> end = list(admin, partitions, OffsetSpec.latest());
            end.forEach(
                    (tp, o) ->
                            s.endOffsets.put(
                                    KafkaProgressFunction.partitionKey(tp.topic(), tp.partition()),
                                    o));
            Map<TopicPartition, Long> start;
            StartingOffsets so = input.startingOffsets;
            switch (so.kind()) {
                case EARLIEST:
                    start = list(admin, partitions, OffsetSpec.earliest());
                    break;
                case LATEST:
                    start = end;
                    break;
                case COMMITTED:
                    {
                        Map<TopicPartition, Long> earliest =
                                list(admin, partitions, OffsetSpec.earliest());
                        Map<TopicPartition, OffsetAndMetadata> committed =
                                admin.listConsumerGroupOffsets(groupId)
                                        .partitionsToOffsetAndMetadata()
                                        .get(60, TimeUnit.SECONDS);
                        start = new HashMap<>(earliest);
                        committed.forEach(
                                (tp, om) -> {
                                    if (om != null && start.containsKey(tp)) {
                                        start.put(tp, om.offset());
                                    }
                                });
                        break;
                    }
                case OFFSETS:
                    {
                        List<String> unknown = so.unknownPartitions(partitions);
                        if (!unknown.isEmpty()) {
                            throw new IllegalArgumentException(
                                    "starting-offsets names partitions the input does not"
                                            + " subscribe to: "
                                            + String.join(", ", unknown)
                                            + " (subscribed: "
                                            + partitions.stream()
                                                    .map(TopicPartition::toString)
                                                    .sorted()
                                                    .collect(Collectors.joining(", "))
                                            + ")");
                        }
                        Map<TopicPartition, Long> earliest =
                                list(admin, partitions, OffsetSpec.earliest());
                        start = new HashMap<>();
                        for (TopicPartition tp : partitions) {
                            start.put(tp, so.startOf(tp, earliest.get(tp), end.get(tp)));
                        }
                        break;
                    }
                default:
                    {
                        Map<TopicPartition, Long> at =
                                list(
                                        admin,
                                        partitions,
                                        OffsetSpec.forTimestamp(so.timestampMillis()));
                        start = new HashMap<>();
                        for (TopicPartition tp : partitions) {
                            long o = at.getOrDefault(tp, -1L);
                            start.put(tp, o < 0 ? end.get(tp) : o);
                        }
                    }
            }
            start.forEach(
                    (tp, o) ->
                            s.startOffsets.put(
                                    KafkaProgressFunction.partitionKey(tp.topic(), tp.partition()),
                                    o));
            return s;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while listing Kafka offsets", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(
                    "cannot list the offsets of "
                            + input
                            + ": "
                            + (e.getCause() != null ? e.getCause() : e),
                    e);
        }
    }

    private static Map<TopicPartition, Long> list(
            Admin admin, List<TopicPartition> partitions, OffsetSpec spec)
            throws ExecutionException, InterruptedException, TimeoutException {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        partitions.forEach(tp -> req.put(tp, spec));
        Map<TopicPartition, Long> out = new HashMap<>();
        if (req.isEmpty()) {
            return out;
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> res =
                admin.listOffsets(req, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                        .all()
                        .get(60, TimeUnit.SECONDS);
        res.forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }
}

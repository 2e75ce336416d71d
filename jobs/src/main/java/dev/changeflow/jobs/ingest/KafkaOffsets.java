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
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.time.Duration;
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
 * before returning; each request waits at most {@link #BROKER_TIMEOUT}.
 */
final class KafkaOffsets {
    /** End and start offsets per partition key. */
    static final class Snapshot {
        final Map<String, Long> endOffsets = new TreeMap<>();
        final Map<String, Long> startOffsets = new TreeMap<>();
    }

    /** How long the launcher waits for the brokers to answer one request before it gives up. */
    static final Duration BROKER_TIMEOUT = Duration.ofSeconds(20);

    private KafkaOffsets() {}

    /** As {@link #fetch(KafkaInput, String, Duration)} with {@link #BROKER_TIMEOUT}. */
    static Snapshot fetch(KafkaInput input, String groupId) {
        return fetch(input, groupId, BROKER_TIMEOUT);
    }

    /**
     * @param groupId the consumer group the job uses (the configured one, else {@code
     *     changeflow-<name>}); named in the messages
     * @param timeout how long one request to the brokers may wait
     * @throws IllegalArgumentException when a listed topic does not exist, or per-partition
     *     starting offsets name a partition not subscribed or an offset outside its records; {@code
     *     SOURCE_NOT_FOUND: kafka: no broker of bootstrap servers H:P answered within N s ...} (a
     *     {@link KafkaUnreachableException}) when no broker answers within {@code timeout} or the
     *     bootstrap servers do not resolve
     * @throws IllegalStateException when the brokers answer with an error (cause attached)
     */
    static Snapshot fetch(KafkaInput input, String groupId, Duration timeout) {
        Properties props = new Properties();
        props.putAll(input.properties);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, input.bootstrapServers);
        String ms = String.valueOf(timeout.toMillis());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "changeflow-launcher");
        long wait = timeout.toMillis();
        Admin created;
        try {
            created = Admin.create(props);
        } catch (KafkaException e) {
            // e.g. "No resolvable bootstrap urls given in bootstrap.servers"
            throw new KafkaUnreachableException(
                    input, groupId, "cannot be resolved (" + rootMessage(e) + ")");
        }
        try (Admin admin = created) {
            Collection<String> topics;
            if (input.topicPattern != null) {
                Pattern p = input.pattern();
                topics = new ArrayList<>();
                for (String t : admin.listTopics().names().get(wait, TimeUnit.MILLISECONDS)) {
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
                            admin.describeTopics(topics)
                                    .allTopicNames()
                                    .get(wait, TimeUnit.MILLISECONDS);
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
            Map<TopicPartition, Long> end = list(admin, partitions, OffsetSpec.latest(), wait);
            end.forEach(
                    (tp, o) ->
                            s.endOffsets.put(
                                    KafkaProgressFunction.partitionKey(tp.topic(), tp.partition()),
                                    o));
            Map<TopicPartition, Long> start;
            StartingOffsets so = input.startingOffsets;
            switch (so.kind()) {
                case EARLIEST:
                    start = list(admin, partitions, OffsetSpec.earliest(), wait);
                    break;
                case LATEST:
                    start = end;
                    break;
                case COMMITTED:
                    {
                        Map<TopicPartition, Long> earliest =
                                list(admin, partitions, OffsetSpec.earliest(), wait);
                        Map<TopicPartition, OffsetAndMetadata> committed =
                                admin.listConsumerGroupOffsets(groupId)
                                        .partitionsToOffsetAndMetadata()
                                        .get(wait, TimeUnit.MILLISECONDS);
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
                                list(admin, partitions, OffsetSpec.earliest(), wait);
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
                                        OffsetSpec.forTimestamp(so.timestampMillis()),
                                        wait);
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
        } catch (TimeoutException e) {
            throw new KafkaUnreachableException(input, groupId, timeout);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
                throw new KafkaUnreachableException(input, groupId, timeout);
            }
            throw new IllegalStateException(
                    "cannot list the offsets of "
                            + KafkaUnreachableException.describe(input, groupId)
                            + ": "
                            + (e.getCause() != null ? e.getCause() : e),
                    e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return String.valueOf(root.getMessage());
    }

    private static Map<TopicPartition, Long> list(
            Admin admin, List<TopicPartition> partitions, OffsetSpec spec, long waitMillis)
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
                        .get(waitMillis, TimeUnit.MILLISECONDS);
        res.forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }
}

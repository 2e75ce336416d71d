package dev.changeflow.sources.kafka;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.KafkaSourceOptions;

import java.util.Map;

/**
 * Entry point of the Kafka input: a Flink {@link KafkaSource} of raw {@link KafkaChangeRecord}s
 * configured from a {@link KafkaInput}. The source is unbounded (a local run decides when to stop,
 * see the jobs module), reads with {@code isolation.level=read_committed}, commits the consumed
 * offsets to the consumer group on every completed checkpoint (positions for exactly-once live in
 * Flink's checkpoints; the committed offsets are for monitoring and {@code committed} starts), and
 * discovers partitions of new topics under a pattern every 30 s.
 */
@PublicEvolving
public final class KafkaChangeSource {
    private KafkaChangeSource() {}

    /**
     * @param input validated here
     * @param defaultGroupId group id used when the input names none (e.g. {@code changeflow-<job>})
     * @throws IllegalArgumentException for invalid settings (see {@link KafkaInput#validate()})
     */
    public static KafkaSource<KafkaChangeRecord> create(KafkaInput input, String defaultGroupId) {
        input.validate();
        KafkaSourceBuilder<KafkaChangeRecord> b =
                KafkaSource.<KafkaChangeRecord>builder()
                        .setBootstrapServers(input.bootstrapServers)
                        .setGroupId(input.groupId != null ? input.groupId : defaultGroupId)
                        .setStartingOffsets(input.startingOffsets.toInitializer())
                        .setDeserializer(new KafkaChangeRecordDeserializationSchema())
                        .setProperty("isolation.level", "read_committed")
                        .setProperty(KafkaSourceOptions.COMMIT_OFFSETS_ON_CHECKPOINT.key(), "true")
                        .setProperty(
                                KafkaSourceOptions.PARTITION_DISCOVERY_INTERVAL_MS.key(), "30000")
                        .setClientIdPrefix(
                                "changeflow-"
                                        + (input.groupId != null ? input.groupId : defaultGroupId));
        if (input.topicPattern != null) {
            b.setTopicPattern(input.pattern());
        } else {
            b.setTopics(input.topics);
        }
        for (Map.Entry<String, String> e : input.properties.entrySet()) {
            b.setProperty(e.getKey(), e.getValue());
        }
        return b.build();
    }
}

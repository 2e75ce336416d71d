package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import javax.annotation.Nullable;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Kafka in a local run: ends at the end offsets seen at launch (fetched with an admin client in
 * {@link #prepare}), or, with {@code untilIdle}, after no record arrived for that long.
 */
final class LocalKafkaInput implements LocalInput {
    private final KafkaInput kafka;
    @Nullable private final Duration untilIdle;
    private final String defaultGroupId;
    private KafkaOffsets.Snapshot offsets;
    private long lastRecords = -1;

    /** The Kafka readers' parallelism ({@code kafka-readers}), set when the job is built. */
    private int readers = 1;

    private long lastChange;

    /**
     * @param untilIdle null = stop at the end offsets seen at launch
     * @param defaultGroupId the consumer group when {@code kafka} names none
     */
    LocalKafkaInput(KafkaInput kafka, @Nullable Duration untilIdle, String defaultGroupId) {
        this.kafka = kafka;
        this.untilIdle = untilIdle;
        this.defaultGroupId = defaultGroupId;
    }

    @Override
    public boolean prepare(
            LocalCheckpoints checkpoints,
            Optional<org.apache.flink.core.fs.Path> restore,
            LocalJobState state,
            PrintStream out) {
        offsets = KafkaOffsets.fetch(kafka, kafka.groupId != null ? kafka.groupId : defaultGroupId);
        if (offsets.endOffsets.isEmpty()) {
            out.println(
                    "WARNING: no partition of "
                            + subscription()
                            + " exists yet on "
                            + kafka.bootstrapServers);
        }
        return true;
    }

    @Override
    public String describe() {
        return "Kafka "
                + subscription()
                + " ("
                + offsets.endOffsets.size()
                + " partition(s), "
                + (untilIdle != null
                        ? "until idle for " + untilIdle.toMillis() + " ms"
                        : "up to the end offsets at launch")
                + ")";
    }

    /** {@code pattern <regex>} or {@code topics [a, b]}. */
    private String subscription() {
        return kafka.topicPattern != null
                ? "pattern " + kafka.topicPattern
                : "topics " + kafka.topics;
    }

    @Override
    public void build(StreamExecutionEnvironment env, IngestPlan plan, CatalogSettings catalog) {
        readers = plan.config.kafkaReaders;
        IngestJob.buildKafka(
                env,
                plan,
                catalog,
                kafka,
                new KafkaProgressFunction(offsets.endOffsets, offsets.startOffsets));
    }

    @Override
    public boolean done() {
        if (untilIdle != null) {
            long records = LocalMetrics.sum("recordsIn");
            long now = System.nanoTime();
            if (records != lastRecords
                    || !LocalMetrics.registered(KafkaProgressFunction.PENDING_METRIC)) {
                lastRecords = records;
                lastChange = now;
                return false;
            }
            return now - lastChange >= untilIdle.toNanos();
        }
        // summed over the readers of one attempt: each knows only the partitions it read
        return LocalMetrics.sumOfOneAttempt(KafkaProgressFunction.PENDING_METRIC, readers)
                        .orElse(-1)
                == 0;
    }

    @Override
    public String progress() {
        if (!LocalMetrics.registered(KafkaProgressFunction.PENDING_METRIC)) {
            return "partitions starting";
        }
        OptionalLong summed =
                LocalMetrics.sumOfOneAttempt(KafkaProgressFunction.PENDING_METRIC, readers);
        if (summed.isEmpty()) {
            return "partitions starting";
        }
        long pending = summed.getAsLong();
        return "partitions at end "
                + (offsets.endOffsets.size() - pending)
                + "/"
                + offsets.endOffsets.size();
    }
}

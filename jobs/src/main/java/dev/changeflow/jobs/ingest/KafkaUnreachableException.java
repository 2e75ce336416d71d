package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.kafka.KafkaInput;

import java.time.Duration;

/**
 * The launcher of a Kafka run could not reach the brokers: no broker of the bootstrap servers
 * answered within the time the launcher waits ({@code KafkaOffsets.BROKER_TIMEOUT}, 20 s), or the
 * bootstrap servers do not resolve. Bad input (exit code 2, README "Exit codes"): the message reads
 * {@code SOURCE_NOT_FOUND: kafka: no broker of bootstrap servers H:P answered within 20 s (topics
 * [t], consumer group changeflow-NAME): check the bootstrap servers and that the brokers run}, and
 * names the consumer group the job would use (the configured one, else {@code changeflow-<name>}).
 * A pipeline file reports it as the {@code SqlException} code {@code SOURCE_NOT_FOUND} at its flow.
 */
public final class KafkaUnreachableException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The error code the message starts with. */
    public static final String CODE = "SOURCE_NOT_FOUND";

    KafkaUnreachableException(KafkaInput input, String groupId, Duration waited) {
        super(
                CODE
                        + ": kafka: no broker of bootstrap servers "
                        + input.bootstrapServers
                        + " answered within "
                        + seconds(waited)
                        + " ("
                        + subscription(input, groupId)
                        + "): check the bootstrap servers and that the brokers run");
    }

    KafkaUnreachableException(KafkaInput input, String groupId, String what) {
        super(
                CODE
                        + ": kafka: bootstrap servers "
                        + input.bootstrapServers
                        + " "
                        + what
                        + " ("
                        + subscription(input, groupId)
                        + "): check the bootstrap servers");
    }

    /** {@code H:P topics [t] consumer group G from earliest}, with the group the job uses. */
    static String describe(KafkaInput input, String groupId) {
        return input.bootstrapServers
                + " "
                + subscription(input, groupId)
                + " from "
                + input.startingOffsets;
    }

    private static String subscription(KafkaInput input, String groupId) {
        return (input.topicPattern != null
                        ? "topic pattern " + input.topicPattern
                        : "topics " + input.topics)
                + ", consumer group "
                + groupId;
    }

    private static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }
}

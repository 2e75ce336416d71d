package dev.changeflow.sources.kafka;

import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Where an ingest job reads its change records from Kafka: bootstrap servers, either a list of
 * topics or a topic pattern (a Java regex matched against whole topic names), the consumer group,
 * the starting position and extra Kafka consumer properties. Each topic maps to the flow whose
 * {@code table} is the topic's last dot-separated segment (Debezium's {@code
 * <server>.<schema>.<table>}); under a pattern, a record of a topic no flow claims is quarantined
 * as {@code UNKNOWN_TOPIC}.
 *
 * <p>Mutable settings (fields public, as in the flows file); {@link #validate()} checks them.
 */
@PublicEvolving
public final class KafkaInput implements Serializable {
    private static final long serialVersionUID = 1L;

    /** {@code host:port[,host:port...]}. */
    @Nullable public String bootstrapServers;

    /** Topics to read; empty when {@link #topicPattern} is set. */
    public List<String> topics = new ArrayList<>();

    /** A regex over whole topic names; null when {@link #topics} is set. */
    @Nullable public String topicPattern;

    /** Consumer group id: offsets are committed there on every completed checkpoint. */
    @Nullable public String groupId;

    public StartingOffsets startingOffsets = StartingOffsets.earliest();

    /** Extra Kafka consumer properties ({@code security.protocol}, {@code sasl.*}, ...). */
    public Map<String, String> properties = new LinkedHashMap<>();

    /**
     * @throws IllegalArgumentException naming the option: no bootstrap servers, neither or both of
     *     topics and topic-pattern, a pattern that does not compile, an empty group id,
     *     per-partition starting offsets naming a topic outside the topics (or the pattern), named
     *     with the topics given
     */
    public KafkaInput validate() {
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
            throw new IllegalArgumentException(
                    "kafka: 'bootstrap-servers' (--kafka-bootstrap HOST:PORT) is required");
        }
        boolean hasTopics = topics != null && !topics.isEmpty();
        if (hasTopics == (topicPattern != null)) {
            throw new IllegalArgumentException(
                    "kafka: give exactly one of 'topics' (--topics a,b) and 'topic-pattern'"
                            + " (--topic-pattern REGEX)"
                            + (hasTopics ? ", not both" : ""));
        }
        if (topicPattern != null) {
            pattern();
        }
        if (groupId != null && groupId.isBlank()) {
            throw new IllegalArgumentException("kafka: 'group-id' must not be blank");
        }
        if (startingOffsets == null) {
            throw new IllegalArgumentException(
                    "kafka: 'starting-offsets' must be earliest, latest, committed, timestamp:<epoch ms>"
                            + " or per-partition offsets");
        }
        if (startingOffsets.kind() == StartingOffsets.Kind.OFFSETS) {
            // refused here, before any broker is asked: a topic the input does not read
            List<String> outside = new ArrayList<>();
            for (String topic : startingOffsets.offsets().keySet()) {
                if (!subscribes(topic)) {
                    outside.add(topic);
                }
            }
            if (!outside.isEmpty()) {
                throw new IllegalArgumentException(
                        "kafka: 'starting-offsets' names "
                                + (outside.size() == 1 ? "topic " : "topics ")
                                + String.join(", ", outside)
                                + ", which the input does not subscribe to ("
                                + (topicPattern != null
                                        ? "topic-pattern " + topicPattern
                                        : "topics: " + String.join(", ", topics))
                                + ")");
            }
        }
        return this;
    }

    /**
     * The compiled {@link #topicPattern}. @throws IllegalArgumentException when it is not a regex
     */
    public Pattern pattern() {
        try {
            return Pattern.compile(topicPattern);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException(
                    "kafka: 'topic-pattern' is not a valid regex: "
                            + e.getDescription()
                            + " in '"
                            + topicPattern
                            + "'");
        }
    }

    /** Whether a topic belongs to this input (in the list, or matching the pattern). */
    public boolean subscribes(String topic) {
        return topicPattern != null ? pattern().matcher(topic).matches() : topics.contains(topic);
    }

    @Override
    public String toString() {
        return bootstrapServers
                + " "
                + (topicPattern != null ? "pattern " + topicPattern : "topics " + topics)
                + " group "
                + groupId
                + " from "
                + startingOffsets;
    }
}

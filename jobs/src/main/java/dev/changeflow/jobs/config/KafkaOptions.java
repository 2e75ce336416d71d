package dev.changeflow.jobs.config;

import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.operators.options.OptionSet;
import dev.changeflow.operators.options.ResolvedOptions;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.configuration.ConfigOption;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.apache.flink.configuration.ConfigOptions.key;

/**
 * The options of the Kafka input — a flows file's {@code kafka:} block and the {@code ingest} flags
 * {@code --kafka-bootstrap}, {@code --topics}, {@code --topic-pattern}, {@code --group-id}, {@code
 * --starting-offsets}, {@code --until-idle} — declared once with their parsers in {@link #SET}.
 * Extra Kafka consumer properties ({@code properties:} / {@code --kafka-property}) are passed as
 * they are.
 */
public final class KafkaOptions {
    private KafkaOptions() {}

    public static final ConfigOption<String> BOOTSTRAP_SERVERS =
            key("bootstrap-servers")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("host:port[,host:port...]; required.");

    public static final ConfigOption<List<String>> TOPICS =
            key("topics")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "Topics to read; a topic maps to the flow whose table is its last segment.");

    public static final ConfigOption<String> TOPIC_PATTERN =
            key("topic-pattern")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("A regex over whole topic names (instead of topics).");

    public static final ConfigOption<String> GROUP_ID =
            key("group-id")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Consumer group (offsets committed on checkpoints); default:"
                                    + " changeflow-<name>.");

    public static final ConfigOption<String> STARTING_OFFSETS =
            key("starting-offsets")
                    .stringType()
                    .defaultValue("earliest")
                    .withDescription(
                            "earliest, latest, committed, timestamp:<epoch ms> or per-partition offsets"
                                    + " {\"topic\":{\"0\":23,\"1\":-2}} (-2 earliest, -1 latest,"
                                    + " unnamed partitions earliest); used only without saved state.");

    public static final ConfigOption<Duration> UNTIL_IDLE =
            key("until-idle")
                    .durationType()
                    .noDefaultValue()
                    .withDescription(
                            "Local runs: stop once no record arrived for this long, instead of at the end"
                                    + " offsets seen at launch.");

    /** The scalar Kafka options with their parsers ({@code properties} is a block of its own). */
    public static final OptionSet SET =
            OptionSet.builder("kafka")
                    .add(BOOTSTRAP_SERVERS, OptionParsers.text(BOOTSTRAP_SERVERS.key()))
                    .add(TOPICS, OptionParsers.list())
                    .add(TOPIC_PATTERN, OptionParsers.text(TOPIC_PATTERN.key()))
                    .add(GROUP_ID, OptionParsers.text(GROUP_ID.key()))
                    .add(
                            STARTING_OFFSETS,
                            raw -> {
                                // per-partition offsets may be written as a YAML mapping too
                                String text =
                                        raw instanceof Map
                                                ? StartingOffsets.parse(json(raw)).toString()
                                                : String.valueOf(raw).trim();
                                StartingOffsets.parse(text);
                                return text;
                            })
                    .add(UNTIL_IDLE, OptionParsers.duration(UNTIL_IDLE.key()))
                    .build();

    private static String json(Object mapping) {
        try {
            return new ObjectMapper().writeValueAsString(mapping);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("starting-offsets: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * Sets the options {@code r} was given onto {@code k}: {@code topics} clears a pattern and
     * {@code topic-pattern} the topics.
     */
    public static void apply(ResolvedOptions r, KafkaInput k) {
        if (r.isSet(BOOTSTRAP_SERVERS)) {
            k.bootstrapServers = r.get(BOOTSTRAP_SERVERS);
        }
        // a list of topics and a pattern exclude each other: one given by a stronger place
        // replaces the other (a flag over the file); both from one place are left to validate()
        boolean topics = r.isSet(TOPICS);
        boolean pattern = r.isSet(TOPIC_PATTERN);
        if (topics) {
            k.topics = r.get(TOPICS);
        }
        if (pattern) {
            k.topicPattern = r.get(TOPIC_PATTERN);
        }
        if (topics && (!pattern || r.source(TOPICS).compareTo(r.source(TOPIC_PATTERN)) < 0)) {
            k.topicPattern = null;
        }
        if (pattern && (!topics || r.source(TOPIC_PATTERN).compareTo(r.source(TOPICS)) < 0)) {
            k.topics = new ArrayList<>();
        }
        if (r.isSet(GROUP_ID)) {
            k.groupId = r.get(GROUP_ID);
        }
        if (r.isSet(STARTING_OFFSETS)) {
            k.startingOffsets = StartingOffsets.parse(r.get(STARTING_OFFSETS));
        }
    }
}

package dev.changeflow.sources.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

import java.io.Serializable;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Where a Kafka input starts when the job has no saved position for a partition: {@code earliest},
 * {@code latest}, {@code committed} (the consumer group's committed offsets; partitions without one
 * start at the earliest offset) or {@code timestamp:<epoch ms>} (the first record at or after that
 * time; partitions without such a record start at their end) or per-partition offsets as Spark's
 * Kafka source writes them, {@code {"topic":{"0":23,"1":-2}}} (an offset per partition number;
 * {@value #EARLIEST} = the earliest offset, {@value #LATEST} = the end; a subscribed partition the
 * map does not name starts at its earliest offset). A job restored from a checkpoint or savepoint
 * continues from its saved positions whatever this says.
 */
@PublicEvolving
public final class StartingOffsets implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The kind of starting position. */
    public enum Kind {
        EARLIEST,
        LATEST,
        COMMITTED,
        TIMESTAMP,
        /** An offset per partition ({@link #offsets()}). */
        OFFSETS
    }

    /** In per-partition offsets: the partition's earliest offset (Spark's and Flink's -2). */
    public static final long EARLIEST = -2;

    /** In per-partition offsets: the partition's end, only new records (Spark's and Flink's -1). */
    public static final long LATEST = -1;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Kind kind;
    private final long timestampMillis;

    /** OFFSETS: topic → partition → offset, sorted; empty otherwise. */
    private final TreeMap<String, TreeMap<Integer, Long>> offsets;

    private StartingOffsets(Kind kind, long timestampMillis) {
        this(kind, timestampMillis, new TreeMap<>());
    }

    private StartingOffsets(
            Kind kind, long timestampMillis, TreeMap<String, TreeMap<Integer, Long>> offsets) {
        this.kind = kind;
        this.timestampMillis = timestampMillis;
        this.offsets = offsets;
    }

    public static StartingOffsets earliest() {
        return new StartingOffsets(Kind.EARLIEST, -1);
    }

    public static StartingOffsets latest() {
        return new StartingOffsets(Kind.LATEST, -1);
    }

    public static StartingOffsets committed() {
        return new StartingOffsets(Kind.COMMITTED, -1);
    }

    /**
     * @param epochMillis epoch milliseconds, at least 0
     */
    public static StartingOffsets timestamp(long epochMillis) {
        if (epochMillis < 0) {
            throw new IllegalArgumentException(
                    "starting-offsets timestamp must be epoch milliseconds >= 0, got "
                            + epochMillis);
        }
        return new StartingOffsets(Kind.TIMESTAMP, epochMillis);
    }

    /**
     * Per-partition offsets: topic → partition number → offset ({@link #EARLIEST}, {@link #LATEST}
     * or an offset ≥ 0).
     *
     * @throws IllegalArgumentException on an empty map, a topic without partitions, a negative
     *     partition number or an offset below {@link #EARLIEST}
     */
    public static StartingOffsets offsets(Map<String, ? extends Map<Integer, Long>> offsets) {
        TreeMap<String, TreeMap<Integer, Long>> copy = new TreeMap<>();
        offsets.forEach(
                (topic, partitions) -> {
                    if (partitions.isEmpty()) {
                        throw new IllegalArgumentException(
                                "starting-offsets: topic '" + topic + "' names no partition");
                    }
                    TreeMap<Integer, Long> p = new TreeMap<>();
                    partitions.forEach(
                            (partition, offset) -> {
                                if (partition < 0 || offset < EARLIEST) {
                                    throw new IllegalArgumentException(
                                            "starting-offsets: partition "
                                                    + partition
                                                    + " of topic '"
                                                    + topic
                                                    + "' at offset "
                                                    + offset
                                                    + ": partitions are numbers >= 0, offsets are"
                                                    + " >= 0, -2 (earliest) or -1 (latest)");
                                }
                                p.put(partition, offset);
                            });
                    copy.put(topic, p);
                });
        if (copy.isEmpty()) {
            throw new IllegalArgumentException(
                    "starting-offsets: the per-partition offsets name no topic");
        }
        return new StartingOffsets(Kind.OFFSETS, -1, copy);
    }

    /**
     * Parses {@code earliest | latest | committed | timestamp:<epoch ms>} (case-insensitive) or a
     * JSON object of per-partition offsets, {@code {"topic":{"0":23,"1":-2}}} ({@link #offsets}).
     *
     * @throws IllegalArgumentException naming the accepted values, or what is wrong in the JSON
     */
    public static StartingOffsets parse(String text) {
        if (text.trim().startsWith("{")) {
            return parseOffsets(text.trim());
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        switch (s) {
            case "earliest":
                return earliest();
            case "latest":
                return latest();
            case "committed":
                return committed();
            default:
                if (s.startsWith("timestamp:")) {
                    try {
                        return timestamp(Long.parseLong(s.substring("timestamp:".length()).trim()));
                    } catch (NumberFormatException e) {
                        // fall through to the error below
                    }
                }
                throw new IllegalArgumentException(
                        "starting-offsets: expected earliest, latest, committed,"
                                + " timestamp:<epoch ms> or per-partition offsets"
                                + " {\"topic\":{\"0\":23,\"1\":-2}}, got '"
                                + text
                                + "'");
        }
    }

    private static StartingOffsets parseOffsets(String text) {
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "starting-offsets: per-partition offsets are not valid JSON ("
                            + e.getOriginalMessage()
                            + "): "
                            + text);
        }
        String shape =
                "starting-offsets: expected per-partition offsets as"
                        + " {\"topic\":{\"<partition>\":<offset>, ...}, ...}, got "
                        + text;
        if (!root.isObject()) {
            throw new IllegalArgumentException(shape);
        }
        Map<String, Map<Integer, Long>> offsets = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> t = root.fields(); t.hasNext(); ) {
            Map.Entry<String, JsonNode> topic = t.next();
            if (!topic.getValue().isObject()) {
                throw new IllegalArgumentException(shape);
            }
            Map<Integer, Long> partitions = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> p = topic.getValue().fields();
                    p.hasNext(); ) {
                Map.Entry<String, JsonNode> e = p.next();
                int partition;
                try {
                    partition = Integer.parseInt(e.getKey());
                } catch (NumberFormatException x) {
                    throw new IllegalArgumentException(
                            "starting-offsets: '"
                                    + e.getKey()
                                    + "' of topic '"
                                    + topic.getKey()
                                    + "' is not a partition number");
                }
                if (!e.getValue().canConvertToLong() || !e.getValue().isIntegralNumber()) {
                    throw new IllegalArgumentException(
                            "starting-offsets: the offset of partition "
                                    + partition
                                    + " of topic '"
                                    + topic.getKey()
                                    + "' is not a whole number: "
                                    + e.getValue());
                }
                partitions.put(partition, e.getValue().longValue());
            }
            offsets.put(topic.getKey(), partitions);
        }
        return offsets(offsets);
    }

    public Kind kind() {
        return kind;
    }

    /** The timestamp of {@link Kind#TIMESTAMP}, epoch ms; -1 otherwise. */
    public long timestampMillis() {
        return timestampMillis;
    }

    /**
     * {@link Kind#OFFSETS}: topic → partition number → offset ({@link #EARLIEST}, {@link #LATEST}
     * or ≥ 0), sorted and unmodifiable; empty for the other kinds.
     */
    public Map<String, Map<Integer, Long>> offsets() {
        Map<String, Map<Integer, Long>> out = new TreeMap<>();
        offsets.forEach((t, p) -> out.put(t, Collections.unmodifiableMap(p)));
        return Collections.unmodifiableMap(out);
    }

    /**
     * {@link Kind#OFFSETS}: where {@code tp} starts given its earliest and end offsets — unnamed
     * partitions and {@link #EARLIEST} at {@code earliest}, {@link #LATEST} at {@code end}.
     *
     * @throws IllegalArgumentException when the named offset lies outside [{@code earliest}, {@code
     *     end}] (records before the earliest offset are gone; past the end none exist yet)
     */
    public long startOf(TopicPartition tp, long earliest, long end) {
        Map<Integer, Long> p = offsets.get(tp.topic());
        Long o = p == null ? null : p.get(tp.partition());
        if (o == null || o == EARLIEST) {
            return earliest;
        }
        if (o == LATEST) {
            return end;
        }
        if (o < earliest || o > end) {
            throw new IllegalArgumentException(
                    "starting-offsets: partition "
                            + tp.partition()
                            + " of topic '"
                            + tp.topic()
                            + "' starts at offset "
                            + o
                            + ", outside its records ["
                            + earliest
                            + ", "
                            + end
                            + "] (earliest offset, end)");
        }
        return o;
    }

    /**
     * {@link Kind#OFFSETS}: the topics and partitions the offsets name that are not among {@code
     * subscribed}, as {@code topic-partition} (empty when all are).
     */
    public List<String> unknownPartitions(Collection<TopicPartition> subscribed) {
        java.util.Set<TopicPartition> known = new java.util.HashSet<>(subscribed);
        List<String> out = new java.util.ArrayList<>();
        offsets.forEach(
                (t, ps) ->
                        ps.keySet()
                                .forEach(
                                        p -> {
                                            if (!known.contains(new TopicPartition(t, p))) {
                                                out.add(t + "-" + p);
                                            }
                                        }));
        return out;
    }

    /** Flink's offsets initializer for this starting position. */
    @SuppressWarnings("deprecation")
    public OffsetsInitializer toInitializer() {
        switch (kind) {
            case EARLIEST:
                return OffsetsInitializer.earliest();
            case LATEST:
                return OffsetsInitializer.latest();
            case COMMITTED:
                return OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
            case OFFSETS:
                return new PerPartition(this);
            default:
                return OffsetsInitializer.timestamp(timestampMillis);
        }
    }

    /**
     * The initializer of per-partition offsets: each partition's start resolved from its earliest
     * and end offsets as {@link #startOf} does (so a cluster job starts where a local run does).
     */
    private static final class PerPartition implements OffsetsInitializer {
        private static final long serialVersionUID = 1L;
        private final StartingOffsets offsets;

        PerPartition(StartingOffsets offsets) {
            this.offsets = offsets;
        }

        @Override
        public Map<TopicPartition, Long> getPartitionOffsets(
                Collection<TopicPartition> partitions,
                PartitionOffsetsRetriever partitionOffsetsRetriever) {
            Map<TopicPartition, Long> earliest =
                    partitionOffsetsRetriever.beginningOffsets(partitions);
            Map<TopicPartition, Long> end = partitionOffsetsRetriever.endOffsets(partitions);
            Map<TopicPartition, Long> out = new HashMap<>();
            for (TopicPartition tp : partitions) {
                out.put(tp, offsets.startOf(tp, earliest.get(tp), end.get(tp)));
            }
            return out;
        }

        @Override
        public OffsetResetStrategy getAutoOffsetResetStrategy() {
            return OffsetResetStrategy.EARLIEST;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StartingOffsets
                && ((StartingOffsets) o).kind == kind
                && ((StartingOffsets) o).timestampMillis == timestampMillis
                && ((StartingOffsets) o).offsets.equals(offsets);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, timestampMillis, offsets);
    }

    /** The form {@link #parse} reads: per-partition offsets as compact JSON. */
    @Override
    public String toString() {
        if (kind == Kind.OFFSETS) {
            ObjectNode root = JSON.createObjectNode();
            offsets.forEach(
                    (t, ps) -> {
                        ObjectNode n = root.putObject(t);
                        ps.forEach((p, o) -> n.put(String.valueOf(p), o));
                    });
            return root.toString();
        }
        return kind == Kind.TIMESTAMP
                ? "timestamp:" + timestampMillis
                : kind.name().toLowerCase(Locale.ROOT);
    }
}

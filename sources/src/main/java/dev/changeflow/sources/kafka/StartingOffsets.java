package dev.changeflow.sources.kafka;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;

/**
 * Where a Kafka input starts when the job has no saved position for a partition: {@code earliest},
 * {@code latest}, {@code committed} (the consumer group's committed offsets; partitions without one
 * start at the earliest offset) or {@code timestamp:<epoch ms>} (the first record at or after that
 * time; partitions without such a record start at their end). A job restored from a checkpoint or
 * savepoint continues from its saved positions whatever this says.
 */
@PublicEvolving
public final class StartingOffsets implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The kind of starting position. */
    public enum Kind {
        EARLIEST,
        LATEST,
        COMMITTED,
        TIMESTAMP
    }

    private final Kind kind;
    private final long timestampMillis;

    private StartingOffsets(Kind kind, long timestampMillis) {
        this.kind = kind;
        this.timestampMillis = timestampMillis;
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
     * Parses {@code earliest | latest | committed | timestamp:<epoch ms>} (case-insensitive).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static StartingOffsets parse(String text) {
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
                        "starting-offsets: expected earliest, latest, committed or"
                                + " timestamp:<epoch ms>, got '"
                                + text
                                + "'");
        }
    }

    public Kind kind() {
        return kind;
    }

    /** The timestamp of {@link Kind#TIMESTAMP}, epoch ms; -1 otherwise. */
    public long timestampMillis() {
        return timestampMillis;
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
            default:
                return OffsetsInitializer.timestamp(timestampMillis);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StartingOffsets
                && ((StartingOffsets) o).kind == kind
                && ((StartingOffsets) o).timestampMillis == timestampMillis;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, timestampMillis);
    }

    @Override
    public String toString() {
        return kind == Kind.TIMESTAMP
                ? "timestamp:" + timestampMillis
                : kind.name().toLowerCase(Locale.ROOT);
    }
}

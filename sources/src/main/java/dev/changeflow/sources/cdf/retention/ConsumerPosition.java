package dev.changeflow.sources.cdf.retention;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Instant;
import java.util.Objects;

/**
 * What a consumer file says (F7): consumer {@code consumerId} will read version {@code nextVersion}
 * next (so it still needs snapshot {@code nextVersion - 1}, the parent of that version), as of
 * {@code updatedAt}.
 */
@PublicEvolving
public final class ConsumerPosition {

    private final String consumerId;
    private final long nextVersion;
    private final Instant updatedAt;

    /** A position; {@code nextVersion} ≥ 0. */
    public ConsumerPosition(String consumerId, long nextVersion, Instant updatedAt) {
        this.consumerId = Objects.requireNonNull(consumerId, "consumerId");
        this.nextVersion = nextVersion;
        this.updatedAt = Objects.requireNonNull(updatedAt, "updatedAt");
    }

    /** The consumer's id (the file name without {@code .json}). */
    public String consumerId() {
        return consumerId;
    }

    /** The first version the consumer has not read yet. */
    public long nextVersion() {
        return nextVersion;
    }

    /** When the consumer last wrote its position. */
    public Instant updatedAt() {
        return updatedAt;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ConsumerPosition)) {
            return false;
        }
        ConsumerPosition that = (ConsumerPosition) o;
        return nextVersion == that.nextVersion
                && consumerId.equals(that.consumerId)
                && updatedAt.equals(that.updatedAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(consumerId, nextVersion, updatedAt);
    }

    /** {@code id@nextVersion (updatedAt)}. */
    @Override
    public String toString() {
        return consumerId + "@" + nextVersion + " (" + updatedAt + ")";
    }
}

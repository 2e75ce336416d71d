package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * Format versions of changeflow's keyed-state values (semantics.md A4). The first byte of every
 * value is its format version; readers switch on it and keep every older version readable. Never
 * change the byte layout of a released version: add a version and a stored sample ({@code
 * state/src/test/resources/state-samples/v<N>/}).
 */
@Internal
public final class StateFormat {
    /**
     * The first layout version: every layout; still written for SCD type 1 values and sequences.
     */
    public static final int V1 = 1;

    /**
     * SCD type 2 layouts since history chunks: the key's head gains the number of its next history
     * chunk ({@link Scd2CurrentValue}), and history is written as chunks of entries ({@link
     * Scd2HistoryChunk}) instead of one {@link Scd2HistoryEntry} per record. v1 entries stay
     * readable.
     */
    public static final int V2 = 2;

    /** The newest version this release reads (and writes, for SCD type 2). */
    public static final int CURRENT_VERSION = V2;

    private StateFormat() {}

    /**
     * Returns the version byte of {@code value} after checking it is readable.
     *
     * @throws IllegalStateException for an empty value or an unknown (newer) version
     */
    static int versionOf(byte[] value, String layout) {
        return versionOf(value, layout, CURRENT_VERSION);
    }

    /**
     * Returns the version byte of {@code value} after checking it is a version from 1 to {@code
     * newest} (a layout that has no later version yet passes its own newest).
     *
     * @throws IllegalStateException for an empty value or an unknown (newer) version
     */
    static int versionOf(byte[] value, String layout, int newest) {
        if (value == null || value.length == 0) {
            throw new IllegalStateException("empty changeflow " + layout + " state value");
        }
        int v = value[0] & 0xFF;
        if (v < V1 || v > newest) {
            throw new IllegalStateException(
                    "changeflow "
                            + layout
                            + " state value has format version "
                            + v
                            + ", this release reads versions 1.."
                            + newest
                            + " (state written by a newer changeflow?)");
        }
        return v;
    }
}

package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * Format versions of changeflow's keyed-state values (semantics.md A4). The first byte of every
 * value is its format version; readers switch on it and keep every older version readable. Never
 * change the byte layout of a released version: add a version and a stored sample
 * ({@code state/src/test/resources/state-samples/v<N>/}).
 */
@Internal
public final class StateFormat {
    /** The first layout version (all layouts in this package). */
    public static final int V1 = 1;
    /** The version written by this release. */
    public static final int CURRENT_VERSION = V1;

    private StateFormat() {}

    /**
     * Returns the version byte of {@code value} after checking it is readable.
     *
     * @throws IllegalStateException for an empty value or an unknown (newer) version
     */
    static int versionOf(byte[] value, String layout) {
        if (value == null || value.length == 0) {
            throw new IllegalStateException("empty changeflow " + layout + " state value");
        }
        int v = value[0] & 0xFF;
        switch (v) {
            case V1:
                return v;
            default:
                throw new IllegalStateException(
                        "changeflow " + layout + " state value has format version " + v
                                + ", this release reads versions 1.." + CURRENT_VERSION
                                + " (state written by a newer changeflow?)");
        }
    }
}

package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * State layout of one key of an AUTO CDC FROM SNAPSHOT flow (semantics.md A6): the snapshot version
 * in which the key was last seen and the 128-bit hash ({@link Hash128}) of its values then. 25
 * bytes per key whatever the row's width, so the diff's state stays O(keys), never a copy of the
 * table.
 *
 * <pre>
 * v1: [0x01] [last seen version: 8 bytes, big-endian] [hash of the values: 16 bytes]
 * </pre>
 */
@Internal
public final class SnapshotKeyValue {
    /** Length of a v1 value in bytes. */
    public static final int V1_LENGTH = 1 + Long.BYTES + Hash128.BYTES;

    private static final int VERSION_OFFSET = 1;
    private static final int HASH_OFFSET = VERSION_OFFSET + Long.BYTES;

    private SnapshotKeyValue() {}

    /**
     * A fresh value for a key seen in snapshot {@code version} with values hashing to {@code
     * hash[hashOff, hashOff + 16)}.
     */
    public static byte[] encode(long version, byte[] hash, int hashOff) {
        byte[] v = new byte[V1_LENGTH];
        v[0] = (byte) StateFormat.V1;
        for (int i = 0; i < Long.BYTES; i++) {
            v[VERSION_OFFSET + i] = (byte) (version >>> (56 - 8 * i));
        }
        System.arraycopy(hash, hashOff, v, HASH_OFFSET, Hash128.BYTES);
        return v;
    }

    /**
     * The version in which the key was last seen.
     *
     * @throws IllegalStateException for an empty value, an unknown format version or a short value
     */
    public static long version(byte[] value) {
        check(value);
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (value[VERSION_OFFSET + i] & 0xFFL);
        }
        return v;
    }

    /** Whether the stored hash equals {@code hash[hashOff, hashOff + 16)}. */
    public static boolean sameHash(byte[] value, byte[] hash, int hashOff) {
        check(value);
        return java.util.Arrays.equals(
                value,
                HASH_OFFSET,
                HASH_OFFSET + Hash128.BYTES,
                hash,
                hashOff,
                hashOff + Hash128.BYTES);
    }

    private static void check(byte[] value) {
        switch (StateFormat.versionOf(value, "snapshot key", StateFormat.V1)) {
            case StateFormat.V1:
            default:
                if (value.length != V1_LENGTH) {
                    throw new IllegalStateException(
                            "corrupt changeflow snapshot key state value: "
                                    + value.length
                                    + " bytes, expected "
                                    + V1_LENGTH);
                }
        }
    }
}

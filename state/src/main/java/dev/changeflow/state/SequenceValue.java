package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

import java.util.Arrays;

/**
 * State layout of a bare sequence: the SCD1 tombstone of a key (A3) and the table-wide truncate
 * tombstone kept in broadcast state (A3).
 *
 * <pre>
 * v1: [0x01] [memcomparable sequence bytes ({@link SequenceCodec}) up to the end]
 * </pre>
 */
@Internal
public final class SequenceValue {
    private SequenceValue() {}

    /** A fresh state value holding {@code seq[off, off + len)}. */
    public static byte[] encode(byte[] seq, int off, int len) {
        byte[] v = new byte[len + 1];
        v[0] = (byte) StateFormat.V1;
        System.arraycopy(seq, off, v, 1, len);
        return v;
    }

    /** Offset of the sequence bytes in {@code value} (they run to the end). */
    public static int sequenceOffset(byte[] value) {
        switch (StateFormat.versionOf(value, "sequence", StateFormat.V1)) {
            case StateFormat.V1:
            default:
                return 1;
        }
    }

    /** The sequence bytes of {@code value} (a copy). */
    public static byte[] sequence(byte[] value) {
        return Arrays.copyOfRange(value, sequenceOffset(value), value.length);
    }

    /**
     * Compares {@code seq[off, off + len)} with the sequence stored in {@code value} (unsigned
     * bytes).
     */
    public static int compare(byte[] seq, int off, int len, byte[] value) {
        int o = sequenceOffset(value);
        return Arrays.compareUnsigned(seq, off, off + len, value, o, value.length);
    }
}

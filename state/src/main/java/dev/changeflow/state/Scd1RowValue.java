package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * State layout of an SCD type 1 key's current row (A3): the applied sequence and the complete
 * projected target row (needed for {@code -U}/{@code -D} images and IGNORE NULL UPDATES).
 *
 * <pre>
 * v1: [0x01] [varint n] [n bytes: memcomparable applied sequence] [row: {@link RowCodec} of the target row]
 * </pre>
 *
 * <p>A reusable view: {@link #wrap(byte[])} parses offsets without copying.
 */
@Internal
public final class Scd1RowValue {
    private final ByteReader reader = new ByteReader();
    private byte[] value;
    private int seqOff;
    private int seqLen;
    private int rowOff;

    /** Writes a v1 value into {@code out} (reset by the caller). */
    public static void write(
            ByteWriter out,
            byte[] seq,
            int seqOff,
            int seqLen,
            byte[] row,
            int rowOff,
            int rowLen) {
        out.writeByte(StateFormat.V1);
        out.writeLengthPrefixed(seq, seqOff, seqLen);
        out.writeBytes(row, rowOff, rowLen);
    }

    public Scd1RowValue wrap(byte[] value) {
        this.value = value;
        switch (StateFormat.versionOf(value, "SCD1 row", StateFormat.V1)) {
            case StateFormat.V1:
            default:
                reader.wrap(value, 1, value.length - 1);
                seqLen = reader.readVarInt();
                seqOff = reader.position();
                rowOff = seqOff + seqLen;
                if (rowOff > value.length) {
                    throw new IllegalStateException("corrupt SCD1 row state value");
                }
                return this;
        }
    }

    public byte[] bytes() {
        return value;
    }

    public int sequenceOffset() {
        return seqOff;
    }

    public int sequenceLength() {
        return seqLen;
    }

    public int rowOffset() {
        return rowOff;
    }

    public int rowLength() {
        return value.length - rowOff;
    }
}

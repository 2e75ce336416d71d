package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * State layout of an SCD type 2 key's head (A4): the highest applied sequence and, when the key is
 * live, its open version (start, tracked-values hash, current row). Lets in-order records be
 * applied without reading the per-version history map.
 *
 * <pre>
 * v1: [0x01] [flags: bit 0 = live] [varint n] [n bytes: highest applied sequence]
 *     live only: [varint m] [m bytes: open version's start] [16 bytes: tracked hash] [row ({@link RowCodec})]
 * </pre>
 *
 * <p>A reusable view: {@link #wrap(byte[])} parses offsets without copying.
 */
@Internal
public final class Scd2CurrentValue {
    private static final int LIVE = 1;

    private final ByteReader reader = new ByteReader();
    private byte[] value;
    private boolean live;
    private int maxOff;
    private int maxLen;
    private int startOff;
    private int startLen;
    private int hashOff;
    private int rowOff;

    /** Writes a v1 value of a key whose last applied record is a delete at {@code max}. */
    public static void writeDeleted(ByteWriter out, byte[] max, int off, int len) {
        out.writeByte(StateFormat.CURRENT_VERSION);
        out.writeByte(0);
        out.writeLengthPrefixed(max, off, len);
    }

    /** Writes a v1 value of a live key. */
    public static void writeLive(
            ByteWriter out,
            byte[] max, int maxOff, int maxLen,
            byte[] start, int startOff, int startLen,
            byte[] hash, int hashOff,
            byte[] row, int rowOff, int rowLen) {
        out.writeByte(StateFormat.CURRENT_VERSION);
        out.writeByte(LIVE);
        out.writeLengthPrefixed(max, maxOff, maxLen);
        out.writeLengthPrefixed(start, startOff, startLen);
        out.writeBytes(hash, hashOff, Hash128.BYTES);
        out.writeBytes(row, rowOff, rowLen);
    }

    public Scd2CurrentValue wrap(byte[] value) {
        this.value = value;
        switch (StateFormat.versionOf(value, "SCD2 current")) {
            case StateFormat.V1:
            default:
                reader.wrap(value, 1, value.length - 1);
                live = (reader.readUnsignedByte() & LIVE) != 0;
                maxLen = reader.readVarInt();
                maxOff = reader.position();
                reader.skip(maxLen);
                if (live) {
                    startLen = reader.readVarInt();
                    startOff = reader.position();
                    reader.skip(startLen);
                    hashOff = reader.position();
                    reader.skip(Hash128.BYTES);
                    rowOff = reader.position();
                } else {
                    startOff = startLen = hashOff = rowOff = -1;
                }
                return this;
        }
    }

    public byte[] bytes() {
        return value;
    }

    public boolean live() {
        return live;
    }

    public int maxOffset() {
        return maxOff;
    }

    public int maxLength() {
        return maxLen;
    }

    public int startOffset() {
        return startOff;
    }

    public int startLength() {
        return startLen;
    }

    public int hashOffset() {
        return hashOff;
    }

    public int rowOffset() {
        return rowOff;
    }

    public int rowLength() {
        return live ? value.length - rowOff : 0;
    }
}

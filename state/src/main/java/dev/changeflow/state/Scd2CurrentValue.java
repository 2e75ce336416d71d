package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * State layout of an SCD type 2 key's head (A4): the highest applied sequence, the number of the
 * key's next history chunk ({@link Scd2HistoryChunk}) and, when the key is live, its open version
 * (start, tracked-values hash, current row). Lets in-order records be applied without reading the
 * key's history.
 *
 * <pre>
 * v2: [0x02] [flags: bit 0 = live] [varint: next chunk number] [varint n] [n bytes: highest applied sequence]
 *     live only: [varint m] [m bytes: open version's start] [16 bytes: tracked hash] [row ({@link RowCodec})]
 * v1: as v2 without the next chunk number (read as 0; v1 history is one {@link Scd2HistoryEntry} per record)
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
    private int nextChunk;
    private int maxOff;
    private int maxLen;
    private int startOff;
    private int startLen;
    private int hashOff;
    private int rowOff;

    /** Writes a v2 value of a key whose last applied record is a delete at {@code max}. */
    public static void writeDeleted(ByteWriter out, int nextChunk, byte[] max, int off, int len) {
        out.writeByte(StateFormat.V2);
        out.writeByte(0);
        out.writeVarInt(nextChunk);
        out.writeLengthPrefixed(max, off, len);
    }

    /** Writes a v2 value of a live key. */
    public static void writeLive(
            ByteWriter out,
            int nextChunk,
            byte[] max,
            int maxOff,
            int maxLen,
            byte[] start,
            int startOff,
            int startLen,
            byte[] hash,
            int hashOff,
            byte[] row,
            int rowOff,
            int rowLen) {
        out.writeByte(StateFormat.V2);
        out.writeByte(LIVE);
        out.writeVarInt(nextChunk);
        out.writeLengthPrefixed(max, maxOff, maxLen);
        out.writeLengthPrefixed(start, startOff, startLen);
        out.writeBytes(hash, hashOff, Hash128.BYTES);
        out.writeBytes(row, rowOff, rowLen);
    }

    /**
     * Parses {@code value} (v1 or v2).
     *
     * @throws IllegalStateException for an empty value or a format version newer than v2
     */
    public Scd2CurrentValue wrap(byte[] value) {
        this.value = value;
        int version = StateFormat.versionOf(value, "SCD2 current", StateFormat.V2);
        reader.wrap(value, 1, value.length - 1);
        live = (reader.readUnsignedByte() & LIVE) != 0;
        nextChunk = version >= StateFormat.V2 ? reader.readVarInt() : 0;
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

    public byte[] bytes() {
        return value;
    }

    public boolean live() {
        return live;
    }

    /** The number of the key's next history chunk (0 for a v1 head). */
    public int nextChunk() {
        return nextChunk;
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

package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * State layout of a chunk of an SCD type 2 key's history (A4): the entries applied to the key
 * between two flushes of the AUTO CDC operator, in sequence order, stored as one MapState value.
 * The versions of the target are derived from all entries of the key in sequence order (see the
 * operators module's {@code Scd2Logic}). One chunk per key and flush instead of one value per
 * record: a key updated n times between two checkpoints costs one state write, and an upsert whose
 * row equals the previous upsert's (the common no-op) costs its sequence and one byte.
 *
 * <pre>
 * v2: [0x02] entry*   (entries up to the end of the value, ascending sequence within the chunk)
 * entry: [varint n] [n bytes: sequence] [kind]
 *        kind 1 UPSERT: [16 bytes: tracked hash] [varint m] [m bytes: row ({@link RowCodec})]
 *        kind 2 DELETE: nothing
 *        kind 3 SAME:   nothing; an upsert with the hash and row of the nearest UPSERT before it in this chunk
 * </pre>
 *
 * <p>Map keys of chunks are {@link #mapKey(int)}: a character above {@code U+00FF} followed by the
 * chunk's number, so they never collide with the v1 entries' keys ({@link Scd2HistoryEntry},
 * ISO-8859-1 sequence strings) of state restored from an older release. Two chunks of one key may
 * hold an entry with the same sequence (a later same-sequence replacement); readers keep the one
 * the A2 rule picks (a delete over an upsert, else the larger byte-wise row), which is the one that
 * was applied last.
 */
@Internal
public final class Scd2HistoryChunk {
    public static final int UPSERT = 1;
    public static final int DELETE = 2;
    public static final int SAME = 3;

    /** First character of every chunk's map key (outside ISO-8859-1). */
    public static final char KEY_PREFIX = '\u0100';

    private Scd2HistoryChunk() {}

    /** The map key of chunk number {@code n} of a key. */
    public static String mapKey(int n) {
        return KEY_PREFIX + Integer.toString(n);
    }

    /** True when {@code mapKey} names a chunk (else it is a v1 entry's sequence). */
    public static boolean isChunkKey(String mapKey) {
        return !mapKey.isEmpty() && mapKey.charAt(0) == KEY_PREFIX;
    }

    /** Starts a chunk in {@code out} (writes the version byte). */
    public static void start(ByteWriter out) {
        out.writeByte(StateFormat.V2);
    }

    /**
     * Appends an upsert entry.
     *
     * @return the offset of the entry's hash in {@code out} (its row is the last {@code rowLen}
     *     bytes)
     */
    public static int appendUpsert(
            ByteWriter out,
            byte[] seq,
            int seqOff,
            int seqLen,
            byte[] hash,
            int hashOff,
            byte[] row,
            int rowOff,
            int rowLen) {
        out.writeLengthPrefixed(seq, seqOff, seqLen);
        out.writeByte(UPSERT);
        int at = out.size();
        out.writeBytes(hash, hashOff, Hash128.BYTES);
        out.writeLengthPrefixed(row, rowOff, rowLen);
        return at;
    }

    /** Appends an upsert whose hash and row equal the nearest preceding upsert's in this chunk. */
    public static void appendSame(ByteWriter out, byte[] seq, int seqOff, int seqLen) {
        out.writeLengthPrefixed(seq, seqOff, seqLen);
        out.writeByte(SAME);
    }

    /** Appends a delete entry. */
    public static void appendDelete(ByteWriter out, byte[] seq, int seqOff, int seqLen) {
        out.writeLengthPrefixed(seq, seqOff, seqLen);
        out.writeByte(DELETE);
    }

    /**
     * A forward-only reader of one chunk's entries. {@link #next()} moves to the next entry; the
     * accessors then give offsets into {@link #bytes()}; a SAME entry reads as an upsert with the
     * offsets of the upsert it repeats.
     */
    public static final class Cursor {
        private final ByteReader reader = new ByteReader();
        private byte[] value;
        private int seqOff;
        private int seqLen;
        private boolean delete;
        private int hashOff = -1;
        private int rowOff = -1;
        private int rowLen = -1;

        /**
         * Positions before the first entry of {@code value}.
         *
         * @throws IllegalStateException for an empty value or a version other than v2
         */
        public Cursor wrap(byte[] value) {
            int version = StateFormat.versionOf(value, "SCD2 history chunk", StateFormat.V2);
            if (version != StateFormat.V2) {
                throw new IllegalStateException(
                        "SCD2 history chunk with format version " + version + ", expected 2");
            }
            return wrap(value, 1, value.length - 1);
        }

        /**
         * Positions before the first entry of the entries in {@code value[off, off + len)} (no
         * version byte).
         */
        public Cursor wrap(byte[] value, int off, int len) {
            this.value = value;
            reader.wrap(value, off, len);
            hashOff = rowOff = rowLen = -1;
            return this;
        }

        /**
         * Moves to the next entry.
         *
         * @return false at the end of the chunk
         * @throws IllegalStateException when the bytes are not a well-formed chunk
         */
        public boolean next() {
            if (reader.remaining() == 0) {
                return false;
            }
            try {
                seqLen = length(reader.readVarInt());
                seqOff = reader.position();
                reader.skip(seqLen);
                int kind = reader.readUnsignedByte();
                switch (kind) {
                    case UPSERT:
                        delete = false;
                        hashOff = reader.position();
                        reader.skip(Hash128.BYTES);
                        rowLen = length(reader.readVarInt());
                        rowOff = reader.position();
                        reader.skip(rowLen);
                        break;
                    case SAME:
                        if (hashOff < 0) {
                            throw new IllegalStateException(
                                    "SAME entry without an upsert before it");
                        }
                        delete = false;
                        break;
                    case DELETE:
                        delete = true;
                        break;
                    default:
                        throw new IllegalStateException("entry kind " + kind);
                }
                return true;
            } catch (IllegalStateException | IndexOutOfBoundsException e) {
                throw new IllegalStateException("corrupt SCD2 history chunk: " + e.getMessage(), e);
            }
        }

        private static int length(int n) {
            if (n < 0) {
                throw new IllegalStateException("negative length " + n);
            }
            return n;
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

        public boolean isDelete() {
            return delete;
        }

        /** Offset of the upsert's 16-byte tracked hash (upserts only). */
        public int hashOffset() {
            return hashOff;
        }

        /** Offset of the upsert's row (upserts only). */
        public int rowOffset() {
            return rowOff;
        }

        public int rowLength() {
            return rowLen;
        }
    }
}

package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * State layout of one SCD type 2 history entry (A4), the value of a MapState entry whose user key
 * is the entry's sequence ({@link SequenceCodec#toMapKey}). One entry per applied record boundary:
 * an {@link #UPSERT} (the record's tracked-values hash and its complete row) or a {@link #DELETE}.
 * The versions of the target are derived from the entries in sequence order (see the operators
 * module's {@code Scd2Logic}); entries are independent map values, so a key with 10,000 versions
 * never rewrites one growing value.
 *
 * <pre>
 * v1: [0x01] [kind: 1 = UPSERT, 2 = DELETE]  UPSERT only: [16 bytes: tracked hash] [row ({@link RowCodec})]
 * </pre>
 */
@Internal
public final class Scd2HistoryEntry {
    public static final int UPSERT = 1;
    public static final int DELETE = 2;

    private byte[] value;
    private int kind;

    public static void writeUpsert(
            ByteWriter out, byte[] hash, int hashOff, byte[] row, int rowOff, int rowLen) {
        out.writeByte(StateFormat.V1);
        out.writeByte(UPSERT);
        out.writeBytes(hash, hashOff, Hash128.BYTES);
        out.writeBytes(row, rowOff, rowLen);
    }

    public static byte[] delete() {
        return new byte[] {(byte) StateFormat.V1, DELETE};
    }

    public Scd2HistoryEntry wrap(byte[] value) {
        this.value = value;
        switch (StateFormat.versionOf(value, "SCD2 history", StateFormat.V1)) {
            case StateFormat.V1:
            default:
                if (value.length < 2) {
                    throw new IllegalStateException("corrupt SCD2 history state value");
                }
                kind = value[1];
                if (kind != UPSERT && kind != DELETE) {
                    throw new IllegalStateException(
                            "corrupt SCD2 history state value: kind " + kind);
                }
                if (kind == UPSERT && value.length < 2 + Hash128.BYTES) {
                    throw new IllegalStateException(
                            "corrupt SCD2 history state value: short upsert");
                }
                return this;
        }
    }

    public byte[] bytes() {
        return value;
    }

    public int kind() {
        return kind;
    }

    public boolean isDelete() {
        return kind == DELETE;
    }

    public int hashOffset() {
        return 2;
    }

    public int rowOffset() {
        return 2 + Hash128.BYTES;
    }

    public int rowLength() {
        return value.length - rowOffset();
    }
}

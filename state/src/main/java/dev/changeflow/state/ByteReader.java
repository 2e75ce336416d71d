package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * A cursor over a byte array with the reads matching {@link ByteWriter}. Reusable through {@link
 * #wrap(byte[], int, int)}; reading past the limit throws {@link IllegalStateException} (corrupt
 * state). Not thread-safe.
 */
@Internal
public final class ByteReader {
    private byte[] buf;
    private int pos;
    private int limit;

    public ByteReader() {}

    public ByteReader(byte[] bytes) {
        wrap(bytes, 0, bytes.length);
    }

    public ByteReader wrap(byte[] bytes, int off, int len) {
        this.buf = bytes;
        this.pos = off;
        this.limit = off + len;
        return this;
    }

    public byte[] array() {
        return buf;
    }

    public int position() {
        return pos;
    }

    public void position(int newPos) {
        this.pos = newPos;
    }

    public int limit() {
        return limit;
    }

    public int remaining() {
        return limit - pos;
    }

    private void need(int n) {
        if (pos + n > limit) {
            throw new IllegalStateException(
                    "corrupt changeflow state value: need "
                            + n
                            + " bytes at offset "
                            + pos
                            + ", limit "
                            + limit);
        }
    }

    public int readUnsignedByte() {
        need(1);
        return buf[pos++] & 0xFF;
    }

    public byte readByte() {
        need(1);
        return buf[pos++];
    }

    public void skip(int n) {
        need(n);
        pos += n;
    }

    public byte[] readBytes(int n) {
        need(n);
        byte[] out = new byte[n];
        System.arraycopy(buf, pos, out, 0, n);
        pos += n;
        return out;
    }

    public int readShortBE() {
        need(2);
        int v = ((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF);
        pos += 2;
        return v;
    }

    public int readIntBE() {
        need(4);
        int v =
                ((buf[pos] & 0xFF) << 24)
                        | ((buf[pos + 1] & 0xFF) << 16)
                        | ((buf[pos + 2] & 0xFF) << 8)
                        | (buf[pos + 3] & 0xFF);
        pos += 4;
        return v;
    }

    public long readLongBE() {
        need(8);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (buf[pos + i] & 0xFF);
        }
        pos += 8;
        return v;
    }

    public int readVarInt() {
        int result = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            int b = readUnsignedByte();
            result |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return result;
            }
        }
        throw new IllegalStateException(
                "corrupt changeflow state value: varint too long at " + pos);
    }

    public long readVarLong() {
        long result = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            int b = readUnsignedByte();
            result |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return result;
            }
        }
        throw new IllegalStateException(
                "corrupt changeflow state value: varlong too long at " + pos);
    }

    public int readZigZagInt() {
        int v = readVarInt();
        return (v >>> 1) ^ -(v & 1);
    }

    public long readZigZagLong() {
        long v = readVarLong();
        return (v >>> 1) ^ -(v & 1);
    }
}

package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

import java.util.Arrays;

/**
 * A growable, reusable byte buffer with the primitive writes of changeflow's state codec
 * (semantics.md A4): fixed-width big-endian integers, unsigned LEB128 varints and zig-zag varints.
 *
 * <p>Reuse one instance per operator: {@link #reset()} keeps the allocated buffer, so encoding a
 * record allocates only when the buffer must grow or when {@link #toByteArray()} copies the result.
 * Not thread-safe.
 */
@Internal
public final class ByteWriter {
    private byte[] buf;
    private int pos;

    public ByteWriter() {
        this(256);
    }

    public ByteWriter(int initialCapacity) {
        this.buf = new byte[Math.max(16, initialCapacity)];
    }

    /** Forgets the content, keeps the buffer. */
    public ByteWriter reset() {
        pos = 0;
        return this;
    }

    /** Number of bytes written since the last {@link #reset()}. */
    public int size() {
        return pos;
    }

    /** The internal buffer; valid bytes are {@code [0, size())}. Do not keep a reference. */
    public byte[] buffer() {
        return buf;
    }

    /** A fresh copy of the written bytes. */
    public byte[] toByteArray() {
        return Arrays.copyOf(buf, pos);
    }

    private void ensure(int extra) {
        int need = pos + extra;
        if (need > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(need, buf.length * 2));
        }
    }

    public void writeByte(int b) {
        ensure(1);
        buf[pos++] = (byte) b;
    }

    public void writeBytes(byte[] b) {
        writeBytes(b, 0, b.length);
    }

    public void writeBytes(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, pos, len);
        pos += len;
    }

    /** Writes a varint length followed by the bytes. */
    public void writeLengthPrefixed(byte[] b, int off, int len) {
        writeVarInt(len);
        writeBytes(b, off, len);
    }

    public void writeShortBE(int v) {
        ensure(2);
        buf[pos++] = (byte) (v >>> 8);
        buf[pos++] = (byte) v;
    }

    public void writeIntBE(int v) {
        ensure(4);
        buf[pos++] = (byte) (v >>> 24);
        buf[pos++] = (byte) (v >>> 16);
        buf[pos++] = (byte) (v >>> 8);
        buf[pos++] = (byte) v;
    }

    public void writeLongBE(long v) {
        ensure(8);
        for (int shift = 56; shift >= 0; shift -= 8) {
            buf[pos++] = (byte) (v >>> shift);
        }
    }

    /** Unsigned LEB128 (1 byte for 0..127, at most 5 bytes). */
    public void writeVarInt(int v) {
        ensure(5);
        while ((v & ~0x7F) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    /** Unsigned LEB128 of a long (at most 10 bytes). */
    public void writeVarLong(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    /** Zig-zag varint: small negative numbers stay short. */
    public void writeZigZagInt(int v) {
        writeVarInt((v << 1) ^ (v >> 31));
    }

    public void writeZigZagLong(long v) {
        writeVarLong((v << 1) ^ (v >> 63));
    }
}

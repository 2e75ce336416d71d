package dev.changeflow.state;

import org.apache.flink.annotation.Internal;

/**
 * MurmurHash3 x64 128-bit over a byte range (A3/A4: value comparisons by hash use at least 128
 * bits, a 64-bit collision could silently drop an update). The result is written as 16 bytes
 * big-endian (h1, h2). Stable across JVMs and releases: the hash is part of stored state.
 */
@Internal
public final class Hash128 {
    /** Length of a hash in bytes. */
    public static final int BYTES = 16;

    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;

    private Hash128() {}

    /** Appends the 16-byte hash of {@code data[off, off + len)} to {@code out}. */
    public static void hash(byte[] data, int off, int len, ByteWriter out) {
        long h1 = 0;
        long h2 = 0;
        int blocks = len / 16;
        for (int i = 0; i < blocks; i++) {
            int p = off + i * 16;
            long k1 = getLongLE(data, p);
            long k2 = getLongLE(data, p + 8);
            k1 *= C1;
            k1 = Long.rotateLeft(k1, 31);
            k1 *= C2;
            h1 ^= k1;
            h1 = Long.rotateLeft(h1, 27);
            h1 += h2;
            h1 = h1 * 5 + 0x52dce729;
            k2 *= C2;
            k2 = Long.rotateLeft(k2, 33);
            k2 *= C1;
            h2 ^= k2;
            h2 = Long.rotateLeft(h2, 31);
            h2 += h1;
            h2 = h2 * 5 + 0x38495ab5;
        }
        long k1 = 0;
        long k2 = 0;
        int tail = off + blocks * 16;
        switch (len & 15) {
            case 15:
                k2 ^= (long) (data[tail + 14] & 0xFF) << 48;
            case 14:
                k2 ^= (long) (data[tail + 13] & 0xFF) << 40;
            case 13:
                k2 ^= (long) (data[tail + 12] & 0xFF) << 32;
            case 12:
                k2 ^= (long) (data[tail + 11] & 0xFF) << 24;
            case 11:
                k2 ^= (long) (data[tail + 10] & 0xFF) << 16;
            case 10:
                k2 ^= (long) (data[tail + 9] & 0xFF) << 8;
            case 9:
                k2 ^= data[tail + 8] & 0xFF;
                k2 *= C2;
                k2 = Long.rotateLeft(k2, 33);
                k2 *= C1;
                h2 ^= k2;
            case 8:
                k1 ^= (long) (data[tail + 7] & 0xFF) << 56;
            case 7:
                k1 ^= (long) (data[tail + 6] & 0xFF) << 48;
            case 6:
                k1 ^= (long) (data[tail + 5] & 0xFF) << 40;
            case 5:
                k1 ^= (long) (data[tail + 4] & 0xFF) << 32;
            case 4:
                k1 ^= (long) (data[tail + 3] & 0xFF) << 24;
            case 3:
                k1 ^= (long) (data[tail + 2] & 0xFF) << 16;
            case 2:
                k1 ^= (long) (data[tail + 1] & 0xFF) << 8;
            case 1:
                k1 ^= data[tail] & 0xFF;
                k1 *= C1;
                k1 = Long.rotateLeft(k1, 31);
                k1 *= C2;
                h1 ^= k1;
            default:
                break;
        }
        h1 ^= len;
        h2 ^= len;
        h1 += h2;
        h2 += h1;
        h1 = fmix(h1);
        h2 = fmix(h2);
        h1 += h2;
        h2 += h1;
        out.writeLongBE(h1);
        out.writeLongBE(h2);
    }

    /** The 16-byte hash of {@code data} as a fresh array. */
    public static byte[] hash(byte[] data) {
        ByteWriter w = new ByteWriter(BYTES);
        hash(data, 0, data.length, w);
        return w.toByteArray();
    }

    private static long getLongLE(byte[] b, int p) {
        return (b[p] & 0xFFL)
                | (b[p + 1] & 0xFFL) << 8
                | (b[p + 2] & 0xFFL) << 16
                | (b[p + 3] & 0xFFL) << 24
                | (b[p + 4] & 0xFFL) << 32
                | (b[p + 5] & 0xFFL) << 40
                | (b[p + 6] & 0xFFL) << 48
                | (b[p + 7] & 0xFFL) << 56;
    }

    private static long fmix(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}

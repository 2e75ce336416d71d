package dev.changeflow.sources.files;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Walks the members of a gzip stream (RFC 1952) and checks each one — header, deflate data, CRC32
 * and ISIZE of the trailer — without keeping what it decompresses to. {@link ChangeLineBulkFormat}
 * runs it over a {@code .gz} file before reading the file's lines: deflate has no intermediate
 * checksum, so a member's decompressed bytes can be trusted only once its trailer matched, and a
 * flipped byte inside a member decompresses to plausible garbage before the reader notices
 * (semantics.md A5, {@code DAMAGED_FILE}).
 *
 * <p>The result says up to which decompressed byte the stream verified ({@link
 * Result#verifiedBytes}, the sum of the ISIZEs of the members whose checks passed, in order) and
 * what stopped the walk:
 *
 * <ul>
 *   <li>{@link Outcome#INTACT}: every member verified; the stream ends after a trailer, or is
 *       followed only by zero bytes (padding, which gzip(1) accepts too).
 *   <li>{@link Outcome#TRUNCATED}: the stream ends inside a member ({@link Result#inHeader} says
 *       whether inside its header, else inside its deflate data or trailer).
 *   <li>{@link Outcome#DAMAGED}: a member fails a check — not the gzip magic {@code 1f 8b} (also
 *       non-zero bytes after a member), a compression method other than deflate, reserved flag bits
 *       set, a header CRC16 mismatch, a deflate data error, a CRC32 or ISIZE mismatch.
 * </ul>
 *
 * Cost: one inflate of the whole file with the native {@link Inflater} and {@link CRC32} over its
 * output, through {@value #BUFFER_BYTES}-byte buffers; nothing is allocated per member.
 */
@Internal
final class GzipVerifier {
    /** Size of the compressed input buffer and of the (discarded) output buffer, bytes. */
    static final int BUFFER_BYTES = 256 * 1024;

    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;
    private static final int RESERVED_FLAGS = 0xe0;

    /** What stopped the walk over the members. */
    enum Outcome {
        INTACT,
        TRUNCATED,
        DAMAGED
    }

    /** The outcome of {@link #verify}. */
    static final class Result {
        final Outcome outcome;

        /** Members whose checks passed, from the first on. */
        final int verifiedMembers;

        /**
         * Decompressed bytes of the verified members (the offset in the decompressed stream where
         * trust ends).
         */
        final long verifiedBytes;

        /** For {@link Outcome#TRUNCATED}: whether the stream ends inside a member header. */
        final boolean inHeader;

        /**
         * What failed or where the stream ends, e.g. {@code member 2 (at compressed byte 1830): CRC
         * mismatch (...)}; null when intact.
         */
        @Nullable final String detail;

        Result(
                Outcome outcome,
                int verifiedMembers,
                long verifiedBytes,
                boolean inHeader,
                @Nullable String detail) {
            this.outcome = outcome;
            this.verifiedMembers = verifiedMembers;
            this.verifiedBytes = verifiedBytes;
            this.inHeader = inHeader;
            this.detail = detail;
        }

        @Override
        public String toString() {
            return outcome
                    + " after "
                    + verifiedMembers
                    + " verified member(s), "
                    + verifiedBytes
                    + " bytes"
                    + (detail == null ? "" : ": " + detail);
        }
    }

    /** Thrown inside the walk when a member fails a check. */
    private static final class Damage extends Exception {
        private static final long serialVersionUID = 1L;

        Damage(String message) {
            super(message, null, false, false);
        }
    }

    private final InputStream in;
    private final byte[] buf = new byte[BUFFER_BYTES];
    private int pos;
    private int lim;

    /** Compressed bytes before {@code buf[0]}. */
    private long bufferStart;

    private final CRC32 headerCrc = new CRC32();

    private GzipVerifier(InputStream in) {
        this.in = in;
    }

    /**
     * Verifies the gzip stream {@code in} (read to its end or to the first failing check; not
     * closed).
     *
     * @throws IOException only when reading {@code in} fails; damage and truncation are results
     */
    static Result verify(InputStream in) throws IOException {
        return new GzipVerifier(in).walk();
    }

    private Result walk() throws IOException {
        Inflater inflater = new Inflater(true);
        byte[] out = new byte[BUFFER_BYTES];
        CRC32 crc = new CRC32();
        int members = 0;
        long verified = 0;
        try {
            while (true) {
                long memberStart = offset();
                String member =
                        "member " + (members + 1) + " (at compressed byte " + memberStart + ")";
                if (!available()) {
                    if (members == 0) {
                        return new Result(
                                Outcome.TRUNCATED, 0, 0, true, member + ": no bytes at all");
                    }
                    return new Result(Outcome.INTACT, members, verified, false, null);
                }
                if (members > 0 && buf[pos] == 0) {
                    long nonZero = skipZeros();
                    if (nonZero < 0) {
                        return new Result(Outcome.INTACT, members, verified, false, null);
                    }
                    throw new Damage(
                            member
                                    + ": byte 0x"
                                    + hex(buf[pos])
                                    + " at compressed byte "
                                    + nonZero
                                    + " after zero padding; neither a gzip member nor padding");
                }
                try {
                    readHeader();
                } catch (EOFException e) {
                    return new Result(
                            Outcome.TRUNCATED,
                            members,
                            verified,
                            true,
                            member + ": the file ends inside its header");
                } catch (Damage e) {
                    throw new Damage(member + ": " + e.getMessage());
                }
                inflater.reset();
                crc.reset();
                long size = 0;
                inflater.setInput(buf, pos, lim - pos);
                while (true) {
                    int n;
                    try {
                        n = inflater.inflate(out);
                    } catch (DataFormatException e) {
                        throw new Damage(member + ": deflate data error: " + e.getMessage());
                    }
                    if (n > 0) {
                        crc.update(out, 0, n);
                        size += n;
                    } else if (inflater.finished()) {
                        break;
                    } else if (inflater.needsInput()) {
                        pos = lim;
                        if (!available()) {
                            return new Result(
                                    Outcome.TRUNCATED,
                                    members,
                                    verified,
                                    false,
                                    member + ": the file ends inside its deflate data");
                        }
                        inflater.setInput(buf, pos, lim - pos);
                    } else if (inflater.needsDictionary()) {
                        throw new Damage(member + ": deflate data asks for a preset dictionary");
                    } else {
                        throw new Damage(member + ": the inflater stops making progress");
                    }
                }
                pos = lim - inflater.getRemaining();
                long storedCrc;
                long storedSize;
                try {
                    storedCrc = readIntLe();
                    storedSize = readIntLe();
                } catch (EOFException e) {
                    return new Result(
                            Outcome.TRUNCATED,
                            members,
                            verified,
                            false,
                            member + ": the file ends inside its trailer");
                }
                if (storedCrc != crc.getValue()) {
                    throw new Damage(
                            String.format(
                                    "%s: CRC mismatch (trailer says 0x%08x, the data has 0x%08x)",
                                    member, storedCrc, crc.getValue()));
                }
                if (storedSize != (size & 0xffffffffL)) {
                    throw new Damage(
                            String.format(
                                    "%s: size mismatch (trailer says %d bytes mod 2^32, the data has %d)",
                                    member, storedSize, size));
                }
                members++;
                verified += size;
            }
        } catch (Damage e) {
            return new Result(Outcome.DAMAGED, members, verified, false, e.getMessage());
        } finally {
            inflater.end();
        }
    }

    /** Reads and checks one member header; throws EOFException when the stream ends inside it. */
    private void readHeader() throws IOException, Damage {
        headerCrc.reset();
        int id1 = headerByte();
        if (id1 != 0x1f) {
            throw new Damage(
                    "not in gzip format: starts with 0x"
                            + hex(id1)
                            + ", not the gzip magic 0x1f 0x8b");
        }
        int id2 = headerByte();
        if (id2 != 0x8b) {
            throw new Damage(
                    "not in gzip format: starts with 0x1f 0x"
                            + hex(id2)
                            + ", not the gzip magic 0x1f 0x8b");
        }
        int method = headerByte();
        if (method != 8) {
            throw new Damage("compression method " + method + " in the header, not 8 (deflate)");
        }
        int flags = headerByte();
        if ((flags & RESERVED_FLAGS) != 0) {
            throw new Damage("reserved header flag bits set (flags 0x" + hex(flags) + ")");
        }
        for (int i = 0; i < 6; i++) { // MTIME, XFL, OS
            headerByte();
        }
        if ((flags & FEXTRA) != 0) {
            int xlen = headerByte() | (headerByte() << 8);
            for (int i = 0; i < xlen; i++) {
                headerByte();
            }
        }
        if ((flags & FNAME) != 0) {
            while (headerByte() != 0) {
                // file name, zero-terminated
            }
        }
        if ((flags & FCOMMENT) != 0) {
            while (headerByte() != 0) {
                // comment, zero-terminated
            }
        }
        if ((flags & FHCRC) != 0) {
            int expected = (int) headerCrc.getValue() & 0xffff;
            int stored = headerByte() | (headerByte() << 8);
            if (stored != expected) {
                throw new Damage(
                        String.format(
                                "header CRC mismatch (header says 0x%04x, the header has 0x%04x)",
                                stored, expected));
            }
        }
    }

    private int headerByte() throws IOException {
        if (!available()) {
            throw new EOFException();
        }
        int b = buf[pos++] & 0xff;
        headerCrc.update(b);
        return b;
    }

    private long readIntLe() throws IOException {
        long v = 0;
        for (int i = 0; i < 4; i++) {
            if (!available()) {
                throw new EOFException();
            }
            v |= (long) (buf[pos++] & 0xff) << (8 * i);
        }
        return v;
    }

    /**
     * Skips zero bytes to the end; -1 if only zeros followed, else the offset of the first non-zero
     * byte (left at {@code pos}).
     */
    private long skipZeros() throws IOException {
        while (available()) {
            if (buf[pos] != 0) {
                return offset();
            }
            pos++;
        }
        return -1;
    }

    /** Whether a byte is at {@code pos}, refilling the buffer when it is used up. */
    private boolean available() throws IOException {
        while (pos == lim) {
            int n = in.read(buf, 0, buf.length);
            if (n < 0) {
                return false;
            }
            bufferStart += lim;
            pos = 0;
            lim = n;
        }
        return true;
    }

    private long offset() {
        return bufferStart + pos;
    }

    private static String hex(int b) {
        return String.format("%02x", b & 0xff);
    }
}

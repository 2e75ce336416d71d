package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

import javax.annotation.Nullable;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.util.Arrays;
import java.util.zip.ZipException;

/**
 * A non-splittable {@link StreamFormat} reading change files line by line (LF or CRLF; a last line
 * without terminator is a line). Flink's {@code StreamFormatAdapter} hands it the file already
 * decompressed by extension ({@code .gz}, {@code .gzip}, {@code .deflate}, ...); when that stream
 * throws {@link EOFException} or {@link ZipException} (a truncated or corrupt gzip), the reader
 * emits a damage marker and an end-of-file marker instead of failing, so the job never crash-loops
 * on a damaged file. Other {@link IOException}s (transient storage errors) propagate and fail over.
 *
 * <p>With a {@link TrustedPrefix} (a gzip file whose members fail their checks, found by {@link
 * GzipVerifier} before reading), the reader reads only the prefix of the decompressed stream that
 * lies in verified members and emits, at its end, a damage marker with the prefix's reason ({@code
 * DAMAGED_FILE}) instead of the rest, so no byte of an unverified member becomes a line.
 *
 * <p>Restore: the reader reports no checkpointed offset, so Flink restores it by re-reading the
 * file and skipping the number of records already emitted; every record — data lines, the damage
 * marker and the end-of-file marker — counts as one, and a re-read of the same bytes yields the
 * same sequence, so the skip lands on the same record.
 *
 * <p>Produced lines have no {@code source}; {@link ChangeLineBulkFormat} sets it.
 */
@Internal
final class ChangeLineFormat implements StreamFormat<SourceLine> {
    private static final long serialVersionUID = 1L;

    /** Bytes of an oversized line that are kept (for the quarantine row). */
    static final int OVERSIZED_KEPT_BYTES = 64 * 1024;

    private final int maxLineBytes;
    @Nullable private final TrustedPrefix trustedPrefix;

    ChangeLineFormat(int maxLineBytes) {
        this(maxLineBytes, null);
    }

    /**
     * @param trustedPrefix null reads the whole stream; else only that prefix, then its damage
     *     marker
     */
    ChangeLineFormat(int maxLineBytes, @Nullable TrustedPrefix trustedPrefix) {
        if (maxLineBytes <= 0) {
            throw new IllegalArgumentException("max line bytes must be > 0, got " + maxLineBytes);
        }
        this.maxLineBytes = maxLineBytes;
        this.trustedPrefix = trustedPrefix;
    }

    @Override
    public Reader<SourceLine> createReader(
            Configuration config, FSDataInputStream stream, long fileLen, long splitEnd) {
        return new LineReader(
                trustedPrefix == null
                        ? stream
                        : new TrustedPrefixInputStream(stream, trustedPrefix),
                maxLineBytes);
    }

    @Override
    public Reader<SourceLine> restoreReader(
            Configuration config,
            FSDataInputStream stream,
            long restoredOffset,
            long fileLen,
            long splitEnd) {
        // never called: getCheckpointedPosition() is null, so Flink restores via createReader +
        // skip
        throw new UnsupportedOperationException(
                "ChangeLineFormat restores by re-reading and skipping records");
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<SourceLine> getProducedType() {
        return TypeInformation.of(SourceLine.class);
    }

    /** The line reader; reusable buffers, one array allocation per emitted line. */
    static final class LineReader implements StreamFormat.Reader<SourceLine> {
        private final InputStream in;
        private final int maxLineBytes;
        private final byte[] buf = new byte[64 * 1024];
        private int pos;
        private int lim;
        private byte[] line = new byte[1024];
        private int lineLen;
        private long fullLen;
        private boolean lastWasCr;
        private long lineNo;
        private boolean endOfFileDue;
        private boolean finished;

        LineReader(InputStream in, int maxLineBytes) {
            this.in = in;
            this.maxLineBytes = maxLineBytes;
        }

        @Nullable
        @Override
        public SourceLine read() throws IOException {
            while (true) {
                if (finished) {
                    return null;
                }
                if (endOfFileDue) {
                    finished = true;
                    return SourceLine.endOfFile(null, lineNo);
                }
                boolean complete;
                try {
                    complete = nextLine();
                } catch (UntrustedBytesException e) {
                    endOfFileDue = true;
                    byte[] partial =
                            lineLen == 0
                                    ? null
                                    : Arrays.copyOf(line, Math.min(lineLen, OVERSIZED_KEPT_BYTES));
                    return SourceLine.damage(
                            null,
                            lineNo + 1,
                            e.prefix.reason,
                            e.prefix.detail(lineNo + 1, fullLen),
                            partial);
                } catch (EOFException | ZipException e) {
                    endOfFileDue = true;
                    byte[] partial =
                            lineLen == 0
                                    ? null
                                    : Arrays.copyOf(line, Math.min(lineLen, OVERSIZED_KEPT_BYTES));
                    String detail =
                            "compressed stream damaged after line "
                                    + lineNo
                                    + ": "
                                    + e
                                    + (fullLen > 0
                                            ? " ("
                                                    + fullLen
                                                    + " bytes of line "
                                                    + (lineNo + 1)
                                                    + " read before the damage)"
                                            : "");
                    return SourceLine.damage(null, lineNo + 1, detail, partial);
                }
                if (!complete && fullLen == 0) {
                    endOfFileDue = true; // end of input, no pending bytes
                    continue;
                }
                lineNo++;
                long len = fullLen;
                int kept = lineLen;
                if (complete && lastWasCr) {
                    len--;
                    if (kept == len + 1) {
                        kept--;
                    }
                }
                lineLen = 0;
                fullLen = 0;
                lastWasCr = false;
                if (!complete) {
                    endOfFileDue = true;
                }
                if (len == 0) {
                    continue; // empty line: counted, not emitted
                }
                byte[] bytes =
                        Arrays.copyOf(
                                line,
                                len > maxLineBytes ? Math.min(kept, OVERSIZED_KEPT_BYTES) : kept);
                return new SourceLine(null, lineNo, bytes, len, null, false);
            }
        }

        /**
         * Reads up to the next LF into {@link #line}; true if a terminator was found, false at end
         * of input.
         */
        private boolean nextLine() throws IOException {
            while (true) {
                if (pos == lim) {
                    int n = in.read(buf, 0, buf.length);
                    if (n < 0) {
                        return false;
                    }
                    pos = 0;
                    lim = n;
                    continue;
                }
                int start = pos;
                int nl = -1;
                for (int i = start; i < lim; i++) {
                    if (buf[i] == '\n') {
                        nl = i;
                        break;
                    }
                }
                int end = nl < 0 ? lim : nl;
                append(start, end);
                pos = nl < 0 ? lim : nl + 1;
                if (nl >= 0) {
                    return true;
                }
            }
        }

        private void append(int start, int end) {
            int n = end - start;
            if (n == 0) {
                return;
            }
            lastWasCr = buf[end - 1] == '\r';
            fullLen += n;
            int room = maxLineBytes - lineLen;
            int copy = Math.min(n, room);
            if (copy > 0) {
                if (lineLen + copy > line.length) {
                    line =
                            Arrays.copyOf(
                                    line,
                                    Math.min(
                                            maxLineBytes,
                                            Math.max(line.length * 2, lineLen + copy)));
                }
                System.arraycopy(buf, start, line, lineLen, copy);
                lineLen += copy;
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /**
     * Where trust in a decompressed stream ends (see the class comment).
     *
     * <p>{@code bytes} = decompressed bytes that may be read (the verified members' ISIZEs summed);
     * {@code reason} = the damage marker's reason; {@code detail} = what failed, naming the file;
     * the marker's detail is {@link #detail(long, long)}.
     */
    static final class TrustedPrefix implements Serializable {
        private static final long serialVersionUID = 1L;

        final long bytes;
        final QuarantineReason reason;
        final String detail;

        TrustedPrefix(long bytes, QuarantineReason reason, String detail) {
            if (bytes < 0) {
                throw new IllegalArgumentException("trusted bytes must be >= 0, got " + bytes);
            }
            this.bytes = bytes;
            this.reason = reason;
            this.detail = detail;
        }

        /**
         * The damage marker's detail: {@link #detail} plus the first untrusted line and how many of
         * its bytes lie in the trusted prefix (kept as the marker's bytes).
         */
        String detail(long firstUntrustedLine, long trustedBytesOfThatLine) {
            return detail
                    + "; first untrusted line: "
                    + firstUntrustedLine
                    + (trustedBytesOfThatLine > 0
                            ? " (its first "
                                    + trustedBytesOfThatLine
                                    + " bytes lie in verified members)"
                            : "");
        }
    }

    /** Thrown by {@link TrustedPrefixInputStream} at the end of the trusted prefix. */
    static final class UntrustedBytesException extends IOException {
        private static final long serialVersionUID = 1L;

        final TrustedPrefix prefix;

        UntrustedBytesException(TrustedPrefix prefix) {
            super(prefix.detail);
            this.prefix = prefix;
        }
    }

    /**
     * Passes on the first {@code prefix.bytes} bytes of a decompressed stream, then throws {@link
     * UntrustedBytesException} instead of reading on. It also throws when the stream ends before
     * the prefix does: {@link java.util.zip.GZIPInputStream} takes the end of a member as the end
     * of the file when the underlying stream reports {@code available() == 0} there, and lines lost
     * that way must still be quarantined, not dropped.
     */
    static final class TrustedPrefixInputStream extends InputStream {
        private final InputStream in;
        private final TrustedPrefix prefix;
        private long read;

        TrustedPrefixInputStream(InputStream in, TrustedPrefix prefix) {
            this.in = in;
            this.prefix = prefix;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (read >= prefix.bytes) {
                throw new UntrustedBytesException(prefix);
            }
            int n = in.read(b, off, (int) Math.min(len, prefix.bytes - read));
            if (n < 0) {
                throw new UntrustedBytesException(prefix);
            }
            read += n;
            return n;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}

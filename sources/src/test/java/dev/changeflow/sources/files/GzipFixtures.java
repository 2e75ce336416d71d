package dev.changeflow.sources.files;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipException;

/**
 * Gzip files for the reader tests: a valid gzip of N JSON lines cut in the middle (with what a
 * reader must emit), and gzip members with a flipped byte whose garbage Java's gzip reader hands
 * out before it notices.
 */
final class GzipFixtures {
    private GzipFixtures() {}

    static final class Damaged {
        final Path file;
        final List<byte[]> intactLines = new ArrayList<>();
        byte[] partial;
        String exception;

        Damaged(Path file) {
            this.file = file;
        }

        /** The expected records: intact lines, the damage marker, the end-of-file marker. */
        List<SourceLine> expected(String source) {
            List<SourceLine> out = new ArrayList<>();
            for (int i = 0; i < intactLines.size(); i++) {
                out.add(SourceLine.data(source, i + 1, intactLines.get(i)));
            }
            long n = intactLines.size();
            String detail =
                    "compressed stream damaged after line "
                            + n
                            + ": "
                            + exception
                            + (partial.length > 0
                                    ? " ("
                                            + partial.length
                                            + " bytes of line "
                                            + (n + 1)
                                            + " read before the damage)"
                                    : "");
            out.add(SourceLine.damage(source, n + 1, detail, partial.length == 0 ? null : partial));
            out.add(SourceLine.endOfFile(source, n));
            return out;
        }
    }

    static String line(int i, Random random) {
        return "{\"key\":{\"id\":"
                + i
                + "},\"value\":{\"op\":\"c\",\"after\":{\"id\":"
                + i
                + ",\"r\":"
                + random.nextLong()
                + "},\"source\":{\"table\":\"t\",\"lsn\":"
                + i
                + "}},\"topic\":\"db.public.t\"}";
    }

    static Damaged damaged(Path file, int lines) throws IOException {
        Random random = new Random(42);
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (OutputStream os = new GZIPOutputStream(bo)) {
            for (int i = 1; i <= lines; i++) {
                os.write((line(i, random) + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        byte[] gz = bo.toByteArray();
        Files.write(file, Arrays.copyOf(gz, gz.length / 2));
        // reference: what the intact prefix decompresses to
        Damaged d = new Damaged(file);
        ByteArrayOutputStream current = new ByteArrayOutputStream();
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) >= 0) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        d.intactLines.add(current.toByteArray());
                        current.reset();
                    } else {
                        current.write(buf[i]);
                    }
                }
            }
            throw new AssertionError("the cut gzip did not fail");
        } catch (EOFException e) {
            d.exception = e.toString();
        }
        d.partial = current.toByteArray();
        if (d.intactLines.size() < 10 || d.intactLines.size() >= lines) {
            throw new AssertionError(
                    "fixture should cut in the middle, got "
                            + d.intactLines.size()
                            + " intact lines");
        }
        return d;
    }

    /** One gzip member holding {@code text}. */
    static byte[] gzip(String text) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (OutputStream os = new GZIPOutputStream(bo)) {
            os.write(text.getBytes(StandardCharsets.UTF_8));
        }
        return bo.toByteArray();
    }

    /** Lines {@code from..to} of {@link #line}, each with its LF. */
    static String lines(int from, int to) {
        Random random = new Random(from);
        StringBuilder sb = new StringBuilder();
        for (int i = from; i <= to; i++) {
            sb.append(line(i, random)).append('\n');
        }
        return sb.toString();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            bo.writeBytes(p);
        }
        return bo.toByteArray();
    }

    /**
     * A gzip member with one byte of its deflate data flipped, and what Java's gzip reader makes of
     * it.
     */
    static final class Corrupted {
        final byte[] gz;

        /** CRC32 in the trailer (of the original text) and of what the damaged data inflates to. */
        final long trailerCrc;

        final long dataCrc;

        /**
         * Lines Java's gzip reader hands out before it throws that are not lines of the original
         * text.
         */
        final List<String> garbage;

        Corrupted(byte[] gz, long trailerCrc, long dataCrc, List<String> garbage) {
            this.gz = gz;
            this.trailerCrc = trailerCrc;
            this.dataCrc = dataCrc;
            this.garbage = garbage;
        }
    }

    /**
     * The gzip member of {@code text} with one byte in the middle of its deflate data flipped: the
     * first flip (from the middle on) whose data still inflates, to at least one line that is not
     * in {@code text}, and fails only at the trailer's CRC ({@code Corrupt GZIP trailer}).
     * Deterministic.
     */
    static Corrupted corrupted(String text) throws IOException {
        byte[] gz = gzip(text);
        List<String> original = Arrays.asList(text.split("\n"));
        CRC32 crc = new CRC32();
        crc.update(text.getBytes(StandardCharsets.UTF_8));
        for (int at = gz.length / 2; at < gz.length - 8; at++) {
            byte[] bad = gz.clone();
            bad[at] ^= 0x10;
            ByteArrayOutputStream inflated = new ByteArrayOutputStream();
            try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(bad))) {
                in.transferTo(inflated);
                continue; // the flip went unnoticed (cannot happen with a CRC, but keep looking)
            } catch (ZipException e) {
                if (!"Corrupt GZIP trailer".equals(e.getMessage())) {
                    continue;
                }
            }
            String out = inflated.toString(StandardCharsets.UTF_8);
            List<String> garbage = new ArrayList<>();
            for (String l : out.split("\n")) {
                if (!original.contains(l)) {
                    garbage.add(l);
                }
            }
            if (!garbage.isEmpty()) {
                CRC32 dataCrc = new CRC32();
                dataCrc.update(inflated.toByteArray());
                return new Corrupted(bad, crc.getValue(), dataCrc.getValue(), garbage);
            }
        }
        throw new AssertionError("no flip found that yields garbage before the CRC check");
    }
}

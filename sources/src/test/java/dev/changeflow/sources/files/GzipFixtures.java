package dev.changeflow.sources.files;

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
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/** Writes a valid gzip of N JSON lines, cuts it in the middle, and computes what a reader must emit. */
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
            String detail = "compressed stream damaged after line " + n + ": " + exception
                    + (partial.length > 0 ? " (" + partial.length + " bytes of line " + (n + 1) + " read before the damage)" : "");
            out.add(SourceLine.damage(source, n + 1, detail, partial.length == 0 ? null : partial));
            out.add(SourceLine.endOfFile(source, n));
            return out;
        }
    }

    static String line(int i, Random random) {
        return "{\"key\":{\"id\":" + i + "},\"value\":{\"op\":\"c\",\"after\":{\"id\":" + i + ",\"r\":" + random.nextLong()
                + "},\"source\":{\"table\":\"t\",\"lsn\":" + i + "}},\"topic\":\"db.public.t\"}";
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
            throw new AssertionError("fixture should cut in the middle, got " + d.intactLines.size() + " intact lines");
        }
        return d;
    }
}

package dev.changeflow.sources.changes;

import dev.changeflow.sources.testutil.SharedData;

import org.apache.flink.table.data.RowData;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * Measures {@link ChangeRecordDecoder} throughput over the real pgbench capture (decode only: the
 * lines are decompressed and split into memory first). Not a test; run with
 * {@code java -cp <test classpath> dev.changeflow.sources.changes.DecodeThroughputMain [rounds]}.
 */
public final class DecodeThroughputMain {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        Path file = args.length > 1 ? Paths.get(args[1]) : SharedData.pgbenchCapture();
        List<byte[]> lines = readLines(file);
        long bytes = lines.stream().mapToLong(b -> b.length).sum();
        System.out.printf("%d lines, %.1f MB%n", lines.size(), bytes / 1e6);
        ChangeRecordDecoder decoder = new ChangeRecordDecoder(PgbenchFlows.flows());
        long[] sink = new long[3];
        DecodeOutput out = new DecodeOutput() {
            @Override
            public void upsertOrDelete(int flowIndex, RowData row) {
                sink[0]++;
            }

            @Override
            public void truncate(int flowIndex, RowData row) {
                sink[1]++;
            }

            @Override
            public void quarantine(RowData row) {
                sink[2]++;
            }
        };
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            long n = 0;
            for (byte[] line : lines) {
                decoder.decode(line, "capture", null, ++n, 0L, out);
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf("round %d: %.0f events/s (%.1f MB/s)%n", r, lines.size() / secs, bytes / 1e6 / secs);
        }
        System.out.println("changes=" + sink[0] + " truncates=" + sink[1] + " quarantined=" + sink[2]);
    }

    static List<byte[]> readLines(Path file) throws Exception {
        byte[] all;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file), 1 << 16)) {
            ByteArrayOutputStream bo = new ByteArrayOutputStream();
            in.transferTo(bo);
            all = bo.toByteArray();
        }
        List<byte[]> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < all.length; i++) {
            if (all[i] == '\n') {
                lines.add(java.util.Arrays.copyOfRange(all, start, i));
                start = i + 1;
            }
        }
        if (start < all.length) {
            lines.add(java.util.Arrays.copyOfRange(all, start, all.length));
        }
        return lines;
    }
}

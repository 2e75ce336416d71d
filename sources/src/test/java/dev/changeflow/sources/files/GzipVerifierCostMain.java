package dev.changeflow.sources.files;

import dev.changeflow.sources.testutil.SharedData;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.core.fs.Path;

import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * What the gzip verification costs on the real capture (3.5 MB gzip, 141,511 lines, 94 MB
 * decompressed), in CPU time of the one thread doing it (wall time is noise on a shared machine),
 * per round: {@link GzipVerifier} alone, the line reader over Java's gzip reader without
 * verification (the read pass), and {@link ChangeLineBulkFormat} (verification + read pass, as a
 * split reader runs them). Not a test; the first rounds warm the JIT up.
 */
public final class GzipVerifierCostMain {
    public static void main(String[] args) throws Exception {
        java.nio.file.Path capture = SharedData.pgbenchCapture();
        long size = Files.size(capture);
        FileSourceSplit split =
                new FileSourceSplit("s", new Path(capture.toUri()), 0, size, 0, size);
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long[][] cpu = new long[3][rounds];
        for (int round = 0; round < rounds; round++) {
            long c0 = threads.getCurrentThreadCpuTime();
            GzipVerifier.Result check;
            try (InputStream in = Files.newInputStream(capture)) {
                check = GzipVerifier.verify(in);
            }
            long c1 = threads.getCurrentThreadCpuTime();
            long lines = 0;
            try (ChangeLineFormat.LineReader r =
                    new ChangeLineFormat.LineReader(
                            new GZIPInputStream(Files.newInputStream(capture)), 1 << 20)) {
                while (r.read() != null) {
                    lines++;
                }
            }
            long c2 = threads.getCurrentThreadCpuTime();
            List<SourceLine> all =
                    ChangeLineFormatTest.readBulk(
                            new ChangeLineBulkFormat(1 << 20)
                                    .createReader(new Configuration(), split));
            long c3 = threads.getCurrentThreadCpuTime();
            cpu[0][round] = c1 - c0;
            cpu[1][round] = c2 - c1;
            cpu[2][round] = c3 - c2;
            System.out.printf(
                    "round %d (thread CPU): verify %.1f ms (%s), read pass %.1f ms (%d records), bulk format %.1f ms (%d records)%n",
                    round,
                    (c1 - c0) / 1e6,
                    check,
                    (c2 - c1) / 1e6,
                    lines,
                    (c3 - c2) / 1e6,
                    all.size());
        }
        System.out.printf(
                "median of the last %d rounds (thread CPU): verify %.1f ms, read pass %.1f ms, bulk format %.1f ms%n",
                rounds / 2, median(cpu[0]), median(cpu[1]), median(cpu[2]));
    }

    private static double median(long[] nanos) {
        long[] last = Arrays.copyOfRange(nanos, nanos.length / 2, nanos.length);
        Arrays.sort(last);
        return last[last.length / 2] / 1e6;
    }
}

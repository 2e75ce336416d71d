package dev.changeflow.sources.changes;

import dev.changeflow.sources.testutil.SharedData;

import org.apache.flink.table.data.RowData;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * Measures {@link ChangeRecordDecoder} throughput over the real pgbench capture with {@link
 * PgbenchFlows} (decode only: the lines are decompressed and split into memory first). Not a test;
 * run with {@code java -cp <test classpath> dev.changeflow.sources.changes.DecodeThroughputMain
 * [rounds [capture [warm-up rounds]]]}.
 *
 * <p>Each round prints records per second of wall time and of the thread's CPU time. On a shared,
 * loaded machine the wall rate says more about the neighbours than about the decoder; the CPU rate
 * is the one to compare between two builds. The summary gives median, min and max of the rounds
 * after the warm-up. Then the floor any decoder built on Jackson has on the same lines (thread CPU
 * per line, median of the rounds after the warm-up): creating and closing a parser, and reading
 * every token (issue #18: the decoder costs about as much as the second).
 */
public final class DecodeThroughputMain {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        Path file = args.length > 1 ? Paths.get(args[1]) : SharedData.pgbenchCapture();
        int warmUp = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        List<byte[]> lines = readLines(file);
        long bytes = lines.stream().mapToLong(b -> b.length).sum();
        System.out.printf("%d lines, %.1f MB%n", lines.size(), bytes / 1e6);
        ChangeRecordDecoder decoder = new ChangeRecordDecoder(PgbenchFlows.flows());
        long[] sink = new long[3];
        DecodeOutput out =
                new DecodeOutput() {
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
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<Double> wallRates = new ArrayList<>();
        List<Double> cpuRates = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            long c0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            long n = 0;
            for (byte[] line : lines) {
                decoder.decode(line, "capture", null, ++n, 0L, out);
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            double cpu = (threads.getCurrentThreadCpuTime() - c0) / 1e9;
            System.out.printf(
                    "round %d: %.0f events/s wall, %.0f events/s CPU (%.1f MB/s CPU)%n",
                    r, lines.size() / wall, lines.size() / cpu, bytes / 1e6 / cpu);
            if (r >= warmUp) {
                wallRates.add(lines.size() / wall);
                cpuRates.add(lines.size() / cpu);
            }
        }
        System.out.println(
                "changes=" + sink[0] + " truncates=" + sink[1] + " quarantined=" + sink[2]);
        System.out.println(
                "after "
                        + warmUp
                        + " warm-up rounds: wall "
                        + summary(wallRates)
                        + "; CPU "
                        + summary(cpuRates));
        jacksonFloor(lines, rounds, warmUp);
    }

    /** Thread CPU ns per line of Jackson alone: parser create + close, and every token read. */
    private static void jacksonFloor(List<byte[]> lines, int rounds, int warmUp) throws Exception {
        com.fasterxml.jackson.core.JsonFactory factory = ChangeRecordDecoder.jsonFactory();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (boolean tokens : new boolean[] {false, true}) {
            List<Double> ns = new ArrayList<>();
            long seen = 0;
            for (int r = 0; r < rounds; r++) {
                long c0 = threads.getCurrentThreadCpuTime();
                for (byte[] line : lines) {
                    try (com.fasterxml.jackson.core.JsonParser p = factory.createParser(line)) {
                        while (tokens && p.nextToken() != null) {
                            seen++;
                        }
                    }
                }
                if (r >= warmUp) {
                    ns.add((double) (threads.getCurrentThreadCpuTime() - c0) / lines.size());
                }
            }
            double[] s = ns.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf(
                    "Jackson alone, %s: median %.0f ns CPU per line (%d tokens)%n",
                    tokens ? "every token read" : "parser created and closed",
                    s.length == 0 ? Double.NaN : s[s.length / 2],
                    seen);
        }
    }

    private static String summary(List<Double> rates) {
        if (rates.isEmpty()) {
            return "no rounds";
        }
        double[] s = rates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return String.format(
                "median %.0f events/s (min %.0f, max %.0f, n=%d)",
                s[s.length / 2], s[0], s[s.length - 1], s.length);
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
                lines.add(Arrays.copyOfRange(all, start, i));
                start = i + 1;
            }
        }
        if (start < all.length) {
            lines.add(Arrays.copyOfRange(all, start, all.length));
        }
        return lines;
    }
}

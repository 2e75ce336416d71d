package dev.changeflow.e2e.bench;

import dev.changeflow.e2e.SharedData;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sources.changes.ChangeRecordDecoder;
import dev.changeflow.sources.changes.DecodeOutput;

import org.apache.flink.table.data.RowData;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;

/**
 * The decode stage alone, on one thread (issue #18; not a test): the pgbench capture's 141,511
 * Debezium lines decoded by {@link ChangeRecordDecoder} with the flows of {@code
 * examples/pgbench-flows.yaml}, {@code passes} times after {@code warmup} unmeasured passes. Prints
 * the CPU nanoseconds per record of every pass and their median, and the rows the decoder emitted
 * (every pass must emit the same number, else exit status 1).
 *
 * <p>Run: {@code ./mvnw -B -Pbench -pl e2e-tests -am verify -DskipTests
 * -Dbench.class=dev.changeflow.e2e.bench.DecoderBenchmark -Dbench.args="warmup=10 passes=10"}.
 */
public final class DecoderBenchmark {
    private DecoderBenchmark() {}

    public static void main(String[] args) throws Exception {
        int warmup = 10;
        int passes = 10;
        for (String a : args) {
            String[] kv = a.split("=", 2);
            switch (kv[0]) {
                case "warmup" -> warmup = Integer.parseInt(kv[1]);
                case "passes" -> passes = Integer.parseInt(kv[1]);
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        Path capture =
                SharedData.repositoryRoot()
                        .resolveSibling("shared")
                        .resolve("data/pgbench-s1/capture-pgbench-s1.jsonl.gz");
        List<byte[]> lines = new ArrayList<>();
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(
                                new GZIPInputStream(Files.newInputStream(capture), 1 << 16),
                                StandardCharsets.UTF_8))) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                lines.add(l.getBytes(StandardCharsets.UTF_8));
            }
        }
        IngestPlan plan =
                IngestPlanner.plan(
                        FlowsFile.read(
                                SharedData.repositoryRoot()
                                        .resolve("examples")
                                        .resolve("pgbench-flows.yaml")),
                        List.of());
        ChangeRecordDecoder decoder =
                new ChangeRecordDecoder(plan.flows.stream().map(f -> f.decoder).toList());
        long[] rows = new long[1];
        DecodeOutput out =
                new DecodeOutput() {
                    @Override
                    public void upsertOrDelete(int flowIndex, RowData row) {
                        rows[0]++;
                    }

                    @Override
                    public void truncate(int flowIndex, RowData row) {
                        rows[0]++;
                    }

                    @Override
                    public void quarantine(RowData row) {
                        throw new IllegalStateException("quarantined: " + row);
                    }
                };
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        jackson(lines, bean, warmup, passes);
        double[] ns = new double[passes];
        long expectedRows = -1;
        boolean same = true;
        for (int pass = -warmup; pass < passes; pass++) {
            rows[0] = 0;
            long c0 = bean.getCurrentThreadCpuTime();
            long n = 0;
            for (byte[] l : lines) {
                decoder.decode(l, "bench", null, ++n, 0L, out);
            }
            long cpu = bean.getCurrentThreadCpuTime() - c0;
            if (expectedRows < 0) {
                expectedRows = rows[0];
            }
            same &= rows[0] == expectedRows;
            if (pass >= 0) {
                ns[pass] = (double) cpu / lines.size();
                System.out.printf(
                        Locale.ROOT,
                        "pass %d: %.0f ns/record, %,d rows%n",
                        pass + 1,
                        ns[pass],
                        rows[0]);
            }
        }
        Arrays.sort(ns);
        System.out.printf(
                Locale.ROOT,
                "decode: %,d records, median %.0f ns/record (%.2f CPU-s per million), %,d rows per pass%s%n",
                lines.size(),
                ns[passes / 2],
                ns[passes / 2] / 1000,
                expectedRows,
                same ? "" : " — WRONG: passes emitted different row counts");
        System.exit(same ? 0 : 1);
    }

    /**
     * What Jackson alone costs per line: creating and closing a parser, and creating one and
     * reading every token (the floor of any decoder built on it).
     */
    private static void jackson(List<byte[]> lines, ThreadMXBean bean, int warmup, int passes)
            throws java.io.IOException {
        com.fasterxml.jackson.core.JsonFactory f =
                com.fasterxml.jackson.core.JsonFactory.builder().build();
        for (String mode : List.of("create+close", "all tokens", "create+close", "all tokens")) {
            double[] ns = new double[passes];
            long sink = 0;
            for (int pass = -warmup; pass < passes; pass++) {
                long c0 = bean.getCurrentThreadCpuTime();
                for (byte[] l : lines) {
                    try (com.fasterxml.jackson.core.JsonParser p = f.createParser(l)) {
                        if (mode.equals("all tokens")) {
                            while (p.nextToken() != null) {
                                sink++;
                            }
                        }
                    }
                }
                if (pass >= 0) {
                    ns[pass] = (double) (bean.getCurrentThreadCpuTime() - c0) / lines.size();
                }
            }
            Arrays.sort(ns);
            System.out.printf(
                    Locale.ROOT,
                    "jackson %s: median %.0f ns/line (%d)%n",
                    mode,
                    ns[passes / 2],
                    sink % 10);
        }
    }
}

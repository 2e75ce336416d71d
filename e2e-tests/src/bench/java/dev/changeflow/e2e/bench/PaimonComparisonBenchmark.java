package dev.changeflow.e2e.bench;

import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * The benchmark of issue #5: changeflow SCD1 and SCD2 against Apache Paimon, Iceberg upsert and a
 * plain Iceberg append, on the same pre-decoded rows. Started by the {@code bench} Maven profile
 * (README "Benchmarks"); settings are system properties:
 *
 * <ul>
 *   <li>{@code bench.rounds} (default {@code 1,5,20,100}): the pgbench-s1 accounts stream (111,000
 *       events over 100,000 keys) repeated R times, {@code source.lsn} shifted by (max − min + 1)
 *       per round; one run set per R, in file order (per-key order kept);
 *   <li>{@code bench.runs} (3): measured runs per system and input, after one warm-up run of every
 *       system at the start; the systems are interleaved run by run;
 *   <li>{@code bench.systems}: a subset of {@code scd1,scd2,paimon,iceberg-upsert,iceberg-append};
 *   <li>{@code bench.synthetic.keys}, {@code bench.synthetic.events} (100,000, 1,000,000): the
 *       seeded synthetic input (10% deletes, 3% duplicate deliveries, 5% out of order within 64
 *       records), and the pgbench stream with its order destroyed within windows of 1,000 records:
 *       the out-of-order inputs, where Iceberg's sinks (no sequence) report their wrong-row count;
 *   <li>{@code bench.inputs} ({@code pgbench,shuffled,synthetic}): which inputs run — the pgbench
 *       rounds, the pgbench stream with its order destroyed, the synthetic stream ({@code none}:
 *       only the state-size runs);
 *   <li>{@code bench.state.keys} (100,000,1,000,000): key counts of the state-size runs (SCD1,
 *       SCD2; synthetic: each key inserted and directly updated, keys in random order);
 *   <li>{@code bench.fork} (false): measured runs in this JVM, interleaved (JIT warm across runs,
 *       as a long-running job is); true forks one JVM per measured run, with {@code bench.heap};
 *   <li>{@code bench.peak} (true): after the measured runs of an input, one more run per system in
 *       a forked JVM ({@code bench.heap}) gives the peak memory column (VmHWM of that JVM; its
 *       throughput is not counted); false prints n/a;
 *   <li>{@code bench.warmup} (true): one run of every system on pgbench R=5 before the measured
 *       runs (JIT warm-up, not counted); false skips it (smoke runs only);
 *   <li>{@code bench.dir}: working folder (inputs, tables and checkpoints of the run in progress).
 * </ul>
 *
 * <p>Every run is verified before its figures count: sequenced systems (changeflow, Paimon) must be
 * exact on every input, the Iceberg baselines on in-order input. A run that is not exact is printed
 * as {@code WRONG}; for changeflow and Paimon this makes the benchmark exit with status 1 after
 * printing everything, for a baseline it is reported (its figures are then not comparable).
 */
public final class PaimonComparisonBenchmark {
    private static final PrintStream OUT = System.out;

    private PaimonComparisonBenchmark() {}

    /** One input: a decoded file replayed {@code rounds} times. */
    private static final class Input {
        final String name;
        final Path file;
        final int rounds;
        final long shift;
        final boolean inOrder;

        Input(String name, Path file, int rounds, long shift, boolean inOrder) {
            this.name = name;
            this.file = file;
            this.rounds = rounds;
            this.shift = shift;
            this.inOrder = inOrder;
        }
    }

    /**
     * Runs the whole benchmark with the settings of the class comment and prints its tables to
     * standard output; exits with status 1 when a changeflow or Paimon result was not exact.
     *
     * @throws IllegalStateException when the capture is absent, the reference model disagrees with
     *     PostgreSQL's final table or the generator, or a forked run fails (its log is named)
     */
    public static void main(String[] args) throws Exception {
        List<Integer> rounds = ints(System.getProperty("bench.rounds", "1,5,20,100"));
        int runs = Integer.parseInt(System.getProperty("bench.runs", "3"));
        List<BenchSystem> systems =
                Arrays.stream(
                                System.getProperty(
                                                "bench.systems",
                                                "scd1,scd2,paimon,iceberg-upsert,iceberg-append")
                                        .split(","))
                        .map(BenchSystem::of)
                        .collect(Collectors.toList());
        int synthKeys = Integer.parseInt(System.getProperty("bench.synthetic.keys", "100000"));
        long synthEvents = Long.parseLong(System.getProperty("bench.synthetic.events", "1000000"));
        List<Integer> stateKeys = ints(System.getProperty("bench.state.keys", "100000,1000000"));
        Path dir = Path.of(System.getProperty("bench.dir", "target/bench")).toAbsolutePath();
        deleteRecursively(dir);
        Files.createDirectories(dir);

        Path root = BenchFlows.repositoryRoot();
        BenchFlows flows = BenchFlows.plan(root);
        RowType type = flows.sourceType();
        OUT.printf(
                "changeflow benchmark: %d cores, %s, max heap of runs %s, %s, %s%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                System.getProperty("bench.heap", "-Xmx6g"),
                fork() ? "one forked JVM per run" : "measured runs in this JVM (warm)",
                peak()
                        ? "peak memory from one forked run per system and input"
                        : "no peak memory runs");

        // ---- inputs, decoded once ----
        List<byte[]> pgLines =
                DecodedInput.accountLines(
                        BenchFlows.sharedData(root, "capture-pgbench-s1.jsonl.gz"));
        DecodedInput pg = DecodedInput.decode(pgLines, flows);
        reportDecode("pgbench-s1 accounts", pg);
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        for (RowData r : pg.rows) {
            min = Math.min(min, r.getLong(flows.sequenceIndex()));
            max = Math.max(max, r.getLong(flows.sequenceIndex()));
        }
        long shift = max - min + 1;
        checkPgbenchOracle(root, pg.rows, flows);
        Path pgFile = dir.resolve("inputs").resolve("pgbench.rows");
        DecodedInput.write(pgFile, pg.rows, type);
        List<RowData> shuffled = new ArrayList<>(pg.rows);
        Random random = new Random(20261130L);
        for (int from = 0; from < shuffled.size(); from += 1_000) {
            Collections.shuffle(
                    shuffled.subList(from, Math.min(shuffled.size(), from + 1_000)), random);
        }
        Path pgShuffledFile = dir.resolve("inputs").resolve("pgbench-shuffled.rows");
        DecodedInput.write(pgShuffledFile, shuffled, type);
        SyntheticChanges synth =
                SyntheticChanges.generate(synthKeys, synthEvents, 0.1, 0.03, 0.05, 42L);
        DecodedInput synthDecoded = DecodedInput.decode(synth.lines, flows);
        reportDecode("synthetic", synthDecoded);
        checkGeneratorTruth(synth, synthDecoded.rows, flows);
        Path synthFile = dir.resolve("inputs").resolve("synthetic.rows");
        DecodedInput.write(synthFile, synthDecoded.rows, type);

        List<String> inputKinds =
                Arrays.asList(
                        System.getProperty("bench.inputs", "pgbench,shuffled,synthetic")
                                .split(","));
        List<Input> inputs = new ArrayList<>();
        for (int r : inputKinds.contains("pgbench") ? rounds : List.<Integer>of()) {
            inputs.add(new Input("pgbench R=" + r, pgFile, r, shift, true));
        }
        if (inputKinds.contains("shuffled")) {
            inputs.add(
                    new Input(
                            "pgbench R=1, order destroyed in windows of 1,000",
                            pgShuffledFile,
                            1,
                            shift,
                            false));
        }
        if (inputKinds.contains("synthetic")) {
            inputs.add(
                    new Input(
                            String.format(
                                    "synthetic %,d keys, %,d events, 3%% dup, 5%% out of order",
                                    synthKeys, synthEvents),
                            synthFile,
                            1,
                            0,
                            false));
        }

        boolean failed = false;
        // ---- warm-up: every system once on pgbench R=5, not counted ----
        Input warmUp = new Input("pgbench R=5", pgFile, 5, shift, true);
        for (BenchSystem s :
                Boolean.parseBoolean(System.getProperty("bench.warmup", "true"))
                        ? systems
                        : List.<BenchSystem>of()) {
            Properties p = runOne(s, warmUp, dir);
            OUT.printf(
                    "warm-up %-15s %s: %,d ms%n",
                    s.id, warmUp.name, Long.parseLong(p.getProperty("wallMs")));
        }
        // ---- measured runs ----
        Map<String, String> ratioLines = new LinkedHashMap<>();
        for (Input in : inputs) {
            Map<BenchSystem, List<Properties>> results = new LinkedHashMap<>();
            for (int run = 0; run < runs; run++) {
                for (BenchSystem s : systems) {
                    results.computeIfAbsent(s, k -> new ArrayList<>()).add(runOne(s, in, dir));
                }
            }
            Map<BenchSystem, Long> peaks = new LinkedHashMap<>();
            for (BenchSystem s : systems) {
                if (fork()) {
                    peaks.put(s, Collections.max(longs(results.get(s), "peakRssBytes")));
                } else if (peak()) {
                    Properties p = runOne(s, in, dir, false, true);
                    failed |= s.sequenced && Long.parseLong(p.getProperty("wrongRows")) != 0;
                    peaks.put(s, Long.parseLong(p.getProperty("peakRssBytes")));
                } else {
                    peaks.put(s, -1L);
                }
            }
            failed |= printTable(in, results, peaks, ratioLines);
        }
        if (!ratioLines.isEmpty()) {
            OUT.println();
            ratioLines.values().forEach(OUT::println);
        }
        // ---- state size (issue #5 item 3) ----
        failed |= stateSize(stateKeys, systems, flows, dir);
        if (failed) {
            OUT.println("\nFAILED: a run's final table was not exact (see WRONG above)");
            System.exit(1);
        }
        System.exit(0);
    }

    private static boolean fork() {
        return Boolean.parseBoolean(System.getProperty("bench.fork", "false"));
    }

    private static boolean peak() {
        return Boolean.parseBoolean(System.getProperty("bench.peak", "true"));
    }

    private static Properties runOne(BenchSystem s, Input in, Path dir) throws Exception {
        return runOne(s, in, dir, false, fork());
    }

    private static Properties runOne(BenchSystem s, Input in, Path dir, boolean holdForState)
            throws Exception {
        return runOne(s, in, dir, holdForState, fork());
    }

    private static Properties runOne(
            BenchSystem s, Input in, Path dir, boolean holdForState, boolean forked)
            throws Exception {
        Path runDir = dir.resolve("run");
        deleteRecursively(runDir);
        Files.createDirectories(runDir);
        try {
            if (!forked) {
                Properties p = BenchRun.run(s, in.file, in.rounds, in.shift, runDir, holdForState);
                p.setProperty("peakRssBytes", "-1"); // the shared JVM's peak is no run's own
                return p;
            }
            Path result = dir.resolve("result.properties");
            Files.deleteIfExists(result);
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (!a.startsWith("-Xmx") && !a.startsWith("-Dbench.")) {
                    cmd.add(a);
                }
            }
            cmd.add(System.getProperty("bench.heap", "-Xmx6g"));
            cmd.addAll(
                    List.of(
                            "-cp",
                            System.getProperty("java.class.path"),
                            BenchRun.class.getName(),
                            s.id,
                            in.file.toString(),
                            Integer.toString(in.rounds),
                            Long.toString(in.shift),
                            runDir.toString(),
                            result.toString(),
                            Boolean.toString(holdForState)));
            Process proc =
                    new ProcessBuilder(cmd)
                            .redirectErrorStream(true)
                            .redirectOutput(dir.resolve("run.log").toFile())
                            .start();
            int rc = proc.waitFor();
            if (rc != 0 || !Files.exists(result)) {
                throw new IllegalStateException(
                        "benchmark run "
                                + s.id
                                + " on "
                                + in.name
                                + " failed with exit code "
                                + rc
                                + "; its output is in "
                                + dir.resolve("run.log"));
            }
            Properties p = new Properties();
            try (InputStream stream = Files.newInputStream(result)) {
                p.load(stream);
            }
            return p;
        } finally {
            deleteRecursively(runDir);
        }
    }

    /**
     * Prints one input's table; returns true when a run that must be exact was not. Rates: "steady"
     * is the definition (records between the 2nd and the last checkpoint barrier ÷ time,
     * "-" when a run saw fewer than 3 checkpoints); "active" is records from the one at 10% of the
     * input to the last ÷ time (every run has it). The ratio to Paimon compares medians of steady
     * rates when every run of both systems has one, else of active rates (marked "a").
     */
    private static boolean printTable(
            Input in,
            Map<BenchSystem, List<Properties>> results,
            Map<BenchSystem, Long> peaks,
            Map<String, String> ratioLines) {
        OUT.printf(
                "%n%s: %,d events, %d measured runs each%n",
                in.name,
                Long.parseLong(results.values().iterator().next().get(0).getProperty("events")),
                results.values().iterator().next().size());
        OUT.printf(
                "%-15s %8s %26s %26s %8s %11s %8s %9s %9s %10s %s%n",
                "system",
                "wall s",
                "steady events/s min/med/max",
                "active events/s min/med/max",
                "×Paimon",
                "files d/del",
                "read s",
                "rows",
                "peak MiB",
                "state MiB",
                "result");
        List<Properties> paimonRuns = results.get(BenchSystem.PAIMON);
        boolean failed = false;
        for (Map.Entry<BenchSystem, List<Properties>> e : results.entrySet()) {
            BenchSystem s = e.getKey();
            List<Properties> ps = e.getValue();
            Properties last = ps.get(ps.size() - 1);
            long wrong =
                    ps.stream()
                            .mapToLong(p -> Long.parseLong(p.getProperty("wrongRows")))
                            .max()
                            .orElse(0);
            boolean mustBeExact = s.sequenced || in.inOrder;
            String result =
                    wrong == 0
                            ? "exact"
                            : (mustBeExact ? "WRONG " : "")
                                    + String.format("%,d wrong rows", wrong);
            failed |= wrong != 0 && s.sequenced;
            String ratio = "-";
            double med = 0;
            double paimon = 0;
            boolean steadyBasis = false;
            if (paimonRuns != null) {
                steadyBasis =
                        allHave(ps, "steadyEventsPerSec")
                                && allHave(paimonRuns, "steadyEventsPerSec");
                String key = steadyBasis ? "steadyEventsPerSec" : "activeEventsPerSec";
                med = median(longs(ps, key));
                paimon = median(longs(paimonRuns, key));
                ratio =
                        paimon <= 0
                                ? "-"
                                : String.format("%.2f%s", med / paimon, steadyBasis ? "" : "a");
            }
            OUT.printf(
                    "%-15s %8.1f %26s %26s %8s %11s %8.2f %9s %9s %10.1f %s%n",
                    s.id,
                    median(longs(ps, "wallMs")) / 1000.0,
                    rateRange(ps, "steadyEventsPerSec"),
                    rateRange(ps, "activeEventsPerSec"),
                    ratio,
                    last.getProperty("dataFiles") + "/" + last.getProperty("deleteFiles"),
                    median(longs(ps, "readMs")) / 1000.0,
                    String.format("%,d", Long.parseLong(last.getProperty("rows"))),
                    mib(peaks.get(s)),
                    Long.parseLong(last.getProperty("stateBytes")) / 1048576.0,
                    result);
            ps.stream()
                    .map(p -> p.getProperty("wrongSample", ""))
                    .filter(x -> !x.isEmpty())
                    .findFirst()
                    .ifPresent(x -> OUT.printf("%-15s   e.g. %s%n", "", x));
            if (in.inOrder
                    && (in.rounds == 20 || in.rounds == 100)
                    && paimonRuns != null
                    && (s == BenchSystem.SCD1 || s == BenchSystem.SCD2)) {
                ratioLines.put(
                        s.id + in.rounds,
                        String.format(
                                "%s: %s× Paimon (R = %d, median %s events/s %,.0f vs %,.0f)",
                                s == BenchSystem.SCD1 ? "SCD1" : "SCD2",
                                ratio.replace("a", ""),
                                in.rounds,
                                steadyBasis ? "steady" : "active",
                                med,
                                paimon));
            }
        }
        OUT.println(
                "(steady: between the 2nd and the last checkpoint, - with fewer than 3 checkpoints; active: from the record at 10% of the input"
                        + " to the last; ×Paimon: medians of steady rates, or of active rates when marked a;"
                        + " state: largest retained checkpoint, 0 when the run ended before a checkpoint held its state)");
        return failed;
    }

    private static boolean allHave(List<Properties> ps, String key) {
        return ps.stream().allMatch(p -> Long.parseLong(p.getProperty(key, "-1")) > 0);
    }

    private static String rateRange(List<Properties> ps, String key) {
        if (!allHave(ps, key)) {
            return "-";
        }
        List<Long> rates = longs(ps, key);
        return String.format(
                "%,d/%,.0f/%,d", Collections.min(rates), median(rates), Collections.max(rates));
    }

    /**
     * State size per key at each key count, SCD1 and SCD2; returns true when a run was not exact.
     */
    private static boolean stateSize(
            List<Integer> keyCounts, List<BenchSystem> systems, BenchFlows flows, Path dir)
            throws Exception {
        OUT.printf(
                "%nState size (synthetic: each key inserted and directly updated, keys in random order; AUTO CDC state in a canonical savepoint after the last record;"
                        + " ckpt: the AUTO CDC operator's full size in the largest retained checkpoint, and that checkpoint's incremental size)%n");
        OUT.printf(
                "%-6s %10s %14s %10s %14s %10s %16s %s%n",
                "type",
                "keys",
                "state bytes",
                "bytes/key",
                "ckpt bytes",
                "bytes/key",
                "ckpt incr.",
                "result");
        boolean failed = false;
        for (BenchSystem s : List.of(BenchSystem.SCD1, BenchSystem.SCD2)) {
            if (!systems.contains(s)) {
                continue;
            }
            double firstPerKey = -1;
            double firstCkptPerKey = -1;
            for (int keys : keyCounts) {
                SyntheticChanges gen = SyntheticChanges.insertThenUpdate(keys, 7L);
                DecodedInput decoded = DecodedInput.decode(gen.lines, flows);
                Path file = dir.resolve("inputs").resolve("state-" + keys + ".rows");
                DecodedInput.write(file, decoded.rows, flows.sourceType());
                Properties p = runOne(s, new Input("state " + keys, file, 1, 0, true), dir, true);
                long state = Long.parseLong(p.getProperty("applyStateBytes"));
                double perKey = (double) state / keys;
                long wrong = Long.parseLong(p.getProperty("wrongRows"));
                failed |= wrong != 0;
                long ckpt = Long.parseLong(p.getProperty("checkpointApplyBytes"));
                double ckptPerKey = (double) ckpt / keys;
                String growth =
                        firstPerKey <= 0
                                ? ""
                                : String.format(
                                        ", bytes/key %.2f× (state) and %.2f× (ckpt) the first (linear: %s)",
                                        perKey / firstPerKey,
                                        ckptPerKey / firstCkptPerKey,
                                        linear(perKey / firstPerKey)
                                                        && linear(ckptPerKey / firstCkptPerKey)
                                                ? "yes"
                                                : "NO");
                if (firstPerKey <= 0) {
                    firstPerKey = perKey;
                    firstCkptPerKey = ckptPerKey;
                }
                OUT.printf(
                        "%-6s %,10d %,14d %,10.1f %,14d %,10.1f %,16d %s%s%n",
                        s.id,
                        keys,
                        state,
                        perKey,
                        ckpt,
                        ckptPerKey,
                        Long.parseLong(p.getProperty("checkpointBytes")),
                        wrong == 0 ? "exact" : "WRONG " + wrong + " rows",
                        growth);
                Files.deleteIfExists(file);
            }
        }
        return failed;
    }

    /** A growth factor of bytes per key that counts as linear growth in the key count. */
    private static boolean linear(double factor) {
        return factor > 0.8 && factor < 1.25;
    }

    private static void reportDecode(String name, DecodedInput d) {
        OUT.printf(
                "decoded %s: %,d records → %,d rows in %,d ms (%,.0f records/s, changeflow's decoder, one thread)%n",
                name,
                d.records,
                d.rows.size(),
                d.decodeNanos / 1_000_000,
                d.records * 1e9 / Math.max(1, d.decodeNanos));
    }

    /** The reference model (SCD1) must reproduce PostgreSQL's final accounts table. */
    private static void checkPgbenchOracle(Path root, List<RowData> rows, BenchFlows flows)
            throws IOException {
        ExpectedTables expected = ExpectedTables.compute(rows, 1, 0, flows);
        List<String> oracle = new ArrayList<>();
        try (var r =
                new BufferedReader(
                        new InputStreamReader(
                                new GZIPInputStream(
                                        Files.newInputStream(
                                                BenchFlows.sharedData(
                                                        root, "final-pgbench_accounts.csv.gz"))),
                                StandardCharsets.UTF_8))) {
            r.readLine();
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                oracle.add(l);
            }
        }
        List<String> model = new ArrayList<>(expected.scd1.values());
        Comparator<String> c = Comparator.naturalOrder();
        oracle.sort(c);
        model.sort(c);
        if (!oracle.equals(model)) {
            throw new IllegalStateException(
                    "the benchmark's reference model does not reproduce final-pgbench_accounts.csv ("
                            + model.size()
                            + " vs "
                            + oracle.size()
                            + " rows)");
        }
    }

    /** The reference model (SCD1) must equal the generator's own truth. */
    private static void checkGeneratorTruth(
            SyntheticChanges gen, List<RowData> rows, BenchFlows flows) {
        ExpectedTables expected = ExpectedTables.compute(rows, 1, 0, flows);
        if (!expected.scd1.equals(gen.truth)) {
            throw new IllegalStateException(
                    "the benchmark's reference model disagrees with the synthetic generator ("
                            + expected.scd1.size()
                            + " vs "
                            + gen.truth.size()
                            + " rows)");
        }
    }

    private static List<Long> longs(List<Properties> ps, String key) {
        return ps.stream()
                .map(p -> Long.parseLong(p.getProperty(key)))
                .collect(Collectors.toList());
    }

    private static double median(List<? extends Number> values) {
        double[] v = values.stream().mapToDouble(Number::doubleValue).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String mib(long bytes) {
        return bytes < 0 ? "n/a" : String.format("%,d", bytes / 1048576);
    }

    private static List<Integer> ints(String csv) {
        return Arrays.stream(csv.split(","))
                .map(String::trim)
                .filter(x -> !x.isEmpty())
                .map(Integer::parseInt)
                .collect(Collectors.toList());
    }

    private static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path f : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                Files.deleteIfExists(f);
            }
        }
    }
}

package dev.changeflow.e2e.bench;

import dev.changeflow.operators.AutoCdcOperators;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.state.ChangeflowStateBackends;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One measured run: replays a {@link DecodedInput} file {@code rounds} times into one {@link
 * BenchSystem} on a local Flink MiniCluster (parallelism 2, RocksDB with incremental checkpoints
 * every 5 s, checkpoints retained), reads the final table back and verifies it against {@link
 * ExpectedTables}. Run as {@code main(system, inputFile, rounds, shift, runDir, resultFile)} in a
 * forked JVM (so the JVM's peak memory is this run's), or through {@link #run} in the driver's JVM.
 *
 * <p>Result keys (a properties file): {@code events}; {@code wallMs} (submission → job finished,
 * the final commit visible); {@code steadyEventsPerSec} (records between the second and the last
 * checkpoint barrier ÷ time between them, -1 with fewer than three checkpoints); {@code
 * activeEventsPerSec} (records from the one at 10% of the input to the last ÷ time between their
 * emission: the rate for runs too short for three checkpoints); {@code checkpoints}; {@code
 * readMs}; {@code rows}; {@code dataFiles}, {@code deleteFiles} (live in the final snapshot);
 * {@code peakRssBytes} (VmHWM of this process when the job finished, -1 when not measurable) and
 * {@code peakHeapBytes}; {@code stateBytes} (full state of all operators in the largest retained
 * checkpoint; replaced by a canonical savepoint's sizes when the run holds for state), {@code
 * applyStateBytes} (the AUTO CDC operator's part), {@code checkpointApplyBytes} (the AUTO CDC
 * operator's full state size in that checkpoint: every RocksDB file it references, shared ones
 * included), {@code checkpointBytes} (incremental size of that checkpoint); {@code wrongRows} (0 =
 * exact) and {@code wrongSample} (up to three differences).
 */
final class BenchRun {
    private BenchRun() {}

    /**
     * Forked entry point: args {@code system inputFile rounds shift runDir resultFile
     * [holdForState]}.
     */
    public static void main(String[] args) throws Exception {
        Properties p =
                run(
                        BenchSystem.of(args[0]),
                        Path.of(args[1]),
                        Integer.parseInt(args[2]),
                        Long.parseLong(args[3]),
                        Path.of(args[4]),
                        args.length > 6 && Boolean.parseBoolean(args[6]));
        try (OutputStream out = Files.newOutputStream(Path.of(args[5]))) {
            p.store(out, "changeflow benchmark run");
        }
        System.exit(0);
    }

    /**
     * Number of hold-tail indexes of a state-size run (each waits at most 1 ms: at most ~100 s).
     */
    static final long HOLD_TAIL = 100_000L;

    /**
     * Runs, measures and verifies; see the class comment for the result keys.
     *
     * @param holdForState state-size runs: after the last record, take a canonical savepoint (its
     *     {@code stateBytes} / {@code applyStateBytes} replace the checkpoint figures: the logical
     *     size, not RocksDB files awaiting compaction) and keep the job running until a checkpoint
     *     holds the whole state; the wall time is then not a throughput figure
     */
    static Properties run(
            BenchSystem system,
            Path input,
            int rounds,
            long shift,
            Path runDir,
            boolean holdForState)
            throws Exception {
        BenchFlows flows = BenchFlows.plan(BenchFlows.repositoryRoot());
        List<RowData> base = DecodedInput.read(input, flows.sourceType());
        long events = (long) base.size() * rounds;
        Path ckDir = runDir.resolve("checkpoints");
        CatalogSettings catalog =
                CatalogSettings.localHadoop(runDir.resolve("warehouse").toAbsolutePath());
        Path paimonWarehouse = runDir.resolve("paimon").toAbsolutePath();
        Files.createDirectories(paimonWarehouse);

        Configuration conf = ChangeflowStateBackends.rocksDbIncremental();
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, ckDir.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(5));
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 1000);
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        // a failing run must end, not back off and retry for ever (Flink's default with
        // checkpoints)
        conf.setString("restart-strategy.type", "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        DataStream<RowData> rows =
                env.fromSequence(0, events - 1 + (holdForState ? HOLD_TAIL : 0))
                        .setParallelism(1)
                        .name("replay index")
                        .flatMap(
                                new ReplayFunction(
                                        input,
                                        flows.sourceType(),
                                        flows.sequenceIndex(),
                                        shift,
                                        events),
                                InternalTypeInfo.of(flows.sourceType()))
                        .setParallelism(1)
                        .name("replay pre-decoded rows");
        system.build(rows, flows, catalog, paimonWarehouse);

        ReplayFunction.clearMarks();
        resetPeakHeap();
        long start = System.nanoTime();
        JobClient job = env.executeAsync("bench " + system.id);
        Path savepoint = null;
        if (holdForState) {
            // the whole state, in its logical size: a canonical savepoint after the last record
            long deadline = System.nanoTime() + Duration.ofMinutes(30).toNanos();
            while (!ReplayFunction.allEmitted() && !job.getJobStatus().get().isTerminalState()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "state-size run "
                                    + system.id
                                    + " did not emit its records within 30 minutes");
                }
                LockSupport.parkNanos(10_000_000L);
            }
            for (int attempt = 1; savepoint == null; attempt++) {
                try {
                    savepoint =
                            Path.of(
                                    URI.create(
                                            job.triggerSavepoint(
                                                            runDir.resolve("savepoints")
                                                                    .toUri()
                                                                    .toString(),
                                                            SavepointFormatType.CANONICAL)
                                                    .get()));
                } catch (ExecutionException notAllRunning) {
                    // a small input can be emitted before every task is running: try again shortly
                    if (attempt == 50) {
                        throw notAllRunning;
                    }
                    LockSupport.parkNanos(200_000_000L);
                }
            }
        }
        job.getJobExecutionResult().get();
        long wall = System.nanoTime() - start;
        long peakRss = peakRssBytes();
        long peakHeap = peakHeapBytes();

        Properties p = new Properties();
        p.setProperty("events", Long.toString(events));
        p.setProperty("wallMs", Long.toString(wall / 1_000_000));
        List<long[]> marks = ReplayFunction.marks();
        p.setProperty("checkpoints", Integer.toString(marks.size()));
        double steady = -1;
        if (marks.size() >= 3) {
            long[] second = marks.get(1);
            long[] last = marks.get(marks.size() - 1);
            if (last[2] > second[2] && last[1] > second[1]) {
                steady = (last[1] - second[1]) * 1e9 / (last[2] - second[2]);
            }
        }
        p.setProperty("steadyEventsPerSec", Long.toString(Math.round(steady)));
        p.setProperty("activeEventsPerSec", Long.toString(Math.round(ReplayFunction.activeRate())));
        p.setProperty("peakRssBytes", Long.toString(peakRss));
        p.setProperty("peakHeapBytes", Long.toString(peakHeap));
        stateSizes(ckDir, p);
        if (savepoint != null) {
            savepointSizes(savepoint, p);
        }

        BenchSystem.TableStats t = system.readBack(flows, catalog, paimonWarehouse);
        p.setProperty("readMs", Long.toString(t.readNanos / 1_000_000));
        p.setProperty("rows", Long.toString(t.rows));
        p.setProperty("dataFiles", Long.toString(t.dataFiles));
        p.setProperty("deleteFiles", Long.toString(t.deleteFiles));
        long wrong;
        if (system == BenchSystem.ICEBERG_APPEND) {
            wrong = Math.abs(t.rows - events);
        } else {
            ExpectedTables expected = ExpectedTables.compute(base, rounds, shift, flows);
            List<String> sample = new ArrayList<>();
            wrong =
                    system == BenchSystem.SCD2
                            ? expected.wrongScd2Rows(t.lines, sample)
                            : expected.wrongScd1Rows(t.byKey, sample);
            p.setProperty("wrongSample", String.join(" | ", sample));
            p.setProperty(
                    "expectedRows",
                    Long.toString(
                            system == BenchSystem.SCD2
                                    ? expected.scd2.size()
                                    : expected.scd1.size()));
        }
        p.setProperty("wrongRows", Long.toString(wrong));
        return p;
    }

    /**
     * Sizes from the retained checkpoints: the largest full state (all operators; operators that
     * had finished report none, so the largest is the last one taken while the job still held its
     * state), the AUTO CDC operator's part of it, and that checkpoint's incremental size.
     */
    private static void stateSizes(Path ckDir, Properties p) throws IOException {
        long best = 0, apply = 0, incremental = 0;
        List<Path> metas = new ArrayList<>();
        // <ckDir>/<job id>/chk-<n>/_metadata; Flink may still discard a subsumed checkpoint
        // meanwhile
        for (Path job : list(ckDir)) {
            for (Path chk : list(job)) {
                if (chk.getFileName().toString().startsWith("chk-")) {
                    metas.add(chk.resolve("_metadata"));
                }
            }
        }
        for (Path meta : metas) {
            CheckpointMetadata m;
            try (DataInputStream in = new DataInputStream(Files.newInputStream(meta))) {
                m =
                        Checkpoints.loadCheckpointMetadata(
                                in,
                                BenchRun.class.getClassLoader(),
                                meta.getParent().toUri().toString());
            } catch (NoSuchFileException subsumed) {
                continue; // discarded by Flink meanwhile (subsumed while the MiniCluster shut down)
            }
            long total = 0, applyPart = 0, inc = 0;
            for (OperatorState op : m.getOperatorStates()) {
                total += op.getStateSize();
                inc += op.getCheckpointedSize();
                if (op.getOperatorUid()
                        .map(u -> u.startsWith(AutoCdcOperators.UID_PREFIX))
                        .orElse(false)) {
                    applyPart += op.getStateSize();
                }
            }
            if (total >= best) {
                best = total;
                apply = applyPart;
                incremental = inc;
            }
        }
        p.setProperty("stateBytes", Long.toString(best));
        p.setProperty("applyStateBytes", Long.toString(apply));
        p.setProperty("checkpointBytes", Long.toString(incremental));
        p.setProperty("checkpointApplyBytes", Long.toString(apply));
    }

    /**
     * {@code stateBytes} and {@code applyStateBytes} from a canonical savepoint (the logical,
     * compacted size).
     */
    private static void savepointSizes(Path savepoint, Properties p) throws IOException {
        long total = 0, apply = 0;
        try (DataInputStream in =
                new DataInputStream(Files.newInputStream(savepoint.resolve("_metadata")))) {
            for (OperatorState op :
                    Checkpoints.loadCheckpointMetadata(
                                    in,
                                    BenchRun.class.getClassLoader(),
                                    savepoint.toUri().toString())
                            .getOperatorStates()) {
                total += op.getStateSize();
                if (op.getOperatorUid()
                        .map(u -> u.startsWith(AutoCdcOperators.UID_PREFIX))
                        .orElse(false)) {
                    apply += op.getStateSize();
                }
            }
        }
        p.setProperty("stateBytes", Long.toString(total));
        p.setProperty("applyStateBytes", Long.toString(apply));
    }

    /** The entries of a folder; none when it is absent or vanishes while listed. */
    private static List<Path> list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.collect(Collectors.toList());
        } catch (IOException | UncheckedIOException gone) {
            return List.of();
        }
    }

    /** Peak resident set size of this process (Linux {@code VmHWM}), or -1. */
    static long peakRssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    private static void resetPeakHeap() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            pool.resetPeakUsage();
        }
    }

    private static long peakHeapBytes() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }
}

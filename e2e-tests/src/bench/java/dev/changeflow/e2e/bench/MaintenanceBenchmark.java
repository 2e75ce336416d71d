package dev.changeflow.e2e.bench;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.DeleteSchemaUtil;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Benchmark (not a test) of in-job table maintenance (issue #17 item 4, docs/semantics.md M1): the
 * pgbench accounts stream ({@code ../shared/data/pgbench-s1}, 111,500 Debezium lines (500 of them
 * tombstones) over 100,000 keys) repeated {@code rounds} times with {@code source.lsn} shifted by
 * {@value #LSN_SHIFT} per round ({@link ReplayLines}), through changeflow's real ingest path
 * ({@link IngestJob#build}: decode, AUTO CDC SCD type 1, Iceberg writer and committer, and for a
 * flow with {@code maintenance: true} the {@link dev.changeflow.sinks.iceberg.InJobMaintenance}
 * graph) on a local MiniCluster, twice: maintenance off, then {@code maintenance: true}. The flows
 * file is written by the benchmark (one flow, {@code public.pgbench_accounts}, as in {@code
 * examples/pgbench-flows.yaml}), so the maintenance defaults of {@link TableMaintenanceOptions}
 * apply as they are.
 *
 * <p><b>Pacing.</b> The lines come in {@code commits} batches of equal size (the last may be
 * shorter), one batch per completed checkpoint ({@link OneBatchPerCheckpointSource}, checkpoint
 * interval {@code interval}): batch k is exactly the content of ingest commit k in both runs, so
 * the two tables at commit k must be equal, and the commit count is exact whatever the machine's
 * speed. The ingest rate is the rate of this cycle (a batch decoded, applied, written, checkpointed
 * and committed), the compactions competing for the same cores.
 *
 * <p><b>Time scale.</b> The maintenance options that are wall times (rate limit 1 min, interval 1
 * h) are meant for 5-s checkpoints; a benchmark run commits every few hundred ms, so with {@code
 * scale=true} (default) the flows file sets {@code maintenance-rate-limit} and {@code
 * maintenance-interval} to their defaults × (checkpoint interval / 5 s), i.e. the same number of
 * commits between compactions as in production; the counts (commit, data-file and delete-file
 * triggers) stay the defaults. {@code scale=false} leaves every option at its default. {@code
 * maintenance=key:value;key:value} adds flow options (e.g. {@code maintenance-commit-count:50}).
 *
 * <p><b>Measured</b> after each run (no job running then), at ingest commits {@code points} (and
 * the last), on the snapshot of that commit (time travel; the maintained table's state then
 * includes the compactions committed before it): live data and delete files (snapshot summary);
 * metadata bytes (the {@code metadata.json} written by that commit, its manifest list and every
 * manifest it lists); full-scan ms (Iceberg generic reader, every row; one warm-up read, then the
 * median of 3; a read longer than {@code scanBudget} is stopped and printed as {@code >budget}, a
 * warm-up longer than a quarter of it is printed as a single read {@code ~ms}); one-version
 * change-feed ms ({@link TableChanges} of that commit's version only, warm, median of 3); ingest
 * events/s between the previous point (or commit 1) and this one (lines × commits ÷ the snapshots'
 * commit-time difference).
 *
 * <p><b>Settled.</b> With maintenance on (and {@code settle=true}, the default) the job keeps
 * running after the last commit until its maintenance has caught up — a compaction after the last
 * ingest commit and no delete file left — or at most the scaled {@code maintenance-interval} plus
 * two rate limits and 2 minutes; the row {@code on+settle} is a full scan of that snapshot. The
 * points above measure the table as a reader finds it while the ingest runs (the compactions trail
 * the commits by up to a rate limit and a compaction's run time: every equality delete file written
 * since the last compaction still applies to the data files before it); the settled row what the
 * same table costs once the maintenance has caught up.
 *
 * <p><b>Exactness.</b> At every point the table's rows (warm-up read) and the version's change rows
 * (data columns and change type) are hashed; the two runs must agree at every point, the final
 * table of each run must equal {@link ExpectedTables} (computed from the decoded lines without
 * Flink), and the maintained table's current snapshot (maybe a later compaction) too.
 *
 * <p><b>Freshly compacted copy.</b> Table {@code public.pgbench_accounts_fresh} in the maintained
 * run's warehouse: the rows at commit C−1 written as one Parquet file (a full compaction), then
 * version C committed on top with the very files ingest commit C added (data, equality and position
 * delete files, one row delta; both commits name the ingest's changelog writer, so the change feed
 * takes version C's carried pre-images as on the ingested tables): the final state with the same
 * last version, so its full scan and one-version change-feed read give the reference of the "within
 * 1.5× of freshly compacted" criterion. Its rows must equal the expected table and its version's
 * changes those of commit C.
 *
 * <p><b>Copy with position deletes.</b> Table {@code public.pgbench_accounts_positions}: the
 * maintained table at its last measured commit with every equality and position delete resolved to
 * the row positions it removes, one position delete file per data file — what a reader would find
 * if the equality deletes written since the last compaction were converted to deletion vectors
 * (Iceberg's Flink {@code ConvertEqualityDeletes}, from iceberg-flink 1.12). Printed as row {@code
 * on, as pos.}; its rows must equal the expected table.
 *
 * <p>Arguments ({@code -Dbench.args="..."}), {@code key=value}, all optional: {@code commits=2000},
 * {@code rounds=20} (lines = rounds × 111,500; lines per commit = ⌈lines / commits⌉), {@code
 * interval=200ms}, {@code parallelism=2}, {@code points=100,500,1000,2000}, {@code scale=true},
 * {@code maintenance=}, {@code scanBudget=120s}, {@code modes=off,on}, {@code settle=true}, {@code
 * verifyModes=} (the modes whose final table is read whole and compared with the expected one;
 * empty: every mode), {@code warmup=30} (commits of an unmeasured run with maintenance on and the
 * scaled wall-time options whatever {@code scale} says, first, in the same JVM, kept running after
 * its last commit until a compaction followed it: JIT and caches warm, the compaction code
 * included, for both measured runs), {@code positions=true} (the position-delete copy below, when
 * the last mode is {@code on}), {@code dir=<folder>} (default {@code
 * e2e-tests/target/bench-maintenance}). Quick run ({@code commits=200 rounds=2}): about 7 minutes
 * on a loaded 2-core machine; see README "Benchmarks".
 */
public final class MaintenanceBenchmark {
    /** Added to {@code source.lsn} per round: more than the capture's LSN range. */
    static final long LSN_SHIFT = EndToEndBenchmark.LSN_SHIFT;

    private static final TableIdentifier ACCOUNTS =
            TableIdentifier.of("public", "pgbench_accounts");
    private static final TableIdentifier POSITIONS =
            TableIdentifier.of("public", "pgbench_accounts_positions");

    private static final TableIdentifier FRESH =
            TableIdentifier.of("public", "pgbench_accounts_fresh");

    /** The production checkpoint interval the maintenance defaults are meant for. */
    private static final Duration PRODUCTION_CHECKPOINT = Duration.ofSeconds(5);

    private static final Pattern LAST_SEQUENCE =
            Pattern.compile("\"last-sequence-number\"\\s*:\\s*(\\d+)");

    /** One measured point of a run. */
    private static final class Point {
        int commit;
        long snapshotId;
        long version;
        long dataFiles;
        long deleteFiles;
        long metadataBytes;
        double scanMs;
        String scanNote = "";
        long rows;
        long rowHash;
        boolean rowsRead;
        double changesMs;
        long changeRows;
        long changeHash;
        double eventsPerSec;
    }

    /** One ingest run. */
    private static final class Run {
        String mode;
        Path warehouse;
        double wallSeconds;
        int commits;
        int compactions;
        List<Point> points = new ArrayList<>();

        /** The maintained table once its maintenance caught up after the last commit, or null. */
        Point settled;

        /** Seconds from the last ingest commit to {@link #settled} (or to giving up). */
        double settleSeconds;

        long wrongRows = -1;
        String wrongSample = "";
    }

    private final Map<String, String> args;
    private final Path capture;
    private final int commits;
    private final int rounds;
    private final long lineCount;
    private final long batchLines;
    private final int batches;
    private final Duration interval;
    private final int parallelism;
    private final Duration scanBudget;
    private final List<Integer> points = new ArrayList<>();
    private ExpectedTables expected;

    private MaintenanceBenchmark(Map<String, String> args, Path capture, int baseLines) {
        this.args = args;
        this.capture = capture;
        this.commits = Integer.parseInt(args.get("commits"));
        this.rounds = Integer.parseInt(args.get("rounds"));
        this.lineCount = (long) rounds * baseLines;
        this.batchLines = (lineCount + commits - 1) / commits;
        this.batches = (int) ((lineCount + batchLines - 1) / batchLines);
        this.interval = parseDuration(args.get("interval"));
        this.parallelism = Integer.parseInt(args.get("parallelism"));
        this.scanBudget = parseDuration(args.get("scanBudget"));
        for (String p : args.get("points").split(",")) {
            int k = Integer.parseInt(p.trim());
            if (k >= 1 && k <= batches) {
                points.add(k);
            }
        }
        if (!points.contains(batches)) {
            points.add(batches);
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        a.put("commits", "2000");
        a.put("rounds", "20");
        a.put("interval", "200ms");
        a.put("parallelism", "2");
        a.put("points", "100,500,1000,2000");
        a.put("scale", "true");
        a.put("maintenance", "");
        a.put("scanBudget", "120s");
        a.put("modes", "off,on");
        a.put("warmup", "30");
        a.put("settle", "true");
        a.put("verifyModes", "");
        a.put("positions", "true");
        a.put(
                "dir",
                BenchFlows.repositoryRoot()
                        .resolve("e2e-tests/target/bench-maintenance")
                        .toString());
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq < 0 || !a.containsKey(arg.substring(0, eq))) {
                throw new IllegalArgumentException(
                        "argument '" + arg + "': expected key=value with key one of " + a.keySet());
            }
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        List<String> modes = List.of(a.get("modes").split(","));
        for (String m : modes) {
            if (!m.equals("off") && !m.equals("on")) {
                throw new IllegalArgumentException("mode '" + m + "': accepted off, on");
            }
        }
        Path capture =
                BenchFlows.sharedData(BenchFlows.repositoryRoot(), "capture-pgbench-s1.jsonl.gz");
        List<byte[]> lines = DecodedInput.accountLines(capture);
        MaintenanceBenchmark bench = new MaintenanceBenchmark(a, capture, lines.size());
        if (bench.commits < 2 || bench.rounds < 1) {
            throw new IllegalArgumentException("commits must be at least 2 and rounds at least 1");
        }
        BenchFlows flows = BenchFlows.plan(BenchFlows.repositoryRoot());
        bench.expected =
                ExpectedTables.compute(
                        DecodedInput.decode(lines, flows).rows, bench.rounds, LSN_SHIFT, flows);
        System.out.printf(
                Locale.ROOT,
                "changeflow maintenance benchmark: %d cores, Java %s; %,d lines (%d rounds of %,d)"
                        + " in %,d commits of %,d lines, checkpoint interval %d ms, parallelism"
                        + " %d; expected final table %,d rows%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                bench.lineCount,
                bench.rounds,
                lines.size(),
                bench.batches,
                bench.batchLines,
                bench.interval.toMillis(),
                bench.parallelism,
                bench.expected.scd1.size());
        long t0 = System.nanoTime();
        List<Run> runs = new ArrayList<>();
        int warmup = Integer.parseInt(a.get("warmup"));
        if (warmup > 0) {
            // JIT and file-system caches: otherwise the first measured run is the slower one
            bench.run("warmup", Math.min(warmup, bench.batches));
        }
        for (String mode : modes) {
            runs.add(bench.run(mode, bench.batches));
        }
        Run reference = runs.get(runs.size() - 1);
        Point fresh = bench.freshCopy(reference);
        Point positions =
                reference.mode.equals("on") && Boolean.parseBoolean(a.get("positions"))
                        ? bench.positionCopy(reference)
                        : null;
        boolean ok = bench.print(runs, fresh, positions);
        System.out.printf(
                Locale.ROOT, "%nTotal wall time %.1f min%n", (System.nanoTime() - t0) / 6e10);
        System.exit(ok ? 0 : 1);
    }

    // ------------------------------------------------------------------------------ ingest

    /**
     * The flows file of a run of {@code mode}. The warm-up always scales the wall-time options and
     * takes none of {@code maintenance=}: it must compact within its few commits, so that the
     * compaction code is compiled before the measured runs (with the unscaled 1-min rate limit the
     * first compaction waits a minute).
     */
    private String flowsYaml(String mode) {
        boolean maintenance = !mode.equals("off");
        boolean warmup = mode.equals("warmup");
        List<String> l =
                new ArrayList<>(
                        List.of(
                                "name: maintenance-bench",
                                "format: debezium-json",
                                "namespace: public",
                                "flows:",
                                "  - table: pgbench_accounts",
                                "    keys: [aid]",
                                "    sequence-by: source.lsn",
                                "    scd-type: 1",
                                "    schema: 'aid INT, bid INT, abalance INT, filler STRING'"));
        if (maintenance) {
            l.add("    maintenance: true");
            if (warmup || Boolean.parseBoolean(args.get("scale"))) {
                l.add(
                        "    maintenance-rate-limit: "
                                + scaled(TableMaintenanceOptions.DEFAULT_RATE_LIMIT)
                                + "ms");
                l.add(
                        "    maintenance-interval: "
                                + scaled(TableMaintenanceOptions.DEFAULT_INTERVAL)
                                + "ms");
            }
            for (String kv : warmup ? new String[0] : args.get("maintenance").split(";")) {
                if (kv.isBlank()) {
                    continue;
                }
                int c = kv.indexOf(':');
                if (c < 0) {
                    throw new IllegalArgumentException(
                            "maintenance option '" + kv + "': expected key:value");
                }
                l.add("    " + kv.substring(0, c).trim() + ": " + kv.substring(c + 1).trim());
            }
        }
        return String.join("\n", l);
    }

    /** A production wall time scaled by checkpoint interval / 5 s, in ms (at least 1). */
    private long scaled(Duration production) {
        return Math.max(
                1, production.toMillis() * interval.toMillis() / PRODUCTION_CHECKPOINT.toMillis());
    }

    /**
     * One ingest run of {@code batchCount} batches ({@code warmup}: maintenance on, nothing
     * measured).
     */
    private Run run(String mode, int batchCount) throws Exception {
        boolean maintenance = !mode.equals("off");
        Run r = new Run();
        r.mode = mode;
        Path runDir = Path.of(args.get("dir")).toAbsolutePath().resolve(mode);
        deleteTree(runDir);
        r.warehouse = runDir.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(r.warehouse);
        Catalog catalog = settings.open();
        String yaml = flowsYaml(mode);
        IngestPlan plan =
                IngestPlanner.plan(FlowsFile.parse(yaml, "maintenance-bench flows"), List.of());
        IngestPlan.Flow flow = plan.flows.get(0);
        System.out.printf("%nrun '%s': %s%n", mode, flow.config.maintenance);
        StreamingTables.ensureTable(
                catalog,
                flow.target,
                flow.spec.targetType(),
                flow.spec.identifierFields(),
                flow.tableOptions);
        QuarantineTable.ensure(catalog, plan.quarantineNamespace);

        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                runDir.resolve("checkpoints").toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        env.enableCheckpointing(interval.toMillis());
        DataStream<SourceLine> lines =
                env.fromSource(
                                new OneBatchPerCheckpointSource(batchCount),
                                WatermarkStrategy.noWatermarks(),
                                "paced batches")
                        .uid("paced-batches")
                        .setParallelism(1)
                        .flatMap(
                                new ReplayLines(capture, batchLines, lineCount, LSN_SHIFT),
                                TypeInformation.of(SourceLine.class))
                        .uid("replay-lines")
                        .name("replay capture lines")
                        .setParallelism(1);
        IngestJob.build(lines, plan, settings);
        long start = System.nanoTime();
        JobClient job = env.executeAsync("maintenance bench " + mode);
        if (!maintenance) {
            job.getJobExecutionResult().get();
        } else {
            // the maintenance graph's monitor source is unbounded: wait for the last batch's commit
            long deadline = System.nanoTime() + Duration.ofHours(3).toNanos();
            try {
                while (ingestCommits(catalog.loadTable(ACCOUNTS)).size() < batchCount) {
                    if (job.getJobStatus().get().isTerminalState()) {
                        job.getJobExecutionResult().get(); // throws the failure
                        throw new IllegalStateException("the job ended before its last commit");
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("no last commit within 3 hours");
                    }
                    LockSupport.parkNanos(500_000_000L);
                }
                r.wallSeconds = (System.nanoTime() - start) / 1e9;
                if (mode.equals("warmup") || Boolean.parseBoolean(args.get("settle"))) {
                    // the warm-up too: it runs until a compaction followed its last commit, so the
                    // compaction code is compiled before the measured runs
                    settle(catalog, job, r);
                }
            } finally {
                job.cancel().get();
            }
        }
        if (!maintenance) {
            r.wallSeconds = (System.nanoTime() - start) / 1e9;
        }
        Table t = catalog.loadTable(ACCOUNTS);
        List<Snapshot> ingest = ingestCommits(t);
        r.commits = ingest.size();
        for (Snapshot s : SnapshotUtil.currentAncestors(t)) {
            if (DataOperations.REPLACE.equals(s.operation())) {
                r.compactions++;
            }
        }
        System.out.printf(
                Locale.ROOT,
                "run '%s': %,d ingest commits, %d compactions, %.1f s; measuring%n",
                mode,
                r.commits,
                r.compactions,
                r.wallSeconds);
        if (r.commits != batchCount) {
            throw new IllegalStateException(
                    "run '"
                            + mode
                            + "': "
                            + r.commits
                            + " ingest commits, expected one per batch ("
                            + batchCount
                            + ")");
        }
        if (mode.equals("warmup")) {
            return r;
        }
        Map<Long, Long> metadataJson = metadataJsonSizes(r.warehouse);
        long previousTs = ingest.get(0).timestampMillis();
        int previousCommit = 1;
        for (int k : points) {
            Snapshot s = ingest.get(k - 1);
            Point p = measure(t, s, k, metadataJson, k == batches, r);
            p.eventsPerSec =
                    (double) (k - previousCommit)
                            * batchLines
                            * 1000.0
                            / Math.max(1, s.timestampMillis() - previousTs);
            previousTs = s.timestampMillis();
            previousCommit = k;
            r.points.add(p);
            System.out.println(line(r.mode, p));
        }
        if (r.settled != null) {
            Snapshot cur = t.snapshot(r.settled.snapshotId);
            r.settled.version = cur.sequenceNumber();
            r.settled.dataFiles = num(cur.summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP);
            r.settled.deleteFiles = num(cur.summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP);
            r.settled.metadataBytes = metadataBytes(t, cur, metadataJson);
            scan(t, r.settled, null);
            r.settled.changesMs = Double.NaN;
            System.out.println(line(r.mode + "+settle", r.settled));
        }
        if (maintenance
                && t.currentSnapshot().snapshotId() != ingest.get(batches - 1).snapshotId()) {
            // a compaction after the last ingest commit: the current table must be exact too
            Map<Integer, String> byKey = new HashMap<>();
            readRows(t, t.currentSnapshot().snapshotId(), byKey, Long.MAX_VALUE);
            List<String> sample = new ArrayList<>();
            long wrong = expected.wrongScd1Rows(byKey, sample);
            if (wrong > 0) {
                r.wrongRows += wrong;
                r.wrongSample += " current snapshot: " + String.join(" | ", sample);
            }
        }
        return r;
    }

    /**
     * After the last ingest commit, keeps the job running until its maintenance has caught up: a
     * compaction ({@code replace}) after the last ingest commit and no delete file left in the
     * current snapshot (the compaction applied them and the expiry graph removed the dangling
     * ones). Waits at most the (scaled) {@code maintenance-interval} — the trigger that compacts a
     * table no commit triggers any more — plus two rate limits and 2 minutes; then the current
     * snapshot is measured as it is. Records the snapshot in {@link Run#settled}.
     */
    private void settle(Catalog catalog, JobClient job, Run r) throws Exception {
        Table t = catalog.loadTable(ACCOUNTS);
        List<Snapshot> ingest = ingestCommits(t);
        Snapshot last = ingest.get(ingest.size() - 1);
        long t0 = System.nanoTime();
        long budget =
                scaled(TableMaintenanceOptions.DEFAULT_INTERVAL) * 1_000_000L
                        + 2 * scaled(TableMaintenanceOptions.DEFAULT_RATE_LIMIT) * 1_000_000L
                        + Duration.ofMinutes(2).toNanos();
        Snapshot current = t.currentSnapshot();
        while (true) {
            t.refresh();
            current = t.currentSnapshot();
            boolean compacted = false;
            for (Snapshot s : SnapshotUtil.currentAncestors(t)) {
                if (s.snapshotId() == last.snapshotId()) {
                    break;
                }
                compacted |= DataOperations.REPLACE.equals(s.operation());
            }
            if (compacted && num(current.summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP) == 0) {
                break;
            }
            if (System.nanoTime() - t0 > budget) {
                System.out.printf(
                        Locale.ROOT,
                        "run '%s': maintenance not caught up %.0f s after the last commit"
                                + " (compacted since: %s); measuring the current snapshot%n",
                        r.mode,
                        (System.nanoTime() - t0) / 1e9,
                        compacted);
                break;
            }
            if (job.getJobStatus().get().isTerminalState()) {
                job.getJobExecutionResult().get();
                throw new IllegalStateException("the job ended while its maintenance settled");
            }
            LockSupport.parkNanos(500_000_000L);
        }
        r.settleSeconds = (System.nanoTime() - t0) / 1e9;
        r.settled = new Point();
        r.settled.commit = r.commits > 0 ? r.commits : ingest.size();
        r.settled.snapshotId = current.snapshotId();
    }

    /**
     * Ingest commits that changed data, oldest first: not compactions ({@code replace}), not the
     * empty commits Iceberg's committer makes after checkpoints without data.
     */
    private static List<Snapshot> ingestCommits(Table t) {
        t.refresh();
        List<Snapshot> out = new ArrayList<>();
        if (t.currentSnapshot() == null) {
            return out;
        }
        for (Snapshot s : SnapshotUtil.currentAncestors(t)) {
            if (DataOperations.REPLACE.equals(s.operation())) {
                continue;
            }
            Map<String, String> sum = s.summary();
            if (num(sum, SnapshotSummary.ADDED_FILES_PROP)
                            + num(sum, SnapshotSummary.ADDED_DELETE_FILES_PROP)
                    > 0) {
                out.add(s);
            }
        }
        Collections.reverse(out);
        return out;
    }

    // ------------------------------------------------------------------------------ measure

    private Point measure(
            Table t, Snapshot s, int commit, Map<Long, Long> metadataJson, boolean last, Run r)
            throws Exception {
        Point p = new Point();
        p.commit = commit;
        p.snapshotId = s.snapshotId();
        p.version = s.sequenceNumber();
        p.dataFiles = num(s.summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP);
        p.deleteFiles = num(s.summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP);
        p.metadataBytes = metadataBytes(t, s, metadataJson);
        scan(t, p, last && verified(r.mode) ? r : null);
        changes(t, p);
        return p;
    }

    /**
     * Whether the final table of run {@code mode} is read whole and compared with the expected
     * table ({@code verifyModes}; default every mode). A run without maintenance at 2,000 commits
     * takes longer to read whole than the rest of the benchmark together (every equality delete
     * file applies to every older data file), so a throughput comparison may leave it out.
     */
    private boolean verified(String mode) {
        String modes = args.get("verifyModes");
        return modes == null || modes.isBlank() || List.of(modes.split(",")).contains(mode);
    }

    /**
     * Full scan at the point's snapshot: a warm-up read that hashes the rows (and for the final
     * point verifies them), then up to 3 timed reads.
     */
    private void scan(Table t, Point p, Run verify) throws IOException {
        Map<Integer, String> byKey = verify != null ? new HashMap<>() : null;
        long budget = scanBudget.toNanos();
        long w0 = System.nanoTime();
        long[] read = readRows(t, p.snapshotId, byKey, budget);
        long warm = System.nanoTime() - w0;
        if (read == null) {
            p.scanMs = scanBudget.toMillis();
            p.scanNote = ">";
            if (verify != null) {
                // the final table is verified whatever the time
                byKey.clear();
                read = readRows(t, p.snapshotId, byKey, Long.MAX_VALUE);
            }
        }
        if (read != null) {
            p.rows = read[0];
            p.rowHash = read[1];
            p.rowsRead = true;
        }
        if (verify != null) {
            List<String> sample = new ArrayList<>();
            verify.wrongRows = expected.wrongScd1Rows(byKey, sample);
            verify.wrongSample = String.join(" | ", sample);
        }
        if (p.scanNote.equals(">")) {
            return;
        }
        if (warm > budget / 4) {
            p.scanMs = warm / 1e6;
            p.scanNote = "~";
            return;
        }
        double[] ms = new double[3];
        for (int i = 0; i < ms.length; i++) {
            long t0 = System.nanoTime();
            readRows(t, p.snapshotId, null, Long.MAX_VALUE);
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        p.scanMs = ms[1];
    }

    /**
     * Reads every row of a snapshot with Iceberg's generic reader; with {@code byKey} non-null,
     * also collects the rows as CSV by key. Returns {rows, order-independent hash}, or null when
     * the read took longer than {@code budgetNanos}.
     */
    private static long[] readRows(
            Table t, long snapshotId, Map<Integer, String> byKey, long budgetNanos)
            throws IOException {
        if (budgetNanos == Long.MAX_VALUE) {
            return readRowsUntil(t, snapshotId, byKey, budgetNanos);
        }
        // Iceberg loads a data file's equality deletes when it opens the file, before its first
        // row: with thousands of delete files that alone outlasts the budget, so the read runs on
        // a thread of its own and is abandoned (interrupted) at the budget
        java.util.concurrent.ExecutorService reader =
                java.util.concurrent.Executors.newSingleThreadExecutor(
                        r -> {
                            Thread th = new Thread(r, "budgeted scan");
                            th.setDaemon(true);
                            return th;
                        });
        try {
            // its own map: an abandoned read may still be running when the caller reads again
            Map<Integer, String> rows = byKey == null ? null : new HashMap<>();
            java.util.concurrent.Future<long[]> read =
                    reader.submit(() -> readRowsUntil(t, snapshotId, rows, budgetNanos));
            try {
                long[] done = read.get(budgetNanos + 1_000_000_000L, TimeUnit.NANOSECONDS);
                if (done != null && byKey != null) {
                    byKey.putAll(rows);
                }
                return done;
            } catch (java.util.concurrent.TimeoutException e) {
                read.cancel(true);
                return null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IOException(e.getCause());
            }
        } finally {
            reader.shutdownNow();
        }
    }

    private static long[] readRowsUntil(
            Table t, long snapshotId, Map<Integer, String> byKey, long budgetNanos)
            throws IOException {
        long deadline =
                budgetNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + budgetNanos;
        Schema schema = t.schema();
        int columns = schema.columns().size();
        long n = 0;
        long hash = 0;
        boolean hashIt = byKey != null || budgetNanos != Long.MAX_VALUE;
        try (CloseableIterable<Record> rows =
                IcebergGenerics.read(t).useSnapshot(snapshotId).build()) {
            for (Record r : rows) {
                n++;
                if (hashIt) {
                    String csv = csv(r, columns);
                    hash += mix(csv.hashCode());
                    if (byKey != null) {
                        byKey.put((Integer) r.get(0), csv);
                    }
                }
                if ((n & 1023) == 0 && System.nanoTime() > deadline) {
                    return null;
                }
            }
        }
        return new long[] {n, hash};
    }

    /** The one-version change feed of the point's version: warm-up (hashed), median of 3. */
    private static void changes(Table t, Point p) throws IOException {
        long[] warm = readChanges(t, p.version, true);
        p.changeRows = warm[0];
        p.changeHash = warm[1];
        double[] ms = new double[3];
        for (int i = 0; i < ms.length; i++) {
            long t0 = System.nanoTime();
            readChanges(t, p.version, false);
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        p.changesMs = ms[1];
    }

    private static long[] readChanges(Table t, long version, boolean hashIt) throws IOException {
        int columns = t.schema().columns().size();
        long n = 0;
        long hash = 0;
        try (CloseableIterable<Record> rows =
                TableChanges.forTable(t)
                        .startingVersion(version)
                        .endingVersion(version)
                        .build()
                        .read()) {
            for (Record r : rows) {
                n++;
                if (hashIt) {
                    hash += mix((csv(r, columns) + "," + r.getField("_change_type")).hashCode());
                }
            }
        }
        return new long[] {n, hash};
    }

    /**
     * The first {@code columns} fields of a record as a CSV line ({@link TableRows#formatValue}).
     */
    private static String csv(Record r, int columns) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < columns; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(TableRows.formatValue(r.get(i)));
        }
        return b.toString();
    }

    private static long mix(int h) {
        long z = h * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        return z ^ (z >>> 31);
    }

    /**
     * Bytes of the metadata reachable from a snapshot: the {@code metadata.json} its commit wrote
     * (-1 if not found), its manifest list and every manifest in it.
     */
    private static long metadataBytes(Table t, Snapshot s, Map<Long, Long> metadataJson)
            throws IOException {
        long bytes = metadataJson.getOrDefault(s.sequenceNumber(), -1L);
        if (bytes < 0) {
            return -1;
        }
        bytes += Files.size(localPath(s.manifestListLocation()));
        for (ManifestFile m : s.allManifests(t.io())) {
            bytes += m.length();
        }
        return bytes;
    }

    /**
     * Sizes of the table's {@code *.metadata.json} files by the {@code last-sequence-number} they
     * record (the first file of each: the one the commit of that version wrote), read from the
     * start of each file.
     */
    private static Map<Long, Long> metadataJsonSizes(Path warehouse) throws IOException {
        Path dir = warehouse.resolve("public").resolve("pgbench_accounts").resolve("metadata");
        Map<Long, Long> out = new HashMap<>();
        TreeMap<Integer, Path> byVersion = new TreeMap<>();
        try (Stream<Path> list = Files.list(dir)) {
            for (Path p : list.toList()) {
                String name = p.getFileName().toString();
                Matcher m = Pattern.compile("^v(\\d+)\\.metadata\\.json$").matcher(name);
                if (m.matches()) {
                    byVersion.put(Integer.parseInt(m.group(1)), p);
                }
            }
        }
        for (Path p : byVersion.values()) {
            byte[] head;
            try (InputStream in = Files.newInputStream(p)) {
                head = in.readNBytes(2048);
            }
            Matcher m = LAST_SEQUENCE.matcher(new String(head, StandardCharsets.UTF_8));
            if (m.find()) {
                out.putIfAbsent(Long.parseLong(m.group(1)), Files.size(p));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------ fresh copy

    /**
     * The freshly compacted reference (class comment): rows at commit C−1 in one file, then commit
     * C's files as one row delta; measured and verified like the final point.
     */
    private Point freshCopy(Run source) throws Exception {
        CatalogSettings settings = CatalogSettings.localHadoop(source.warehouse);
        Catalog catalog = settings.open();
        Table src = catalog.loadTable(ACCOUNTS);
        List<Snapshot> ingest = ingestCommits(src);
        Snapshot last = ingest.get(ingest.size() - 1);
        Snapshot before = ingest.get(ingest.size() - 2);
        Table fresh = emptyCopy(catalog, FRESH, src);
        List<Record> rows = TableRows.readSnapshot(src, before.snapshotId());
        rows.sort((a, b) -> Integer.compare((Integer) a.get(0), (Integer) b.get(0)));
        Schema schema = fresh.schema();
        GenericAppenderFactory factory = new GenericAppenderFactory(schema, fresh.spec());
        String path = fresh.locationProvider().newDataLocation("compacted-00000.parquet");
        DataWriter<Record> writer =
                factory.newDataWriter(
                        EncryptedFiles.plainAsEncryptedOutput(fresh.io().newOutputFile(path)),
                        FileFormat.PARQUET,
                        null);
        try (writer) {
            for (Record r : rows) {
                GenericRecord copy = GenericRecord.create(schema);
                for (Types.NestedField f : schema.columns()) {
                    copy.setField(f.name(), r.getField(f.name()));
                }
                writer.write(copy);
            }
        }
        // both commits name the ingest's changelog writer, as if that writer had written the
        // table and a compaction had rewritten it: the change feed then takes the carried
        // pre-images of version C as it does on the ingested tables (F2)
        String changelogWriter = last.summary().get(StreamingTables.CHANGELOG_WRITER);
        fresh.newAppend()
                .appendFile(writer.toDataFile())
                .set(StreamingTables.CHANGELOG_WRITER, changelogWriter)
                .commit();
        RowDelta delta = fresh.newRowDelta();
        delta.set(StreamingTables.CHANGELOG_WRITER, changelogWriter);
        for (DataFile f : last.addedDataFiles(src.io())) {
            delta.addRows(f);
        }
        for (DeleteFile f : last.addedDeleteFiles(src.io())) {
            delta.addDeletes(f);
        }
        delta.commit();
        fresh.refresh();
        Point p = new Point();
        p.commit = ingest.size();
        p.snapshotId = fresh.currentSnapshot().snapshotId();
        p.version = fresh.currentSnapshot().sequenceNumber();
        p.dataFiles = num(fresh.currentSnapshot().summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP);
        p.deleteFiles =
                num(fresh.currentSnapshot().summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP);
        Run check = new Run();
        scan(fresh, p, check);
        changes(fresh, p);
        p.metadataBytes = -1;
        if (check.wrongRows != 0) {
            throw new IllegalStateException(
                    "the freshly compacted copy differs from the expected table in "
                            + check.wrongRows
                            + " rows: "
                            + check.wrongSample);
        }
        return p;
    }

    /**
     * A new empty table {@code id} (dropped first if it exists, its files kept: they may be the
     * source's) with {@code src}'s schema, partitioning, sort order and properties.
     */
    private static Table emptyCopy(Catalog catalog, TableIdentifier id, Table src) {
        if (catalog.tableExists(id)) {
            catalog.dropTable(id, false);
        }
        return catalog.buildTable(id, src.schema())
                .withPartitionSpec(src.spec())
                .withSortOrder(src.sortOrder())
                .withProperties(src.properties())
                .create();
    }

    /**
     * The maintained table at its last measured commit with every delete resolved to row positions
     * (table {@code public.pgbench_accounts_positions}, {@code positions=true}): the same live data
     * files, and per data file one position delete file listing the rows its equality and position
     * deletes remove — what converting equality deletes to deletion vectors (Iceberg's Flink {@code
     * ConvertEqualityDeletes}, iceberg-flink 1.12) would give a reader during the ingest. Its rows
     * must equal the expected table; its full scan is measured as the other points (the change-feed
     * read is not: the copy has no ingest versions).
     */
    private Point positionCopy(Run source) throws Exception {
        Point at = source.points.get(source.points.size() - 1);
        Catalog catalog = CatalogSettings.localHadoop(source.warehouse).open();
        Table src = catalog.loadTable(ACCOUNTS);
        Table copy = emptyCopy(catalog, POSITIONS, src);
        Schema schema = src.schema();
        Schema keySchema = schema.select("aid");
        AppendFiles append = copy.newAppend();
        List<DeleteFile> deletes = new ArrayList<>();
        GenericFileWriterFactory writers = new GenericFileWriterFactory.Builder(copy).build();
        OutputFileFactory files = OutputFileFactory.builderFor(copy, 1, 1).build();
        try (CloseableIterable<FileScanTask> tasks =
                src.newScan().useSnapshot(at.snapshotId).planFiles()) {
            for (FileScanTask task : tasks) {
                DataFile data = task.file();
                append.appendFile(data);
                Set<Object> keys = new HashSet<>();
                Set<Long> deletedPositions = new HashSet<>();
                for (DeleteFile d : task.deletes()) {
                    if (d.content() == FileContent.EQUALITY_DELETES) {
                        try (CloseableIterable<Record> rows =
                                readFile(src, d.location(), keySchema)) {
                            rows.forEach(r -> keys.add(r.getField("aid")));
                        }
                    } else {
                        Schema pathPos = DeleteSchemaUtil.pathPosSchema();
                        try (CloseableIterable<Record> rows =
                                readFile(src, d.location(), pathPos)) {
                            for (Record r : rows) {
                                if (data.location().equals(r.get(0).toString())) {
                                    deletedPositions.add((Long) r.get(1));
                                }
                            }
                        }
                    }
                }
                List<PositionDelete<Record>> positions = new ArrayList<>();
                long pos = 0;
                try (CloseableIterable<Record> rows = readFile(src, data.location(), keySchema)) {
                    for (Record r : rows) {
                        if (keys.contains(r.getField("aid")) || deletedPositions.contains(pos)) {
                            positions.add(
                                    PositionDelete.<Record>create()
                                            .set(data.location(), pos, null));
                        }
                        pos++;
                    }
                }
                if (!positions.isEmpty()) {
                    StructLike partition = copy.spec().isUnpartitioned() ? null : data.partition();
                    PositionDeleteWriter<Record> w =
                            writers.newPositionDeleteWriter(
                                    files.newOutputFile(copy.spec(), partition),
                                    copy.spec(),
                                    partition);
                    try (w) {
                        w.write(positions);
                    }
                    deletes.add(w.toDeleteFile());
                }
            }
        }
        append.commit();
        RowDelta delta = copy.newRowDelta();
        deletes.forEach(delta::addDeletes);
        delta.commit();
        copy.refresh();
        Point p = new Point();
        p.commit = at.commit;
        p.snapshotId = copy.currentSnapshot().snapshotId();
        p.dataFiles = num(copy.currentSnapshot().summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP);
        p.deleteFiles =
                num(copy.currentSnapshot().summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP);
        p.metadataBytes = -1;
        p.changesMs = Double.NaN;
        Run check = new Run();
        scan(copy, p, check);
        if (check.wrongRows != 0) {
            throw new IllegalStateException(
                    "the copy with position deletes differs from the expected table in "
                            + check.wrongRows
                            + " rows: "
                            + check.wrongSample);
        }
        return p;
    }

    /** Every row of one Parquet file of {@code t} as written, projected on {@code projection}. */
    private static CloseableIterable<Record> readFile(Table t, String path, Schema projection) {
        return Parquet.read(t.io().newInputFile(path))
                .project(projection)
                .createReaderFunc(
                        fileSchema -> GenericParquetReaders.buildReader(projection, fileSchema))
                .build();
    }

    // ------------------------------------------------------------------------------ output

    private static String header() {
        return String.format(
                Locale.ROOT,
                "%-11s %7s %10s %12s %13s %14s %16s %10s %9s",
                "maintenance",
                "commit",
                "data files",
                "delete files",
                "metadata KiB",
                "full scan ms",
                "1-version cdf ms",
                "events/s",
                "rows");
    }

    private static String line(String mode, Point p) {
        return String.format(
                Locale.ROOT,
                "%-11s %7d %10d %12d %13s %14s %16.1f %10s %9d",
                mode,
                p.commit,
                p.dataFiles,
                p.deleteFiles,
                p.metadataBytes < 0
                        ? "-"
                        : String.format(Locale.ROOT, "%,.0f", p.metadataBytes / 1024.0),
                p.scanNote + String.format(Locale.ROOT, "%.1f", p.scanMs),
                p.changesMs,
                p.eventsPerSec <= 0 ? "-" : String.format(Locale.ROOT, "%,.0f", p.eventsPerSec),
                p.rows);
    }

    /** Prints the table and the checks; returns whether every result is exact. */
    private boolean print(List<Run> runs, Point fresh, Point positions) {
        boolean ok = true;
        System.out.println();
        System.out.println(header());
        for (int i = 0; i < points.size(); i++) {
            for (Run r : runs) {
                System.out.println(line(r.mode, r.points.get(i)));
            }
        }
        for (Run r : runs) {
            if (r.settled != null) {
                System.out.println(line(r.mode + "+settle", r.settled));
            }
        }
        System.out.println(line("fresh copy", fresh));
        if (positions != null) {
            System.out.println(line("on, as pos.", positions));
        }
        System.out.println();
        for (Run r : runs) {
            Point last = r.points.get(r.points.size() - 1);
            System.out.printf(
                    Locale.ROOT,
                    "run '%s': %,d commits, %d compactions, wall %.1f s, final table %s%n",
                    r.mode,
                    r.commits,
                    r.compactions,
                    r.wallSeconds,
                    !verified(r.mode)
                            ? "not read (verifyModes)"
                            : r.wrongRows == 0
                                    ? "exact"
                                    : "WRONG (" + r.wrongRows + " rows: " + r.wrongSample + ")");
            ok &= r.wrongRows == 0 || !verified(r.mode);
            System.out.printf(
                    Locale.ROOT,
                    "  vs freshly compacted: full scan %s%.2f×, one-version change feed %.2f×%n",
                    last.scanNote.equals(">") ? ">" : "",
                    last.scanMs / fresh.scanMs,
                    last.changesMs / fresh.changesMs);
            if (r.settled != null) {
                System.out.printf(
                        Locale.ROOT,
                        "  settled (%.0f s after the last commit, %d data / %d delete files): full"
                                + " scan %s%.2f× freshly compacted%n",
                        r.settleSeconds,
                        r.settled.dataFiles,
                        r.settled.deleteFiles,
                        r.settled.scanNote.equals(">") ? ">" : "",
                        r.settled.scanMs / fresh.scanMs);
            }
            if (last.changeHash != fresh.changeHash || last.changeRows != fresh.changeRows) {
                System.out.printf(
                        "  WRONG: the last version's changes differ from the fresh copy's (%d vs %d rows)%n",
                        last.changeRows, fresh.changeRows);
                ok = false;
            }
            if (last.rowsRead && (last.rowHash != fresh.rowHash || last.rows != fresh.rows)) {
                System.out.println("  WRONG: the final rows differ from the fresh copy's");
                ok = false;
            }
        }
        if (runs.size() == 2) {
            int differ = 0;
            for (int i = 0; i < points.size(); i++) {
                Point a = runs.get(0).points.get(i);
                Point b = runs.get(1).points.get(i);
                boolean rowsDiffer =
                        a.rowsRead && b.rowsRead && (a.rowHash != b.rowHash || a.rows != b.rows);
                if (rowsDiffer || a.changeHash != b.changeHash || a.changeRows != b.changeRows) {
                    System.out.printf("WRONG: the runs differ at commit %d%n", a.commit);
                    differ++;
                }
            }
            if (differ == 0) {
                System.out.println(
                        "both runs: equal tables and equal one-version changes at every point");
            }
            ok &= differ == 0;
            System.out.printf(
                    Locale.ROOT,
                    "ingest events/s over all commits: off %,.0f, on %,.0f (%.1f%%)%n",
                    overallRate(runs.get(0)),
                    overallRate(runs.get(1)),
                    100.0 * (overallRate(runs.get(1)) / overallRate(runs.get(0)) - 1));
        }
        System.out.println(
                "(~: one read, longer than a quarter of the scan budget; >: stopped at the budget)");
        return ok;
    }

    private double overallRate(Run r) {
        // commit 1 .. last: (batches - 1) batches in the time between their commits
        double ms = 0;
        double events = 0;
        int prev = 1;
        for (Point p : r.points) {
            if (p.eventsPerSec > 0) {
                double n = (double) (p.commit - prev) * batchLines;
                events += n;
                ms += n / p.eventsPerSec * 1000.0;
            }
            prev = p.commit;
        }
        return ms == 0 ? -1 : events * 1000.0 / ms;
    }

    // ------------------------------------------------------------------------------ helpers

    private static long num(Map<String, String> summary, String key) {
        String v = summary.get(key);
        return v == null ? 0 : Long.parseLong(v);
    }

    private static Path localPath(String location) {
        return location.startsWith("file:") ? Path.of(URI.create(location)) : Path.of(location);
    }

    private static Duration parseDuration(String s) {
        String v = s.trim().toLowerCase(Locale.ROOT);
        if (v.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        }
        if (v.endsWith("s")) {
            return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        if (v.endsWith("min")) {
            return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 3)));
        }
        return Duration.ofMillis(Long.parseLong(v));
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path x : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.delete(x);
            }
        }
    }
}

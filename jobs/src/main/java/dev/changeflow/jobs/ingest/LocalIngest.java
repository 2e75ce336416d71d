package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.quarantine.QuarantineTable;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs an ingest job on a local MiniCluster (the embedded default): RocksDB with incremental
 * checkpoints under {@code <warehouse>/.changeflow/checkpoints/<name>}, resuming from the latest
 * retained checkpoint or savepoint there. It reads every input file that is new since the last
 * run, then stops with a savepoint (so the AUTO CDC state survives for the next run), prints a
 * progress line every few seconds and a summary per table.
 *
 * <p>K8: a start without state on a non-empty target fails with
 * {@code STATE_MISSING_FOR_EXISTING_TABLE} unless {@link Options#fromScratch} recreates the tables.
 */
public final class LocalIngest {
    /** Launcher options of a local run. */
    public static final class Options {
        public Path warehouse = Path.of("warehouse");
        @Nullable public Path checkpointRoot;
        public boolean fromScratch;
        public Duration progressInterval = Duration.ofSeconds(5);
        public PrintStream out = System.out;
        /** Test hook: stop after this many completed checkpoints even if input remains (0 = off). */
        public int stopAfterCheckpoints;
    }

    /** What a run did. */
    public static final class Summary {
        public final List<String> tables = new ArrayList<>();
        public long records;
        public long quarantined;
        public long applied;
        public long late;
        public double seconds;
        public boolean nothingToDo;
        @Nullable public String savepoint;
    }

    private LocalIngest() {}

    /** The local catalog for a warehouse folder, unless the flows file names another one. */
    public static CatalogSettings catalog(IngestPlan plan, Path warehouse) {
        if (plan.config.catalog.isEmpty()) {
            return CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        }
        return CatalogSettings.of("changeflow", plan.config.catalog);
    }

    public static Path checkpointRoot(IngestPlan plan, Options o) {
        Path root = o.checkpointRoot != null ? o.checkpointRoot : o.warehouse.resolve(".changeflow").resolve("checkpoints");
        return root.resolve(plan.config.name == null ? "ingest" : plan.config.name).toAbsolutePath();
    }

    /**
     * Runs the plan over {@code inputs} until every file present at start has been read.
     *
     * @throws AutoCdcException STATE_MISSING_FOR_EXISTING_TABLE (K8) or TARGET_SCHEMA_MISMATCH (A1)
     * @throws Exception when the job fails (the cause is Flink's)
     */
    public static Summary run(IngestPlan plan, List<Path> inputs, Options o) throws Exception {
        long t0 = System.nanoTime();
        Summary summary = new Summary();
        CatalogSettings catalog = catalog(plan, o.warehouse);
        Path ckRoot = checkpointRoot(plan, o);
        Path doneDir = ckRoot.resolve("files-done");
        Catalog cat = catalog.open();
        try {
            if (o.fromScratch) {
                for (IngestPlan.Flow f : plan.flows) {
                    StreamingTables.dropIfExists(cat, f.target);
                }
                deleteRecursively(ckRoot);
            }
            Optional<Path> restore = latestState(ckRoot);
            if (restore.isEmpty()) {
                for (IngestPlan.Flow f : plan.flows) {
                    if (cat.tableExists(f.target) && !StreamingTables.isEmpty(cat.loadTable(f.target))) {
                        throw new AutoCdcException(
                                AutoCdcException.Code.STATE_MISSING_FOR_EXISTING_TABLE,
                                "table " + f.target + " already holds rows but no checkpoint or savepoint of '"
                                        + plan.config.name + "' exists under " + ckRoot
                                        + ": applying changes without the AUTO CDC state (sequences, tombstones) could"
                                        + " resurrect deleted rows or re-apply old ones. Re-run with --from-scratch to"
                                        + " recreate the tables, or restore the checkpoint folder (semantics.md K8).");
                    }
                }
            }
            for (IngestPlan.Flow f : plan.flows) {
                if (f.spec != null) {
                    StreamingTables.ensureTable(cat, f.target, f.spec.targetType(), f.spec.identifierFields(), f.tableOptions);
                } else {
                    StreamingTables.ensureTable(cat, f.target, f.decoder.dataType(), List.of(), f.tableOptions);
                }
            }
            QuarantineTable.ensure(cat, plan.quarantineNamespace);

            Set<String> done = new LinkedHashSet<>();
            if (restore.isPresent()) {
                done.addAll(FileProgressFunction.doneAt(doneDir, checkpointId(restore.get())));
            }
            List<String> files = listFiles(inputs);
            List<String> fresh = files.stream().filter(f -> !done.contains(f)).collect(Collectors.toList());
            if (fresh.isEmpty() && restore.isPresent()) {
                o.out.println("Nothing new to ingest: all " + files.size() + " input file(s) were read by an earlier run.");
                summary.nothingToDo = true;
                summarize(cat, plan, summary, o.out);
                return summary;
            }
            o.out.println("Ingesting " + fresh.size() + " file(s) into " + plan.flows.size() + " table(s)"
                    + (restore.isPresent() ? ", resuming from " + restore.get().getParent() : ", starting without state"));

            Configuration conf = flinkConfiguration(plan, ckRoot, restore.orElse(null));
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(plan.config.parallelism);
            IngestJob.build(env, plan, catalog, inputs, Duration.ofMillis(500), doneDir);
            LocalMetrics.reset();
            JobClient job = env.executeAsync("changeflow ingest " + plan.config.name);
            long lastPrint = System.nanoTime();
            long lastRecords = 0;
            while (true) {
                JobStatus status = job.getJobStatus().get(10, TimeUnit.SECONDS);
                if (status.isGloballyTerminalState()) {
                    // surfaces the failure cause
                    job.getJobExecutionResult().get();
                    throw new IllegalStateException("job ended before its input was read: " + status);
                }
                long filesDone = LocalMetrics.sum(FileProgressFunction.METRIC);
                long checkpoints = LocalMetrics.sum("numberOfCompletedCheckpoints");
                boolean stopTest = o.stopAfterCheckpoints > 0 && checkpoints >= o.stopAfterCheckpoints;
                if (filesDone >= fresh.size() || stopTest) {
                    Path spDir = ckRoot.resolve("savepoints");
                    summary.savepoint = job.stopWithSavepoint(false, spDir.toUri().toString(), SavepointFormatType.CANONICAL)
                            .get(10, TimeUnit.MINUTES);
                    job.getJobExecutionResult().get();
                    cleanUpOlderState(ckRoot, Path.of(java.net.URI.create(summary.savepoint)));
                    break;
                }
                long now = System.nanoTime();
                if (now - lastPrint >= o.progressInterval.toNanos()) {
                    long records = LocalMetrics.sum("recordsIn");
                    double rate = (records - lastRecords) / ((now - lastPrint) / 1e9);
                    o.out.printf(
                            "  %,d records (%,.0f/s) | applied %,d | late %,d | quarantined %,d | files %d/%d | checkpoints %d%n",
                            records, rate, LocalMetrics.sum("applied"), LocalMetrics.sum("late"),
                            LocalMetrics.sum("quarantined"), filesDone, fresh.size(), checkpoints);
                    lastPrint = now;
                    lastRecords = records;
                }
                Thread.sleep(100);
            }
            summary.records = LocalMetrics.sum("recordsIn");
            summary.quarantined = LocalMetrics.sum("quarantined");
            summary.applied = LocalMetrics.sum("applied");
            summary.late = LocalMetrics.sum("late");
            summary.seconds = (System.nanoTime() - t0) / 1e9;
            o.out.printf(
                    "Done in %.1f s: %,d records (%,.0f/s), applied %,d, late %,d, quarantined %,d. State saved in %s%n",
                    summary.seconds, summary.records, summary.records / Math.max(summary.seconds, 1e-9),
                    summary.applied, summary.late, summary.quarantined, summary.savepoint);
            summarize(cat, plan, summary, o.out);
        } finally {
            if (cat instanceof java.io.Closeable) {
                ((java.io.Closeable) cat).close();
            }
        }
        return summary;
    }

    private static void summarize(Catalog cat, IngestPlan plan, Summary summary, PrintStream out) {
        out.println("Tables:");
        List<org.apache.iceberg.catalog.TableIdentifier> ids = new ArrayList<>();
        plan.flows.forEach(f -> ids.add(f.target));
        ids.add(QuarantineTable.identifier(plan.quarantineNamespace));
        for (org.apache.iceberg.catalog.TableIdentifier id : ids) {
            Table t = cat.loadTable(id);
            long snapshots = 0;
            for (org.apache.iceberg.Snapshot ignored : t.snapshots()) {
                snapshots++;
            }
            String line = String.format("  %-40s %,10d rows  %4d snapshots  %s", id, dev.changeflow.sinks.iceberg.TableRows.count(t), snapshots, t.location());
            out.println(line);
            summary.tables.add(id.toString());
        }
    }

    /** Flink configuration of a local run: RocksDB, incremental checkpoints, retained, restore. */
    static Configuration flinkConfiguration(IngestPlan plan, Path ckRoot, @Nullable Path restore) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, ckRoot.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, ckRoot.resolve("savepoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, plan.config.checkpointInterval);
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 2);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
        conf.setString(LocalMetrics.CONFIG_KEY, LocalMetrics.Factory.class.getName());
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore.toUri().toString());
        }
        return conf;
    }

    /** The newest savepoint or retained checkpoint (a folder with {@code _metadata}) under root. */
    public static Optional<Path> latestState(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> s = Files.walk(root, 4)) {
            return s.filter(p -> p.getFileName().toString().equals("_metadata"))
                    .max(Comparator.comparingLong(LocalIngest::mtime))
                    .map(Path::getParent);
        }
    }

    private static long mtime(Path p) {
        try {
            return Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The checkpoint id of a savepoint or checkpoint folder (read from its {@code _metadata}). */
    static long checkpointId(Path stateDir) throws IOException {
        try (java.io.DataInputStream in = new java.io.DataInputStream(Files.newInputStream(stateDir.resolve("_metadata")))) {
            return org.apache.flink.runtime.checkpoint.Checkpoints.loadCheckpointMetadata(
                            in, LocalIngest.class.getClassLoader(), stateDir.toUri().toString())
                    .getCheckpointId();
        }
    }

    /**
     * After a clean stop only the new savepoint is needed: removes retained checkpoints, older
     * savepoints and their file lists (a canonical savepoint is self-contained).
     */
    static void cleanUpOlderState(Path ckRoot, Path savepoint) throws IOException {
        long keepId = checkpointId(savepoint);
        deleteRecursively(ckRoot.resolve("checkpoints"));
        try (Stream<Path> s = Files.list(ckRoot.resolve("savepoints"))) {
            for (Path p : s.collect(Collectors.toList())) {
                if (!p.toAbsolutePath().normalize().equals(savepoint.toAbsolutePath().normalize())) {
                    deleteRecursively(p);
                }
            }
        }
        Path doneDir = ckRoot.resolve("files-done");
        if (Files.isDirectory(doneDir)) {
            try (Stream<Path> s = Files.list(doneDir)) {
                for (Path p : s.collect(Collectors.toList())) {
                    if (!p.getFileName().toString().equals(keepId + ".txt")) {
                        Files.delete(p);
                    }
                }
            }
        }
    }

    /** Regular, visible files under the inputs (as Flink's FileSource enumerates them). */
    static List<String> listFiles(List<Path> inputs) throws IOException {
        List<String> files = new ArrayList<>();
        for (Path in : inputs) {
            if (Files.isRegularFile(in)) {
                files.add(in.toAbsolutePath().normalize().toString());
            } else if (Files.isDirectory(in)) {
                try (Stream<Path> s = Files.walk(in)) {
                    s.filter(Files::isRegularFile)
                            .filter(p -> !hidden(in, p))
                            .forEach(p -> files.add(p.toAbsolutePath().normalize().toString()));
                }
            } else {
                throw new IllegalArgumentException("input not found: " + in);
            }
        }
        files.sort(null);
        return files;
    }

    private static boolean hidden(Path root, Path p) {
        for (Path part : root.relativize(p)) {
            String n = part.toString();
            if (n.startsWith(".") || n.startsWith("_")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Deletes a folder tree; files that vanish meanwhile (Flink's asynchronous checkpoint clean-up
     * of a job that just finished) are fine.
     */
    static void deleteRecursively(Path p) throws IOException {
        for (int attempt = 0; ; attempt++) {
            if (!Files.exists(p)) {
                return;
            }
            try (Stream<Path> s = Files.walk(p)) {
                for (Path x : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                    Files.deleteIfExists(x);
                }
                return;
            } catch (java.nio.file.NoSuchFileException | java.nio.file.DirectoryNotEmptyException | UncheckedIOException e) {
                if (attempt >= 20) {
                    throw e instanceof UncheckedIOException ? ((UncheckedIOException) e).getCause() : (IOException) e;
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while deleting " + p, ie);
                }
            }
        }
    }

    /** Deletes a job's saved state (checkpoints, savepoints, the list of files read). */
    public static void deleteState(Path checkpointRoot) throws IOException {
        deleteRecursively(checkpointRoot);
    }
}

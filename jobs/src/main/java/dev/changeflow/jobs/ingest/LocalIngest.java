package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.SchemaChangeException;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.checkpoint.CheckpointFailureReason;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs an ingest job on a local MiniCluster (the embedded default): RocksDB with incremental
 * checkpoints under {@code <warehouse>/.changeflow/checkpoints/<name>}, resuming from the latest
 * retained checkpoint or savepoint there. It reads every input file that is new since the last run
 * — or, from Kafka, every record up to the end offsets seen at launch (or until the input was idle
 * for a while) — then stops with a savepoint (so the AUTO CDC state survives for the next run),
 * prints a progress line every few seconds and a summary per table.
 *
 * <p>K8: a start without state on a non-empty target fails with {@code
 * STATE_MISSING_FOR_EXISTING_TABLE} unless {@link Options#fromScratch} recreates the tables.
 */
public final class LocalIngest {
    /** Launcher options of a local run. */
    public static final class Options {
        public Path warehouse = Path.of("warehouse");
        @Nullable public Path checkpointRoot;
        public boolean fromScratch;
        public Duration progressInterval = Duration.ofSeconds(5);
        public PrintStream out = System.out;

        /**
         * Test hook: stop after this many completed checkpoints even if input remains (0 = off).
         */
        public int stopAfterCheckpoints;
    }

    /** What a run did. */
    public static final class Summary {
        public final List<String> tables = new ArrayList<>();

        /** Live rows per table after the run. */
        public final Map<String, Long> rows = new TreeMap<>();

        /** Bytes of AUTO CDC state per table in the final savepoint (Flink's accounting). */
        public final Map<String, Long> stateBytes = new TreeMap<>();

        public long records;
        public long quarantined;
        public long applied;
        public long late;

        /** Wall time of the whole run, seconds (catalog, planning, job start and stop included). */
        public double seconds;

        /** Time from job submission to the savepoint, seconds. */
        public double runSeconds;

        public boolean nothingToDo;
        @Nullable public String savepoint;

        /**
         * Columns added by {@code on-schema-change: add-columns} during the run, e.g. {@code
         * shop.items: + w STRING}.
         */
        public final List<String> addedColumns = new ArrayList<>();
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
        Path root =
                o.checkpointRoot != null
                        ? o.checkpointRoot
                        : o.warehouse.resolve(".changeflow").resolve("checkpoints");
        return root.resolve(plan.config.name == null ? "ingest" : plan.config.name)
                .toAbsolutePath();
    }

    /**
     * Runs the plan over {@code inputs} until every file present at start has been read.
     *
     * @throws AutoCdcException STATE_MISSING_FOR_EXISTING_TABLE (K8) or TARGET_SCHEMA_MISMATCH (A1)
     * @throws Exception when the job fails (the cause is Flink's)
     */
    public static Summary run(IngestPlan plan, List<Path> inputs, Options o) throws Exception {
        return run(plan, new FileInput(inputs), o);
    }

    /**
     * Runs the plan over Kafka until every record that was in the subscribed partitions at launch
     * has been consumed (end offsets fetched with an admin client at launch), or, with {@code
     * untilIdle}, until no record arrived for that long. Then stops with a savepoint; the next run
     * resumes from the saved positions.
     *
     * @param untilIdle null = stop at the end offsets seen at launch
     * @throws AutoCdcException as {@link #run(IngestPlan, List, Options)}
     * @throws Exception when the job fails, or the brokers cannot be reached to list the topics
     */
    public static Summary runKafka(
            IngestPlan plan, KafkaInput kafka, @Nullable Duration untilIdle, Options o)
            throws Exception {
        kafka.validate();
        return run(plan, new KafkaRun(kafka, untilIdle, IngestJob.defaultGroupId(plan)), o);
    }

    /**
     * Runs until the input was read; when the job stops at a record with new columns under {@code
     * on-schema-change = add-columns} ({@link SchemaChangeException}), adds the columns to the
     * tables ({@link AddColumns}) and runs again from the last checkpoint with the wider plan
     * ({@link IngestPlanner#withAddedColumns}); the summary is the last run's, with the added
     * columns listed in {@link Summary#addedColumns}.
     */
    private static Summary run(IngestPlan plan, Input input, Options o) throws Exception {
        List<String> added = new ArrayList<>();
        for (int changes = 0; ; changes++) {
            try {
                Summary s = runOnce(plan, input, o);
                s.addedColumns.addAll(added);
                return s;
            } catch (Exception e) {
                Optional<SchemaChangeException> change =
                        ExceptionUtils.findThrowable(e, SchemaChangeException.class);
                if (change.isEmpty() || changes >= MAX_SCHEMA_CHANGES_PER_RUN) {
                    throw e;
                }
                Catalog cat = catalog(plan, o.warehouse).open();
                try {
                    boolean hasState = latestState(checkpointRoot(plan, o)).isPresent();
                    List<String> done = AddColumns.apply(cat, plan, change.get(), hasState);
                    if (done.isEmpty()) {
                        // the tables have the columns already, yet the plan did not take them
                        // (e.g. a field named like a metadata column): running again would loop
                        throw e;
                    }
                    o.out.println(
                            "Schema change at "
                                    + change.get().source()
                                    + (change.get().partition() != null
                                            ? " partition " + change.get().partition()
                                            : "")
                                    + " offset "
                                    + change.get().offset()
                                    + " (on-schema-change: add-columns): "
                                    + String.join("; ", done)
                                    + ". Resuming from the last checkpoint with the new columns.");
                    added.addAll(done);
                } finally {
                    if (cat instanceof Closeable) {
                        ((Closeable) cat).close();
                    }
                }
            }
        }
    }

    /**
     * A bound on add-columns restarts of one launch, against a loop on a record that keeps failing.
     */
    static final int MAX_SCHEMA_CHANGES_PER_RUN = 100;

    private static Summary runOnce(IngestPlan plan, Input input, Options o) throws Exception {
        long t0 = System.nanoTime();
        Summary summary = new Summary();
        CatalogSettings catalog = catalog(plan, o.warehouse);
        Path ckRoot = checkpointRoot(plan, o);
        Catalog cat = catalog.open();
        LocalJobState state =
                LocalJobState.lock(
                        ckRoot.resolveSibling(ckRoot.getFileName() + ".state"), plan.config.name);
        try {
            if (o.fromScratch) {
                for (IngestPlan.Flow f : plan.flows) {
                    StreamingTables.dropIfExists(cat, f.target);
                }
                deleteRecursively(ckRoot);
                state.clear();
            }
            Optional<Path> restore = latestState(ckRoot);
            List<String> removedFlows =
                    restore.isPresent() ? state.checkDefinitions(plan) : List.of();
            for (String removed : removedFlows) {
                o.out.println(
                        "WARNING: flow '"
                                + removed
                                + "' is no longer defined; its saved state is dropped"
                                + " (its table is left as it is).");
            }
            if (restore.isEmpty()) {
                for (IngestPlan.Flow f : plan.flows) {
                    if (cat.tableExists(f.target)) {
                        StreamingTables.checkStartWithoutState(
                                cat.loadTable(f.target),
                                f.target.toString(),
                                "no checkpoint or savepoint of '"
                                        + plan.config.name
                                        + "' exists under "
                                        + ckRoot,
                                "Re-run with --from-scratch to recreate the tables, or restore the"
                                        + " checkpoint folder.");
                    }
                }
            }
            plan = IngestPlanner.withAddedColumns(plan, cat);
            ClusterIngest.ensureTables(cat, plan);

            boolean work = input.prepare(plan, ckRoot, restore, state, o);
            state.saveDefinitions(plan);
            if (!work) {
                summary.nothingToDo = true;
                input.nothingToDo(state);
                summarize(cat, plan, summary, o.out, restore.orElse(null));
                return summary;
            }
            o.out.println(
                    "Ingesting "
                            + input.describe()
                            + " into "
                            + plan.flows.size()
                            + " table(s)"
                            + (restore.isPresent()
                                    ? ", resuming from " + restore.get()
                                    : ", starting without state"));

            Configuration conf = flinkConfiguration(plan, ckRoot, restore.orElse(null));
            if (!removedFlows.isEmpty()) {
                conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
            }
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(plan.config.parallelism);
            input.build(env, plan, catalog, ckRoot);
            LocalMetrics.reset();
            JobClient job = env.executeAsync("changeflow ingest " + plan.config.name);
            try {
                watch(job, input, ckRoot, summary, o);
            } catch (Exception | Error e) {
                cancelQuietly(job, e);
                throw e;
            }
            Path savepoint = Path.of(URI.create(summary.savepoint));
            input.finished(ckRoot, savepoint, state);
            // the job finished after its savepoint (a stop waits for the savepoint's commits): a
            // later
            // run with nothing new may trust this state instead of restoring it
            state.markCommitted(savepoint);
            summary.records = LocalMetrics.sum("recordsIn");
            summary.quarantined = LocalMetrics.sum("quarantined");
            summary.applied = LocalMetrics.sum("applied");
            summary.late = LocalMetrics.sum("late");
            summary.seconds = (System.nanoTime() - t0) / 1e9;
            o.out.printf(
                    "Done in %.1f s: %,d records (%,.0f/s while running), applied %,d, late %,d, quarantined %,d. State saved in %s%n",
                    summary.seconds,
                    summary.records,
                    summary.records / Math.max(summary.runSeconds, 1e-9),
                    summary.applied,
                    summary.late,
                    summary.quarantined,
                    summary.savepoint);
            summarize(cat, plan, summary, o.out, Path.of(URI.create(summary.savepoint)));
        } finally {
            state.close();
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
        }
        return summary;
    }

    /** What differs between inputs in a local run: what is new, the reader, the end condition. */
    private interface Input {
        /** Decides what this run reads; false = nothing new (a message was printed). */
        boolean prepare(
                IngestPlan plan,
                Path ckRoot,
                Optional<Path> restore,
                LocalJobState state,
                Options o)
                throws Exception;

        /** "3 file(s)", "topics [...] (8 partitions)". */
        String describe();

        void build(
                StreamExecutionEnvironment env,
                IngestPlan plan,
                CatalogSettings catalog,
                Path ckRoot);

        /** Whether everything this run set out to read was read (polled from the launcher). */
        boolean done();

        /** The input's part of a progress line, e.g. {@code files 0/1}. */
        String progress();

        default void nothingToDo(LocalJobState state) throws IOException {}

        default void finished(Path ckRoot, Path savepoint, LocalJobState state)
                throws IOException {}
    }

    /** Files: each file read once, identified by its path (see the README). */
    private static final class FileInput implements Input {
        private final List<Path> inputs;
        private List<String> files;
        private List<String> fresh;
        private Map<String, String> seen;
        private Map<String, String> fingerprints;

        FileInput(List<Path> inputs) {
            this.inputs = inputs;
        }

        @Override
        public boolean prepare(
                IngestPlan plan,
                Path ckRoot,
                Optional<Path> restore,
                LocalJobState state,
                Options o)
                throws IOException {
            Set<String> done = new LinkedHashSet<>();
            if (restore.isPresent()) {
                done.addAll(
                        FileProgressFunction.doneAt(
                                ckRoot.resolve(FILES_DONE),
                                restore.get(),
                                checkpointId(restore.get())));
            }
            files = listFiles(inputs);
            seen = state.seenFiles();
            fingerprints = LocalJobState.fingerprints(files);
            LocalJobState.warnChanged(seen, fingerprints, o.out);
            fresh = files.stream().filter(f -> !done.contains(f)).collect(Collectors.toList());
            if (fresh.isEmpty()) {
                if (restore.isPresent() && !state.committed(restore.get())) {
                    // the files were read, but the run that read them was stopped before it
                    // finished: the
                    // state may hold Iceberg files that were never committed; restoring it commits
                    // them
                    o.out.println(
                            "No new input file, but the last run was stopped before it finished: resuming its state"
                                    + " to commit what it had read.");
                    return true;
                }
                o.out.println(
                        files.isEmpty()
                                ? "Nothing to ingest: no input files under " + inputs + "."
                                : "Nothing new to ingest: all "
                                        + files.size()
                                        + " input file(s) were read by an earlier run.");
                return false;
            }
            return true;
        }

        @Override
        public String describe() {
            return fresh.size() + " file(s)";
        }

        @Override
        public void build(
                StreamExecutionEnvironment env,
                IngestPlan plan,
                CatalogSettings catalog,
                Path ckRoot) {
            IngestJob.build(
                    env, plan, catalog, inputs, Duration.ofMillis(500), ckRoot.resolve(FILES_DONE));
        }

        @Override
        public boolean done() {
            return LocalMetrics.sum(FileProgressFunction.METRIC) >= fresh.size();
        }

        @Override
        public String progress() {
            return "files " + LocalMetrics.sum(FileProgressFunction.METRIC) + "/" + fresh.size();
        }

        @Override
        public void nothingToDo(LocalJobState state) throws IOException {
            state.saveSeenFiles(seen);
        }

        @Override
        public void finished(Path ckRoot, Path savepoint, LocalJobState state) throws IOException {
            for (String f :
                    FileProgressFunction.doneAt(
                            ckRoot.resolve(FILES_DONE), savepoint, checkpointId(savepoint))) {
                if (fingerprints.containsKey(f) && !seen.containsKey(f) || fresh.contains(f)) {
                    seen.put(f, fingerprints.get(f));
                }
            }
            seen.values().removeIf(Objects::isNull);
            state.saveSeenFiles(seen);
        }
    }

    /** Kafka: ends at the end offsets seen at launch, or after an idle period. */
    private static final class KafkaRun implements Input {
        private final KafkaInput kafka;
        @Nullable private final Duration untilIdle;
        private final String defaultGroupId;
        private KafkaOffsets.Snapshot offsets;
        private long lastRecords = -1;
        private long lastChange;

        KafkaRun(KafkaInput kafka, @Nullable Duration untilIdle, String defaultGroupId) {
            this.kafka = kafka;
            this.untilIdle = untilIdle;
            this.defaultGroupId = defaultGroupId;
        }

        @Override
        public boolean prepare(
                IngestPlan plan,
                Path ckRoot,
                Optional<Path> restore,
                LocalJobState state,
                Options o) {
            offsets =
                    KafkaOffsets.fetch(
                            kafka, kafka.groupId != null ? kafka.groupId : defaultGroupId);
            if (offsets.endOffsets.isEmpty()) {
                o.out.println(
                        "WARNING: no partition of "
                                + (kafka.topicPattern != null
                                        ? "pattern " + kafka.topicPattern
                                        : "topics " + kafka.topics)
                                + " exists yet on "
                                + kafka.bootstrapServers);
            }
            return true;
        }

        @Override
        public String describe() {
            return "Kafka "
                    + (kafka.topicPattern != null
                            ? "pattern " + kafka.topicPattern
                            : "topics " + kafka.topics)
                    + " ("
                    + offsets.endOffsets.size()
                    + " partition(s), "
                    + (untilIdle != null
                            ? "until idle for " + untilIdle.toMillis() + " ms"
                            : "up to the end offsets at launch")
                    + ")";
        }

        @Override
        public void build(
                StreamExecutionEnvironment env,
                IngestPlan plan,
                CatalogSettings catalog,
                Path ckRoot) {
            IngestJob.buildKafka(
                    env,
                    plan,
                    catalog,
                    kafka,
                    new KafkaProgressFunction(offsets.endOffsets, offsets.startOffsets));
        }

        @Override
        public boolean done() {
            if (untilIdle != null) {
                long records = LocalMetrics.sum("recordsIn");
                long now = System.nanoTime();
                if (records != lastRecords
                        || !LocalMetrics.registered(KafkaProgressFunction.PENDING_METRIC)) {
                    lastRecords = records;
                    lastChange = now;
                    return false;
                }
                return now - lastChange >= untilIdle.toNanos();
            }
            return LocalMetrics.registered(KafkaProgressFunction.PENDING_METRIC)
                    && LocalMetrics.sum(KafkaProgressFunction.PENDING_METRIC) == 0;
        }

        @Override
        public String progress() {
            if (!LocalMetrics.registered(KafkaProgressFunction.PENDING_METRIC)) {
                return "partitions starting";
            }
            long pending = LocalMetrics.sum(KafkaProgressFunction.PENDING_METRIC);
            return "partitions at end "
                    + (offsets.endOffsets.size() - pending)
                    + "/"
                    + offsets.endOffsets.size();
        }
    }

    /** Prints progress until the input was read, then stops the job with a savepoint. */
    private static void watch(JobClient job, Input input, Path ckRoot, Summary summary, Options o)
            throws Exception {
        long started = System.nanoTime();
        long lastPrint = System.nanoTime();
        long lastRecords = 0;
        while (true) {
            if (throwIfFailed(job)) {
                throw new IllegalStateException("the job finished before its input was read");
            }
            long checkpoints = LocalMetrics.sum("numberOfCompletedCheckpoints");
            boolean stopTest = o.stopAfterCheckpoints > 0 && checkpoints >= o.stopAfterCheckpoints;
            if (input.done() || stopTest) {
                // filed under the job id, as its checkpoints are, so its list of files read is
                // found (FileProgressFunction)
                Path spDir = ckRoot.resolve("savepoints").resolve(job.getJobID().toString());
                summary.savepoint = stopWithSavepoint(job, spDir);
                job.getJobExecutionResult().get();
                summary.runSeconds = (System.nanoTime() - started) / 1e9;
                cleanUpOlderState(ckRoot, Path.of(URI.create(summary.savepoint)));
                return;
            }
            long now = System.nanoTime();
            if (now - lastPrint >= o.progressInterval.toNanos()) {
                long records = LocalMetrics.sum("recordsIn");
                double rate = (records - lastRecords) / ((now - lastPrint) / 1e9);
                o.out.printf(
                        "  %,d records (%,.0f/s) | applied %,d | late %,d | quarantined %,d | %s | checkpoints %d%n",
                        records,
                        rate,
                        LocalMetrics.sum("applied"),
                        LocalMetrics.sum("late"),
                        LocalMetrics.sum("quarantined"),
                        input.progress(),
                        checkpoints);
                lastPrint = now;
                lastRecords = records;
            }
            Thread.sleep(100);
        }
    }

    private static void summarize(
            Catalog cat,
            IngestPlan plan,
            Summary summary,
            PrintStream out,
            @Nullable Path savepoint)
            throws IOException {
        Map<String, Long> stateBytes = savepoint == null ? Map.of() : stateSizes(savepoint);
        out.println("Tables:");
        List<TableIdentifier> ids = new ArrayList<>();
        plan.flows.forEach(f -> ids.add(f.target));
        ids.add(QuarantineTable.identifier(plan.quarantineNamespace));
        for (TableIdentifier id : ids) {
            Table t = cat.loadTable(id);
            long snapshots = 0;
            for (Snapshot ignored : t.snapshots()) {
                snapshots++;
            }
            long rows = TableRows.count(t);
            String state = "";
            for (IngestPlan.Flow f : plan.flows) {
                Long bytes =
                        f.target.equals(id) && f.spec != null
                                ? stateBytes.get("auto-cdc-" + f.name())
                                : null;
                if (bytes != null) {
                    state = String.format("  state %,d bytes", bytes);
                    summary.stateBytes.put(id.toString(), bytes);
                }
            }
            out.println(
                    String.format(
                            "  %-40s %,10d rows  %4d snapshots%s  %s",
                            id, rows, snapshots, state, t.location()));
            summary.tables.add(id.toString());
            summary.rows.put(id.toString(), rows);
        }
    }

    /** Flink configuration of a local run: RocksDB, incremental checkpoints, retained, restore. */
    static Configuration flinkConfiguration(IngestPlan plan, Path ckRoot, @Nullable Path restore) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                ckRoot.resolve("checkpoints").toUri().toString());
        conf.set(
                CheckpointingOptions.SAVEPOINT_DIRECTORY,
                ckRoot.resolve("savepoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, plan.config.checkpointInterval);
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
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

    /**
     * Stops the job with a savepoint; retries while some tasks are still starting (a small input
     * can be read before every task of the job runs, and Flink then declines the savepoint).
     */
    static String stopWithSavepoint(JobClient job, Path dir) throws Exception {
        for (int attempt = 0; ; attempt++) {
            CompletableFuture<String> savepoint =
                    job.stopWithSavepoint(
                            false, dir.toUri().toString(), SavepointFormatType.CANONICAL);
            try {
                while (true) {
                    try {
                        return savepoint.get(1, TimeUnit.SECONDS);
                    } catch (TimeoutException pending) {
                        throwIfFailed(job);
                    }
                }
            } catch (ExecutionException e) {
                // declined: tasks still starting, or the job is failing over / failed
                if (attempt >= 600) {
                    throw e;
                }
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (true) {
                    if (throwIfFailed(job)) {
                        throw new IllegalStateException(
                                "the job finished while it was being stopped", e);
                    }
                    try {
                        if (job.getJobStatus().get(10, TimeUnit.SECONDS) == JobStatus.RUNNING) {
                            break;
                        }
                    } catch (ExecutionException | IllegalStateException gone) {
                        // the MiniCluster is shutting down: the result future tells why
                    }
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
                if (!tasksNotReady(e)) {
                    Thread.sleep(500); // a restarted job: give its tasks a moment to start
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * Throws the job's failure cause when the job has failed or was cancelled; returns true when it
     * finished, false while it runs. (Uses the result future: a local MiniCluster shuts down as
     * soon as its job ends, after which status queries fail.)
     */
    private static boolean throwIfFailed(JobClient job) throws Exception {
        CompletableFuture<JobExecutionResult> result = job.getJobExecutionResult();
        if (!result.isDone()) {
            return false;
        }
        try {
            result.get();
            return true;
        } catch (ExecutionException e) {
            Throwable cause = e;
            while (cause.getCause() != null
                    && cause.getCause() != cause
                    && !(cause instanceof ChangeRecordException)) {
                cause = cause.getCause();
            }
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            throw e;
        }
    }

    private static void cancelQuietly(JobClient job, Throwable reason) {
        try {
            if (!job.getJobExecutionResult().isDone()) {
                job.cancel().get(1, TimeUnit.MINUTES);
            }
        } catch (Exception e) {
            reason.addSuppressed(e);
        }
    }

    private static boolean tasksNotReady(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CheckpointException
                    && ((CheckpointException) t).getCheckpointFailureReason()
                            == CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /**
     * Bytes of state per operator uid in a savepoint or checkpoint (Flink's own accounting of the
     * snapshot: for a canonical savepoint the full serialized keyed state).
     */
    public static Map<String, Long> stateSizes(Path stateDir) throws IOException {
        Map<String, Long> sizes = new TreeMap<>();
        try (DataInputStream in =
                new DataInputStream(Files.newInputStream(stateDir.resolve("_metadata")))) {
            for (OperatorState op :
                    Checkpoints.loadCheckpointMetadata(
                                    in,
                                    LocalIngest.class.getClassLoader(),
                                    stateDir.toUri().toString())
                            .getOperatorStates()) {
                op.getOperatorUid()
                        .ifPresent(uid -> sizes.merge(uid, op.getStateSize(), Long::sum));
            }
        }
        return sizes;
    }

    /** The checkpoint id of a savepoint or checkpoint folder (read from its {@code _metadata}). */
    static long checkpointId(Path stateDir) throws IOException {
        try (DataInputStream in =
                new DataInputStream(Files.newInputStream(stateDir.resolve("_metadata")))) {
            return Checkpoints.loadCheckpointMetadata(
                            in, LocalIngest.class.getClassLoader(), stateDir.toUri().toString())
                    .getCheckpointId();
        }
    }

    /**
     * After a clean stop only the new savepoint is needed: removes retained checkpoints, older
     * savepoints and their file lists (a canonical savepoint is self-contained).
     */
    static void cleanUpOlderState(Path ckRoot, Path savepoint) throws IOException {
        Path keep = savepoint.toAbsolutePath().normalize();
        Path keepList =
                FileProgressFunction.listFile(ckRoot.resolve(FILES_DONE), keep, checkpointId(keep))
                        .toAbsolutePath()
                        .normalize();
        deleteRecursively(ckRoot.resolve("checkpoints"));
        deleteAllBut(ckRoot.resolve("savepoints"), keep);
        deleteAllBut(ckRoot.resolve(FILES_DONE), keepList);
    }

    /**
     * Deletes everything under {@code root} except {@code keep} and the folders that lead to it.
     */
    private static void deleteAllBut(Path root, Path keep) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> s = Files.list(root)) {
            for (Path p : s.collect(Collectors.toList())) {
                Path abs = p.toAbsolutePath().normalize();
                if (abs.equals(keep)) {
                    continue;
                }
                if (keep.startsWith(abs) && Files.isDirectory(abs)) {
                    deleteAllBut(abs, keep);
                } else {
                    deleteRecursively(abs);
                }
            }
        }
    }

    /** Per job id and checkpoint id, the files read completely ({@link FileProgressFunction}). */
    static final String FILES_DONE = "files-done";

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
            } catch (NoSuchFileException | DirectoryNotEmptyException | UncheckedIOException e) {
                if (attempt >= 20) {
                    throw e instanceof UncheckedIOException
                            ? ((UncheckedIOException) e).getCause()
                            : (IOException) e;
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

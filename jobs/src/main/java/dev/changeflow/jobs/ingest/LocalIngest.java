package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.ReplaceUsingOperator;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.SchemaChangeException;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Runs an ingest job on a local MiniCluster (the embedded default): RocksDB with incremental
 * checkpoints under {@code <warehouse>/.changeflow/checkpoints/<name>} (or {@code
 * <stateDir>/<name>}, a local folder or an object store: {@link Options#stateDir}), resuming from
 * the latest retained checkpoint or savepoint there. It reads every input file that is new since
 * the last run — or, from Kafka, every record up to the end offsets seen at launch (or until the
 * input was idle for a while) — then stops with a savepoint (so the AUTO CDC state survives for the
 * next run), prints a progress line every few seconds and a summary per table.
 *
 * <p>K8: a start without state on a non-empty target fails with {@code
 * STATE_MISSING_FOR_EXISTING_TABLE} unless {@link Options#fromScratch} recreates the tables.
 *
 * <p>This class composes a run: the input ({@link LocalFileInput}, {@link LocalKafkaInput}, {@link
 * LocalChangeFeedInput}), the job's checkpoint folder ({@link LocalCheckpoints}, {@link
 * LocalJobState} beside it), the local runner ({@link LocalRunner}: configuration, submit, stop
 * with savepoint) and the summary ({@link SummaryPrinter}).
 */
public final class LocalIngest {
    /** Launcher options of a local run. */
    public static final class Options {
        public Path warehouse = Path.of("warehouse");
        @Nullable public Path checkpointRoot;

        /**
         * Where the job's saved state goes instead of {@code <warehouse>/.changeflow/checkpoints}
         * (and instead of {@link #checkpointRoot}): a local folder, or an object-store location
         * such as {@code s3://bucket/prefix} ({@code run --state-dir}). The job's checkpoints and
         * savepoints go to {@code <stateDir>/<job>} through Flink's file system of that scheme,
         * changeflow's records to {@code <stateDir>/<job>.state} ({@link #stateLocation}). Null:
         * the default.
         */
        @Nullable public org.apache.flink.core.fs.Path stateDir;

        public boolean fromScratch;

        /**
         * {@code REFRESH ... FULL} (docs/semantics.md S1): before the run, empty every target table
         * of the plan in one Iceberg delete commit each (snapshots and change feed kept, unlike
         * {@link #fromScratch}), then drop the job's saved state and file progress, so the run
         * starts a new state generation and rereads every input file.
         */
        public boolean fullRefresh;

        public Duration progressInterval = Duration.ofSeconds(5);
        public PrintStream out = System.out;

        /** The default of {@link #rebuildFix}: {@code --from-scratch}. */
        public static final Function<String, String> FROM_SCRATCH_FIX =
                flow -> "rebuild the table from its source with --from-scratch";

        /**
         * Given a flow's name, the way to rebuild its table that a {@code
         * FLOW_CHANGED_FOR_EXISTING_STATE} error names (K8): {@code --from-scratch} for {@code
         * ingest}; {@code run FILE.sql} names its full refresh.
         */
        public Function<String, String> rebuildFix = FROM_SCRATCH_FIX;

        /**
         * How the command gives a run another job name, ending the error of a run whose job another
         * run holds ({@code ingest}: {@code --name}; {@code run FILE.sql}: {@code SET name = ...}
         * in the file, whose name is the job's otherwise).
         */
        public String otherNameFix = "or give this run another --name";

        /**
         * Given the name of another job whose saved state holds a table this run finds with rows
         * but without state ({@code STATE_MISSING_FOR_EXISTING_TABLE}, K8), how to run as that job
         * and continue from its state ({@code ingest}: {@code --name job}; {@code run}: {@code SET
         * name = job;} in the file).
         */
        public Function<String, String> sameJobFix =
                job -> "re-run with --name " + job + " to continue from its state";

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

        /**
         * Violations per expectation (docs/semantics.md S8) during the run, by {@code
         * <table>.<expectation>} in plan order; flows without expectations add nothing.
         */
        public final Map<String, Long> expectations = new java.util.LinkedHashMap<>();
    }

    private LocalIngest() {}

    /** The local catalog for a warehouse folder, unless the flows file names another one. */
    public static CatalogSettings catalog(IngestPlan plan, Path warehouse) {
        return catalog(plan.config, warehouse);
    }

    /** As {@link #catalog(IngestPlan, Path)}, before a plan exists. */
    public static CatalogSettings catalog(IngestConfig config, Path warehouse) {
        if (config.catalog.isEmpty()) {
            return CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        }
        return CatalogSettings.of("changeflow", config.catalog);
    }

    /**
     * The checkpoint folder of the plan's job: {@code <checkpoint root>/<name>}, the root being
     * {@link Options#checkpointRoot} or {@code <warehouse>/.changeflow/checkpoints}; absolute.
     */
    public static Path checkpointRoot(IngestPlan plan, Options o) {
        return LocalRunner.checkpointRoot(
                o.warehouse,
                o.checkpointRoot,
                plan.config.name == null ? "ingest" : plan.config.name);
    }

    /**
     * The checkpoint folder of a job named {@code job} on any Flink file system: {@code
     * <stateDir>/<job>} when {@link Options#stateDir} is set, else {@link #checkpointRoot} (a local
     * folder).
     */
    public static org.apache.flink.core.fs.Path stateLocation(String job, Options o) {
        if (o.stateDir != null) {
            return new org.apache.flink.core.fs.Path(o.stateDir, job);
        }
        return StateFiles.of(LocalRunner.checkpointRoot(o.warehouse, o.checkpointRoot, job));
    }

    /** {@link #stateLocation(String, Options)} of the plan's job. */
    public static org.apache.flink.core.fs.Path stateLocation(IngestPlan plan, Options o) {
        return stateLocation(plan.config.name == null ? "ingest" : plan.config.name, o);
    }

    /**
     * A state location as messages show it: a local folder as its absolute path, another as its
     * URI.
     */
    public static String display(org.apache.flink.core.fs.Path location) {
        return StateFiles.display(location);
    }

    /**
     * Parses and checks a state location ({@code run --state-dir}): a local folder (made absolute
     * against the working directory) or a URI of a Flink file system ({@code s3://bucket/prefix});
     * for an object store, probes it (one listing) so an unknown scheme or an unreachable store
     * fails before anything is written.
     *
     * @param option the option's name, for the message
     * @throws StateLocationException when no file system serves the scheme (naming the plugin to
     *     add) or the location cannot be reached (with the file system's reason)
     */
    public static org.apache.flink.core.fs.Path stateDir(String written, String option) {
        if (!written.contains("://") || written.startsWith("file:")) {
            // a local folder: created when the job first runs, as the default one
            return StateFiles.of(
                    Path.of(
                            written.startsWith("file:")
                                    ? java.net.URI.create(written).getPath()
                                    : written));
        }
        java.net.URI uri;
        try {
            uri = java.net.URI.create(written);
        } catch (IllegalArgumentException e) {
            throw new StateLocationException(
                    option + " '" + written + "' is not a valid URI: " + e.getMessage(), e);
        }
        if (uri.getAuthority() == null || uri.getAuthority().isEmpty()) {
            throw new StateLocationException(
                    option
                            + " '"
                            + written
                            + "' names no bucket: write it as <scheme>://<bucket>/<prefix>,"
                            + " e.g. s3://lakehouse/changeflow/state",
                    null);
        }
        org.apache.flink.core.fs.Path p = new org.apache.flink.core.fs.Path(written);
        try {
            StateFiles.list(p);
        } catch (dev.changeflow.sources.files.InputFileSystems.NoFileSystemException e) {
            throw new StateLocationException(option + " " + written + ": " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            throw new StateLocationException(
                    option
                            + " "
                            + written
                            + " cannot be reached: "
                            + rootCause(e)
                            + " (check the file system's options, e.g. s3.endpoint, s3.access-key"
                            + " and s3.secret-key, given with SET in the file or in FLINK_CONF_DIR's"
                            + " config.yaml)",
                    e);
        }
        return p;
    }

    private static String rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return t.getClass().getSimpleName()
                + (m == null ? "" : ": " + m.lines().findFirst().orElse(""));
    }

    /**
     * Refuses a resumed run whose reader count ({@code file-readers} or {@code kafka-readers}) goes
     * from 1 to more, or from more to 1, against the count the saved state was taken with: an
     * append-only flow's writer runs at the readers' parallelism, and Iceberg's committer behind
     * it, chained to a writer of parallelism 1 only, no longer restores once that changes (Flink's
     * "Max parallelism mismatch"). Between counts above 1 the state rescales as Flink's does.
     *
     * @throws IllegalArgumentException naming both counts and the way out, when the change crosses
     *     1
     */
    static void checkReaders(IngestPlan plan, boolean kafka, org.apache.flink.core.fs.Path restore)
            throws IOException {
        String option = kafka ? "kafka-readers" : "file-readers";
        int wanted = kafka ? plan.config.kafkaReaders : plan.config.fileReaders;
        java.util.OptionalInt saved =
                LocalCheckpoints.parallelism(restore, kafka ? "kafka-source" : "change-files");
        if (saved.isPresent() && readersChangeRefused(saved.getAsInt(), wanted)) {
            throw new IllegalArgumentException(
                    option
                            + " is "
                            + wanted
                            + ", but the saved state of job '"
                            + plan.config.name
                            + "' ("
                            + StateFiles.display(restore)
                            + ") was taken with "
                            + saved.getAsInt()
                            + ": a job's reader count cannot go from 1 to more or back (Flink"
                            + " cannot restore its Iceberg committers then). Set "
                            + option
                            + " back to "
                            + saved.getAsInt()
                            + ", or re-run with --from-scratch to recreate the tables.");
        }
    }

    /**
     * Whether a reader count may not change from {@code saved} to {@code wanted} ({@link
     * #checkReaders}).
     */
    static boolean readersChangeRefused(int saved, int wanted) {
        return (saved == 1) != (wanted == 1);
    }

    /**
     * A state location ({@code run --state-dir}) that cannot be used: unknown scheme, no bucket,
     * unreachable. The launcher reports it with the code {@code STATE_DIR_UNAVAILABLE}.
     */
    public static final class StateLocationException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        /** The error code the launcher prints. */
        public static final String CODE = "STATE_DIR_UNAVAILABLE";

        StateLocationException(String message, @Nullable Throwable cause) {
            super(CODE + ": " + message, cause);
        }
    }

    /**
     * Runs the plan over {@code inputs} until every file present at start has been read (with
     * {@code include-existing-files} false, a start without saved state reads none of them and
     * takes them as read: docs/semantics.md S2).
     *
     * @throws AutoCdcException STATE_MISSING_FOR_EXISTING_TABLE (K8) or TARGET_SCHEMA_MISMATCH (A1)
     * @throws Exception when the job fails (the cause is Flink's)
     */
    public static Summary run(IngestPlan plan, List<Path> inputs, Options o) throws Exception {
        List<org.apache.flink.core.fs.Path> files = new ArrayList<>();
        for (Path p : inputs) {
            files.add(dev.changeflow.sources.files.InputFileSystems.of(p));
        }
        return runFiles(plan, files, o);
    }

    /**
     * As {@link #run(IngestPlan, List, Options)}, with inputs on any Flink file system (local
     * {@code file:} paths, {@code s3://bucket/prefix/*.json}, ...; docs/semantics.md S2): listed,
     * fingerprinted and read through Flink's file systems, each file once across runs (a local file
     * named by its absolute path, another by its URI). Object stores need their Flink plugin and
     * options ({@link dev.changeflow.sources.files.InputFileSystems#initialize}).
     *
     * @throws dev.changeflow.sources.files.InputFileSystems.NoFileSystemException when no file
     *     system serves an input's scheme
     * @throws AutoCdcException as {@link #run(IngestPlan, List, Options)}
     * @throws Exception when the job fails (the cause is Flink's)
     */
    public static Summary runFiles(
            IngestPlan plan, List<org.apache.flink.core.fs.Path> inputs, Options o)
            throws Exception {
        return run(plan, new LocalFileInput(inputs, plan.config.includeExistingFiles), o);
    }

    /**
     * Runs a plan of {@link IngestPlanner#planChangeFeeds} (docs/semantics.md S7) until it has read
     * every source table's changes up to the version that was its latest at launch, then stops with
     * a savepoint; the next run resumes from the saved change-feed positions.
     *
     * @throws AutoCdcException as {@link #run(IngestPlan, List, Options)}
     * @throws Exception when the job fails (a change-feed error is a {@code CdfException})
     */
    public static Summary runChangeFeeds(IngestPlan plan, Options o) throws Exception {
        return run(plan, new LocalChangeFeedInput(plan, catalog(plan, o.warehouse)), o);
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
        return run(plan, new LocalKafkaInput(kafka, untilIdle, IngestJob.defaultGroupId(plan)), o);
    }

    /**
     * Runs until the input was read; when the job stops at a record with new columns under {@code
     * on-schema-change = add-columns} ({@link SchemaChangeException}), adds the columns to the
     * tables ({@link AddColumns}) and runs again from the last checkpoint with the wider plan
     * ({@link IngestPlanner#withAddedColumns}); the summary is the last run's, with the added
     * columns listed in {@link Summary#addedColumns}.
     *
     * <p>{@link Options#fromScratch} drops the tables and state once, before the first run of the
     * launch; the runs after a schema change resume from the last checkpoint (A7).
     *
     * @throws ChangeRecordException SCHEMA_CHANGED when the same schema change (same record
     *     position, same columns) comes back after the tables were evolved for it: the job made no
     *     progress, and running again would loop
     */
    private static Summary run(IngestPlan plan, LocalInput input, Options o) throws Exception {
        List<String> added = new ArrayList<>();
        SchemaChangeRepeats repeats = new SchemaChangeRepeats();
        for (int changes = 0; ; changes++) {
            try {
                Summary s = runOnce(plan, input, o, o.fromScratch && changes == 0);
                s.addedColumns.addAll(added);
                return s;
            } catch (Exception e) {
                Optional<SchemaChangeException> change =
                        ExceptionUtils.findThrowable(e, SchemaChangeException.class);
                if (change.isEmpty() || changes >= MAX_SCHEMA_CHANGES_PER_RUN) {
                    throw e;
                }
                SchemaChangeException c = change.get();
                try {
                    repeats.check(c, added);
                } catch (ChangeRecordException loop) {
                    loop.addSuppressed(e);
                    throw loop;
                }
                Catalog cat = catalog(plan, o.warehouse).open();
                try {
                    boolean hasState =
                            new LocalCheckpoints(stateLocation(plan, o)).latest().isPresent();
                    // the plan this run used: with the columns earlier changes added, so the
                    // state's row width and the new columns' place are judged against it
                    IngestPlan current = IngestPlanner.withAddedColumns(plan, cat);
                    List<String> done = AddColumns.apply(cat, current, c, hasState);
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

    /**
     * One run of the job.
     *
     * @param fromScratch drop the tables and the saved state first (only the launch's first run)
     */
    private static Summary runOnce(
            IngestPlan plan, LocalInput input, Options o, boolean fromScratch) throws Exception {
        long t0 = System.nanoTime();
        Summary summary = new Summary();
        CatalogSettings catalog = catalog(plan, o.warehouse);
        LocalCheckpoints checkpoints = new LocalCheckpoints(stateLocation(plan, o));
        Catalog cat = catalog.open();
        LocalJobState state = checkpoints.lockJobState(plan.config.name, o.otherNameFix);
        try {
            if (fromScratch) {
                for (IngestPlan.Flow f : plan.flows) {
                    StreamingTables.dropIfExists(cat, f.target);
                }
                checkpoints.delete();
                state.clear();
            } else if (o.fullRefresh) {
                // S1: every table is checked before any is emptied (a schema change a full
                // refresh cannot apply is refused with nothing written)
                for (IngestPlan.Flow f : plan.flows) {
                    ClusterIngest.fullRefreshChanges(cat, f);
                }
                for (IngestPlan.Flow f : plan.flows) {
                    if (cat.tableExists(f.target)) {
                        // one commit that applies the definition's schema and removes every row:
                        // history and change feed stay
                        List<String> changes = ClusterIngest.emptyForFullRefresh(cat, f);
                        o.out.println(
                                "Full refresh: emptied "
                                        + f.target
                                        + (changes.isEmpty()
                                                ? ""
                                                : " and applied the definition's schema ("
                                                        + String.join("; ", changes)
                                                        + ")")
                                        + " (one commit)");
                    }
                }
                checkpoints.delete();
                state.clear();
                o.fullRefresh = false; // once per launch, not again after a schema-change restart
            }
            // S9: a DROP TABLE of any file finds this job's state through the tables it writes
            List<String> written = new ArrayList<>();
            plan.flows.forEach(f -> written.add(f.target.toString()));
            state.saveTables(written);
            Optional<org.apache.flink.core.fs.Path> restore = checkpoints.latest();
            if (restore.isPresent()) {
                checkReaders(plan, input instanceof LocalKafkaInput, restore.get());
            }
            List<String> removedFlows =
                    restore.isPresent() ? state.checkDefinitions(plan, o.rebuildFix) : List.of();
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
                                        + checkpoints.display(),
                                stateOfOtherJob(checkpoints, f.target, o.sameJobFix)
                                        + "Re-run with --from-scratch to recreate the tables, or"
                                        + " restore the checkpoint folder.");
                    }
                }
            }
            plan = IngestPlanner.withAddedColumns(plan, cat);
            ClusterIngest.ensureTables(cat, plan);

            boolean work = input.prepare(checkpoints, restore, state, o.out);
            state.saveDefinitions(plan);
            if (!work) {
                summary.nothingToDo = true;
                input.nothingToDo(state);
                SummaryPrinter.tables(cat, plan, summary, o.out, restore.orElse(null));
                return summary;
            }
            o.out.println(
                    "Ingesting "
                            + input.describe()
                            + " into "
                            + plan.flows.size()
                            + " table(s)"
                            + (restore.isPresent()
                                    ? ", resuming from " + StateFiles.display(restore.get())
                                    : ", starting without state"));

            List<String> maintenanceOff =
                    restore.isPresent()
                            ? maintenanceStateDropped(
                                    plan, LocalCheckpoints.stateSizes(restore.get()).keySet())
                            : List.of();
            for (String flow : maintenanceOff) {
                o.out.println(
                        "Note: the in-job maintenance of flow '"
                                + flow
                                + "' was switched off or runs other tasks now; the saved state of"
                                + " its maintenance graph is dropped and its triggers count afresh.");
            }
            Configuration conf = flinkConfiguration(plan, checkpoints, restore.orElse(null));
            if (!removedFlows.isEmpty() || !maintenanceOff.isEmpty()) {
                conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
            }
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(plan.config.parallelism);
            input.build(env, plan, catalog);
            LocalMetrics.reset();
            LocalRunner.execute(
                    env,
                    "changeflow ingest " + plan.config.name,
                    job -> watch(job, input, checkpoints, summary, o));
            org.apache.flink.core.fs.Path savepoint = savepointPath(summary.savepoint);
            input.finished(savepoint, state);
            // the job finished after its savepoint (a stop waits for the savepoint's commits): a
            // later run with nothing new may trust this state instead of restoring it
            state.markCommitted(savepoint);
            summary.records = LocalMetrics.sum("recordsIn");
            summary.quarantined = LocalMetrics.sum("quarantined");
            summary.applied = applied();
            summary.late = late();
            for (IngestPlan.Flow f : plan.flows) {
                // S8: AUTO CDC and append flows alike (the flow's expectations)
                for (dev.changeflow.operators.Expectation e : f.config.expectations) {
                    long n = 0;
                    for (long v : LocalMetrics.values(e.counterName(), f.name())) {
                        n += v;
                    }
                    summary.expectations.put(f.target.name() + "." + e.name(), n);
                }
            }
            summary.seconds = (System.nanoTime() - t0) / 1e9;
            SummaryPrinter.done(summary, o.out);
            SummaryPrinter.tables(cat, plan, summary, o.out, savepoint);
        } finally {
            state.close();
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
        }
        return summary;
    }

    /**
     * The flows of {@code plan} whose saved in-job maintenance state (operator uids ending in
     * {@code maintenance-<flow>} or {@code maintenance-<flow>@<tasks>}, see {@link
     * JobMaintenance#uidSuffix}) is among {@code restoredUids} but does not belong to the graph the
     * flow's options build now — maintenance switched off, or its task set changed (orphan removal
     * or expiry switched on or off): those operators are no longer in the job, so the restore must
     * leave their state unclaimed (docs/semantics.md M1).
     *
     * @param restoredUids the operator uids of the state the run restores
     * @return flow names, in plan order
     */
    static List<String> maintenanceStateDropped(
            IngestPlan plan, java.util.Set<String> restoredUids) {
        List<String> out = new ArrayList<>();
        for (IngestPlan.Flow f : plan.flows) {
            String base = "maintenance-" + f.name();
            java.util.regex.Pattern saved =
                    java.util.regex.Pattern.compile(
                            ".*" + java.util.regex.Pattern.quote(base) + "(@[a-z]+)?");
            String now = JobMaintenance.uidSuffix(base, f.config.maintenance);
            if (restoredUids.stream()
                    .anyMatch(
                            uid ->
                                    saved.matcher(uid).matches()
                                            && (now == null || !uid.endsWith(now)))) {
                out.add(f.name());
            }
        }
        return out;
    }

    /** Prints progress until the input was read, then stops the job with a savepoint. */
    private static void watch(
            JobClient job,
            LocalInput input,
            LocalCheckpoints checkpoints,
            Summary summary,
            Options o)
            throws Exception {
        long started = System.nanoTime();
        long lastPrint = System.nanoTime();
        long lastRecords = 0;
        while (true) {
            if (LocalRunner.throwIfFailed(job)) {
                throw new IllegalStateException("the job finished before its input was read");
            }
            long completed = LocalMetrics.sum("numberOfCompletedCheckpoints");
            boolean stopTest = o.stopAfterCheckpoints > 0 && completed >= o.stopAfterCheckpoints;
            if (input.done() || stopTest) {
                summary.savepoint =
                        LocalRunner.stopWithSavepoint(
                                job, checkpoints.savepointDir(job.getJobID()));
                LocalRunner.awaitEnd(job);
                summary.runSeconds = (System.nanoTime() - started) / 1e9;
                checkpoints.cleanUpOlderState(savepointPath(summary.savepoint));
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
                        applied(),
                        late(),
                        LocalMetrics.sum("quarantined"),
                        input.progress(),
                        completed);
                lastPrint = now;
                lastRecords = records;
            }
            Thread.sleep(100);
        }
    }

    /**
     * Flink configuration of a local ingest run: the local runner's (RocksDB, incremental
     * checkpoints, restarts), retained checkpoints and savepoints in {@code checkpoints}, restored
     * from {@code restore}, metrics reported to {@link LocalMetrics}.
     */
    static Configuration flinkConfiguration(
            IngestPlan plan,
            LocalCheckpoints checkpoints,
            @Nullable org.apache.flink.core.fs.Path restore) {
        Configuration conf =
                checkpoints.configuration(
                        plan.config.checkpointInterval, plan.config.checkpointTimeout, restore);
        conf.setString(LocalMetrics.CONFIG_KEY, LocalMetrics.Factory.class.getName());
        return conf;
    }

    /**
     * A savepoint as Flink names it (a URI: {@code file:/...}, {@code s3://...}) as a path: a local
     * one as the local folder (exactly as {@link Path#of(URI)} reads it).
     */
    static org.apache.flink.core.fs.Path savepointPath(String savepoint) {
        URI uri = URI.create(savepoint);
        if (uri.getScheme() == null) {
            return StateFiles.of(Path.of(savepoint));
        }
        if (uri.getScheme().equals("file")) {
            return StateFiles.of(Path.of(uri));
        }
        return new org.apache.flink.core.fs.Path(savepoint);
    }

    /**
     * The newest savepoint or retained checkpoint (a folder with {@code _metadata}) under root.
     *
     * @return empty when there is none, or no folder {@code root}
     */
    public static Optional<Path> latestState(Path root) throws IOException {
        return LocalCheckpoints.latest(root);
    }

    /**
     * Bytes of state per operator uid in a savepoint or checkpoint (Flink's own accounting of the
     * snapshot: for a canonical savepoint the full serialized keyed state).
     *
     * @throws IOException when {@code stateDir/_metadata} cannot be read
     */
    public static Map<String, Long> stateSizes(Path stateDir) throws IOException {
        return LocalCheckpoints.stateSizes(stateDir);
    }

    /**
     * The tables whose flows the saved state of the local job with checkpoint folder {@code
     * checkpointRoot} holds, as its last run recorded them beside it (identifiers {@code ns.name},
     * docs/semantics.md S9).
     *
     * @return empty when no run recorded them (state written by an older changeflow)
     * @throws IOException when the record cannot be read
     */
    public static Optional<List<String>> tablesOfState(Path checkpointRoot) throws IOException {
        return LocalJobState.readTables(
                checkpointRoot.resolveSibling(checkpointRoot.getFileName() + ".state"));
    }

    /**
     * K8: when the saved state of another local job (a sibling of {@code checkpointRoot}) records
     * that it writes {@code table} — a pipeline file copied to another name runs as a job of that
     * name, without the original's state — the sentence naming that job and {@code sameJobFix} of
     * it; else the empty string.
     */
    static String stateOfOtherJob(
            LocalCheckpoints checkpoints,
            TableIdentifier table,
            Function<String, String> sameJobFix) {
        // an object store is not searched (a listing of every job's records costs requests)
        return checkpoints.local()
                ? stateOfOtherJob(StateFiles.local(checkpoints.root()), table, sameJobFix)
                : "";
    }

    /** As {@link #stateOfOtherJob(LocalCheckpoints, TableIdentifier, Function)}, local folders. */
    static String stateOfOtherJob(
            Path checkpointRoot, TableIdentifier table, Function<String, String> sameJobFix) {
        Path base = checkpointRoot.toAbsolutePath().normalize().getParent();
        if (base == null || !Files.isDirectory(base)) {
            return "";
        }
        List<String> jobs = new ArrayList<>();
        try (java.util.stream.Stream<Path> s = Files.list(base)) {
            s.filter(Files::isDirectory)
                    .filter(d -> !d.getFileName().toString().endsWith(".state"))
                    .filter(d -> !d.equals(checkpointRoot.toAbsolutePath().normalize()))
                    .sorted()
                    .forEach(
                            d -> {
                                try {
                                    if (tablesOfState(d)
                                            .orElse(List.of())
                                            .contains(table.toString())) {
                                        jobs.add(d.getFileName().toString());
                                    }
                                } catch (IOException e) {
                                    // an unreadable record names no job
                                }
                            });
        } catch (IOException e) {
            return "";
        }
        if (jobs.isEmpty()) {
            return "";
        }
        String job = jobs.get(0);
        return "The saved state of job '"
                + job
                + "' ("
                + base.resolve(job)
                + ") holds this table: "
                + sameJobFix.apply(job)
                + ". ";
    }

    /**
     * Rows applied so far: AUTO CDC's {@code applied} plus the rows REPLACE USING flows applied
     * (S5: a new key, a replacing sequence, an equal sequence's new row).
     */
    static long applied() {
        long n = LocalMetrics.sum("applied");
        for (String c : ReplaceUsingOperator.APPLIED_COUNTERS) {
            n += LocalMetrics.sum(c);
        }
        return n;
    }

    /** Late rows so far: AUTO CDC's and REPLACE USING's (a sequence below the key's). */
    static long late() {
        return LocalMetrics.sum("late") + LocalMetrics.sum(ReplaceUsingOperator.LATE_COUNTER);
    }

    /** Deletes a job's saved state (checkpoints, savepoints, the list of files read). */
    public static void deleteState(Path checkpointRoot) throws IOException {
        new LocalCheckpoints(checkpointRoot).delete();
    }
}

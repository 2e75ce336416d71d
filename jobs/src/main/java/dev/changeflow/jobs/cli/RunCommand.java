package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.ClusterIngest;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.jobs.ingest.LocalSnapshotIngest;
import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlPipeline;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.jobs.sql.SqlStatement;
import dev.changeflow.jobs.sql.TableStatements;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.files.FileGlob;
import dev.changeflow.sources.files.InputFileSystems;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import javax.annotation.Nullable;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow run FILE.sql}: runs a pipeline file of streaming-table statements ({@link
 * SqlPipeline}: {@code CREATE OR REFRESH STREAMING TABLE}, {@code CREATE FLOW ... AS AUTO CDC},
 * {@code APPLY CHANGES INTO}, temporary views, {@code SET}, {@code USE}) exactly as {@code ingest}
 * runs a flows file: one local job over every {@code read_files} path ({@link LocalIngest#run}),
 * over the Kafka subscription of its {@code read_kafka} calls ({@link LocalIngest#runKafka}), or
 * over the change feeds of the tables its {@code STREAM(table)} sources name ({@link
 * LocalIngest#runChangeFeeds}, S7), planned by {@link SqlPipeline#plan(CatalogSettings)} — a
 * bounded refresh that resumes from the saved state and reads only what is new (docs/semantics.md
 * S1, S2). {@code --dry-run} parses, compiles and plans (which may read a sample of the inputs to
 * infer undeclared columns) and prints the plan without writing a table or state.
 *
 * <p>{@code --refresh t1,t2} runs only the flows writing those tables, as a job of its own with its
 * own saved state ({@link SqlPipeline#refreshOnly}); it is what the CronJob of a scheduled table
 * runs (S3). {@code --full-refresh t1,t2} selects the same way, then empties those tables in one
 * Iceberg commit each and drops the job's saved state and file progress before the run ({@link
 * LocalIngest.Options#fullRefresh}, S1); a table with {@code 'pipelines.reset.allowed' = 'false'}
 * is refused ({@code RESET_NOT_ALLOWED}). The file's own {@code REFRESH STREAMING TABLE t [FULL]}
 * statements do the same as those flags, one after the other in file order, when neither flag is
 * given (a flag replaces them). A KEYS / SEQUENCE BY / SCD type change over saved state ({@code
 * FLOW_CHANGED_FOR_EXISTING_STATE}) names the full refresh of the table as the fix.
 *
 * <p>docs/semantics.md A6: the file's AUTO CDC FROM SNAPSHOT flows ({@link
 * SqlPipeline#snapshotTables}) run as a job of their own, {@code <name>-snapshots} ({@link
 * LocalSnapshotIngest}), after the ingest job and before the REPLACE WHERE refreshes, so a snapshot
 * table may read the versions of a table the ingest job writes; their folders are checked before
 * anything runs (a table's versions when their turn comes, and by {@code --dry-run}). A REFRESH
 * statement or {@code --refresh} naming snapshot tables runs the snapshot job of those tables;
 * {@code --full-refresh} of one is refused.
 *
 * <p>docs/semantics.md S9: each refresh is recorded, at its end and also when it fails, in the
 * properties of every table it writes ({@link TableStatements.RefreshRecord}); the file's {@code
 * DROP TABLE} statements are all checked, then run before its refreshes (not with {@code --refresh}
 * / {@code --full-refresh}, which name what runs: a scheduled table's CronJob never drops) ({@link
 * TableStatements#planDrops}, {@link TableStatements#drop}; {@code --dry-run} prints them); its
 * {@code DESCRIBE [TABLE] [EXTENDED]} statements print after them ({@link
 * TableStatements#describe}). A file of DROP / DESCRIBE statements alone runs no job.
 *
 * <p>docs/semantics.md S3: {@code --state-dir DIR|URI} keeps the jobs' saved state (checkpoints,
 * savepoints, changeflow's records) in a local folder or on an object store ({@code
 * s3://bucket/prefix}, through Flink's file-system plugin and the file's {@code SET s3.*} options)
 * instead of {@code <warehouse>/.changeflow/checkpoints} ({@link LocalIngest.Options#stateDir}); it
 * is probed before anything runs ({@link LocalIngest#stateDir}: {@code STATE_DIR_UNAVAILABLE}).
 * There is no lock file on an object store: the CronJob's {@code concurrencyPolicy: Forbid} keeps
 * one run per job. The file's DROP statements are refused with an object-store {@code --state-dir}
 * ({@code INVALID_OPTION}): the state of a dropped table is searched in local folders only.
 *
 * <p>Stopped during a refresh (Ctrl-C, SIGTERM), {@code run} prints one line on standard error from
 * a shutdown hook ({@link #interruptedMessage}): the tables keep what the last completed checkpoint
 * committed and the job's state folder; running the same command resumes from it.
 *
 * <p>{@code --cluster} runs the file's streaming tables without SCHEDULE until stopped on the Flink
 * cluster that executes the program — the job of the FlinkDeployment that {@code deploy --print
 * FILE.sql} renders — over the file's {@code read_kafka} subscription, by the same {@link
 * ClusterIngest} that runs {@code ingest --cluster} (docs/semantics.md S3; {@link #runOnCluster}).
 * Outside a cluster it checks the file and then refuses with {@code INVALID_OPTION} instead of
 * running a local MiniCluster forever.
 *
 * <p>A file with an error fails before anything is written, with a {@link SqlException} naming
 * {@code file:line:column} and its code (exit code 2); a missing {@code read_files} path fails with
 * {@code SOURCE_NOT_FOUND}.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description =
                "Run a pipeline of streaming-table statements (CREATE STREAMING TABLE ... AUTO CDC) from a .sql file.")
public final class RunCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE.sql", description = "The pipeline file.")
    Path file;

    @Mixin CliOptions.LocalRun local;

    @Option(
            names = "--refresh",
            split = ",",
            paramLabel = "TABLES",
            description =
                    "Refresh only these streaming tables (t1,t2): a job of their flows, with its"
                            + " own saved state (what a scheduled table's CronJob runs).")
    List<String> refresh;

    @Option(
            names = "--full-refresh",
            split = ",",
            paramLabel = "TABLES",
            description =
                    "Refresh only these tables, from scratch: empty each in one Iceberg commit"
                            + " (history kept), drop their job's saved state and reread every file.")
    List<String> fullRefresh;

    @Option(
            names = "--state-dir",
            paramLabel = "DIR|URI",
            description =
                    "Where the jobs' saved state goes (checkpoints, savepoints, changeflow's records),"
                            + " instead of <warehouse>/.changeflow/checkpoints: a local folder or an"
                            + " object-store URI such as s3://bucket/prefix (Flink's file system"
                            + " plugin, options from SET s3.* in the file or FLINK_CONF_DIR). What a"
                            + " scheduled table's CronJob passes.")
    String stateDir;

    /** {@link #stateDir} parsed and probed, or null for the default under the warehouse. */
    @Nullable private org.apache.flink.core.fs.Path stateLocation;

    @Option(
            names = "--dry-run",
            description = "Parse, validate and print the plan; read no change and write nothing.")
    boolean dryRun;

    @Option(
            names = "--cluster",
            description =
                    "Run the file's streaming tables without SCHEDULE over its read_kafka"
                            + " subscription until stopped, on the Flink cluster that executes"
                            + " this program (what the FlinkDeployment of deploy --print FILE.sql"
                            + " runs; or flink run). Refused outside a cluster.")
    boolean cluster;

    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

    /** Where the plan and the run's progress go (a test may replace it). */
    PrintStream out = System.out;

    /**
     * One refresh of a run: the flows it runs and whether it empties their tables first; or the
     * refresh of a FLOW REPLACE WHERE table ({@code replace} set, S4) with its predicate override.
     */
    private record Step(
            SqlPipeline pipeline,
            boolean full,
            @Nullable SqlPipeline.ReplaceWhereTable replace,
            @Nullable String where,
            @Nullable SqlPosition wherePosition,
            @Nullable List<SqlPipeline.SnapshotTable> snapshots) {
        Step(SqlPipeline pipeline, boolean full) {
            this(pipeline, full, null, null, null, null);
        }

        static Step replace(
                SqlPipeline pipeline,
                SqlPipeline.ReplaceWhereTable table,
                @Nullable String where,
                @Nullable SqlPosition wherePosition) {
            return new Step(pipeline, false, table, where, wherePosition, null);
        }

        /** The job of these AUTO CDC FROM SNAPSHOT tables (A6). */
        static Step snapshots(SqlPipeline pipeline, List<SqlPipeline.SnapshotTable> tables) {
            return new Step(pipeline, false, null, null, null, List.copyOf(tables));
        }
    }

    /**
     * S2: a {@code read_files} path (a glob pattern: its base folder) exists, on its Flink file
     * system (local, {@code s3://}, ...).
     *
     * @throws SqlException {@code SOURCE_NOT_FOUND} when it does not exist, cannot be reached, or
     *     no file system (plugin) serves its scheme (the message names the scheme and the plugin)
     */
    static void checkExists(SqlPipeline.Input in) {
        org.apache.flink.core.fs.Path base = FileGlob.base(in.file());
        String baseName = FileGlob.key(base);
        String where =
                "read_files path "
                        + in.name()
                        + (baseName.equals(in.name()) ? "" : ": its base folder " + baseName);
        boolean exists;
        try {
            exists = InputFileSystems.exists(base);
        } catch (InputFileSystems.NoFileSystemException e) {
            throw new SqlException(
                    SqlException.Code.SOURCE_NOT_FOUND,
                    in.position(),
                    "read_files path " + in.name() + ": " + e.getMessage());
        } catch (java.io.IOException | RuntimeException e) {
            throw new SqlException(
                    SqlException.Code.SOURCE_NOT_FOUND,
                    in.position(),
                    where + " cannot be reached: " + e.getMessage());
        }
        if (!exists) {
            throw new SqlException(
                    SqlException.Code.SOURCE_NOT_FOUND,
                    in.position(),
                    where
                            + " does not exist"
                            + (in.local()
                                    ? " (a relative path is resolved against the folder of the"
                                            + " pipeline file)"
                                    : ""));
        }
    }

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(file)) {
            throw CliErrors.fileNotFound("pipeline file", file, "");
        }
        SqlPipeline pipeline = SqlPipeline.read(file);
        if (cluster) {
            runOnCluster(pipeline);
            return 0;
        }
        if (refresh != null && fullRefresh != null) {
            throw new IllegalArgumentException(
                    "give --refresh or --full-refresh, not both: a full refresh resets the saved"
                            + " state of its whole job");
        }
        if ((refresh != null || fullRefresh != null) && local.fromScratch) {
            throw new IllegalArgumentException(
                    "give --from-scratch or "
                            + (refresh != null ? "--refresh" : "--full-refresh")
                            + ", not both: --from-scratch drops every table of the file and all"
                            + " saved state; to rebuild only some tables, give --full-refresh with"
                            + " their names");
        }
        List<Step> steps = new ArrayList<>();
        if (refresh != null) {
            // S4: a REPLACE WHERE table is refreshed by a batch job of its own
            List<String> ingest = new ArrayList<>();
            List<SqlPipeline.SnapshotTable> snapshots = new ArrayList<>();
            for (String name : refresh) {
                SqlPipeline.ReplaceWhereTable rw = pipeline.replaceWhere(name);
                SqlPipeline.SnapshotTable st = pipeline.snapshotTable(name);
                if (rw != null) {
                    steps.add(Step.replace(pipeline, rw, null, null));
                } else if (st != null) {
                    snapshots.add(st);
                } else {
                    ingest.add(name);
                }
            }
            // A6: the snapshot job after the ingest job, before the REPLACE WHERE refreshes
            if (!snapshots.isEmpty()) {
                steps.add(0, Step.snapshots(pipeline, snapshots));
            }
            if (!ingest.isEmpty()) {
                steps.add(0, new Step(pipeline.refreshOnly(ingest), false));
            }
        } else if (fullRefresh != null) {
            for (String name : fullRefresh) {
                if (pipeline.snapshotTable(name) != null) {
                    throw new IllegalArgumentException(
                            "--full-refresh "
                                    + name
                                    + ": a full refresh of an AUTO CDC FROM SNAPSHOT table is not"
                                    + " supported yet (A6); refresh it with --refresh "
                                    + name
                                    + ", or drop it (DROP TABLE "
                                    + name
                                    + "; in the file) and run the file again to rebuild it");
                }
            }
            steps.add(new Step(pipeline.refreshOnly(fullRefresh, "--full-refresh"), true));
        } else {
            for (SqlStatement.Refresh r : pipeline.refreshes()) {
                SqlPipeline.ReplaceWhereTable rw = pipeline.replaceWhere(r.tables().get(0));
                if (rw != null) {
                    // checked when the file was compiled: it names this table alone (S4)
                    steps.add(Step.replace(pipeline, rw, r.where(), r.wherePosition()));
                    continue;
                }
                // checked when the file was compiled: the same job as --refresh / --full-refresh
                List<String> ingest = new ArrayList<>();
                List<SqlPipeline.SnapshotTable> snapshots = new ArrayList<>();
                for (String t : r.tables()) {
                    SqlPipeline.SnapshotTable st = pipeline.snapshotTable(t);
                    if (st != null) {
                        snapshots.add(st);
                    } else {
                        ingest.add(t);
                    }
                }
                if (!ingest.isEmpty()) {
                    steps.add(
                            new Step(
                                    pipeline.refreshOnly(ingest, "REFRESH STREAMING TABLE"),
                                    r.full()));
                }
                if (!snapshots.isEmpty()) {
                    steps.add(Step.snapshots(pipeline, snapshots)); // A6: its job only
                }
            }
            if (steps.isEmpty()) {
                if (!pipeline.config().flows.isEmpty()) {
                    steps.add(new Step(pipeline, false));
                }
                if (!pipeline.snapshotTables().isEmpty()) {
                    // A6: after the ingest job, so a snapshot table may read a table it writes
                    steps.add(Step.snapshots(pipeline, pipeline.snapshotTables()));
                }
                for (SqlPipeline.ReplaceWhereTable rw : pipeline.replaceWheres()) {
                    steps.add(Step.replace(pipeline, rw, null, null));
                }
            }
        }
        if ((refresh != null || fullRefresh != null) && !pipeline.refreshes().isEmpty()) {
            out.println(
                    "note: the file's REFRESH statements are not run: "
                            + (refresh != null ? "--refresh" : "--full-refresh")
                            + " names the tables");
        }
        boolean flagged = flagged(pipeline);
        if (flagged && !pipeline.drops().isEmpty()) {
            // a scheduled table's CronJob runs --refresh t: it must never drop a table
            out.println(
                    "note: the file's DROP TABLE statements are not run: "
                            + (refresh != null ? "--refresh" : "--full-refresh")
                            + " names what runs");
        }
        for (String w : pipeline.warnings()) {
            out.println("warning: " + w);
        }
        // S2: object-store read_files paths (s3://, ...) need Flink's file-system plugins and
        // their options (SET s3.endpoint = ..., or FLINK_CONF_DIR's config.yaml)
        boolean remoteState =
                stateDir != null && stateDir.contains("://") && !stateDir.startsWith("file:");
        if (!pipeline.config().fileSystem.isEmpty()
                || pipeline.inputs().stream().anyMatch(in -> !in.local())
                || remoteState) {
            InputFileSystems.initialize(pipeline.config().fileSystem);
        }
        if (stateDir != null) {
            // an unknown scheme or an unreachable store fails here, before anything is written
            stateLocation = LocalIngest.stateDir(stateDir, "--state-dir");
            if (remoteState && !flagged(pipeline) && !pipeline.drops().isEmpty()) {
                throw CliErrors.invalidOption(
                        "--state-dir "
                                + stateDir
                                + ": the file's DROP TABLE statements would delete the saved state"
                                + " of the tables they drop, which is searched in local folders"
                                + " only: run the DROP statements without --state-dir on an"
                                + " object store, or with --refresh / --full-refresh (which run no"
                                + " DROP)");
            }
        }
        // every step is checked and planned before the first one runs: a file that fails
        // validation writes nothing
        List<IngestPlan> plans = new ArrayList<>();
        // tables an earlier step of this run empties and rebuilds under the definition (S1)
        java.util.Set<TableIdentifier> fullyRefreshed = new java.util.HashSet<>();
        for (Step step : steps) {
            SqlPipeline p = step.pipeline();
            if (step.replace() != null) {
                // S4: the predicates now (a syntax error must not wait for the ingest job to
                // commit); the query is planned when its turn comes: it may read tables that an
                // earlier step of the file writes
                if (!dryRun) {
                    dev.changeflow.jobs.flow.ReplaceWhereRefresh.checkPredicates(
                            step.replace().definition(),
                            LocalIngest.catalog(p.config(), local.warehouse),
                            step.where(),
                            step.wherePosition());
                }
                plans.add(null);
                continue;
            }
            if (step.snapshots() != null) {
                // A6: a folder is checked now; the versions of a table, which an earlier step may
                // write, when its turn comes (and by --dry-run now)
                for (SqlPipeline.SnapshotTable t : step.snapshots()) {
                    if (t.flow().fromSnapshot != null || dryRun) {
                        p.checkSnapshot(t, LocalIngest.catalog(p.config(), local.warehouse));
                    }
                }
                plans.add(null);
                continue;
            }
            if (step.full()) {
                step.pipeline().checkFullRefreshAllowed();
            }
            for (SqlPipeline.Input in : step.pipeline().inputs()) {
                checkExists(in);
            }
            try {
                plans.add(p.plan(LocalIngest.catalog(p.config(), local.warehouse)));
            } catch (SqlException e) {
                // the change feed of a table an earlier REFRESH of the file creates: planned when
                // its turn comes
                if (e.code() != SqlException.Code.UNKNOWN_SOURCE || plans.isEmpty() || dryRun) {
                    throw e;
                }
                plans.add(null);
            }
            IngestPlan planned = plans.get(plans.size() - 1);
            if (planned != null
                    && !step.full()
                    && !local.fromScratch
                    && (flagged || pipeline.drops().isEmpty())) {
                // A1: an existing table partitioned otherwise than the definition says is
                // refused now, before anything runs (and by --dry-run), as the run would
                Catalog cat = LocalIngest.catalog(p.config(), local.warehouse).open();
                try {
                    for (IngestPlan.Flow flow : planned.flows) {
                        if (!fullyRefreshed.contains(flow.target)) {
                            try {
                                ClusterIngest.checkExistingPartitioning(cat, flow);
                            } catch (AutoCdcException e) {
                                throw placed(e, p, planned);
                            }
                        }
                    }
                } finally {
                    if (cat instanceof java.io.Closeable c) {
                        c.close();
                    }
                }
            }
            if (step.full() && planned != null) {
                planned.flows.forEach(flow -> fullyRefreshed.add(flow.target));
                // S1: a full refresh applies the definition's schema to each table; what it
                // cannot apply is refused here, before anything is emptied (and by --dry-run)
                Catalog cat = LocalIngest.catalog(p.config(), local.warehouse).open();
                try {
                    for (IngestPlan.Flow flow : planned.flows) {
                        List<String> changes;
                        try {
                            changes = ClusterIngest.fullRefreshChanges(cat, flow);
                        } catch (AutoCdcException e) {
                            throw placed(e, p, planned);
                        }
                        if (dryRun && !changes.isEmpty()) {
                            out.println(
                                    "Full refresh of "
                                            + flow.target
                                            + " would apply the definition's schema: "
                                            + String.join("; ", changes));
                        }
                    }
                } finally {
                    if (cat instanceof java.io.Closeable c) {
                        c.close();
                    }
                }
            }
        }
        // S9: DROP TABLE statements are checked (all of them) and run before the refreshes
        Map<String, TableIdentifier> targets = targets(pipeline, steps, plans);
        String namespace =
                pipeline.config().namespace != null
                        ? pipeline.config().namespace
                        : IngestPlanner.DEFAULT_NAMESPACE;
        if (!pipeline.drops().isEmpty() && !flagged) {
            useCatalog(
                    pipeline,
                    cat -> {
                        List<TableStatements.DropPlan> drops =
                                TableStatements.planDrops(
                                        pipeline,
                                        targets,
                                        namespace,
                                        cat,
                                        stateLocation != null
                                                ? java.nio.file.Path.of(
                                                        stateLocation.toUri().getPath())
                                                : LocalRunner.checkpointRoot(
                                                                local.warehouse, null, "x")
                                                        .getParent());
                        if (dryRun) {
                            for (TableStatements.DropPlan d : drops) {
                                out.println(
                                        "Would DROP TABLE "
                                                + d.statement().table()
                                                + (d.table() == null
                                                        ? " (no such table)"
                                                        : " (" + d.table() + ")")
                                                + (d.stateFolders().isEmpty()
                                                        ? ""
                                                        : " and the saved state in "
                                                                + d.stateFolders()));
                            }
                        } else {
                            TableStatements.drop(drops, cat).forEach(out::println);
                        }
                    });
        }
        // Ctrl-C during a refresh: one line saying what was kept and how to resume
        Thread interrupted =
                new Thread(
                        () -> {
                            String running = runningState;
                            if (running != null) {
                                System.err.println(interruptedMessage(file, running));
                            }
                        },
                        "changeflow-run-interrupted");
        if (!dryRun) {
            Runtime.getRuntime().addShutdownHook(interrupted);
        }
        try {
            runSteps(pipeline, steps, plans);
        } finally {
            runningState = null;
            if (!dryRun) {
                try {
                    Runtime.getRuntime().removeShutdownHook(interrupted);
                } catch (IllegalStateException shuttingDown) {
                    // the JVM is exiting: the hook runs or has run
                }
            }
        }
        if (dryRun) {
            out.println("Dry run: no table or state was written.");
        }
        // S9: DESCRIBE statements print after the refreshes
        if (!pipeline.describes().isEmpty()) {
            Map<String, TableIdentifier> all = targets(pipeline, steps, plans);
            useCatalog(
                    pipeline,
                    cat -> {
                        for (SqlStatement.Describe d : pipeline.describes()) {
                            TableStatements.describe(
                                            pipeline,
                                            d,
                                            cat,
                                            TableStatements.identifier(d.table(), all, namespace))
                                    .forEach(out::println);
                        }
                    });
        }
        return 0;
    }

    /**
     * {@code run --cluster FILE.sql} (docs/semantics.md S3): the continuous job of the file ({@link
     * SqlPipeline#continuous}: the flows of its streaming tables without SCHEDULE, over its {@code
     * read_kafka} subscription) on the Flink cluster that executes this program, until stopped, by
     * {@link ClusterIngest#run} as {@code ingest --cluster} runs a flows file: the tables are
     * created (or checked, A1) in the file's catalog, checkpointing, state backend and restarts
     * come from the cluster's configuration, state recovery is Flink's (HA, savepoints). The file's
     * REFRESH, DROP TABLE and DESCRIBE statements are not run (a note says so), nor its scheduled
     * tables (their CronJobs refresh them). The file is checked before the cluster: outside one,
     * the command validates the file, then refuses to run.
     *
     * @throws SqlException an error of the file, or {@code INVALID_SCHEDULE} when every table has a
     *     schedule or a table without one cannot run continuously ({@link SqlPipeline#continuous})
     * @throws IllegalArgumentException {@code INVALID_OPTION} with {@code --refresh}, {@code
     *     --full-refresh}, {@code --dry-run}, {@code --warehouse}, {@code --from-scratch} or {@code
     *     --state-dir}, when the file names no catalog, or outside a cluster ({@link
     *     ClusterIngest#clusterEnvironment})
     */
    private void runOnCluster(SqlPipeline pipeline) throws Exception {
        List<String> localOnly = new ArrayList<>();
        if (refresh != null) {
            localOnly.add("--refresh");
        }
        if (fullRefresh != null) {
            localOnly.add("--full-refresh");
        }
        if (dryRun) {
            localOnly.add("--dry-run");
        }
        if (spec != null
                && spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption("--warehouse")) {
            localOnly.add("--warehouse");
        }
        if (local.fromScratch) {
            localOnly.add("--from-scratch");
        }
        if (stateDir != null) {
            localOnly.add("--state-dir");
        }
        if (!localOnly.isEmpty()) {
            throw CliErrors.invalidOption(
                    String.join(", ", localOnly)
                            + (localOnly.size() == 1 ? " is an option" : " are options")
                            + " of a local run: --cluster runs the tables without SCHEDULE until"
                            + " stopped, with the cluster's state (savepoints) and the file's"
                            + " catalog");
        }
        String command = "run --cluster " + file;
        SqlPipeline continuous = pipeline.continuous();
        if (continuous == null) {
            throw new SqlException(
                    SqlException.Code.INVALID_SCHEDULE,
                    pipeline.declaration(pipeline.tables().get(0)).position(),
                    "every streaming table of the file has a SCHEDULE, so "
                            + command
                            + " has nothing to run: their CronJobs (deploy --print "
                            + file
                            + ") refresh them, or run "
                            + file
                            + " --refresh t");
        }
        pipeline.requireCatalog(file.toString(), "the continuous job (" + command + ")");
        // the cluster before Kafka is sampled: outside one, nothing is read or written
        ClusterIngest.clusterEnvironment(command);
        for (String w : pipeline.warnings()) {
            out.println("warning: " + w);
        }
        List<String> notRun = new ArrayList<>();
        if (!pipeline.refreshes().isEmpty()) {
            notRun.add("REFRESH");
        }
        if (!pipeline.drops().isEmpty()) {
            notRun.add("DROP TABLE");
        }
        if (!pipeline.describes().isEmpty()) {
            notRun.add("DESCRIBE");
        }
        if (!notRun.isEmpty()) {
            out.println(
                    "note: the file's "
                            + String.join(", ", notRun)
                            + " statements are not run: --cluster runs the tables without"
                            + " SCHEDULE");
        }
        if (!pipeline.schedules().isEmpty()) {
            out.println(
                    "note: the scheduled tables ("
                            + String.join(", ", pipeline.schedules().keySet())
                            + ") are refreshed by their CronJobs, not by this job");
        }
        IngestPlan plan =
                continuous.plan(CatalogSettings.of("changeflow", continuous.config().catalog));
        out.println(
                "Running "
                        + String.join(", ", continuous.tables())
                        + " of "
                        + file
                        + " on the cluster until stopped (job changeflow ingest "
                        + plan.config.name
                        + ")");
        ClusterIngest.run(plan, plan.config.kafka, command);
    }

    /**
     * The checkpoint folder of the refresh running now, as messages show it (read by the Ctrl-C
     * hook), else null.
     */
    private volatile String runningState;

    /** Whether {@code --refresh} or {@code --full-refresh} names what runs. */
    private boolean flagged(SqlPipeline pipeline) {
        return refresh != null || fullRefresh != null;
    }

    /**
     * What {@code run} prints when the JVM is stopped (Ctrl-C, SIGTERM) during a refresh: the
     * tables keep what the last completed checkpoint committed (a checkpoint commits to Iceberg,
     * S1) and its state stays in the job's checkpoint folder; the same command resumes from it.
     */
    static String interruptedMessage(Path file, Object checkpoints) {
        return "run interrupted: the tables keep what the last completed checkpoint committed, and"
                + " the job's saved state (that checkpoint, or the savepoint of the last finished"
                + " run) stays in "
                + checkpoints
                + "; run changeflow run "
                + file
                + " again to resume from it (nothing committed is applied twice)";
    }

    private void runSteps(SqlPipeline pipeline, List<Step> steps, List<IngestPlan> plans)
            throws Exception {
        for (int i = 0; i < steps.size(); i++) {
            SqlPipeline p = steps.get(i).pipeline();
            if (steps.get(i).replace() != null) {
                replaceWhere(steps.get(i));
                continue;
            }
            if (steps.get(i).snapshots() != null) {
                snapshots(steps.get(i));
                continue;
            }
            IngestPlan plan =
                    plans.get(i) != null
                            ? plans.get(i)
                            : p.plan(LocalIngest.catalog(p.config(), local.warehouse));
            if (dryRun) {
                printPlan(plan, p);
                continue;
            }
            LocalIngest.Options o = options(pipeline, p.config().name);
            o.fullRefresh = steps.get(i).full();
            o.rebuildFix =
                    flow -> {
                        String t = p.tableOfFlow(flow);
                        return "rebuild table "
                                + t
                                + " under the new definition with a full refresh: run "
                                + file
                                + " --full-refresh "
                                + t
                                + ", or REFRESH STREAMING TABLE "
                                + t
                                + " FULL in the file (it empties the table in one commit,"
                                + " history kept, and rereads its source)";
                    };
            // S9: the refresh is recorded in each table's properties, also when it fails
            List<TableIdentifier> written = new ArrayList<>();
            plan.flows.forEach(f -> written.add(f.target));
            boolean full = steps.get(i).full();
            runningState = LocalIngest.display(LocalIngest.stateLocation(plan, o));
            try {
                TableStatements.RefreshRecord.record(
                        LocalIngest.catalog(p.config(), local.warehouse),
                        written,
                        full,
                        () -> {
                            if (plan.config.kafka != null) {
                                return LocalIngest.runKafka(plan, plan.config.kafka, null, o)
                                        .records;
                            } else if (p.feeds().isEmpty()) {
                                return LocalIngest.runFiles(plan, p.inputFiles(), o).records;
                            }
                            return LocalIngest.runChangeFeeds(plan, o).records;
                        });
            } catch (AutoCdcException e) {
                throw placed(e, p, plan);
            }
        }
    }

    /**
     * A {@code TARGET_SCHEMA_MISMATCH} about a table of the file, placed at the table's {@code
     * CREATE} statement ({@code file:line:column: TARGET_SCHEMA_MISMATCH: ...}), and a {@code
     * FLOW_CHANGED_FOR_EXISTING_STATE} about a flow of the file, placed at the changed part of its
     * definition ({@link SqlPipeline#placeOfChangedFlow}): both exit with code 2 as before; any
     * other error, or one that names no table or flow of the file, as it is.
     */
    static RuntimeException placed(AutoCdcException e, SqlPipeline p, IngestPlan plan) {
        if (e.getMessage() == null) {
            return e;
        }
        if (e.code() == AutoCdcException.Code.FLOW_CHANGED_FOR_EXISTING_STATE) {
            SqlPosition at = p.placeOfChangedFlow(e.getMessage());
            return at == null ? e : new IllegalArgumentException(at + ": " + e.getMessage(), e);
        }
        if (e.code() != AutoCdcException.Code.TARGET_SCHEMA_MISMATCH) {
            return e;
        }
        for (IngestPlan.Flow flow : plan.flows) {
            if (e.getMessage().contains("table " + flow.target + " ")) {
                SqlStatement.CreateStreamingTable d =
                        p.declaration(p.tableOfFlow(flow.config.flowName()));
                if (d != null) {
                    return new IllegalArgumentException(d.position() + ": " + e.getMessage(), e);
                }
            }
        }
        return e;
    }

    /**
     * The options of a local run of this file's job {@code jobName}: warehouse, {@code
     * --from-scratch}, and the fixes the errors about saved state name.
     */
    private LocalIngest.Options options(SqlPipeline pipeline, String jobName) {
        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = local.warehouse;
        o.stateDir = stateLocation;
        o.fromScratch = local.fromScratch;
        o.out = out;
        o.otherNameFix =
                "or, for another pipeline, give its file another name or SET name = ...;"
                        + " (a pipeline's job is named after its file, "
                        + file.getFileName()
                        + " -> '"
                        + pipeline.config().name
                        + "', unless SET name = ... names it)";
        o.sameJobFix =
                job -> {
                    // a --refresh / REFRESH job is named <name>-refresh-<tables>, the snapshot
                    // job <name>-snapshots[-refresh-<tables>]
                    int refresh = job.indexOf("-refresh-");
                    String name = refresh > 0 ? job.substring(0, refresh) : job;
                    if (name.endsWith("-snapshots")) {
                        name = name.substring(0, name.length() - "-snapshots".length());
                    }
                    return "this run's job is '"
                            + jobName
                            + "' (a pipeline's job is named after its file, "
                            + file.getFileName()
                            + ", unless SET name = ... names it); to continue from that"
                            + " state, add SET name = "
                            + name
                            + "; at the top of "
                            + file
                            + " (or run the original file)";
                };
        return o;
    }

    /**
     * Runs (or with {@code --dry-run} prints) the job of the AUTO CDC FROM SNAPSHOT tables of a
     * step (A6) with {@link LocalSnapshotIngest}: its own saved state ({@link
     * SqlPipeline#snapshotConfig}: {@code <name>-snapshots}), every snapshot up to the newest at
     * launch, then a savepoint; recorded in each table's properties as every refresh (S9), {@code
     * records} being the snapshots applied.
     */
    private void snapshots(Step step) throws Exception {
        SqlPipeline p = step.pipeline();
        IngestConfig cfg = p.snapshotConfig(step.snapshots());
        if (dryRun) {
            out.println(
                    "Snapshot job "
                            + cfg.name
                            + ": "
                            + cfg.flows.size()
                            + (cfg.flows.size() == 1 ? " flow" : " flows")
                            + ", run after the ingest job (AUTO CDC FROM SNAPSHOT, A6)");
            for (SqlPipeline.SnapshotTable t : step.snapshots()) {
                FlowConfig c = t.flow();
                StringBuilder line =
                        new StringBuilder("  ")
                                .append(p.snapshotTarget(t))
                                .append(" <- ")
                                .append(t.source())
                                .append(": AUTO CDC FROM SNAPSHOT KEYS (")
                                .append(String.join(", ", c.keys))
                                .append(") STORED AS SCD TYPE ")
                                .append(c.scdType == ScdType.TYPE_2 ? "2" : "1");
                if (c.trackHistoryOn != null) {
                    line.append(" TRACK HISTORY ON ").append(c.trackHistoryOn);
                }
                if (c.schema != null) {
                    line.append(" (").append(c.schema).append(")");
                }
                out.println(line);
            }
            return;
        }
        for (SqlPipeline.SnapshotTable t : step.snapshots()) {
            if (t.flow().fromSnapshot == null) {
                // the versions of a table: checked at its turn
                p.checkSnapshot(t, LocalIngest.catalog(p.config(), local.warehouse));
            }
        }
        LocalIngest.Options o = options(p, cfg.name);
        o.rebuildFix =
                flow -> {
                    String t = flow;
                    for (SqlPipeline.SnapshotTable s : step.snapshots()) {
                        if (s.flow().flowName().equals(flow)) {
                            t = s.flow().targetName();
                        }
                    }
                    return "rebuild table "
                            + t
                            + " under the new definition: put DROP TABLE "
                            + t
                            + "; before its definition in "
                            + file
                            + " (it drops the table and the saved state of the snapshot job) and"
                            + " run the file again (a full refresh of a snapshot table is not"
                            + " offered yet)";
                };
        List<TableIdentifier> written = new ArrayList<>();
        step.snapshots().forEach(t -> written.add(p.snapshotTarget(t)));
        runningState = LocalIngest.display(LocalIngest.stateLocation(cfg.name, o));
        TableStatements.RefreshRecord.record(
                LocalIngest.catalog(p.config(), local.warehouse),
                written,
                false,
                () -> LocalSnapshotIngest.run(cfg, o).applied);
    }

    /**
     * Runs (or with {@code --dry-run} checks) the refresh of a FLOW REPLACE WHERE table (S4),
     * recorded in the table's properties as every refresh (S9).
     */
    private void replaceWhere(Step step) throws Exception {
        SqlPipeline p = step.pipeline();
        ReplaceWhereStep.run(
                step.replace(),
                LocalIngest.catalog(p.config(), local.warehouse),
                step.where(),
                step.wherePosition(),
                p.config().parallelism,
                dryRun,
                out);
    }

    /** Something done with an open catalog. */
    interface CatalogAction<T> {
        T apply(Catalog catalog) throws Exception;
    }

    /** Something done with an open catalog, without a result. */
    interface CatalogUse {
        void accept(Catalog catalog) throws Exception;
    }

    private <T> T withCatalog(SqlPipeline p, CatalogAction<T> action) throws Exception {
        Catalog cat = LocalIngest.catalog(p.config(), local.warehouse).open();
        try {
            return action.apply(cat);
        } finally {
            if (cat instanceof java.io.Closeable c) {
                c.close();
            }
        }
    }

    private void useCatalog(SqlPipeline p, CatalogUse use) throws Exception {
        withCatalog(
                p,
                (CatalogAction<Void>)
                        cat -> {
                            use.accept(cat);
                            return null;
                        });
    }

    /**
     * The Iceberg table of each streaming table of the file (by lower-case name), from the steps'
     * plans; when a DROP or DESCRIBE names a table of the file no step plans, from a plan of the
     * whole pipeline.
     */
    private Map<String, TableIdentifier> targets(
            SqlPipeline pipeline, List<Step> steps, List<IngestPlan> plans) throws Exception {
        Map<String, TableIdentifier> out = new HashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            if (plans.get(i) == null) {
                continue;
            }
            for (IngestPlan.Flow f : plans.get(i).flows) {
                out.put(
                        steps.get(i).pipeline().tableOfFlow(f.name()).toLowerCase(Locale.ROOT),
                        f.target);
            }
        }
        for (SqlPipeline.ReplaceWhereTable rw : pipeline.replaceWheres()) {
            out.put(rw.name().toLowerCase(Locale.ROOT), rw.definition().target());
        }
        for (SqlPipeline.SnapshotTable st : pipeline.snapshotTables()) {
            out.put(st.name().toLowerCase(Locale.ROOT), pipeline.snapshotTarget(st));
        }
        boolean missing = false;
        for (SqlStatement.Drop d : pipeline.drops()) {
            missing |=
                    pipeline.flowIndexOfTable(d.table()) >= 0
                            && !out.containsKey(d.table().toLowerCase(Locale.ROOT));
        }
        for (SqlStatement.Describe d : pipeline.describes()) {
            missing |=
                    pipeline.flowIndexOfTable(d.table()) >= 0
                            && !out.containsKey(d.table().toLowerCase(Locale.ROOT));
        }
        if (missing) {
            IngestPlan whole =
                    pipeline.plan(LocalIngest.catalog(pipeline.config(), local.warehouse));
            for (IngestPlan.Flow f : whole.flows) {
                out.putIfAbsent(pipeline.tableOfFlow(f.name()).toLowerCase(Locale.ROOT), f.target);
            }
        }
        return out;
    }

    /** The plan as {@code --dry-run} prints it: one line per flow, then the inputs. */
    void printPlan(IngestPlan plan, SqlPipeline pipeline) {
        IngestConfig cfg = plan.config;
        out.println(
                "Pipeline "
                        + cfg.name
                        + " ("
                        + file
                        + "): "
                        + plan.flows.size()
                        + (plan.flows.size() == 1 ? " flow" : " flows")
                        + ", format "
                        + cfg.format
                        + ", checkpoint interval "
                        + cfg.checkpointInterval.toMillis()
                        + " ms, quarantine "
                        + plan.quarantineNamespace
                        + ".changeflow_quarantine");
        for (IngestPlan.Flow f : plan.flows) {
            FlowConfig c = f.config;
            StringBuilder line = new StringBuilder("  ").append(f.target);
            if (f.changeFeed != null) {
                line.append(" <- change feed of ").append(f.changeFeed);
            } else {
                line.append(" <- table ").append(c.table);
            }
            if (c.appendOnly) {
                line.append(": append-only");
                if (f.query != null) {
                    // S1: the select list and WHERE, and the columns they give
                    line.append(" SELECT ").append(f.query.select().replaceAll("\\s+", " "));
                    if (f.query.where() != null) {
                        line.append(" WHERE ").append(f.query.where().replaceAll("\\s+", " "));
                    }
                    line.append(" -> ").append(f.query.outputType().asSummaryString());
                }
            } else if (c.isReplaceUsing()) {
                line.append(": REPLACE USING (")
                        .append(String.join(", ", c.replaceUsing))
                        .append(") SEQUENCE BY ")
                        .append(String.join(", ", c.sequenceBy)); // S5
            } else {
                line.append(": AUTO CDC KEYS (").append(String.join(", ", c.keys)).append(")");
                line.append(" SEQUENCE BY ")
                        .append(
                                c.sequenceBy.isEmpty()
                                        ? "source.lsn (Debezium default)"
                                        : String.join(", ", c.sequenceBy));
                line.append(" STORED AS SCD TYPE ").append(c.scdType == ScdType.TYPE_2 ? "2" : "1");
                if (c.applyAsDeleteWhen != null) {
                    line.append(" APPLY AS DELETE WHEN ").append(c.applyAsDeleteWhen);
                }
                if (c.applyAsTruncateWhen != null) {
                    line.append(" APPLY AS TRUNCATE WHEN ").append(c.applyAsTruncateWhen);
                }
                for (dev.changeflow.operators.Expectation e : c.expectations) {
                    line.append(' ').append(e); // S8
                }
            }
            if (c.schema != null) {
                line.append(" (").append(c.schema).append(")");
            }
            if (c.schemaHints != null) {
                line.append(" schemaHints '").append(c.schemaHints).append("'"); // S2
            }
            out.println(line);
        }
        out.println("Inputs:");
        for (SqlPipeline.Input in : pipeline.inputs()) {
            out.println("  " + in.name());
        }
        if (cfg.maxFilesPerTrigger != null) {
            // S2: the file source's limit
            out.println(
                    "  maxFilesPerTrigger "
                            + cfg.maxFilesPerTrigger
                            + " (at most that many new files per checkpoint)");
        }
        if (cfg.kafka != null) {
            out.println(
                    "  Kafka "
                            + cfg.kafka.bootstrapServers
                            + " "
                            + (cfg.kafka.topicPattern != null
                                    ? "pattern " + cfg.kafka.topicPattern
                                    : "topics " + cfg.kafka.topics)
                            + " from "
                            + cfg.kafka.startingOffsets);
        }
        java.util.Set<String> feeds = new java.util.LinkedHashSet<>();
        for (IngestPlan.Flow f : plan.flows) {
            if (f.changeFeed != null && feeds.add(f.changeFeed.toString())) {
                out.println("  change feed of " + f.changeFeed);
            }
        }
    }
}

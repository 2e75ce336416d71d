package dev.changeflow.jobs.gold;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.jobs.sql.FlinkSqlSession;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.jobs.sql.SqlScript;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.PipelineOptionsInternal;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkCatalog;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * {@code bin/changeflow gold FILE.sql}: a Gold job written as Flink SQL (docs/semantics.md G2). The
 * file's statements, split by {@link SqlScript}, run in order in a STREAMING session over catalog
 * {@value #CATALOG} (type {@code changeflow}: every Iceberg table, plus {@code db.`t$changelog`},
 * G1): {@code SET}, {@code RESET}, {@code USE}, {@code CREATE} (tables, views, functions) and
 * {@code ALTER} run as they are read; the {@code INSERT INTO} statements are collected and run at
 * the end as <em>one</em> Flink job (a statement set) on a local MiniCluster, with RocksDB and
 * exactly-once checkpoints ({@link LocalRunner#configuration}) — Iceberg's Flink sink commits on
 * each checkpoint, so the changelog reads' positions and the Gold commits are in the same
 * checkpoints.
 *
 * <p><b>Gold tables.</b> Before the job is planned, every INSERT's target with a primary key
 * (Iceberg identifier fields; {@code CREATE TABLE gold.t (..., PRIMARY KEY (k) NOT ENFORCED)}) is
 * made an upsert table: format version at least 2 and {@code write.upsert.enabled=true}, so each
 * update or delete the query emits replaces or removes the row of its key. An INSERT whose query is
 * an update stream (anything other than insert-only rows: an aggregate, a join, a ranking over a
 * changelog) into a table without primary key fails with {@code UPDATES_WITHOUT_PRIMARY_KEY}.
 *
 * <p><b>Ending.</b> By default the job runs until it is stopped (Ctrl-C). With {@link
 * Options#bounded} every changelog read defaults to {@code 'bounded'='true'} (catalog option {@code
 * changelog.bounded}; a hint on a read overrides it): each read stops at the Silver version that
 * was latest when the job was planned, the job finishes, and its final checkpoint commits the last
 * Gold rows. Each run starts without Flink state (the checkpoints of a run are deleted when the
 * next run of the same name starts), from the reads' start positions (by default Silver's current
 * snapshot, then its changes), and rebuilds the Gold tables (G3, {@link GoldSqlStart}): those with
 * rows are emptied first, in one commit each.
 *
 * <p><b>Recorded Silver version</b> (G2). Every Gold commit carries {@code
 * changeflow.source-version.<db.table>} for each Silver table its own INSERT reads through {@code
 * t$changelog} (not the other INSERTs' reads, issue #16: {@link #plan}): the version that read had
 * completely emitted at the checkpoint whose data the commit holds. The reads write it per
 * checkpoint to {@code <checkpoint root>/source-versions} ({@link
 * dev.changeflow.sources.cdf.sql.SourceVersionLog}, catalog option {@link
 * ChangeflowCatalog#SOURCE_VERSION_LOG}) and the Gold tables are written through {@link
 * dev.changeflow.sources.cdf.sql.SourceVersionStamping}, which sets the versions of the commit's
 * checkpoint on the commit itself.
 *
 * <p><b>{@code _source_version}</b> (G2), where a query selects it: {@code
 * SOURCE_VERSION(_commit_version)} in a grouped query ({@link
 * dev.changeflow.jobs.sql.SourceVersionFunction}, registered in the session: the last Silver
 * version that changed the group, by insert, update or delete), {@code _commit_version AS
 * _source_version} in a projection; rows from Silver's snapshot of N−1 carry N−1.
 *
 * <p><b>Replay</b> (G3). {@link Options#startingVersion} N is the {@code starting-version} of every
 * read without its own hint (catalog option {@code changelog.starting-version}): Silver as of N−1,
 * then the changes from N. An N after a Gold table's recorded version + 1 over versions with
 * changes fails with {@code GOLD_VERSION_MISMATCH} ({@link GoldException}) before anything is
 * committed; each Gold table is checked against the reads of its own INSERT only.
 *
 * <p><b>Maintenance</b> (M1, M2). {@code SET 'changeflow.maintenance' = 'true'} in the file
 * maintains every Gold table the file's INSERTs write in catalog {@value #CATALOG} inside the same
 * job, as {@code maintenance: true} does for a flow ({@link JobMaintenance}: compaction, orphan
 * removal, consumer-aware expiry, manifest rewrite); {@code SET 'changeflow.maintenance-<option>' =
 * '...'} sets the flow option of that name ({@code maintenance-commit-count}, {@code
 * maintenance-expire-older-than}, ...), parsed and checked by the flows file's own parsers ({@link
 * #maintenance}). The INSERTs then run through {@link StreamStatementSet#attachAsDataStream()} in
 * one DataStream job with the maintenance graphs. Decision: a session {@code SET} rather than
 * {@code TBLPROPERTIES}, because maintenance is a property of the job that writes (it runs in its
 * slots, under a lock its operator chooses), and a Gold table usually exists already — a {@code
 * CREATE TABLE IF NOT EXISTS ... WITH (...)} changes nothing on an existing table. Such a job never
 * finishes by itself, so maintenance with {@link Options#bounded} is {@code INVALID_OPTION}. The
 * local and the cluster run attach the graphs the same way ({@link #attachMaintenance}), under the
 * same lock rule as a flow's: the embedded SQLite lock only for a local warehouse folder, else
 * {@code SET 'changeflow.maintenance-lock-jdbc-uri'} (M1) — without it {@code INVALID_OPTION} at
 * the {@code SET 'changeflow.maintenance'}, checked before anything is planned, created or emptied.
 *
 * <p><b>On a cluster</b> ({@link #runCluster}, {@link #submitCluster}): the same planning code over
 * the cluster's environment, unbounded, with the source version log under the cluster's checkpoint
 * directory; the gap rule is checked before the job is submitted, and the Gold tables are emptied
 * only for a start without state (G3); maintenance as locally, in the submitted job.
 *
 * <p>Errors ({@link SqlException}, {@code file:line:column: CODE: detail}): {@code NO_INSERT},
 * {@code UNSUPPORTED_STATEMENT} (e.g. a {@code SELECT}, {@code INSERT OVERWRITE}, {@code EXECUTE
 * STATEMENT SET}), {@code UNKNOWN_TABLE} (a table read or written that the catalog does not have,
 * named), {@code UPDATES_WITHOUT_PRIMARY_KEY}, {@code SYNTAX_ERROR} (a missing INSERT target, an
 * unterminated literal), {@code INVALID_QUERY} (an INSERT Flink cannot plan: an unknown column,
 * query columns whose types do not match the target's; with Flink's message, at the place in the
 * statement Flink names); {@code GOLD_VERSION_MISMATCH} ({@link GoldException}, G3). Every INSERT
 * is planned before any Gold table is emptied or made an upsert table, so such an error leaves the
 * Gold tables as they were; the tables and then the (empty) databases that the file's own {@code
 * CREATE} statements made in catalog {@value #CATALOG} are dropped again (issue #16: a file that
 * fails validation writes nothing; chosen over validating every INSERT before any CREATE, which
 * cannot plan an INSERT into a table not yet created). The same holds for {@code
 * GOLD_VERSION_MISMATCH} and a maintenance lock that cannot be opened, except that targets which
 * existed already have been made upsert tables by then. Tables created in other catalogs the file
 * creates are not tracked. A change-feed error ({@code CdfException}) passes through with its code.
 */
@PublicEvolving
public final class GoldSql {
    /** Name of the catalog the statements run in. */
    public static final String CATALOG = "changeflow";

    private static final Pattern NOT_FOUND =
            Pattern.compile("Object '([^']+)' not found(?: within '([^']+)')?");

    private static final Pattern SPAN =
            Pattern.compile("From line (\\d+), column (\\d+) to line (\\d+), column (\\d+)");

    private static final Pattern SET =
            Pattern.compile("(?is)SET\\s+'((?:[^']|'')+)'\\s*=\\s*'((?:[^']|'')*)'\\s*");

    private static final Pattern RESET = Pattern.compile("(?is)RESET\\s+'((?:[^']|'')+)'\\s*");

    /** How a run goes. */
    public static final class Options {
        /** Local warehouse (checkpoint root). */
        public Path warehouse = Path.of("warehouse");

        /** Job name (checkpoint folder); default: the file's name without {@code .sql}. */
        public String name;

        /** Default parallelism of a local job (a cluster job has the cluster's). */
        public int parallelism = 2;

        /**
         * Checkpoint interval: one Gold commit per checkpoint (on a cluster only when the cluster
         * sets none).
         */
        public Duration checkpointInterval = Duration.ofSeconds(5);

        /**
         * Every changelog read ends at the version latest at planning; the job then finishes. Local
         * runs only.
         */
        public boolean bounded;

        /**
         * Silver version N every changelog read starts at (its snapshot of N−1 first, then the
         * changes from N), unless its OPTIONS hint says otherwise; null: Silver's current snapshot.
         * Checked against the Gold tables' recorded versions (G3, {@link GoldSqlStart}).
         */
        public Long startingVersion;

        /** Where progress lines print. */
        public PrintStream out = System.out;

        /**
         * Called with the running job once it is submitted (e.g. to cancel an unbounded job); a
         * cancelled job ends {@link #runLocal} normally.
         */
        public Consumer<JobClient> onStart;
    }

    /** Prefix of the {@code SET} keys that are the Gold tables' maintenance options. */
    public static final String MAINTENANCE_PREFIX = "changeflow.";

    /** A parsed Gold file: its statements in order and which of them are INSERTs. */
    public record File(String name, List<SqlScript.Statement> statements) {
        /** The INSERT statements, in file order. */
        public List<SqlScript.Statement> inserts() {
            return statements.stream().filter(s -> s.startsWith("INSERT")).toList();
        }
    }

    private GoldSql() {}

    /**
     * Reads and checks a Gold file.
     *
     * @throws SqlException as {@link #parse(String, String)}
     */
    public static File read(Path file) throws IOException {
        return parse(Files.readString(file), file.toString());
    }

    /**
     * Splits and checks the text of a Gold file (nothing is planned or read).
     *
     * @param file how positions name the file
     * @throws SqlException {@code NO_INSERT}; {@code UNSUPPORTED_STATEMENT} for a statement other
     *     than SET, RESET, USE, CREATE, ALTER, INSERT INTO; {@code SYNTAX_ERROR} for an INSERT
     *     without a target or an unterminated literal or comment
     */
    public static File parse(String text, String file) {
        List<SqlScript.Statement> statements = SqlScript.split(text, file);
        for (SqlScript.Statement s : statements) {
            if (s.startsWith("INSERT", "OVERWRITE")) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        s.position(),
                        "INSERT OVERWRITE: a Gold job is a streaming job, which Flink cannot run"
                                + " OVERWRITE in; use INSERT INTO a table with a PRIMARY KEY");
            }
            if (s.startsWith("INSERT")) {
                if (!s.startsWith("INSERT", "INTO") || s.target().isEmpty()) {
                    throw new SqlException(
                            Code.SYNTAX_ERROR,
                            s.position(),
                            "expected INSERT INTO [[catalog.]db.]table followed by a query");
                }
                continue;
            }
            String first = s.words().isEmpty() ? "" : s.words().get(0);
            if ((first.equals("SET") && !SET.matcher(s.text()).matches())
                    || (first.equals("RESET") && !RESET.matcher(s.text()).matches())) {
                throw new SqlException(
                        Code.SYNTAX_ERROR,
                        s.position(),
                        "expected SET 'key' = 'value' or RESET 'key' (quoted, as in Flink's SQL"
                                + " client)");
            }
            if (!List.of("SET", "RESET", "USE", "CREATE", "ALTER").contains(first)) {
                String hint =
                        first.equals("EXECUTE") || first.equals("BEGIN") || first.equals("END")
                                ? "the file's INSERT INTO statements already run as one statement"
                                        + " set; write them without EXECUTE STATEMENT SET"
                                : "a Gold file holds SET, RESET, USE, CREATE, ALTER and INSERT INTO"
                                        + " statements (run queries with bin/changeflow sql)";
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        s.position(),
                        (first.isEmpty() ? "this statement" : first) + ": " + hint);
            }
        }
        if (statements.stream().noneMatch(s -> s.startsWith("INSERT"))) {
            throw new SqlException(
                    Code.NO_INSERT,
                    new SqlPosition(file, 1, 1),
                    "no INSERT INTO statement: a Gold file's INSERT INTO gold_table SELECT ..."
                            + " statements are its job");
        }
        return new File(jobName(file), statements);
    }

    /**
     * The Gold tables' in-job maintenance that the file's {@code SET 'changeflow.maintenance...'}
     * statements ask for (in file order; a {@code RESET} of such a key removes it): the flow
     * options of that name after the prefix, resolved and checked as a flows file's ({@link
     * FlowOptions#SET}); off without any.
     *
     * @throws SqlException {@code INVALID_OPTION} at the {@code SET} of an unknown {@code
     *     changeflow.maintenance...} key or of a value its option refuses, or at the last such
     *     {@code SET} when the options do not go together (maintenance on with every compaction
     *     trigger off; {@code maintenance-*} options without {@code 'changeflow.maintenance'})
     */
    public static TableMaintenanceOptions maintenance(File file) {
        Map<String, Object> values = new LinkedHashMap<>();
        SqlPosition last = null;
        for (SqlScript.Statement s : file.statements()) {
            Matcher set = SET.matcher(s.text());
            Matcher reset = RESET.matcher(s.text());
            if (s.startsWith("SET") && set.matches()) {
                String key = set.group(1).replace("''", "'");
                if (!isMaintenanceKey(key)) {
                    continue;
                }
                String option = key.substring(MAINTENANCE_PREFIX.length());
                String value = set.group(2).replace("''", "'");
                try {
                    // this option alone: its value (the switch may come in a later SET)
                    FlowConfig.maintenanceOptions(Map.of(option, value), "SET '" + key + "'", null);
                } catch (IllegalArgumentException e) {
                    if (!(e.getMessage() != null
                            && e.getMessage().contains("every trigger is off"))) {
                        throw new SqlException(
                                Code.INVALID_OPTION, s.position(), e.getMessage(), e);
                    }
                }
                values.put(option, value);
                last = s.position();
            } else if (s.startsWith("RESET") && reset.matches()) {
                String key = reset.group(1).replace("''", "'");
                if (isMaintenanceKey(key)) {
                    values.remove(key.substring(MAINTENANCE_PREFIX.length()));
                }
            }
        }
        if (values.isEmpty()) {
            return TableMaintenanceOptions.off();
        }
        try {
            return FlowConfig.maintenanceOptions(
                    values,
                    "SET 'changeflow.maintenance...'",
                    "add SET 'changeflow.maintenance' = 'true'");
        } catch (IllegalArgumentException e) {
            throw new SqlException(Code.INVALID_OPTION, last, e.getMessage(), e);
        }
    }

    private static boolean isMaintenanceKey(String key) {
        return key.startsWith(MAINTENANCE_PREFIX + FlowOptions.MAINTENANCE.key());
    }

    private static String jobName(String file) {
        String base = Path.of(file).getFileName().toString();
        return base.toLowerCase(Locale.ROOT).endsWith(".sql")
                ? base.substring(0, base.length() - 4)
                : base;
    }

    /**
     * Runs the file's statements and then its INSERTs as one job on a local MiniCluster; returns
     * when the job finishes (with {@link Options#bounded}) or fails.
     *
     * @throws SqlException see the class comment
     * @throws GoldException {@code GOLD_VERSION_MISMATCH} (G3), before anything is committed
     * @throws IllegalArgumentException a negative {@link Options#startingVersion}
     * @throws Exception the job's failure
     */
    public static void runLocal(File file, CatalogSettings settings, Options o) throws Exception {
        checkStartingVersion(o);
        TableMaintenanceOptions maintenance = maintenance(file);
        if (maintenance.enabled() && o.bounded) {
            throw new SqlException(
                    Code.INVALID_OPTION,
                    new SqlPosition(file.name(), 1, 1),
                    "'changeflow.maintenance' = 'true' keeps the Gold job running (its maintenance"
                            + " graph watches the tables until the job is stopped), and --bounded"
                            + " asks it to finish: run without --bounded, or maintain the tables"
                            + " afterwards with bin/changeflow maintain");
        }
        checkMaintenanceLock(file, settings, maintenance);
        String name = o.name != null ? o.name : file.name();
        Path ckRoot = LocalRunner.checkpointRoot(o.warehouse, null, "gold-sql-" + name);
        LocalRunner.deleteRecursively(ckRoot);
        Configuration conf =
                LocalRunner.configuration(ckRoot.resolve("checkpoints"), o.checkpointInterval);
        conf.setString("pipeline.name", "changeflow gold " + name);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(o.parallelism);
        Planned planned =
                prepare(
                        file,
                        env,
                        settings,
                        o,
                        ckRoot.resolve("source-versions").toAbsolutePath().toUri().toString(),
                        null,
                        maintenance);
        if (maintenance.enabled()) {
            List<String> maintained = planned.maintained();
            o.out.printf(
                    "Running %d INSERT statement(s) of %s as one job until stopped, maintaining"
                            + " %s in the job%n",
                    file.inserts().size(), file.name(), String.join(", ", maintained));
            JobClient job = env.executeAsync("changeflow gold " + name);
            if (o.onStart != null) {
                o.onStart.accept(job);
            }
            try {
                job.getJobExecutionResult().get();
            } catch (ExecutionException e) {
                if (cancelled(e)) {
                    o.out.println(
                            "Stopped: the Gold tables hold what the last checkpoint committed.");
                    return;
                }
                throw e;
            }
            return;
        }
        TableResult result = planned.set().execute();
        o.out.printf(
                "Running %d INSERT statement(s) of %s as one job%s%n",
                file.inserts().size(),
                file.name(),
                o.bounded ? " up to Silver's latest versions" : " until stopped");
        if (o.onStart != null && result.getJobClient().isPresent()) {
            o.onStart.accept(result.getJobClient().get());
        }
        try {
            result.await();
        } catch (ExecutionException e) {
            if (cancelled(e)) {
                o.out.println("Stopped: the Gold tables hold what the last checkpoint committed.");
                return;
            }
            throw e;
        }
        o.out.println("Done: the Gold tables are committed.");
        for (Map.Entry<String, Table> g : planned.gold().entrySet()) {
            for (GoldSqlStart.Read read : planned.readsOf().getOrDefault(g.getKey(), List.of())) {
                OptionalLong v = GoldSqlStart.recordedVersion(g.getValue(), read.table());
                if (v.isPresent()) {
                    o.out.printf(
                            "Gold table %s: complete up to Silver %s version %d%n",
                            g.getKey(), read.table(), v.getAsLong());
                }
            }
        }
    }

    /**
     * {@code gold FILE.sql --cluster}: runs the file on the Flink cluster that executes this
     * program (application mode, {@code flink run}: the context's {@link
     * StreamExecutionEnvironment}) until the job is stopped; see {@link #submitCluster}. Returns
     * when the job ends (cancelled or failed).
     *
     * @throws Exception as {@link #submitCluster}, or the job's failure
     */
    public static void runCluster(File file, CatalogSettings settings, Options o) throws Exception {
        JobClient job =
                submitCluster(
                        file, StreamExecutionEnvironment.getExecutionEnvironment(), settings, o);
        job.getJobExecutionResult().get();
    }

    /**
     * Plans the file in {@code env} (the cluster's environment) exactly as {@link #runLocal} does —
     * the same statements, targets, start check and Silver version stamping — and submits its
     * INSERTs as one unbounded job; only the environment and the boundedness differ (G2, G3).
     *
     * <p>Checkpoints: exactly-once and aligned (a Gold commit holds whole Silver versions); the
     * interval is the cluster's {@code execution.checkpointing.interval}, or {@link
     * Options#checkpointInterval} when the cluster sets none (Iceberg's sink commits only on
     * checkpoints). The cluster must set {@code execution.checkpointing.dir}: the changelog reads
     * record their Silver versions per checkpoint under {@code <dir>/changeflow-source-versions/
     * <name>-<run id>} (a new folder each time this program runs, so the checkpoint ids of a new
     * job never meet a former job's entries).
     *
     * <p>Start (G3): {@code GOLD_VERSION_MISMATCH} is checked here, before anything is submitted or
     * committed, as locally. The Gold tables are emptied as locally only when the job starts
     * without state ({@link #startsWithoutState}): not when the configuration names a savepoint or
     * checkpoint to restore ({@code execution.state-recovery.path}, e.g. the operator's {@code
     * upgradeMode: savepoint}), and not when the job id is fixed ({@code
     * $internal.pipeline.job-id}, application mode) and a Gold table's emptying commit was made for
     * that same job id — the program running again for a job its JobManager recovers (HA). A
     * restored job goes on from its state, and the rows Gold holds are its output.
     *
     * <p>Maintenance (M1, M2): with {@code SET 'changeflow.maintenance' = 'true'} the job also
     * maintains every Gold table in catalog {@value #CATALOG} the INSERTs write, as a local run
     * does ({@link #attachMaintenance}; operator uids end in {@code maintenance-gold-<db.table>},
     * so a savepoint upgrade keeps the triggers' state). A warehouse that is not a local folder
     * needs {@code SET 'changeflow.maintenance-lock-jdbc-uri'}, a lock every TaskManager reaches
     * (the embedded SQLite file is the same file for all of them only on a shared folder).
     *
     * @param env the cluster's environment (its configuration is read as above)
     * @return the submitted job (cancel it to stop the run)
     * @throws IllegalArgumentException {@link Options#bounded} (a cluster run is unbounded), a
     *     negative starting version, or no {@code execution.checkpointing.dir}
     * @throws SqlException see the class comment; {@code INVALID_OPTION} for maintenance with the
     *     embedded lock on a warehouse that is not a local folder, before anything is planned
     * @throws GoldException {@code GOLD_VERSION_MISMATCH}, before anything is submitted
     */
    public static JobClient submitCluster(
            File file, StreamExecutionEnvironment env, CatalogSettings settings, Options o)
            throws Exception {
        if (o.bounded) {
            throw new IllegalArgumentException(
                    "--bounded is for local runs: a --cluster run reads Silver until it is stopped");
        }
        checkStartingVersion(o);
        TableMaintenanceOptions maintenance = maintenance(file);
        checkMaintenanceLock(file, settings, maintenance);
        ReadableConfig conf = env.getConfiguration();
        String ckDir = conf.getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY).orElse(null);
        if (ckDir == null || ckDir.isBlank()) {
            throw new IllegalArgumentException(
                    "--cluster with FILE.sql needs the cluster's execution.checkpointing.dir (a"
                            + " shared file system: the changelog reads record there which Silver"
                            + " version each checkpoint holds, for the Gold commits)");
        }
        String name = o.name != null ? o.name : file.name();
        String log =
                new org.apache.flink.core.fs.Path(
                                new org.apache.flink.core.fs.Path(
                                        ckDir, "changeflow-source-versions"),
                                "gold-sql-" + name + "-" + UUID.randomUUID())
                        .toString();
        if (env.getCheckpointInterval() <= 0) {
            env.enableCheckpointing(o.checkpointInterval.toMillis());
        }
        Configuration exactlyOnce = new Configuration();
        exactlyOnce.set(
                CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE,
                CheckpointingMode.EXACTLY_ONCE);
        exactlyOnce.set(CheckpointingOptions.ENABLE_UNALIGNED, false);
        exactlyOnce.set(PipelineOptions.NAME, "changeflow gold " + name);
        env.configure(exactlyOnce);
        Planned planned = prepare(file, env, settings, o, log, conf, maintenance);
        if (maintenance.enabled()) {
            List<String> maintained = planned.maintained();
            JobClient job = env.executeAsync("changeflow gold " + name);
            o.out.printf(
                    "Submitted %d INSERT statement(s) of %s as one job, running until stopped,"
                            + " maintaining %s in the job%n",
                    file.inserts().size(), file.name(), String.join(", ", maintained));
            return job;
        }
        TableResult result = planned.set().execute();
        o.out.printf(
                "Submitted %d INSERT statement(s) of %s as one job, running until stopped%n",
                file.inserts().size(), file.name());
        return result.getJobClient()
                .orElseThrow(
                        () ->
                                new IllegalStateException(
                                        "the cluster returned no job client for the submitted"
                                                + " INSERTs of "
                                                + file.name()));
    }

    /**
     * The Gold tables' in-job maintenance, for the local and the cluster run alike (M1, M2): turns
     * the planned INSERTs into {@code env}'s DataStream graph ({@link
     * StreamStatementSet#attachAsDataStream()}, so one job holds them and the maintenance) and adds
     * {@link JobMaintenance#append} for each distinct target in catalog {@value #CATALOG}, operator
     * uids ending in {@code maintenance-gold-<db.table>}.
     *
     * <p>Called after the file is planned and before any Gold table is emptied (G3), so a lock
     * database that cannot be opened leaves the Gold tables as they are.
     *
     * @return the maintained tables as {@code db.table}, in the INSERTs' order
     * @throws SqlException {@code INVALID_OPTION} at the file's {@code SET
     *     'changeflow.maintenance-lock-jdbc-uri'} (else its {@code SET 'changeflow.maintenance'})
     *     when the lock database cannot be opened (no JDBC driver for the URI, a database that
     *     cannot be reached or created)
     */
    private static List<String> attachMaintenance(
            File file,
            StreamExecutionEnvironment env,
            StatementSet set,
            List<List<String>> targets,
            CatalogSettings settings,
            TableMaintenanceOptions maintenance) {
        ((StreamStatementSet) set).attachAsDataStream();
        List<String> maintained = new ArrayList<>();
        for (List<String> t : targets) {
            String table = t.get(1) + "." + t.get(2);
            if (!CATALOG.equals(t.get(0)) || maintained.contains(table)) {
                continue;
            }
            maintained.add(table);
            try {
                JobMaintenance.append(
                        env,
                        settings,
                        TableIdentifier.of(Namespace.of(t.get(1)), t.get(2)),
                        maintenance,
                        "maintenance-gold-" + table);
            } catch (IllegalArgumentException e) {
                String uriKey = MAINTENANCE_PREFIX + FlowOptions.MAINTENANCE_LOCK_JDBC_URI.key();
                SqlPosition at =
                        maintenance.lockJdbcUri() == null
                                ? maintenanceSetPosition(file)
                                : setPosition(file, uriKey);
                Throwable cause = e.getCause() == null ? e : e.getCause();
                throw new SqlException(
                        Code.INVALID_OPTION,
                        at,
                        e.getMessage()
                                + (cause == e ? "" : ": " + cause)
                                + "; nothing was run and no Gold table was changed",
                        e);
            }
        }
        return maintained;
    }

    /**
     * The lock rule of in-job maintenance (M1, as for a flow: {@link
     * InJobMaintenance#lacksSharedLock}), checked before anything is planned, created or emptied.
     *
     * @throws SqlException {@code INVALID_OPTION} at the file's {@code SET
     *     'changeflow.maintenance'} when maintenance is on without {@code
     *     changeflow.maintenance-lock-jdbc-uri} and the catalog's warehouse is not a local folder
     *     (an object store, a REST catalog)
     */
    private static void checkMaintenanceLock(
            File file, CatalogSettings settings, TableMaintenanceOptions maintenance) {
        if (!InJobMaintenance.lacksSharedLock(settings, maintenance)) {
            return;
        }
        String warehouse = settings.properties().get(CatalogProperties.WAREHOUSE_LOCATION);
        throw new SqlException(
                Code.INVALID_OPTION,
                maintenanceSetPosition(file),
                "in-job maintenance of the Gold tables needs a lock shared by every job that"
                        + " maintains them: the embedded SQLite lock works only for a local"
                        + " warehouse folder, and "
                        + (warehouse == null || warehouse.isBlank()
                                ? "catalog '" + settings.name() + "' names no warehouse folder"
                                : "the warehouse of catalog '"
                                        + settings.name()
                                        + "' is '"
                                        + warehouse
                                        + "'")
                        + "; add SET '"
                        + MAINTENANCE_PREFIX
                        + FlowOptions.MAINTENANCE_LOCK_JDBC_URI.key()
                        + "' = 'jdbc:...' (a JDBC database every TaskManager reaches, e.g."
                        + " jdbc:postgresql://host/db)");
    }

    /**
     * Where the file turns maintenance on: its last {@code SET 'changeflow.maintenance'}, else its
     * first line.
     */
    private static SqlPosition maintenanceSetPosition(File file) {
        return setPosition(file, MAINTENANCE_PREFIX + FlowOptions.MAINTENANCE.key());
    }

    /** Where the file sets {@code key}: its last {@code SET 'key'}, else its first line. */
    private static SqlPosition setPosition(File file, String key) {
        SqlPosition at = new SqlPosition(file.name(), 1, 1);
        for (SqlScript.Statement s : file.statements()) {
            Matcher set = SET.matcher(s.text());
            if (s.startsWith("SET")
                    && set.matches()
                    && set.group(1).replace("''", "'").equals(key)) {
                at = s.position();
            }
        }
        return at;
    }

    /**
     * Whether a job planned with this configuration starts without state as far as the program can
     * tell: no {@code execution.state-recovery.path}; and, for a fixed job id, no Gold table was
     * emptied for that job id already (see {@link #submitCluster}).
     */
    static boolean startsWithoutState(ReadableConfig conf, Map<String, Table> gold) {
        if (conf.getOptional(StateRecoveryOptions.SAVEPOINT_PATH)
                .filter(p -> !p.isBlank())
                .isPresent()) {
            return false;
        }
        String jobId = conf.getOptional(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID).orElse(null);
        return jobId == null
                || gold.values().stream().noneMatch(t -> GoldSqlStart.emptiedForJob(t, jobId));
    }

    private static void checkStartingVersion(Options o) {
        if (o.startingVersion != null && o.startingVersion < 0) {
            throw new IllegalArgumentException(
                    "--starting-version must be >= 0, got " + o.startingVersion);
        }
    }

    /**
     * A planned run: its session, the INSERTs' statement set (not executed; attached to the
     * environment when maintenance is on), the Gold tables, each Gold table's reads (those of the
     * INSERTs into it), and the tables maintained in the job ({@code db.table}; empty when
     * maintenance is off).
     */
    private record Planned(
            StreamTableEnvironment tEnv,
            StatementSet set,
            Map<String, Table> gold,
            Map<String, List<GoldSqlStart.Read>> readsOf,
            List<List<String>> targets,
            List<String> maintained) {}

    /**
     * The part of a run shared by the local and the cluster form: the session over {@code env}, the
     * catalog options (bounded reads, the default starting version, the source version log), the
     * file's statements, the Gold tables' maintenance when on (before anything is emptied), the
     * start check and the emptying of the Gold tables.
     *
     * @param cluster the cluster's configuration (the Gold tables are emptied only for a start
     *     without state, {@link #startsWithoutState}); null for a local run (always emptied)
     */
    private static Planned prepare(
            File file,
            StreamExecutionEnvironment env,
            CatalogSettings settings,
            Options o,
            String sourceVersionLog,
            @Nullable ReadableConfig cluster,
            TableMaintenanceOptions maintenance) {
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(env, EnvironmentSettings.inStreamingMode());
        Map<String, String> catalogOptions = new HashMap<>();
        if (o.bounded) {
            catalogOptions.put(ChangeflowCatalog.CHANGELOG_DEFAULTS_PREFIX + "bounded", "true");
        }
        if (o.startingVersion != null) {
            catalogOptions.put(
                    ChangeflowCatalog.CHANGELOG_DEFAULTS_PREFIX
                            + ChangeFeedOptions.STARTING_VERSION.key(),
                    Long.toString(o.startingVersion));
        }
        catalogOptions.put(ChangeflowCatalog.SOURCE_VERSION_LOG, sourceVersionLog);
        List<List<String>> targets = new ArrayList<>();
        List<List<ChangeflowCatalog.ChangelogRead>> reads = new ArrayList<>();
        StatementSet set = plan(file, tEnv, settings, catalogOptions, o.out, targets, reads);
        try {
            List<String> maintained =
                    maintenance.enabled()
                            ? attachMaintenance(file, env, set, targets, settings, maintenance)
                            : List.of();
            Map<String, List<GoldSqlStart.Read>> readsOf = readsOf(tEnv, targets, reads);
            Map<String, Table> gold = start(tEnv, targets, readsOf, cluster, o.out);
            return new Planned(tEnv, set, gold, readsOf, targets, maintained);
        } catch (RuntimeException e) {
            // a maintenance lock that cannot be opened, GOLD_VERSION_MISMATCH: the tables the
            // file's CREATE statements made go too
            dropCreated(changeflowCatalog(tEnv), e);
            throw e;
        }
    }

    /** Whether a job's failure is its cancellation. */
    private static boolean cancelled(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getClass().getSimpleName().equals("JobCancellationException")) {
                return true;
            }
        }
        return false;
    }

    private static ChangeflowCatalog changeflowCatalog(StreamTableEnvironment tEnv) {
        return (ChangeflowCatalog) tEnv.getCatalog(CATALOG).orElseThrow();
    }

    /**
     * Each Gold table's reads: those of the INSERTs into it ({@code reads}, per INSERT in the order
     * of {@code targets}), merged per Silver table ({@link GoldSqlStart#reads}), by Gold table name
     * ({@code db.table}, as {@link #start} names them).
     */
    private static Map<String, List<GoldSqlStart.Read>> readsOf(
            StreamTableEnvironment tEnv,
            List<List<String>> targets,
            List<List<ChangeflowCatalog.ChangelogRead>> reads) {
        Map<String, List<ChangeflowCatalog.ChangelogRead>> byGold = new LinkedHashMap<>();
        for (int i = 0; i < targets.size(); i++) {
            List<String> t = targets.get(i);
            if (tEnv.getCatalog(t.get(0)).orElse(null) instanceof FlinkCatalog) {
                byGold.computeIfAbsent(String.join(".", t.subList(1, 3)), k -> new ArrayList<>())
                        .addAll(reads.get(i));
            }
        }
        Map<String, List<GoldSqlStart.Read>> readsOf = new LinkedHashMap<>();
        byGold.forEach((g, r) -> readsOf.put(g, GoldSqlStart.reads(r)));
        return readsOf;
    }

    /**
     * G3 before the job starts, per Gold table and the reads of its own INSERTs ({@code readsOf}):
     * checks each such read's explicit starting version against the table's recorded version, then
     * empties each Gold table that holds rows and whose reads all start with a snapshot, marking
     * where its reads start ({@link GoldSqlStart}).
     *
     * <p>On a cluster ({@code cluster} not null) the tables are emptied only for a start without
     * state ({@link #startsWithoutState}), and the emptying commits record the fixed job id.
     *
     * @return the Gold tables (INSERT targets in Iceberg catalogs), by name
     * @throws GoldException {@code GOLD_VERSION_MISMATCH}, before anything is committed
     */
    private static Map<String, Table> start(
            StreamTableEnvironment tEnv,
            List<List<String>> targets,
            Map<String, List<GoldSqlStart.Read>> readsOf,
            @Nullable ReadableConfig cluster,
            PrintStream out) {
        ChangeflowCatalog changeflow = changeflowCatalog(tEnv);
        Map<String, Table> gold = new LinkedHashMap<>();
        for (List<String> t : targets) {
            Catalog catalog = tEnv.getCatalog(t.get(0)).orElse(null);
            if (catalog instanceof FlinkCatalog flink) {
                gold.putIfAbsent(
                        String.join(".", t.subList(1, 3)),
                        flink.catalog()
                                .loadTable(TableIdentifier.of(Namespace.of(t.get(1)), t.get(2))));
            }
        }
        GoldSqlStart.check(
                gold, readsOf, name -> changeflow.catalog().loadTable(TableIdentifier.parse(name)));
        List<String> rebuilt =
                gold.keySet().stream()
                        .filter(g -> GoldSqlStart.rebuilds(readsOf.getOrDefault(g, List.of())))
                        .toList();
        if (rebuilt.isEmpty()) {
            return gold;
        }
        String jobId = null;
        if (cluster != null) {
            if (!startsWithoutState(cluster, gold)) {
                out.println(
                        "The job restores its state (a savepoint or checkpoint, or its recovered"
                                + " job id): the Gold tables are kept as they are");
                return gold;
            }
            jobId = cluster.getOptional(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID).orElse(null);
        }
        Map<String, Long> next = new HashMap<>(); // Silver table -> its latest version + 1
        for (String g : rebuilt) {
            Map<String, Long> first = new TreeMap<>();
            for (GoldSqlStart.Read read : readsOf.get(g)) {
                long v =
                        read.startingVersion() != null
                                ? read.startingVersion()
                                : next.computeIfAbsent(
                                        read.table(),
                                        name -> {
                                            Table silver =
                                                    changeflow
                                                            .catalog()
                                                            .loadTable(TableIdentifier.parse(name));
                                            return (silver.currentSnapshot() == null
                                                            ? 0
                                                            : silver.currentSnapshot()
                                                                    .sequenceNumber())
                                                    + 1;
                                        });
                first.put(read.table(), v);
            }
            if (GoldSqlStart.reset(gold.get(g), first, jobId)) {
                out.printf(
                        "Gold table %s: emptied; rebuilt from Silver %s%n",
                        g,
                        first.entrySet().stream()
                                .map(e -> e.getKey() + " as of version " + (e.getValue() - 1))
                                .collect(Collectors.joining(", ")));
            }
        }
        return gold;
    }

    /**
     * Runs the file's non-INSERT statements in {@code tEnv} (a STREAMING session), prepares each
     * INSERT's target, and returns the statement set of the INSERTs, not yet executed.
     *
     * @throws SqlException see the class comment
     */
    public static StatementSet plan(
            File file,
            StreamTableEnvironment tEnv,
            CatalogSettings settings,
            boolean bounded,
            PrintStream out) {
        return plan(
                file,
                tEnv,
                settings,
                bounded
                        ? Map.of(ChangeflowCatalog.CHANGELOG_DEFAULTS_PREFIX + "bounded", "true")
                        : Map.of(),
                out,
                new ArrayList<>(),
                new ArrayList<>());
    }

    /**
     * Flink's {@code table.exec.sink.upsert-materialize}: {@code FORCE} unless the file sets it
     * (see {@link #plan}).
     */
    static final String UPSERT_MATERIALIZE = "table.exec.sink.upsert-materialize";

    /**
     * As {@link #plan(File, StreamTableEnvironment, CatalogSettings, boolean, PrintStream)}, with
     * the catalog's extra options, the INSERTs' targets ({@code [catalog, db, table]}, in file
     * order) added to {@code targets} and each INSERT's changelog reads (in the same order) to
     * {@code reads}.
     *
     * <p><b>Which reads are an INSERT's</b> (G2, G3 per INSERT, issue #16): the {@code t$changelog}
     * reads the catalog records ({@link ChangeflowCatalog#changelogReads}) while that INSERT alone
     * is prepared and added to the statement set. Flink converts an INSERT's query to its
     * relational plan when the statement is added ({@link StatementSet#addInsertSql} parses,
     * validates and converts it), and the conversion creates one table source per table reference
     * of the query — through views, CTEs and subqueries too — so the reads recorded in between are
     * exactly the query's (each INSERT is planned alone here, so nothing of another INSERT is among
     * them). The mapping is by Silver table name ({@code db.t}), not by read instance, because the
     * optimizer of the whole statement set may merge equal scans of different INSERTs into one
     * source (source reuse) whose instance is then another INSERT's; a Silver table name survives
     * that, and walking Flink's optimized plan (whose node classes are internal) is not needed.
     * Each target in catalog {@value #CATALOG} is then given its INSERTs' Silver tables ({@link
     * ChangeflowCatalog#addInsertReads}) before its sink is created, so its commits record those
     * tables' versions only.
     */
    static StatementSet plan(
            File file,
            StreamTableEnvironment tEnv,
            CatalogSettings settings,
            Map<String, String> catalogOptions,
            PrintStream out,
            List<List<String>> targets,
            List<List<ChangeflowCatalog.ChangelogRead>> reads) {
        FlinkSqlSession.open(tEnv, settings, CATALOG, catalogOptions);
        ChangeflowCatalog changeflow = changeflowCatalog(tEnv);
        try {
            return planStatements(file, tEnv, changeflow, out, targets, reads);
        } catch (RuntimeException e) {
            dropCreated(changeflow, e);
            throw e;
        }
    }

    /**
     * Nothing is written when a file fails validation (issue #16): drops the tables and then the
     * (empty) databases that the file's own {@code CREATE} statements created in catalog {@value
     * #CATALOG} ({@link ChangeflowCatalog#createdTables}), newest first. A table or database that
     * existed before the run is never dropped. A failure to drop is added to {@code failure} as a
     * suppressed exception.
     */
    private static void dropCreated(ChangeflowCatalog changeflow, RuntimeException failure) {
        List<ObjectPath> tables = new ArrayList<>(changeflow.createdTables());
        java.util.Collections.reverse(tables);
        for (ObjectPath t : tables) {
            try {
                changeflow.dropTable(t, true);
            } catch (Exception e) {
                failure.addSuppressed(e);
            }
        }
        List<String> databases = new ArrayList<>(changeflow.createdDatabases());
        java.util.Collections.reverse(databases);
        for (String d : databases) {
            try {
                if (changeflow.listTables(d).isEmpty()) {
                    changeflow.dropDatabase(d, true, false);
                }
            } catch (Exception e) {
                failure.addSuppressed(e);
            }
        }
    }

    private static StatementSet planStatements(
            File file,
            StreamTableEnvironment tEnv,
            ChangeflowCatalog changeflow,
            PrintStream out,
            List<List<String>> targets,
            List<List<ChangeflowCatalog.ChangelogRead>> reads) {
        List<SqlScript.Statement> inserts = new ArrayList<>();
        for (SqlScript.Statement s : file.statements()) {
            if (s.startsWith("INSERT")) {
                inserts.add(s);
                // resolved now: a later USE does not change where an earlier INSERT writes
                targets.add(resolve(tEnv, s.target()));
                continue;
            }
            Matcher set = SET.matcher(s.text());
            Matcher reset = RESET.matcher(s.text());
            if (s.startsWith("SET")
                    && set.matches()
                    && isMaintenanceKey(set.group(1).replace("''", "'"))) {
                continue; // the Gold tables' maintenance (#maintenance), not Flink's setting
            }
            if (s.startsWith("RESET")
                    && reset.matches()
                    && isMaintenanceKey(reset.group(1).replace("''", "'"))) {
                continue;
            }
            if (s.startsWith("SET") && set.matches()) {
                // Flink's TableEnvironment runs no SET (its SQL client does): set the session's
                // configuration, which the job's configuration takes when it is planned
                tEnv.getConfig()
                        .getConfiguration()
                        .setString(
                                set.group(1).replace("''", "'"), set.group(2).replace("''", "'"));
                continue;
            }
            if (s.startsWith("RESET") && reset.matches()) {
                tEnv.getConfig().getConfiguration().removeKey(reset.group(1).replace("''", "'"));
                continue;
            }
            try {
                FlinkSqlSession.execute(tEnv, s.text());
            } catch (RuntimeException e) {
                throw translate(s, e);
            }
        }
        // G1: Gold tables are written by upsert, and Iceberg's upsert writer ignores -U rows (it
        // replaces a key on +U). A filter whose condition an update's new image fails (WHERE on a
        // changelog, HAVING) passes the -U and drops the +U: without the materializer the Gold
        // row would stay. Flink's upsert materializer turns a retraction that leaves a key without
        // rows into a -D of the key. A file that sets the option keeps its own value.
        if (!tEnv.getConfig().getConfiguration().containsKey(UPSERT_MATERIALIZE)) {
            tEnv.getConfig().getConfiguration().setString(UPSERT_MATERIALIZE, "FORCE");
        }
        // Nothing is written before every INSERT validates (issue #16): each target is checked and
        // each INSERT planned alone against it first; only then are targets made upsert tables
        // (before their sinks are created, which take the table's properties)
        List<Runnable> upserts = new ArrayList<>();
        for (int i = 0; i < inserts.size(); i++) {
            SqlScript.Statement s = inserts.get(i);
            List<String> target = targets.get(i);
            Runnable upsert = checkTarget(tEnv, s, target, out);
            if (upsert != null) {
                upserts.add(upsert);
                try {
                    tEnv.explainSql(s.text());
                } catch (RuntimeException e) {
                    throw invalid(s, target, e);
                }
            }
        }
        upserts.forEach(Runnable::run);
        StatementSet set = tEnv.createStatementSet();
        for (int i = 0; i < inserts.size(); i++) {
            SqlScript.Statement s = inserts.get(i);
            List<String> target = targets.get(i);
            int before = changeflow.changelogReads().size();
            try {
                set.addInsertSql(s.text());
            } catch (RuntimeException e) {
                throw invalid(s, target, e);
            }
            List<ChangeflowCatalog.ChangelogRead> all = changeflow.changelogReads();
            List<ChangeflowCatalog.ChangelogRead> own = all.subList(before, all.size());
            reads.add(own);
            if (CATALOG.equals(target.get(0))) {
                changeflow.addInsertReads(
                        new ObjectPath(target.get(1), target.get(2)),
                        own.stream().map(ChangeflowCatalog.ChangelogRead::table).toList());
            }
        }
        // G3: the Gold tables are emptied before the job runs, so every INSERT must plan (column
        // types and names against the sink included, which addInsertSql does not check) before
        try {
            set.explain();
        } catch (RuntimeException all) {
            for (int i = 0; i < inserts.size(); i++) {
                try {
                    tEnv.explainSql(inserts.get(i).text());
                } catch (RuntimeException e) {
                    throw invalid(inserts.get(i), targets.get(i), e);
                }
            }
            throw invalid(inserts.get(0), targets.get(0), all);
        }
        return set;
    }

    /**
     * An INSERT Flink cannot plan: {@link #translate}'s error when it has one, else {@code
     * INVALID_QUERY} at the statement (at the place Flink names, when it names one inside the
     * statement), with Flink's message.
     */
    private static RuntimeException invalid(
            SqlScript.Statement s, List<String> target, RuntimeException e) {
        RuntimeException t = translate(s, e);
        if (t != e) {
            return t;
        }
        String detail = String.valueOf(e.getMessage()).strip();
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root != e && root.getMessage() != null && !detail.contains(root.getMessage().strip())) {
            detail = detail + " (cause: " + root.getMessage().strip() + ")";
        }
        // Flink repeats "SQL validation failed. " for a validator error wrapped twice
        detail =
                detail.replaceAll("\\s*\n\\s*", " ")
                        .replaceAll("(SQL validation failed\\. )+", "SQL validation failed. ");
        SqlPosition at = s.position();
        Matcher span = SPAN.matcher(detail);
        if (span.find()) {
            int line = Integer.parseInt(span.group(1));
            int column = Integer.parseInt(span.group(2));
            at =
                    new SqlPosition(
                            at.file(),
                            at.line() + line - 1,
                            line == 1 ? at.column() + column - 1 : column);
        }
        return new SqlException(
                Code.INVALID_QUERY,
                at,
                "INSERT INTO "
                        + String.join(".", target)
                        + ": Flink cannot plan it, so nothing was run and no Gold table was"
                        + " changed: "
                        + detail,
                e);
    }

    private static List<String> resolve(StreamTableEnvironment tEnv, List<String> target) {
        List<String> full = new ArrayList<>();
        if (target.size() < 3) {
            full.add(tEnv.getCurrentCatalog());
        }
        if (target.size() < 2) {
            full.add(tEnv.getCurrentDatabase());
        }
        full.addAll(target);
        return full;
    }

    /**
     * Checks that the target exists and refuses an update stream into one without primary key; for
     * a target with a primary key, returns what makes it an Iceberg upsert table (format v2+,
     * {@code write.upsert.enabled}), run only once every INSERT validated (a no-op when it is one
     * already, or not an Iceberg table); null for a target without primary key (whose query the
     * check planned already).
     */
    @Nullable
    private static Runnable checkTarget(
            StreamTableEnvironment tEnv,
            SqlScript.Statement insert,
            List<String> target,
            PrintStream out) {
        String shown = String.join(".", target);
        if (target.size() != 3) {
            throw new SqlException(
                    Code.SYNTAX_ERROR,
                    insert.position(),
                    "INSERT INTO " + shown + ": expected [[catalog.]db.]table");
        }
        Catalog catalog = tEnv.getCatalog(target.get(0)).orElse(null);
        ObjectPath path = new ObjectPath(target.get(1), target.get(2));
        CatalogBaseTable table;
        try {
            table = catalog == null ? null : catalog.getTable(path);
        } catch (Exception e) {
            table = null;
        }
        if (table == null) {
            throw new SqlException(
                    Code.UNKNOWN_TABLE,
                    insert.position(),
                    "INSERT INTO "
                            + shown
                            + ": no such table; create it first (CREATE TABLE "
                            + target.get(1)
                            + "."
                            + target.get(2)
                            + " (..., PRIMARY KEY (...) NOT ENFORCED))");
        }
        boolean hasKey = table.getUnresolvedSchema().getPrimaryKey().isPresent();
        if (!hasKey) {
            if (updates(tEnv, insert, target)) {
                throw new SqlException(
                        Code.UPDATES_WITHOUT_PRIMARY_KEY,
                        insert.position(),
                        "INSERT INTO "
                                + shown
                                + ": the query is an update stream (its rows are updated and"
                                + " retracted as Silver changes), and the table has no PRIMARY KEY,"
                                + " so Iceberg would append retractions as rows. Declare the key"
                                + " the query's rows are unique by: CREATE TABLE ... (...,"
                                + " PRIMARY KEY (...) NOT ENFORCED)");
            }
            return null;
        }
        if (!(catalog instanceof FlinkCatalog flink)) {
            return () -> {};
        }
        return () -> {
            Table iceberg =
                    flink.catalog()
                            .loadTable(
                                    TableIdentifier.of(Namespace.of(target.get(1)), target.get(2)));
            UpdateProperties update = iceberg.updateProperties();
            boolean change = false;
            if (TableUtil.formatVersion(iceberg) < 2) {
                update.set(TableProperties.FORMAT_VERSION, "2");
                change = true;
            }
            if (!"true"
                    .equalsIgnoreCase(iceberg.properties().get(TableProperties.UPSERT_ENABLED))) {
                update.set(TableProperties.UPSERT_ENABLED, "true");
                change = true;
            }
            if (change) {
                update.commit();
                out.printf(
                        "Gold table %s: set %s=true (format version 2 or later): written by"
                                + " upsert on its primary key%n",
                        shown, TableProperties.UPSERT_ENABLED);
            }
        };
    }

    /**
     * Whether the INSERT's query emits other rows than inserts, by the changelog mode Flink's
     * planner gives the sink's input.
     */
    private static boolean updates(
            StreamTableEnvironment tEnv, SqlScript.Statement insert, List<String> target) {
        try {
            return FlinkSqlSession.insertEmitsUpdates(tEnv, insert.text());
        } catch (RuntimeException e) {
            throw invalid(insert, target, e);
        }
    }

    /**
     * A Flink error while planning {@code s}: an unknown table becomes {@code UNKNOWN_TABLE} naming
     * it; a change-feed error its {@code CdfException}; others stay as they are.
     */
    private static RuntimeException translate(SqlScript.Statement s, RuntimeException e) {
        RuntimeException cdf = FlinkSqlSession.unwrapCdf(e);
        if (cdf != e) {
            return cdf;
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            Matcher m = t.getMessage() == null ? null : NOT_FOUND.matcher(t.getMessage());
            if (m != null && m.find()) {
                // Calcite names the first part it could not resolve (the database for db.t); the
                // span it reports gives the name as written
                Matcher span = SPAN.matcher(String.valueOf(e.getMessage()));
                String written = span.find() ? span(s.text(), span) : null;
                String name =
                        written != null
                                ? written
                                : m.group(2) != null ? m.group(2) + "." + m.group(1) : m.group(1);
                return new SqlException(
                        Code.UNKNOWN_TABLE,
                        s.position(),
                        "table " + name + " does not exist (" + firstLine(e) + ")",
                        e);
            }
        }
        return e;
    }

    /** The text between two 1-based line/column positions (inclusive) of {@code text}. */
    private static String span(String text, Matcher m) {
        int from = offset(text, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        int to = offset(text, Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)));
        return from < 0 || to < from || to >= text.length() ? null : text.substring(from, to + 1);
    }

    private static int offset(String text, int line, int column) {
        int at = 0;
        for (int l = 1; l < line; l++) {
            at = text.indexOf('\n', at) + 1;
            if (at == 0) {
                return -1;
            }
        }
        return at + column - 1;
    }

    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}

package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.maintain.MaintenanceActions;
import dev.changeflow.jobs.maintain.TablePurge;
import dev.changeflow.jobs.sql.FlinkSqlSession;
import dev.changeflow.jobs.sql.MaintenanceStatement;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;
import dev.changeflow.sources.cdf.sql.TableChangesRewrite;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.client.JobCancellationException;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.ResultKind;
import org.apache.flink.table.api.SqlParserException;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableException;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.Closeable;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code changeflow sql -e STATEMENT ...}: runs Flink SQL statements on the embedded default (a
 * local MiniCluster, BATCH mode unless {@code --streaming}) against catalog {@value #CATALOG} of
 * type {@code changeflow} over the warehouse (or {@code --catalog} properties), after rewriting
 * {@code table_changes('db.t', start[, end])} ({@link TableChangesRewrite}). A query prints CSV
 * with a header (NULL as an empty field, as {@code show} prints); other statements (DDL, {@code
 * INSERT} after its job finished) print {@code OK}. Jobs run at the local default parallelism (the
 * number of cores). Rows print in the order the query's job emits them: a plain read of a bounded
 * change feed ({@code SELECT * FROM table_changes('db.t', 1, 4)}) prints in version order; a query
 * that re-distributes rows (join, GROUP BY) needs {@code ORDER BY _commit_version}, which BATCH
 * mode supports on any column.
 *
 * <p>In STREAMING mode a query's result is a changelog (semantics.md G1: {@code db.`t$changelog`},
 * or any aggregate or join): each row starts with its row kind in column {@code op} ({@code +I},
 * {@code -U}, {@code +U}, {@code -D}), as Flink's SQL client prints it. {@code SELECT *} leaves out
 * virtual metadata columns ({@link ChangeflowCatalog#excludeMetadataColumnsFromSelectStar}: {@code
 * _commit_version} and {@code _commit_timestamp} of {@code t$changelog} are selectable by name).
 *
 * <p>Table-maintenance statements run outside Flink SQL ({@link MaintenanceStatement}): {@code
 * OPTIMIZE t} (compaction, M1), {@code REORG TABLE t APPLY (PURGE)} (M3, S6; exit code 3 while a
 * live consumer needs older versions, as {@code maintain --purge}) and {@code VACUUM t [RETAIN n
 * HOURS]} (orphan files, M2), each printing {@code maintain}'s report; a table named without
 * namespace is in the session's current database.
 *
 * <p>A change-feed error ({@code CdfException}, F3/F4) is reported with its code: exit code 2 for
 * bad input ({@code INVALID_CDC_OPTIONS}, {@code INVALID_TIMESTAMP}, {@code INVALID_CDC_RANGE}, and
 * a table refused for what it is: {@code UNSUPPORTED_FORMAT_VERSION}, {@code
 * RESERVED_COLUMN_NAME}), exit code 1 for a range the table's history cannot serve now ({@link
 * Main}). A statement Flink SQL cannot parse is {@code SYNTAX_ERROR} at {@code statement
 * N:line:column} with what Flink encountered (exit code 2); a word one edit away from OPTIMIZE,
 * REORG or VACUUM ({@code OPTIMISE t}) is a {@code SYNTAX_ERROR} that names the keyword ({@code did
 * you mean OPTIMIZE?}).
 *
 * <p>A new warehouse (no folder yet) or an empty one has no database: {@code SHOW DATABASES} and
 * {@code SHOW TABLES} print their header only and nothing is created ({@link ChangeflowCatalog}
 * lists the session's missing {@code default} database as empty). A statement that needs a database
 * the catalog does not have is {@code UNKNOWN_DATABASE} naming it, one that needs a table it does
 * not have {@code TABLE_NOT_FOUND} ({@link #missingObject}; exit code 2; docs/semantics.md, F
 * introduction). Any other statement Flink parses but cannot validate is {@code UNKNOWN_COLUMN} (a
 * column no table of the statement has), {@code UNKNOWN_FUNCTION} (a function Flink does not know)
 * or {@code INVALID_QUERY}, at the place Flink names, with Flink's message ({@link
 * #validationError}; exit code 2).
 */
@Command(
        name = "sql",
        mixinStandardHelpOptions = true,
        description =
                "Run Flink SQL statements on the local warehouse. table_changes(...) and db.`t$changes` "
                        + "read change feeds; db.`t$changelog` reads one as a changelog (+I/-U/+U/-D row "
                        + "kinds, --streaming only; add /*+ OPTIONS('bounded'='true') */ for a read that "
                        + "finishes). SELECT * leaves out the virtual metadata columns _commit_version "
                        + "and _commit_timestamp of t$changelog; select them by name. OPTIMIZE t, "
                        + "REORG TABLE t APPLY (PURGE) and VACUUM t [RETAIN n HOURS] maintain a table "
                        + "(as changeflow maintain).")
public final class SqlCommand implements Callable<Integer> {
    /** Name of the catalog the statements run in. */
    static final String CATALOG = "changeflow";

    /**
     * Exit code when a {@code REORG ... APPLY (PURGE)} left older snapshots (as {@code maintain}).
     */
    static final int PURGE_INCOMPLETE = 3;

    /**
     * Consumers of a purged table's change feed silent for longer than this keep nothing (F7), as
     * {@code maintain --purge}'s default {@code --consumer-expiry}.
     */
    static final Duration PURGE_CONSUMER_EXPIRY =
            OptionParsers.duration(CliOptions.Expiry.DEFAULT_CONSUMER_EXPIRY, "--consumer-expiry");

    /** Header of the row-kind column of STREAMING-mode results, as Flink's SQL client names it. */
    static final String ROW_KIND_COLUMN = "op";

    @Option(
            names = {"-e", "--execute"},
            paramLabel = "STATEMENT",
            required = true,
            description = "Statement to run; repeat for several, run in order.")
    List<String> statements;

    @Mixin CliOptions.Warehouse local;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description = "Iceberg catalog property; replaces the local Hadoop catalog.")
    Map<String, String> catalog;

    @Option(
            names = "--streaming",
            description =
                    "Run in STREAMING mode: t$changes and table_changes(...) reads without an ending "
                            + "version, and t$changelog reads without 'bounded'='true', follow the table "
                            + "until stopped (Ctrl-C); query rows start with their row kind, column op "
                            + "(+I, -U, +U, -D).")
    boolean streaming;

    @Option(
            names = "--checkpoint-interval",
            paramLabel = "DURATION",
            defaultValue = "5s",
            description =
                    "STREAMING mode: checkpoint interval of a run with a statement that writes"
                            + " (INSERT, EXECUTE) or registers a change-feed consumer"
                            + " ('consumer-id'): Iceberg commits and the consumer's position are"
                            + " written at checkpoints. Default: ${DEFAULT-VALUE}. Other runs take"
                            + " no checkpoint, so their rows print as they come.")
    String checkpointInterval;

    /**
     * Whether a STREAMING run checkpoints: when a statement writes (an unbounded {@code INSERT}
     * commits to Iceberg only at checkpoints) or names {@code consumer-id} (the consumer's position
     * is registered at checkpoints, F7). Queries alone do not: with checkpoints Flink's collect
     * shows rows only once a checkpoint completed.
     */
    static boolean needsCheckpoints(List<String> statements) {
        for (String statement : statements) {
            String lower = statement.strip().toLowerCase(Locale.ROOT);
            if (lower.startsWith("insert")
                    || lower.startsWith("execute")
                    || lower.contains("consumer-id")) {
                return true;
            }
        }
        return false;
    }

    /** Where results print (standard output; tests replace it). */
    PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
        CatalogSettings settings = CliOptions.catalogSettings(local.warehouse, catalog, CATALOG);
        TableEnvironment tEnv =
                TableEnvironment.create(
                        streaming
                                ? EnvironmentSettings.inStreamingMode()
                                : EnvironmentSettings.inBatchMode());
        if (streaming && needsCheckpoints(statements)) {
            tEnv.getConfig()
                    .set(
                            CheckpointingOptions.CHECKPOINTING_INTERVAL,
                            OptionParsers.duration(checkpointInterval, "--checkpoint-interval"));
        }
        FlinkSqlSession.open(tEnv, settings, CATALOG, Map.of());
        int exit = 0;
        for (int i = 0; i < statements.size(); i++) {
            String statement = statements.get(i);
            Optional<MaintenanceStatement> maintenance =
                    MaintenanceStatement.parse(statement, "statement " + (i + 1));
            if (maintenance.isPresent()) {
                if (!maintain(
                        maintenance.get(),
                        settings,
                        tEnv.getCurrentDatabase(),
                        "statement " + (i + 1),
                        () -> databases(tEnv))) {
                    exit = PURGE_INCOMPLETE;
                }
                continue;
            }
            String rewritten = TableChangesRewrite.rewrite(statement);
            TableResult result;
            try {
                if (streaming) {
                    refuseUpdatesWithoutPrimaryKey(tEnv, rewritten, "statement " + (i + 1));
                }
                result = execute(tEnv, rewritten);
            } catch (SqlParserException e) {
                throw syntaxError(e, "statement " + (i + 1));
            } catch (AssertionError e) {
                // Calcite's own checks, e.g. an unknown hint or OPTIONS() without key-value pairs
                throw new SqlException(
                        SqlException.Code.INVALID_QUERY,
                        new SqlPosition("statement " + (i + 1), 1, 1),
                        "Flink cannot plan the statement: " + e.getMessage());
            } catch (RuntimeException e) {
                String label = "statement " + (i + 1);
                throw missingObject(
                                e,
                                label,
                                rewritten,
                                tEnv.getCurrentDatabase(),
                                () -> databases(tEnv))
                        .or(() -> validationError(e, label))
                        .orElseThrow(() -> e);
            }
            try {
                print(rewritten, result, streaming, out);
            } catch (Exception e) {
                throw queryFailed(e, "statement " + (i + 1) + ":1:1", result.getJobClient());
            }
        }
        return exit;
    }

    /**
     * Runs a maintenance statement on its table ({@link MaintenanceActions}) and prints its report.
     *
     * @param database the session's current database: the namespace of a table named without one
     * @param label the statement's place ({@code statement N}) for errors
     * @param databases the catalog's databases, for the error of a missing table
     * @return false when a purge could not expire every older snapshot (a live consumer needs one)
     * @throws SqlException {@code UNKNOWN_DATABASE} or {@code TABLE_NOT_FOUND} (as for any
     *     statement) when the table does not exist
     */
    private boolean maintain(
            MaintenanceStatement s,
            CatalogSettings settings,
            String database,
            String label,
            Supplier<List<String>> databases)
            throws Exception {
        TableIdentifier named = s.table();
        String[] levels = named.namespace().levels();
        if (levels.length > 1 && levels[0].equals(CATALOG)) {
            // catalog.db.table, as the reports name it
            named =
                    TableIdentifier.of(
                            Namespace.of(Arrays.copyOfRange(levels, 1, levels.length)),
                            named.name());
        }
        TableIdentifier id =
                named.hasNamespace()
                        ? named
                        : TableIdentifier.of(Namespace.of(database), named.name());
        Catalog cat = settings.open();
        try {
            if (!cat.tableExists(id)) {
                throw missingTable(
                        new SqlPosition(label, 1, 1),
                        id.namespace().toString(),
                        id.name(),
                        named.hasNamespace(),
                        database,
                        databases.get());
            }
            Table t = cat.loadTable(id);
            switch (s.kind()) {
                case OPTIMIZE -> out.println(MaintenanceActions.rewrite(settings, id, t));
                case VACUUM ->
                        out.println(MaintenanceActions.removeOrphans(settings, id, t, s.retain()));
                case PURGE -> {
                    TablePurge.Result r =
                            MaintenanceActions.purge(settings, id, t, PURGE_CONSUMER_EXPIRY);
                    out.println(r == null ? MaintenanceActions.nothingToPurge(id) : r.describe());
                    return r == null || r.complete();
                }
            }
            return true;
        } finally {
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
        }
    }

    /**
     * STREAMING mode: an {@code INSERT} whose query emits updates or deletes (an aggregate, a join,
     * a {@code t$changelog} read) into a table without primary key is refused, as the Gold job
     * refuses it: Iceberg would append the retractions as rows.
     *
     * @throws SqlException {@code UPDATES_WITHOUT_PRIMARY_KEY} naming the table and the fix
     */
    private static void refuseUpdatesWithoutPrimaryKey(
            TableEnvironment tEnv, String statement, String label) {
        List<org.apache.flink.table.operations.Operation> ops =
                ((org.apache.flink.table.api.internal.TableEnvironmentInternal) tEnv)
                        .getParser()
                        .parse(statement);
        if (ops.size() != 1
                || !(ops.get(0)
                        instanceof org.apache.flink.table.operations.SinkModifyOperation sink)) {
            return;
        }
        if (sink.getContextResolvedTable().getResolvedSchema().getPrimaryKey().isPresent()
                || !FlinkSqlSession.insertEmitsUpdates(tEnv, statement)) {
            return;
        }
        throw new SqlException(
                SqlException.Code.UPDATES_WITHOUT_PRIMARY_KEY,
                new SqlPosition(label, 1, 1),
                "INSERT INTO "
                        + sink.getContextResolvedTable().getIdentifier().asSummaryString()
                        + ": the query is an update stream (its rows are updated and retracted as"
                        + " its input changes), and the table has no PRIMARY KEY, so Iceberg would"
                        + " append retractions as rows. Declare the key the query's rows are unique"
                        + " by: CREATE TABLE ... (..., PRIMARY KEY (...) NOT ENFORCED)");
    }

    /**
     * A statement's job that failed while it ran (a division by zero, a value that does not cast,
     * ...): its change-feed error as it is, else {@code QUERY_FAILED} naming the statement and the
     * innermost cause (exit code 1: the statement was valid, its run failed).
     *
     * <p>Flink's collect can lose the race with the end of the job it reads: the rows' iterator
     * then fails only with "could not fetch more results", without the job's cause. So when {@code
     * e} carries no {@link dev.changeflow.sources.cdf.CdfException}, the job's own result is looked
     * up (at most {@value #JOB_RESULT_WAIT_S} s; a job still running then is left as it is) and its
     * failure gives the change-feed error or the innermost cause.
     *
     * @param e what printing the statement's rows (or awaiting its job) threw
     * @param label the statement's place, {@code statement N:1:1}
     * @param job the statement's job, when it ran one
     */
    static RuntimeException queryFailed(Exception e, String label, Optional<JobClient> job) {
        Throwable cause = e;
        dev.changeflow.sources.cdf.CdfException cdf = cdfIn(e);
        if (cdf == null && job.isPresent()) {
            try {
                job.get().getJobExecutionResult().get(JOB_RESULT_WAIT_S, TimeUnit.SECONDS);
            } catch (Exception jobFailure) {
                // a job cancelled because printing its rows failed (the iterator's close
                // cancels it) says nothing more than e
                if (!(jobFailure instanceof TimeoutException)
                        && !ExceptionUtils.findThrowable(jobFailure, JobCancellationException.class)
                                .isPresent()) {
                    e.addSuppressed(jobFailure);
                    cause = jobFailure;
                    cdf = cdfIn(jobFailure);
                }
                if (jobFailure instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (cdf != null) {
            return cdf;
        }
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return new CliErrors.Failed(
                label
                        + ": "
                        + CliErrors.QUERY_FAILED
                        + ": the statement's job failed: "
                        + root.getClass().getSimpleName()
                        + (root.getMessage() != null ? ": " + root.getMessage() : ""),
                e);
    }

    /** Seconds {@link #queryFailed} waits for a failed statement's job to report its result. */
    static final int JOB_RESULT_WAIT_S = 30;

    /** The first change-feed error in {@code e}'s chain of causes, else null. */
    private static dev.changeflow.sources.cdf.CdfException cdfIn(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof dev.changeflow.sources.cdf.CdfException cdf) {
                return cdf;
            }
        }
        return null;
    }

    /** Flink's "Encountered ... at line L, column C" of a parse error. */
    private static final Pattern FLINK_POSITION = Pattern.compile("at line (\\d+), column (\\d+)");

    /**
     * Flink's parse error of statement {@code label} as a {@code SYNTAX_ERROR} at the place Flink
     * names ({@code statement 1:1:1}, else the statement's start), with Flink's first sentence
     * (what it encountered) and, when it lists them, up to 8 of the tokens it expected. Flink's
     * exception is not kept as the cause: its full list of expected tokens is noise on a terminal.
     */
    static SqlException syntaxError(SqlParserException e, String label) {
        String msg = e.getMessage() == null ? "" : e.getMessage();
        Matcher m = FLINK_POSITION.matcher(msg);
        SqlPosition at =
                m.find()
                        ? new SqlPosition(
                                label, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)))
                        : new SqlPosition(label, 1, 1);
        String encountered = msg;
        int found = msg.indexOf("Encountered");
        if (found >= 0) {
            int end = msg.indexOf('\n', found);
            encountered = msg.substring(found, end < 0 ? msg.length() : end).strip();
        } else {
            int end = msg.indexOf('\n');
            encountered = (end < 0 ? msg : msg.substring(0, end)).strip();
        }
        List<String> expecting = new java.util.ArrayList<>();
        int was = msg.indexOf("Was expecting");
        if (was >= 0) {
            for (String line : msg.substring(was).split("\n")) {
                String l = line.strip();
                if (l.startsWith("\"") && expecting.size() < 8) {
                    expecting.add(l.replaceAll("\\s*\\.\\.\\.$", ""));
                }
            }
        }
        return new SqlException(
                SqlException.Code.SYNTAX_ERROR,
                at,
                "Flink SQL cannot parse the statement: "
                        + encountered
                        + (expecting.isEmpty()
                                ? ""
                                : " Expected one of: " + String.join(", ", expecting) + ", ..."));
    }

    /**
     * Flink's ways of saying that a database does not exist (group {@code db} is its name): {@code
     * SHOW TABLES FROM db}, {@code USE db} and a {@code DatabaseNotExistException} ({@code DROP
     * DATABASE db}, ...).
     */
    private static final List<Pattern> MISSING_DATABASE =
            List.of(
                    Pattern.compile("Database '[^']*'\\.'(?<db>[^']+)' doesn't exist"),
                    Pattern.compile("A database with name \\[(?<db>[^\\]]+)\\] does not exist"),
                    Pattern.compile("Database (?<db>[^\\s']+) does not exist"));

    /**
     * Flink's ways of saying that a table does not exist (group {@code id} is its full identifier,
     * {@code catalog.db.t}, each part possibly in backticks): {@code DROP TABLE}, {@code SHOW
     * CREATE TABLE}, {@code INSERT INTO} and {@code DESCRIBE}.
     */
    private static final List<Pattern> MISSING_TABLE =
            List.of(
                    Pattern.compile("Table with identifier '?(?<id>[^' ]+?)'? does not exist"),
                    Pattern.compile("Cannot find table '(?<id>[^']+)' in any of the catalogs"),
                    Pattern.compile("Tables or views with the identifier '(?<id>[^']+)' doesn't"));

    /** Calcite's "Object 'db' not found within 'catalog'": the qualifier or current database. */
    private static final Pattern DATABASE_NOT_FOUND_WITHIN =
            Pattern.compile("Object '(?<db>[^']+)' not found within '" + CATALOG + "'");

    /** Flink's "at line L, column C" / "From line L, column C" of a validation error. */
    private static final Pattern FLINK_PLACE =
            Pattern.compile("[Aa]t line (\\d+), column (\\d+)|From line (\\d+), column (\\d+)");

    /**
     * A Flink error of statement {@code label} that says a database or a table does not exist, as a
     * {@link SqlException} naming it, at the place Flink names (else the statement's start); empty
     * for any other error. Flink's exception is not kept as the cause (its message says the same,
     * in Flink's words). Exit code 2 ({@link Main}), as every error of the statement's text.
     *
     * <ul>
     *   <li>{@code UNKNOWN_DATABASE}: the statement names a database the catalog does not have
     *       ({@code USE shop}, {@code SHOW TABLES FROM shop}, {@code DROP DATABASE shop}, {@code
     *       shop.t} in a query, {@code INSERT INTO}, {@code DROP TABLE} or {@code SHOW CREATE
     *       TABLE}).
     *   <li>{@code TABLE_NOT_FOUND}: the database exists and the table does not, or the table is
     *       named without database while the session's current database does not exist: on a new or
     *       empty warehouse (no database at all) the message says so rather than asking for the
     *       current database, which the user never named.
     * </ul>
     *
     * @param statement the statement Flink ran (its positions are Flink's)
     * @param current the session's current database
     * @param databases the catalog's databases, asked only when an error names a database or table
     */
    static Optional<SqlException> missingObject(
            RuntimeException e,
            String label,
            String statement,
            String current,
            Supplier<List<String>> databases) {
        if (e instanceof SqlException || e instanceof dev.changeflow.sources.cdf.CdfException) {
            return Optional.empty();
        }
        int line = 1;
        int column = 1;
        boolean placed = false; // Flink named a place
        for (Throwable u = e; u != null; u = u.getCause() == u ? null : u.getCause()) {
            Matcher place = FLINK_PLACE.matcher(String.valueOf(u.getMessage()));
            if (place.find()) {
                int g = place.group(1) != null ? 1 : 3;
                line = Integer.parseInt(place.group(g));
                column = Integer.parseInt(place.group(g + 1));
                placed = true;
                break;
            }
        }
        SqlPosition at = new SqlPosition(label, line, column);
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String msg = t.getMessage();
            if (msg == null) {
                continue;
            }
            for (Pattern p : MISSING_DATABASE) {
                Matcher m = p.matcher(msg);
                if (m.find()) {
                    return Optional.of(unknownDatabase(at, m.group("db"), current));
                }
            }
            for (Pattern p : MISSING_TABLE) {
                Matcher m = p.matcher(msg);
                if (m.find()) {
                    List<String> id = identifierParts(m.group("id"));
                    if (id.size() != 3 || !id.get(0).equals(CATALOG)) {
                        return Optional.of(
                                new SqlException(
                                        SqlException.Code.TABLE_NOT_FOUND,
                                        at,
                                        "table " + String.join(".", id) + " does not exist"));
                    }
                    Mention written = mention(statement, id.get(2));
                    SqlPosition where =
                            placed || written == null
                                    ? at
                                    : position(label, statement, written.offset());
                    return Optional.of(
                            missingTable(
                                    where,
                                    id.get(1),
                                    id.get(2),
                                    written == null || written.parts().size() > 1,
                                    current,
                                    databases.get()));
                }
            }
            Matcher within = DATABASE_NOT_FOUND_WITHIN.matcher(msg);
            Matcher object = OBJECT_NOT_FOUND.matcher(msg);
            String name = null;
            if (within.find()) {
                name = within.group("db");
            } else if (object.find()) {
                name = object.group("db");
            }
            if (name == null) {
                continue;
            }
            String written = identifierAt(statement, line, column);
            List<String> parts = written == null ? List.of() : identifierParts(written);
            if (parts.size() >= 2) {
                // db.t whose database is missing, or whose table is (Calcite names the qualifier,
                // or the current database when that is missing)
                return Optional.of(
                        missingTable(
                                at,
                                parts.get(parts.size() - 2),
                                parts.get(parts.size() - 1),
                                true,
                                current,
                                databases.get()));
            }
            if (parts.size() == 1) {
                // t named without database: in the current database, which may be missing
                return Optional.of(
                        missingTable(at, current, parts.get(0), false, current, databases.get()));
            }
            return Optional.of(unknownDatabase(at, name, current));
        }
        return Optional.empty();
    }

    /** Flink's "Column 'c' not found in any table" / "... in table 't'" (group {@code c}). */
    private static final Pattern UNKNOWN_COLUMN =
            Pattern.compile("Column '(?<c>[^']+)' not found in (?:any table|table '[^']+')");

    /** Calcite's "No match found for function signature f(...)" (group {@code f}). */
    private static final Pattern UNKNOWN_FUNCTION =
            Pattern.compile("No match found for function signature (?<f>[^(\\s]+)\\(");

    /**
     * A Flink {@link ValidationException} (or planner {@link TableException}) of statement {@code
     * label} (Flink parsed it but cannot validate or plan it) as a {@link SqlException} at the
     * place Flink names (else the statement's start), whose detail is Flink's message without its
     * "SQL validation failed." prefix, on one line (its position text kept); empty for any other
     * error. Exit code 2 ({@link Main}), as every error of the statement's text. Flink's exception
     * is not kept as the cause: the message is Flink's.
     *
     * <ul>
     *   <li>{@code UNKNOWN_COLUMN}: a column no table of the query has ({@code SELECT nosuch FROM
     *       ns.t}), with a hint to list the columns;
     *   <li>{@code UNKNOWN_FUNCTION}: a function Flink does not know by that name and those
     *       arguments ({@code SELECT nosuch(id) FROM ns.t}), with a hint to list the functions;
     *   <li>{@code INVALID_QUERY}: any other validation error (a type mismatch, an INSERT whose
     *       columns do not match the table's, ...), a planner error (a {@link TableException} such
     *       as {@code ORDER BY} a non-time column in STREAMING mode), or text with more than one
     *       statement in one {@code -e}; also Iceberg's refusal of a filter Flink pushed down to it
     *       (a literal of another type than its column's).
     * </ul>
     *
     * A missing table or database is {@link #missingObject}'s, asked first.
     */
    static Optional<SqlException> validationError(RuntimeException e, String label) {
        String msg = String.valueOf(e.getMessage()).strip();
        if (msg.equals(SINGLE_STATEMENT)) {
            return Optional.of(
                    new SqlException(
                            SqlException.Code.INVALID_QUERY,
                            new SqlPosition(label, 1, 1),
                            "one -e holds one statement: give each statement its own -e (-e"
                                    + " 'CREATE TABLE ...' -e 'INSERT INTO ...')"));
        }
        for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof org.apache.iceberg.exceptions.ValidationException iceberg) {
                // Iceberg refuses a filter Flink pushed down, e.g. a literal that is not of the
                // column's type (WHERE id = 'x' on an INT column)
                return Optional.of(
                        new SqlException(
                                SqlException.Code.INVALID_QUERY,
                                new SqlPosition(label, 1, 1),
                                "Iceberg refuses the statement's filter: "
                                        + iceberg.getMessage()
                                        + " (compare each column with a value of its type, or"
                                        + " CAST it)"));
            }
        }
        if (!(e instanceof ValidationException || isPlannerError(e))) {
            return Optional.empty();
        }
        String prefix = "SQL validation failed.";
        if (msg.startsWith(prefix)) {
            msg = msg.substring(prefix.length()).strip();
        }
        msg = msg.replaceAll("\\s*\\R\\s*", " ");
        Matcher place = FLINK_PLACE.matcher(msg);
        SqlPosition at =
                place.find()
                        ? new SqlPosition(
                                label,
                                Integer.parseInt(place.group(place.group(1) != null ? 1 : 3)),
                                Integer.parseInt(place.group(place.group(1) != null ? 2 : 4)))
                        : new SqlPosition(label, 1, 1);
        Matcher column = UNKNOWN_COLUMN.matcher(msg);
        if (column.find()) {
            return Optional.of(
                    new SqlException(
                            SqlException.Code.UNKNOWN_COLUMN,
                            at,
                            msg + "; DESCRIBE a table lists its columns"));
        }
        Matcher function = UNKNOWN_FUNCTION.matcher(msg);
        if (function.find()) {
            return Optional.of(
                    new SqlException(
                            SqlException.Code.UNKNOWN_FUNCTION,
                            at,
                            msg
                                    + "; no function "
                                    + function.group("f")
                                    + " takes these arguments: SHOW FUNCTIONS lists the"
                                    + " functions"));
        }
        return Optional.of(new SqlException(SqlException.Code.INVALID_QUERY, at, msg));
    }

    /** Flink's message for text with more than one statement. */
    private static final String SINGLE_STATEMENT = "only single statement supported";

    /**
     * A {@link TableException} of the planner: a query Flink validated but cannot run in this mode
     * (e.g. {@code ORDER BY} a non-time column in STREAMING mode); not Flink's "Failed to execute
     * sql", which wraps a failure of the job or its submission.
     */
    private static boolean isPlannerError(RuntimeException e) {
        return e instanceof TableException
                && !String.valueOf(e.getMessage()).startsWith("Failed to execute sql");
    }

    /** {@code UNKNOWN_DATABASE} naming {@code db} and the way to create it. */
    private static SqlException unknownDatabase(SqlPosition at, String db, String current) {
        return new SqlException(
                SqlException.Code.UNKNOWN_DATABASE,
                at,
                "database "
                        + db
                        + (db.equals(current) ? " (the session's current database)" : "")
                        + " does not exist in catalog "
                        + CATALOG
                        + " (check --warehouse); SHOW DATABASES lists its"
                        + " databases, CREATE DATABASE "
                        + db
                        + " creates it");
    }

    /**
     * Table {@code db.table} does not exist: {@code UNKNOWN_DATABASE} when the statement named
     * database {@code db} and the catalog lacks it; else {@code TABLE_NOT_FOUND}, saying where the
     * table was looked for and, when the current database is missing, what the warehouse has.
     *
     * @param qualified whether the statement named the database ({@code db.t})
     */
    private static SqlException missingTable(
            SqlPosition at,
            String db,
            String table,
            boolean qualified,
            String current,
            List<String> databases) {
        boolean dbExists = databases.contains(db);
        if (qualified && !dbExists) {
            return unknownDatabase(at, db, current);
        }
        if (dbExists) {
            return new SqlException(
                    SqlException.Code.TABLE_NOT_FOUND,
                    at,
                    "table "
                            + db
                            + "."
                            + table
                            + " does not exist in catalog "
                            + CATALOG
                            + (qualified ? "" : " (" + db + " is the session's current database)")
                            + "; SHOW TABLES FROM "
                            + db
                            + " lists its tables");
        }
        if (databases.isEmpty()) {
            return new SqlException(
                    SqlException.Code.TABLE_NOT_FOUND,
                    at,
                    "table "
                            + table
                            + " does not exist: catalog "
                            + CATALOG
                            + " has no database and no table yet (a new or empty warehouse:"
                            + " check --warehouse); CREATE TABLE "
                            + table
                            + " (...) creates it");
        }
        return new SqlException(
                SqlException.Code.TABLE_NOT_FOUND,
                at,
                "table "
                        + table
                        + " does not exist: a table named without database is looked up in the"
                        + " session's current database "
                        + current
                        + ", which catalog "
                        + CATALOG
                        + " does not have; its databases are "
                        + String.join(", ", databases)
                        + ": name the table with its database ("
                        + databases.get(0)
                        + "."
                        + table
                        + ") or USE one first");
    }

    /**
     * The parts of a Flink identifier {@code a.b.c} (each possibly in backticks, a doubled backtick
     * inside one standing for itself), unquoted.
     */
    static List<String> identifierParts(String id) {
        List<String> parts = new java.util.ArrayList<>();
        StringBuilder part = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c == '`') {
                if (quoted && i + 1 < id.length() && id.charAt(i + 1) == '`') {
                    part.append('`');
                    i++;
                } else {
                    quoted = !quoted;
                }
            } else if (!quoted && Character.isWhitespace(c)) {
                continue;
            } else if (c == '.' && !quoted) {
                parts.add(part.toString());
                part.setLength(0);
            } else {
                part.append(c);
            }
        }
        parts.add(part.toString());
        return parts;
    }

    /**
     * The identifier ({@code t}, {@code db.t}, with backticks) written in {@code statement} at
     * {@code line}:{@code column} (1-based), or null when none starts there.
     */
    static String identifierAt(String statement, int line, int column) {
        int offset = 0;
        for (int l = 1; l < line; l++) {
            int nl = statement.indexOf('\n', offset);
            if (nl < 0) {
                return null;
            }
            offset = nl + 1;
        }
        offset += column - 1;
        if (offset < 0 || offset >= statement.length()) {
            return null;
        }
        Matcher m = IDENTIFIER.matcher(statement);
        return m.find(offset) && m.start() == offset ? m.group() : null;
    }

    /** An identifier written in a statement: its parts (unquoted) and where it starts. */
    record Mention(List<String> parts, int offset) {}

    /**
     * The first mention of table {@code name} in {@code statement} (an identifier whose last part
     * it is, compared without case), or null.
     */
    static Mention mention(String statement, String name) {
        Matcher m = IDENTIFIER.matcher(statement);
        while (m.find()) {
            List<String> parts = identifierParts(m.group());
            if (parts.get(parts.size() - 1).equalsIgnoreCase(name)) {
                return new Mention(parts, m.start());
            }
        }
        return null;
    }

    /** The 1-based line and column of character {@code offset} of {@code statement}. */
    static SqlPosition position(String label, String statement, int offset) {
        int line = 1;
        int start = 0;
        for (int i = 0; i < offset; i++) {
            if (statement.charAt(i) == '\n') {
                line++;
                start = i + 1;
            }
        }
        return new SqlPosition(label, line, offset - start + 1);
    }

    /** A possibly qualified, possibly backticked Flink identifier. */
    private static final Pattern IDENTIFIER =
            Pattern.compile(
                    "(?:`(?:[^`]|``)+`|[A-Za-z_$][A-Za-z0-9_$]*)"
                            + "(?:\\s*\\.\\s*(?:`(?:[^`]|``)+`|[A-Za-z_$][A-Za-z0-9_$]*))*");

    /** Calcite's "Object 'x' not found" (no "within"): x is a table or, qualified, a database. */
    private static final Pattern OBJECT_NOT_FOUND =
            Pattern.compile("Object '(?<db>[^']+)' not found(?! within)");

    /**
     * The databases of the session's catalog; none when it cannot list them (the error then reads
     * as for a new warehouse).
     */
    private static List<String> databases(TableEnvironment tEnv) {
        try {
            return tEnv.getCatalog(CATALOG).map(c -> c.listDatabases()).orElse(List.of());
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    private static TableResult execute(TableEnvironment tEnv, String statement) {
        return FlinkSqlSession.execute(tEnv, statement);
    }

    /**
     * Prints {@code OK} for a statement without rows, else CSV: a header, then one line per row;
     * with {@code changelog} (STREAMING mode) column {@code op} first, the row's kind.
     */
    private static void print(
            String statement, TableResult result, boolean changelog, PrintStream out)
            throws Exception {
        String keyword = statement.strip().split("\\s+", 2)[0].toUpperCase(Locale.ROOT);
        boolean writes = keyword.equals("INSERT") || keyword.equals("EXECUTE");
        if (writes || result.getResultKind() != ResultKind.SUCCESS_WITH_CONTENT) {
            result.await();
            out.println("OK");
            return;
        }
        List<String> columns = result.getResolvedSchema().getColumnNames();
        out.println((changelog ? ROW_KIND_COLUMN + "," : "") + String.join(",", columns));
        try (CloseableIterator<Row> rows = result.collect()) {
            while (rows.hasNext()) {
                Row row = rows.next();
                StringBuilder line = new StringBuilder();
                if (changelog) {
                    line.append(row.getKind().shortString()).append(',');
                }
                for (int i = 0; i < row.getArity(); i++) {
                    if (i > 0) {
                        line.append(',');
                    }
                    line.append(TableRows.formatValue(row.getField(i)));
                }
                out.println(line);
            }
        }
    }

    /**
     * The options of a {@code changeflow} Flink catalog over the Iceberg catalog {@code settings}
     * describe: Iceberg's {@code type} becomes {@code catalog-type} (hadoop, rest, hive) or {@code
     * catalog-impl} (jdbc, glue, nessie), as Iceberg's Flink catalog expects.
     */
    static Map<String, String> flinkCatalogOptions(CatalogSettings settings) {
        return FlinkSqlSession.flinkCatalogOptions(settings);
    }
}

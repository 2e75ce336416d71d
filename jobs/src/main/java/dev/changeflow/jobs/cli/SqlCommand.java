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

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.ResultKind;
import org.apache.flink.table.api.SqlParserException;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
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
 * <p>A change-feed error ({@code CdfException}, F3/F4) is reported with its code, exit code 1 (2
 * for {@code UNSUPPORTED_FORMAT_VERSION}, a table refused for its format). A statement Flink SQL
 * cannot parse is {@code SYNTAX_ERROR} at {@code statement N:line:column} with what Flink
 * encountered (exit code 2); a word one edit away from OPTIMIZE, REORG or VACUUM ({@code OPTIMISE
 * t}) is a {@code SYNTAX_ERROR} that names the keyword ({@code did you mean OPTIMIZE?}).
 *
 * <p>A new warehouse (no folder yet) or an empty one has no database: {@code SHOW DATABASES} and
 * {@code SHOW TABLES} print their header only and nothing is created ({@link ChangeflowCatalog}
 * lists the session's missing {@code default} database as empty). A statement that needs a database
 * the catalog does not have is {@code UNKNOWN_DATABASE} naming it (exit code 2; docs/semantics.md,
 * F introduction).
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
                    "Run in STREAMING mode: t$changes and table_changes(...) reads then need an ending "
                            + "bound, t$changelog reads 'bounded'='true' to finish; query rows start with "
                            + "their row kind, column op (+I, -U, +U, -D).")
    boolean streaming;

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
        FlinkSqlSession.open(tEnv, settings, CATALOG, Map.of());
        int exit = 0;
        for (int i = 0; i < statements.size(); i++) {
            String statement = statements.get(i);
            Optional<MaintenanceStatement> maintenance =
                    MaintenanceStatement.parse(statement, "statement " + (i + 1));
            if (maintenance.isPresent()) {
                if (!maintain(maintenance.get(), settings, tEnv.getCurrentDatabase())) {
                    exit = PURGE_INCOMPLETE;
                }
                continue;
            }
            String rewritten = TableChangesRewrite.rewrite(statement);
            TableResult result;
            try {
                result = execute(tEnv, rewritten);
            } catch (SqlParserException e) {
                throw syntaxError(e, "statement " + (i + 1));
            } catch (RuntimeException e) {
                throw missingDatabase(
                                e, "statement " + (i + 1), rewritten, tEnv.getCurrentDatabase())
                        .orElseThrow(() -> e);
            }
            print(rewritten, result, streaming, out);
        }
        return exit;
    }

    /**
     * Runs a maintenance statement on its table ({@link MaintenanceActions}) and prints its report.
     *
     * @param database the session's current database: the namespace of a table named without one
     * @return false when a purge could not expire every older snapshot (a live consumer needs one)
     * @throws IllegalArgumentException when the table does not exist
     */
    private boolean maintain(MaintenanceStatement s, CatalogSettings settings, String database)
            throws Exception {
        TableIdentifier id =
                s.table().hasNamespace()
                        ? s.table()
                        : TableIdentifier.of(Namespace.of(database), s.table().name());
        Catalog cat = settings.open();
        try {
            if (!cat.tableExists(id)) {
                throw new IllegalArgumentException(
                        "no table "
                                + id
                                + " in "
                                + settings.name()
                                + " catalog (check --warehouse)");
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
     * SHOW TABLES FROM db}, {@code USE db}, a {@code DatabaseNotExistException} ({@code DROP
     * DATABASE db}, ...) and Calcite's resolution of {@code db.t} in the session's catalog.
     */
    private static final List<Pattern> MISSING_DATABASE =
            List.of(
                    Pattern.compile("Database '[^']*'\\.'(?<db>[^']+)' doesn't exist"),
                    Pattern.compile("A database with name \\[(?<db>[^\\]]+)\\] does not exist"),
                    Pattern.compile("Database (?<db>[^\\s']+) does not exist"),
                    Pattern.compile("Object '(?<db>[^']+)' not found within '" + CATALOG + "'"));

    /** Flink's "at line L, column C" / "From line L, column C" of a validation error. */
    private static final Pattern FLINK_PLACE =
            Pattern.compile("[Aa]t line (\\d+), column (\\d+)|From line (\\d+), column (\\d+)");

    /**
     * A Flink error of statement {@code label} that says a database does not exist, as {@code
     * UNKNOWN_DATABASE} naming it, at the place Flink names (else the statement's start); empty for
     * any other error. Flink's exception is not kept as the cause (its message says the same, in
     * Flink's words). While the session's current database does not exist (a new warehouse has
     * none, not even {@code default}), Flink names it for any table the statement reads, even
     * {@code other.t}: the message then says that it is the session's current database.
     *
     * @param statement the statement Flink ran (its positions are Flink's)
     * @param current the session's current database
     */
    static Optional<SqlException> missingDatabase(
            RuntimeException e, String label, String statement, String current) {
        if (e instanceof SqlException || e instanceof dev.changeflow.sources.cdf.CdfException) {
            return Optional.empty();
        }
        int line = 1;
        int column = 1;
        for (Throwable u = e; u != null; u = u.getCause() == u ? null : u.getCause()) {
            Matcher place = FLINK_PLACE.matcher(String.valueOf(u.getMessage()));
            if (place.find()) {
                int g = place.group(1) != null ? 1 : 3;
                line = Integer.parseInt(place.group(g));
                column = Integer.parseInt(place.group(g + 1));
                break;
            }
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String msg = t.getMessage();
            if (msg == null) {
                continue;
            }
            String db = null;
            for (Pattern p : MISSING_DATABASE) {
                Matcher m = p.matcher(msg);
                if (m.find()) {
                    db = m.group("db");
                    break;
                }
            }
            Matcher object = OBJECT_NOT_FOUND.matcher(msg);
            if (db == null
                    && object.find()
                    && qualifies(statement, line, column, object.group("db"))) {
                db = object.group("db"); // db.t with a current database that exists
            }
            if (db == null) {
                continue;
            }
            return Optional.of(
                    new SqlException(
                            SqlException.Code.UNKNOWN_DATABASE,
                            new SqlPosition(label, line, column),
                            "database "
                                    + db
                                    + (db.equals(current)
                                            ? " (the session's current database)"
                                            : "")
                                    + " does not exist in catalog "
                                    + CATALOG
                                    + " (check --warehouse); SHOW DATABASES lists its"
                                    + " databases, CREATE DATABASE "
                                    + db
                                    + " creates it"));
        }
        return Optional.empty();
    }

    /** Calcite's "Object 'x' not found" (no "within"): x is a table or, qualified, a database. */
    private static final Pattern OBJECT_NOT_FOUND =
            Pattern.compile("Object '(?<db>[^']+)' not found(?! within)");

    /**
     * Whether the text of {@code statement} at {@code line}:{@code column} (1-based) is {@code
     * name} (optionally in backticks) followed by a dot: the qualifier of a table name.
     */
    static boolean qualifies(String statement, int line, int column, String name) {
        int offset = 0;
        for (int l = 1; l < line; l++) {
            int nl = statement.indexOf('\n', offset);
            if (nl < 0) {
                return false;
            }
            offset = nl + 1;
        }
        offset += column - 1;
        if (offset < 0 || offset >= statement.length()) {
            return false;
        }
        String rest = statement.substring(offset);
        boolean quoted = rest.startsWith("`");
        if (quoted) {
            rest = rest.substring(1);
        }
        if (!rest.regionMatches(true, 0, name, 0, name.length())) {
            return false;
        }
        rest = rest.substring(name.length());
        if (quoted) {
            if (!rest.startsWith("`")) {
                return false;
            }
            rest = rest.substring(1);
        }
        return rest.stripLeading().startsWith(".");
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

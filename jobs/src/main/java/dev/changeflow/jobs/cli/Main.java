package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.gold.GoldException;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.changes.ChangeRecordException;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code changeflow} command line (run through {@code bin/changeflow}).
 *
 * <pre>
 * changeflow demo                      generate TPC-B-like Debezium events, ingest them, check the result
 * changeflow ingest --flows F INPUT... apply Debezium / JSON change files to Iceberg streaming tables
 * changeflow run FILE.sql              the same from streaming-table statements (CREATE STREAMING TABLE ...)
 * changeflow describe FILE.sql T...    DESCRIBE TABLE EXTENDED: definition, schedule, last refresh
 * changeflow gold --source T ...     keep Gold tables current from a Silver table's change feed
 * changeflow show TABLE                print a table's rows or count (optionally as of a version)
 * changeflow sql -e STATEMENT          run Flink SQL; table_changes('db.t', 5, 10) reads a change feed
 * changeflow expire --table TABLE      expire old snapshots, keeping what change-feed consumers need
 * changeflow maintain TABLE            compact data files (deletes applied) and expire snapshots
 * </pre>
 *
 * <p>Every error is one {@code error: ...} line with a code: a bad flag or argument that no check
 * gave a more precise code is {@code INVALID_OPTION} ({@link CliErrors#withCode}), a missing file
 * {@code SOURCE_NOT_FOUND}, a missing table {@code TABLE_NOT_FOUND}.
 *
 * <p>Exit codes: 0 success, 1 failure of the job or the check (and a change-feed range the table's
 * history cannot serve now: {@code START_AFTER_LATEST_COMMIT}, {@code VERSION_NOT_AVAILABLE}, ...),
 * 2 bad input: bad usage or definition (a definition error, an unknown option, a missing file, an
 * unknown database or table, a change-feed read whose options, timestamps or range are malformed:
 * {@code INVALID_CDC_OPTIONS}, {@code INVALID_TIMESTAMP}, {@code INVALID_CDC_RANGE}), and a table
 * refused for what it is ({@code UNSUPPORTED_FORMAT_VERSION}, {@code RESERVED_COLUMN_NAME}), 3 a
 * purge that a live change-feed consumer held back (README, "Exit codes").
 */
@Command(
        name = "changeflow",
        mixinStandardHelpOptions = true,
        version = "changeflow 0.1.0-SNAPSHOT (Flink 2.1.1, Iceberg 1.11.0)",
        description =
                "AUTO CDC streaming tables and change data feeds for Apache Iceberg, on Apache Flink.",
        subcommands = {
            IngestCommand.class,
            RunCommand.class,
            DescribeCommand.class,
            GoldCommand.class,
            DemoCommand.class,
            ShowCommand.class,
            SqlCommand.class,
            ExpireCommand.class,
            MaintainCommand.class,
            DeployCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns its exit code (for tests). */
    public static int execute(String... args) {
        CommandLine cl = new CommandLine(new Main());
        // an unknown or malformed flag: one coded error line (README "Exit codes"), exit code 2
        cl.setParameterExceptionHandler(
                (ex, given) -> {
                    CommandLine cmd = ex.getCommandLine();
                    String what = ex.getMessage();
                    String lists = " --help lists the options";
                    if (ex instanceof CommandLine.UnmatchedArgumentException u
                            && cmd.getParent() == null
                            && given.length > 0
                            && !given[0].startsWith("-")
                            && !u.getUnmatched().isEmpty()
                            && given[0].equals(u.getUnmatched().get(0))) {
                        // changeflow maintian ...: the first word names no command
                        what = "unknown command '" + given[0] + "'";
                        lists = " --help lists the commands";
                    }
                    String hint = "";
                    if (ex instanceof CommandLine.UnmatchedArgumentException u
                            && !u.getSuggestions().isEmpty()) {
                        hint = " (did you mean " + String.join(" or ", u.getSuggestions()) + "?)";
                    }
                    cmd.getErr()
                            .println(
                                    "error: "
                                            + CliErrors.INVALID_OPTION
                                            + ": "
                                            + what
                                            + hint
                                            + "; "
                                            + cmd.getCommandSpec().qualifiedName()
                                            + lists);
                    return 2;
                });
        cl.setExecutionExceptionHandler(
                (ex, cmd, parsed) -> {
                    Throwable root = ex;
                    while (root.getCause() != null && root.getCause() != root) {
                        root = root.getCause();
                    }
                    boolean usage =
                            ex instanceof IllegalArgumentException
                                    || ex instanceof AutoCdcException
                                    || ex instanceof GoldException
                                    || refusesTheTable(ex);
                    boolean domain =
                            usage
                                    || ex instanceof ChangeRecordException
                                    || ex instanceof CdfException
                                    || ex instanceof CliErrors.Failed;
                    String message =
                            domain && ex.getMessage() != null ? ex.getMessage() : ex.toString();
                    if (ex instanceof IllegalArgumentException
                            && !(ex instanceof SqlException)
                            && ex.getMessage() != null) {
                        // bad usage no check gave a more precise code: INVALID_OPTION (README
                        // "Exit codes": every error has a code)
                        message = CliErrors.withCode(message);
                    }
                    cmd.getErr().println("error: " + message);
                    if (root != ex
                            && root.getMessage() != null
                            && !String.valueOf(ex.getMessage()).contains(root.getMessage())) {
                        cmd.getErr().println("cause: " + root);
                    }
                    return usage ? 2 : 1;
                });
        return cl.execute(args);
    }

    /**
     * Whether {@code ex} is a change-feed error of bad input rather than a failed run, exit code 2
     * as other refusals of a definition: a format v1 table as a change feed or snapshot source
     * ({@code UNSUPPORTED_FORMAT_VERSION}, docs/semantics.md F introduction and A6) or a table with
     * a column named like a metadata column ({@code RESERVED_COLUMN_NAME}, F4), which no retry
     * fixes, and read options that contradict each other or are malformed ({@code
     * INVALID_CDC_OPTIONS}, F3), a timestamp that is no timestamp ({@code INVALID_TIMESTAMP}, F3)
     * and an end before the start ({@code INVALID_CDC_RANGE}, F4), which the statement must fix.
     * Errors that depend on the table's history at the time ({@code START_AFTER_LATEST_COMMIT},
     * {@code END_AFTER_LATEST_COMMIT}, {@code VERSION_NOT_AVAILABLE}, {@code
     * INCOMPATIBLE_SCHEMA_CHANGE}, {@code TABLE_HISTORY_REWRITTEN}) stay failures (exit code 1).
     */
    static boolean refusesTheTable(Throwable ex) {
        if (!(ex instanceof CdfException cdf)) {
            return false;
        }
        return switch (cdf.code()) {
            case UNSUPPORTED_FORMAT_VERSION,
                    RESERVED_COLUMN_NAME,
                    INVALID_CDC_OPTIONS,
                    INVALID_TIMESTAMP,
                    INVALID_CDC_RANGE ->
                    true;
            default -> false;
        };
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}

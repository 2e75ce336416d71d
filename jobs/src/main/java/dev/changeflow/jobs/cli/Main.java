package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.gold.GoldException;
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
 * Exit codes: 0 success, 1 failure of the job or the check, 2 bad usage or definition (a definition
 * error, an unknown option, a missing file, and a table refused for its format: {@code
 * UNSUPPORTED_FORMAT_VERSION}).
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
                                    || ex instanceof CdfException;
                    cmd.getErr()
                            .println(
                                    "error: "
                                            + (domain && ex.getMessage() != null
                                                    ? ex.getMessage()
                                                    : ex.toString()));
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
     * Whether {@code ex} refuses a table for what it is rather than failing a run: a format v1
     * table as a change feed or snapshot source ({@code UNSUPPORTED_FORMAT_VERSION},
     * docs/semantics.md F introduction and A6), which no retry fixes; exit code 2 as other refusals
     * of a definition.
     */
    static boolean refusesTheTable(Throwable ex) {
        return ex instanceof CdfException cdf
                && cdf.code() == CdfException.ErrorCode.UNSUPPORTED_FORMAT_VERSION;
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}

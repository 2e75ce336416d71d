package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.gold.GoldException;
import dev.changeflow.jobs.gold.GoldFlags;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow gold}: keeps Gold tables current from Silver's change feed, exactly once, in
 * one of two forms:
 *
 * <ul>
 *   <li>{@code gold FILE.sql}: the file's Flink SQL statements ({@code SET}, {@code CREATE TABLE},
 *       {@code INSERT INTO gold.t SELECT ... FROM silver.`s$changelog`}) as one streaming job
 *       ({@link GoldSql}); {@code --bounded} ends it once Silver's versions latest at the start are
 *       read and committed; {@code --cluster} runs the same statements on the cluster executing the
 *       program until stopped ({@link GoldSql#runCluster}; needs {@code --catalog}, not with {@code
 *       --bounded});
 *   <li>the definition flags ({@code --source}, {@code --upsert-table}, {@code --aggregate-table},
 *       ...): an upsert projection and/or a per-group aggregate, compiled to a Gold SQL file
 *       ({@link GoldFlags}, printed by {@code --print-sql}) and run by the same code as {@code gold
 *       FILE.sql}: a local run is a {@code --bounded} one, {@code --cluster} runs until stopped.
 * </ul>
 */
@Command(
        name = "gold",
        mixinStandardHelpOptions = true,
        description =
                "Maintain Gold tables from Silver's change feed, exactly once: the INSERT INTO statements of a "
                        + "Flink SQL file (gold FILE.sql), or an upsert projection and aggregate given by flags.")
public final class GoldCommand implements Callable<Integer> {
    @Parameters(
            index = "0",
            arity = "0..1",
            paramLabel = "FILE.sql",
            description =
                    "Flink SQL file: SET, CREATE TABLE (with PRIMARY KEY), INSERT INTO ... SELECT over "
                            + "db.`t$changelog` reads; its INSERTs run as one job. Instead of --source.")
    Path file;

    @Option(
            names = "--bounded",
            description =
                    "With FILE.sql, locally: read Silver up to its versions latest when the job starts, commit, "
                            + "and end (every t$changelog read gets 'bounded'='true'). Default: run until stopped. "
                            + "Not with --cluster.")
    boolean bounded;

    @Option(
            names = "--source",
            paramLabel = "NS.TABLE",
            description = "The Silver table whose change feed is read.")
    String source;

    @Option(
            names = "--upsert-table",
            paramLabel = "NS.TABLE",
            description = "Gold upsert table: the Silver rows, projected and filtered.")
    String upsertTable;

    @Option(
            names = "--columns",
            paramLabel = "SELECT-LIST",
            description =
                    "Flink SQL select list of the upsert table, e.g. \"aid, bid, abalance\" (default: all columns). Must keep the Silver identifier fields.")
    String columns;

    @Option(
            names = "--where",
            paramLabel = "PREDICATE",
            description = "Flink SQL filter of the upsert table, e.g. \"abalance <> 0\".")
    String where;

    @Option(
            names = "--aggregate-table",
            paramLabel = "NS.TABLE",
            description = "Gold aggregate table.")
    String aggregateTable;

    @Option(
            names = "--group-by",
            paramLabel = "COLS",
            split = ",",
            description = "Silver columns the aggregate groups by, e.g. bid.")
    List<String> groupBy;

    @Option(
            names = "--aggregate",
            paramLabel = "NAME=FN(EXPR)",
            description =
                    "An aggregate column: NAME=SUM(expr), NAME=COUNT(*) or NAME=COUNT(expr) (or another Flink SQL"
                            + " aggregate, e.g. NAME=MAX(expr)); repeat for more.")
    List<String> aggregates;

    @Option(
            names = "--print-sql",
            description =
                    "With the definition flags: print the Gold SQL file they compile to (CREATE TABLE IF NOT EXISTS"
                            + " and INSERT INTO ... FROM ns.`t$changelog`) and exit, without running it. Save it as"
                            + " FILE.sql to move to gold FILE.sql.")
    boolean printSql;

    @Option(
            names = "--starting-version",
            paramLabel = "N",
            description =
                    "Silver version N to start at (replay). With FILE.sql: every t$changelog read without its own "
                            + "starting-version starts at N (Silver as of N-1, then the changes from N); the Gold tables "
                            + "are emptied and rebuilt; N after a Gold table's recorded version + 1 is GOLD_VERSION_MISMATCH. "
                            + "The same with the definition flags (they compile to such a file). "
                            + "Default: Silver's current snapshot.")
    Long startingVersion;

    @Option(
            names = "--name",
            paramLabel = "ID",
            description =
                    "Job name (checkpoint folder). Default: the file's name; with --source gold-<silver table>.")
    String name;

    @Option(
            names = "--warehouse",
            paramLabel = "DIR",
            defaultValue = "warehouse",
            description =
                    "Local Iceberg warehouse folder (Hadoop catalog). Default: ${DEFAULT-VALUE}.")
    Path warehouse;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description =
                    "Iceberg catalog property (type, uri, warehouse, ...); replaces the local Hadoop catalog.")
    Map<String, String> catalog;

    @Option(
            names = "--parallelism",
            paramLabel = "N",
            defaultValue = "2",
            description =
                    "Parallelism of the change feed and the upsert writers. Default: ${DEFAULT-VALUE}.")
    int parallelism;

    @Option(
            names = "--checkpoint-interval",
            paramLabel = "DURATION",
            defaultValue = "5s",
            description =
                    "Flink checkpoint interval (each checkpoint is one Gold commit). Default: ${DEFAULT-VALUE}.")
    String checkpointInterval;

    @Option(
            names = "--from-scratch",
            description =
                    "With the definition flags: drop the Gold tables first (only tables with a _source_version"
                            + " column), e.g. tables of another shape, and create them anew. Every run rebuilds the"
                            + " Gold tables' rows anyway.")
    boolean fromScratch;

    @Option(
            names = "--cluster",
            description =
                    "Run on the Flink cluster that executes this program (application mode) until stopped, instead of a "
                            + "local MiniCluster. Needs --catalog; with FILE.sql also the cluster's execution.checkpointing.dir.")
    boolean cluster;

    @Option(
            names = "--maintenance",
            description =
                    "With --cluster: maintain the Gold tables inside the job (compaction, consumer-aware"
                            + " expiry, manifest rewrite, orphan removal; docs/semantics.md M1, M2). A Gold"
                            + " SQL file says SET 'changeflow.maintenance' = 'true' instead.")
    boolean maintenance;

    @Option(
            names = "--maintenance-option",
            paramLabel = "OPTION=VALUE",
            description =
                    "A maintenance-* flow option for --maintenance, e.g. maintenance-expire-older-than=3d"
                            + " (repeatable).")
    List<String> maintenanceOptions;

    /**
     * The in-job maintenance the flags ask for: {@code --maintenance} and each {@code
     * --maintenance-option OPTION=VALUE}, checked as the flows file's {@code maintenance*} options.
     *
     * @throws IllegalArgumentException for an option without {@code =}, an unknown option or a bad
     *     value
     */
    public TableMaintenanceOptions maintenance() {
        Map<String, Object> values = new LinkedHashMap<>();
        if (maintenance) {
            values.put(FlowOptions.MAINTENANCE.key(), "true");
        }
        for (String kv : maintenanceOptions == null ? List.<String>of() : maintenanceOptions) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(
                        "--maintenance-option takes OPTION=VALUE, got '" + kv + "'");
            }
            values.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
        }
        return values.isEmpty()
                ? TableMaintenanceOptions.off()
                : FlowConfig.maintenanceOptions(
                        values, "--maintenance-option", "add --maintenance");
    }

    /**
     * The Gold definition given by the flags (before it is compiled, {@link GoldFlags#toSql}).
     *
     * @throws IllegalArgumentException when a table name or an option combination is wrong (a
     *     definition flag given without the table it belongs to)
     * @throws GoldException {@code GOLD_DEFINITION_INVALID} without {@code --source}, without a
     *     Gold table, for an aggregate table without {@code --group-by} or {@code --aggregate}, or
     *     an aggregate not of the form {@code NAME=FN(EXPR)}
     */
    public GoldFlags definition() {
        if (source == null) {
            throw GoldException.definitionInvalid("give FILE.sql or --source NS.TABLE");
        }
        TableIdentifier silver = table(source, "--source");
        GoldFlags.Upsert upsert = null;
        if (upsertTable != null) {
            upsert = new GoldFlags.Upsert(table(upsertTable, "--upsert-table"), columns, where);
        } else if (columns != null || where != null) {
            throw new IllegalArgumentException("--columns and --where belong to --upsert-table");
        }
        GoldFlags.Aggregate aggregate = null;
        if (aggregateTable != null) {
            if (groupBy == null || aggregates == null) {
                throw GoldException.definitionInvalid(
                        "--aggregate-table needs --group-by and at least one --aggregate");
            }
            List<GoldFlags.AggregateColumn> cols = new ArrayList<>();
            for (String a : aggregates) {
                cols.add(GoldFlags.AggregateColumn.parse(a));
            }
            aggregate =
                    new GoldFlags.Aggregate(
                            table(aggregateTable, "--aggregate-table"), groupBy, cols);
        } else if (groupBy != null || aggregates != null) {
            throw new IllegalArgumentException(
                    "--group-by and --aggregate belong to --aggregate-table");
        }
        if (upsert == null && aggregate == null) {
            throw GoldException.definitionInvalid(
                    "give --upsert-table, --aggregate-table, or both");
        }
        Map<String, String> maintained = new LinkedHashMap<>();
        if (maintenance) {
            maintained.put(FlowOptions.MAINTENANCE.key(), "true");
        }
        for (String kv : maintenanceOptions == null ? List.<String>of() : maintenanceOptions) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                maintained.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        return new GoldFlags(
                name != null ? name : "gold-" + silver.name(),
                silver,
                upsert,
                aggregate,
                maintained);
    }

    /** {@code gold FILE.sql}: the definition flags do not apply. */
    private Integer runFile() throws Exception {
        Duration interval;
        try {
            interval = checkFileFlags();
        } catch (IllegalArgumentException e) {
            throw CliErrors.coded(e, null);
        }
        if (!java.nio.file.Files.isRegularFile(file)) {
            // as run, describe, ingest --flows and deploy: a usage error naming the file (exit 2)
            throw new IllegalArgumentException(
                    "SOURCE_NOT_FOUND: Gold SQL file not found: "
                            + file
                            + (java.nio.file.Files.isDirectory(file)
                                    ? " (a folder, not a file)"
                                    : ""));
        }
        GoldSql.File gold = GoldSql.read(file);
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.name = name;
        o.parallelism = parallelism;
        o.checkpointInterval = interval;
        o.bounded = bounded;
        o.startingVersion = startingVersion;
        CatalogSettings settings = CliOptions.catalogSettings(warehouse, catalog, GoldSql.CATALOG);
        if (cluster) {
            GoldSql.runCluster(gold, settings, o);
        } else {
            GoldSql.runLocal(gold, settings, o);
        }
        return 0;
    }

    /**
     * The flag checks of {@code gold FILE.sql}, before the file is read.
     *
     * @return the checkpoint interval
     * @throws IllegalArgumentException for a definition flag, a bad combination or value
     */
    private Duration checkFileFlags() {
        List<String> wrong = new ArrayList<>();
        addIf(wrong, source != null, "--source");
        addIf(wrong, upsertTable != null, "--upsert-table");
        addIf(wrong, columns != null, "--columns");
        addIf(wrong, where != null, "--where");
        addIf(wrong, aggregateTable != null, "--aggregate-table");
        addIf(wrong, groupBy != null, "--group-by");
        addIf(wrong, aggregates != null, "--aggregate");
        addIf(wrong, fromScratch, "--from-scratch");
        addIf(wrong, maintenance, "--maintenance");
        addIf(wrong, maintenanceOptions != null, "--maintenance-option");
        addIf(wrong, printSql, "--print-sql");
        if (!wrong.isEmpty()) {
            throw new IllegalArgumentException(
                    String.join(", ", wrong)
                            + (wrong.size() == 1 ? " belongs" : " belong")
                            + " to the flag form of gold; FILE.sql says what to maintain");
        }
        if (cluster) {
            if (catalog == null || catalog.isEmpty()) {
                throw new IllegalArgumentException(
                        "--cluster needs an Iceberg catalog (--catalog type=rest --catalog uri=...)");
            }
            if (bounded) {
                throw new IllegalArgumentException(
                        "--bounded is for local runs: a --cluster run reads Silver until it is stopped");
            }
        }
        return checkCommonFlags();
    }

    /**
     * The checks both forms share: {@code --parallelism}, {@code --checkpoint-interval}, {@code
     * --starting-version}.
     *
     * @return the checkpoint interval
     */
    private Duration checkCommonFlags() {
        if (parallelism < 1) {
            throw new IllegalArgumentException(
                    "--parallelism must be at least 1, got " + parallelism);
        }
        Duration interval = OptionParsers.duration(checkpointInterval, "--checkpoint-interval");
        if (startingVersion != null && startingVersion < 0) {
            throw new IllegalArgumentException(
                    "--starting-version must be >= 0, got " + startingVersion);
        }
        return interval;
    }

    /**
     * {@code --from-scratch}: drops the flags' Gold tables that exist, each only when it has a
     * {@code _source_version} column (a table a Gold job wrote).
     *
     * @throws IllegalArgumentException for a table without that column, before anything is dropped
     */
    private static void dropGoldTables(GoldFlags flags, CatalogSettings settings)
            throws IOException {
        List<TableIdentifier> targets = new ArrayList<>();
        if (flags.upsert() != null) {
            targets.add(flags.upsert().target());
        }
        if (flags.aggregate() != null) {
            targets.add(flags.aggregate().target());
        }
        Catalog iceberg = settings.open();
        try {
            List<TableIdentifier> drop = new ArrayList<>();
            for (TableIdentifier t : targets) {
                if (!iceberg.tableExists(t)) {
                    continue;
                }
                Table table = iceberg.loadTable(t);
                if (table.schema().findField(GoldFlags.SOURCE_VERSION) == null) {
                    throw new IllegalArgumentException(
                            "--from-scratch drops only Gold tables (with a "
                                    + GoldFlags.SOURCE_VERSION
                                    + " column); "
                                    + t
                                    + " has none: drop it yourself or choose another table");
                }
                drop.add(t);
            }
            for (TableIdentifier t : drop) {
                iceberg.dropTable(t, true);
            }
        } finally {
            if (iceberg instanceof Closeable c) {
                c.close();
            }
        }
    }

    private static void addIf(List<String> out, boolean given, String flag) {
        if (given) {
            out.add(flag);
        }
    }

    private static TableIdentifier table(String text, String flag) {
        TableIdentifier id = TableIdentifier.parse(text);
        if (!id.hasNamespace()) {
            throw new IllegalArgumentException(flag + " takes NAMESPACE.TABLE, got '" + text + "'");
        }
        return id;
    }

    /**
     * Runs the command. Every flag is checked before anything is read, printed or run ({@code
     * --print-sql} too); a wrong flag is {@code INVALID_OPTION}, a missing Silver or Gold table
     * {@code GOLD_DEFINITION_INVALID} (exit code 2).
     */
    @Override
    public Integer call() throws Exception {
        if (file != null) {
            return runFile();
        }
        GoldFlags flags;
        Duration interval;
        try {
            if (bounded) {
                throw new IllegalArgumentException(
                        "--bounded applies to gold FILE.sql (a local run of --source ends at Silver's latest version anyway)");
            }
            flags = definition();
            interval = checkDefinitionFlags();
        } catch (IllegalArgumentException e) {
            throw CliErrors.coded(e, null);
        }
        CatalogSettings settings = CliOptions.catalogSettings(warehouse, catalog, GoldSql.CATALOG);
        if (fromScratch && !printSql) {
            dropGoldTables(flags, settings);
        }
        String sql = flags.toSql(settings);
        if (printSql) {
            System.out.print(sql);
            return 0;
        }
        GoldSql.File file = GoldSql.parse(sql, flags.name() + ".sql");
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.name = flags.name();
        o.parallelism = parallelism;
        o.checkpointInterval = interval;
        o.bounded = !cluster; // a local run of the flags reads up to Silver's latest version
        o.startingVersion = startingVersion;
        if (cluster) {
            GoldSql.runCluster(file, settings, o);
        } else {
            GoldSql.runLocal(file, settings, o);
        }
        return 0;
    }

    /**
     * The flag checks of the definition form besides {@link #definition()}.
     *
     * @return the checkpoint interval
     */
    private Duration checkDefinitionFlags() {
        TableMaintenanceOptions maintained = maintenance(); // checked before anything is read
        if (maintained.enabled() && !cluster && !printSql) {
            throw new IllegalArgumentException(
                    "--maintenance needs --cluster: a local run ends at Silver's latest version;"
                            + " maintain the Gold tables with bin/changeflow maintain");
        }
        if (cluster && (catalog == null || catalog.isEmpty())) {
            throw new IllegalArgumentException(
                    "--cluster needs an Iceberg catalog (--catalog type=rest --catalog uri=...)");
        }
        if (cluster && fromScratch) {
            throw new IllegalArgumentException(
                    "--from-scratch is for local runs; on a cluster, drop the Gold tables yourself");
        }
        return checkCommonFlags();
    }
}

package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.gold.GoldRunner;
import dev.changeflow.jobs.gold.GoldSpec;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow gold}: keeps Gold tables (an upsert projection and/or an aggregate) current
 * from the change feed of a Silver table, exactly once. See {@link GoldRunner} for local and
 * cluster runs and {@link dev.changeflow.jobs.gold.GoldStart} for where a run starts.
 */
@Command(
        name = "gold",
        mixinStandardHelpOptions = true,
        description =
                "Maintain Gold tables (upsert projection, aggregate) from the change feed of a Silver table, exactly once.")
public final class GoldCommand implements Callable<Integer> {
    @Option(
            names = "--source",
            required = true,
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
                    "An aggregate column: NAME=SUM(expr), NAME=COUNT(*) or NAME=COUNT(expr); repeat for more.")
    List<String> aggregates;

    @Option(
            names = "--starting-version",
            paramLabel = "N",
            description =
                    "Silver version to start at (replay); checked against the Gold tables' _source_version (GOLD_VERSION_MISMATCH on a gap or overlap). Default: where Gold is.")
    Long startingVersion;

    @Option(
            names = "--name",
            paramLabel = "ID",
            description =
                    "Job name (operator uids, checkpoint folder). Default: gold-<silver table>.")
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
                    "Drop the Gold tables first and rebuild them from the Silver table's current snapshot.")
    boolean fromScratch;

    @Option(
            names = "--cluster",
            description =
                    "Run on the Flink cluster that executes this program until stopped, instead of a local MiniCluster up to Silver's latest version.")
    boolean cluster;

    /**
     * The Gold definition given by the flags.
     *
     * @throws IllegalArgumentException when a table name or an option combination is wrong
     * @throws dev.changeflow.jobs.gold.GoldException GOLD_DEFINITION_INVALID for an aggregate form
     */
    public GoldSpec spec() {
        TableIdentifier silver = table(source, "--source");
        GoldSpec.Upsert upsert = null;
        if (upsertTable != null) {
            upsert =
                    new GoldSpec.Upsert(
                            table(upsertTable, "--upsert-table"),
                            columns == null || columns.isBlank() ? List.of() : List.of(columns),
                            where);
        } else if (columns != null || where != null) {
            throw new IllegalArgumentException("--columns and --where belong to --upsert-table");
        }
        GoldSpec.Aggregate aggregate = null;
        if (aggregateTable != null) {
            if (groupBy == null || aggregates == null) {
                throw new IllegalArgumentException(
                        "--aggregate-table needs --group-by and at least one --aggregate");
            }
            List<GoldSpec.AggregateColumn> cols = new ArrayList<>();
            for (String a : aggregates) {
                cols.add(GoldSpec.AggregateColumn.parse(a));
            }
            aggregate =
                    new GoldSpec.Aggregate(
                            table(aggregateTable, "--aggregate-table"), groupBy, cols);
        } else if (groupBy != null || aggregates != null) {
            throw new IllegalArgumentException(
                    "--group-by and --aggregate belong to --aggregate-table");
        }
        if (upsert == null && aggregate == null) {
            throw new IllegalArgumentException("give --upsert-table, --aggregate-table, or both");
        }
        return new GoldSpec(
                name != null ? name : "gold-" + silver.name(), silver, upsert, aggregate);
    }

    private static TableIdentifier table(String text, String flag) {
        TableIdentifier id = TableIdentifier.parse(text);
        if (!id.hasNamespace()) {
            throw new IllegalArgumentException(flag + " takes NAMESPACE.TABLE, got '" + text + "'");
        }
        return id;
    }

    @Override
    public Integer call() throws Exception {
        GoldSpec spec = spec();
        GoldRunner.Options o = new GoldRunner.Options();
        o.warehouse = warehouse;
        o.startingVersion = startingVersion;
        o.fromScratch = fromScratch;
        o.parallelism = parallelism;
        o.checkpointInterval = OptionParsers.duration(checkpointInterval, "--checkpoint-interval");
        if (parallelism < 1) {
            throw new IllegalArgumentException(
                    "--parallelism must be at least 1, got " + parallelism);
        }
        CatalogSettings settings =
                catalog == null || catalog.isEmpty()
                        ? CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                        : CatalogSettings.of(
                                "changeflow", CatalogOptions.fromFlags("--catalog", catalog));
        if (cluster) {
            if (catalog == null || catalog.isEmpty()) {
                throw new IllegalArgumentException(
                        "--cluster needs an Iceberg catalog (--catalog type=rest --catalog uri=...)");
            }
            if (fromScratch) {
                throw new IllegalArgumentException(
                        "--from-scratch is for local runs; on a cluster, drop the Gold tables yourself");
            }
            GoldRunner.runCluster(spec, settings, o);
            return 0;
        }
        GoldRunner.runLocal(spec, settings, o);
        return 0;
    }
}

package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.sql.FlinkSqlSession;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;
import dev.changeflow.sources.cdf.sql.TableChangesRewrite;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.ResultKind;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

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
 * <p>A change-feed error ({@code CdfException}, F3/F4) is reported with its code, exit code 1.
 */
@Command(
        name = "sql",
        mixinStandardHelpOptions = true,
        description =
                "Run Flink SQL statements on the local warehouse. table_changes(...) and db.`t$changes` "
                        + "read change feeds; db.`t$changelog` reads one as a changelog (+I/-U/+U/-D row "
                        + "kinds, --streaming only; add /*+ OPTIONS('bounded'='true') */ for a read that "
                        + "finishes). SELECT * leaves out the virtual metadata columns _commit_version "
                        + "and _commit_timestamp of t$changelog; select them by name.")
public final class SqlCommand implements Callable<Integer> {
    /** Name of the catalog the statements run in. */
    static final String CATALOG = "changeflow";

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
        for (String statement : statements) {
            String rewritten = TableChangesRewrite.rewrite(statement);
            print(rewritten, execute(tEnv, rewritten), streaming, out);
        }
        return 0;
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

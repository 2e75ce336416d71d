package dev.changeflow.jobs.gold;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flag form of {@code gold} compiled to Gold SQL ({@link GoldFlags}, docs/semantics.md G2): the
 * exact text {@code --print-sql} prints over a Silver table on a real Hadoop catalog, that the text
 * plans as a Gold file ({@link GoldSql#plan}), and the definition errors.
 */
class GoldFlagsTest {

    @TempDir Path warehouse;

    private static final Schema SILVER =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.IntegerType.get()),
                            Types.NestedField.optional(2, "bid", Types.IntegerType.get()),
                            Types.NestedField.optional(3, "abalance", Types.IntegerType.get()),
                            Types.NestedField.optional(4, "filler", Types.StringType.get())),
                    Set.of(1));

    private static final String[] PGBENCH_FLAGS = {
        "--source",
        "silver.accounts",
        "--upsert-table",
        "gold.accounts",
        "--columns",
        "aid, bid, abalance",
        "--where",
        "abalance <> 0",
        "--aggregate-table",
        "gold.branch_balances",
        "--group-by",
        "bid",
        "--aggregate",
        "balance_total=SUM(abalance)",
        "--aggregate",
        "account_count=COUNT(*)"
    };

    static final String PGBENCH_SQL =
            "-- bin/changeflow gold --source silver.accounts (--name gold-accounts), compiled to"
                    + " Gold SQL\n"
                    + "SET 'table.exec.sink.upsert-materialize' = 'FORCE';\n"
                    + "CREATE DATABASE IF NOT EXISTS `gold`;\n"
                    + "CREATE TABLE IF NOT EXISTS `gold`.`accounts` (\n"
                    + "  `aid` INT,\n"
                    + "  `bid` INT,\n"
                    + "  `abalance` INT,\n"
                    + "  `_source_version` BIGINT,\n"
                    + "  PRIMARY KEY (`aid`) NOT ENFORCED);\n"
                    + "INSERT INTO `gold`.`accounts`\n"
                    + "SELECT aid, bid, abalance, `_commit_version` AS `_source_version`\n"
                    + "FROM `silver`.`accounts$changelog`\n"
                    + "WHERE abalance <> 0;\n"
                    + "CREATE TABLE IF NOT EXISTS `gold`.`branch_balances` (\n"
                    + "  `bid` INT,\n"
                    + "  `balance_total` BIGINT,\n"
                    + "  `account_count` BIGINT,\n"
                    + "  `_source_version` BIGINT,\n"
                    + "  PRIMARY KEY (`bid`) NOT ENFORCED);\n"
                    + "INSERT INTO `gold`.`branch_balances`\n"
                    + "SELECT `bid`, SUM(CAST((abalance) AS BIGINT)) AS `balance_total`, COUNT(*)"
                    + " AS `account_count`, SOURCE_VERSION(`_commit_version`) AS"
                    + " `_source_version`\n"
                    + "FROM `silver`.`accounts$changelog`\n"
                    + "WHERE `bid` IS NOT NULL\n"
                    + "GROUP BY `bid`;\n";

    private Catalog catalog;

    @BeforeEach
    void silver() {
        catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        catalog.createTable(
                TableIdentifier.of("silver", "accounts"),
                SILVER,
                PartitionSpec.unpartitioned(),
                Map.of(TableProperties.FORMAT_VERSION, "2"));
    }

    private String printSql(String... flags) {
        List<String> args = new ArrayList<>(List.of("gold", "--print-sql"));
        args.addAll(List.of(flags));
        args.addAll(List.of("--warehouse", warehouse.toString()));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = CapturedOutput.stdout(out, () -> Main.execute(args.toArray(String[]::new)));
        assertThat(code).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theFlagsCompileToAGoldSqlFileThatPlans() {
        String sql = printSql(PGBENCH_FLAGS);
        assertThat(sql).isEqualTo(PGBENCH_SQL);
        // nothing was created by printing
        assertThat(catalog.tableExists(TableIdentifier.of("gold", "accounts"))).isFalse();

        // the text is a Gold file: its CREATEs run and both INSERTs plan (update streams into
        // tables with a key, made upsert tables)
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(
                        StreamExecutionEnvironment.getExecutionEnvironment(),
                        EnvironmentSettings.inStreamingMode());
        GoldSql.File file = GoldSql.parse(sql, "gold-accounts.sql");
        assertThat(file.inserts()).hasSize(2);
        GoldSql.plan(
                file,
                tEnv,
                CatalogSettings.localHadoop(warehouse.toAbsolutePath()),
                true,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        Table branches = catalog.loadTable(TableIdentifier.of("gold", "branch_balances"));
        assertThat(branches.schema().identifierFieldNames()).containsExactly("bid");
        assertThat(branches.properties()).containsEntry(TableProperties.UPSERT_ENABLED, "true");
        assertThat(
                        catalog
                                .loadTable(TableIdentifier.of("gold", "accounts"))
                                .schema()
                                .columns()
                                .stream()
                                .map(Types.NestedField::name))
                .containsExactly("aid", "bid", "abalance", "_source_version");
    }

    /** Without --columns every Silver column is projected; other aggregates pass to Flink. */
    @Test
    void allColumnsByDefaultAndFlinksAggregates() {
        assertThat(
                        printSql(
                                "--source",
                                "silver.accounts",
                                "--name",
                                "g",
                                "--upsert-table",
                                "gold.all",
                                "--aggregate-table",
                                "gold.tops",
                                "--group-by",
                                "bid",
                                "--aggregate",
                                "top=MAX(abalance)"))
                .isEqualTo(
                        "-- bin/changeflow gold --source silver.accounts (--name g), compiled to"
                                + " Gold SQL\n"
                                + "CREATE DATABASE IF NOT EXISTS `gold`;\n"
                                + "CREATE TABLE IF NOT EXISTS `gold`.`all` (\n"
                                + "  `aid` INT,\n"
                                + "  `bid` INT,\n"
                                + "  `abalance` INT,\n"
                                + "  `filler` VARCHAR(2147483647),\n"
                                + "  `_source_version` BIGINT,\n"
                                + "  PRIMARY KEY (`aid`) NOT ENFORCED);\n"
                                + "INSERT INTO `gold`.`all`\n"
                                + "SELECT `aid`, `bid`, `abalance`, `filler`, `_commit_version` AS"
                                + " `_source_version`\n"
                                + "FROM `silver`.`accounts$changelog`;\n"
                                + "CREATE TABLE IF NOT EXISTS `gold`.`tops` (\n"
                                + "  `bid` INT,\n"
                                + "  `top` INT,\n"
                                + "  `_source_version` BIGINT,\n"
                                + "  PRIMARY KEY (`bid`) NOT ENFORCED);\n"
                                + "INSERT INTO `gold`.`tops`\n"
                                + "SELECT `bid`, MAX(abalance) AS `top`,"
                                + " SOURCE_VERSION(`_commit_version`) AS `_source_version`\n"
                                + "FROM `silver`.`accounts$changelog`\n"
                                + "WHERE `bid` IS NOT NULL\n"
                                + "GROUP BY `bid`;\n");
    }

    @Test
    void definitionErrorsAreGoldDefinitionInvalid() {
        Map<List<String>, String> cases =
                Map.of(
                        List.of("--source", "silver.nope", "--upsert-table", "gold.t"),
                        "error: GOLD_DEFINITION_INVALID: --source silver.nope: no such Silver"
                                + " table\n",
                        List.of(
                                "--source",
                                "silver.accounts",
                                "--upsert-table",
                                "gold.t",
                                "--columns",
                                "bid, abalance"),
                        "error: GOLD_DEFINITION_INVALID: --columns of gold.t must keep the Silver"
                                + " identifier fields [aid] under their names (they are the Gold"
                                + " table's key), got [bid, abalance]\n",
                        List.of(
                                "--source",
                                "silver.accounts",
                                "--aggregate-table",
                                "gold.t",
                                "--group-by",
                                "branch",
                                "--aggregate",
                                "n=COUNT(*)"),
                        "error: GOLD_DEFINITION_INVALID: --group-by branch: the Silver table"
                                + " silver.accounts has no such column\n",
                        List.of(
                                "--source",
                                "silver.accounts",
                                "--aggregate-table",
                                "gold.t",
                                "--group-by",
                                "bid",
                                "--aggregate",
                                "n=COUNT"),
                        "error: GOLD_DEFINITION_INVALID: aggregate 'n=COUNT' is not of the form"
                                + " name=FUNCTION(expr), for example total=SUM(abalance),"
                                + " n=COUNT(*) or top=MAX(abalance)\n",
                        List.of(
                                "--source",
                                "silver.accounts",
                                "--aggregate-table",
                                "gold.t",
                                "--group-by",
                                "bid",
                                "--aggregate",
                                "_SOURCE_VERSION=COUNT(*)"),
                        "error: GOLD_DEFINITION_INVALID: --aggregate-table gold.t: a column named"
                                + " _source_version is the one changeflow adds (the Silver version"
                                + " of the row or group); name yours otherwise\n",
                        List.of(
                                "--source",
                                "silver.accounts",
                                "--aggregate-table",
                                "gold.t",
                                "--group-by",
                                "bid",
                                "--aggregate",
                                "BID=COUNT(*)"),
                        "error: GOLD_DEFINITION_INVALID: --aggregate-table gold.t: the column BID"
                                + " is named twice (group-by columns and aggregate names must"
                                + " differ)\n",
                        List.of(
                                "--source",
                                "silver.accounts",
                                "--upsert-table",
                                "gold.t",
                                "--columns",
                                "aid, abalance AS _source_version"),
                        "error: GOLD_DEFINITION_INVALID: --columns of gold.t: a column named"
                                + " _source_version is the one changeflow adds (the Silver version"
                                + " of the row or group); name yours otherwise\n");
        cases.forEach(
                (flags, expected) -> {
                    List<String> args = new ArrayList<>(List.of("gold", "--print-sql"));
                    args.addAll(flags);
                    args.addAll(List.of("--warehouse", warehouse.toString()));
                    CapturedOutput.MainRun run = CapturedOutput.main(args.toArray(String[]::new));
                    assertThat(run.stderr()).as(flags.toString()).isEqualTo(expected);
                    assertThat(run.code()).as(flags.toString()).isNotZero();
                });
        // a predicate ending in a -- comment: the comment ends at its line, the statement does not
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        int code =
                CapturedOutput.stdout(
                        printed,
                        () ->
                                Main.execute(
                                        "gold",
                                        "--print-sql",
                                        "--source",
                                        "silver.accounts",
                                        "--upsert-table",
                                        "gold.t",
                                        "--where",
                                        "abalance <> 0 -- positive or negative",
                                        "--warehouse",
                                        warehouse.toString()));
        assertThat(code).isZero();
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("\nWHERE abalance <> 0 -- positive or negative\n;\n");
        // a predicate Flink cannot plan: Flink's message
        CapturedOutput.MainRun bad =
                CapturedOutput.main(
                        "gold",
                        "--print-sql",
                        "--source",
                        "silver.accounts",
                        "--upsert-table",
                        "gold.t",
                        "--where",
                        "balance > 0",
                        "--warehouse",
                        warehouse.toString());
        assertThat(bad.stderr())
                .startsWith(
                        "error: GOLD_DEFINITION_INVALID: --upsert-table gold.t: Flink cannot plan"
                                + " SELECT `aid`, `bid`, `abalance`, `filler` FROM `silver`.`accounts`"
                                + " WHERE balance > 0: ")
                .contains("Column 'balance' not found in any table");
    }

    /**
     * A select list naming a column twice is GOLD_DEFINITION_INVALID naming it (Flink would have
     * renamed the second {@code abalance0}, silently); a name the list writes itself is kept.
     */
    @Test
    void aColumnNamedTwiceInTheSelectListIsRefused() {
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "gold",
                        "--print-sql",
                        "--source",
                        "silver.accounts",
                        "--upsert-table",
                        "gold.t",
                        "--columns",
                        "aid, abalance, abalance",
                        "--warehouse",
                        warehouse.toString());
        assertThat(run.stderr())
                .isEqualTo(
                        "error: GOLD_DEFINITION_INVALID: --columns of gold.t: the column abalance"
                                + " is named twice (Flink would call the second one abalance0);"
                                + " give each column its own name (expr AS name)\n");
        assertThat(run.code()).isEqualTo(2);
        assertThat(
                        printSql(
                                "--source",
                                "silver.accounts",
                                "--upsert-table",
                                "gold.t",
                                "--columns",
                                "aid, abalance, abalance * 2 AS abalance2"))
                .contains("  `abalance2` INT,\n");
    }

    /** Compiling the flags closes the catalog its planning session opened (issue #16). */
    @Test
    void compilingClosesTheCatalogItOpened() {
        CatalogSettings settings =
                CatalogSettings.of(
                        GoldSql.CATALOG,
                        Map.of(
                                "catalog-impl",
                                CountingHadoopCatalog.class.getName(),
                                "warehouse",
                                warehouse.toUri().toString()));
        int opened = CountingHadoopCatalog.OPENED.get();
        int closed = CountingHadoopCatalog.CLOSED.get();
        String sql =
                new GoldFlags(
                                "gold-accounts",
                                TableIdentifier.of("silver", "accounts"),
                                new GoldFlags.Upsert(TableIdentifier.of("gold", "t"), null, null),
                                null,
                                Map.of())
                        .toSql(settings);
        assertThat(sql).contains("INSERT INTO `gold`.`t`");
        assertThat(CountingHadoopCatalog.OPENED.get() - opened).isPositive();
        assertThat(CountingHadoopCatalog.CLOSED.get() - closed)
                .isEqualTo(CountingHadoopCatalog.OPENED.get() - opened);
    }
}

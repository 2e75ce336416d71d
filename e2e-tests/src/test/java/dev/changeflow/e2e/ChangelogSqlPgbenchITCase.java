package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.quarantine.QuarantineTable;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LongSummaryStatistics;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Silver→Gold queries in Flink SQL over changelog reads (semantics.md G1): the pgbench-s1 capture
 * ({@code ../shared/data/pgbench-s1}) is ingested once by changeflow's real pipeline into SCD1
 * Silver tables {@code silver.pgbench_accounts} (the accounts with aid up to {@value #MAX_AID}) and
 * {@code silver.pgbench_branches}, one Silver version per paced batch: 1 the initial snapshot, 2
 * and 3 5,000 pgbench transactions each, 4 the deletes, 5 the re-inserts, 6 the last updates. Each
 * query then runs in STREAMING mode over {@code t$changelog} reads ({@code 'bounded'='true'}: they
 * finish at the latest version) that start with the table as of an earlier version as {@code +I}
 * rows and go on with its updates and deletes as {@code -U}/{@code +U}/{@code -D}; the rows the
 * query's changelog leaves must equal exactly the same query's rows over Silver's final tables in
 * BATCH mode. One MiniCluster (RocksDB, checkpoints) and one ingest for the class.
 */
class ChangelogSqlPgbenchITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir static Path tmp;

    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: silver",
                    "format: debezium-json",
                    "namespace: silver",
                    "flows:",
                    "  - table: pgbench_accounts",
                    "    keys: [aid]",
                    "    scd-type: 1",
                    "    schema: 'aid INT, bid INT, abalance INT, filler STRING'",
                    "  - table: pgbench_branches",
                    "    keys: [bid]",
                    "    schema: 'bid INT, bbalance INT, filler STRING'");

    /**
     * The accounts kept: aid 1 to this (one in twenty, with about 500 updates, 27 deletes and 7
     * re-inserts of the capture's), so that the class stays within its time budget.
     */
    private static final int MAX_AID = 5_000;

    private static final String ACCOUNT_KEY = "{\"key\":{\"aid\":";

    /**
     * Batch bounds as line indexes of the capture: the snapshot of all tables, two halves of the
     * 10,000 transactions, the deletes, the re-inserts, the last updates.
     */
    private static final int[] BOUNDS = {0, 100_011, 120_011, 140_011, 141_011, 141_111, 141_511};

    private static Path warehouse;

    /** Ingests the capture once for the class (in the first test, where the cluster is set). */
    private static synchronized Path silver() throws Exception {
        if (warehouse != null) {
            return warehouse;
        }
        long t0 = System.nanoTime();
        Path capture = SharedData.pgbenchCapture();
        Path folder = tmp.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(folder.toAbsolutePath());
        Catalog catalog = settings.open();
        IngestPlan plan =
                IngestPlanner.plan(FlowsFile.parse(FLOWS, "flows.yaml"), List.of(capture));
        for (IngestPlan.Flow f : plan.flows) {
            StreamingTables.ensureTable(
                    catalog,
                    f.target,
                    f.spec.targetType(),
                    f.spec.identifierFields(),
                    f.tableOptions);
        }
        QuarantineTable.ensure(catalog, plan.quarantineNamespace);
        StreamExecutionEnvironment env = env(tmp.resolve("silver-checkpoints"), true);
        env.setParallelism(1);
        IngestJob.build(
                PacedCaptureLines.stream(env, capture, BOUNDS, ChangelogSqlPgbenchITCase::kept),
                plan,
                settings);
        env.execute("silver");
        assertThat(
                        catalog.loadTable(TableIdentifier.of("silver", "pgbench_accounts"))
                                .currentSnapshot()
                                .sequenceNumber())
                .isEqualTo(BOUNDS.length - 1);
        warehouse = folder;
        System.out.printf("Silver ingested in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        return warehouse;
    }

    /** The capture lines ingested: the accounts up to {@link #MAX_AID} and the branches. */
    private static boolean kept(String line) {
        if (line.startsWith(ACCOUNT_KEY)) {
            int from = ACCOUNT_KEY.length();
            return Integer.parseInt(line.substring(from, line.indexOf('}', from))) <= MAX_AID;
        }
        return line.contains("\"topic\":\"pgbench.public.pgbench_branches\"");
    }

    /**
     * An environment on the class's MiniCluster: RocksDB, checkpoints every 200 ms (none in BATCH
     * mode).
     */
    private static StreamExecutionEnvironment env(Path checkpoints, boolean checkpointing) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        if (checkpointing) {
            env.enableCheckpointing(200);
        }
        return env;
    }

    /** A table environment with catalog {@code c} (type changeflow) over Silver, in use. */
    private static StreamTableEnvironment tableEnv(boolean batch, String name) throws Exception {
        Path silver = silver();
        StreamExecutionEnvironment env = env(tmp.resolve(name + "-checkpoints"), !batch);
        env.setParallelism(2);
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(
                        env,
                        batch
                                ? EnvironmentSettings.inBatchMode()
                                : EnvironmentSettings.inStreamingMode());
        // fewer intermediate results: aggregates emit once per bundle, not once per row
        tEnv.getConfig().set("table.exec.mini-batch.enabled", "true");
        tEnv.getConfig().set("table.exec.mini-batch.allow-latency", "200 ms");
        tEnv.getConfig().set("table.exec.mini-batch.size", "5000");
        tEnv.executeSql(
                "CREATE CATALOG c WITH ('type'='changeflow', 'catalog-type'='hadoop', 'warehouse'='"
                        + silver.toUri()
                        + "')");
        tEnv.executeSql("USE CATALOG c");
        return tEnv;
    }

    /**
     * A bounded changelog read of a Silver table, starting with its rows as of {@code from − 1}.
     */
    private static String changelog(String table, int from) {
        return "silver.`"
                + table
                + "$changelog` /*+ OPTIONS('starting-version'='"
                + from
                + "', 'bounded'='true') */";
    }

    /**
     * The query's rows over Silver's final tables (BATCH mode) and the rows its changelog over the
     * Silver changelog reads leaves (STREAMING mode), both sorted.
     *
     * @param query the query with {@code %1$s} for the accounts and {@code %2$s} for the branches
     */
    private static List<List<String>> overSilverAndOverChangelog(
            String name, String query, int accountsFrom, int branchesFrom) throws Exception {
        List<String> oracle =
                ChangelogResults.finalRows(
                        tableEnv(true, name + "-oracle")
                                .executeSql(
                                        String.format(
                                                query,
                                                "silver.pgbench_accounts",
                                                "silver.pgbench_branches")));
        long t0 = System.nanoTime();
        List<String> gold =
                ChangelogResults.finalRows(
                        tableEnv(false, name)
                                .executeSql(
                                        String.format(
                                                query,
                                                changelog("pgbench_accounts", accountsFrom),
                                                changelog("pgbench_branches", branchesFrom))));
        System.out.printf(
                "%s over the changelog in %.1f s%n", name, (System.nanoTime() - t0) / 1e9);
        return List.of(oracle, gold);
    }

    /** The balances of PostgreSQL's final accounts with aid up to {@link #MAX_AID}. */
    private static List<Long> finalBalances() throws Exception {
        List<Long> balances = new ArrayList<>();
        for (String line : SharedData.finalCsv("pgbench_accounts")) {
            String[] f = line.split(",");
            if (Integer.parseInt(f[0]) <= MAX_AID) {
                balances.add(Long.parseLong(f[2]));
            }
        }
        return balances;
    }

    /**
     * Per-branch SUM, COUNT, MIN, MAX and AVG of the balances over the accounts' changelog from
     * version 2: the 5,000 accounts of version 1 as +I, then the transactions' updates, the
     * deletes, re-inserts and last updates as row kinds.
     */
    @Test
    void perBranchAggregatesEqualTheQueryOverSilver() throws Exception {
        List<List<String>> results =
                overSilverAndOverChangelog(
                        "aggregates",
                        "SELECT bid, SUM(abalance), COUNT(*), MIN(abalance), MAX(abalance), "
                                + "AVG(CAST(abalance AS DECIMAL(12, 2))) FROM %1$s GROUP BY bid",
                        2,
                        2);
        // the oracle itself is PostgreSQL's: the same aggregates over its final accounts
        LongSummaryStatistics stats =
                finalBalances().stream().mapToLong(Long::longValue).summaryStatistics();
        assertThat(results.get(0))
                .containsExactly(
                        String.format(
                                "+I[1, %d, %d, %d, %d, %s]",
                                stats.getSum(),
                                stats.getCount(),
                                stats.getMin(),
                                stats.getMax(),
                                BigDecimal.valueOf(stats.getSum())
                                        .divide(
                                                BigDecimal.valueOf(stats.getCount()),
                                                6,
                                                RoundingMode.HALF_UP)
                                        .toPlainString()));
        assertThat(results.get(1)).isEqualTo(results.get(0));
    }

    /**
     * A join of accounts and branches (accounts with a balance, and their branch's balance): the
     * accounts' changelog from version 4 (the table as of 3, then the deletes, re-inserts and last
     * updates), the branches' from version 2 (the branch as of 1, then its updates retract and
     * re-emit every joined row).
     */
    @Test
    void joinOfAccountsAndBranchesEqualsTheQueryOverSilver() throws Exception {
        List<List<String>> results =
                overSilverAndOverChangelog(
                        "join",
                        "SELECT a.aid, a.abalance, b.bid, b.bbalance FROM %1$s AS a "
                                + "JOIN %2$s AS b ON a.bid = b.bid WHERE a.abalance <> 0",
                        4,
                        2);
        assertThat(results.get(0))
                .hasSize((int) finalBalances().stream().filter(b -> b != 0).count());
        assertThat(results.get(1)).isEqualTo(results.get(0));
    }
}

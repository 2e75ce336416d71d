package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.gold.GoldException;
import dev.changeflow.jobs.gold.GoldFlags;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replay of a Silver→Gold job from version 76 (docs/semantics.md G3): the pgbench-s1 accounts are
 * ingested by changeflow's real pipeline into an SCD1 Silver table, one Silver version per paced
 * batch (84 versions). The Gold job is the flag form of {@code bin/changeflow gold} (upsert
 * projection {@code aid, bid, abalance WHERE abalance <> 0} and the per-branch aggregate {@code
 * SUM(abalance), COUNT(*)}) compiled to Gold SQL ({@link GoldFlags}) and run by {@link GoldSql}. It
 * runs while Silver is held at version 75 and records 75 in both Gold tables; its checkpoints are
 * thrown away (the next run starts without state); Silver goes on to version 84. A restart at 77
 * leaves a gap and fails with {@code GOLD_VERSION_MISMATCH}, committing nothing; a restart at 76
 * gives Gold tables equal to the oracle computed from Silver's final rows, recording 84.
 *
 * <p>Dropped with the flag form's own runner: the overlap refusal (a SQL run at or before the
 * recorded version rebuilds its Gold tables, so a start at 75 is valid) and the check inside the
 * change feed's enumerator (a SQL cluster run is checked by the program before it submits, {@code
 * GoldSqlClusterITCase}).
 */
class GoldReplayITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(6)
                            .build());

    @TempDir Path tmp;

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
                    "    schema: 'aid INT, bid INT, abalance INT, filler STRING'");

    private static final TableIdentifier SILVER = TableIdentifier.of("silver", "pgbench_accounts");
    private static final TableIdentifier GOLD_ACCOUNTS = TableIdentifier.of("gold", "accounts");
    private static final TableIdentifier GOLD_BRANCHES =
            TableIdentifier.of("gold", "branch_balances");
    private static final String HOLD = "gold-replay-silver";

    /** Silver holds before this batch: batches 0..74 are versions 1..75. */
    private static final int HOLD_AT = 75;

    /**
     * Batches of the capture (line indexes; accounts lines only are emitted): the accounts
     * snapshot, 80 batches of 125 pgbench transactions, the deletes, the re-inserts and the last
     * updates.
     */
    private static int[] bounds() {
        List<Integer> b = new ArrayList<>(List.of(0));
        for (int i = 0; i <= 80; i++) {
            b.add(100_011 + i * 500);
        }
        b.addAll(List.of(141_011, 141_111, 141_511));
        return b.stream().mapToInt(Integer::intValue).toArray();
    }

    private static GoldFlags flags() {
        return new GoldFlags(
                "gold-accounts",
                SILVER,
                new GoldFlags.Upsert(GOLD_ACCOUNTS, "aid, bid, abalance", "abalance <> 0"),
                new GoldFlags.Aggregate(
                        GOLD_BRANCHES,
                        List.of("bid"),
                        List.of(
                                GoldFlags.AggregateColumn.parse("balance_total=SUM(abalance)"),
                                GoldFlags.AggregateColumn.parse("account_count=COUNT(*)"))),
                Map.of());
    }

    private GoldSql.Options options(@Nullable Long startingVersion) {
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = tmp.resolve("warehouse");
        o.name = "gold-accounts";
        o.bounded = true;
        o.parallelism = 2;
        o.checkpointInterval = Duration.ofMillis(500);
        o.startingVersion = startingVersion;
        o.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return o;
    }

    /** A local run of the compiled flags up to Silver's latest version (gold --source ...). */
    private void runGold(CatalogSettings settings, @Nullable Long startingVersion)
            throws Exception {
        GoldSql.runLocal(
                GoldSql.parse(flags().toSql(settings), "gold-accounts.sql"),
                settings,
                options(startingVersion));
    }

    private static Configuration conf(Path checkpoints) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        conf.setString("taskmanager.memory.managed.fraction", "0.1");
        return conf;
    }

    @Test
    void restartWithANewCheckpointAtVersion76GivesTheOracle() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        CatalogSettings settings =
                CatalogSettings.localHadoop(tmp.resolve("warehouse").toAbsolutePath());
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

        // Silver: changeflow's ingest, one version per batch, held before version 76
        StreamExecutionEnvironment silverEnv =
                StreamExecutionEnvironment.getExecutionEnvironment(conf(tmp.resolve("silver-ck")));
        silverEnv.setParallelism(1);
        silverEnv.enableCheckpointing(100);
        DataStream<SourceLine> lines =
                PacedCaptureLines.stream(
                        silverEnv,
                        capture,
                        bounds(),
                        line -> line.contains("\"topic\":\"pgbench.public.pgbench_accounts\""),
                        HOLD_AT,
                        HOLD);
        IngestJob.build(lines, plan, settings);
        JobClient silverJob = silverEnv.executeAsync("silver");
        try {
            replay(catalog, settings, silverJob);
        } finally {
            // a failed check must not leave the held writer running into the temp folder's removal
            OneBatchPerCheckpointSource.release(HOLD);
            if (!silverJob.getJobExecutionResult().isDone()) {
                silverJob.cancel().get();
            }
        }
    }

    private static long t0 = System.nanoTime();

    private static void milestone(String what) {
        System.out.printf("GoldReplayITCase %6.1f s: %s%n", (System.nanoTime() - t0) / 1e9, what);
    }

    private void replay(Catalog catalog, CatalogSettings settings, JobClient silverJob)
            throws Exception {
        t0 = System.nanoTime();
        Table silver = catalog.loadTable(SILVER);
        Await.until(
                "Silver's first version",
                Duration.ofSeconds(180),
                () -> version(silver) >= 1,
                () -> "Silver at version " + version(silver));

        // Gold, first life: while Silver is held at 75, up to Silver's latest version (a run
        // that follows Silver as it grows takes longer on a loaded machine: the ingest and the
        // Gold job share the cores)
        Await.until(
                "Silver at version " + HOLD_AT,
                Duration.ofSeconds(180),
                () -> version(silver) == HOLD_AT,
                () -> "Silver at version " + version(silver));
        milestone("Silver at version " + version(silver) + ", Gold starts");
        runGold(settings, null);
        assertEquals(HOLD_AT, recorded(catalog, GOLD_BRANCHES));
        assertEquals(HOLD_AT, recorded(catalog, GOLD_ACCOUNTS));
        milestone("Gold at version 75");
        // its checkpoints are discarded: the next run starts without state
        assertEquals(HOLD_AT, version(silver));

        OneBatchPerCheckpointSource.release(HOLD);
        silverJob.getJobExecutionResult().get();
        long latest = version(silver);
        milestone("Silver done at version " + latest);
        assertEquals(bounds().length - 1, latest, "one Silver version per batch");

        // a restart without state at 77 leaves a gap: refused before anything is committed
        long accountsSnapshot = catalog.loadTable(GOLD_ACCOUNTS).currentSnapshot().snapshotId();
        long branchesSnapshot = catalog.loadTable(GOLD_BRANCHES).currentSnapshot().snapshotId();
        GoldException gap = assertThrows(GoldException.class, () -> runGold(settings, 77L));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, gap.code());
        assertTrue(
                gap.getMessage()
                        .startsWith(
                                "GOLD_VERSION_MISMATCH: starting version 77 leaves a gap: Gold"
                                        + " table gold.accounts (recorded"
                                        + " changeflow.source-version.silver.pgbench_accounts ="
                                        + " 75) contain Silver "),
                gap.getMessage());
        assertTrue(
                gap.getMessage().contains("up to version 75, and versions 76..76 hold "),
                gap.getMessage());
        assertTrue(
                gap.getMessage()
                        .endsWith(
                                " change(s) no Gold commit contains. Start at version 76 (or omit"
                                        + " the starting version)."),
                gap.getMessage());
        assertEquals(
                accountsSnapshot, catalog.loadTable(GOLD_ACCOUNTS).currentSnapshot().snapshotId());
        assertEquals(
                branchesSnapshot, catalog.loadTable(GOLD_BRANCHES).currentSnapshot().snapshotId());

        milestone("mismatch checked");
        // the replay: a new checkpoint, starting at 76 (Silver as of 75, then 76..84)
        runGold(settings, 76L);
        assertEquals(latest, recorded(catalog, GOLD_BRANCHES));
        assertEquals(latest, recorded(catalog, GOLD_ACCOUNTS));
        milestone("Gold replayed from 76");

        // oracle: Silver's final rows, projected / filtered and aggregated
        List<String> expectedAccounts = new ArrayList<>();
        Map<Integer, long[]> expectedBranches = new TreeMap<>();
        for (Record r : TableRows.read(catalog.loadTable(SILVER))) {
            Integer aid = (Integer) r.getField("aid");
            Integer bid = (Integer) r.getField("bid");
            Integer balance = (Integer) r.getField("abalance");
            if (balance != null && balance != 0) {
                expectedAccounts.add(aid + "," + bid + "," + balance);
            }
            long[] agg = expectedBranches.computeIfAbsent(bid, k -> new long[2]);
            agg[0] += balance == null ? 0 : balance;
            agg[1]++;
        }
        expectedAccounts.sort(null);
        List<String> actualAccounts = new ArrayList<>();
        for (Record r : TableRows.read(catalog.loadTable(GOLD_ACCOUNTS))) {
            actualAccounts.add(
                    r.getField("aid") + "," + r.getField("bid") + "," + r.getField("abalance"));
        }
        actualAccounts.sort(null);
        assertEquals(expectedAccounts.size(), actualAccounts.size());
        assertEquals(expectedAccounts, actualAccounts);
        List<String> expectedBranchRows = new ArrayList<>();
        expectedBranches.forEach(
                (bid, agg) -> expectedBranchRows.add(bid + "," + agg[0] + "," + agg[1]));
        List<String> actualBranchRows = new ArrayList<>();
        for (Record r : TableRows.read(catalog.loadTable(GOLD_BRANCHES))) {
            actualBranchRows.add(
                    r.getField("bid")
                            + ","
                            + r.getField("balance_total")
                            + ","
                            + r.getField("account_count"));
        }
        actualBranchRows.sort(null);
        assertEquals(expectedBranchRows, actualBranchRows);
        System.out.printf(
                "Gold replay: Silver %d versions, Gold restarted at 76: %d accounts, branches %s%n",
                latest, actualAccounts.size(), actualBranchRows);
    }

    private static long version(Table t) {
        t.refresh();
        return t.currentSnapshot() == null ? 0 : t.currentSnapshot().sequenceNumber();
    }

    /** The Silver version the newest commit of a Gold table records (G2), or -1. */
    private static long recorded(Catalog catalog, TableIdentifier id) {
        if (!catalog.tableExists(id)) {
            return -1L;
        }
        Table gold = catalog.loadTable(id);
        return gold.currentSnapshot() == null
                ? -1L
                : Long.parseLong(
                        gold.currentSnapshot()
                                .summary()
                                .getOrDefault(
                                        "changeflow.source-version.silver.pgbench_accounts", "-1"));
    }
}

package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.gold.GoldException;
import dev.changeflow.jobs.gold.GoldRunner;
import dev.changeflow.jobs.gold.GoldSpec;
import dev.changeflow.jobs.gold.GoldStart;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.CommonTestUtils;
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

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replay of a Silver→Gold job from version 76 (issue: change data feed, "replay"): the pgbench-s1
 * accounts are ingested by changeflow's real pipeline into an SCD1 Silver table, one Silver version
 * per paced batch (84 versions). A Gold job (upsert projection {@code aid, bid, abalance WHERE
 * abalance <> 0} and the per-branch aggregate {@code SUM(abalance), COUNT(*)}) follows the change
 * feed while Silver stops at version 75; once Gold shows 75 committed the Gold job is cancelled and
 * its checkpoints are thrown away; Silver goes on to version 84. A restart without state at 75
 * (overlap) or 77 (gap) fails with {@code GOLD_VERSION_MISMATCH} — on the client, and inside the
 * change feed's enumerator as on a cluster — and a restart at 76 gives Gold tables equal to the
 * oracle computed from Silver's final rows.
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

    private static GoldSpec spec() {
        return new GoldSpec(
                "gold-accounts",
                SILVER,
                new GoldSpec.Upsert(GOLD_ACCOUNTS, List.of("aid, bid, abalance"), "abalance <> 0"),
                new GoldSpec.Aggregate(
                        GOLD_BRANCHES,
                        List.of("bid"),
                        List.of(
                                GoldSpec.AggregateColumn.parse("balance_total=SUM(abalance)"),
                                GoldSpec.AggregateColumn.parse("account_count=COUNT(*)"))));
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
        CommonTestUtils.waitUntilCondition(() -> version(silver) >= 1, 50L);

        // Gold, first life: follows the change feed as Silver grows to 75
        StreamExecutionEnvironment goldEnv =
                StreamExecutionEnvironment.getExecutionEnvironment(conf(tmp.resolve("gold-ck-1")));
        goldEnv.setParallelism(2);
        goldEnv.enableCheckpointing(200);
        GoldRunner.build(
                goldEnv,
                spec(),
                settings,
                OptionalLong.empty(),
                false,
                StreamingTableOptions.defaults());
        milestone("Silver at version " + version(silver) + ", Gold starts");
        JobClient goldJob = goldEnv.executeAsync("gold, first life");
        try {
            CommonTestUtils.waitUntilCondition(
                    () ->
                            goldVersion(catalog, GOLD_BRANCHES) == HOLD_AT
                                    && goldVersion(catalog, GOLD_ACCOUNTS) == HOLD_AT,
                    50L);
        } finally {
            if (!goldJob.getJobExecutionResult().isDone()) {
                goldJob.cancel().get();
            }
        }
        milestone("Gold at version 75, cancelled");
        // killed (above); its checkpoints are discarded (never restored)
        assertEquals(HOLD_AT, version(silver));

        OneBatchPerCheckpointSource.release(HOLD);
        silverJob.getJobExecutionResult().get();
        long latest = version(silver);
        milestone("Silver done at version " + latest);
        assertEquals(bounds().length - 1, latest, "one Silver version per batch");
        assertEquals(HOLD_AT, goldVersion(catalog, GOLD_BRANCHES));

        // a restart without state at 75 overlaps, at 77 leaves a gap
        GoldRunner.Options o = new GoldRunner.Options();
        o.warehouse = tmp.resolve("warehouse");
        o.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        o.startingVersion = 75L;
        GoldException overlap =
                assertThrows(GoldException.class, () -> GoldRunner.runLocal(spec(), settings, o));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, overlap.code());
        assertTrue(
                overlap.getMessage()
                        .startsWith(
                                "GOLD_VERSION_MISMATCH: starting version 75 overlaps the Gold tables:"),
                overlap.getMessage());
        o.startingVersion = 77L;
        GoldException gap =
                assertThrows(GoldException.class, () -> GoldRunner.runLocal(spec(), settings, o));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, gap.code());
        assertTrue(
                gap.getMessage()
                        .startsWith("GOLD_VERSION_MISMATCH: starting version 77 leaves a gap:"),
                gap.getMessage());
        // the same check inside the change feed's enumerator (the cluster path: only a start
        // without state resolves)
        StreamExecutionEnvironment clusterLike =
                StreamExecutionEnvironment.getExecutionEnvironment(conf(tmp.resolve("gold-ck-x")));
        clusterLike.enableCheckpointing(200);
        GoldRunner.Options cluster = new GoldRunner.Options();
        cluster.startingVersion = 77L;
        GoldRunner.buildCluster(clusterLike, spec(), settings, cluster);
        Exception failed = assertThrows(Exception.class, () -> clusterLike.execute("gold at 77"));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, rootGoldException(failed).code());

        milestone("mismatches checked");
        // the replay: a new checkpoint, starting at 76
        o.startingVersion = 76L;
        GoldRunner.Summary summary = GoldRunner.runLocal(spec(), settings, o);
        assertEquals(OptionalLong.of(76L), summary.start);
        assertEquals(latest, goldVersion(catalog, GOLD_BRANCHES));
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

    private static long goldVersion(Catalog catalog, TableIdentifier id) {
        return catalog.tableExists(id)
                ? GoldStart.goldVersion(catalog.loadTable(id)).orElse(-1L)
                : -1L;
    }

    private static GoldException rootGoldException(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof GoldException) {
                return (GoldException) c;
            }
        }
        throw new AssertionError("no GoldException in the cause chain", t);
    }
}

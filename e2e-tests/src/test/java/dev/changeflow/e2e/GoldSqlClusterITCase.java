package dev.changeflow.e2e;

import dev.changeflow.jobs.gold.GoldException;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.jobs.gold.GoldSqlStart;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code bin/changeflow gold FILE.sql --cluster} (docs/semantics.md G2, G3) with a MiniCluster as
 * "the cluster" (the environment of the context, as the definition-file cluster path is tested in
 * {@link GoldReplayITCase}): {@code examples/gold_branches.sql} (its {@code starting-version} hints
 * removed) over the Silver tables of {@link GoldSqlITCase}, written with Iceberg's API. The job
 * ({@link GoldSql#submitCluster}) is unbounded: it starts at Silver's current snapshot (accounts 3,
 * branches 1), Silver goes on to accounts 6 and branches 5 while it runs, and once both Gold
 * tables' commits record those versions it is cancelled and each Gold table equals its query over
 * Silver's final rows. Then accounts 7, 8 and branches 6, 7: a start at 8 is {@code
 * GOLD_VERSION_MISMATCH} in the client, nothing committed or submitted; a start at 2 empties both
 * Gold tables, rebuilds them, and after cancellation they again equal the queries over Silver's
 * final rows. A second test submits the same file with {@code SET 'changeflow.maintenance' =
 * 'true'} (M1): both Gold tables get compacted in the job and stay exact.
 */
class GoldSqlClusterITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    @TempDir Path tmp;

    /** The Silver tables and their expected rows, as the tests change them. */
    private record Silver(
            Table accounts,
            Table branches,
            Map<Long, long[]> accountRows,
            Map<Long, String> branchRows,
            Random random) {}

    /**
     * Silver in {@code catalog}: branches 1..5 (version 1), 40 accounts (version 1) and two more
     * accounts versions (up to version 3).
     */
    private static Silver silver(Catalog catalog) {
        Map<String, String> v2 = Map.of(TableProperties.FORMAT_VERSION, "2");
        Table accounts =
                catalog.createTable(
                        TableIdentifier.of("silver", "accounts"),
                        GoldSqlITCase.ACCOUNTS,
                        PartitionSpec.unpartitioned(),
                        v2);
        Table branches =
                catalog.createTable(
                        TableIdentifier.of("silver", "branches"),
                        GoldSqlITCase.BRANCHES,
                        PartitionSpec.unpartitioned(),
                        v2);
        Map<Long, String> branchRows = new TreeMap<>();
        for (long b = 1; b <= 5; b++) {
            branchRows.put(b, "branch-" + b);
        }
        GoldSqlITCase.commit(
                branches,
                GoldSqlITCase.BRANCHES,
                "bid",
                GoldSqlITCase.branchImages(branchRows, branchRows.keySet()),
                List.of());
        Map<Long, long[]> accountRows = new TreeMap<>();
        Random random = new Random(1616);
        for (long a = 1; a <= 40; a++) {
            accountRows.put(a, new long[] {1 + random.nextInt(5), random.nextInt(6) * 10});
        }
        GoldSqlITCase.commit(
                accounts,
                GoldSqlITCase.ACCOUNTS,
                "aid",
                GoldSqlITCase.accountImages(accountRows, accountRows.keySet()),
                List.of());
        for (int version = 2; version <= 3; version++) {
            GoldSqlITCase.accountsVersion(accounts, accountRows, random);
        }
        return new Silver(accounts, branches, accountRows, branchRows, random);
    }

    /**
     * {@code examples/gold_branches.sql} without its starting-version hints, after {@code head}.
     */
    private GoldSql.File goldBranches(String head) throws Exception {
        Path file = tmp.resolve("gold_branches.sql");
        Files.writeString(
                file,
                head
                        + Files.readString(
                                        SharedData.repositoryRoot()
                                                .resolve("examples")
                                                .resolve("gold_branches.sql"))
                                .replace("/*+ OPTIONS('starting-version'='1') */", ""));
        return GoldSql.read(file);
    }

    @Test
    void goldSqlOnTheClusterFollowsSilverAndReplaysFromAVersion() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        Silver silver = silver(catalog);
        Table accounts = silver.accounts();
        Table branches = silver.branches();
        Map<Long, long[]> accountRows = silver.accountRows();
        Map<Long, String> branchRows = silver.branchRows();
        Random random = silver.random();
        GoldSql.File gold = goldBranches("");

        // run 1: from Silver's current snapshot, unbounded; Silver moves on while it runs
        JobClient first = submit(gold, settings, null, "ck-1");
        try {
            for (int version = 4; version <= 6; version++) {
                GoldSqlITCase.accountsVersion(accounts, accountRows, random);
            }
            branchRows.put(2L, "branch-two");
            GoldSqlITCase.commit(
                    branches,
                    GoldSqlITCase.BRANCHES,
                    "bid",
                    GoldSqlITCase.branchImages(branchRows, Set.of(2L)),
                    List.of());
            branchRows.remove(5L);
            GoldSqlITCase.commit(branches, GoldSqlITCase.BRANCHES, "bid", List.of(), List.of(5L));
            branchRows.put(3L, "branch-three");
            GoldSqlITCase.commit(
                    branches,
                    GoldSqlITCase.BRANCHES,
                    "bid",
                    GoldSqlITCase.branchImages(branchRows, Set.of(3L)),
                    List.of());
            branchRows.put(4L, "branch-four");
            GoldSqlITCase.commit(
                    branches,
                    GoldSqlITCase.BRANCHES,
                    "bid",
                    GoldSqlITCase.branchImages(branchRows, Set.of(4L)),
                    List.of());
            awaitRecorded(catalog, "6", "5");
        } finally {
            cancel(first);
        }
        assertGoldEqualsOracle(catalog, accountRows, branchRows);

        // accounts 7, 8 and branches 6, 7; a start at 8 skips accounts 7: refused in the client,
        // nothing committed
        for (int version = 7; version <= 8; version++) {
            GoldSqlITCase.accountsVersion(accounts, accountRows, random);
        }
        for (long bid : List.of(1L, 2L)) {
            branchRows.put(bid, "branch-" + bid + "-renamed");
            GoldSqlITCase.commit(
                    branches,
                    GoldSqlITCase.BRANCHES,
                    "bid",
                    GoldSqlITCase.branchImages(branchRows, Set.of(bid)),
                    List.of());
        }
        Table stats = catalog.loadTable(TableIdentifier.of("gold", "branch_stats"));
        Table top = catalog.loadTable(TableIdentifier.of("gold", "top_accounts"));
        long statsSnapshot = stats.currentSnapshot().snapshotId();
        long topSnapshot = top.currentSnapshot().snapshotId();
        assertThatThrownBy(() -> submit(gold, settings, 8L, "ck-gap"))
                .isInstanceOfSatisfying(
                        GoldException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(GoldException.Code.GOLD_VERSION_MISMATCH))
                .hasMessageContaining("starting version 8 leaves a gap")
                .hasMessageContaining(
                        "Gold table gold.branch_stats (recorded"
                                + " changeflow.source-version.silver.accounts = 6)");
        stats.refresh();
        top.refresh();
        assertThat(stats.currentSnapshot().snapshotId()).isEqualTo(statsSnapshot);
        assertThat(top.currentSnapshot().snapshotId()).isEqualTo(topSnapshot);

        // replay from 2 with a new checkpoint: emptied, rebuilt, equal to the oracle again
        JobClient replay = submit(gold, settings, 2L, "ck-2");
        try {
            awaitRecorded(catalog, "8", "7");
        } finally {
            cancel(replay);
        }
        assertGoldEqualsOracle(catalog, accountRows, branchRows);
        for (Table t : List.of(stats, top)) {
            t.refresh();
            Snapshot reset = null;
            for (Snapshot snap : SnapshotUtil.currentAncestors(t)) {
                if (snap.summary().containsKey(GoldSqlStart.RESET_PREFIX + "silver.accounts")) {
                    reset = snap;
                    break;
                }
            }
            assertThat(reset).isNotNull();
            assertThat(reset.summary())
                    .containsEntry(GoldSqlStart.RESET_PREFIX + "silver.accounts", "2");
            // branch_stats's INSERT reads accounts only (#16: marks name its own reads)
            if (t == stats) {
                assertThat(reset.summary())
                        .doesNotContainKey(GoldSqlStart.RESET_PREFIX + "silver.branches");
            } else {
                assertThat(reset.summary())
                        .containsEntry(GoldSqlStart.RESET_PREFIX + "silver.branches", "2");
            }
        }
    }

    /**
     * M1 on a cluster: the same file with {@code SET 'changeflow.maintenance' = 'true'} (a
     * compaction every 2 Gold commits or 2 equality-delete files, at most one per 300 ms; expiry
     * and orphan removal off to keep the job small; the embedded SQLite lock of the local
     * warehouse) is submitted by {@link GoldSql#submitCluster} with both Gold tables' maintenance
     * graphs in the job. Silver accounts gets 2 more versions (4, 5), each awaited in Gold (so each
     * Gold table commits at least 3 times); then both Gold tables have a {@code replace} snapshot
     * in their history, record Silver's final versions (G2: a compaction records no version and
     * hides none) and, after cancellation, each equals its query over Silver's final rows.
     */
    @Test
    void maintainedGoldSqlOnTheClusterCompactsAndStaysExact() throws Exception {
        long t0 = System.nanoTime();
        Path warehouse = tmp.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        Silver silver = silver(catalog);
        GoldSql.File gold =
                goldBranches(
                        String.join(
                                "\n",
                                "SET 'changeflow.maintenance' = 'true';",
                                "SET 'changeflow.maintenance-commit-count' = '2';",
                                "SET 'changeflow.maintenance-data-file-count' = '0';",
                                "SET 'changeflow.maintenance-delete-file-count' = '2';",
                                "SET 'changeflow.maintenance-interval' = '0';",
                                "SET 'changeflow.maintenance-rate-limit' = '300ms';",
                                "SET 'changeflow.maintenance-expire-interval' = '0';",
                                "SET 'changeflow.maintenance-orphans-older-than' = '0';",
                                ""));
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        JobClient job = submit(gold, settings, null, "ck-maintained", printed);
        try {
            awaitRecordedThrough(catalog, 3, 1);
            for (long version = 4; version <= 5; version++) {
                GoldSqlITCase.accountsVersion(
                        silver.accounts(), silver.accountRows(), silver.random());
                awaitRecordedThrough(catalog, version, 1);
            }
            Await.until(
                    "a compaction of both Gold tables",
                    Duration.ofSeconds(180),
                    () -> compacted(catalog, "branch_stats") && compacted(catalog, "top_accounts"),
                    () ->
                            "branch_stats compacted: "
                                    + compacted(catalog, "branch_stats")
                                    + ", top_accounts compacted: "
                                    + compacted(catalog, "top_accounts"));
        } finally {
            if (!job.getJobExecutionResult().isDone()) {
                job.cancel().get();
            }
        }
        System.out.printf(
                "maintained Gold SQL job on the cluster done in %.1f s%n",
                (System.nanoTime() - t0) / 1e9);
        assertGoldEqualsOracle(catalog, silver.accountRows(), silver.branchRows());
        for (String t : List.of("branch_stats", "top_accounts")) {
            Table g = catalog.loadTable(TableIdentifier.of("gold", t));
            assertThat(compacted(catalog, t)).as("a replace snapshot in gold." + t).isTrue();
            assertThat(GoldSqlStart.recordedVersion(g, "silver.accounts")).hasValue(5);
            if (t.equals("branch_stats")) {
                // its INSERT reads accounts only (#16)
                assertThat(GoldSqlStart.recordedVersion(g, "silver.branches")).isEmpty();
            } else {
                assertThat(GoldSqlStart.recordedVersion(g, "silver.branches")).hasValue(1);
            }
        }
        String nl = System.lineSeparator();
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "Gold table changeflow.gold.branch_stats: set write.upsert.enabled=true"
                                + " (format version 2 or later): written by upsert on its primary"
                                + " key"
                                + nl
                                + "Gold table changeflow.gold.top_accounts: set"
                                + " write.upsert.enabled=true (format version 2 or later): written"
                                + " by upsert on its primary key"
                                + nl
                                + "Submitted 2 INSERT statement(s) of gold_branches as one job,"
                                + " running until stopped, maintaining gold.branch_stats,"
                                + " gold.top_accounts in the job"
                                + nl);
    }

    /** Whether gold.{@code table}'s history holds a compaction ({@code replace}) snapshot. */
    private static boolean compacted(Catalog catalog, String table) {
        Table g = catalog.loadTable(TableIdentifier.of("gold", table));
        if (g.currentSnapshot() == null) {
            return false;
        }
        for (Snapshot snap : SnapshotUtil.currentAncestors(g)) {
            if (DataOperations.REPLACE.equals(snap.operation())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Until both Gold tables record (G2, {@link GoldSqlStart#recordedVersion}: the newest commit
     * that records one, past compactions) accounts at this version, and top_accounts branches at
     * this one (branch_stats's INSERT reads accounts only, so it records no branches version).
     */
    private static void awaitRecordedThrough(Catalog catalog, long accounts, long branches)
            throws Exception {
        Await.until(
                "Gold recording accounts version " + accounts + ", branches " + branches,
                Duration.ofSeconds(180),
                () -> {
                    for (String t : List.of("branch_stats", "top_accounts")) {
                        if (!catalog.tableExists(TableIdentifier.of("gold", t))) {
                            return false;
                        }
                        Table g = catalog.loadTable(TableIdentifier.of("gold", t));
                        OptionalLong a = GoldSqlStart.recordedVersion(g, "silver.accounts");
                        OptionalLong b = GoldSqlStart.recordedVersion(g, "silver.branches");
                        if (a.isEmpty() || a.getAsLong() != accounts) {
                            return false;
                        }
                        if (t.equals("branch_stats")
                                ? b.isPresent()
                                : b.isEmpty() || b.getAsLong() != branches) {
                            return false;
                        }
                    }
                    return true;
                },
                () -> "recorded: " + recorded(catalog));
    }

    /** Each Gold table's recorded source versions (its current commit's summary), for messages. */
    private static String recorded(Catalog catalog) {
        StringBuilder b = new StringBuilder();
        for (String t : List.of("branch_stats", "top_accounts")) {
            TableIdentifier id = TableIdentifier.of("gold", t);
            b.append(t)
                    .append('=')
                    .append(
                            catalog.tableExists(id)
                                            && catalog.loadTable(id).currentSnapshot() != null
                                    ? GoldSqlITCase.sourceVersions(catalog.loadTable(id))
                                    : "none")
                    .append(' ');
        }
        return b.toString().trim();
    }

    /** The cluster path on the MiniCluster's context environment, checkpoints under {@code ck}. */
    private JobClient submit(
            GoldSql.File gold, CatalogSettings settings, Long startingVersion, String ck)
            throws Exception {
        return submit(gold, settings, startingVersion, ck, new ByteArrayOutputStream());
    }

    /** As above, the program's lines printed to {@code out}. */
    private JobClient submit(
            GoldSql.File gold,
            CatalogSettings settings,
            Long startingVersion,
            String ck,
            ByteArrayOutputStream out)
            throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, tmp.resolve(ck).toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        conf.setString("taskmanager.memory.managed.fraction", "0.1");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        GoldSql.Options o = new GoldSql.Options();
        o.checkpointInterval = java.time.Duration.ofMillis(300);
        o.startingVersion = startingVersion;
        o.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        return GoldSql.submitCluster(gold, env, settings, o);
    }

    private static void cancel(JobClient job) throws Exception {
        if (!job.getJobExecutionResult().isDone()) {
            job.cancel().get();
        }
    }

    /**
     * Until both Gold tables' current commits record accounts / branches at these versions, each
     * exactly the Silver tables its own INSERT reads (branch_stats: accounts only).
     */
    private static void awaitRecorded(Catalog catalog, String accounts, String branches)
            throws Exception {
        Await.until(
                "Gold recording accounts version " + accounts + ", branches " + branches,
                Duration.ofSeconds(180),
                () -> {
                    for (String t : List.of("branch_stats", "top_accounts")) {
                        Map<String, String> expected =
                                t.equals("branch_stats")
                                        ? Map.of(
                                                "changeflow.source-version.silver.accounts",
                                                accounts)
                                        : Map.of(
                                                "changeflow.source-version.silver.accounts",
                                                accounts,
                                                "changeflow.source-version.silver.branches",
                                                branches);
                        Table g = catalog.loadTable(TableIdentifier.of("gold", t));
                        if (g.currentSnapshot() == null
                                || !GoldSqlITCase.sourceVersions(g).equals(expected)) {
                            return false;
                        }
                    }
                    return true;
                },
                () -> "recorded: " + recorded(catalog));
    }

    private static void assertGoldEqualsOracle(
            Catalog catalog, Map<Long, long[]> accountRows, Map<Long, String> branchRows) {
        Map<Long, long[]> finalAccounts = new TreeMap<>();
        for (Record r :
                TableRows.read(catalog.loadTable(TableIdentifier.of("silver", "accounts")))) {
            finalAccounts.put(
                    (Long) r.getField("aid"),
                    new long[] {(Long) r.getField("bid"), (Long) r.getField("balance")});
        }
        assertThat(finalAccounts.keySet()).isEqualTo(accountRows.keySet());
        Map<Long, String> finalBranches = new TreeMap<>();
        for (Record r :
                TableRows.read(catalog.loadTable(TableIdentifier.of("silver", "branches")))) {
            finalBranches.put((Long) r.getField("bid"), (String) r.getField("name"));
        }
        assertThat(finalBranches).isEqualTo(branchRows);
        List<String> statsOracle = GoldSqlITCase.branchStats(finalAccounts);
        assertThat(statsOracle).hasSizeGreaterThan(2);
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "branch_stats"))))
                .containsExactlyInAnyOrderElementsOf(statsOracle);
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "top_accounts"))))
                .containsExactlyInAnyOrderElementsOf(
                        GoldSqlITCase.topAccounts(finalAccounts, finalBranches));
    }
}

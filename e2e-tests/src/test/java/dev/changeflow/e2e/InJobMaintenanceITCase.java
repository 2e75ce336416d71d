package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import static dev.changeflow.e2e.PacedAccountsIngest.ACCOUNTS;
import static dev.changeflow.e2e.PacedAccountsIngest.accountsUpTo;
import static dev.changeflow.e2e.PacedAccountsIngest.ancestry;
import static dev.changeflow.e2e.PacedAccountsIngest.batchBounds;
import static dev.changeflow.e2e.PacedAccountsIngest.createTables;
import static dev.changeflow.e2e.PacedAccountsIngest.environment;
import static dev.changeflow.e2e.PacedAccountsIngest.finalAccounts;
import static dev.changeflow.e2e.PacedAccountsIngest.jobConfiguration;
import static dev.changeflow.e2e.PacedAccountsIngest.rows;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * In-job compaction ({@link InJobMaintenance}, docs/semantics.md M1) during a real ingest: the
 * recorded pgbench capture's changes of the accounts with aid ≤ 20,000 ({@code
 * ../shared/data/pgbench-s1}: 20,000 snapshot rows and about a fifth of its 10,000 updates, 500
 * deletes, 100 re-inserts and 400 updates) are replayed by a paced source in 10 batches, one per
 * completed checkpoint, into {@code public.pgbench_accounts} twice — once without maintenance, once
 * with {@code maintenance: true} and low trigger thresholds (every 2 commits or 2 equality-delete
 * files, at most one compaction per 300 ms, the embedded SQLite lock in the warehouse) so
 * compactions commit between the ingest's commits. With maintenance:
 *
 * <ul>
 *   <li>the table equals PostgreSQL's final table (its accounts with aid ≤ 20,000) exactly;
 *   <li>{@code replace} snapshots exist, at least one of them followed by an ingest commit, and its
 *       live data and delete files are fewer than without maintenance;
 *   <li>the change feed ({@link TableChanges}) read over the whole history yields no row for the
 *       {@code replace} versions, and its other versions, in order, carry exactly the changes of
 *       the versions of the run without maintenance (F2, M1).
 * </ul>
 *
 * <p>The run with maintenance is parameterized by the table's {@code format-version} (2, and 3 with
 * row lineage), both compared with the one run without maintenance (format 2, done once for the
 * class). On format 3 (M1 "Format v3"): Iceberg's {@code RewriteDataFiles} task, which the in-job
 * compaction runs, writes each row's {@code _row_id}, so every {@code replace} snapshot holds
 * exactly the rows with the row ids of its parent; and a row no ingest commit touched after the
 * first (no change row for its key in a later version) has at the end the {@code _row_id} the first
 * commit gave it, across all compactions. A row an ingest commit updated gets a new row id (the
 * upsert writer's equality delete and insert: a new row, docs/semantics.md F), so only untouched
 * rows are compared.
 */
class InJobMaintenanceITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir Path tmp;

    /** The folder of the run without maintenance, shared by the parameterized runs. */
    @TempDir static Path plainDir;

    /** The run without maintenance (format 2), done by the first parameterized run. */
    private static Catalog plainCatalog;

    /** The accounts kept (aid 1 to this): a fifth of the capture's, to keep the runs short. */
    private static final int MAX_AID = 20_000;

    private static String flows(boolean maintenance, int formatVersion) {
        return PacedAccountsIngest.flows(
                "in-job-maintenance",
                maintenance ? PacedAccountsIngest.COMPACTION_OPTIONS : List.of(),
                "    format-version: " + formatVersion);
    }

    @ParameterizedTest(name = "format-version {0}")
    @ValueSource(ints = {2, 3})
    void compactionsDuringTheIngestKeepTheTableAndTheChangeFeedExact(int formatVersion)
            throws Exception {
        long t0 = System.nanoTime();
        if (plainCatalog == null) {
            plainCatalog = ingest(plainDir, "without", false, 0, 2);
            System.out.printf("run without maintenance %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
        Table plain = plainCatalog.loadTable(ACCOUNTS);
        List<Snapshot> plainSnapshots = ancestry(plain);
        int ingestCommits = (int) plainSnapshots.stream().filter(s -> dataCommit(s)).count();
        assertThat(plainSnapshots)
                .as("no replace snapshot without maintenance")
                .noneMatch(s -> DataOperations.REPLACE.equals(s.operation()));
        double plainSeconds = (System.nanoTime() - t0) / 1e9;

        Catalog with = ingest(tmp, "with", true, ingestCommits, formatVersion);
        Table compacted = with.loadTable(ACCOUNTS);
        assertThat(TableUtil.formatVersion(compacted)).isEqualTo(formatVersion);
        System.out.printf(
                "ingest without maintenance %.1f s, both runs %.1f s%n",
                plainSeconds, (System.nanoTime() - t0) / 1e9);

        System.out.printf(
                "run with maintenance done at %.1f s; versions %s%n",
                (System.nanoTime() - t0) / 1e9, describe(compacted));
        // the table: exact
        assertThat(rows(compacted)).isEqualTo(rows(plain));
        List<String> oracle = finalAccounts(MAX_AID);
        assertThat(oracle).hasSizeGreaterThan(MAX_AID - 200);
        assertThat(rows(compacted)).isEqualTo(PgbenchCaptureITCase.sortedByKey(oracle));

        // compactions happened during the run
        List<Snapshot> snapshots = ancestry(compacted);
        List<Integer> replaceAt = new ArrayList<>();
        for (int i = 0; i < snapshots.size(); i++) {
            if (DataOperations.REPLACE.equals(snapshots.get(i).operation())) {
                replaceAt.add(i);
            }
        }
        assertThat(snapshots.stream().filter(x -> dataCommit(x)).count())
                .as("ingest commits that changed data")
                .isEqualTo(ingestCommits);
        assertThat(replaceAt).as("replace (compaction) snapshots").isNotEmpty();
        assertThat(replaceAt.get(0))
                .as("a compaction followed by an ingest commit")
                .isLessThan(snapshots.size() - 1);

        // fewer live files
        Map<String, String> before = plain.currentSnapshot().summary();
        Map<String, String> after = compacted.currentSnapshot().summary();
        long plainData = total(before, SnapshotSummary.TOTAL_DATA_FILES_PROP);
        long plainDeletes = total(before, SnapshotSummary.TOTAL_DELETE_FILES_PROP);
        long data = total(after, SnapshotSummary.TOTAL_DATA_FILES_PROP);
        long deletes = total(after, SnapshotSummary.TOTAL_DELETE_FILES_PROP);
        System.out.printf(
                "live data files %d -> %d, delete files %d -> %d, %d compactions in %d versions%n",
                plainData, data, plainDeletes, deletes, replaceAt.size(), snapshots.size());
        assertThat(data).as("live data files").isLessThan(plainData);
        assertThat(deletes).as("live delete files").isLessThan(plainDeletes);

        System.out.printf("tables checked at %.1f s%n", (System.nanoTime() - t0) / 1e9);
        // the change feed over the whole history: the same changes, nothing for the compactions
        Map<Long, List<String>> plainFeed = feed(plain);
        Map<Long, List<String>> feed = feed(compacted);
        List<List<String>> plainPerVersion = new ArrayList<>();
        for (Snapshot s : plainSnapshots) {
            if (dataCommit(s)) {
                plainPerVersion.add(plainFeed.getOrDefault(s.sequenceNumber(), List.of()));
            }
        }
        List<List<String>> perIngestVersion = new ArrayList<>();
        for (Snapshot s : snapshots) {
            List<String> changes = feed.getOrDefault(s.sequenceNumber(), List.of());
            if (dataCommit(s)) {
                perIngestVersion.add(changes);
            } else {
                assertThat(changes)
                        .as(
                                "changes of version "
                                        + s.sequenceNumber()
                                        + " ("
                                        + s.operation()
                                        + ", a compaction or an empty commit)")
                        .isEmpty();
            }
        }
        assertThat(perIngestVersion).isEqualTo(plainPerVersion);
        assertThat(plainPerVersion.stream().mapToInt(List::size).sum())
                .as("changes read")
                .isGreaterThan(MAX_AID);
        if (formatVersion == 3) {
            assertRowIdsKept(compacted, snapshots, feed);
            System.out.printf("row ids checked at %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
    }

    /**
     * Format v3 (M1): each {@code replace} snapshot holds exactly its parent's rows with their
     * {@code _row_id}s; the rows no ingest commit after the first touched (no change row of their
     * key in a later version of {@code feed}) end with the row ids the first commit gave them.
     */
    private static void assertRowIdsKept(
            Table t, List<Snapshot> snapshots, Map<Long, List<String>> feed) throws Exception {
        int replaces = 0;
        Map<Long, Map<String, String>> read = new java.util.HashMap<>();
        for (Snapshot s : snapshots) {
            if (DataOperations.REPLACE.equals(s.operation())) {
                Map<String, String> before = read.get(s.parentId());
                if (before == null) {
                    before = rowsWithIds(t, s.parentId());
                }
                Map<String, String> after = rowsWithIds(t, s.snapshotId());
                assertThat(after)
                        .as("rows and row ids of version " + s.sequenceNumber() + " (replace)")
                        .isEqualTo(before);
                read.clear(); // only a following replace reuses it
                read.put(s.snapshotId(), after);
                replaces++;
            }
        }
        assertThat(replaces).isPositive();
        Snapshot first = snapshots.stream().filter(x -> dataCommit(x)).findFirst().orElseThrow();
        Map<String, String> atFirst = rowsWithIds(t, first.snapshotId());
        assertThat(atFirst).hasSizeGreaterThan(MAX_AID - 200);
        java.util.Set<String> touched = new java.util.HashSet<>();
        feed.forEach(
                (version, changes) -> {
                    if (version > first.sequenceNumber()) {
                        changes.forEach(c -> touched.add(c.substring(0, c.indexOf(','))));
                    }
                });
        Map<String, String> untouchedAtFirst = new TreeMap<>(atFirst);
        untouchedAtFirst.keySet().removeAll(touched);
        Map<String, String> atEnd = rowsWithIds(t, t.currentSnapshot().snapshotId());
        Map<String, String> untouchedAtEnd = new TreeMap<>(atEnd);
        untouchedAtEnd.keySet().retainAll(untouchedAtFirst.keySet());
        System.out.printf(
                "v3: %d replace snapshot(s) keep their parents' row ids; %d of %d rows untouched"
                        + " since version %d keep theirs%n",
                replaces, untouchedAtFirst.size(), atFirst.size(), first.sequenceNumber());
        assertThat(untouchedAtFirst.size()).as("untouched rows").isGreaterThan(MAX_AID / 2);
        assertThat(untouchedAtEnd).isEqualTo(untouchedAtFirst);
    }

    /**
     * The rows of snapshot {@code snapshotId} by key ({@code aid}): their columns and {@code
     * _row_id}, comma-separated.
     */
    private static Map<String, String> rowsWithIds(Table t, long snapshotId) throws Exception {
        int columns = t.schema().columns().size();
        Map<String, String> out = new TreeMap<>();
        try (CloseableIterable<Record> rows =
                IcebergGenerics.read(t)
                        .useSnapshot(snapshotId)
                        .project(MetadataColumns.schemaWithRowLineage(t.schema()))
                        .build()) {
            for (Record r : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < columns; i++) {
                    line.append(Objects.toString(r.get(i), "\\N")).append(',');
                }
                Object id = r.getField(MetadataColumns.ROW_ID.name());
                assertThat(id).as("_row_id of " + line).isNotNull();
                line.append(id);
                assertThat(out.put(Objects.toString(r.get(0)), line.toString()))
                        .as("one row per key")
                        .isNull();
            }
        }
        return out;
    }

    /**
     * Runs the paced ingest into a new warehouse; with maintenance, the batches from the middle on
     * wait for a compaction, and the job runs until {@code ingestCommits} ingest commits and a
     * compaction are there, then is cancelled.
     */
    private static Catalog ingest(
            Path dir, String name, boolean maintenance, int ingestCommits, int formatVersion)
            throws Exception {
        Path capture = SharedData.pgbenchCapture();
        Path warehouse = dir.resolve(name).resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        IngestPlan plan =
                IngestPlanner.plan(
                        FlowsFile.parse(flows(maintenance, formatVersion), "flows.yaml"),
                        List.of(capture));
        IngestPlan.Flow flow = plan.flows.get(0);
        assertThat(flow.config.maintenance.enabled()).isEqualTo(maintenance);
        createTables(catalog, plan);

        Configuration conf = jobConfiguration(dir.resolve(name).resolve("checkpoints"));
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        StreamExecutionEnvironment env = environment(conf);
        int[] bounds = batchBounds();
        // with maintenance, the second half of the batches waits for a compaction, so an ingest
        // commit follows one however slowly the compaction runs (the test asserts that order)
        String hold = "in-job-maintenance-" + name + "-" + formatVersion;
        DataStream<SourceLine> lines =
                maintenance
                        ? PacedCaptureLines.stream(
                                env,
                                capture,
                                bounds,
                                accountsUpTo(MAX_AID),
                                (bounds.length - 1) / 2,
                                hold)
                        : PacedCaptureLines.stream(env, capture, bounds, accountsUpTo(MAX_AID));
        IngestJob.build(lines, plan, settings);
        if (!maintenance) {
            env.execute("ingest " + name);
            return catalog;
        }
        assertThat(warehouse.resolve(TableMaintenanceOptions.EMBEDDED_LOCK_FILE))
                .as("the embedded lock, created when the graph is built")
                .exists();
        // the maintenance graph's monitor source is unbounded: wait for the last batch's commit
        JobClient job = env.executeAsync("ingest " + name);
        try {
            try {
                Await.until(
                        "a compaction during the first half of the batches",
                        Duration.ofSeconds(120),
                        () ->
                                ancestry(catalog.loadTable(ACCOUNTS)).stream()
                                        .anyMatch(
                                                x -> DataOperations.REPLACE.equals(x.operation())),
                        () -> "snapshots: " + describe(catalog.loadTable(ACCOUNTS)));
            } finally {
                OneBatchPerCheckpointSource.release(hold);
            }
            Await.until(
                    "every batch committed and a compaction",
                    Duration.ofSeconds(120),
                    () -> {
                        List<Snapshot> s = ancestry(catalog.loadTable(ACCOUNTS));
                        return s.stream()
                                                .filter(
                                                        x ->
                                                                dataCommit(x)
                                                                        && x.summary()
                                                                                .containsKey(
                                                                                        StreamingTables
                                                                                                .CHANGELOG_WRITER))
                                                .count()
                                        == ingestCommits
                                && s.stream()
                                        .anyMatch(
                                                x -> DataOperations.REPLACE.equals(x.operation()));
                    },
                    () -> "snapshots: " + describe(catalog.loadTable(ACCOUNTS)));
        } finally {
            job.cancel().get();
        }
        return catalog;
    }

    /**
     * Whether {@code s} is an ingest commit that changed data: not a compaction ({@code replace}),
     * and not one of the empty commits Iceberg's Flink committer makes after {@code
     * flink.max-continuous-empty-commits} checkpoints without data (the maintained job keeps
     * checkpointing after the last batch, until it is cancelled).
     */
    private static boolean dataCommit(Snapshot s) {
        if (DataOperations.REPLACE.equals(s.operation())) {
            return false;
        }
        Map<String, String> summary = s.summary();
        return total(summary, SnapshotSummary.ADDED_FILES_PROP)
                        + total(summary, SnapshotSummary.ADDED_DELETE_FILES_PROP)
                        + total(summary, SnapshotSummary.DELETED_FILES_PROP)
                        + total(summary, SnapshotSummary.REMOVED_DELETE_FILES_PROP)
                > 0;
    }

    private static String describe(Table t) {
        StringBuilder b = new StringBuilder();
        for (Snapshot s : ancestry(t)) {
            b.append(s.sequenceNumber()).append(':').append(s.operation()).append(' ');
        }
        return b.toString();
    }

    /** Change rows per version (columns, change type), each version's rows sorted. */
    private static Map<Long, List<String>> feed(Table t) throws Exception {
        int columns = t.schema().columns().size();
        Map<Long, List<String>> out = new TreeMap<>();
        try (CloseableIterable<Record> rows =
                TableChanges.forTable(t).startingVersion(1).build().read()) {
            for (Record r : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < columns; i++) {
                    line.append(Objects.toString(r.get(i), "\\N")).append(',');
                }
                line.append(r.getField("_change_type"));
                long version = ((Number) r.getField("_commit_version")).longValue();
                out.computeIfAbsent(version, v -> new ArrayList<>()).add(line.toString());
            }
        }
        out.values().forEach(l -> l.sort(null));
        return out;
    }

    private static long total(Map<String, String> summary, String key) {
        String v = summary.get(key);
        return v == null ? 0 : Long.parseLong(v);
    }
}

package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.RewriteCommitGuard;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.changes;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.row;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The compaction/commit race (issue 17, docs/semantics.md M1, F2) on a real table: {@link
 * TableCompaction} (Iceberg's Flink rewrite with the starting sequence number) plans on version 3;
 * right before its {@code replace} commit an ingest commit lands ({@link RacingCommitTable}: no
 * timing involved). The ingest commit is changeflow's write shape — equality deletes carrying the
 * old rows plus inserts — and deletes one row of a file being rewritten and updates another.
 *
 * <p>Table at version 3 (three data files, all rewritten by the compaction): {@code (1, a), (2, b),
 * (3, c)} in version 1; {@code (4, d), (5, e)} in version 2; version 3 updates 3 to {@code c3}.
 */
class CompactionRaceTest {

    private static final InMemoryReporter REPORTER = InMemoryReporter.create();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    @TempDir Path warehouse;

    private MaintenanceTestTables tables;
    private Table table;

    @BeforeEach
    void threeVersions() {
        tables = new MaintenanceTestTables(warehouse);
        table = tables.create("t");
        tables.insert(table, row(1, "a"), row(2, "b"), row(3, "c"));
        tables.insert(table, row(4, "d"), row(5, "e"));
        tables.ingest(table, List.of(row(3, "c")), List.of(row(3, "c3")));
    }

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        return env;
    }

    /**
     * M1: the equality delete committed while the compaction ran still hits the rewritten rows
     * (they keep data sequence number 3, below the racing commit's 4): row 1 stays deleted, the
     * update of 2 is kept, no key is there twice; the racing version's changes are exactly its own,
     * the replace version has none (F2), and a later ingest commit updates and deletes rows of the
     * compacted file with exact changes.
     */
    @Test
    void anEqualityDeleteCommittedDuringTheRewriteStillApplies() {
        Table ingest = tables.load("t");
        RacingCommitTable compacting =
                RacingCommitTable.of(
                        tables.load("t"),
                        () ->
                                tables.ingest(
                                        ingest,
                                        List.of(row(1, "a"), row(2, "b")),
                                        List.of(row(2, "b4"))));

        TableCompaction.Result result = TableCompaction.rewrite(env(), compacting.table());

        assertThat(compacting.raced()).isTrue();
        assertThat(compacting.replaceAttempts())
                .as("the first commit attempt lost to the racing commit, the retry committed")
                .isEqualTo(2);
        assertThat(result.plannedVersion).isEqualTo(3);
        assertThat(result.committedVersion).isEqualTo(5);
        assertThat(result.rewrittenFiles).isEqualTo(3);
        assertThat(result.addedFiles).isEqualTo(1);
        assertThat(operations(table))
                .containsExactly(
                        "1 append",
                        "2 append",
                        "3 overwrite",
                        "4 overwrite",
                        "5 " + DataOperations.REPLACE);
        assertThat(rows(table)).containsExactly("(2, b4)", "(3, c3)", "(4, d)", "(5, e)");
        // the compacted file carries the planned version's data sequence number, so the racing
        // equality delete (sequence number 4) applies to it
        assertThat(liveDataFiles(table)).containsEntry(3L, 1).containsEntry(4L, 1).hasSize(2);

        assertThat(changes(table, 4, 5))
                .containsExactly(
                        "4 delete (1, a)",
                        "4 update_preimage (2, b)",
                        "4 update_postimage (2, b4)");
        assertThat(changes(table, 5, 5)).isEmpty();

        // an ingest commit after the compaction: update of 4 and delete of 5 (compacted rows)
        tables.ingest(table, List.of(row(4, "d"), row(5, "e")), List.of(row(4, "d6")));
        assertThat(rows(table)).containsExactly("(2, b4)", "(3, c3)", "(4, d6)");
        assertThat(changes(table, 1, 6))
                .containsExactly(
                        "1 insert (1, a)",
                        "1 insert (2, b)",
                        "1 insert (3, c)",
                        "2 insert (4, d)",
                        "2 insert (5, e)",
                        "3 update_preimage (3, c)",
                        "3 update_postimage (3, c3)",
                        "4 delete (1, a)",
                        "4 update_preimage (2, b)",
                        "4 update_postimage (2, b4)",
                        "6 update_preimage (4, d)",
                        "6 update_postimage (4, d6)",
                        "6 delete (5, e)");
    }

    /**
     * The same race on the in-job path ({@link InJobMaintenance}: Iceberg's {@code
     * TableMaintenance} with its {@code RewriteDataFiles} task, loading the table through {@link
     * RacingCommitCatalog}): the job starts on version 3 and an ingest commit (version 4, update of
     * 4) follows; the compaction plans on version 3 or 4 (the monitor's first report may come
     * before version 4); right before its replace commit the racing ingest commit (version 5)
     * deletes 1 and updates 2. Nothing is resurrected or lost, the files the compaction writes keep
     * the planned data sequence number, version 5's changes are exact and the replace version 6 has
     * none.
     */
    @Test
    void theInJobRewriteKeepsARacingEqualityDeleteAndUpdate() throws Exception {
        Table ingest = tables.load("t");
        RacingCommitCatalog.arm(
                () ->
                        tables.ingest(
                                ingest, List.of(row(1, "a"), row(2, "b")), List.of(row(2, "b5"))));
        JobClient job = startOneCompaction("in-job compaction racing an ingest commit");
        try {
            // the trigger manager registers its metrics once initialized; the monitor reports
            // the commits after its start
            Await.until(
                    "the trigger manager to be initialized",
                    Duration.ofSeconds(60),
                    () ->
                            REPORTER.getMetricsByIdentifiers(job.getJobID()).keySet().stream()
                                    .anyMatch(k -> k.endsWith(".concurrentRunThrottled")),
                    () -> "metrics " + REPORTER.getMetricsByIdentifiers(job.getJobID()).keySet());
            tables.ingest(table, List.of(row(4, "d")), List.of(row(4, "d4")));
            Await.until(
                    "the in-job compaction to commit",
                    Duration.ofSeconds(60),
                    () -> operations(table).size() >= 6,
                    () -> "versions " + operations(table));
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }

        assertThat(RacingCommitCatalog.raced()).isEqualTo(1);
        assertThat(RacingCommitCatalog.replaceAttempts()).isEqualTo(2);
        assertThat(operations(table))
                .containsExactly(
                        "1 append",
                        "2 append",
                        "3 overwrite",
                        "4 overwrite",
                        "5 overwrite",
                        "6 " + DataOperations.REPLACE);
        assertThat(rows(table)).containsExactly("(2, b5)", "(3, c3)", "(4, d4)", "(5, e)");
        // which files Iceberg's planner groups is its choice, and it plans on version 3 or 4
        // (whether the monitor's first report comes before version 4 or with it); what it writes
        // carries the planned version's data sequence number, below the racing delete's (5)
        Snapshot replace = table.currentSnapshot();
        Set<Long> added = new TreeSet<>();
        replace.addedDataFiles(table.io()).forEach(f -> added.add(f.dataSequenceNumber()));
        assertThat(added).hasSize(1).allMatch(seq -> seq == 3 || seq == 4);
        assertThat(replace.removedDataFiles(table.io())).hasSizeGreaterThanOrEqualTo(2);
        assertThat(changes(table, 4, 6))
                .containsExactly(
                        "4 update_preimage (4, d)",
                        "4 update_postimage (4, d4)",
                        "5 delete (1, a)",
                        "5 update_preimage (2, b)",
                        "5 update_postimage (2, b5)");
    }

    /**
     * M1, the Iceberg pitfall {@link RewriteCommitGuard} stops: while the compaction (planned on
     * version 3, every data file rewritten with sequence number 3) runs, one ingest commit only
     * deletes 1 (version 4) and the next inserts 6 (version 5). Iceberg's retried commit would drop
     * the delete of 1 (older than every data file that was there before, the compacted one not
     * counted) and bring the row back; the guard refuses it, nothing is committed and the table is
     * exactly the ingest's.
     */
    @Test
    void aRacingDeleteOnlyCommitThenAnInsertMakesTheRewriteFailInsteadOfResurrecting() {
        Table ingest = tables.load("t");
        RacingCommitTable compacting =
                RacingCommitTable.of(
                        tables.load("t"),
                        () -> {
                            tables.ingest(ingest, List.of(row(1, "a")), List.of());
                            tables.insert(ingest, row(6, "f"));
                        });

        assertThatThrownBy(() -> TableCompaction.rewrite(env(), compacting.table()))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("refused to commit a rewrite of")
                .hasMessageContaining("(data sequence number 4)");

        assertThat(compacting.raced()).isTrue();
        assertThat(operations(table))
                .containsExactly("1 append", "2 append", "3 overwrite", "4 delete", "5 append");
        assertThat(rows(table)).containsExactly("(2, b)", "(3, c3)", "(4, d)", "(5, e)", "(6, f)");
        assertThat(changes(table, 4, 5)).containsExactly("4 delete (1, a)", "5 insert (6, f)");
    }

    /**
     * The same race on the in-job path ({@link InJobMaintenance}, table loaded through {@link
     * RacingCommitCatalog}): Iceberg's {@code RewriteDataFiles} task plans on version 3; right
     * before its replace commit the delete-only commit (version 4) and the insert (version 5) land.
     * The guard refuses the retried commit; Iceberg's commit service logs the failed group and
     * removes the files it wrote, the task ends, the job keeps running, and the table is exactly
     * the ingest's with no replace version.
     */
    @Test
    void theInJobRewriteIsRefusedInsteadOfResurrectingARacingDelete() throws Exception {
        Table ingest = tables.load("t");
        RacingCommitCatalog.arm(
                () -> {
                    tables.ingest(ingest, List.of(row(1, "a")), List.of());
                    tables.insert(ingest, row(6, "f"));
                });
        // with the expiry graph, whose operator publishes the refusals as a gauge
        StreamExecutionEnvironment env = env();
        JobMaintenance.append(
                env,
                racingCatalog(),
                TableIdentifier.of("db", "t"),
                oneCompaction(TableMaintenanceOptions.builder().orphansOlderThan(null)),
                "maintenance-t");
        JobClient job = env.executeAsync("in-job compaction racing a delete-only commit");
        try {
            Await.until(
                    "the in-job compaction task to end",
                    Duration.ofSeconds(60),
                    () -> count(job, ".succeededTasks") + count(job, ".failedTasks") > 0,
                    () -> "versions " + operations(table));
            assertThat(job.getJobStatus().get(30, TimeUnit.SECONDS).isTerminalState()).isFalse();
            assertThat(RewriteCommitGuard.refusals(ingest.location())).isEqualTo(1);
            assertThat(gauge(job, ".changeflowMaintenance.table.racing.db.t.compactionsRefused"))
                    .isEqualTo(1L);
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }

        assertThat(RacingCommitCatalog.raced()).isEqualTo(1);
        assertThat(RacingCommitCatalog.replaceAttempts())
                .as(
                        "the first attempt lost to the racing commits; the guard refused the retry"
                                + " before it reached the catalog")
                .isEqualTo(1);
        assertThat(operations(table))
                .containsExactly("1 append", "2 append", "3 overwrite", "4 delete", "5 append");
        assertThat(rows(table)).containsExactly("(2, b)", "(3, c3)", "(4, d)", "(5, e)", "(6, f)");
        assertThat(changes(table, 4, 5)).containsExactly("4 delete (1, a)", "5 insert (6, f)");
    }

    /**
     * Starts a job that only maintains table {@code db.t} through {@link RacingCommitCatalog} (one
     * compaction, {@link #oneCompaction}); the caller cancels it.
     */
    private JobClient startOneCompaction(String jobName) throws Exception {
        StreamExecutionEnvironment env = env();
        InJobMaintenance.append(
                env,
                racingCatalog(),
                TableIdentifier.of("db", "t"),
                oneCompaction(TableMaintenanceOptions.builder()),
                "maintenance-t");
        return env.executeAsync(jobName);
    }

    /** The test's warehouse as a {@link RacingCommitCatalog}. */
    private CatalogSettings racingCatalog() {
        return CatalogSettings.of(
                "racing",
                Map.of(
                        CatalogProperties.CATALOG_IMPL,
                        RacingCommitCatalog.class.getName(),
                        CatalogProperties.WAREHOUSE_LOCATION,
                        warehouse.toUri().toString()));
    }

    /**
     * In-job maintenance triggered by the first commit, at most once per hour: one compaction; the
     * other options as in {@code builder}.
     */
    private static TableMaintenanceOptions oneCompaction(TableMaintenanceOptions.Builder builder) {
        return builder.enabled(true)
                .commitCount(1)
                .dataFileCount(0)
                .deleteFileCount(0)
                .interval(null)
                .rateLimit(Duration.ofHours(1))
                .build();
    }

    /** The value of {@code job}'s one gauge whose name ends in {@code suffix}. */
    private static Object gauge(JobClient job, String suffix) {
        List<Object> values = new ArrayList<>();
        for (var e : REPORTER.getMetricsByIdentifiers(job.getJobID()).entrySet()) {
            if (e.getKey().endsWith(suffix)
                    && e.getValue() instanceof org.apache.flink.metrics.Gauge<?> g) {
                values.add(g.getValue());
            }
        }
        assertThat(values).as("gauges ending in " + suffix).hasSize(1);
        return values.get(0);
    }

    /** The sum of {@code job}'s counters whose names end in {@code suffix}. */
    private static long count(JobClient job, String suffix) {
        long sum = 0;
        for (var e : REPORTER.getMetricsByIdentifiers(job.getJobID()).entrySet()) {
            if (e.getKey().endsWith(suffix)
                    && e.getValue() instanceof org.apache.flink.metrics.Counter c) {
                sum += c.getCount();
            }
        }
        return sum;
    }

    /**
     * M1: a racing position delete of a row in a file being rewritten makes Iceberg reject the
     * compaction (its rewritten copy would resurrect the row); the table is exactly the racing
     * commit's, with no replace version.
     */
    @Test
    void aRacingPositionDeleteMakesTheRewriteFail() {
        Table other = tables.load("t");
        DataFile first = addedDataFile(table, 1);
        RacingCommitTable compacting =
                RacingCommitTable.of(
                        tables.load("t"),
                        () ->
                                other.newRowDelta()
                                        .addDeletes(tables.positionDeletes(other, first, 0))
                                        .commit());

        assertThatThrownBy(() -> TableCompaction.rewrite(env(), compacting.table()))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("position delete");

        assertThat(compacting.raced()).isTrue();
        assertThat(operations(table))
                .containsExactly("1 append", "2 append", "3 overwrite", "4 delete");
        assertThat(rows(table)).containsExactly("(2, b)", "(3, c3)", "(4, d)", "(5, e)");
        assertThat(changes(table, 4, 4)).containsExactly("4 delete (1, a)");
    }

    /**
     * M1: a racing commit that removes a file being rewritten (a copy-on-write delete of row 5)
     * makes Iceberg reject the compaction; the table is exactly the racing commit's.
     */
    @Test
    void aRacingFileRemovalMakesTheRewriteFail() {
        Table other = tables.load("t");
        DataFile second = addedDataFile(table, 2);
        RacingCommitTable compacting =
                RacingCommitTable.of(
                        tables.load("t"),
                        () ->
                                other.newOverwrite()
                                        .deleteFile(second)
                                        .addFile(tables.dataFile(other, row(4, "d")))
                                        .commit());

        assertThatThrownBy(() -> TableCompaction.rewrite(env(), compacting.table()))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("Missing required files to delete");

        assertThat(compacting.raced()).isTrue();
        assertThat(operations(table))
                .containsExactly("1 append", "2 append", "3 overwrite", "4 overwrite");
        assertThat(rows(table)).containsExactly("(1, a)", "(2, b)", "(3, c3)", "(4, d)");
        assertThat(changes(table, 4, 4)).containsExactly("4 delete (5, e)");
    }

    /** "version operation" of the current snapshot's ancestry, oldest first. */
    private static List<String> operations(Table table) {
        table.refresh();
        List<String> out = new ArrayList<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            out.add(0, s.sequenceNumber() + " " + s.operation());
        }
        return out;
    }

    /** The live data files of the current snapshot, counted by data sequence number. */
    private static Map<Long, Integer> liveDataFiles(Table table) {
        Map<Long, Integer> bySequence = new TreeMap<>();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                bySequence.merge(task.file().dataSequenceNumber(), 1, Integer::sum);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bySequence;
    }

    /** The one data file version {@code version} added. */
    private static DataFile addedDataFile(Table table, long version) {
        for (Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == version) {
                List<DataFile> added = new ArrayList<>();
                s.addedDataFiles(table.io()).forEach(added::add);
                assertThat(added).hasSize(1);
                return added.get(0);
            }
        }
        throw new IllegalArgumentException("no version " + version);
    }
}

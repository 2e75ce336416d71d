package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.row;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.rows;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two maintainers of one table never compact at once (issue 17, docs/semantics.md M1): the test
 * holds the table's in-job maintenance lock itself — the embedded SQLite {@link JdbcLockFactory} in
 * the warehouse with lock id {@code db.t}, as a compaction of another job holds it — while a job
 * with {@link InJobMaintenance} (compaction every 2 commits, rate limit 200 ms) watches the table
 * and the test commits to it. The job's trigger fires and is throttled by the lock (Iceberg's
 * {@code concurrentRunThrottled} metric counts up) without any compaction; once the test releases
 * the lock the job compacts. The table's rows are exact throughout. Waits poll states (metrics,
 * snapshots), never time.
 */
class InJobMaintenanceLockTest {
    private static final InMemoryReporter REPORTER = InMemoryReporter.create();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final TableIdentifier ID = TableIdentifier.of("db", "t");

    @TempDir Path warehouse;

    private MaintenanceTestTables tables;
    private Table table;
    private TriggerLockFactory otherMaintainer;

    @BeforeEach
    void tableAndLock() throws Exception {
        tables = new MaintenanceTestTables(warehouse);
        table = tables.create("t");
        tables.insert(table, row(1, "a"), row(2, "b"));
        // the other maintainer: the embedded lock database of the warehouse, lock id db.t
        Path lockFile = warehouse.resolve(TableMaintenanceOptions.EMBEDDED_LOCK_FILE);
        Files.createDirectories(lockFile.getParent());
        otherMaintainer =
                new JdbcLockFactory(
                        "jdbc:sqlite:" + lockFile.toAbsolutePath(),
                        ID.toString(),
                        Map.of(
                                "jdbc.busy_timeout",
                                "30000",
                                JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY,
                                "true"));
        otherMaintainer.open();
    }

    @AfterEach
    void closeLock() throws Exception {
        otherMaintainer.close();
    }

    /** Starts the maintenance graph of {@code db.t} alone, as a job; returns once it watches. */
    private JobClient startMaintenance(String name) throws Exception {
        TableMaintenanceOptions options =
                TableMaintenanceOptions.builder()
                        .enabled(true)
                        .commitCount(2)
                        .dataFileCount(0)
                        .deleteFileCount(0)
                        .interval(null)
                        .rateLimit(Duration.ofMillis(200))
                        .build();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        // creates the embedded lock database and its table in the warehouse
        InJobMaintenance.append(
                env, CatalogSettings.localHadoop(warehouse), ID, options, "maintenance-t");
        JobClient job = env.executeAsync(name);
        // the trigger manager registers its metrics in open(), after initializeState() has set
        // up (and, in a job without state, cleared) the lock
        Await.until(
                "the trigger manager to be initialized",
                TIMEOUT,
                () -> registered(job.getJobID(), "concurrentRunThrottled"),
                () -> metrics(job.getJobID()));
        return job;
    }

    /**
     * M1: while another maintainer (a running compaction of another job) holds the lock, the job's
     * trigger fires and is throttled — no compaction starts, no replace snapshot — and the job
     * compacts once the lock is released; the rows are exact throughout.
     */
    @Test
    void noCompactionWhileAnotherMaintainerHoldsTheLockThenOneAfterItsRelease() throws Exception {
        JobClient job = startMaintenance("in-job maintenance under a held lock");
        JobID jobId = job.getJobID();
        try {
            TriggerLockFactory.Lock held = otherMaintainer.createLock();
            assertThat(held.tryLock()).isTrue();
            // four ingest commits (the trigger needs two): inserts, and an update of key 1 whose
            // equality delete makes the first file one to rewrite
            tables.ingest(table, List.of(), List.of(row(3, "c"), row(4, "d")));
            tables.ingest(table, List.of(), List.of(row(5, "e"), row(6, "f")));
            tables.ingest(table, List.of(), List.of(row(7, "g"), row(8, "h")));
            tables.ingest(table, List.of(row(1, "a")), List.of(row(1, "a2"), row(9, "i")));
            // the trigger fires and finds the lock held; it retries every 200 ms
            Await.until(
                    "the trigger to be throttled by the held lock twice",
                    TIMEOUT,
                    () -> counter(jobId, "concurrentRunThrottled") >= 2,
                    () -> metrics(jobId));
            assertThat(counter(jobId, "triggered")).as("compactions started").isZero();
            assertThat(replaceVersions(table))
                    .as("replace snapshots while the lock is held")
                    .isEmpty();
            List<String> expected =
                    List.of(
                            "(1, a2)", "(2, b)", "(3, c)", "(4, d)", "(5, e)", "(6, f)", "(7, g)",
                            "(8, h)", "(9, i)");
            assertThat(rows(table)).isEqualTo(expected);
            assertThat(held.isHeld()).isTrue();

            held.unlock();
            Await.until(
                    "a compaction after the lock was released",
                    TIMEOUT,
                    () -> !replaceVersions(table).isEmpty(),
                    () -> metrics(jobId));
            assertThat(counter(jobId, "triggered")).isGreaterThanOrEqualTo(1);
            assertThat(rows(table)).isEqualTo(expected);
            table.refresh();
            assertThat(table.currentSnapshot().summary())
                    .as("live data files after the compaction")
                    .containsEntry("total-data-files", "1");
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * What the lock does not cover: Iceberg's trigger manager clears the table's lock when its job
     * starts without state (it takes a held lock for the leftover of a dead job), so a job started
     * while another job's compaction holds the lock can compact at the same time. Iceberg's commit
     * validation then rejects the second {@code replace} of the same files (CompactionRaceTest), so
     * no row is lost or doubled; only work is wasted.
     */
    @Test
    void aJobStartedWithoutStateClearsAHeldLock() throws Exception {
        TriggerLockFactory.Lock held = otherMaintainer.createLock();
        assertThat(held.tryLock()).isTrue();
        JobClient job = startMaintenance("in-job maintenance started under a held lock");
        try {
            assertThat(held.isHeld()).as("the other maintainer's lock after the start").isFalse();
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /** Whether the job has registered a metric whose identifier ends with {@code .<name>}. */
    private static boolean registered(JobID jobId, String name) {
        return REPORTER.getMetricsByIdentifiers(jobId).keySet().stream()
                .anyMatch(k -> k.endsWith("." + name));
    }

    private static List<Long> replaceVersions(Table table) {
        table.refresh();
        List<Long> out = new java.util.ArrayList<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            if (DataOperations.REPLACE.equals(s.operation())) {
                out.add(s.sequenceNumber());
            }
        }
        return out;
    }

    /** The sum of the job's counters whose identifier ends with {@code .<name>}. */
    private static long counter(JobID jobId, String name) {
        long sum = 0;
        for (Map.Entry<String, Metric> m : REPORTER.getMetricsByIdentifiers(jobId).entrySet()) {
            if (m.getKey().endsWith("." + name) && m.getValue() instanceof Counter) {
                sum += ((Counter) m.getValue()).getCount();
            }
        }
        return sum;
    }

    private static String metrics(JobID jobId) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Metric> m : REPORTER.getMetricsByIdentifiers(jobId).entrySet()) {
            if (m.getValue() instanceof Counter && m.getKey().contains("maintenance")) {
                b.append(m.getKey()).append('=').append(((Counter) m.getValue()).getCount());
                b.append("; ");
            }
        }
        return b.toString();
    }
}

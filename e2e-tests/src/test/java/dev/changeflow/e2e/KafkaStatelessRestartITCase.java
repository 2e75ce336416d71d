package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.ClusterIngest;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stateless restart that keeps the Flink job id (application mode: the job id is fixed per
 * deployment, and a redeployment without its HA data or savepoint starts the same job id without
 * state) must not drop commits — apache/iceberg #18098.
 *
 * <p>The situation that reaches it in changeflow: K8 lets a stateless start proceed onto a table
 * that holds no rows, and a table whose topic stayed empty holds only the <i>empty</i> snapshots
 * Iceberg's committer writes every {@code flink.max-continuous-empty-commits} checkpoints — each
 * stamped with the job id, the committer's operator id and {@code
 * flink.max-committed-checkpoint-id} of the first run (here up to ~6). The second run (same job id,
 * no state) numbers its checkpoints from 1 again; its first data commit (checkpoint n) fails (the
 * window "checkpoint completed, not yet committed"), and on failover Iceberg's {@code FlinkSink}
 * committer looks up the highest committed checkpoint of (job id, operator id) in the table — the
 * first run's — and drops every restored checkpoint at or below it: the tellers' first rows would
 * be lost (observed before the workaround in {@code StreamingTableSink}: the tellers table stayed
 * empty). The tellers table must equal PostgreSQL's final table, and hold exactly one marker
 * snapshot of the workaround.
 */
class KafkaStatelessRestartITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    private static final Duration INTERVAL = Duration.ofMillis(300);
    private static final TableIdentifier TELLERS = TableIdentifier.parse("public.pgbench_tellers");

    @TempDir Path tmp;

    @Test
    void statelessRestartWithTheSameJobIdCommitsEveryCheckpoint() throws Exception {
        List<ProducerRecord<byte[], byte[]>> all =
                KafkaPgbenchITCase.records(SharedData.readLines(SharedData.pgbenchCapture()));
        TreeSet<String> topics = new TreeSet<>();
        all.forEach(r -> topics.add(r.topic()));
        KAFKA.createTopics(2, new ArrayList<>(topics));
        List<ProducerRecord<byte[], byte[]>> tellers =
                all.stream()
                        .filter(r -> r.topic().endsWith(".pgbench_tellers"))
                        .collect(Collectors.toList());

        Path warehouse = tmp.resolve("warehouse");
        Path ckRoot = tmp.resolve("checkpoints");
        IngestConfig cfg = PgbenchCaptureITCase.config();
        cfg.catalog.put("catalog-impl", FailingCommitCatalog.class.getName());
        cfg.catalog.put("warehouse", warehouse.toAbsolutePath().toString());
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        CatalogSettings catalog = CatalogSettings.of("changeflow", cfg.catalog);
        Catalog cat = catalog.open();
        ClusterIngest.ensureTables(cat, plan);
        // an empty commit every checkpoint (Iceberg's default: every 10), so the first run leaves
        // some soon
        cat.loadTable(TELLERS)
                .updateProperties()
                .set("flink.max-continuous-empty-commits", "1")
                .commit();
        KafkaInput kafka = new KafkaInput();
        kafka.bootstrapServers = KAFKA.bootstrapServers();
        kafka.topics = new ArrayList<>(topics);
        kafka.groupId = "it-stateless";
        kafka.startingOffsets = StartingOffsets.earliest();
        JobID jobId = JobID.fromHexString("c0ffee00c0ffee00c0ffee00c0ffee00");
        FailureInjector.reset();

        long firstRunMax;
        try (KafkaIngestCluster cluster = new KafkaIngestCluster()) {
            // run 1: nothing to read; the tellers table gets empty snapshots stamped with the job
            // id
            JobClient first = cluster.submit(plan, catalog, kafka, ckRoot, INTERVAL, null, jobId);
            assertThat(first.getJobID()).isEqualTo(jobId);
            Await.until(
                    "6 checkpoints of the first run",
                    Duration.ofMinutes(5),
                    () -> FailureInjector.COMPLETED.get() >= 6,
                    () -> "completed " + FailureInjector.COMPLETED.get());
            KafkaIngestCluster.cancel(first);
            firstRunMax = maxCommittedCheckpoint(cat.loadTable(TELLERS), jobId);
        }
        assertThat(firstRunMax).isGreaterThanOrEqualTo(5);
        assertThat(StreamingTables.isEmpty(cat.loadTable(TELLERS))).isTrue();
        System.out.println(
                "First run: tellers' empty snapshots up to flink.max-committed-checkpoint-id "
                        + firstRunMax);

        // (a new cluster: a MiniCluster, like a Dispatcher, refuses a job id it has already run)
        try (KafkaIngestCluster cluster = new KafkaIngestCluster()) {
            // run 2: same job id, no state (a redeployment without its HA data); the first commit
            // of the tellers fails once, after its checkpoint completed
            LocalIngest.deleteState(ckRoot);
            FailureInjector.reset();
            Map<String, Long> ends = KafkaIngestCluster.produce(KAFKA, tellers);
            FailingCommitCatalog.armCommitFailure("pgbench_tellers", 1, false);
            JobClient second = cluster.submit(plan, catalog, kafka, ckRoot, INTERVAL, null, jobId);
            assertThat(second.getJobID()).isEqualTo(jobId);
            Await.until(
                    "the tellers' first commit to fail",
                    Duration.ofMinutes(5),
                    () -> FailingCommitCatalog.firedAtCheckpoint() >= 0,
                    () -> "");
            long failedAt = FailingCommitCatalog.firedAtCheckpoint();
            System.out.println(
                    "Second run: the commit of checkpoint "
                            + failedAt
                            + " failed (<= "
                            + firstRunMax
                            + ")");
            assertThat(failedAt).isLessThanOrEqualTo(firstRunMax);
            Await.until(
                    "a restore",
                    Duration.ofMinutes(5),
                    () -> FailureInjector.RESTORES.get() > 0,
                    () -> "");
            KafkaIngestCluster.awaitRead(ends, Duration.ofMinutes(5));
            KafkaIngestCluster.stopWithSavepoint(second, ckRoot);
        }
        assertThat(PgbenchCaptureITCase.rows(warehouse, "public.pgbench_tellers"))
                .isEqualTo(
                        PgbenchCaptureITCase.sortedByKey(SharedData.finalCsv("pgbench_tellers")));
        // the workaround's marker: an empty snapshot of the job id resetting the committed
        // checkpoint id
        List<Snapshot> markers = new ArrayList<>();
        cat.loadTable(TELLERS)
                .snapshots()
                .forEach(
                        s -> {
                            if (jobId.toHexString().equals(s.summary().get("flink.job-id"))
                                    && "-1"
                                            .equals(
                                                    s.summary()
                                                            .get(
                                                                    "flink.max-committed-checkpoint-id"))) {
                                markers.add(s);
                            }
                        });
        assertThat(markers).hasSize(1);
        assertThat(markers.get(0).addedDataFiles(cat.loadTable(TELLERS).io())).isEmpty();
        if (cat instanceof Closeable) {
            ((Closeable) cat).close();
        }
    }

    /**
     * The other side of the workaround: a job with a fixed id that <i>is</i> restored — a failover
     * (attempt 1) and a resubmission from its retained checkpoint under the same id (attempt 0, as
     * after an HA recovery) — writes no marker to any table, including the append-only history
     * table, whose writer task holds no state of Flink's own. Flink sends no restore to a task none
     * of whose operators holds state, so before the marker kept state of its own, every such
     * restore after a history commit wrote a marker: the restored history committer then took its
     * last committed checkpoint for uncommitted, committed it again or — its manifests deleted
     * after the first commit — failed with {@code NotFoundException} in every restart (seen in CI
     * as a restart loop of {@link KafkaFailureInjectionITCase}).
     */
    @Test
    void restoresWithTheSameJobIdWriteNoMarker() throws Exception {
        List<ProducerRecord<byte[], byte[]>> all = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> r :
                KafkaPgbenchITCase.records(SharedData.readLines(SharedData.pgbenchCapture()))) {
            all.add(new ProducerRecord<>("restored." + r.topic(), r.key(), r.value()));
        }
        TreeSet<String> topics = new TreeSet<>();
        all.forEach(r -> topics.add(r.topic()));
        KAFKA.createTopics(2, new ArrayList<>(topics));

        Path warehouse = tmp.resolve("warehouse");
        Path ckRoot = tmp.resolve("checkpoints");
        IngestConfig cfg = PgbenchCaptureITCase.config();
        cfg.catalog.put("type", "hadoop");
        cfg.catalog.put("warehouse", warehouse.toAbsolutePath().toString());
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        CatalogSettings catalog = CatalogSettings.of("changeflow", cfg.catalog);
        Catalog cat = catalog.open();
        ClusterIngest.ensureTables(cat, plan);
        KafkaInput kafka = KafkaPgbenchITCase.earliest(KAFKA, topics, "it-restored");
        JobID jobId = JobID.fromHexString("c0ffee11c0ffee11c0ffee11c0ffee11");
        TableIdentifier history = TableIdentifier.parse("public.pgbench_history");
        // three parts, each with history rows (the capture starts with the snapshot's rows)
        int firstHistory = 0;
        while (!all.get(firstHistory).topic().endsWith(".pgbench_history")) {
            firstHistory++;
        }
        int a = firstHistory + (all.size() - firstHistory) / 3;
        int b = firstHistory + 2 * (all.size() - firstHistory) / 3;
        Map<String, Long> ends = new HashMap<>();
        FailureInjector.reset();
        try (KafkaIngestCluster cluster = new KafkaIngestCluster()) {
            ends.putAll(KafkaIngestCluster.produce(KAFKA, all.subList(0, a)));
            JobClient job = cluster.submit(plan, catalog, kafka, ckRoot, INTERVAL, null, jobId);
            Await.until(
                    "a history commit of the job",
                    Duration.ofMinutes(5),
                    () -> maxCommittedCheckpoint(cat.loadTable(history), jobId) > 0,
                    () -> "completed " + FailureInjector.COMPLETED.get());
            // a failover: every task restarts (attempt 1) from the latest checkpoint
            FailureInjector.armTaskFailure(FailureInjector.COMPLETED.get() + 1);
            ends.putAll(KafkaIngestCluster.produce(KAFKA, all.subList(a, b)));
            Await.until(
                    "a restore after the task failure",
                    Duration.ofMinutes(5),
                    () -> FailureInjector.firedAt() >= 0 && FailureInjector.RESTORES.get() > 0,
                    () -> "completed " + FailureInjector.COMPLETED.get());
            long after = FailureInjector.COMPLETED.get();
            Await.until(
                    "a checkpoint after the failover",
                    Duration.ofMinutes(5),
                    () -> FailureInjector.COMPLETED.get() > after,
                    () -> "completed " + FailureInjector.COMPLETED.get());
            KafkaIngestCluster.awaitRead(ends, Duration.ofMinutes(5));
            KafkaIngestCluster.cancel(job);
        }
        // (a new cluster: a MiniCluster, like a Dispatcher, refuses a job id it has already run)
        try (KafkaIngestCluster cluster = new KafkaIngestCluster()) {
            int restores = FailureInjector.RESTORES.get();
            JobClient job =
                    cluster.submit(
                            plan,
                            catalog,
                            kafka,
                            ckRoot,
                            INTERVAL,
                            KafkaIngestCluster.latestState(ckRoot),
                            jobId);
            Await.until(
                    "the resubmitted job's restore",
                    Duration.ofMinutes(5),
                    () -> FailureInjector.RESTORES.get() > restores,
                    () -> "");
            ends.putAll(KafkaIngestCluster.produce(KAFKA, all.subList(b, all.size())));
            KafkaIngestCluster.awaitRead(ends, Duration.ofMinutes(5));
            KafkaIngestCluster.stopWithSavepoint(job, ckRoot);
        }
        PgbenchCaptureITCase.assertNoResetMarkers(cat);
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
        if (cat instanceof Closeable) {
            ((Closeable) cat).close();
        }
    }

    /**
     * The highest {@code flink.max-committed-checkpoint-id} of the table's snapshots written by job
     * {@code jobId}.
     */
    private static long maxCommittedCheckpoint(Table table, JobID jobId) {
        long max = -1;
        for (Snapshot s : table.snapshots()) {
            if (jobId.toHexString().equals(s.summary().get("flink.job-id"))) {
                max =
                        Math.max(
                                max,
                                Long.parseLong(
                                        s.summary().get("flink.max-committed-checkpoint-id")));
            }
        }
        return max;
    }
}

package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.ClusterIngest;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.testutils.junit.RetryOnFailure;
import org.apache.flink.testutils.junit.extensions.retry.RetryExtension;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly once over Kafka under failures (K4, K8 with state): the recorded pgbench capture is
 * produced, in chunks, to a real broker (one topic per table, 2 partitions, Debezium's keys) while
 * the real ingest job ({@link dev.changeflow.jobs.ingest.IngestJob#buildKafka}) applies it into the
 * SCD1 tables, the SCD2 history of the accounts and the append-only history table — and a seeded
 * schedule (printed) injects failures keyed on checkpoint ids, each one at the first checkpoint at
 * or after its planned id that completes once the previous failure was recovered:
 *
 * <ul>
 *   <li>{@code TASK_FAILURE}: a task throws in {@code notifyCheckpointComplete(n)} → failover;
 *   <li>{@code TASKMANAGER_LOSS}: the TaskManager is closed after checkpoint n, a new one started;
 *   <li>{@code CANCEL_RESTART}: the job is cancelled after checkpoint n and submitted again from
 *       the latest retained checkpoint;
 *   <li>{@code COMMIT_FAILS}: (a) the Iceberg commit of checkpoint n (completed) fails before
 *       anything is written → failover, the restored committer commits n;
 *   <li>{@code COMMIT_ANSWER_LOST}: (b) the commit of n is written, then {@code
 *       CommitStateUnknownException} → failover, the restored committer finds n committed ({@code
 *       flink.max-committed-checkpoint-id}) and skips it;
 *   <li>{@code BROKER_RESTART}: the broker is stopped and started on the same port (records,
 *       offsets kept) while the job runs.
 * </ul>
 *
 * A failure counts as recovered once the job (restored from a checkpoint, for the first five kinds)
 * completed a later checkpoint and read the next chunk. At the end the job stops with a savepoint
 * and every table must equal PostgreSQL's final table exactly (0 lost, 0 duplicated rows; the
 * history as an exact multiset), the SCD2 history the versions derived from the capture, and
 * nothing is quarantined. Seed: {@code -Dfailures.seed=<n>} (default fixed).
 *
 * <p>Once (CI, 2 busy cores) a run stopped completing checkpoints for 5 minutes after about 50
 * checkpoints and 12 failures, not reproduced since: a wait that times out prints every thread's
 * stack, and the test runs a second time (on fresh topics and a fresh consumer group, so the
 * records of the first try are not read twice) before it fails (Flink's {@link RetryOnFailure}).
 */
@ExtendWith(RetryExtension.class)
class KafkaFailureInjectionITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    private static final int PARTITIONS = 2;
    private static final Duration CHECKPOINT_INTERVAL = Duration.ofMillis(300);

    /**
     * A safety net only (every wait is for a state): generous, as 2 shared cores can be very slow.
     */
    private static final Duration STEP_TIMEOUT = Duration.ofMinutes(5);

    enum Kind {
        TASK_FAILURE,
        TASKMANAGER_LOSS,
        CANCEL_RESTART,
        COMMIT_FAILS,
        COMMIT_ANSWER_LOST,
        BROKER_RESTART
    }

    @TempDir Path tmp;

    /** Tries so far: the second one reads topics of its own. */
    private static final AtomicInteger TRIES = new AtomicInteger();

    @TestTemplate
    @RetryOnFailure(times = 1)
    void twentyOneFailuresLoseAndDuplicateNothing() throws Exception {
        int tryNumber = TRIES.incrementAndGet();
        String prefix = tryNumber == 1 ? "" : "try" + tryNumber + ".";
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> r :
                KafkaPgbenchITCase.records(SharedData.readLines(SharedData.pgbenchCapture()))) {
            records.add(new ProducerRecord<>(prefix + r.topic(), r.key(), r.value()));
        }
        TreeSet<String> topics = new TreeSet<>();
        records.forEach(r -> topics.add(r.topic()));
        KAFKA.createTopics(PARTITIONS, new ArrayList<>(topics));

        long seed = Long.getLong("failures.seed", 20261130L);
        Random random = new Random(seed);
        List<Kind> kinds = new ArrayList<>();
        kinds.add(Kind.BROKER_RESTART);
        for (int i = 0; i < 3; i++) {
            Collections.addAll(kinds, Kind.TASKMANAGER_LOSS, Kind.CANCEL_RESTART);
        }
        for (int i = 0; i < 4; i++) {
            Collections.addAll(
                    kinds, Kind.TASK_FAILURE, Kind.COMMIT_FAILS, Kind.COMMIT_ANSWER_LOST);
        }
        kinds.add(Kind.COMMIT_ANSWER_LOST);
        kinds.add(Kind.COMMIT_FAILS);
        Collections.shuffle(kinds, random);
        long[] planned = new long[kinds.size()];
        for (int i = 0; i < planned.length; i++) {
            planned[i] = (i == 0 ? 2 : planned[i - 1]) + 2 + random.nextInt(3);
        }
        StringBuilder schedule = new StringBuilder();
        for (int i = 0; i < planned.length; i++) {
            schedule.append(i == 0 ? "" : ", ").append(kinds.get(i)).append('@').append(planned[i]);
        }
        System.out.println("Failure schedule (seed " + seed + ", checkpoint ids): " + schedule);

        Path warehouse = tmp.resolve("warehouse");
        Path ckRoot = tmp.resolve("checkpoints");
        IngestConfig cfg = PgbenchCaptureITCase.withScd2(PgbenchCaptureITCase.config());
        cfg.catalog.put("catalog-impl", FailingCommitCatalog.class.getName());
        cfg.catalog.put("warehouse", warehouse.toAbsolutePath().toString());
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        CatalogSettings catalog = CatalogSettings.of("changeflow", cfg.catalog);
        Catalog cat = catalog.open();
        ClusterIngest.ensureTables(cat, plan);
        KafkaInput kafka = new KafkaInput();
        kafka.bootstrapServers = KAFKA.bootstrapServers();
        kafka.topics = new ArrayList<>(topics);
        kafka.groupId = "it-failures" + tryNumber;
        kafka.startingOffsets = StartingOffsets.earliest();

        int chunks = kinds.size() + 6;
        int chunkSize = (records.size() + chunks - 1) / chunks;
        int[] produced = {0};
        Map<String, Long> ends = new HashMap<>();
        FailureInjector.reset();
        int injected = 0;
        int recovered = 0;
        long t0 = System.nanoTime();
        try (KafkaIngestCluster cluster = new KafkaIngestCluster()) {
            JobClient job =
                    cluster.submit(plan, catalog, kafka, ckRoot, CHECKPOINT_INTERVAL, null, null);
            ends.putAll(produceChunk(records, produced, chunkSize));
            for (int i = 0; i < kinds.size(); i++) {
                Kind kind = kinds.get(i);
                long at = Math.max(planned[i], FailureInjector.COMPLETED.get() + 1);
                int restores = FailureInjector.RESTORES.get();
                List<ProducerRecord<byte[], byte[]>> next =
                        records.subList(
                                produced[0], Math.min(records.size(), produced[0] + chunkSize));
                long firedAt;
                switch (kind) {
                    case TASK_FAILURE:
                        FailureInjector.armTaskFailure(at);
                        ends.putAll(produceChunk(records, produced, chunkSize));
                        Await.until(
                                kind + " at checkpoint " + at,
                                STEP_TIMEOUT,
                                () -> FailureInjector.firedAt() >= 0,
                                () -> "");
                        firedAt = FailureInjector.firedAt();
                        break;
                    case COMMIT_FAILS:
                    case COMMIT_ANSWER_LOST:
                        String table = tableOf(next, random);
                        // the next commit of that table fails: armed before the chunk holding its
                        // next records
                        // is produced, so such a commit comes (waiting for checkpoint `at` instead
                        // could wait for
                        // a table whose records were all committed before it)
                        FailingCommitCatalog.armCommitFailure(
                                table,
                                FailureInjector.COMPLETED.get() + 1,
                                kind == Kind.COMMIT_ANSWER_LOST);
                        ends.putAll(produceChunk(records, produced, chunkSize));
                        Await.until(
                                kind
                                        + " of "
                                        + table
                                        + " after checkpoint "
                                        + FailureInjector.COMPLETED.get(),
                                STEP_TIMEOUT,
                                () -> FailingCommitCatalog.firedAtCheckpoint() >= 0,
                                () ->
                                        "completed "
                                                + FailureInjector.COMPLETED.get()
                                                + ", produced "
                                                + produced[0]
                                                + "/"
                                                + records.size());
                        firedAt = FailingCommitCatalog.firedAtCheckpoint();
                        break;
                    default:
                        ends.putAll(produceChunk(records, produced, chunkSize));
                        Await.until(
                                "checkpoint " + at,
                                STEP_TIMEOUT,
                                () -> FailureInjector.COMPLETED.get() >= at,
                                () ->
                                        "completed "
                                                + FailureInjector.COMPLETED.get()
                                                + ", restores "
                                                + FailureInjector.RESTORES.get()
                                                + ", before "
                                                + kind);
                        firedAt = FailureInjector.COMPLETED.get();
                        if (kind == Kind.TASKMANAGER_LOSS) {
                            cluster.replaceTaskManager();
                        } else if (kind == Kind.CANCEL_RESTART) {
                            KafkaIngestCluster.cancel(job);
                            Path latest = KafkaIngestCluster.latestState(ckRoot);
                            job =
                                    cluster.submit(
                                            plan,
                                            catalog,
                                            kafka,
                                            ckRoot,
                                            CHECKPOINT_INTERVAL,
                                            latest,
                                            null);
                        } else {
                            KAFKA.restart();
                        }
                }
                injected++;
                if (kind != Kind.BROKER_RESTART) {
                    Await.until(
                            "a restore after " + kind,
                            STEP_TIMEOUT,
                            () -> FailureInjector.RESTORES.get() > restores,
                            () -> "");
                }
                long after = FailureInjector.COMPLETED.get();
                Await.until(
                        "a checkpoint after " + kind,
                        STEP_TIMEOUT,
                        () -> FailureInjector.COMPLETED.get() > after,
                        () -> "");
                KafkaIngestCluster.awaitRead(ends, STEP_TIMEOUT);
                recovered++;
                System.out.printf(
                        "  failure %2d %-18s planned at checkpoint %3d, injected at %3d, recovered by checkpoint %3d (%.1f s)%n",
                        i + 1,
                        kind,
                        planned[i],
                        firedAt,
                        FailureInjector.COMPLETED.get(),
                        (System.nanoTime() - t0) / 1e9);
            }
            while (produced[0] < records.size()) {
                ends.putAll(produceChunk(records, produced, chunkSize));
            }
            KafkaIngestCluster.awaitRead(ends, STEP_TIMEOUT);
            KafkaIngestCluster.stopWithSavepoint(job, ckRoot);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
                "Ingested %,d Kafka records under %d failures in %.1f s: %,.0f events/s%n",
                records.size(), injected, seconds, records.size() / seconds);
        System.out.println("Failures injected: " + injected + ", recovered: " + recovered);

        assertThat(injected).isEqualTo(kinds.size()).isGreaterThanOrEqualTo(20);
        assertThat(recovered).isEqualTo(injected);
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
        assertThat(
                        PgbenchCaptureITCase.sorted(
                                PgbenchCaptureITCase.rows(
                                        warehouse, "public.pgbench_accounts_scd2")))
                .isEqualTo(
                        PgbenchCaptureITCase.sorted(
                                PgbenchCaptureITCase.scd2Oracle(SharedData.pgbenchCapture())));
        assertThat(
                        TableRows.count(
                                cat.loadTable(
                                        QuarantineTable.identifier(plan.quarantineNamespace))))
                .isZero();
        // every restart was a restore (the resubmissions get new job ids)
        PgbenchCaptureITCase.assertNoResetMarkers(cat);
        if (cat instanceof Closeable) {
            ((Closeable) cat).close();
        }
    }

    private static Map<String, Long> produceChunk(
            List<ProducerRecord<byte[], byte[]>> records, int[] produced, int chunkSize)
            throws Exception {
        int to = Math.min(records.size(), produced[0] + chunkSize);
        Map<String, Long> ends =
                KafkaIngestCluster.produce(KAFKA, records.subList(produced[0], to));
        produced[0] = to;
        return ends;
    }

    /**
     * A table the chunk writes to (the accounts feed two: SCD1 and SCD2), chosen by the seeded
     * random.
     */
    private static String tableOf(List<ProducerRecord<byte[], byte[]>> chunk, Random random) {
        TreeSet<String> tables = new TreeSet<>();
        for (ProducerRecord<byte[], byte[]> r : chunk) {
            String table = r.topic().substring(r.topic().lastIndexOf('.') + 1);
            tables.add(table);
            if (table.equals("pgbench_accounts")) {
                tables.add("pgbench_accounts_scd2");
            }
        }
        if (tables.isEmpty()) {
            tables.add("pgbench_accounts");
        }
        List<String> list = new ArrayList<>(tables);
        return list.get(random.nextInt(list.size()));
    }
}

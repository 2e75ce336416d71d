package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.kafka.KafkaChangeRecord;
import dev.changeflow.sources.kafka.KafkaChangeSource;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.PipelineOptionsInternal;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The Kafka ingest job of {@link IngestJob#buildKafka(DataStream, IngestPlan, CatalogSettings)} on
 * a MiniCluster the test controls (one TaskManager with 4 slots, restartable), with the {@link
 * FailureInjector} step between the Kafka source (uid {@code kafka-source}) and the decoder:
 * RocksDB with incremental checkpoints every {@code interval} under {@code <ckRoot>/checkpoints},
 * retained on cancellation (a job submitted from one claims it: {@code CLAIM} restore mode), and a
 * fixed-delay restart strategy (200 ms, unlimited attempts) so injected failures cost no back-off.
 */
final class KafkaIngestCluster implements AutoCloseable {
    final MiniCluster cluster;
    private int taskManagers = 1;

    KafkaIngestCluster() throws Exception {
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(256));
        // any free port: the other failsafe fork may run a KafkaIngestCluster too (the default is
        // Flink's fixed 8081, and a second cluster then fails with a BindException)
        conf.set(RestOptions.BIND_PORT, "0");
        cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(4)
                                .build());
        cluster.start();
    }

    /**
     * Submits the job.
     *
     * @param restore a retained checkpoint or savepoint to start from, or null (no state)
     * @param fixedJobId the job id (as in application mode), or null for a random one
     */
    JobClient submit(
            IngestPlan plan,
            CatalogSettings catalog,
            KafkaInput kafka,
            Path ckRoot,
            Duration interval,
            @Nullable Path restore,
            @Nullable JobID fixedJobId)
            throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                ckRoot.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, interval);
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 2);
        // A safety net only: a checkpoint not complete after 60 s (not Flink's 10 min) fails the
        // job over, which restores from a checkpoint of the same job and carries on.
        conf.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, Duration.ofSeconds(60));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, Integer.MAX_VALUE);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore.toUri().toString());
            // CLAIM: the resubmitted job owns the cancelled job's retained checkpoint. Under
            // Flink's default NO_CLAIM the first checkpoint after the restore is a full one that
            // shares no file with the restored checkpoint, so the restored files leave the shared
            // state registry as soon as it completes; a RocksDB task that takes the next
            // (incremental) checkpoint before it was told that the full one completed still
            // refers to the restored files (as the log shows it), the JobMaster refuses its
            // acknowledgement ("Attempt to reference unknown state") and that checkpoint, and
            // every later one, waits for the 60 s checkpoint timeout (a CANCEL_RESTART step took
            // 65 s instead of about 6 s).
            conf.set(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM);
        }
        if (fixedJobId != null) {
            conf.set(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID, fixedJobId.toHexString());
        }
        TestStreamEnvironment env =
                new TestStreamEnvironment(
                        cluster, conf, plan.config.parallelism, List.of(), List.of());
        DataStream<KafkaChangeRecord> records =
                env.fromSource(
                                KafkaChangeSource.create(kafka, IngestJob.defaultGroupId(plan)),
                                WatermarkStrategy.noWatermarks(),
                                "kafka")
                        .uid("kafka-source")
                        .setParallelism(1)
                        .process(new FailureInjector(), TypeInformation.of(KafkaChangeRecord.class))
                        .uid("failure-injector")
                        .name("failure injector")
                        .setParallelism(1);
        IngestJob.buildKafka(records, plan, catalog);
        return env.executeAsync("changeflow ingest " + plan.config.name);
    }

    /** Closes the TaskManager that runs the job (its tasks fail) and starts a fresh one. */
    void replaceTaskManager() throws Exception {
        cluster.terminateTaskManager(taskManagers - 1).get(60, TimeUnit.SECONDS);
        cluster.startTaskManager();
        taskManagers++;
    }

    /** Cancels the job and waits until it ended (its checkpoints are retained). */
    static void cancel(JobClient job) throws Exception {
        job.cancel().get(60, TimeUnit.SECONDS);
        Await.until(
                "the job to end",
                Duration.ofMinutes(5),
                () -> job.getJobExecutionResult().isDone(),
                () -> "");
    }

    /** The newest retained checkpoint or savepoint under {@code ckRoot}. */
    static Path latestState(Path ckRoot) throws Exception {
        return LocalIngest.latestState(ckRoot)
                .orElseThrow(() -> new AssertionError("no retained checkpoint under " + ckRoot));
    }

    /**
     * Stops the job with a canonical savepoint under {@code <ckRoot>/savepoints}, retrying while
     * Flink declines it (tasks still starting after a failover), and waits until the job ended.
     */
    static String stopWithSavepoint(JobClient job, Path ckRoot) throws Exception {
        String dir = ckRoot.resolve("savepoints").toUri().toString();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (true) {
            try {
                String path =
                        job.stopWithSavepoint(false, dir, SavepointFormatType.CANONICAL)
                                .get(5, TimeUnit.MINUTES);
                job.getJobExecutionResult().get(5, TimeUnit.MINUTES);
                return path;
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline || job.getJobExecutionResult().isDone()) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
    }

    /**
     * Produces records (in order) and returns, per partition ({@code topic/partition}), the offset
     * after the last record written.
     */
    static Map<String, Long> produce(
            EmbeddedKafka kafka, List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        Map<String, Long> ends = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = kafka.producer()) {
            List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
            for (ProducerRecord<byte[], byte[]> r : records) {
                sent.add(producer.send(r));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                RecordMetadata m = f.get(60, TimeUnit.SECONDS);
                ends.merge(m.topic() + "/" + m.partition(), m.offset() + 1, Math::max);
            }
        }
        return ends;
    }

    /**
     * Waits until the running job (as restored, then advanced) read every partition up to {@code
     * ends}.
     */
    static void awaitRead(Map<String, Long> ends, Duration timeout) {
        Await.until(
                "the job to read up to " + ends,
                timeout,
                () ->
                        ends.entrySet().stream()
                                .allMatch(
                                        e ->
                                                FailureInjector.POSITIONS.getOrDefault(
                                                                e.getKey(), 0L)
                                                        >= e.getValue()),
                () -> "read " + FailureInjector.POSITIONS);
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}

package dev.changeflow.jobs.local;

import dev.changeflow.jobs.config.IngestOptions;
import dev.changeflow.sources.changes.ChangeRecordException;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.checkpoint.CheckpointFailureReason;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the local runs of changeflow (ingest and Gold, each on an embedded MiniCluster) share: where
 * a job's checkpoints go, the Flink configuration of a local job (RocksDB, incremental checkpoints,
 * a few quick restarts), submitting a job and cancelling it when the launcher fails, stopping it
 * with a savepoint, and deleting a checkpoint folder.
 */
@Internal
public final class LocalRunner {
    /** Restarts of a local job after a task failure before the run fails. */
    static final int RESTART_ATTEMPTS = 3;

    /** Pause between two restarts of a local job. */
    static final Duration RESTART_DELAY = Duration.ofMillis(500);

    private LocalRunner() {}

    /** What the launcher does while a submitted job runs (e.g. wait for it, or stop it). */
    @FunctionalInterface
    public interface Watch {
        /**
         * Returns when the launcher is done with the job.
         *
         * @throws Exception the job's failure, or the launcher's; the job is then cancelled
         */
        void watch(JobClient job) throws Exception;
    }

    /**
     * The folder of a local job's checkpoints and savepoints: {@code <root>/<job>}, where root
     * defaults to {@code <warehouse>/.changeflow/checkpoints}.
     *
     * @param root null for the default under the warehouse
     * @return an absolute path (the folder may not exist)
     */
    public static Path checkpointRoot(Path warehouse, @Nullable Path root, String job) {
        Path base = root != null ? root : warehouse.resolve(".changeflow").resolve("checkpoints");
        return base.resolve(job).toAbsolutePath();
    }

    /**
     * {@link #configuration(Path, Duration, Duration)} with the default checkpoint timeout ({@link
     * IngestOptions#CHECKPOINT_TIMEOUT}, 2 min).
     */
    public static Configuration configuration(Path checkpointsDir, Duration checkpointInterval) {
        return configuration(
                checkpointsDir,
                checkpointInterval,
                IngestOptions.CHECKPOINT_TIMEOUT.defaultValue());
    }

    /**
     * Flink configuration of a local job: RocksDB with incremental checkpoints every {@code
     * checkpointInterval} into {@code checkpointsDir}, each failed when not complete after {@code
     * checkpointTimeout} ({@link IngestOptions#CHECKPOINT_TIMEOUT}), {@value #RESTART_ATTEMPTS}
     * fixed-delay restarts 500 ms apart, a fifth of TaskManager memory managed (RocksDB), no check
     * for closed user-code class loaders (see the comment in the body).
     */
    public static Configuration configuration(
            Path checkpointsDir, Duration checkpointInterval, Duration checkpointTimeout) {
        return configuration(
                checkpointsDir.toUri().toString(), checkpointInterval, checkpointTimeout);
    }

    /**
     * As {@link #configuration(Path, Duration, Duration)}, the checkpoints going to {@code
     * checkpointsUri} on any Flink file system ({@code file:///...}, {@code s3://bucket/...}).
     */
    public static Configuration configuration(
            String checkpointsUri, Duration checkpointInterval, Duration checkpointTimeout) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointsUri);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, checkpointInterval);
        conf.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, checkpointTimeout);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, RESTART_ATTEMPTS);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, RESTART_DELAY);
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        // One JVM may run several jobs one after the other (a statement file's jobs, a test
        // suite): Iceberg's shared worker pool keeps threads that an earlier job's task created,
        // whose context class loader is that job's (closed) user-code loader. Local jobs load
        // every class from the application class path, so a closed loader is harmless; Flink's
        // safety net would instead fail the next job's S3 reads ("Trying to access closed
        // classloader", raised by the AWS SDK's HTTP client looking up its logger).
        conf.set(CoreOptions.CHECK_LEAKED_CLASSLOADER, false);
        return conf;
    }

    /**
     * Submits the job of {@code env} and calls {@code watch} with it; when {@code watch} throws,
     * cancels the job (waiting up to a minute) before rethrowing.
     *
     * @throws Exception what {@code watch} or the submission throws
     */
    public static void execute(StreamExecutionEnvironment env, String jobName, Watch watch)
            throws Exception {
        JobClient job = env.executeAsync(jobName);
        try {
            watch.watch(job);
        } catch (Exception | Error e) {
            cancelQuietly(job, e);
            throw e;
        }
    }

    /**
     * Stops the job with a canonical savepoint under {@code dir}; retries while some tasks are
     * still starting (a small input can be read before every task of the job runs, and Flink then
     * declines the savepoint) or the job is restarting (waiting up to 2 minutes per attempt for it
     * to run again, 600 attempts at most).
     *
     * @return the savepoint's path, as Flink gives it (a URI)
     * @throws Exception the job's failure cause when it fails meanwhile; {@link
     *     IllegalStateException} when it finished instead; Flink's refusal when it keeps declining
     */
    public static String stopWithSavepoint(JobClient job, Path dir) throws Exception {
        return stopWithSavepoint(job, dir.toUri().toString());
    }

    /**
     * As {@link #stopWithSavepoint(JobClient, Path)}, the savepoint going under {@code dirUri} on
     * any Flink file system ({@code file:///...}, {@code s3://bucket/...}).
     */
    public static String stopWithSavepoint(JobClient job, String dirUri) throws Exception {
        for (int attempt = 0; ; attempt++) {
            CompletableFuture<String> savepoint;
            try {
                savepoint = job.stopWithSavepoint(false, dirUri, SavepointFormatType.CANONICAL);
            } catch (IllegalStateException clusterGone) {
                // a local MiniCluster shuts down as soon as its job ends (e.g. a task failed
                // between two attempts): the job's result says why, not this
                throw jobEnded(job, clusterGone);
            }
            try {
                while (true) {
                    try {
                        return savepoint.get(1, TimeUnit.SECONDS);
                    } catch (TimeoutException pending) {
                        throwIfFailed(job);
                    }
                }
            } catch (ExecutionException e) {
                // a task failed while the job was being stopped (a record the run refuses came
                // after the savepoint's barrier): the failure is the job's, whatever the job does
                // next (restart, finish), so it is what the run reports
                Exception refused = refusal(e);
                if (refused != null) {
                    throw refused;
                }
                // declined: tasks still starting, or the job is failing over / failed
                if (attempt >= 600) {
                    throw e;
                }
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (true) {
                    if (throwIfFailed(job)) {
                        throw new IllegalStateException(
                                "the job finished while it was being stopped", e);
                    }
                    try {
                        if (job.getJobStatus().get(10, TimeUnit.SECONDS) == JobStatus.RUNNING) {
                            break;
                        }
                    } catch (ExecutionException | IllegalStateException gone) {
                        // the MiniCluster is shutting down: the result future tells why
                    }
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
                if (!tasksNotReady(e)) {
                    Thread.sleep(500); // a restarted job: give its tasks a moment to start
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * The error to report when {@code job}'s MiniCluster refused a call ({@code gone}) because the
     * job ended: waits up to a minute for the job's result, then throws its failure cause ({@link
     * #throwIfFailed}); returns {@link IllegalStateException} "the job finished while it was being
     * stopped" when it finished, or {@code gone} when the result does not come.
     */
    private static Exception jobEnded(JobClient job, IllegalStateException gone) throws Exception {
        try {
            job.getJobExecutionResult().get(1, TimeUnit.MINUTES);
        } catch (ExecutionException failed) {
            // thrown below, with the run's own refusal picked out of the causes
        } catch (TimeoutException notEnded) {
            return gone;
        }
        if (throwIfFailed(job)) {
            return new IllegalStateException("the job finished while it was being stopped", gone);
        }
        return gone;
    }

    /**
     * Throws the job's failure cause when the job has failed or was cancelled; returns true when it
     * finished, false while it runs. (Uses the result future: a local MiniCluster shuts down as
     * soon as its job ends, after which status queries fail.)
     *
     * @throws Exception the innermost cause of the failure, or the outermost {@link
     *     ChangeRecordException}, {@code AutoCdcException} or {@code CdfException} in the chain
     *     (they name the record, snapshot row or version; a library exception they wrap does not)
     */
    public static boolean throwIfFailed(JobClient job) throws Exception {
        CompletableFuture<JobExecutionResult> result = job.getJobExecutionResult();
        if (!result.isDone()) {
            return false;
        }
        try {
            result.get();
            return true;
        } catch (ExecutionException e) {
            Exception refused = refusal(e);
            if (refused != null) {
                throw refused;
            }
            Throwable cause = e;
            while (cause.getCause() != null && cause.getCause() != cause) {
                cause = cause.getCause();
            }
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            throw e;
        }
    }

    /**
     * Waits for the job's end after a stop with savepoint. A task can still fail after the
     * savepoint is written (a record the run refuses came after the savepoint's barrier): the job
     * then fails (or restarts and fails) and the run reports that failure.
     *
     * @throws Exception the run's own refusal ({@link ChangeRecordException}, {@link
     *     dev.changeflow.operators.AutoCdcException}, {@link
     *     dev.changeflow.sources.cdf.CdfException}) among the causes, else Flink's {@link
     *     ExecutionException}
     */
    public static void awaitEnd(JobClient job) throws Exception {
        try {
            job.getJobExecutionResult().get();
        } catch (ExecutionException e) {
            Exception refused = refusal(e);
            throw refused != null ? refused : e;
        }
    }

    /**
     * The run's own refusal in {@code e}'s causes — a {@link ChangeRecordException}, {@link
     * dev.changeflow.operators.AutoCdcException} or {@link dev.changeflow.sources.cdf.CdfException}
     * (each carries an error code the launcher reports with exit code 2) — or null.
     */
    @Nullable
    private static Exception refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ChangeRecordException
                    || t instanceof dev.changeflow.operators.AutoCdcException
                    || t instanceof dev.changeflow.sources.cdf.CdfException) {
                return (Exception) t;
            }
        }
        return null;
    }

    /**
     * Cancels the job unless it ended, waiting up to a minute; a failure to cancel is added to
     * {@code reason} as suppressed.
     */
    public static void cancelQuietly(JobClient job, Throwable reason) {
        try {
            if (!job.getJobExecutionResult().isDone()) {
                job.cancel().get(1, TimeUnit.MINUTES);
            }
        } catch (Exception e) {
            reason.addSuppressed(e);
        }
    }

    private static boolean tasksNotReady(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CheckpointException
                    && ((CheckpointException) t).getCheckpointFailureReason()
                            == CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /**
     * Deletes a folder tree, if it exists; files that vanish meanwhile (Flink's asynchronous
     * checkpoint clean-up of a job that just finished) are fine.
     *
     * @throws IOException when a file cannot be deleted, or the tree keeps changing (21 attempts,
     *     50 ms apart)
     */
    public static void deleteRecursively(Path p) throws IOException {
        for (int attempt = 0; ; attempt++) {
            if (!Files.exists(p)) {
                return;
            }
            try (Stream<Path> s = Files.walk(p)) {
                for (Path x : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                    Files.deleteIfExists(x);
                }
                return;
            } catch (NoSuchFileException | DirectoryNotEmptyException | UncheckedIOException e) {
                if (attempt >= 20) {
                    throw e instanceof UncheckedIOException
                            ? ((UncheckedIOException) e).getCause()
                            : (IOException) e;
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while deleting " + p, ie);
                }
            }
        }
    }
}

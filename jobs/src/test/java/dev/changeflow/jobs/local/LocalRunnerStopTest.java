package dev.changeflow.jobs.local;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LocalRunner#stopWithSavepoint}: a local job that ended before the stop (its per-job
 * MiniCluster then shuts down and refuses every call with "MiniCluster is not yet running or has
 * already been shut down") is reported by its own result — the task's failure cause — not by the
 * MiniCluster's refusal.
 */
class LocalRunnerStopTest {
    @TempDir Path dir;

    /** A record the job refuses. */
    static final class Refuse implements MapFunction<Long, Long> {
        @Override
        public Long map(Long value) {
            throw new IllegalArgumentException("record " + value + " is refused");
        }
    }

    @Test
    void aJobThatFailedBeforeTheStopIsReportedByItsFailureCause() throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.fromSequence(1, 1).map(new Refuse()).returns(Long.class).print();
        JobClient job = env.executeAsync("fails at once");
        // the job ends, and its MiniCluster shuts down with it
        assertThatThrownBy(() -> job.getJobExecutionResult().get())
                .isInstanceOf(ExecutionException.class);
        assertThatThrownBy(() -> LocalRunner.stopWithSavepoint(job, dir.resolve("savepoints")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("record 1 is refused");
        assertThat(dir.resolve("savepoints")).doesNotExist();
    }
}

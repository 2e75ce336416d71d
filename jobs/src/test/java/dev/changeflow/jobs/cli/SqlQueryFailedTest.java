package dev.changeflow.jobs.cli;

import dev.changeflow.sources.cdf.CdfException;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SqlCommand#queryFailed}: the error {@code changeflow sql} prints for a statement whose job
 * failed. When Flink's collect loses the race with the job's end, the rows' iterator fails only
 * with "could not fetch more results"; the job's own result then gives the change-feed error (as
 * its code) or the innermost cause. Each case runs a real job on a local MiniCluster.
 */
class SqlQueryFailedTest {

    /** What the rows' iterator throws when it lost the race: no cause of the job in it. */
    private static RuntimeException lostRace() {
        return new RuntimeException(
                "Failed to fetch next result",
                new IOException("Failed to fetch job execution result"));
    }

    /** A map that throws a change-feed error, or divides by zero, for record 1. */
    static final class Throws implements MapFunction<Long, Long> {
        private final boolean changeFeedError;

        Throws(boolean changeFeedError) {
            this.changeFeedError = changeFeedError;
        }

        @Override
        public Long map(Long value) {
            if (changeFeedError) {
                throw new CdfException(
                        CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                        "Version 2 of table c.db.k is not available: a file it needs is missing");
            }
            return value / (value - 1);
        }
    }

    /** A finished job of one record through {@code map}: failed or not, its result is in. */
    private static JobClient finishedJob(MapFunction<Long, Long> map) throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.fromSequence(1, 1).map(map).returns(Long.class).sinkTo(new DiscardingSink<>());
        JobClient job = env.executeAsync("query");
        try {
            job.getJobExecutionResult().get();
        } catch (Exception expected) {
            // the failed cases: the result is what queryFailed looks up
        }
        return job;
    }

    @Test
    void aChangeFeedErrorIsTakenFromTheJobWhenTheIteratorLostTheRace() throws Exception {
        JobClient job = finishedJob(new Throws(true));
        RuntimeException e =
                SqlCommand.queryFailed(lostRace(), "statement 1:1:1", Optional.of(job));
        assertThat(e).isInstanceOf(CdfException.class);
        assertThat(((CdfException) e).code())
                .isEqualTo(CdfException.ErrorCode.VERSION_NOT_AVAILABLE);
        assertThat(e)
                .hasMessage(
                        "VERSION_NOT_AVAILABLE: Version 2 of table c.db.k is not available: a file"
                                + " it needs is missing");
    }

    @Test
    void anyOtherFailureNamesTheJobsInnermostCause() throws Exception {
        JobClient job = finishedJob(new Throws(false));
        RuntimeException e =
                SqlCommand.queryFailed(lostRace(), "statement 2:1:1", Optional.of(job));
        assertThat(e)
                .isInstanceOf(CliErrors.Failed.class)
                .hasMessage(
                        "statement 2:1:1: QUERY_FAILED: the statement's job failed:"
                                + " ArithmeticException: / by zero");
    }

    @Test
    void aChangeFeedErrorInTheIteratorsChainIsReturnedAsItIs() {
        CdfException cdf = new CdfException(CdfException.ErrorCode.VERSION_NOT_AVAILABLE, "gone");
        assertThat(
                        SqlCommand.queryFailed(
                                new RuntimeException("Failed to fetch next result", cdf),
                                "statement 1:1:1",
                                Optional.empty()))
                .isSameAs(cdf);
    }

    @Test
    void aJobThatSucceededLeavesTheIteratorsOwnCause() throws Exception {
        JobClient job = finishedJob(value -> value);
        assertThat(SqlCommand.queryFailed(lostRace(), "statement 1:1:1", Optional.of(job)))
                .isInstanceOf(CliErrors.Failed.class)
                .hasMessage(
                        "statement 1:1:1: QUERY_FAILED: the statement's job failed:"
                                + " IOException: Failed to fetch job execution result");
    }
}

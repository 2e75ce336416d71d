package dev.changeflow.jobs.ingest;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.scope.ScopeFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LocalMetrics} after a failover: a gauge of the failed attempt stops counting once the same
 * subtask registered it again (the launcher's end conditions read gauges of the running attempt);
 * counters of every attempt stay in the sums.
 */
class LocalMetricsTest {

    @AfterEach
    void reset() {
        LocalMetrics.reset();
    }

    private static MetricGroup group(int subtask, int attempt) {
        Map<String, String> variables =
                Map.of(
                        ScopeFormat.SCOPE_JOB_ID,
                        "j",
                        ScopeFormat.SCOPE_TASK_NAME,
                        "file progress",
                        ScopeFormat.SCOPE_TASK_SUBTASK_INDEX,
                        Integer.toString(subtask),
                        ScopeFormat.SCOPE_TASK_ATTEMPT_NUM,
                        Integer.toString(attempt),
                        ScopeFormat.SCOPE_TASK_ATTEMPT_ID,
                        "a" + subtask + "-" + attempt);
        return new UnregisteredMetricsGroup() {
            @Override
            public Map<String, String> getAllVariables() {
                return variables;
            }
        };
    }

    @Test
    void aGaugeOfAFailedAttemptStopsCountingCountersStay() {
        LocalMetrics reporter = new LocalMetrics();
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> 2, "filesDone", group(0, 0));
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> 5, "filesDone", group(1, 0));
        SimpleCounter before = new SimpleCounter();
        before.inc(7);
        reporter.notifyOfAddedMetric(before, "records", group(0, 0));
        assertThat(LocalMetrics.sum("filesDone")).isEqualTo(7);

        // subtask 0 fails over: its new attempt has read one file again so far
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> 1, "filesDone", group(0, 1));
        SimpleCounter after = new SimpleCounter();
        after.inc(3);
        reporter.notifyOfAddedMetric(after, "records", group(0, 1));
        assertThat(LocalMetrics.sum("filesDone")).isEqualTo(6);
        assertThat(LocalMetrics.byTask("filesDone"))
                .containsExactly(Map.entry("file progress", 6L));
        assertThat(LocalMetrics.sum("records")).isEqualTo(10);
        assertThat(LocalMetrics.registered("filesDone")).isTrue();
    }

    @Test
    void aSumOverSubtasksIsGivenOnlyWhenAllOfOneAttemptAreThere() {
        LocalMetrics reporter = new LocalMetrics();
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> 3, "pending", group(0, 0));
        assertThat(LocalMetrics.sumOfOneAttempt("pending", 2)).isEmpty();
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> -3, "pending", group(1, 0));
        assertThat(LocalMetrics.sumOfOneAttempt("pending", 2)).hasValue(0);
        // a failover: subtask 1 is back first; its sum with subtask 0's old gauge means nothing
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> -2, "pending", group(1, 1));
        assertThat(LocalMetrics.sumOfOneAttempt("pending", 2)).isEmpty();
        reporter.notifyOfAddedMetric((Gauge<Integer>) () -> 2, "pending", group(0, 1));
        assertThat(LocalMetrics.sumOfOneAttempt("pending", 2)).hasValue(0);
    }
}

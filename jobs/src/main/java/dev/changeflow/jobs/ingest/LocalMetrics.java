package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.SnapshotSequencer;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.runtime.metrics.scope.ScopeFormat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An in-JVM Flink metric reporter for local runs: it keeps references to the job's counters and
 * gauges so the launcher can print progress (records/s, applied / late / quarantined, checkpoints)
 * and notice when every input file has been read. Registered through {@code
 * metrics.reporter.changeflow.factory.class}; on a cluster, use Flink's own reporters.
 */
public final class LocalMetrics implements MetricReporter {

    private static final Map<String, List<Metric>> METRICS = new ConcurrentHashMap<>();

    /**
     * Metrics registered in a group {@code flow=<name>} (key/value group), by {@code
     * <metric>@<flow>}.
     */
    private static final Map<String, List<Metric>> FLOW_METRICS = new ConcurrentHashMap<>();

    /** Metrics of task metric groups by simple name, then by task name (all subtasks). */
    private static final Map<String, Map<String, List<Metric>>> TASK_METRICS =
            new ConcurrentHashMap<>();

    /** Factory named in the Flink configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new LocalMetrics();
        }
    }

    /** Configuration key and value that register this reporter. */
    public static final String CONFIG_KEY = "metrics.reporter.changeflow.factory.class";

    /** Forgets all metrics (call before starting a job). */
    public static void reset() {
        METRICS.clear();
        FLOW_METRICS.clear();
        TASK_METRICS.clear();
        LATEST_GAUGES.clear();
        GAUGE_ATTEMPTS.clear();
    }

    /**
     * Sum of all counters (or numeric gauges) with this simple name, over all subtasks. Counters of
     * failed attempts stay in the sum; of a gauge only the newest attempt's value counts.
     */
    public static long sum(String name) {
        return sum(METRICS.getOrDefault(name, List.of()));
    }

    /**
     * The values of the counters (or numeric gauges) with this simple name registered in the group
     * {@code flow=<flow>} ({@code MetricGroup.addGroup("flow", flow)}), one per subtask; empty when
     * none is registered (yet).
     */
    public static List<Long> values(String name, String flow) {
        List<Long> values = new ArrayList<>();
        for (Metric m : FLOW_METRICS.getOrDefault(name + "@" + flow, List.of())) {
            values.add(sum(List.of(m)));
        }
        return values;
    }

    /**
     * The non-empty texts of the gauges with this simple name registered in the group {@code
     * flow=<flow>}, one per subtask that has one (e.g. {@code SnapshotSequencer.SKIPPED_GAUGE}).
     */
    public static List<String> texts(String name, String flow) {
        List<String> texts = new ArrayList<>();
        for (Metric m : FLOW_METRICS.getOrDefault(name + "@" + flow, List.of())) {
            if (m instanceof Gauge) {
                Object v = ((Gauge<?>) m).getValue();
                if (v != null && !v.toString().isEmpty()) {
                    texts.add(v.toString());
                }
            }
        }
        return texts;
    }

    private static long sum(List<Metric> metrics) {
        long total = 0;
        for (Metric m : metrics) {
            if (m instanceof Counter) {
                total += ((Counter) m).getCount();
            } else if (m instanceof Gauge) {
                Object v = ((Gauge<?>) m).getValue();
                if (v instanceof Number) {
                    total += ((Number) v).longValue();
                }
            }
        }
        return total;
    }

    /**
     * Per task (Flink's task name: the operator chain), the sum over its subtasks of the counters
     * or numeric gauges with this simple name registered in task scope — for example Flink's {@code
     * accumulateBusyTimeMs}, {@code accumulateIdleTimeMs} and {@code accumulateBackPressuredTimeMs}
     * (ms).
     */
    public static Map<String, Long> byTask(String name) {
        Map<String, Long> out = new java.util.TreeMap<>();
        TASK_METRICS.getOrDefault(name, Map.of()).forEach((task, ms) -> out.put(task, sum(ms)));
        return out;
    }

    /**
     * The sum of the gauges with this simple name when exactly {@code subtasks} of them are live
     * and all were registered in the same attempt number, else empty: for gauges that mean
     * something only summed over all subtasks of one run of the job (a failover restarts every
     * subtask of the job's one region, so until every subtask registered its new gauge the sum
     * mixes attempts; e.g. {@link KafkaProgressFunction#PENDING_METRIC}).
     */
    public static OptionalLong sumOfOneAttempt(String name, int subtasks) {
        List<Metric> live = METRICS.getOrDefault(name, List.of());
        if (live.size() != subtasks) {
            return OptionalLong.empty();
        }
        Set<String> attempts = new HashSet<>();
        for (Metric m : live) {
            attempts.add(GAUGE_ATTEMPTS.getOrDefault(m, "counter"));
        }
        return attempts.size() == 1 ? OptionalLong.of(sum(live)) : OptionalLong.empty();
    }

    /** Whether a metric with this simple name was registered by the running job. */
    public static boolean registered(String name) {
        return !METRICS.getOrDefault(name, List.of()).isEmpty();
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    /**
     * The gauge registered last per metric name and scope without the attempt number (job, task,
     * subtask, operator, groups): a gauge describes the state of a running task, so the one of a
     * failed attempt stops counting once its subtask restarts.
     */
    private static final Map<String, Metric> LATEST_GAUGES = new ConcurrentHashMap<>();

    /** The attempt number each live gauge was registered in (gauges compare by identity). */
    private static final Map<Metric, String> GAUGE_ATTEMPTS = new ConcurrentHashMap<>();

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        Map<String, String> variables = group.getAllVariables();
        if (metric instanceof Gauge) {
            Map<String, String> scope = new java.util.TreeMap<>(variables);
            scope.remove(ScopeFormat.SCOPE_TASK_ATTEMPT_NUM);
            scope.remove(ScopeFormat.SCOPE_TASK_ATTEMPT_ID);
            Metric previous = LATEST_GAUGES.put(metricName + scope, metric);
            if (previous != null) {
                forget(metricName, previous);
            }
            GAUGE_ATTEMPTS.put(
                    metric, variables.getOrDefault(ScopeFormat.SCOPE_TASK_ATTEMPT_NUM, ""));
        }
        METRICS.computeIfAbsent(metricName, k -> new CopyOnWriteArrayList<>()).add(metric);
        String task = variables.get(ScopeFormat.SCOPE_TASK_NAME);
        if (task != null && !variables.containsKey(ScopeFormat.SCOPE_OPERATOR_NAME)) {
            TASK_METRICS
                    .computeIfAbsent(metricName, k -> new ConcurrentHashMap<>())
                    .computeIfAbsent(task, k -> new CopyOnWriteArrayList<>())
                    .add(metric);
        }
        String flow =
                group.getAllVariables().get(ScopeFormat.asVariable(SnapshotSequencer.FLOW_GROUP));
        if (flow != null) {
            FLOW_METRICS
                    .computeIfAbsent(metricName + "@" + flow, k -> new CopyOnWriteArrayList<>())
                    .add(metric);
        }
    }

    /** Removes {@code metric} (by identity) from every map of this reporter. */
    private static void forget(String metricName, Metric metric) {
        GAUGE_ATTEMPTS.remove(metric);
        METRICS.getOrDefault(metricName, List.of()).removeIf(m -> m == metric);
        FLOW_METRICS.values().forEach(l -> l.removeIf(m -> m == metric));
        TASK_METRICS
                .getOrDefault(metricName, Map.of())
                .values()
                .forEach(l -> l.removeIf(m -> m == metric));
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        // keep the last values readable for the final summary; reset() clears between runs
    }
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.kafka.KafkaChangeRecord;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Passes Kafka records through and tells a local launcher when everything that was in the topics at
 * launch has been consumed. It is given, per partition ({@link #partitionKey}), the end offset at
 * launch and the offset a partition without a saved position starts at (what the source's starting
 * offsets resolve to). It keeps, in checkpointed union list state, the next offset to consume per
 * partition — every subtask restores all of them: restored from the savepoint on a resumed run,
 * seeded with the starting offsets on a first run. A partition is <i>pending</i> while its position
 * is below its end offset.
 *
 * <p>Runs at the source's parallelism, chained to it; the source reads each partition in one
 * reader, so a subtask sees all records of the partitions it reads and none of the others — which
 * ones it will read it does not know in advance. Gauge {@value #PENDING_METRIC} is therefore only
 * meaningful summed over the job's subtasks: subtask 0 reports how many partitions were pending at
 * the start (the same set in every subtask, computed from the restored positions), every subtask
 * subtracts the partitions whose record before the end offset it passed. The sum reaches 0 once
 * every pending partition was read to its end ({@link LocalMetrics#sumOfOneAttempt}: only when the
 * gauges of all subtasks of one attempt are there).
 *
 * <p>State of releases that ran it at parallelism 1 ({@code kafka-positions}, split list state) is
 * read once and merged.
 *
 * <p>Limitation: the end condition needs the record at {@code end - 1}; a partition that ends with
 * a transaction marker or aborted records never gets there — use {@code --until-idle} for
 * transactional producers.
 */
public final class KafkaProgressFunction
        extends ProcessFunction<KafkaChangeRecord, KafkaChangeRecord>
        implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;

    /** Gauge: partitions whose end offset at launch has not been reached, summed over subtasks. */
    public static final String PENDING_METRIC = "kafkaPartitionsPending";

    private final HashMap<String, Long> endOffsets;
    private final HashMap<String, Long> startOffsets;
    private transient HashMap<String, Long> positions;
    private transient Set<String> pending;
    private transient int pendingAtStart;
    private transient int completedHere;
    private transient volatile int gauge;
    private transient ListState<String> state;

    /**
     * @param endOffsets per partition key, the end offset (next offset to be written) at launch
     * @param startOffsets per partition key, where the source starts a partition it has no saved
     *     position for
     */
    public KafkaProgressFunction(Map<String, Long> endOffsets, Map<String, Long> startOffsets) {
        this.endOffsets = new HashMap<>(endOffsets);
        this.startOffsets = new HashMap<>(startOffsets);
    }

    /** The key of a partition in the maps of this class: {@code <topic>/<partition>}. */
    public static String partitionKey(String topic, int partition) {
        return topic + "/" + partition;
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        state =
                ctx.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>("kafka-positions-all", Types.STRING));
        ListState<String> older =
                ctx.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>("kafka-positions", Types.STRING));
        positions = new HashMap<>();
        for (ListState<String> s : List.of(state, older)) {
            for (String entry : s.get()) {
                int sep = entry.indexOf(' ');
                positions.merge(
                        entry.substring(sep + 1),
                        Long.parseLong(entry.substring(0, sep)),
                        Math::max);
            }
        }
        older.clear();
        // partitions this job has never positioned start where the source starts them
        for (Map.Entry<String, Long> e : startOffsets.entrySet()) {
            positions.putIfAbsent(e.getKey(), e.getValue());
        }
    }

    @Override
    public void open(OpenContext ctx) {
        pending = new HashSet<>();
        for (Map.Entry<String, Long> e : endOffsets.entrySet()) {
            if (positions.getOrDefault(e.getKey(), 0L) < e.getValue()) {
                pending.add(e.getKey());
            }
        }
        pendingAtStart =
                getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0 ? pending.size() : 0;
        completedHere = 0;
        gauge = pendingAtStart;
        getRuntimeContext().getMetricGroup().gauge(PENDING_METRIC, (Gauge<Integer>) () -> gauge);
    }

    @Override
    public void processElement(
            KafkaChangeRecord record, Context ctx, Collector<KafkaChangeRecord> out) {
        // forwarded first: the decoder is chained, so a record that fails the job
        // (on-invalid-record fail) never counts as read, and the launcher does not begin to stop
        // the job with a savepoint that the failing task would decline (its failure cause would
        // then be the declined savepoint, not the record's error)
        out.collect(record);
        String key = partitionKey(record.topic, record.partition);
        long next = record.offset + 1;
        positions.merge(key, next, Math::max);
        if (!pending.isEmpty()) {
            Long end = endOffsets.get(key);
            if (end != null && next >= end && pending.remove(key)) {
                completedHere++;
                gauge = pendingAtStart - completedHere;
            }
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        List<String> entries = new ArrayList<>(positions.size());
        positions.forEach((k, v) -> entries.add(v + " " + k));
        state.update(entries);
    }

    /**
     * Partitions pending at this start that this subtask has not read to their end (for tests and
     * messages).
     */
    Set<String> pending() {
        return pending;
    }

    /** This subtask's value of gauge {@value #PENDING_METRIC} (for tests). */
    int gauge() {
        return gauge;
    }
}

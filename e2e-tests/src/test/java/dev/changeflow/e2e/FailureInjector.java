package dev.changeflow.e2e;

import dev.changeflow.sources.kafka.KafkaChangeRecord;

import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test-only pass-through step between the Kafka source and the decoder (parallelism 1, chained):
 * it tells the test, through static fields (the MiniCluster runs in the test JVM), which
 * checkpoints completed, how often the job was restored from a checkpoint and how far the running
 * job has read each partition (positions kept in its checkpointed state, so a restored job starts
 * from the restored positions); and, when armed, fails its task in {@code notifyCheckpointComplete}
 * of the first checkpoint at or after the armed id (task failure → failover; the Iceberg committers
 * may or may not have committed that checkpoint yet).
 */
final class FailureInjector extends ProcessFunction<KafkaChangeRecord, KafkaChangeRecord>
        implements CheckpointedFunction, CheckpointListener {
    private static final long serialVersionUID = 1L;

    /** Highest checkpoint id notified as complete. */
    static final AtomicLong COMPLETED = new AtomicLong(-1);

    /** How many times the step started from a checkpoint (failover or restart with state). */
    static final AtomicInteger RESTORES = new AtomicInteger();

    /**
     * Per partition ({@code topic/partition}), the next offset the running job reads (restored,
     * then advanced).
     */
    static final Map<String, Long> POSITIONS = new ConcurrentHashMap<>();

    private static final AtomicLong ARMED = new AtomicLong(Long.MAX_VALUE);
    private static final AtomicLong FIRED = new AtomicLong(-1);
    private transient ListState<String> positions;

    static void reset() {
        COMPLETED.set(-1);
        RESTORES.set(0);
        POSITIONS.clear();
        ARMED.set(Long.MAX_VALUE);
        FIRED.set(-1);
    }

    /**
     * Fails the task once, on completion of the first checkpoint with id {@code >= checkpointId}.
     */
    static void armTaskFailure(long checkpointId) {
        FIRED.set(-1);
        ARMED.set(checkpointId);
    }

    /** The checkpoint id the armed task failure fired at, or -1. */
    static long firedAt() {
        return FIRED.get();
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        positions =
                ctx.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>("positions", Types.STRING));
        POSITIONS.clear();
        for (String entry : positions.get()) {
            int sep = entry.lastIndexOf(' ');
            POSITIONS.put(entry.substring(0, sep), Long.parseLong(entry.substring(sep + 1)));
        }
        if (ctx.isRestored()) {
            RESTORES.incrementAndGet();
        }
    }

    @Override
    public void processElement(KafkaChangeRecord r, Context ctx, Collector<KafkaChangeRecord> out) {
        POSITIONS.merge(r.topic + "/" + r.partition, r.offset + 1, Math::max);
        out.collect(r);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        List<String> entries = new ArrayList<>();
        POSITIONS.forEach((k, v) -> entries.add(k + " " + v));
        positions.update(entries);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        COMPLETED.accumulateAndGet(checkpointId, Math::max);
        long armed = ARMED.get();
        if (checkpointId >= armed && ARMED.compareAndSet(armed, Long.MAX_VALUE)) {
            FIRED.set(checkpointId);
            throw new IllegalStateException(
                    "injected task failure after checkpoint " + checkpointId + " completed (test)");
        }
    }
}

package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/** {@link AutoCdcMetrics} as Flink counters in the operator's metric group. */
@Internal
final class FlinkAutoCdcMetrics implements AutoCdcMetrics {
    private final Counter applied;
    private final Counter late;
    private final Counter duplicateSequence;
    private final Counter noop;
    private final Counter tombstones;
    private final Counter truncates;

    FlinkAutoCdcMetrics(MetricGroup group) {
        this.applied = group.counter(APPLIED);
        this.late = group.counter(LATE);
        this.duplicateSequence = group.counter(DUPLICATE_SEQUENCE);
        this.noop = group.counter(NOOP);
        this.tombstones = group.counter(TOMBSTONES);
        this.truncates = group.counter(TRUNCATES);
    }

    @Override
    public void applied() {
        applied.inc();
    }

    @Override
    public void late() {
        late.inc();
    }

    @Override
    public void duplicateSequence() {
        duplicateSequence.inc();
    }

    @Override
    public void noop() {
        noop.inc();
    }

    @Override
    public void tombstone() {
        tombstones.inc();
    }

    @Override
    public void truncate() {
        truncates.inc();
    }
}

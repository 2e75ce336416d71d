package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.AutoCdcMetrics;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFilterFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.table.data.RowData;

/**
 * Counts the rows an append flow writes (docs/semantics.md S1, S7), as AUTO CDC counts the changes
 * it applies: the counter is {@code applied} ({@link AutoCdcMetrics#APPLIED}), so the launcher's
 * progress line and run summary ("applied n") and the table's last refresh count the rows of
 * append-only flows too. Keeps every row; holds no state.
 */
@Internal
final class CountAppended extends RichFilterFunction<RowData> {
    private static final long serialVersionUID = 1L;

    private transient Counter applied;

    @Override
    public void open(OpenContext openContext) {
        applied = getRuntimeContext().getMetricGroup().counter(AutoCdcMetrics.APPLIED);
    }

    @Override
    public boolean filter(RowData row) {
        applied.inc();
        return true;
    }
}

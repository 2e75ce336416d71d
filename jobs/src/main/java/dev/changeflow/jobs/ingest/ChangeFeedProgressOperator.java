package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.cdf.ChangeType;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

import java.util.List;

/**
 * The change feed of an Iceberg table as the input of AUTO CDC flows (docs/semantics.md S7), and a
 * local run's end condition over it. Rows are the change feed's (the table's columns, {@code
 * _change_type}, {@code _commit_version}, {@code _commit_timestamp}; F1), paired (G1 order per row
 * identity). This operator:
 *
 * <ul>
 *   <li>drops {@code update_preimage} rows (the postimage that follows carries the change) and
 *       passes the others on as {@code +I}; whether a row deletes is the flow's APPLY AS DELETE
 *       WHEN, by default {@code _change_type = 'delete'};
 *   <li>counts the rows it passes in counter {@code recordsIn};
 *   <li>follows the change feed's watermarks, which are versions (watermark {@code v}: every change
 *       of versions up to {@code v} has been emitted), keeps the highest in operator state, and
 *       reports in gauge {@value #PENDING_METRIC} 1 while it is below {@code upTo} — the table's
 *       latest version when the run started — and 0 once it reached it. Gauge {@value
 *       #SUBTASKS_METRIC} is 1 per running subtask, so a launcher knows when every subtask reports.
 * </ul>
 *
 * A resumed run restores the highest watermark seen, so a feed with no version after {@code upTo}
 * reports 0 at once.
 */
@Internal
public final class ChangeFeedProgressOperator extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    /** Gauge: 1 while this subtask has not seen the watermark {@code upTo}, else 0. */
    public static final String PENDING_METRIC = "changeFeedPending";

    /** Gauge: 1 per running subtask of every change-feed input. */
    public static final String SUBTASKS_METRIC = "changeFeedSubtasks";

    private final long upTo;
    private final int changeTypeField;
    private transient long reached;
    private transient volatile int pending;
    private transient ListState<Long> state;
    private transient Counter recordsIn;

    /**
     * @param upTo the version the run reads up to (the latest version at launch)
     * @param changeTypeField the index of {@code _change_type} in the rows
     */
    public ChangeFeedProgressOperator(long upTo, int changeTypeField) {
        this.upTo = upTo;
        this.changeTypeField = changeTypeField;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        state =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>("change-feed-watermark", Types.LONG));
        reached = Long.MIN_VALUE;
        for (Long v : state.get()) {
            reached = Math.max(reached, v);
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        pending = reached >= upTo ? 0 : 1;
        recordsIn = getMetricGroup().counter("recordsIn");
        getMetricGroup().gauge(PENDING_METRIC, (Gauge<Integer>) () -> pending);
        getMetricGroup().gauge(SUBTASKS_METRIC, (Gauge<Integer>) () -> 1);
    }

    @Override
    public void processElement(StreamRecord<RowData> element) {
        RowData row = element.getValue();
        if (ChangeType.UPDATE_PREIMAGE.value().equals(row.getString(changeTypeField).toString())) {
            return;
        }
        row.setRowKind(RowKind.INSERT);
        recordsIn.inc();
        output.collect(element);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        super.processWatermark(mark);
        reached = Math.max(reached, mark.getTimestamp());
        if (reached >= upTo) {
            pending = 0;
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        state.update(List.of(reached));
    }
}

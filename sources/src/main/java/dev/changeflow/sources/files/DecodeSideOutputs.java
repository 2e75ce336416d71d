package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sources.changes.DecodeOutcome;
import dev.changeflow.sources.changes.DecodeOutput;
import dev.changeflow.sources.changes.DecoderFlow;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.OutputTag;

import java.util.List;

/**
 * The decoder's outputs inside a Flink decode function (files or Kafka): routes upserts/deletes,
 * truncates and quarantine rows to the side outputs {@link #changesTag}, {@link #truncatesTag} and
 * {@link #quarantineTag} of the element being processed, and counts outcomes in the counters {@code
 * recordsIn}, {@code quarantined} and {@code tombstonesSkipped}. One instance per subtask; set
 * {@link #ctx} before each element.
 */
@Internal
public final class DecodeSideOutputs implements DecodeOutput {
    private static final OutputTag<RowData> QUARANTINE_TAG =
            new OutputTag<>(
                    "changeflow-quarantine", InternalTypeInfo.of(QuarantineRecords.ROW_TYPE));

    private final OutputTag<RowData>[] changes;
    private final OutputTag<RowData>[] truncates;
    final Counter recordsIn;
    final Counter quarantined;
    final Counter tombstonesSkipped;

    /** The context of the element being processed. */
    public ProcessFunction<?, ?>.Context ctx;

    @SuppressWarnings("unchecked")
    public DecodeSideOutputs(List<DecoderFlow> flows, MetricGroup metrics) {
        changes = new OutputTag[flows.size()];
        truncates = new OutputTag[flows.size()];
        for (int i = 0; i < flows.size(); i++) {
            changes[i] = changesTag(i, flows.get(i));
            truncates[i] = truncatesTag(i, flows.get(i));
        }
        recordsIn = metrics.counter("recordsIn");
        quarantined = metrics.counter("quarantined");
        tombstonesSkipped = metrics.counter("tombstonesSkipped");
    }

    /** The side output of upserts and deletes of flow {@code flowIndex} (equal across calls). */
    public static OutputTag<RowData> changesTag(int flowIndex, DecoderFlow flow) {
        return new OutputTag<>(
                "changeflow-changes-" + flowIndex + "-" + flow.flowId(),
                InternalTypeInfo.of(flow.sourceType()));
    }

    /** The side output of truncates of flow {@code flowIndex} (equal across calls). */
    public static OutputTag<RowData> truncatesTag(int flowIndex, DecoderFlow flow) {
        return new OutputTag<>(
                "changeflow-truncates-" + flowIndex + "-" + flow.flowId(),
                InternalTypeInfo.of(flow.sourceType()));
    }

    /** The side output of quarantine rows. */
    public static OutputTag<RowData> quarantineTag() {
        return QUARANTINE_TAG;
    }

    /** {@code recordsIn}, {@code quarantined}, {@code tombstonesSkipped} so far (for tests). */
    public long[] counts() {
        return new long[] {
            recordsIn.getCount(), quarantined.getCount(), tombstonesSkipped.getCount()
        };
    }

    /** Counts one decoded record and its outcome. */
    public void count(DecodeOutcome outcome) {
        recordsIn.inc();
        countOutcome(outcome);
    }

    /** Counts an outcome of something that is not a record (a damage marker). */
    public void countOutcome(DecodeOutcome outcome) {
        if (outcome == DecodeOutcome.QUARANTINED) {
            quarantined.inc();
        } else if (outcome == DecodeOutcome.TOMBSTONE_SKIPPED) {
            tombstonesSkipped.inc();
        }
    }

    @Override
    public void upsertOrDelete(int flowIndex, RowData row) {
        ctx.output(changes[flowIndex], row);
    }

    @Override
    public void truncate(int flowIndex, RowData row) {
        ctx.output(truncates[flowIndex], row);
    }

    @Override
    public void quarantine(RowData row) {
        ctx.output(QUARANTINE_TAG, row);
    }
}

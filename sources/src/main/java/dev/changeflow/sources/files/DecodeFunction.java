package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sources.changes.ChangeRecordDecoder;
import dev.changeflow.sources.changes.DecodeOutcome;
import dev.changeflow.sources.changes.DecoderFlow;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.util.List;

/**
 * The Flink adapter over {@link ChangeRecordDecoder} for file lines (semantics.md A5).
 *
 * <p><b>Outputs.</b> Everything goes to side outputs; the main output carries nothing (it is typed
 * as the quarantine row so the operator has a valid type):
 *
 * <ul>
 *   <li>{@link #changesTag(int, DecoderFlow)}: upserts ({@code +I}) and deletes ({@code -D}) of
 *       flow i, typed {@code InternalTypeInfo.of(flow.sourceType())};
 *   <li>{@link #truncatesTag(int, DecoderFlow)}: truncates of flow i, same type;
 *   <li>{@link #quarantineTag()}: quarantine rows, typed {@code
 *       InternalTypeInfo.of(QuarantineRecords.ROW_TYPE)}; {@code offset} is the 1-based line
 *       number.
 * </ul>
 *
 * <p><b>Markers.</b> A damage marker becomes a quarantine row with the marker's reason, {@code
 * TRUNCATED_FILE} or {@code DAMAGED_FILE} (source, first line not read, the part of that line that
 * was read if any, the detail) — always quarantined, even under {@code on-invalid-record = fail},
 * because failing would re-read the same damage forever. An end-of-file marker increments {@code
 * filesCompleted}. An oversized line becomes {@code RECORD_TOO_LARGE}, a CSV line marked {@link
 * SourceLine#malformed} {@code MALFORMED_CSV} (both subject to the failure policy).
 *
 * <p><b>Metrics</b> (counters in the function's metric group): {@code recordsIn} (data lines),
 * {@code quarantined}, {@code tombstonesSkipped}, {@code filesCompleted}.
 *
 * <p>Throws {@link dev.changeflow.sources.changes.ChangeRecordException} when a flow's policy says
 * fail.
 */
@PublicEvolving
public final class DecodeFunction extends ProcessFunction<SourceLine, RowData>
        implements ResultTypeQueryable<RowData> {
    private static final long serialVersionUID = 1L;

    private final List<DecoderFlow> flows;

    private transient ChangeRecordDecoder decoder;
    private transient Counter filesCompleted;
    private transient DecodeSideOutputs output;

    /**
     * @param flows the flows of this source (one format); a flow's list index is its {@code
     *     flowIndex}
     */
    public DecodeFunction(List<DecoderFlow> flows) {
        this.flows = List.copyOf(flows);
        new ChangeRecordDecoder(this.flows); // validate early, on the client
    }

    /** The side output of upserts and deletes of flow {@code flowIndex} (equal across calls). */
    public static OutputTag<RowData> changesTag(int flowIndex, DecoderFlow flow) {
        return DecodeSideOutputs.changesTag(flowIndex, flow);
    }

    /** The side output of truncates of flow {@code flowIndex} (equal across calls). */
    public static OutputTag<RowData> truncatesTag(int flowIndex, DecoderFlow flow) {
        return DecodeSideOutputs.truncatesTag(flowIndex, flow);
    }

    /** The side output of quarantine rows. */
    public static OutputTag<RowData> quarantineTag() {
        return DecodeSideOutputs.quarantineTag();
    }

    /** {@link #changesTag(int, DecoderFlow)} of this function's flow {@code flowIndex}. */
    public OutputTag<RowData> changesTag(int flowIndex) {
        return changesTag(flowIndex, flows.get(flowIndex));
    }

    /** {@link #truncatesTag(int, DecoderFlow)} of this function's flow {@code flowIndex}. */
    public OutputTag<RowData> truncatesTag(int flowIndex) {
        return truncatesTag(flowIndex, flows.get(flowIndex));
    }

    public List<DecoderFlow> flows() {
        return flows;
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        decoder = new ChangeRecordDecoder(flows);
        MetricGroup metrics = getRuntimeContext().getMetricGroup();
        output = new DecodeSideOutputs(flows, metrics);
        filesCompleted = metrics.counter("filesCompleted");
    }

    @Override
    public void processElement(SourceLine line, Context ctx, Collector<RowData> out) {
        output.ctx = ctx;
        long now = ctx.timerService().currentProcessingTime();
        if (line.getDamage() != null) {
            QuarantineReason reason =
                    line.getDamageReason() == null
                            ? QuarantineReason.TRUNCATED_FILE
                            : line.getDamageReason();
            output.quarantine(
                    QuarantineRecords.of(
                            decoder.defaultFlowId(),
                            line.getSource(),
                            null,
                            line.getLine(),
                            line.getBytes(),
                            reason,
                            line.getDamage(),
                            now));
            output.countOutcome(DecodeOutcome.QUARANTINED);
            return;
        }
        if (line.isEndOfFile()) {
            filesCompleted.inc();
            return;
        }
        DecodeOutcome outcome;
        if (line.oversized()) {
            outcome =
                    decoder.reject(
                            QuarantineReason.RECORD_TOO_LARGE,
                            line.getBytes(),
                            line.getSource(),
                            null,
                            line.getLine(),
                            "line of "
                                    + line.getLength()
                                    + " bytes exceeds the reader's limit; first "
                                    + line.getBytes().length
                                    + " bytes kept",
                            now,
                            output);
        } else if (line.getMalformed() != null) {
            // S2: a CSV line that is no record of its file
            outcome =
                    decoder.reject(
                            QuarantineReason.MALFORMED_CSV,
                            line.getBytes(),
                            line.getSource(),
                            null,
                            line.getLine(),
                            line.getMalformed(),
                            now,
                            output);
        } else {
            decoder.textCells(line.textCells);
            outcome =
                    decoder.decode(
                            line.getBytes(), line.getSource(), null, line.getLine(), now, output);
        }
        output.count(outcome);
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(QuarantineRecords.ROW_TYPE);
    }

    @VisibleForTesting
    long[] counts() {
        return new long[] {
            output.recordsIn.getCount(),
            output.quarantined.getCount(),
            output.tombstonesSkipped.getCount(),
            filesCompleted.getCount()
        };
    }
}

package dev.changeflow.sources.kafka;

import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sources.changes.ChangeRecordDecoder;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.files.DecodeFunction;
import dev.changeflow.sources.files.DecodeSideOutputs;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.Collector;

import java.util.List;

/**
 * The Flink adapter over {@link ChangeRecordDecoder} for Kafka records (semantics.md A5): calls the
 * decoder's key/value method, so the topic routes the record to its flow (the topic's last segment
 * is the source table), the record key serves key-only deletes, and quarantine rows carry the
 * record's topic ({@code source}), {@code partition} and {@code offset}.
 *
 * <p><b>Outputs</b> are the side outputs of {@link DecodeFunction} — {@link
 * DecodeFunction#changesTag(int, DecoderFlow)}, {@link DecodeFunction#truncatesTag(int,
 * DecoderFlow)}, {@link DecodeFunction#quarantineTag()} — so the rest of the job is the same for
 * files and Kafka; the main output carries nothing.
 *
 * <p><b>Metrics</b>: {@code recordsIn} (records including tombstones), {@code quarantined}, {@code
 * tombstonesSkipped}.
 *
 * <p>Throws {@link dev.changeflow.sources.changes.ChangeRecordException} when a flow's policy says
 * fail.
 */
@PublicEvolving
public final class KafkaDecodeFunction extends ProcessFunction<KafkaChangeRecord, RowData>
        implements ResultTypeQueryable<RowData> {
    private static final long serialVersionUID = 1L;

    private final List<DecoderFlow> flows;

    private transient ChangeRecordDecoder decoder;
    private transient DecodeSideOutputs output;

    /**
     * @param flows the flows of this source (one format); a flow's list index is its {@code
     *     flowIndex}
     */
    public KafkaDecodeFunction(List<DecoderFlow> flows) {
        this.flows = List.copyOf(flows);
        new ChangeRecordDecoder(this.flows); // validate early, on the client
    }

    public List<DecoderFlow> flows() {
        return flows;
    }

    @Override
    public void open(OpenContext openContext) {
        decoder = new ChangeRecordDecoder(flows);
        output = new DecodeSideOutputs(flows, getRuntimeContext().getMetricGroup());
    }

    @Override
    public void processElement(KafkaChangeRecord record, Context ctx, Collector<RowData> out) {
        output.ctx = ctx;
        output.count(
                decoder.decode(
                        record.key,
                        record.value,
                        record.topic,
                        record.partition,
                        record.offset,
                        ctx.timerService().currentProcessingTime(),
                        output));
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(QuarantineRecords.ROW_TYPE);
    }

    @VisibleForTesting
    long[] counts() {
        return new long[] {output.counts()[0], output.counts()[1], output.counts()[2]};
    }
}

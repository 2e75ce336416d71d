package dev.changeflow.sources.kafka;

import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sources.changes.ChangeRecordDecoder;
import dev.changeflow.sources.changes.DecodeOutcome;
import dev.changeflow.sources.changes.DecodeOutput;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.files.DecodeFunction;

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
public final class KafkaDecodeFunction extends ProcessFunction<KafkaChangeRecord, RowData> implements ResultTypeQueryable<RowData> {
    private static final long serialVersionUID = 1L;

    private final List<DecoderFlow> flows;

    private transient ChangeRecordDecoder decoder;
    private transient OutputTag<RowData>[] changes;
    private transient OutputTag<RowData>[] truncates;
    private transient OutputTag<RowData> quarantine;
    private transient Counter recordsIn;
    private transient Counter quarantined;
    private transient Counter tombstonesSkipped;
    private transient Output output;

    /** @param flows the flows of this source (one format); a flow's list index is its {@code flowIndex} */
    public KafkaDecodeFunction(List<DecoderFlow> flows) {
        this.flows = List.copyOf(flows);
        new ChangeRecordDecoder(this.flows); // validate early, on the client
    }

    public List<DecoderFlow> flows() {
        return flows;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void open(OpenContext openContext) {
        decoder = new ChangeRecordDecoder(flows);
        changes = new OutputTag[flows.size()];
        truncates = new OutputTag[flows.size()];
        for (int i = 0; i < flows.size(); i++) {
            changes[i] = DecodeFunction.changesTag(i, flows.get(i));
            truncates[i] = DecodeFunction.truncatesTag(i, flows.get(i));
        }
        quarantine = DecodeFunction.quarantineTag();
        MetricGroup metrics = getRuntimeContext().getMetricGroup();
        recordsIn = metrics.counter("recordsIn");
        quarantined = metrics.counter("quarantined");
        tombstonesSkipped = metrics.counter("tombstonesSkipped");
        output = new Output();
    }

    @Override
    public void processElement(KafkaChangeRecord record, Context ctx, Collector<RowData> out) {
        output.ctx = ctx;
        recordsIn.inc();
        DecodeOutcome outcome = decoder.decode(record.key, record.value, record.topic, record.partition, record.offset,
                ctx.timerService().currentProcessingTime(), output);
        if (outcome == DecodeOutcome.QUARANTINED) {
            quarantined.inc();
        } else if (outcome == DecodeOutcome.TOMBSTONE_SKIPPED) {
            tombstonesSkipped.inc();
        }
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(QuarantineRecords.ROW_TYPE);
    }

    @VisibleForTesting
    long[] counts() {
        return new long[] {recordsIn.getCount(), quarantined.getCount(), tombstonesSkipped.getCount()};
    }

    /** Routes decoder output to the side outputs of the current element's context. */
    private final class Output implements DecodeOutput {
        Context ctx;

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
            ctx.output(quarantine, row);
        }
    }
}

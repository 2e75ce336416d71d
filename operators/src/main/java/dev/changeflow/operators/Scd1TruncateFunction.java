package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import javax.annotation.Nullable;

/**
 * SCD type 1 apply with truncate records (semantics.md A3): change records arrive keyed, truncate
 * records broadcast to every subtask. A truncate at s emits {@code -D} for every key of this
 * subtask whose applied sequence is below s ({@code ctx.applyToKeyedState}) and keeps s in the
 * broadcast state {@link AutoCdcStateDescriptors#TRUNCATE} as a table-wide tombstone that is never
 * collected; later records below s are ignored. Per-key behaviour is {@link Scd1Logic}; records it
 * quarantines leave on the side output {@link AutoCdcOperators#quarantineTag}.
 */
@Internal
public final class Scd1TruncateFunction
        extends KeyedBroadcastProcessFunction<RowData, RowData, RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final AutoCdcSpec spec;
    private final MapStateDescriptor<String, byte[]> truncateDescriptor =
            AutoCdcStateDescriptors.truncate();
    private transient Scd1Logic logic;
    private transient AutoCdcMetrics metrics;
    private transient KeyedScd1State state;
    private transient CollectorOutput output;

    public Scd1TruncateFunction(AutoCdcSpec spec) {
        this.spec = spec;
    }

    @Override
    public void open(OpenContext openContext) {
        metrics = new FlinkAutoCdcMetrics(getRuntimeContext().getMetricGroup());
        logic = new Scd1Logic(spec, metrics);
        ValueState<byte[]> row = getRuntimeContext().getState(AutoCdcStateDescriptors.scd1Row());
        state =
                new KeyedScd1State(
                        row,
                        getRuntimeContext()
                                .getState(
                                        AutoCdcStateDescriptors.scd1Tombstone(
                                                spec.tombstoneGcThreshold())));
        output = new CollectorOutput();
    }

    @Override
    public void processElement(RowData record, ReadOnlyContext ctx, Collector<RowData> out)
            throws Exception {
        output.collector = out;
        output.context = ctx;
        state.truncate =
                ctx.getBroadcastState(truncateDescriptor).get(AutoCdcStateDescriptors.TRUNCATE_KEY);
        logic.apply(record, state, output);
    }

    @Override
    public void processBroadcastElement(RowData truncateRecord, Context ctx, Collector<RowData> out)
            throws Exception {
        output.collector = out;
        metrics.truncate();
        BroadcastState<String, byte[]> bs = ctx.getBroadcastState(truncateDescriptor);
        byte[] previous = bs.get(AutoCdcStateDescriptors.TRUNCATE_KEY);
        byte[] tombstone = logic.truncateTombstone(previous, truncateRecord);
        if (tombstone == previous) {
            return; // not above the current truncate tombstone: every row below it is gone already
        }
        bs.put(AutoCdcStateDescriptors.TRUNCATE_KEY, tombstone);
        ctx.applyToKeyedState(
                AutoCdcStateDescriptors.scd1Row(),
                (key, rowState) -> {
                    byte[] value = rowState.value();
                    if (value != null && logic.truncate(value, tombstone, output)) {
                        rowState.clear();
                    }
                });
    }

    /** {@link Scd1Logic.State} over Flink keyed state (current key set by the operator). */
    static class KeyedScd1State implements Scd1Logic.State {
        final ValueState<byte[]> row;
        final ValueState<byte[]> tombstone;
        @Nullable byte[] truncate;

        KeyedScd1State(ValueState<byte[]> row, ValueState<byte[]> tombstone) {
            this.row = row;
            this.tombstone = tombstone;
        }

        @Override
        public byte[] row() {
            return StateValues.get(row);
        }

        @Override
        public void setRow(byte[] value) {
            StateValues.set(row, value);
        }

        @Override
        public void clearRow() {
            row.clear();
        }

        @Override
        public byte[] tombstone() {
            return StateValues.get(tombstone);
        }

        @Override
        public void setTombstone(byte[] value) {
            StateValues.set(tombstone, value);
        }

        @Override
        public void clearTombstone() {
            tombstone.clear();
        }

        @Override
        public byte[] truncate() {
            return truncate;
        }
    }

    /** {@link ChangeOutput} to the current {@link Collector}. */
    final class CollectorOutput implements ChangeOutput {
        Collector<RowData> collector;
        ReadOnlyContext context;
        private final OutputTag<RowData> tag = AutoCdcOperators.quarantineTag(spec);
        private final QuarantineRows rows =
                new QuarantineRows(
                        spec, getRuntimeContext().getMetricGroup().counter(QuarantineRows.COUNTER));

        @Override
        public void quarantine(RowData record, QuarantineReason reason, String detail) {
            context.output(tag, rows.row(record, reason, detail));
        }

        @Override
        public void emit(RowData row) {
            collector.collect(row);
        }
    }
}

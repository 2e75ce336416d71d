package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * SCD type 1 apply (semantics.md A3) for flows without truncate records: a thin adapter of {@link
 * Scd1Logic} over keyed state ({@link AutoCdcStateDescriptors#SCD1_ROW}, no TTL; {@link
 * AutoCdcStateDescriptors#SCD1_TOMBSTONE} with the flow's {@code tombstone-gc-threshold} TTL in
 * processing time). Keyed by {@link AutoCdcKeySelector}; input {@link AutoCdcSpec#sourceType()},
 * output {@link AutoCdcSpec#targetType()}.
 */
@Internal
public final class Scd1Function extends KeyedProcessFunction<RowData, RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final AutoCdcSpec spec;
    private transient Scd1Logic logic;
    private transient KeyedScd1State state;
    private transient CollectorOutput output;

    public Scd1Function(AutoCdcSpec spec) {
        this.spec = spec;
    }

    @Override
    public void open(OpenContext openContext) {
        logic = new Scd1Logic(spec, new FlinkAutoCdcMetrics(getRuntimeContext().getMetricGroup()));
        state = new KeyedScd1State(
                getRuntimeContext().getState(AutoCdcStateDescriptors.scd1Row()),
                getRuntimeContext().getState(AutoCdcStateDescriptors.scd1Tombstone(spec.tombstoneGcThreshold())));
        output = new CollectorOutput();
    }

    @Override
    public void processElement(RowData record, Context ctx, Collector<RowData> out) {
        output.collector = out;
        logic.apply(record, state, output);
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
            try {
                return row.value();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void setRow(byte[] value) {
            try {
                row.update(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void clearRow() {
            row.clear();
        }

        @Override
        public byte[] tombstone() {
            try {
                return tombstone.value();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void setTombstone(byte[] value) {
            try {
                tombstone.update(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
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
    static final class CollectorOutput implements ChangeOutput {
        Collector<RowData> collector;

        @Override
        public void emit(RowData row) {
            collector.collect(row);
        }
    }
}

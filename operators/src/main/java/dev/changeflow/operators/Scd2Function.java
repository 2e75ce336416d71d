package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * SCD type 2 apply (semantics.md A4): a thin adapter of {@link Scd2Logic} over keyed state — the
 * key's head {@link AutoCdcStateDescriptors#SCD2_CURRENT} and one map entry per history entry in
 * {@link AutoCdcStateDescriptors#SCD2_HISTORY}. Keyed by {@link AutoCdcKeySelector}; input {@link
 * AutoCdcSpec#sourceType()}, output {@link AutoCdcSpec#targetType()}.
 */
@Internal
public final class Scd2Function extends KeyedProcessFunction<RowData, RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final AutoCdcSpec spec;
    private transient Scd2Logic logic;
    private transient KeyedScd2State state;
    private transient Scd1Function.CollectorOutput output;

    public Scd2Function(AutoCdcSpec spec) {
        this.spec = spec;
    }

    @Override
    public void open(OpenContext openContext) {
        logic = new Scd2Logic(spec, new FlinkAutoCdcMetrics(getRuntimeContext().getMetricGroup()));
        state = new KeyedScd2State(
                getRuntimeContext().getState(AutoCdcStateDescriptors.scd2Current()),
                getRuntimeContext().getMapState(AutoCdcStateDescriptors.scd2History()));
        output = new Scd1Function.CollectorOutput();
    }

    @Override
    public void processElement(RowData record, Context ctx, Collector<RowData> out) {
        output.collector = out;
        logic.apply(record, state, output);
    }

    private static final class KeyedScd2State implements Scd2Logic.State {
        private final ValueState<byte[]> current;
        private final MapState<String, byte[]> history;

        KeyedScd2State(ValueState<byte[]> current, MapState<String, byte[]> history) {
            this.current = current;
            this.history = history;
        }

        @Override
        public byte[] current() {
            try {
                return current.value();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void setCurrent(byte[] value) {
            try {
                current.update(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void putEntry(String sequenceKey, byte[] value) {
            try {
                history.put(sequenceKey, value);
            } catch (Exception e) {
                throw new IllegalStateException("cannot write SCD2 history state", e);
            }
        }

        @Override
        public Iterable<Map.Entry<String, byte[]>> entries() {
            try {
                return history.entries();
            } catch (Exception e) {
                throw new IllegalStateException("cannot read SCD2 history state", e);
            }
        }
    }
}

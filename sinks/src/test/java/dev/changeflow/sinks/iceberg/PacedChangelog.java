package dev.changeflow.sinks.iceberg;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A bounded test stream of hand-built changelog rows, one batch per checkpoint: batch i+1 is
 * emitted only after a checkpoint taken after batch i completed (batch 0 at once), so every batch
 * is exactly the content of one checkpoint and — when it writes files — of one Iceberg version. The
 * last batch commits with Flink's final checkpoint at end of input. Restored after a failure, the
 * source continues after the last batch covered by the restored checkpoint.
 */
final class PacedChangelog implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * One row: its kind and Java values (Integer, Long, String, LocalDateTime, Instant, byte[],
     * Object[] for a STRUCT).
     */
    static final class Change implements Serializable {
        private static final long serialVersionUID = 1L;
        final RowKind kind;
        final Object[] values;

        Change(RowKind kind, Object[] values) {
            this.kind = kind;
            this.values = values;
        }

        RowData toRowData() {
            GenericRowData row = internal(values);
            row.setRowKind(kind);
            return row;
        }

        /** Nested {@code Object[]} values become nested rows (STRUCT columns). */
        private static GenericRowData internal(Object[] values) {
            Object[] internal = new Object[values.length];
            for (int i = 0; i < values.length; i++) {
                Object v = values[i];
                if (v instanceof String) {
                    v = StringData.fromString((String) v);
                } else if (v instanceof LocalDateTime) {
                    v = TimestampData.fromLocalDateTime((LocalDateTime) v);
                } else if (v instanceof Instant) {
                    v = TimestampData.fromInstant((Instant) v);
                } else if (v instanceof Object[]) {
                    v = internal((Object[]) v);
                }
                internal[i] = v;
            }
            return GenericRowData.of(internal);
        }

        @Override
        public String toString() {
            return kind.shortString() + Arrays.toString(values);
        }
    }

    static Change insert(Object... values) {
        return new Change(RowKind.INSERT, values);
    }

    static Change updateBefore(Object... values) {
        return new Change(RowKind.UPDATE_BEFORE, values);
    }

    static Change updateAfter(Object... values) {
        return new Change(RowKind.UPDATE_AFTER, values);
    }

    static Change delete(Object... values) {
        return new Change(RowKind.DELETE, values);
    }

    static List<Change> batch(Change... changes) {
        return new ArrayList<>(Arrays.asList(changes));
    }

    /** The stream of the given batches, typed as {@code InternalTypeInfo.of(rowType)}. */
    static DataStream<RowData> stream(
            StreamExecutionEnvironment env,
            RowType rowType,
            String name,
            List<List<Change>> batches) {
        List<List<Change>> copy = new ArrayList<>(batches);
        return env.fromSource(
                        new OneBatchPerCheckpointSource(copy.size()),
                        WatermarkStrategy.noWatermarks(),
                        name + "-batches")
                .setParallelism(1)
                .flatMap(new Expand(copy), InternalTypeInfo.of(rowType))
                .setParallelism(1)
                .name(name);
    }

    private static final class Expand implements FlatMapFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final List<List<Change>> batches;

        Expand(List<List<Change>> batches) {
            this.batches = batches;
        }

        @Override
        public void flatMap(Long index, Collector<RowData> out) {
            for (Change c : batches.get(index.intValue())) {
                out.collect(c.toRowData());
            }
        }
    }

    private PacedChangelog() {}
}

package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;

import javax.annotation.Nullable;

/**
 * Entry point that applies an AUTO CDC flow to a stream of change records (semantics.md A2-A4).
 *
 * <p>Input rows have {@link AutoCdcSpec#sourceType()}; {@code RowKind.DELETE} means delete, any
 * other kind upsert; null keys / sequences must have been quarantined before (the decoder does).
 * Truncate records (optional, SCD type 1 only) arrive on their own stream with the same row shape
 * and are broadcast to every subtask. Output rows have {@link AutoCdcSpec#targetType()} with row
 * kinds {@code +I} (new key or version), {@code -U}/{@code +U} (complete old row, new row) and
 * {@code -D} (complete old row).
 */
@PublicEvolving
public final class AutoCdcOperators {
    private AutoCdcOperators() {}

    /**
     * keyBy(KEYS) and apply. The keyed operator gets uid {@code "auto-cdc-" + spec.name()}.
     *
     * @param changes upserts and deletes, typed {@code InternalTypeInfo.of(spec.sourceType())}
     * @param truncates truncate records, or null when the flow has none
     * @return the target rows, typed {@code InternalTypeInfo.of(spec.targetType())}
     */
    public static SingleOutputStreamOperator<RowData> apply(
            DataStream<RowData> changes, @Nullable DataStream<RowData> truncates, AutoCdcSpec spec) {
        throw new UnsupportedOperationException("TODO(operators helper)");
    }
}

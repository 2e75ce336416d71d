package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.RowData;

/**
 * Where the AUTO CDC decision logic ({@link Scd1Logic}, {@link Scd2Logic}) sends target rows. Every
 * row is a fresh {@code GenericRowData} of {@link AutoCdcSpec#targetType()} with its row kind set
 * ({@code +I}, {@code -U}, {@code +U}, {@code -D}); the receiver may keep it.
 */
@Internal
@FunctionalInterface
public interface ChangeOutput {
    void emit(RowData row);

    /**
     * False when the receiver derives its output from the state instead (the SCD type 1 path of
     * {@link AutoCdcApplyOperator}): {@link Scd1Logic} then skips decoding and emitting rows.
     */
    default boolean wantsRows() {
        return true;
    }
}

package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;

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

    /**
     * Sends a source record the logic cannot apply to the quarantine table (A3/A4 unavailable
     * values: {@link QuarantineReason#UNAVAILABLE_VALUE}). The default throws: a receiver that can
     * meet such records overrides it.
     *
     * @throws IllegalStateException always, unless overridden
     */
    default void quarantine(RowData record, QuarantineReason reason, String detail) {
        throw new IllegalStateException(reason + ": " + detail);
    }
}

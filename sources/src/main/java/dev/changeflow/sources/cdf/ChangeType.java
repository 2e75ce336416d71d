package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.types.RowKind;

/**
 * The values of the {@code _change_type} column (F1), and the Flink row kind each one becomes in a
 * changelog read (G1): {@code insert} → {@code +I}, {@code update_preimage} → {@code -U}, {@code
 * update_postimage} → {@code +U}, {@code delete} → {@code -D}.
 */
@PublicEvolving
public enum ChangeType {
    INSERT("insert", RowKind.INSERT),
    UPDATE_PREIMAGE("update_preimage", RowKind.UPDATE_BEFORE),
    UPDATE_POSTIMAGE("update_postimage", RowKind.UPDATE_AFTER),
    DELETE("delete", RowKind.DELETE);

    private final String value;
    private final RowKind rowKind;

    ChangeType(String value, RowKind rowKind) {
        this.value = value;
        this.rowKind = rowKind;
    }

    /** The string stored in {@code _change_type}. */
    public String value() {
        return value;
    }

    /** The row kind of this change in a changelog read (G1). */
    public RowKind rowKind() {
        return rowKind;
    }
}

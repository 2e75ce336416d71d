package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;

/** The values of the {@code _change_type} column (F1). */
@PublicEvolving
public enum ChangeType {
    INSERT("insert"),
    UPDATE_PREIMAGE("update_preimage"),
    UPDATE_POSTIMAGE("update_postimage"),
    DELETE("delete");

    private final String value;

    ChangeType(String value) {
        this.value = value;
    }

    /** The string stored in {@code _change_type}. */
    public String value() {
        return value;
    }
}

package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Locale;

/** How a streaming table stores the applied change records (semantics.md A3, A4). */
@PublicEvolving
public enum ScdType {
    /** One row per live key: the latest upsert wins (A3). */
    TYPE_1,
    /** Full history: one row per version with {@code __START_AT} / {@code __END_AT} (A4). */
    TYPE_2;

    /** Parses {@code 1}, {@code 2}, {@code type_1}, {@code scd2}, ... (case-insensitive). */
    public static ScdType parse(String text) {
        String t =
                text.trim()
                        .toUpperCase(Locale.ROOT)
                        .replace("SCD", "")
                        .replace("TYPE", "")
                        .replace("_", "")
                        .trim();
        switch (t) {
            case "1":
                return TYPE_1;
            case "2":
                return TYPE_2;
            default:
                throw new IllegalArgumentException("scd-type must be 1 or 2, got '" + text + "'");
        }
    }
}

package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The wire format of change records (semantics.md A5). */
@PublicEvolving
public enum ChangeRecordFormat {
    /** One JSON object per line / Kafka value; columns by name; every record is an upsert. */
    JSON("json"),
    /**
     * Debezium's JSON envelope ({@code before}, {@code after}, {@code op}, {@code source}, {@code
     * ts_ms}).
     */
    DEBEZIUM_JSON("debezium-json");

    private final String configName;

    ChangeRecordFormat(String configName) {
        this.configName = configName;
    }

    /** The name used in configuration and statements ({@code json}, {@code debezium-json}). */
    public String configName() {
        return configName;
    }

    /**
     * Parses a configuration name (case-insensitive).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static ChangeRecordFormat fromConfigName(String name) {
        for (ChangeRecordFormat f : values()) {
            if (f.configName.equalsIgnoreCase(name.trim())) {
                return f;
            }
        }
        throw new IllegalArgumentException(
                "Unknown change-record format '"
                        + name
                        + "'; accepted: "
                        + Arrays.stream(values())
                                .map(ChangeRecordFormat::configName)
                                .collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return configName.toLowerCase(Locale.ROOT);
    }
}

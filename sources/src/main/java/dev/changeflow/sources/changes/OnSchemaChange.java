package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What a flow does with a record that has data fields its declared columns lack (option
 * {@code on-schema-change}, semantics.md A5). Envelope and metadata fields ({@code op},
 * {@code source.*}, {@code ts_ms}, the capture line's {@code key}/{@code topic}) are never data fields.
 */
@PublicEvolving
public enum OnSchemaChange {
    /** Default: fail the job with {@link ChangeRecordException} code {@code SCHEMA_CHANGED}. */
    FAIL("fail"),
    /** Send the record to the quarantine table with reason {@code SCHEMA_CHANGED}. */
    QUARANTINE("quarantine"),
    /**
     * Evolve the table additively. TODO(sinks/jobs): the Iceberg schema evolution is not wired yet;
     * until then the decoder treats it exactly like {@link #QUARANTINE}.
     */
    ADD_COLUMNS("add-columns");

    private final String configName;

    OnSchemaChange(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /** @throws IllegalArgumentException naming the accepted values */
    public static OnSchemaChange fromConfigName(String name) {
        for (OnSchemaChange v : values()) {
            if (v.configName.equalsIgnoreCase(name.trim())) {
                return v;
            }
        }
        throw new IllegalArgumentException(
                "Unknown on-schema-change '" + name + "'; accepted: "
                        + Arrays.stream(values()).map(OnSchemaChange::configName).collect(Collectors.joining(", ")));
    }
}

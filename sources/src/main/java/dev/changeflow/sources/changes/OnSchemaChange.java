package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What a flow does with a record that has data fields its declared columns lack (option {@code
 * on-schema-change}, semantics.md A5). Envelope and metadata fields ({@code op}, {@code source.*},
 * {@code ts_ms}, the capture line's {@code key}/{@code topic}) are never data fields.
 */
@PublicEvolving
public enum OnSchemaChange {
    /** Default: fail the job with {@link ChangeRecordException} code {@code SCHEMA_CHANGED}. */
    FAIL("fail"),
    /** Send the record to the quarantine table with reason {@code SCHEMA_CHANGED}. */
    QUARANTINE("quarantine"),
    /**
     * Evolve the table additively: the decoder throws {@link SchemaChangeException} at the first
     * record with new top-level fields (nothing of it applied); the launcher adds them to the
     * Iceberg table as nullable columns and resumes from the last checkpoint with the wider row
     * type, so rows written before the change read null there. Unknown members of nested objects
     * are quarantined as with {@link #QUARANTINE}.
     */
    ADD_COLUMNS("add-columns");

    private final String configName;

    OnSchemaChange(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /**
     * @throws IllegalArgumentException naming the accepted values
     */
    public static OnSchemaChange fromConfigName(String name) {
        for (OnSchemaChange v : values()) {
            if (v.configName.equalsIgnoreCase(name.trim())) {
                return v;
            }
        }
        throw new IllegalArgumentException(
                "Unknown on-schema-change '"
                        + name
                        + "'; accepted: "
                        + Arrays.stream(values())
                                .map(OnSchemaChange::configName)
                                .collect(Collectors.joining(", ")));
    }
}

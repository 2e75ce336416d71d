package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What a flow does with a malformed record (option {@code on-invalid-record}, semantics.md A2/A5).
 */
@PublicEvolving
public enum OnInvalidRecord {
    /** Default: send it to the quarantine table with its reason code; the job continues. */
    QUARANTINE("quarantine"),
    /** Fail the job with {@link ChangeRecordException} carrying the reason code. */
    FAIL("fail");

    private final String configName;

    OnInvalidRecord(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /**
     * @throws IllegalArgumentException naming the accepted values
     */
    public static OnInvalidRecord fromConfigName(String name) {
        for (OnInvalidRecord v : values()) {
            if (v.configName.equalsIgnoreCase(name.trim())) {
                return v;
            }
        }
        throw new IllegalArgumentException(
                "Unknown on-invalid-record '"
                        + name
                        + "'; accepted: "
                        + Arrays.stream(values())
                                .map(OnInvalidRecord::configName)
                                .collect(Collectors.joining(", ")));
    }
}

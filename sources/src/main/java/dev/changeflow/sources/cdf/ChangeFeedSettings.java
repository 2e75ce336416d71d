package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;

import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Change-feed options as read by {@link ChangeFeedOptions#resolve}: immutable, typed, every value
 * already accepted by its option. Serializable (values are strings, numbers, booleans and
 * durations).
 */
@PublicEvolving
public final class ChangeFeedSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String table;
    private final Map<String, String> raw;
    private final Map<String, Object> values;

    ChangeFeedSettings(String table, Map<String, String> raw, Map<String, Object> values) {
        this.table = table;
        this.raw = Collections.unmodifiableMap(new LinkedHashMap<>(raw));
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** The table's name the options were resolved for (as used in messages). */
    public String table() {
        return table;
    }

    /** Whether {@code option} was given. */
    public boolean contains(ConfigOption<?> option) {
        return values.containsKey(option.key());
    }

    /**
     * The value given for {@code option}, empty when it was not given; for {@code starting-version}
     * also empty when it is {@code latest} ({@link #startsAtLatest()}).
     */
    @SuppressWarnings("unchecked")
    public <T> Optional<T> getOptional(ConfigOption<T> option) {
        Object value = values.get(option.key());
        return value == null || ChangeFeedOptions.LATEST.equals(value)
                ? Optional.empty()
                : Optional.of((T) value);
    }

    /** The value given for {@code option}, else its default (null when it has none). */
    public <T> T get(ConfigOption<T> option) {
        return getOptional(option).orElse(option.hasDefaultValue() ? option.defaultValue() : null);
    }

    /** Whether {@code starting-version} is {@code latest} (F6). */
    public boolean startsAtLatest() {
        return ChangeFeedOptions.LATEST.equals(
                values.get(ChangeFeedOptions.STARTING_VERSION.key()));
    }

    /** The options as given (keys of the change feed only), for readers that resolve them later. */
    public Map<String, String> asMap() {
        return raw;
    }

    @Override
    public String toString() {
        return "ChangeFeedSettings{" + table + ", " + raw + "}";
    }
}

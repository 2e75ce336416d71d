package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.stream.ChangeFeedStreamOptions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The options of a change-feed read in Flink SQL ({@code OPTIONS} hints on {@code t$changes}, or
 * table properties): {@link #READ_CHANGE_FEED} plus the range options of {@link ChangeFeedOptions}
 * (F3, F4).
 */
@PublicEvolving
public final class ChangeFeedSqlOptions {

    public static final ConfigOption<Boolean> READ_CHANGE_FEED =
            ConfigOptions.key("read-change-feed")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Read the table's change data feed. Implied by the table name t$changes; on "
                                    + "the table t itself it is rejected (Flink fixes a table's columns before "
                                    + "hints apply), read t$changes instead.");

    /** Every option a change-feed read accepts, in documentation order. */
    public static final List<ConfigOption<?>> OPTIONS =
            List.of(
                    READ_CHANGE_FEED,
                    ChangeFeedOptions.STARTING_VERSION,
                    ChangeFeedOptions.ENDING_VERSION,
                    ChangeFeedOptions.STARTING_TIMESTAMP,
                    ChangeFeedOptions.ENDING_TIMESTAMP,
                    ChangeFeedOptions.TIMESTAMP_OUT_OF_RANGE_ENABLED,
                    ChangeFeedStreamOptions.MONITOR_INTERVAL,
                    ChangeFeedStreamOptions.MAX_FILES_PER_CYCLE,
                    ChangeFeedStreamOptions.MAX_BYTES_PER_CYCLE,
                    ChangeFeedStreamOptions.CONSUMER_ID);

    private ChangeFeedSqlOptions() {}

    /** True when {@code options} hold {@code 'read-change-feed'} = true (case-insensitive). */
    static boolean readsChangeFeed(String table, Map<String, String> options) {
        String value = options.get(READ_CHANGE_FEED.key());
        return value != null && parseBoolean(table, READ_CHANGE_FEED.key(), value);
    }

    /**
     * The change-feed options among {@code options}; every other key must be one of {@code
     * tableOptions} (the table's own properties and Iceberg's connector keys).
     *
     * @throws CdfException {@code INVALID_CDC_OPTIONS} for an unknown key, a boolean option that is
     *     not {@code true}/{@code false}, or {@code 'read-change-feed'='false'} on {@code
     *     t$changes}
     */
    static Map<String, String> changeFeedOptions(
            String table, Map<String, String> options, Set<String> tableOptions) {
        Set<String> known = new TreeSet<>();
        OPTIONS.forEach(o -> known.add(o.key()));
        Map<String, String> result = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (known.contains(e.getKey())) {
                result.put(e.getKey(), e.getValue());
            } else if (!tableOptions.contains(e.getKey())) {
                unknown.add(e.getKey());
            }
        }
        if (!unknown.isEmpty()) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                    String.format(
                            "Unknown option%s %s for the change feed of table %s. Accepted options: %s.",
                            unknown.size() > 1 ? "s" : "", quoted(unknown), table, quoted(known)));
        }
        if (result.containsKey(READ_CHANGE_FEED.key())
                && !parseBoolean(
                        table, READ_CHANGE_FEED.key(), result.get(READ_CHANGE_FEED.key()))) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                    String.format(
                            "'%s' = 'false' on the change feed of table %s. A $changes table always reads "
                                    + "the change feed; read the table without $changes for its rows.",
                            READ_CHANGE_FEED.key(), table));
        }
        String tolerance = ChangeFeedOptions.TIMESTAMP_OUT_OF_RANGE_ENABLED.key();
        if (result.containsKey(tolerance)) {
            parseBoolean(table, tolerance, result.get(tolerance));
        }
        return result;
    }

    /** True when an ending bound is given (the read is then bounded, design.md "Interfaces"). */
    static boolean hasEndingBound(Map<String, String> cdfOptions) {
        return cdfOptions.containsKey(ChangeFeedOptions.ENDING_VERSION.key())
                || cdfOptions.containsKey(ChangeFeedOptions.ENDING_TIMESTAMP.key());
    }

    private static boolean parseBoolean(String table, String key, String value) {
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new CdfException(
                        CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                        String.format(
                                "'%s' = '%s' for the change feed of table %s is not a boolean. Use 'true' or 'false'.",
                                key, value, table));
        }
    }

    private static String quoted(Set<String> keys) {
        StringBuilder b = new StringBuilder();
        for (String k : keys) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append('\'').append(k).append('\'');
        }
        return b.toString();
    }
}

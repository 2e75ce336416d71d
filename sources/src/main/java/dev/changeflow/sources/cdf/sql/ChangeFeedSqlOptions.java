package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.ChangeFeedSettings;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which {@link ChangeFeedOptions} a change-feed read in Flink SQL accepts ({@code OPTIONS} hints on
 * {@code t$changes}, or table properties): {@link ChangeFeedOptions#READ_CHANGE_FEED}, the range
 * options (F3, F4) and the streaming options except {@code bounded} (a SQL read is bounded by an
 * ending bound or the runtime mode). A changelog read ({@code t$changelog}) accepts {@link
 * #CHANGELOG_OPTIONS}. The options are read by {@link ChangeFeedOptions#resolve}.
 */
@PublicEvolving
public final class ChangeFeedSqlOptions {

    /** Every option a change-feed read accepts, in documentation order. */
    public static final List<ConfigOption<?>> OPTIONS =
            List.of(
                    ChangeFeedOptions.READ_CHANGE_FEED,
                    ChangeFeedOptions.STARTING_VERSION,
                    ChangeFeedOptions.ENDING_VERSION,
                    ChangeFeedOptions.STARTING_TIMESTAMP,
                    ChangeFeedOptions.ENDING_TIMESTAMP,
                    ChangeFeedOptions.TIMESTAMP_OUT_OF_RANGE_ENABLED,
                    ChangeFeedOptions.MONITOR_INTERVAL,
                    ChangeFeedOptions.MAX_FILES_PER_CYCLE,
                    ChangeFeedOptions.MAX_BYTES_PER_CYCLE,
                    ChangeFeedOptions.DELETE_FILE_CACHE_SIZE,
                    ChangeFeedOptions.CONSUMER_ID);

    /**
     * Every option a changelog read ({@code t$changelog}, G1) accepts, in documentation order: the
     * streaming change feed's, with {@code start-mode} and {@code bounded}; no ending bound.
     */
    public static final List<ConfigOption<?>> CHANGELOG_OPTIONS =
            List.of(
                    ChangeFeedOptions.STARTING_VERSION,
                    ChangeFeedOptions.STARTING_TIMESTAMP,
                    ChangeFeedOptions.START_MODE,
                    ChangeFeedOptions.MONITOR_INTERVAL,
                    ChangeFeedOptions.MAX_FILES_PER_CYCLE,
                    ChangeFeedOptions.MAX_BYTES_PER_CYCLE,
                    ChangeFeedOptions.DELETE_FILE_CACHE_SIZE,
                    ChangeFeedOptions.BOUNDED,
                    ChangeFeedOptions.CONSUMER_ID);

    private ChangeFeedSqlOptions() {}

    /**
     * True when {@code options} hold {@code 'read-change-feed'} = true (case-insensitive).
     *
     * @throws CdfException {@code INVALID_CDC_OPTIONS} when its value is not a boolean
     */
    static boolean readsChangeFeed(String table, Map<String, String> options) {
        return ChangeFeedOptions.resolve(
                        table,
                        options,
                        List.of(ChangeFeedOptions.READ_CHANGE_FEED),
                        options.keySet())
                .get(ChangeFeedOptions.READ_CHANGE_FEED);
    }

    /**
     * The change-feed options among {@code options}, resolved; every other key must be one of
     * {@code tableOptions} (the table's own properties and Iceberg's connector keys).
     *
     * @throws CdfException {@code INVALID_CDC_OPTIONS} for an unknown key, a value its option does
     *     not accept, or {@code 'read-change-feed'='false'} on {@code t$changes}
     */
    static ChangeFeedSettings changeFeedOptions(
            String table, Map<String, String> options, Set<String> tableOptions) {
        ChangeFeedSettings settings =
                ChangeFeedOptions.resolve(table, options, OPTIONS, tableOptions);
        if (settings.contains(ChangeFeedOptions.READ_CHANGE_FEED)
                && !settings.get(ChangeFeedOptions.READ_CHANGE_FEED)) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                    String.format(
                            "'%s' = 'false' on the change feed of table %s. A $changes table always reads "
                                    + "the change feed; read the table without $changes for its rows.",
                            ChangeFeedOptions.READ_CHANGE_FEED.key(), table));
        }
        return settings;
    }

    /** True when an ending bound is given (the read is then bounded, design.md "Interfaces"). */
    static boolean hasEndingBound(ChangeFeedSettings settings) {
        return settings.contains(ChangeFeedOptions.ENDING_VERSION)
                || settings.contains(ChangeFeedOptions.ENDING_TIMESTAMP);
    }
}

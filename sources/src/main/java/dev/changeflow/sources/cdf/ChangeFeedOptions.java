package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** Options of the change data feed (F3, F4), with the kebab-case keys used by SQL hints. */
@PublicEvolving
public final class ChangeFeedOptions {

    public static final ConfigOption<Long> STARTING_VERSION =
            ConfigOptions.key("starting-version")
                    .longType()
                    .noDefaultValue()
                    .withDescription(
                            "First version (Iceberg snapshot sequence number on main) to read, inclusive. "
                                    + "A version between two commits starts at the next commit.");

    public static final ConfigOption<String> STARTING_TIMESTAMP =
            ConfigOptions.key("starting-timestamp")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Read from the first commit at or after this time: "
                                    + "yyyy-MM-dd[ HH:mm:ss[.SSS]] with an optional offset; no offset means UTC.");

    public static final ConfigOption<Long> ENDING_VERSION =
            ConfigOptions.key("ending-version")
                    .longType()
                    .noDefaultValue()
                    .withDescription(
                            "Last version to read, inclusive. Default: the latest version.");

    public static final ConfigOption<String> ENDING_TIMESTAMP =
            ConfigOptions.key("ending-timestamp")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Read up to the last commit at or before this time (same format).");

    public static final ConfigOption<Boolean> TIMESTAMP_OUT_OF_RANGE_ENABLED =
            ConfigOptions.key("timestamp-out-of-range.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "When true, a start after the latest commit gives an empty result and an end "
                                    + "after the latest commit reads to the latest version, instead of failing.");

    /** Table property of changeflow's own tables: equality-delete files hold complete rows. */
    public static final String EQ_DELETES_CARRY_ROWS = "changeflow.eq-deletes-carry-rows";

    private ChangeFeedOptions() {}
}

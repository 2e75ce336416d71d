package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.ChangeFeedOptions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

import java.time.Duration;

/**
 * Options of the streaming change feed (semantics.md F6, F7) beyond the bounds of {@link
 * ChangeFeedOptions}. In the streaming feed {@code starting-version} also accepts {@code latest};
 * {@code starting-timestamp} is as in the batch feed; no starting bound means the current snapshot
 * as {@code insert} rows, then every later change.
 */
@PublicEvolving
public final class ChangeFeedStreamOptions {

    /** The {@code starting-version} value that starts after the latest commit (F6). */
    public static final String LATEST = "latest";

    public static final ConfigOption<Duration> MONITOR_INTERVAL =
            ConfigOptions.key("monitor-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription(
                            "How often the stream looks for new versions of the table's main branch.");

    public static final ConfigOption<Integer> MAX_FILES_PER_CYCLE =
            ConfigOptions.key("max-files-per-cycle")
                    .intType()
                    .defaultValue(Integer.MAX_VALUE)
                    .withDescription(
                            "Most data and delete files (added or removed) admitted per planning cycle. Whole "
                                    + "versions are admitted: a larger version is admitted alone, a deferred "
                                    + "version blocks later ones. The initial snapshot may be split.");

    public static final ConfigOption<Long> MAX_BYTES_PER_CYCLE =
            ConfigOptions.key("max-bytes-per-cycle")
                    .longType()
                    .defaultValue(Long.MAX_VALUE)
                    .withDescription(
                            "Most bytes of data and delete files admitted per planning cycle, whole versions "
                                    + "as for max-files-per-cycle.");

    public static final ConfigOption<Boolean> BOUNDED =
            ConfigOptions.key("bounded")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Available-now: read up to the version that is latest when the stream is built, "
                                    + "then finish.");

    public static final ConfigOption<String> CONSUMER_ID =
            ConfigOptions.key("consumer-id")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Registers the stream as a consumer of the table (F7), so that changeflow's "
                                    + "snapshot expiry keeps the versions it still needs.");

    private ChangeFeedStreamOptions() {}
}

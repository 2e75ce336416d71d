package dev.changeflow.sources.cdf;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ChangeFeedOptions#resolve}: the one reader of change-feed options. */
class ChangeFeedOptionsTest {

    @Test
    void typedValuesAndDefaults() {
        ChangeFeedSettings s =
                ChangeFeedOptions.resolve(
                        "db.t",
                        Map.of(
                                "starting-version", " 5 ",
                                "monitor-interval", "500 ms",
                                "max-files-per-cycle", "3",
                                "bounded", "TRUE",
                                "consumer-id", "gold"));
        assertThat(s.get(ChangeFeedOptions.STARTING_VERSION)).isEqualTo(5L);
        assertThat(s.get(ChangeFeedOptions.MONITOR_INTERVAL)).isEqualTo(Duration.ofMillis(500));
        assertThat(s.get(ChangeFeedOptions.MAX_FILES_PER_CYCLE)).isEqualTo(3);
        assertThat(s.get(ChangeFeedOptions.BOUNDED)).isTrue();
        assertThat(s.get(ChangeFeedOptions.CONSUMER_ID)).isEqualTo("gold");
        assertThat(s.get(ChangeFeedOptions.MAX_BYTES_PER_CYCLE)).isEqualTo(Long.MAX_VALUE);
        assertThat(s.get(ChangeFeedOptions.TIMESTAMP_OUT_OF_RANGE_ENABLED)).isFalse();
        assertThat(s.get(ChangeFeedOptions.ENDING_VERSION)).isNull();
        assertThat(s.contains(ChangeFeedOptions.ENDING_VERSION)).isFalse();
        assertThat(s.startsAtLatest()).isFalse();
    }

    @Test
    void latestIsAStartingVersion() {
        ChangeFeedSettings s =
                ChangeFeedOptions.resolve("db.t", Map.of("starting-version", "Latest"));
        assertThat(s.startsAtLatest()).isTrue();
        assertThat(s.getOptional(ChangeFeedOptions.STARTING_VERSION)).isEqualTo(Optional.empty());
        assertThat(s.asMap()).isEqualTo(Map.of("starting-version", "Latest"));
    }

    @Test
    void unknownKeysAndBadValuesNameTheOptionTheValueAndWhatIsAllowed() {
        assertThatThrownBy(
                        () ->
                                ChangeFeedOptions.resolve(
                                        "db.t",
                                        Map.of("starting-version", "1", "ending-versoin", "2")))
                .isInstanceOf(CdfException.class)
                .hasMessageStartingWith(
                        "INVALID_CDC_OPTIONS: Unknown option 'ending-versoin' for the change feed of table db.t. "
                                + "Accepted options: 'bounded', 'consumer-id', 'delete-file-cache-size', 'ending-timestamp', ");
        assertThatThrownBy(
                        () -> ChangeFeedOptions.resolve("db.t", Map.of("max-files-per-cycle", "x")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'max-files-per-cycle' = 'x' for the change feed of table db.t is "
                                + "not a number of files (an integer from 1 to 2147483647).");
        assertThatThrownBy(
                        () ->
                                ChangeFeedOptions.resolve(
                                        "db.t", Map.of("monitor-interval", "often")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'monitor-interval' = 'often' for the change feed of table db.t is "
                                + "not a duration (for example '10 s' or '500 ms').");
        assertThatThrownBy(
                        () -> ChangeFeedOptions.resolve("db.t", Map.of("starting-version", "soon")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'starting-version' = 'soon' for the change feed of table db.t is "
                                + "not a version or 'latest'. Versions are integers >= 0; 'latest' (streaming "
                                + "reads) starts after the latest commit.");
    }

    /** Only the accepted options are read; ignored keys are left out, others fail. */
    @Test
    void acceptedAndIgnoredKeys() {
        ChangeFeedSettings s =
                ChangeFeedOptions.resolve(
                        "db.t",
                        Map.of("ending-version", "3", "write.format.default", "parquet"),
                        List.of(ChangeFeedOptions.ENDING_VERSION),
                        Set.of("write.format.default"));
        assertThat(s.asMap()).isEqualTo(Map.of("ending-version", "3"));
        assertThatThrownBy(
                        () ->
                                ChangeFeedOptions.resolve(
                                        "db.t",
                                        Map.of("bounded", "true"),
                                        List.of(ChangeFeedOptions.ENDING_VERSION),
                                        Set.of()))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Unknown option 'bounded' for the change feed of table db.t. "
                                + "Accepted options: 'ending-version'.");
    }

    /** Every unknown key is named at once; a bad value of a declared option keeps its wording. */
    @Test
    void severalUnknownKeysAreNamedTogether() {
        assertThatThrownBy(
                        () ->
                                ChangeFeedOptions.resolve(
                                        "db.t",
                                        Map.of("ending-versoin", "2", "boundd", "true"),
                                        List.of(ChangeFeedOptions.ENDING_VERSION),
                                        Set.of()))
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Unknown options 'boundd', 'ending-versoin' for the change feed of "
                                + "table db.t. Accepted options: 'ending-version'.");
        assertThatThrownBy(
                        () ->
                                ChangeFeedOptions.resolve(
                                        "db.t", Map.of("max-bytes-per-cycle", "1 GB")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'max-bytes-per-cycle' = '1 GB' for the change feed of table db.t is "
                                + "not a number of bytes (an integer >= 1).");
    }
}

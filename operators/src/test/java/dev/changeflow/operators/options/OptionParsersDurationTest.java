package dev.changeflow.operators.options;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link OptionParsers#duration(String, String)}: the accepted forms, and the errors for text that
 * is no duration and for a duration too long to be used (a value past {@code Long} or one that
 * overflows in milliseconds was an {@code ArithmeticException} where it was used).
 */
class OptionParsersDurationTest {

    @Test
    void acceptsUnitsBareSecondsAndIso() {
        assertThat(OptionParsers.duration("500ms", "k")).isEqualTo(Duration.ofMillis(500));
        assertThat(OptionParsers.duration("90", "k")).isEqualTo(Duration.ofSeconds(90));
        assertThat(OptionParsers.duration("10 min", "k")).isEqualTo(Duration.ofMinutes(10));
        assertThat(OptionParsers.duration("PT2S", "k")).isEqualTo(Duration.ofSeconds(2));
        assertThat(OptionParsers.duration("36500d", "k")).isEqualTo(Duration.ofDays(36_500));
    }

    @Test
    void refusesTextThatIsNoDuration() {
        assertThatThrownBy(() -> OptionParsers.duration("soon", "maintenance-interval"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "maintenance-interval: not a duration: 'soon' (e.g. 2s, 500ms, 10min, 2d)");
    }

    @Test
    void refusesDurationsLongerThanAHundredYears() {
        for (String tooLong :
                new String[] {
                    "36501d",
                    "1000000000000d",
                    "1000000000000000d",
                    "99999999999999999999s",
                    "PT9999999999999999H",
                    "P999999999999D"
                }) {
            assertThatThrownBy(() -> OptionParsers.duration(tooLong, "--older-than"))
                    .as(tooLong)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "--older-than: '"
                                    + tooLong
                                    + "' is longer than 36500 days (100 years)");
        }
    }
}

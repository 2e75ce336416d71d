package dev.changeflow.jobs.cli;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExpireCommandTest {
    private static final Instant NOW = Instant.parse("2026-11-30T08:00:00Z");

    @Test
    void olderThanTakesAnAgeOrATime() {
        assertThat(ExpireCommand.instant("5d", NOW))
                .isEqualTo(Instant.parse("2026-11-25T08:00:00Z"));
        assertThat(ExpireCommand.instant("12h", NOW))
                .isEqualTo(Instant.parse("2026-11-29T20:00:00Z"));
        assertThat(ExpireCommand.instant("0s", NOW)).isEqualTo(NOW);
        assertThat(ExpireCommand.instant("PT90M", NOW))
                .isEqualTo(Instant.parse("2026-11-30T06:30:00Z"));
        assertThat(ExpireCommand.instant("2026-11-01", NOW))
                .isEqualTo(Instant.parse("2026-11-01T00:00:00Z"));
        assertThat(ExpireCommand.instant("2026-11-01 12:30:00", NOW))
                .isEqualTo(Instant.parse("2026-11-01T12:30:00Z"));
        assertThat(ExpireCommand.instant("2026-11-01T12:30:00+02:00", NOW))
                .isEqualTo(Instant.parse("2026-11-01T10:30:00Z"));
        assertThatThrownBy(() -> ExpireCommand.instant("last week", NOW))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--older-than takes an age (7d, 12h, PT90M) or a time (yyyy-MM-dd[ HH:mm:ss] UTC, or an ISO "
                                + "instant), got 'last week'");
    }
}

package dev.changeflow.jobs.cli;

import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The flag form of {@code gold}: {@code --maintenance} and {@code --maintenance-option
 * OPTION=VALUE} give the Gold tables' in-job maintenance (M1, M2), checked as the flows file's
 * {@code maintenance*} options; a local run refuses it (it ends at Silver's latest version).
 */
class GoldCommandMaintenanceTest {

    private static GoldCommand parse(String... args) {
        GoldCommand c = new GoldCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void flagsGiveTheMaintenanceOptions() {
        assertThat(parse("--source", "silver.t").maintenance())
                .isEqualTo(TableMaintenanceOptions.off());
        TableMaintenanceOptions on =
                parse(
                                "--source",
                                "silver.t",
                                "--maintenance",
                                "--maintenance-option",
                                "maintenance-commit-count=7",
                                "--maintenance-option",
                                "maintenance-expire-older-than=3d")
                        .maintenance();
        assertThat(on)
                .isEqualTo(
                        TableMaintenanceOptions.builder()
                                .enabled(true)
                                .commitCount(7)
                                .expireOlderThan(Duration.ofDays(3))
                                .build());
    }

    @Test
    void badMaintenanceFlagsAreNamed() {
        assertThatThrownBy(
                        () ->
                                parse("--maintenance", "--maintenance-option", "commit-count=7")
                                        .maintenance())
                .hasMessageStartingWith(
                        "--maintenance-option: unknown maintenance option 'commit-count' (known:"
                                + " [maintenance, maintenance-commit-count,");
        assertThatThrownBy(
                        () ->
                                parse(
                                                "--maintenance",
                                                "--maintenance-option",
                                                "maintenance-retain-last")
                                        .maintenance())
                .hasMessage(
                        "--maintenance-option takes OPTION=VALUE, got 'maintenance-retain-last'");
        assertThatThrownBy(
                        () ->
                                parse(
                                                "--maintenance",
                                                "--maintenance-option",
                                                "maintenance-manifest-count=-1")
                                        .maintenance())
                .hasMessage(
                        "--maintenance-option: maintenance-manifest-count must be a whole number of"
                                + " data manifests from 0 (off) to 2147483647, got '-1'");
    }

    /** M1: maintenance options without {@code --maintenance} would do nothing: refused. */
    @Test
    void maintenanceOptionsWithoutTheFlagAreRefused() {
        assertThatThrownBy(
                        () ->
                                parse("--maintenance-option", "maintenance-expire-older-than=3d")
                                        .maintenance())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--maintenance-option: 'maintenance-expire-older-than' tunes in-job"
                                + " maintenance, which is off unless turned on (docs/semantics.md"
                                + " M1); add --maintenance");
    }

    @Test
    void aLocalRunRefusesMaintenance() {
        assertThatThrownBy(
                        () ->
                                parse(
                                                "--source",
                                                "silver.t",
                                                "--upsert-table",
                                                "gold.t",
                                                "--maintenance")
                                        .call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        // coded since issue #16's fresh-user findings (expectation changed on
                        // purpose: every flag error of gold carries a code)
                        "INVALID_OPTION: --maintenance needs --cluster: a local run ends at"
                                + " Silver's latest version; maintain the Gold tables with"
                                + " bin/changeflow maintain");
    }
}

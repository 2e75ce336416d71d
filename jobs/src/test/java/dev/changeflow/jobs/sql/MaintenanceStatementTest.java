package dev.changeflow.jobs.sql;

import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The maintenance statements of {@code changeflow sql}: the three forms and every error. */
class MaintenanceStatementTest {

    private static MaintenanceStatement parse(String text) {
        return MaintenanceStatement.parse(text, "statement 1").orElseThrow();
    }

    @Test
    void theThreeFormsInAnyCase() {
        assertThat(parse("OPTIMIZE shop.items"))
                .isEqualTo(
                        new MaintenanceStatement(
                                MaintenanceStatement.Kind.OPTIMIZE,
                                TableIdentifier.of("shop", "items"),
                                null));
        assertThat(parse("reorg table LIVE.items apply ( purge ) ;"))
                .isEqualTo(
                        new MaintenanceStatement(
                                MaintenanceStatement.Kind.PURGE,
                                TableIdentifier.of("items"),
                                null));
        assertThat(parse("VACUUM `my db`.items"))
                .isEqualTo(
                        new MaintenanceStatement(
                                MaintenanceStatement.Kind.VACUUM,
                                TableIdentifier.of("my db", "items"),
                                Duration.ofHours(168)));
        assertThat(parse("vacuum a.b.items retain 1 hour").retain()).isEqualTo(Duration.ofHours(1));
        assertThat(parse("vacuum a.b.items retain 1 hour").table())
                .isEqualTo(TableIdentifier.of("a", "b", "items"));
    }

    @Test
    void otherStatementsAreLeftToFlinkSql() {
        assertThat(MaintenanceStatement.parse("SELECT * FROM t", "statement 1"))
                .isEqualTo(Optional.empty());
        assertThat(MaintenanceStatement.parse("INSERT INTO optimize VALUES (1)", "statement 1"))
                .isEqualTo(Optional.empty());
    }

    @Test
    void errorsNameTheirPlace() {
        assertError(
                "OPTIMIZE",
                "statement 1:1:9: SYNTAX_ERROR: expected a table name after OPTIMIZE, found end of file");
        assertError(
                "OPTIMIZE t ZORDER BY (a)",
                "statement 1:1:12: UNSUPPORTED_STATEMENT: not supported by changeflow yet: OPTIMIZE ... ZORDER"
                        + " (OPTIMIZE compacts the whole table: give its name only)");
        assertError(
                "REORG t APPLY (PURGE)",
                "statement 1:1:7: SYNTAX_ERROR: expected TABLE after REORG, found 't'");
        assertError(
                "REORG TABLE t APPLY PURGE",
                "statement 1:1:21: SYNTAX_ERROR: expected '(' after APPLY, found 'PURGE'");
        assertError(
                "REORG TABLE t APPLY (PURGE",
                "statement 1:1:27: SYNTAX_ERROR: expected ')' after APPLY (PURGE, found end of file");
        assertError(
                "VACUUM t RETAIN 24",
                "statement 1:1:19: SYNTAX_ERROR: expected HOURS after RETAIN 24, found end of file");
        assertError(
                "VACUUM t DRY RUN",
                "statement 1:1:10: UNSUPPORTED_STATEMENT: not supported by changeflow yet: VACUUM ... DRY"
                        + " (VACUUM t [RETAIN n HOURS])");
        assertError(
                "OPTIMIZE t; OPTIMIZE u",
                "statement 1:1:13: SYNTAX_ERROR: expected the end of the statement, found 'OPTIMIZE'");
    }

    /** M2: VACUUM keeps at least 1 hour of files; a RETAIN out of range names the range. */
    @Test
    void retainOutOfRangeIsRefusedNamingTheLimits() {
        String range =
                " HOURS is out of range: VACUUM keeps files modified in the last 1 to 876000 hours"
                        + " (younger files may be a running job's, not committed yet; the default is"
                        + " 168)";
        assertError(
                "VACUUM t RETAIN 0 HOURS", "statement 1:1:17: INVALID_RETENTION: RETAIN 0" + range);
        assertError(
                "VACUUM t RETAIN 99999999999 HOURS",
                "statement 1:1:17: INVALID_RETENTION: RETAIN 99999999999" + range);
        assertError(
                "VACUUM t RETAIN 99999999999999999999999 HOURS",
                "statement 1:1:17: INVALID_RETENTION: RETAIN 99999999999999999999999" + range);
        assertError(
                "VACUUM t RETAIN 876001 HOURS",
                "statement 1:1:17: INVALID_RETENTION: RETAIN 876001" + range);
        assertThat(parse("VACUUM t RETAIN 876000 HOURS").retain())
                .isEqualTo(Duration.ofHours(876_000));
        assertThat(parse("VACUUM t RETAIN 001 HOURS").retain()).isEqualTo(Duration.ofHours(1));
        assertThatThrownBy(() -> MaintenanceStatement.parse("VACUUM t RETAIN 0 HOURS", "s"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(SqlException.Code.INVALID_RETENTION));
    }

    /** A maintenance keyword one edit away is a syntax error with a hint, not Flink's parser's. */
    @Test
    void aMisspeltMaintenanceKeywordSuggestsTheKeyword() {
        assertError(
                "OPTIMISE t",
                "statement 1:1:1: SYNTAX_ERROR: expected a Flink SQL statement or OPTIMIZE, REORG"
                        + " TABLE or VACUUM, found 'OPTIMISE' (did you mean OPTIMIZE?)");
        assertError(
                "vacum shop.items RETAIN 2 HOURS",
                "statement 1:1:1: SYNTAX_ERROR: expected a Flink SQL statement or OPTIMIZE, REORG"
                        + " TABLE or VACUUM, found 'vacum' (did you mean VACUUM?)");
        assertError(
                "REROG TABLE t APPLY (PURGE)",
                "statement 1:1:1: SYNTAX_ERROR: expected a Flink SQL statement or OPTIMIZE, REORG"
                        + " TABLE or VACUUM, found 'REROG' (did you mean REORG?)");
        assertThat(MaintenanceStatement.parse("OPTIMUM t", "statement 1"))
                .as("two edits away: left to Flink SQL")
                .isEmpty();
    }

    private static void assertError(String text, String message) {
        assertThatThrownBy(() -> MaintenanceStatement.parse(text, "statement 1"))
                .isInstanceOf(SqlException.class)
                .hasMessage(message);
    }
}

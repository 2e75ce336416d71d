package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link TableChangesRewrite}: the seeds' {@code table_changes} forms and malformed calls. */
class TableChangesRewriteTest {

    @Test
    void versionsAndTimestampsFromTheSeeds() {
        assertThat(TableChangesRewrite.rewrite("SELECT * FROM table_changes('tableName', 0, 10)"))
                .isEqualTo(
                        "SELECT * FROM `tableName$changes` /*+ OPTIONS('starting-version'='0', 'ending-version'='10') */");
        assertThat(TableChangesRewrite.rewrite("SELECT * FROM table_changes('silver.pedidos', 5);"))
                .isEqualTo(
                        "SELECT * FROM `silver`.`pedidos$changes` /*+ OPTIONS('starting-version'='5') */;");
        assertThat(
                        TableChangesRewrite.rewrite(
                                "SELECT * FROM table_changes('silver.pedidos', '2026-05-01');"))
                .isEqualTo(
                        "SELECT * FROM `silver`.`pedidos$changes` /*+ OPTIONS('starting-timestamp'='2026-05-01') */;");
        assertThat(
                        TableChangesRewrite.rewrite(
                                "SELECT * FROM table_changes('tableName', '2021-04-21 05:45:46', '2021-05-21 12:00:00')"))
                .isEqualTo(
                        "SELECT * FROM `tableName$changes` /*+ OPTIONS('starting-timestamp'='2021-04-21 05:45:46', "
                                + "'ending-timestamp'='2021-05-21 12:00:00') */");
        assertThat(
                        TableChangesRewrite.rewrite(
                                "SELECT * FROM table_changes('`schema`.`dotted.tableName`', '2021-04-21 06:45:46', 7)"))
                .isEqualTo(
                        "SELECT * FROM `schema`.`dotted.tableName$changes` /*+ OPTIONS("
                                + "'starting-timestamp'='2021-04-21 06:45:46', 'ending-version'='7') */");
    }

    @Test
    void catalogNamesCaseSpacingAndSeveralCalls() {
        assertThat(
                        TableChangesRewrite.rewrite(
                                "select a.id from TABLE_CHANGES ( 'c.db.t' , 1 ) a join Table_Changes('db.u',2,3) b on a.id = b.id"))
                .isEqualTo(
                        "select a.id from `c`.`db`.`t$changes` /*+ OPTIONS('starting-version'='1') */ a join "
                                + "`db`.`u$changes` /*+ OPTIONS('starting-version'='2', 'ending-version'='3') */ b on a.id = b.id");
        assertThat(TableChangesRewrite.rewrite("SELECT * FROM table_changes('db.`odd``name`', +4)"))
                .isEqualTo(
                        "SELECT * FROM `db`.`odd``name$changes` /*+ OPTIONS('starting-version'='4') */");
    }

    @Test
    void leavesLiteralsCommentsIdentifiersAndOtherFunctionsAlone() {
        String sql =
                "SELECT 'table_changes(1)', `table_changes`, my_table_changes(1) -- table_changes('x', 1)\n"
                        + "/* table_changes('y', 2) */ FROM t";
        assertThat(TableChangesRewrite.rewrite(sql)).isEqualTo(sql);
        assertThat(TableChangesRewrite.rewrite("SELECT * FROM db.t"))
                .isEqualTo("SELECT * FROM db.t");
    }

    @Test
    void negativeVersionsPassThroughToTheRangeCheck() {
        assertThat(TableChangesRewrite.rewrite("SELECT * FROM table_changes('t', -1)"))
                .isEqualTo("SELECT * FROM `t$changes` /*+ OPTIONS('starting-version'='-1') */");
    }

    @Test
    void malformedCallsFailWithInvalidCdcOptions() {
        assertThatThrownBy(() -> TableChangesRewrite.rewrite("SELECT * FROM table_changes('db.t')"))
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Cannot read table_changes('db.t')... at position 14: it takes a "
                                + "table name and one or two bounds, got 0 bound(s). Use table_changes('db.t', start[, end]) "
                                + "where start and end are versions (integers, e.g. 5) or timestamps in quotes (e.g. "
                                + "'2026-05-01 12:00:00').");
        assertThat(code("SELECT * FROM table_changes(db.t, 1)"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThat(code("SELECT * FROM table_changes('db.t', 1, 2, 3)"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThat(code("SELECT * FROM table_changes('db.t', 1.5)"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThat(code("SELECT * FROM table_changes('db.t', v)"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThat(code("SELECT * FROM table_changes('db..t', 1)"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThat(code("SELECT * FROM table_changes('a.b.c.d', 1)"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThat(code("SELECT * FROM table_changes('db.t', '2026-01-01"))
                .isEqualTo(CdfException.ErrorCode.INVALID_CDC_OPTIONS);
        assertThatThrownBy(
                        () ->
                                TableChangesRewrite.rewrite(
                                        "SELECT * FROM table_changes('`db.t', 1)"))
                .hasMessageContaining("the table name '`db.t' has an unclosed backquote");
    }

    private static CdfException.ErrorCode code(String sql) {
        try {
            TableChangesRewrite.rewrite(sql);
        } catch (CdfException e) {
            return e.code();
        }
        throw new AssertionError("no error for " + sql);
    }
}

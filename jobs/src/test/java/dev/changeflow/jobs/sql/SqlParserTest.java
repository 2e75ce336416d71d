package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.sql.SqlStatement.AlterSchedule;
import dev.changeflow.jobs.sql.SqlStatement.AutoCdc;
import dev.changeflow.jobs.sql.SqlStatement.Column;
import dev.changeflow.jobs.sql.SqlStatement.Constraint;
import dev.changeflow.jobs.sql.SqlStatement.CreateFlow;
import dev.changeflow.jobs.sql.SqlStatement.CreateStreamingTable;
import dev.changeflow.jobs.sql.SqlStatement.CreateView;
import dev.changeflow.jobs.sql.SqlStatement.Flow;
import dev.changeflow.jobs.sql.SqlStatement.Named;
import dev.changeflow.jobs.sql.SqlStatement.ReadFiles;
import dev.changeflow.jobs.sql.SqlStatement.Schedule;
import dev.changeflow.jobs.sql.SqlStatement.Use;
import dev.changeflow.operators.Expectation.OnViolation;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The statements of a pipeline file, clause by clause, and every error with its place. */
class SqlParserTest {
    private static final String F = "p.sql";

    private static List<SqlStatement> parse(String text) {
        return SqlParser.parse(text, F);
    }

    private static SqlStatement one(String text) {
        List<SqlStatement> all = parse(text);
        assertThat(all).hasSize(1);
        return all.get(0);
    }

    private static AutoCdc cdc(String clauses) {
        CreateFlow f =
                (CreateFlow) one("CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(v) " + clauses);
        return f.flow().autoCdc();
    }

    private static SqlPosition at(int line, int column) {
        return new SqlPosition(F, line, column);
    }

    private static void fails(String text, SqlException.Code code, String message) {
        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(SqlException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((SqlException) e).code()).isEqualTo(code));
    }

    // ------------------------------------------------------------------------ statements

    @Test
    void setTakesAnyKeyAndValueAndUnquotesSingleLiterals() {
        assertThat(parse("SET checkpoint-interval = 2s; SET 'parallelism' = '3';"))
                .containsExactly(
                        new SqlStatement.Set(at(1, 1), "checkpoint-interval", "2s"),
                        new SqlStatement.Set(at(1, 31), "parallelism", "3"));
        assertThat(one("set catalog.uri = 'http://h:8181/x'"))
                .isEqualTo(new SqlStatement.Set(at(1, 1), "catalog.uri", "http://h:8181/x"));
    }

    @Test
    void useSetsCatalogOrNamespace() {
        assertThat(parse("USE CATALOG main; USE SCHEMA silver; USE DATABASE a.b; USE bronze"))
                .containsExactly(
                        new Use(at(1, 1), "main", null),
                        new Use(at(1, 19), null, "silver"),
                        new Use(at(1, 38), null, "a.b"),
                        new Use(at(1, 56), null, "bronze"));
    }

    @Test
    void streamingTableWithoutQueryDeclaresColumnsPartitionsCommentAndProperties() {
        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE silver.`accounts`\n"
                                        + "  (aid INT NOT NULL COMMENT 'key', at TIMESTAMP(6), amount DECIMAL(12,"
                                        + " 2),\n"
                                        + "   tags ARRAY<STRING>, pos ROW<x INT, y INT> NOT NULL)\n"
                                        + "  COMMENT \"accounts\"\n"
                                        + "  PARTITIONED BY (bid, bucket(16, aid), days(at))\n"
                                        + "  TBLPROPERTIES ('changeflow.apply-buffer-keys' = '1000',"
                                        + " delta.enableChangeDataFeed = true, 'n' = -1);");
        assertThat(t)
                .isEqualTo(
                        new CreateStreamingTable(
                                at(1, 1),
                                "silver.accounts",
                                List.of(
                                        new Column("aid", "INT", true, "key", at(2, 8)),
                                        new Column("at", "TIMESTAMP(6)", false, null, at(2, 39)),
                                        new Column(
                                                "amount", "DECIMAL(12, 2)", false, null, at(2, 60)),
                                        new Column("tags", "ARRAY<STRING>", false, null, at(3, 9)),
                                        new Column(
                                                "pos", "ROW<x INT, y INT>", true, null, at(3, 28))),
                                List.of("bid", "bucket(16, aid)", "days(at)"),
                                "accounts",
                                Map.of(
                                        "changeflow.apply-buffer-keys", "1000",
                                        "delta.enableChangeDataFeed", "true",
                                        "n", "-1"),
                                null));
        assertThat(t.properties().keySet())
                .containsExactly("changeflow.apply-buffer-keys", "delta.enableChangeDataFeed", "n");
        assertThat(one("CREATE STREAMING TABLE IF NOT EXISTS t"))
                .isEqualTo(
                        new CreateStreamingTable(
                                at(1, 1), "t", List.of(), List.of(), null, Map.of(), null));
    }

    @Test
    void constraintsExpectWithEachViolationPolicy() {
        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE t (\n"
                                        + "  id INT NOT NULL,\n"
                                        + "  CONSTRAINT valid_v EXPECT (v >= 0),\n"
                                        + "  CONSTRAINT has_name EXPECT (name IS NOT NULL AND"
                                        + " (length(name) > 0)) ON VIOLATION DROP ROW,\n"
                                        + "  constraint small expect (v < 100 OR op = \"x\") on"
                                        + " violation fail update\n"
                                        + ") FLOW AUTO CDC FROM STREAM(s) KEYS (id) SEQUENCE BY"
                                        + " seq;");
        assertThat(t.columns()).containsExactly(new Column("id", "INT", true, null, at(2, 6)));
        assertThat(t.constraints())
                .containsExactly(
                        new Constraint(at(3, 3), "valid_v", "v >= 0", OnViolation.KEEP),
                        new Constraint(
                                at(4, 3),
                                "has_name",
                                "name IS NOT NULL AND (length(name) > 0)",
                                OnViolation.DROP_ROW),
                        new Constraint(
                                at(5, 3), "small", "v < 100 OR op = 'x'", OnViolation.FAIL_UPDATE));
        assertThat(t.flow()).isNotNull();
        CreateStreamingTable only =
                (CreateStreamingTable)
                        one("CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (a > 0))");
        assertThat(only.columns()).isEmpty();
        assertThat(only.constraints())
                .containsExactly(new Constraint(at(1, 27), "c", "a > 0", OnViolation.KEEP));
    }

    @Test
    void constraintErrorsNameThePlaceAndWhatWasExpected() {
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT EXPECT (a > 0))",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:45: SYNTAX_ERROR: expected EXPECT after CONSTRAINT EXPECT, found '('");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT (a > 0))",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:38: SYNTAX_ERROR: expected a constraint name after CONSTRAINT, found '('");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c (a > 0))",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:40: SYNTAX_ERROR: expected EXPECT after CONSTRAINT c, found '('");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT a > 0)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:47: SYNTAX_ERROR: expected '(' after EXPECT, found 'a'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT ())",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:48: SYNTAX_ERROR: expected an expression in EXPECT (...) of CONSTRAINT c,"
                        + " found ')'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (f(a > 0);",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:56: SYNTAX_ERROR: expected ')' to close EXPECT (...) of CONSTRAINT c,"
                        + " found ';'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (a > 0) ON DROP ROW)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:58: SYNTAX_ERROR: expected VIOLATION after ON, found 'DROP'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (a > 0) ON VIOLATION WARN)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:68: SYNTAX_ERROR: expected DROP ROW or FAIL UPDATE after ON VIOLATION,"
                        + " found 'WARN'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (a > 0) ON VIOLATION DROP)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:72: SYNTAX_ERROR: expected ROW after ON VIOLATION DROP, found ')'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (a > 0) ON VIOLATION FAIL ROW)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:73: SYNTAX_ERROR: expected UPDATE after ON VIOLATION FAIL, found 'ROW'");
        fails(
                "CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (a > 0), CONSTRAINT C EXPECT (b))",
                SqlException.Code.DUPLICATE_EXPECTATION,
                "p.sql:1:56: DUPLICATE_EXPECTATION: table t already has the expectation 'c' (at"
                        + " p.sql:1:27); give each CONSTRAINT its own name");
    }

    @Test
    void standaloneAutoCdcFormCarriesItsFlow() {
        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE target\n"
                                        + "  FLOW AUTO CDC\n"
                                        + "  FROM stream(cdc_data.users)\n"
                                        + "  KEYS (userId)\n"
                                        + "  APPLY AS DELETE WHEN operation = \"DELETE\"\n"
                                        + "  SEQUENCE BY sequenceNum\n"
                                        + "  COLUMNS * EXCEPT (operation, sequenceNum)\n"
                                        + "  STORED AS SCD TYPE 2;");
        assertThat(t.flow())
                .isEqualTo(
                        new Flow(
                                at(2, 8),
                                new Named(at(3, 15), "cdc_data.users"),
                                new AutoCdc(
                                        List.of("userId"),
                                        "sequenceNum",
                                        "operation = 'DELETE'",
                                        null,
                                        "* EXCEPT (operation, sequenceNum)",
                                        false,
                                        2,
                                        null,
                                        List.of(at(4, 9)),
                                        at(6, 15))));
    }

    /**
     * S1: an append flow's select list and WHERE are Flink SQL, laid out as in the file (double
     * quotes become single); {@code SELECT * FROM STREAM source} alone has no select.
     */
    @Test
    void appendFlowTakesASelectListAndAWhere() {
        CreateStreamingTable sales =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE sales\n"
                                        + "  SCHEDULE EVERY 1 hour\n"
                                        + "  AS SELECT product, price FROM STREAM raw_data;");
        assertThat(sales.flow().select())
                .isEqualTo(new SqlStatement.Select("product, price", at(3, 13), null, null));
        assertThat(sales.flow().source()).isEqualTo(new SqlStatement.Named(at(3, 40), "raw_data"));
        assertThat(sales.flow().autoCdc()).isNull();

        CreateStreamingTable cast =
                (CreateStreamingTable)
                        one(
                                "CREATE STREAMING TABLE s AS SELECT id, CAST(amount AS DECIMAL(10,"
                                        + " 2)) AS amount,\n"
                                        + "       upper(name) AS name -- shouted\n"
                                        + "  FROM STREAM read_files('in', format => 'json')\n"
                                        + "  WHERE amount > 0 AND kind = \"sale\"");
        assertThat(cast.flow().select())
                .isEqualTo(
                        new SqlStatement.Select(
                                "id, CAST(amount AS DECIMAL(10, 2)) AS amount,\n"
                                        + "       upper(name) AS name",
                                at(1, 36),
                                "amount > 0 AND kind = 'sale'",
                                at(4, 9)));

        CreateStreamingTable star =
                (CreateStreamingTable)
                        one("CREATE STREAMING TABLE s AS SELECT * FROM v WHERE a > 1");
        assertThat(star.flow().select())
                .isEqualTo(new SqlStatement.Select("*", at(1, 36), "a > 1", at(1, 51)));
        assertThat(
                        ((CreateStreamingTable) one("CREATE STREAMING TABLE s AS SELECT * FROM v"))
                                .flow()
                                .select())
                .isNull();
        CreateFlow insert =
                (CreateFlow)
                        one(
                                "CREATE FLOW f AS INSERT INTO t BY NAME SELECT a + 1 AS b FROM STREAM v");
        assertThat(insert.flow().select())
                .isEqualTo(new SqlStatement.Select("a + 1 AS b", at(1, 47), null, null));
    }

    /** S1: a streaming table's query is per row; what is not is refused at its token. */
    @Test
    void appendFlowQueriesThatAreNotPerRowAreRefusedAtTheirToken() {
        String u = "UNSUPPORTED_STATEMENT: not supported by changeflow yet: ";
        String t = "CREATE STREAMING TABLE s AS ";
        fails(
                t + "SELECT k, count(*) AS n FROM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:39: "
                        + u
                        + "the aggregate function COUNT(...) in a streaming table's query (it is per"
                        + " row: each source row gives one row or none; aggregate in a Gold job)");
        fails(
                t + "SELECT k FROM v GROUP BY k",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:45: "
                        + u
                        + "GROUP BY / HAVING in a streaming table's query (it is per row; aggregate"
                        + " in a Gold job)");
        fails(
                t + "SELECT k FROM v WHERE k > 1 GROUP BY k",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:57: "
                        + u
                        + "GROUP BY / HAVING in a streaming table's query (it is per row; aggregate"
                        + " in a Gold job)");
        fails(
                t + "SELECT * FROM v JOIN w ON v.k = w.k",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:45: "
                        + u
                        + "joins in a streaming table's query (it reads one source, per row; join"
                        + " in a Gold job)");
        fails(
                t + "SELECT * FROM v, w",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:44: "
                        + u
                        + "joins in a streaming table's query (it reads one source, per row; join"
                        + " in a Gold job)");
        fails(
                t + "SELECT k, row_number() OVER (PARTITION BY k) AS n FROM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:39: "
                        + u
                        + "the aggregate function ROW_NUMBER(...) in a streaming table's query (it"
                        + " is per row: each source row gives one row or none; aggregate in a Gold"
                        + " job)");
        fails(
                t + "SELECT k, f(k) OVER w AS n FROM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:44: "
                        + u
                        + "window functions (OVER) in a streaming table's query (it is per row;"
                        + " aggregate in a Gold job)");
        fails(
                t + "SELECT DISTINCT k FROM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:36: "
                        + u
                        + "SELECT DISTINCT (a streaming table's query is per row: each source row"
                        + " gives one row or none)");
        fails(
                t + "SELECT k FROM v WHERE k IN (SELECT k FROM w)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:57: " + u + "subqueries in a streaming table's query");
        fails(
                t + "SELECT k FROM v ORDER BY k",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:45: "
                        + u
                        + "ORDER after the source (a streaming table's query is SELECT list FROM"
                        + " STREAM source [WHERE predicate])");
        fails(
                t + "SELECT * FROM STREAM(raw) WITH (skipChangeCommits = true)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:55: "
                        + u
                        + "source options WITH (...) after the source (skipChangeCommits is not"
                        + " offered: docs/semantics.md S7)");
        fails(
                t + "SELECT * EXCEPT (a) FROM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:38: " + u + "SELECT * EXCEPT (name the columns in the select list)");
        fails(
                t + "SELECT FROM v",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:36: SYNTAX_ERROR: expected a select list after SELECT, found 'FROM'");
        fails(
                t + "SELECT a, b",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:40: SYNTAX_ERROR: expected FROM after the select list, found end of file");
        fails(
                t + "SELECT a FROM v WHERE",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:50: SYNTAX_ERROR: expected a predicate after WHERE, found end of file");
    }

    /** S5: FLOW REPLACE USING (keys) SEQUENCE BY s BY NAME SELECT * FROM STREAM source. */
    @Test
    void replaceUsingFormCarriesItsKeysAndSequence() {
        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE payments_current\n"
                                        + "  FLOW REPLACE USING (booking_id, region) SEQUENCE BY payment_date BY NAME\n"
                                        + "  SELECT * FROM STREAM read_files('in/p', format => 'json');");
        assertThat(t.flow())
                .isEqualTo(
                        new Flow(
                                at(2, 8),
                                new ReadFiles(at(3, 24), "in/p", Map.of("format", "json")),
                                null,
                                new SqlStatement.ReplaceUsing(
                                        List.of("booking_id", "region"),
                                        "payment_date",
                                        List.of(at(2, 23), at(2, 35)),
                                        at(2, 55))));
        fails(
                "CREATE STREAMING TABLE t FLOW REPLACE USING (k) SEQUENCE BY s SELECT * FROM v",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:78: SYNTAX_ERROR: expected BY NAME after SEQUENCE BY (REPLACE USING"
                        + " matches columns by name), found end of file");
        fails(
                "CREATE STREAMING TABLE t FLOW REPLACE USING k SEQUENCE BY s BY NAME SELECT * FROM v",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:45: SYNTAX_ERROR: expected '(' after REPLACE USING, found 'k'");
    }

    /**
     * S4: FLOW REPLACE WHERE predicate BY NAME query keeps the predicate and the query as laid out
     * in the file; REFRESH STREAMING TABLE t WHERE overrides the predicate.
     */
    @Test
    void replaceWhereFormKeepsPredicateAndQueryAsLaidOut() {
        List<SqlStatement> all =
                parse(
                        "CREATE OR REFRESH STREAMING TABLE daily (d DATE, total BIGINT)\n"
                                + "  FLOW REPLACE WHERE d >= CURRENT_DATE - INTERVAL '7' DAY AND\n"
                                + "    k <> \"x\" BY NAME\n"
                                + "  SELECT d, SUM(n) AS total -- per day\n"
                                + "  FROM sales GROUP BY d;\n"
                                + "REFRESH STREAMING TABLE daily WHERE d >= DATE '2024-01-01';");
        CreateStreamingTable t = (CreateStreamingTable) all.get(0);
        assertThat(t.flow())
                .isEqualTo(
                        new Flow(
                                at(2, 8),
                                null,
                                null,
                                null,
                                new SqlStatement.ReplaceWhere(
                                        "d >= CURRENT_DATE - INTERVAL '7' DAY AND\n    k <> 'x'",
                                        at(2, 22),
                                        "SELECT d, SUM(n) AS total\n  FROM sales GROUP BY d",
                                        at(4, 3))));
        assertThat(all.get(1))
                .isEqualTo(
                        new SqlStatement.Refresh(
                                at(6, 1),
                                List.of("daily"),
                                false,
                                "d >= DATE '2024-01-01'",
                                at(6, 37)));
        fails(
                "CREATE STREAMING TABLE t FLOW REPLACE WHERE d > 1 SELECT d FROM s",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:66: SYNTAX_ERROR: expected BY NAME after the REPLACE WHERE predicate (it"
                        + " matches columns by name), found end of file");
        fails(
                "CREATE STREAMING TABLE t FLOW REPLACE WHERE d > 1 BY NAME INSERT INTO x",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:59: SYNTAX_ERROR: expected a query (SELECT ...) after BY NAME, found"
                        + " 'INSERT'");
        fails(
                "REFRESH STREAMING TABLE t WHERE ;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:33: SYNTAX_ERROR: expected a predicate after WHERE, found ';'");
    }

    @Test
    void streamingTableAsSelectIsAnAppendFlow() {
        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE STREAMING TABLE h AS SELECT * FROM STREAM read_files('in/h',"
                                        + " format => \"json\", table => 'h')");
        assertThat(t.flow())
                .isEqualTo(
                        new Flow(
                                at(1, 26),
                                new ReadFiles(
                                        at(1, 50), "in/h", Map.of("format", "json", "table", "h")),
                                null));
    }

    @Test
    void createFlowAutoCdcAndInsertAndApplyChanges() {
        assertThat(
                        parse(
                                "CREATE FLOW f COMMENT 'x' AS AUTO CDC INTO LIVE.t FROM STREAM v KEYS (a);\n"
                                        + "CREATE FLOW g AS INSERT INTO h BY NAME SELECT * FROM STREAM(read_files('d'));\n"
                                        + "APPLY CHANGES INTO LIVE.s FROM STREAM(LIVE.w) KEYS (k)"))
                .containsExactly(
                        new CreateFlow(
                                at(1, 1),
                                "f",
                                "t",
                                new Flow(
                                        at(1, 30),
                                        new Named(at(1, 63), "v"),
                                        new AutoCdc(
                                                List.of("a"),
                                                null,
                                                null,
                                                null,
                                                null,
                                                false,
                                                null,
                                                null,
                                                List.of(at(1, 71)),
                                                null))),
                        new CreateFlow(
                                at(2, 1),
                                "g",
                                "h",
                                new Flow(at(2, 18), new ReadFiles(at(2, 61), "d", Map.of()), null)),
                        new CreateFlow(
                                at(3, 1),
                                null,
                                "s",
                                new Flow(
                                        at(3, 1),
                                        new Named(at(3, 39), "w"),
                                        new AutoCdc(
                                                List.of("k"),
                                                null,
                                                null,
                                                null,
                                                null,
                                                false,
                                                null,
                                                null,
                                                List.of(at(3, 53)),
                                                null))));
    }

    @Test
    void temporaryViewReadsFiles() {
        assertThat(
                        one(
                                "CREATE OR REPLACE TEMP VIEW v AS SELECT * FROM STREAM read_files(\n"
                                        + "  '/data/cdc', format => 'debezium-json', table => 'pgbench_accounts')"))
                .isEqualTo(
                        new CreateView(
                                at(1, 1),
                                "v",
                                new ReadFiles(
                                        at(1, 55),
                                        "/data/cdc",
                                        Map.of(
                                                "format",
                                                "debezium-json",
                                                "table",
                                                "pgbench_accounts"))));
    }

    // ------------------------------------------------------------------------ AUTO CDC clauses

    @Test
    void keysTakeSeveralColumns() {
        AutoCdc c = cdc("KEYS (id, `region code`)");
        assertThat(c.keys()).containsExactly("id", "region code");
        assertThat(c.keyPositions()).containsExactly(at(1, 55), at(1, 59));
    }

    @Test
    void readKafkaTakesNamedArguments() {
        CreateView v =
                (CreateView)
                        one(
                                "CREATE TEMPORARY VIEW k AS SELECT * FROM STREAM read_kafka(\n"
                                        + "  bootstrapServers => 'h:9092', subscribe => \"a.b.t\","
                                        + " startingOffsets => 'latest')");
        assertThat(v.source())
                .isEqualTo(
                        new SqlStatement.ReadKafka(
                                at(1, 49),
                                Map.of(
                                        "bootstrapServers", "h:9092",
                                        "subscribe", "a.b.t",
                                        "startingOffsets", "latest")));
        fails(
                "APPLY CHANGES INTO t FROM STREAM read_kafka(subscribe => 'a', subscribe => 'b')"
                        + " KEYS (id)",
                SqlException.Code.DUPLICATE_CLAUSE,
                "p.sql:1:63: DUPLICATE_CLAUSE: read_kafka argument 'subscribe' is given twice");
    }

    @Test
    void refreshStreamingTableWithAndWithoutFull() {
        assertThat(
                        parse(
                                "REFRESH STREAMING TABLE sales;\n"
                                        + "refresh streaming table LIVE.a, b FULL;"))
                .containsExactly(
                        new SqlStatement.Refresh(at(1, 1), List.of("sales"), false),
                        new SqlStatement.Refresh(at(2, 1), List.of("a", "b"), true));
        fails(
                "REFRESH STREAMING TABLE t PARTIAL",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:27: SYNTAX_ERROR: expected FULL, WHERE or ';' after REFRESH STREAMING TABLE t,"
                        + " found 'PARTIAL'");
        fails(
                "REFRESH STREAMING TABLE;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:24: SYNTAX_ERROR: expected a table name after REFRESH STREAMING TABLE,"
                        + " found ';'");
    }

    @Test
    void sequenceByKeepsTheExpressionUpToTheNextClause() {
        assertThat(cdc("SEQUENCE BY STRUCT(ts,  seq) KEYS (a)").sequenceBy())
                .isEqualTo("STRUCT(ts, seq)");
        assertThat(cdc("KEYS (a) SEQUENCE BY source.lsn").sequenceBy()).isEqualTo("source.lsn");
    }

    @Test
    void applyAsDeleteAndTruncateWhenKeepPredicatesWithStringsAndParentheses() {
        AutoCdc c =
                cdc(
                        "KEYS (a) APPLY AS DELETE WHEN op = \"D\" OR (op = 'KEYS' AND /* c */ x IN (1, 2))\n"
                                + " APPLY AS TRUNCATE WHEN op = 'it''s' STORED AS SCD TYPE 1");
        assertThat(c.applyAsDeleteWhen()).isEqualTo("op = 'D' OR (op = 'KEYS' AND x IN (1, 2))");
        assertThat(c.applyAsTruncateWhen()).isEqualTo("op = 'it''s'");
        assertThat(cdc("KEYS (a) APPLY AS DELETE WHEN op = 'it\\'s'").applyAsDeleteWhen())
                .isEqualTo("op = 'it''s'");
    }

    @Test
    void columnsTakeListsParenthesesStarAndExcept() {
        assertThat(cdc("KEYS (a) COLUMNS a, b").columns()).isEqualTo("a, b");
        assertThat(cdc("KEYS (a) COLUMNS (a, b)").columns()).isEqualTo("a, b");
        assertThat(cdc("KEYS (a) COLUMNS *").columns()).isEqualTo("*");
        assertThat(cdc("COLUMNS * EXCEPT (op,seq) KEYS (a)").columns())
                .isEqualTo("* EXCEPT (op, seq)");
    }

    @Test
    void ignoreNullUpdatesStoredAsAndTrackHistory() {
        AutoCdc c =
                cdc(
                        "TRACK HISTORY ON * EXCEPT (note) IGNORE NULL UPDATES STORED AS SCD TYPE 2 KEYS (a)");
        assertThat(c.ignoreNullUpdates()).isTrue();
        assertThat(c.scdType()).isEqualTo(2);
        assertThat(c.trackHistoryOn()).isEqualTo("* EXCEPT (note)");
        assertThat(cdc("KEYS (a) TRACK HISTORY ON a, b").trackHistoryOn()).isEqualTo("a, b");
        assertThat(cdc("KEYS (a)").ignoreNullUpdates()).isFalse();
    }

    @Test
    void commentsAndCaseDoNotMatter() {
        assertThat(
                        parse(
                                "-- header\n/* block\n comment */ apply changes into t from stream(v) keys (a) "
                                        + "stored as scd type 2;;\n"))
                .hasSize(1);
    }

    // ------------------------------------------------------------------------ errors

    @Test
    void syntaxErrorsNameThePlaceAndWhatWasExpected() {
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(v)\n  KEYS aid",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:2:8: SYNTAX_ERROR: expected '(' after KEYS, found 'aid'");
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(v) SEQUENCE BY s",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:62: SYNTAX_ERROR: expected KEYS (...): an AUTO CDC flow needs its keys,"
                        + " found end of file");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) STORED AS SCD TYPE 3",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:57: SYNTAX_ERROR: expected 1 or 2 after STORED AS SCD TYPE, found '3'");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) ORDER BY x",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:38: SYNTAX_ERROR: expected an AUTO CDC clause (KEYS, SEQUENCE BY, APPLY AS"
                        + " DELETE WHEN, APPLY AS TRUNCATE WHEN, COLUMNS, IGNORE NULL UPDATES, STORED AS"
                        + " SCD TYPE, TRACK HISTORY ON) or ';', found 'ORDER'");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY ;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:50: SYNTAX_ERROR: expected an expression after SEQUENCE BY, found ';'");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) APPLY AS DELETE WHEN (op = 'd'",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:68: SYNTAX_ERROR: expected ')' to close the expression of APPLY AS DELETE"
                        + " WHEN, found end of file");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) APPLY AS UPSERT WHEN x",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:47: SYNTAX_ERROR: expected DELETE or TRUNCATE after APPLY AS, found 'UPSERT'");
        fails(
                "CREATE STREAMING TABLE t (a INT,)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:33: SYNTAX_ERROR: expected a column name, found ')'");
        fails(
                "CREATE STREAMING TABLE t (a)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:28: SYNTAX_ERROR: expected a type for column a, found ')'");
        fails(
                "CREATE STREAMING TABLE t PARTITIONED (a)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:38: SYNTAX_ERROR: expected BY after PARTITIONED, found '('");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('a' 'b')",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:45: SYNTAX_ERROR: expected '=' after the property key, found ''b''");
        fails(
                "CREATE STREAMING TABLE t\nFOO",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:2:1: SYNTAX_ERROR: expected PARTITIONED BY, COMMENT, TBLPROPERTIES, AS SELECT,"
                        + " FLOW AUTO CDC or ';', found 'FOO'");
        fails(
                "SET x 1",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:8: SYNTAX_ERROR: expected '=' after the key of SET (SET key = value),"
                        + " found end of file");
        fails(
                "SET x =;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:8: SYNTAX_ERROR: expected a value after '=' (SET key = value), found ';'");
        fails(
                "USE CATALOG main extra",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:18: SYNTAX_ERROR: expected ';' after the statement, found 'extra'");
        fails(
                "hello world",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:1: SYNTAX_ERROR: expected a statement (CREATE, APPLY CHANGES, SET or USE),"
                        + " found 'hello'");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files(path => 'x')",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:60: SYNTAX_ERROR: expected the path as the first argument of read_files,"
                        + " found 'path'");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('x', format = 'json')",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:72: SYNTAX_ERROR: expected '=>' after the argument name (read_files takes"
                        + " name => value), found '='");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM(read_files('x')",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:64: SYNTAX_ERROR: expected ')' after the source, found end of file");
    }

    @Test
    void tokenizerErrorsNameThePlace() {
        fails(
                "SET a = 'open",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:9: SYNTAX_ERROR: unterminated string literal: no closing ' before the end"
                        + " of file");
        fails(
                "SET a = 1;\n  /* never closed",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:2:3: SYNTAX_ERROR: unterminated comment: no closing */ before the end of file");
        fails(
                "SET a = 1 #",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:11: SYNTAX_ERROR: unexpected character '#' (U+0023)");
    }

    @Test
    void aClauseGivenTwiceIsRefused() {
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY x KEYS (b)",
                SqlException.Code.DUPLICATE_CLAUSE,
                "p.sql:1:52: DUPLICATE_CLAUSE: KEYS is given twice in one statement");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) STORED AS SCD TYPE 1 STORED AS SCD TYPE 2",
                SqlException.Code.DUPLICATE_CLAUSE,
                "p.sql:1:59: DUPLICATE_CLAUSE: STORED AS SCD TYPE is given twice in one statement");
        fails(
                "CREATE STREAMING TABLE t COMMENT 'a' COMMENT 'b'",
                SqlException.Code.DUPLICATE_CLAUSE,
                "p.sql:1:38: DUPLICATE_CLAUSE: COMMENT is given twice in one statement");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM read_files('x', table => 'a', table => 'b')",
                SqlException.Code.DUPLICATE_CLAUSE,
                "p.sql:1:72: DUPLICATE_CLAUSE: read_files argument 'table' is given twice");
    }

    /**
     * A column named twice in a flow's column list is found when the file is parsed (so {@code
     * --dry-run} reports it), at its second mention, not by Flink when the job is built.
     */
    @Test
    void aColumnNamedTwiceInAFlowIsRefusedAtItsSecondMention() {
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(v) KEYS (id, id) SEQUENCE BY s",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:1:59: DUPLICATE_COLUMN: column 'id' is named twice in KEYS (first at 1:55);"
                        + " name each column once");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY STRUCT(s, t, s)",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:1:63: DUPLICATE_COLUMN: column 's' is named twice in SEQUENCE BY STRUCT(...)"
                        + " (first at 1:57); name each column once");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY s COLUMNS (a, b, a)",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:1:67: DUPLICATE_COLUMN: column 'a' is named twice in COLUMNS (first at 1:61);"
                        + " name each column once");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY s COLUMNS b, b",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:1:63: DUPLICATE_COLUMN: column 'b' is named twice in COLUMNS (first at 1:60);"
                        + " name each column once");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY s COLUMNS * EXCEPT (c, c)",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:1:73: DUPLICATE_COLUMN: column 'c' is named twice in COLUMNS * EXCEPT (...)"
                        + " (first at 1:70); name each column once");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) SEQUENCE BY s STORED AS SCD TYPE 2\n"
                        + "  TRACK HISTORY ON (b, `b`)",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:2:24: DUPLICATE_COLUMN: column 'b' is named twice in TRACK HISTORY ON"
                        + " (first at 2:21); name each column once");
        fails(
                "CREATE OR REFRESH STREAMING TABLE t FLOW REPLACE USING (k, k) SEQUENCE BY s BY NAME"
                        + " SELECT * FROM STREAM(v)",
                SqlException.Code.DUPLICATE_COLUMN,
                "p.sql:1:60: DUPLICATE_COLUMN: column 'k' is named twice in REPLACE USING (first at"
                        + " 1:57); name each column once");
        // distinct names, and a STRUCT whose fields are expressions, pass
        assertThat(cdc("KEYS (id, ID) SEQUENCE BY STRUCT(s, t)").keys())
                .containsExactly("id", "ID");
        assertThat(cdc("KEYS (id) SEQUENCE BY STRUCT(f(s), f(s))").sequenceBy())
                .isEqualTo("STRUCT(f(s), f(s))");
    }

    /** A keyword one edit away from the one that fits is a syntax error that names it. */
    @Test
    void aMisspeltKeywordIsASyntaxErrorWithAHint() {
        fails(
                "CREATE OR REFRESH STREMING TABLE t AS SELECT * FROM STREAM v",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:19: SYNTAX_ERROR: expected STREAMING TABLE, TEMPORARY VIEW or FLOW after"
                        + " CREATE, found 'STREMING' (did you mean STREAMING?)");
        fails(
                "CREATE TEMPROARY VIEW v AS SELECT * FROM STREAM read_files('x')",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:8: SYNTAX_ERROR: expected STREAMING TABLE, TEMPORARY VIEW or FLOW after"
                        + " CREATE, found 'TEMPROARY' (did you mean TEMPORARY?)");
        fails(
                "CRATE STREAMING TABLE t AS SELECT * FROM STREAM v",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:1: SYNTAX_ERROR: expected a statement (CREATE, APPLY CHANGES, SET or USE),"
                        + " found 'CRATE' (did you mean CREATE?)");
        // a CREATE of the vendor's dialect that changeflow does not implement stays unsupported
        fails(
                "CREATE TABLE t (a INT)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:8: UNSUPPORTED_STATEMENT: not supported by changeflow yet: CREATE TABLE"
                        + " statements");
    }

    @Test
    void oneEditApartCountsInsertionsDeletionsSubstitutionsAndSwaps() {
        assertThat(SqlParser.oneEditApart("STREMING", "STREAMING")).isTrue();
        assertThat(SqlParser.oneEditApart("STREAMINGG", "STREAMING")).isTrue();
        assertThat(SqlParser.oneEditApart("OPTIMISE", "OPTIMIZE")).isTrue();
        assertThat(SqlParser.oneEditApart("SRTEAMING", "STREAMING")).isTrue();
        assertThat(SqlParser.oneEditApart("STREAMING", "STREAMING")).isFalse();
        assertThat(SqlParser.oneEditApart("STRAEMIGN", "STREAMING")).isFalse();
        assertThat(SqlParser.oneEditApart("OPTIMIZER", "OPTIMIZE")).isTrue();
        assertThat(SqlParser.oneEditApart("OPTIMIZERS", "OPTIMIZE")).isFalse();
    }

    @Test
    void unsupportedStatementsAndClausesAreNamedNeverIgnored() {
        String u = "UNSUPPORTED_STATEMENT: not supported by changeflow yet: ";
        fails(
                "GRANT SELECT ON t TO u",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:1: " + u + "GRANT statements");
        fails(
                "revoke SELECT ON t FROM u",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:1: " + u + "REVOKE statements");
        fails(
                "REFRESH MATERIALIZED VIEW m",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:9: " + u + "REFRESH MATERIALIZED (only REFRESH STREAMING TABLE t [FULL])");
        fails(
                "CREATE MATERIALIZED VIEW m AS SELECT 1",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:8: " + u + "materialized views (CREATE MATERIALIZED VIEW)");
        fails(
                "ALTER TABLE t ADD COLUMN c INT",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:1: "
                        + u
                        + "ALTER statements other than ALTER STREAMING TABLE t ADD | ALTER | DROP"
                        + " SCHEDULE");
        fails(
                "ALTER STREAMING TABLE t SET TBLPROPERTIES ('a' = 'b')",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:25: "
                        + u
                        + "ALTER STREAMING TABLE ... SET (only ADD | ALTER | DROP SCHEDULE)");
        fails(
                "ALTER STREAMING TABLE t ADD TRIGGER ON UPDATE",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:29: "
                        + u
                        + "ALTER STREAMING TABLE ... ADD TRIGGER (only ADD | ALTER | DROP SCHEDULE)");
        fails(
                "CREATE OR REFRESH STREAMING TABLE t SCHEDULE EVERY 1 HOUR AT TIME ZONE 'UTC'",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:59: " + u + "AT TIME ZONE after SCHEDULE EVERY (only after CRON)");
        fails(
                "CREATE STREAMING TABLE t WITH ROW FILTER f ON (a)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:26: " + u + "WITH ROW FILTER (access control is planned: S6)");
        fails(
                "CREATE STREAMING TABLE t (ssn STRING MASK m)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:38: " + u + "column MASK (access control is planned: S6)");
        fails(
                "CREATE STREAMING TABLE t (a INT, CONSTRAINT c CHECK (a > 0))",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:47: "
                        + u
                        + "CONSTRAINT ... CHECK (only CONSTRAINT ... EXPECT; KEYS of the flow give"
                        + " the key)");
        fails(
                "CREATE STREAMING TABLE t TRIGGER ON UPDATE AS SELECT * FROM STREAM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:26: " + u + "TRIGGER ON UPDATE");
        fails(
                "CREATE OR REFRESH STREAMING TABLE t FLOW REPLACE d > 1 AS SELECT * FROM s",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:42: " + u + "FLOW REPLACE");
        fails(
                "CREATE OR REFRESH STREAMING TABLE t FLOW REPLACE USING (k) SEQUENCE BY s BY NAME"
                        + " SELECT k, s FROM STREAM(s)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:89: "
                        + u
                        + "a query that selects columns (only SELECT * FROM STREAM source; choose"
                        + " columns with COLUMNS in an AUTO CDC flow)");
        fails(
                "CREATE TEMPORARY VIEW t AS SELECT a, b FROM STREAM v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:35: "
                        + u
                        + "a query that selects columns (only SELECT * FROM STREAM source; choose"
                        + " columns with COLUMNS in an AUTO CDC flow)");
        fails(
                "CREATE TEMPORARY VIEW t AS SELECT * FROM STREAM v WHERE a > 1",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:51: " + u + "WHERE after the source (only SELECT * FROM STREAM source)");
        fails(
                "CREATE TEMPORARY VIEW v AS VALUES (1)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:28: " + u + "queries other than SELECT * FROM STREAM source");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('x', maxBytesPerTrigger"
                        + " => 10)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:65: "
                        + u
                        + "read_files argument 'maxBytesPerTrigger' (this release takes format =>,"
                        + " table =>, includeExistingFiles =>, schemaHints =>, maxFilesPerTrigger =>"
                        + " and the CSV options header =>, sep => (delimiter =>), quote =>, escape"
                        + " =>, nullValue =>, comment =>)");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_kafka(bootstrapServers => 'h',"
                        + " kafka.security.protocol => 'SSL')",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:85: "
                        + u
                        + "read_kafka argument 'kafka.security.protocol' (this release takes"
                        + " bootstrapServers, subscribe, subscribePattern, startingOffsets)");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM cloud_files('p', 'json')",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:49: " + u + "cloud_files(...) sources (read_files is supported)");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) STORED AS SCD TYPE BITEMPORAL",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:57: " + u + "STORED AS SCD TYPE BITEMPORAL");
        fails(
                "APPLY CHANGES INTO t FROM v KEYS (a) COLUMNS TO UPDATE a",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:46: " + u + "COLUMNS TO UPDATE");
        fails(
                "CREATE VIEW v AS SELECT * FROM STREAM read_files('x')",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:8: " + u + "persisted views (CREATE VIEW; use CREATE TEMPORARY VIEW)");
        fails(
                "CREATE STREAMING TABLE t CLUSTER BY (a)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:26: " + u + "CLUSTER BY");
    }

    // ------------------------------------------------------------------------ SCHEDULE (S3)

    @Test
    void scheduleEveryInAnyClauseOrderWithSingularOrPluralUnits() {
        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE sales\n"
                                        + "  SCHEDULE EVERY 1 hour\n"
                                        + "  AS SELECT * FROM STREAM read_files('/d', format => \"json\")");
        assertThat(t.schedule()).isEqualTo(new Schedule.Every(at(2, 3), 1, Schedule.Unit.HOURS));
        assertThat(t.flow()).isNotNull();
        CreateStreamingTable u =
                (CreateStreamingTable)
                        one(
                                "CREATE STREAMING TABLE t COMMENT 'c' SCHEDULE REFRESH EVERY 72 HOURS"
                                        + " TBLPROPERTIES ('a' = 'b')");
        assertThat(u.schedule()).isEqualTo(new Schedule.Every(at(1, 38), 72, Schedule.Unit.HOURS));
        assertThat(u.comment()).isEqualTo("c");
        assertThat(u.properties()).containsExactly(Map.entry("a", "b"));
        assertThat(
                        ((CreateStreamingTable)
                                        one("CREATE STREAMING TABLE t SCHEDULE EVERY 31 DAYS"))
                                .schedule())
                .isEqualTo(new Schedule.Every(at(1, 26), 31, Schedule.Unit.DAYS));
        assertThat(
                        ((CreateStreamingTable)
                                        one("CREATE STREAMING TABLE t SCHEDULE EVERY 1 day"))
                                .schedule())
                .isEqualTo(new Schedule.Every(at(1, 26), 1, Schedule.Unit.DAYS));
        assertThat(
                        ((CreateStreamingTable)
                                        one("CREATE STREAMING TABLE t SCHEDULE EVERY 8 WEEKS"))
                                .schedule())
                .isEqualTo(new Schedule.Every(at(1, 26), 8, Schedule.Unit.WEEKS));
        assertThat(
                        ((CreateStreamingTable)
                                        one("CREATE STREAMING TABLE t SCHEDULE EVERY 1 WEEK"))
                                .schedule())
                .isEqualTo(new Schedule.Every(at(1, 26), 1, Schedule.Unit.WEEKS));
        assertThat(((CreateStreamingTable) one("CREATE STREAMING TABLE t")).schedule()).isNull();
    }

    @Test
    void scheduleCronWithAndWithoutTimeZone() {
        assertThat(
                        ((CreateStreamingTable)
                                        one(
                                                "CREATE STREAMING TABLE t SCHEDULE CRON '0 30 2 ? * MON-FRI'"
                                                        + " AT TIME ZONE 'Europe/Berlin' FLOW AUTO CDC FROM"
                                                        + " STREAM(v) KEYS (id)"))
                                .schedule())
                .isEqualTo(new Schedule.Cron(at(1, 26), "0 30 2 ? * MON-FRI", "Europe/Berlin"));
        assertThat(
                        ((CreateStreamingTable)
                                        one(
                                                "CREATE STREAMING TABLE t SCHEDULE CRON \"0 0 * * * ?\""))
                                .schedule())
                .isEqualTo(new Schedule.Cron(at(1, 26), "0 0 * * * ?", null));
    }

    @Test
    void alterStreamingTableAddsAltersAndDropsSchedules() {
        assertThat(
                        parse(
                                "ALTER STREAMING TABLE silver.t ADD SCHEDULE EVERY 2 HOURS;\n"
                                        + "ALTER STREAMING TABLE LIVE.t ALTER SCHEDULE CRON '0 0 6 * * ?'"
                                        + " AT TIME ZONE 'UTC';\n"
                                        + "alter streaming table t drop schedule"))
                .containsExactly(
                        new AlterSchedule(
                                at(1, 1),
                                "silver.t",
                                AlterSchedule.Action.ADD,
                                new Schedule.Every(at(1, 36), 2, Schedule.Unit.HOURS)),
                        new AlterSchedule(
                                at(2, 1),
                                "t",
                                AlterSchedule.Action.ALTER,
                                new Schedule.Cron(at(2, 36), "0 0 6 * * ?", "UTC")),
                        new AlterSchedule(at(3, 1), "t", AlterSchedule.Action.DROP, null));
    }

    @Test
    void scheduleErrorsNameTheRangeTheFieldOrTheZone() {
        SqlException.Code bad = SqlException.Code.INVALID_SCHEDULE;
        String range = " is out of range: EVERY takes 1–72 hours, 1–31 days or 1–8 weeks";
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 73 HOURS",
                bad,
                "p.sql:1:41: INVALID_SCHEDULE: SCHEDULE EVERY 73 HOURS" + range);
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 0 HOUR",
                bad,
                "p.sql:1:41: INVALID_SCHEDULE: SCHEDULE EVERY 0 HOUR" + range);
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 32 DAYS",
                bad,
                "p.sql:1:41: INVALID_SCHEDULE: SCHEDULE EVERY 32 DAYS" + range);
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 9 WEEKS",
                bad,
                "p.sql:1:41: INVALID_SCHEDULE: SCHEDULE EVERY 9 WEEKS" + range);
        fails(
                "ALTER STREAMING TABLE t ALTER SCHEDULE EVERY 99999999999 DAYS",
                bad,
                "p.sql:1:46: INVALID_SCHEDULE: SCHEDULE EVERY 99999999999 DAYS" + range);
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 2 MONTHS",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:43: SYNTAX_ERROR: expected HOUR(S), DAY(S) or WEEK(S) after SCHEDULE EVERY"
                        + " 2, found 'MONTHS'");
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 1.5 HOURS",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:41: SYNTAX_ERROR: expected a whole number after SCHEDULE EVERY, found"
                        + " '1.5'");
        fails(
                "CREATE STREAMING TABLE t SCHEDULE AT 5",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:35: SYNTAX_ERROR: expected EVERY or CRON after SCHEDULE, found 'AT'");
        fails(
                "CREATE STREAMING TABLE t SCHEDULE CRON '30 0 * * * ?'",
                bad,
                "p.sql:1:40: INVALID_SCHEDULE: cron '30 0 * * * ?' has no Kubernetes cron"
                        + " expression: the second field is '30': a Kubernetes CronJob fires at whole"
                        + " minutes, so the second must be 0");
        fails(
                "CREATE STREAMING TABLE t SCHEDULE CRON '0 0 12 * * ?' AT TIME ZONE 'Mars/Olympus'",
                bad,
                "p.sql:1:68: INVALID_SCHEDULE: unknown time zone 'Mars/Olympus': give an IANA time"
                        + " zone id such as 'UTC' or 'America/Los_Angeles'");
        fails(
                "CREATE STREAMING TABLE t SCHEDULE EVERY 1 HOUR SCHEDULE EVERY 2 HOURS",
                SqlException.Code.DUPLICATE_CLAUSE,
                "p.sql:1:48: DUPLICATE_CLAUSE: SCHEDULE is given twice in one statement");
        fails(
                "ALTER STREAMING TABLE t DROP",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:29: SYNTAX_ERROR: expected SCHEDULE after DROP, found end of file");
    }

    @Test
    void describeTableWithAndWithoutExtended() {
        assertThat(
                        parse(
                                "DESCRIBE TABLE EXTENDED sales;\n"
                                        + "desc extended LIVE.sales;\n"
                                        + "DESCRIBE TABLE ns.orders;\n"
                                        + "DESCRIBE extended"))
                .containsExactly(
                        new SqlStatement.Describe(at(1, 1), "sales", at(1, 25), true),
                        new SqlStatement.Describe(at(2, 1), "sales", at(2, 15), true),
                        new SqlStatement.Describe(at(3, 1), "ns.orders", at(3, 16), false),
                        // a table named "extended"
                        new SqlStatement.Describe(at(4, 1), "extended", at(4, 10), false));
    }

    @Test
    void describeErrorsNameThePlace() {
        String u = "UNSUPPORTED_STATEMENT: not supported by changeflow yet: ";
        fails(
                "DESCRIBE TABLE;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:15: SYNTAX_ERROR: expected a table name after DESCRIBE TABLE, found ';'");
        fails(
                "DESCRIBE TABLE EXTENDED t (x)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:27: SYNTAX_ERROR: expected ';' after DESCRIBE TABLE t, found '('");
        fails(
                "DESCRIBE TABLE t id",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:18: "
                        + u
                        + "DESCRIBE of one column (DESCRIBE TABLE [EXTENDED] t describes the whole"
                        + " table)");
        fails(
                "SET a = b;\n  DESCRIBE HISTORY t",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:2:12: "
                        + u
                        + "DESCRIBE HISTORY (only DESCRIBE TABLE [EXTENDED] t of a streaming table)");
        fails(
                "DESC DETAIL t",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:6: "
                        + u
                        + "DESCRIBE DETAIL (only DESCRIBE TABLE [EXTENDED] t of a streaming table)");
    }

    @Test
    void dropTableWithAndWithoutIfExists() {
        assertThat(
                        parse(
                                "DROP TABLE sales;\n"
                                        + "drop table if exists LIVE.a;\n"
                                        + "DROP TABLE IF EXISTS ns.b"))
                .containsExactly(
                        new SqlStatement.Drop(at(1, 1), "sales", at(1, 12), false),
                        new SqlStatement.Drop(at(2, 1), "a", at(2, 22), true),
                        new SqlStatement.Drop(at(3, 1), "ns.b", at(3, 22), true));
    }

    @Test
    void dropErrorsNameThePlace() {
        String u = "UNSUPPORTED_STATEMENT: not supported by changeflow yet: ";
        fails(
                "DROP VIEW v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:6: " + u + "DROP VIEW (only DROP TABLE [IF EXISTS] t)");
        fails(
                "DROP MATERIALIZED VIEW v",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:6: " + u + "DROP MATERIALIZED (only DROP TABLE [IF EXISTS] t)");
        fails(
                "DROP;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:5: SYNTAX_ERROR: expected TABLE after DROP, found ';'");
        fails(
                "DROP TABLE IF NOT EXISTS t",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:15: SYNTAX_ERROR: expected EXISTS after DROP TABLE IF, found 'NOT'");
        fails(
                "DROP TABLE IF EXISTS;",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:21: SYNTAX_ERROR: expected a table name after DROP TABLE, found ';'");
        fails(
                "DROP TABLE t PURGE",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:14: "
                        + u
                        + "DROP TABLE ... PURGE (DROP TABLE always deletes the table's files)");
        fails(
                "DROP TABLE t CASCADE",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:14: SYNTAX_ERROR: expected ';' after DROP TABLE t, found 'CASCADE'");
    }

    // ------------------------------------------------------------ AUTO CDC FROM SNAPSHOT (A6)

    @Test
    void autoCdcFromSnapshotReadsAFolderOrATableInEveryForm() {
        CreateFlow f =
                (CreateFlow)
                        one(
                                "CREATE FLOW f AS AUTO CDC INTO cities FROM SNAPSHOT"
                                        + " read_files('snaps', format => 'csv')\n"
                                        + "  KEYS (id) STORED AS SCD TYPE 2 TRACK HISTORY ON (city)");
        assertThat(f.name()).isEqualTo("f");
        assertThat(f.target()).isEqualTo("cities");
        assertThat(f.flow().source())
                .isEqualTo(
                        new SqlStatement.Snapshot(
                                at(1, 44),
                                new ReadFiles(at(1, 53), "snaps", Map.of("format", "csv"))));
        assertThat(f.flow().autoCdc())
                .isEqualTo(
                        new AutoCdc(
                                List.of("id"),
                                null,
                                null,
                                null,
                                null,
                                false,
                                2,
                                "city",
                                List.of(at(2, 9)),
                                null));

        CreateStreamingTable t =
                (CreateStreamingTable)
                        one(
                                "CREATE OR REFRESH STREAMING TABLE dim (id BIGINT, c STRING)"
                                        + " FLOW AUTO CDC FROM SNAPSHOT (LIVE.silver.accounts)"
                                        + " KEYS (id) COLUMNS * EXCEPT (c)");
        assertThat(t.flow().source())
                .isEqualTo(
                        new SqlStatement.Snapshot(
                                at(1, 80), new Named(at(1, 90), "silver.accounts")));
        assertThat(t.flow().autoCdc().columns()).isEqualTo("* EXCEPT (c)");

        CreateFlow apply =
                (CreateFlow) one("APPLY CHANGES INTO LIVE.t FROM SNAPSHOT src KEYS (a, b)");
        assertThat(apply.name()).isNull();
        assertThat(apply.target()).isEqualTo("t");
        assertThat(apply.flow().source())
                .isEqualTo(new SqlStatement.Snapshot(at(1, 32), new Named(at(1, 41), "src")));
        assertThat(apply.flow().autoCdc().keys()).containsExactly("a", "b");

        // a view or table named snapshot is still a source of change records
        CreateFlow named =
                (CreateFlow) one("CREATE FLOW f AS AUTO CDC INTO t FROM snapshot KEYS (a)");
        assertThat(named.flow().source()).isEqualTo(new Named(at(1, 39), "snapshot"));
    }

    @Test
    void autoCdcFromSnapshotRefusesTheClausesOfChangeRecordsAtTheClause() {
        String head = "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT s KEYS (a)\n  ";
        String flow = "INVALID_FLOW: AUTO CDC FROM SNAPSHOT takes no ";
        fails(
                head + "SEQUENCE BY v",
                SqlException.Code.INVALID_FLOW,
                "p.sql:2:3: "
                        + flow
                        + "SEQUENCE BY: the snapshot version orders the changes"
                        + " (docs/semantics.md A6)");
        fails(
                head + "APPLY AS DELETE WHEN op = 'd'",
                SqlException.Code.INVALID_FLOW,
                "p.sql:2:3: "
                        + flow
                        + "APPLY AS DELETE WHEN: a key absent from the next snapshot is the delete"
                        + " (docs/semantics.md A6)");
        fails(
                head + "APPLY AS TRUNCATE WHEN op = 't'",
                SqlException.Code.INVALID_FLOW,
                "p.sql:2:3: "
                        + flow
                        + "APPLY AS TRUNCATE WHEN: an empty snapshot after the first deletes every"
                        + " row (docs/semantics.md A6)");
        fails(
                "APPLY CHANGES INTO t FROM SNAPSHOT read_files('d') IGNORE NULL UPDATES KEYS (a)",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:52: "
                        + flow
                        + "IGNORE NULL UPDATES: a snapshot row is the whole row of its key, a null"
                        + " is a value (docs/semantics.md A6)");
    }

    @Test
    void autoCdcFromSnapshotRefusesOtherSourcesAndArguments() {
        String u = "UNSUPPORTED_STATEMENT: not supported by changeflow yet: ";
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT STREAM(s) KEYS (a)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:48: SYNTAX_ERROR: expected read_files('folder') or a table name after"
                        + " FROM SNAPSHOT (a snapshot source is read whole, version by version: no"
                        + " STREAM), found 'STREAM'");
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT read_kafka(subscribe => 'x')"
                        + " KEYS (a)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:48: "
                        + u
                        + "read_kafka(...) as a snapshot source (FROM SNAPSHOT reads"
                        + " read_files('folder') or a table)");
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT read_files('d', table => 'x')"
                        + " KEYS (a)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:64: "
                        + u
                        + "read_files of FROM SNAPSHOT argument 'table' (this release takes format"
                        + " => 'csv' | 'json'; each file is read by its extension)");
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT read_files('d', format =>"
                        + " 'parquet') KEYS (a)",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:64: INVALID_OPTION: read_files format 'parquet' of FROM SNAPSHOT:"
                        + " snapshot files are CSV with a header or JSON lines, named"
                        + " <name>_<version>.csv, .json or .jsonl (give format => 'csv' or"
                        + " 'json', or leave it out)");
        fails(
                "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT s",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:49: SYNTAX_ERROR: expected KEYS (...): an AUTO CDC flow needs its keys,"
                        + " found end of file");
        fails(
                "CREATE FLOW f AS AUTO CDC FROM SNAPSHOT s KEYS (a)",
                SqlException.Code.SYNTAX_ERROR,
                "p.sql:1:27: SYNTAX_ERROR: expected INTO after AUTO CDC, found 'FROM'");
    }
}

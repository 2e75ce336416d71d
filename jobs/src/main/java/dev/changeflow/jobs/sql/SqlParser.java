package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.config.IngestOptions;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlStatement.AlterSchedule;
import dev.changeflow.jobs.sql.SqlStatement.AutoCdc;
import dev.changeflow.jobs.sql.SqlStatement.Column;
import dev.changeflow.jobs.sql.SqlStatement.Constraint;
import dev.changeflow.jobs.sql.SqlStatement.Flow;
import dev.changeflow.jobs.sql.SqlStatement.Schedule;
import dev.changeflow.jobs.sql.SqlStatement.Source;
import dev.changeflow.operators.Expectation;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A hand-written recursive-descent parser for the streaming-table statements of a pipeline file
 * (docs/semantics.md S1, S2, S8). Keywords are case-insensitive and not reserved; statements end
 * with {@code ;} (the last one may omit it). The grammar, one method per rule:
 *
 * <pre>
 * script      := (statement? ';')* statement?
 * statement   := set | use | createTable | createView | createFlow | applyChanges | alterTable
 *              | refresh | describe | drop
 * set         := SET key '=' value                          -- key and value: any tokens
 * use         := USE CATALOG name | USE [SCHEMA | DATABASE | NAMESPACE] name
 * createTable := CREATE [OR REFRESH] STREAMING TABLE [IF NOT EXISTS] name
 *                [ '(' (column | constraint) (',' (column | constraint))* ')' ]
 *                { PARTITIONED BY '(' transform (',' transform)* ')' | COMMENT string
 *                | TBLPROPERTIES '(' key '=' value (',' key '=' value)* ')' | schedule }
 *                [ AS appendQuery | FLOW AUTO CDC FROM cdcSource cdcClause*
 *                | FLOW REPLACE USING '(' names ')' SEQUENCE BY expr BY NAME query   -- S5
 *                | FLOW REPLACE WHERE expr BY NAME flinkQuery ]                  -- S4
 * schedule    := SCHEDULE [REFRESH] ( EVERY number (HOUR[S] | DAY[S] | WEEK[S])
 *                | CRON string [AT TIME ZONE string] )
 * alterTable  := ALTER STREAMING TABLE name ( ADD schedule | ALTER schedule | DROP SCHEDULE )
 * refresh     := REFRESH STREAMING TABLE name (',' name)* [FULL] [WHERE flinkExpr]  -- S1, S4
 * describe    := (DESCRIBE | DESC) [TABLE] [EXTENDED] name   -- S9
 * drop        := DROP TABLE [IF EXISTS] name                 -- S9
 * column      := name type [NOT NULL] [COMMENT string]
 * constraint  := CONSTRAINT name EXPECT '(' expr ')'        -- S8
 *                [ON VIOLATION (DROP ROW | FAIL UPDATE)]
 * createView  := CREATE [OR REPLACE] (TEMPORARY | TEMP) VIEW name AS query
 * createFlow  := CREATE FLOW name [COMMENT string] AS
 *                ( AUTO CDC INTO name FROM cdcSource cdcClause* | INSERT INTO name [BY NAME] appendQuery )
 * applyChanges:= APPLY CHANGES INTO name FROM cdcSource cdcClause*
 * cdcSource   := source | SNAPSHOT snapshot                  -- A6
 * snapshot    := [ '(' ] ( read_files '(' string [',' format '=&gt;' ('csv' | 'json')] ')'
 *                | name ) [ ')' ]
 * query       := SELECT '*' FROM source
 * appendQuery := SELECT ('*' | selectList) FROM source [WHERE expr]   -- S1: Flink SQL, per row
 * flinkQuery  := SELECT ... | WITH ...       -- any Flink SQL query, up to ';' (S4)
 * source      := [STREAM] ( '(' sourceBody ')' | sourceBody )
 * sourceBody  := read_files '(' string (',' argName '=&gt;' value)* ')'
 *              | read_kafka '(' [argName '=&gt;' value (',' argName '=&gt;' value)*] ')' | name
 * cdcClause   := KEYS '(' name (',' name)* ')' | SEQUENCE BY expr
 *              | APPLY AS DELETE WHEN expr | APPLY AS TRUNCATE WHEN expr
 *              | COLUMNS selection | IGNORE NULL UPDATES
 *              | STORED AS SCD TYPE (1 | 2) | TRACK HISTORY ON selection
 * selection   := '*' [EXCEPT '(' names ')'] | '(' names ')' | names
 * name        := ident ('.' ident)*                         -- a leading LIVE. is dropped
 * </pre>
 *
 * The clauses of a flow come in any order, each at most once ({@code DUPLICATE_CLAUSE}); KEYS is
 * required. A flow FROM SNAPSHOT refuses SEQUENCE BY, APPLY AS DELETE / TRUNCATE WHEN and IGNORE
 * NULL UPDATES at the clause ({@code INVALID_FLOW}, A6). An {@code expr} is the tokens up to the
 * next clause keyword or {@code ;} outside parentheses, kept as Flink SQL text (double-quoted
 * strings become single-quoted). A type is the tokens up to {@code ,} or {@code )} outside {@code
 * ()} and {@code <>}, or up to NOT / COMMENT.
 *
 * <p>Statements and clauses of the vendor's dialect that changeflow does not implement yet fail
 * with {@code UNSUPPORTED_STATEMENT} naming them: GRANT, REVOKE, REFRESH other than of a streaming
 * table, DROP other than DROP TABLE, DESCRIBE other than DESCRIBE [TABLE] [EXTENDED], REORG, ALTER
 * other than a schedule change, ..., materialized views, CLUSTER BY, ROW FILTER, MASK, CONSTRAINT
 * ... EXPECT, TRIGGER ON UPDATE, STORED AS SCD TYPE BITEMPORAL, read_files arguments other than
 * {@code format}, {@code table} and {@code includeExistingFiles}, read_kafka arguments other than
 * {@code bootstrapServers}, {@code subscribe}, {@code subscribePattern} and {@code
 * startingOffsets}, a view's query other than {@code SELECT * FROM STREAM source}, and in an append
 * flow's query aggregates, window functions, DISTINCT, subqueries, joins and clauses other than
 * WHERE.
 */
@PublicEvolving
public final class SqlParser {
    /** Statements the vendor has that this release recognises and refuses. */
    private static final List<String> UNSUPPORTED_STATEMENTS =
            List.of(
                    "GRANT",
                    "REVOKE",
                    "REORG",
                    "INSERT",
                    "MERGE",
                    "SELECT",
                    "DELETE",
                    "UPDATE",
                    "TRUNCATE",
                    "OPTIMIZE",
                    "VACUUM",
                    "CALL",
                    "EXPLAIN",
                    "SHOW",
                    "WITH",
                    "RESET",
                    "COPY",
                    "MSCK",
                    "ANALYZE",
                    "CACHE",
                    "UNCACHE",
                    "RESTORE",
                    "COMMENT");

    /** The named arguments of {@code read_files} this release takes. */
    static final List<String> READ_FILES_ARGUMENTS =
            List.of(
                    "format",
                    "table",
                    "includeExistingFiles",
                    "schemaHints",
                    "maxFilesPerTrigger",
                    "header",
                    "sep",
                    "delimiter",
                    "quote",
                    "escape",
                    "nullValue",
                    "comment");

    /**
     * The {@code read_files} arguments of CSV files (docs/semantics.md S2) and the job option each
     * sets ({@code delimiter} is the vendor's other name of {@code sep}).
     */
    static final Map<String, String> CSV_ARGUMENTS =
            Map.of(
                    "header", "csv-header",
                    "sep", "csv-sep",
                    "delimiter", "csv-sep",
                    "quote", "csv-quote",
                    "escape", "csv-escape",
                    "nullValue", "csv-null-value",
                    "comment", "csv-comment");

    /** {@code read_files} argument {@code maxFilesPerTrigger} (docs/semantics.md S2). */
    static final String MAX_FILES_PER_TRIGGER = "maxFilesPerTrigger";

    /** {@code read_files} argument {@code schemaHints} (docs/semantics.md S2). */
    static final String SCHEMA_HINTS = "schemaHints";

    /** {@code read_files} argument {@code includeExistingFiles} (docs/semantics.md S2). */
    static final String INCLUDE_EXISTING_FILES = "includeExistingFiles";

    /** The arguments of {@code read_kafka} this release takes (names as the vendor spells them). */
    static final List<String> READ_KAFKA_ARGUMENTS =
            List.of("bootstrapServers", "subscribe", "subscribePattern", "startingOffsets");

    private final List<SqlToken> tokens;
    private int at;

    private SqlParser(List<SqlToken> tokens) {
        this.tokens = tokens;
    }

    /**
     * Parses a pipeline file.
     *
     * @param text the file's text
     * @param file how positions name the file (e.g. the path as given on the command line)
     * @return the statements in file order
     * @throws SqlException {@code SYNTAX_ERROR}, {@code UNSUPPORTED_STATEMENT} or {@code
     *     DUPLICATE_CLAUSE} at the first error
     */
    public static List<SqlStatement> parse(String text, String file) {
        return new SqlParser(SqlTokenizer.tokenize(text, file)).script();
    }

    /**
     * Parses a table-maintenance statement of {@code bin/changeflow sql} ({@link
     * MaintenanceStatement}: {@code OPTIMIZE t}, {@code REORG TABLE t APPLY (PURGE)}, {@code VACUUM
     * t [RETAIN n HOURS]}, an optional {@code ;}).
     *
     * @param label how positions name the statement
     * @return empty when the text starts with another word
     * @throws SqlException {@code SYNTAX_ERROR} or {@code UNSUPPORTED_STATEMENT} at the first error
     */
    static Optional<MaintenanceStatement> parseMaintenance(String text, String label) {
        SqlParser p = new SqlParser(SqlTokenizer.tokenize(text, label));
        SqlToken first = p.peek();
        if (!first.isWord("OPTIMIZE") && !first.isWord("REORG") && !first.isWord("VACUUM")) {
            String near = nearKeyword(first, "OPTIMIZE", "REORG", "VACUUM");
            if (near != null && !FLINK_STATEMENT_WORDS.contains(upper(first))) {
                throw p.expectedNear(
                        "a Flink SQL statement or OPTIMIZE, REORG TABLE or VACUUM", near);
            }
            return Optional.empty();
        }
        MaintenanceStatement s = p.maintenance();
        p.acceptSymbol(";");
        if (p.peek().kind() != SqlToken.Kind.END) {
            throw p.expected("the end of the statement");
        }
        return Optional.of(s);
    }

    // ------------------------------------------------------------------------------ statements

    private List<SqlStatement> script() {
        List<SqlStatement> out = new ArrayList<>();
        while (peek().kind() != SqlToken.Kind.END) {
            if (peek().isSymbol(";")) {
                at++;
                continue;
            }
            out.add(statement());
            if (!peek().isSymbol(";") && peek().kind() != SqlToken.Kind.END) {
                throw expected("';' after the statement");
            }
        }
        return out;
    }

    private SqlStatement statement() {
        SqlToken t = peek();
        if (t.isWord("SET")) {
            return set();
        }
        if (t.isWord("USE")) {
            return use();
        }
        if (t.isWord("CREATE")) {
            return create();
        }
        if (t.isWord("APPLY")) {
            return applyChanges();
        }
        if (t.isWord("ALTER")) {
            return alter();
        }
        if (t.isWord("REFRESH")) {
            return refresh();
        }
        if (t.isWord("DESCRIBE") || t.isWord("DESC")) {
            return describe();
        }
        if (t.isWord("DROP")) {
            return drop();
        }
        if (t.kind() == SqlToken.Kind.WORD
                && UNSUPPORTED_STATEMENTS.contains(t.text().toUpperCase(Locale.ROOT))) {
            throw unsupported(t, t.text().toUpperCase(Locale.ROOT) + " statements");
        }
        String near =
                nearKeyword(
                        t, "CREATE", "APPLY", "SET", "USE", "ALTER", "REFRESH", "DESCRIBE", "DROP");
        if (near != null) {
            throw expectedNear("a statement (CREATE, APPLY CHANGES, SET or USE)", near);
        }
        throw expected("a statement (CREATE, APPLY CHANGES, SET or USE)");
    }

    private SqlStatement set() {
        SqlPosition pos = next().position();
        int keyFrom = at;
        while (!peek().isSymbol("=") && !atStatementEnd()) {
            at++;
        }
        if (at == keyFrom) {
            throw expected("a key after SET (SET key = value)");
        }
        int keyTo = at;
        expectSymbol("=", "'=' after the key of SET (SET key = value)");
        int valueFrom = at;
        while (!atStatementEnd()) {
            at++;
        }
        if (at == valueFrom) {
            throw expected("a value after '=' (SET key = value)");
        }
        return new SqlStatement.Set(pos, literal(keyFrom, keyTo), literal(valueFrom, at));
    }

    private SqlStatement use() {
        SqlPosition pos = next().position();
        if (peek().isWord("CATALOG")) {
            at++;
            return new SqlStatement.Use(pos, name("a catalog name after USE CATALOG"), null);
        }
        if (peek().isWord("SCHEMA") || peek().isWord("DATABASE") || peek().isWord("NAMESPACE")) {
            at++;
        }
        return new SqlStatement.Use(pos, null, name("a schema name after USE"));
    }

    private SqlStatement create() {
        SqlToken create = next();
        SqlPosition pos = create.position();
        boolean orRefresh = false;
        boolean orReplace = false;
        if (peek().isWord("OR")) {
            at++;
            if (peek().isWord("REFRESH")) {
                orRefresh = true;
            } else if (peek().isWord("REPLACE")) {
                orReplace = true;
            } else {
                throw expected("REFRESH or REPLACE after CREATE OR");
            }
            at++;
        }
        SqlToken kind = peek();
        if (kind.isWord("STREAMING") && !orReplace) {
            at++;
            expectWord("TABLE", "TABLE after STREAMING");
            return streamingTable(pos);
        }
        if ((kind.isWord("TEMPORARY") || kind.isWord("TEMP")) && !orRefresh) {
            at++;
            expectWord("VIEW", "VIEW after CREATE TEMPORARY");
            return view(pos);
        }
        if (kind.isWord("FLOW") && !orRefresh && !orReplace) {
            at++;
            return flow(pos);
        }
        if (kind.isWord("MATERIALIZED")) {
            throw unsupported(kind, "materialized views (CREATE MATERIALIZED VIEW)");
        }
        if (kind.isWord("LIVE")) {
            throw unsupported(kind, "CREATE LIVE TABLE / VIEW (use CREATE STREAMING TABLE)");
        }
        if (kind.isWord("VIEW")) {
            throw unsupported(kind, "persisted views (CREATE VIEW; use CREATE TEMPORARY VIEW)");
        }
        String createKinds = "STREAMING TABLE, TEMPORARY VIEW or FLOW after CREATE";
        if (kind.kind() == SqlToken.Kind.WORD) {
            String near = nearKeyword(kind, "STREAMING", "TEMPORARY", "FLOW", "MATERIALIZED");
            if (near != null) {
                // a misspelt keyword is a syntax error, not a statement we do not implement
                throw expectedNear(createKinds, near);
            }
            throw unsupported(
                    kind, "CREATE " + kind.text().toUpperCase(Locale.ROOT) + " statements");
        }
        throw expected(createKinds);
    }

    private SqlStatement streamingTable(SqlPosition pos) {
        if (peek().isWord("IF")) {
            at++;
            expectWord("NOT", "NOT after IF");
            expectWord("EXISTS", "EXISTS after IF NOT");
        }
        String name = name("a table name after STREAMING TABLE");
        List<Column> columns = new ArrayList<>();
        List<Constraint> constraints = new ArrayList<>();
        if (peek().isSymbol("(")) {
            at++;
            do {
                if (peek().isWord("CONSTRAINT")) {
                    Constraint c = constraint();
                    for (Constraint o : constraints) {
                        if (o.name().equalsIgnoreCase(c.name())) {
                            throw new SqlException(
                                    Code.DUPLICATE_EXPECTATION,
                                    c.position(),
                                    "table "
                                            + name
                                            + " already has the expectation '"
                                            + o.name()
                                            + "' (at "
                                            + o.position()
                                            + "); give each CONSTRAINT its own name");
                        }
                    }
                    constraints.add(c);
                } else {
                    columns.add(column());
                }
            } while (acceptSymbol(","));
            expectSymbol(")", "',' or ')' in the column list");
        }
        List<String> partitionedBy = null;
        String comment = null;
        Map<String, String> properties = null;
        Schedule schedule = null;
        while (true) {
            SqlToken t = peek();
            if (t.isWord("PARTITIONED")) {
                at++;
                expectWord("BY", "BY after PARTITIONED");
                once(partitionedBy, t, "PARTITIONED BY");
                partitionedBy = partitionItems();
            } else if (t.isWord("COMMENT")) {
                at++;
                once(comment, t, "COMMENT");
                comment = string("a string after COMMENT");
            } else if (t.isWord("TBLPROPERTIES")) {
                at++;
                once(properties, t, "TBLPROPERTIES");
                properties = properties();
            } else if (t.isWord("SCHEDULE")) {
                once(schedule, t, "SCHEDULE");
                schedule = schedule();
            } else if (t.isWord("CLUSTER")) {
                throw unsupported(t, "CLUSTER BY");
            } else if (t.isWord("WITH")) {
                throw unsupported(t, "WITH ROW FILTER (access control is planned: S6)");
            } else if (t.isWord("TRIGGER")) {
                throw unsupported(t, "TRIGGER ON UPDATE");
            } else if (t.isWord("LOCATION") || t.isWord("USING") || t.isWord("OPTIONS")) {
                throw unsupported(t, t.text().toUpperCase(Locale.ROOT) + " on a streaming table");
            } else {
                break;
            }
        }
        Flow flow = null;
        SqlToken t = peek();
        if (t.isWord("AS")) {
            at++;
            flow = appendFlow(t.position());
        } else if (t.isWord("FLOW")) {
            at++;
            SqlToken kind = peek();
            if (kind.isWord("AUTO")) {
                at++;
                expectWord("CDC", "CDC after FLOW AUTO");
                flow = autoCdcFlow(kind.position());
            } else if (kind.isWord("REPLACE")) {
                at++;
                if (peek().isWord("USING")) {
                    at++;
                    flow = replaceUsingFlow(kind.position());
                } else if (peek().isWord("WHERE")) {
                    at++;
                    flow = replaceWhereFlow(kind.position());
                } else {
                    throw unsupported(kind, "FLOW REPLACE");
                }
            } else if (kind.kind() == SqlToken.Kind.WORD) {
                throw unsupported(kind, "FLOW " + kind.text().toUpperCase(Locale.ROOT));
            } else {
                throw expected("AUTO CDC after FLOW");
            }
        } else if (!atStatementEnd()) {
            throw expected(
                    "PARTITIONED BY, COMMENT, TBLPROPERTIES, AS SELECT, FLOW AUTO CDC or ';'");
        }
        return new SqlStatement.CreateStreamingTable(
                pos,
                name,
                columns,
                partitionedBy == null ? List.of() : partitionedBy,
                comment,
                properties == null ? Map.of() : properties,
                flow,
                schedule,
                constraints);
    }

    /**
     * {@code CONSTRAINT name EXPECT (expression) [ON VIOLATION DROP ROW | FAIL UPDATE]}
     * (docs/semantics.md S8); the expression is kept as Flink SQL text, checked when planned.
     */
    private Constraint constraint() {
        SqlToken kw = peek();
        at++;
        String name = identifier("a constraint name after CONSTRAINT");
        SqlToken t = peek();
        if (t.isWord("CHECK") || t.isWord("PRIMARY") || t.isWord("FOREIGN")) {
            throw unsupported(
                    t,
                    "CONSTRAINT ... "
                            + t.text().toUpperCase(Locale.ROOT)
                            + " (only CONSTRAINT ... EXPECT; KEYS of the flow give the key)");
        }
        expectWord("EXPECT", "EXPECT after CONSTRAINT " + name);
        expectSymbol("(", "'(' after EXPECT");
        int from = at;
        int depth = 0;
        while (true) {
            SqlToken x = peek();
            if (x.kind() == SqlToken.Kind.END || x.isSymbol(";")) {
                throw expected("')' to close EXPECT (...) of CONSTRAINT " + name);
            }
            if (x.isSymbol("(")) {
                depth++;
            } else if (x.isSymbol(")")) {
                if (depth == 0) {
                    break;
                }
                depth--;
            }
            at++;
        }
        if (at == from) {
            throw expected("an expression in EXPECT (...) of CONSTRAINT " + name);
        }
        String expression = text(from, at);
        at++; // ')'
        Expectation.OnViolation on = Expectation.OnViolation.KEEP;
        if (peek().isWord("ON")) {
            at++;
            expectWord("VIOLATION", "VIOLATION after ON");
            SqlToken what = peek();
            if (what.isWord("DROP")) {
                at++;
                expectWord("ROW", "ROW after ON VIOLATION DROP");
                on = Expectation.OnViolation.DROP_ROW;
            } else if (what.isWord("FAIL")) {
                at++;
                expectWord("UPDATE", "UPDATE after ON VIOLATION FAIL");
                on = Expectation.OnViolation.FAIL_UPDATE;
            } else {
                throw expected("DROP ROW or FAIL UPDATE after ON VIOLATION");
            }
        }
        return new Constraint(kw.position(), name, expression, on);
    }

    /**
     * {@code ALTER STREAMING TABLE name (ADD SCHEDULE ... | ALTER SCHEDULE ... | DROP SCHEDULE)}.
     */
    private SqlStatement alter() {
        SqlToken alter = next();
        if (!peek().isWord("STREAMING") || !peekAt(1).isWord("TABLE")) {
            throw unsupported(
                    alter,
                    "ALTER statements other than ALTER STREAMING TABLE t ADD | ALTER | DROP"
                            + " SCHEDULE");
        }
        at += 2;
        String table = name("a table name after ALTER STREAMING TABLE");
        SqlToken action = peek();
        AlterSchedule.Action what;
        if (action.isWord("ADD")) {
            what = AlterSchedule.Action.ADD;
        } else if (action.isWord("ALTER")) {
            what = AlterSchedule.Action.ALTER;
        } else if (action.isWord("DROP")) {
            what = AlterSchedule.Action.DROP;
        } else if (action.kind() == SqlToken.Kind.WORD) {
            throw unsupported(
                    action,
                    "ALTER STREAMING TABLE ... "
                            + action.text().toUpperCase(Locale.ROOT)
                            + " (only ADD | ALTER | DROP SCHEDULE)");
        } else {
            throw expected("ADD, ALTER or DROP after ALTER STREAMING TABLE " + table);
        }
        at++;
        if (!peek().isWord("SCHEDULE")) {
            if (peek().kind() == SqlToken.Kind.WORD) {
                throw unsupported(
                        peek(),
                        "ALTER STREAMING TABLE ... "
                                + what
                                + " "
                                + peek().text().toUpperCase(Locale.ROOT)
                                + " (only ADD | ALTER | DROP SCHEDULE)");
            }
            throw expected("SCHEDULE after " + what);
        }
        if (what == AlterSchedule.Action.DROP) {
            at++;
            return new AlterSchedule(alter.position(), table, what, null);
        }
        return new AlterSchedule(alter.position(), table, what, schedule());
    }

    /** {@code REFRESH STREAMING TABLE name (',' name)* [FULL]} (S1). */
    private SqlStatement refresh() {
        SqlToken refresh = next();
        if (!peek().isWord("STREAMING") || !peekAt(1).isWord("TABLE")) {
            if (peek().kind() == SqlToken.Kind.WORD) {
                throw unsupported(
                        peek(),
                        "REFRESH "
                                + peek().text().toUpperCase(Locale.ROOT)
                                + " (only REFRESH STREAMING TABLE t [FULL])");
            }
            throw expected("STREAMING TABLE after REFRESH");
        }
        at += 2;
        List<String> tables = new ArrayList<>();
        do {
            tables.add(name("a table name after REFRESH STREAMING TABLE"));
        } while (acceptSymbol(","));
        boolean full = false;
        if (peek().isWord("FULL")) {
            at++;
            full = true;
        }
        String where = null;
        SqlPosition wherePosition = null;
        if (peek().isWord("WHERE")) {
            // S4: a REPLACE WHERE table's predicate for this refresh only
            at++;
            wherePosition = peek().position();
            int from = at;
            while (!atStatementEnd()) {
                at++;
            }
            if (at == from) {
                throw expected("a predicate after WHERE");
            }
            where = layout(from, at);
        }
        if (!atStatementEnd()) {
            throw expected(
                    "FULL, WHERE or ';' after REFRESH STREAMING TABLE "
                            + String.join(", ", tables));
        }
        return new SqlStatement.Refresh(refresh.position(), tables, full, where, wherePosition);
    }

    /**
     * {@code DESCRIBE [TABLE] [EXTENDED] name} ({@code DESC} alike; docs/semantics.md S9). {@code
     * DESCRIBE DETAIL}, {@code HISTORY}, {@code QUERY}, {@code FUNCTION}, {@code SCHEMA} and the
     * like are {@code UNSUPPORTED_STATEMENT}; a column name after the table ({@code DESCRIBE t
     * col}) too.
     */
    private SqlStatement describe() {
        SqlToken describe = next();
        if (peek().isWord("TABLE")) {
            at++;
        } else {
            for (String other :
                    List.of(
                            "DETAIL",
                            "HISTORY",
                            "QUERY",
                            "FUNCTION",
                            "SCHEMA",
                            "DATABASE",
                            "CATALOG",
                            "VOLUME",
                            "EXTERNAL",
                            "PROVIDER",
                            "RECIPIENT",
                            "SHARE",
                            "CONNECTION",
                            "CREDENTIAL",
                            "LOCATION")) {
                if (peek().isWord(other) && peekAt(1).isIdentifier()) {
                    throw unsupported(
                            peek(),
                            "DESCRIBE "
                                    + other
                                    + " (only DESCRIBE TABLE [EXTENDED] t of a streaming table)");
                }
            }
        }
        boolean extended = false;
        if (peek().isWord("EXTENDED") && peekAt(1).isIdentifier()) {
            at++;
            extended = true;
        }
        SqlToken table = peek();
        String name = name("a table name after DESCRIBE TABLE");
        if (!atStatementEnd()) {
            if (peek().isIdentifier()) {
                throw unsupported(
                        peek(),
                        "DESCRIBE of one column (DESCRIBE TABLE [EXTENDED] t describes the whole"
                                + " table)");
            }
            throw expected("';' after DESCRIBE TABLE " + name);
        }
        return new SqlStatement.Describe(describe.position(), name, table.position(), extended);
    }

    /**
     * {@code DROP TABLE [IF EXISTS] name} (docs/semantics.md S9); other {@code DROP} statements
     * ({@code VIEW}, {@code SCHEMA}, {@code MATERIALIZED VIEW}, ...) and {@code PURGE} are {@code
     * UNSUPPORTED_STATEMENT}.
     */
    private SqlStatement drop() {
        SqlToken drop = next();
        if (!peek().isWord("TABLE")) {
            if (peek().kind() == SqlToken.Kind.WORD) {
                throw unsupported(
                        peek(),
                        "DROP "
                                + peek().text().toUpperCase(Locale.ROOT)
                                + " (only DROP TABLE [IF EXISTS] t)");
            }
            throw expected("TABLE after DROP");
        }
        at++;
        boolean ifExists = false;
        if (peek().isWord("IF") && peekAt(1).isWord("EXISTS")) {
            at += 2;
            ifExists = true;
        } else if (peek().isWord("IF")
                && !peekAt(1).isSymbol(".")
                && !peekAt(1).isSymbol(";")
                && peekAt(1).kind() != SqlToken.Kind.END) {
            at++;
            throw expected("EXISTS after DROP TABLE IF");
        }
        SqlToken table = peek();
        String name = name("a table name after DROP TABLE");
        if (!atStatementEnd()) {
            if (peek().isWord("PURGE")) {
                throw unsupported(
                        peek(),
                        "DROP TABLE ... PURGE (DROP TABLE always deletes the table's files)");
            }
            throw expected("';' after DROP TABLE " + name);
        }
        return new SqlStatement.Drop(drop.position(), name, table.position(), ifExists);
    }

    /**
     * {@code SCHEDULE [REFRESH] (EVERY n unit | CRON 'quartz' [AT TIME ZONE 'tz'])}, checked:
     * {@code n} in 1–72 hours, 1–31 days or 1–8 weeks, the Quartz expression convertible to a
     * Kubernetes cron expression, the time zone an IANA zone id (S3).
     */
    private Schedule schedule() {
        SqlToken kw = next();
        if (peek().isWord("REFRESH")) {
            at++;
        }
        SqlToken how = peek();
        if (how.isWord("EVERY")) {
            at++;
            SqlToken n = peek();
            if (n.kind() != SqlToken.Kind.NUMBER || !n.text().matches("\\d+")) {
                throw expected("a whole number after SCHEDULE EVERY");
            }
            at++;
            SqlToken unitToken = peek();
            String u =
                    unitToken.kind() == SqlToken.Kind.WORD
                            ? unitToken.text().toUpperCase(Locale.ROOT)
                            : "";
            Schedule.Unit unit;
            int max;
            if (u.equals("HOUR") || u.equals("HOURS")) {
                unit = Schedule.Unit.HOURS;
                max = 72;
            } else if (u.equals("DAY") || u.equals("DAYS")) {
                unit = Schedule.Unit.DAYS;
                max = 31;
            } else if (u.equals("WEEK") || u.equals("WEEKS")) {
                unit = Schedule.Unit.WEEKS;
                max = 8;
            } else {
                throw expected("HOUR(S), DAY(S) or WEEK(S) after SCHEDULE EVERY " + n.text());
            }
            at++;
            long count = n.text().length() > 9 ? Long.MAX_VALUE : Long.parseLong(n.text());
            if (count < 1 || count > max) {
                throw new SqlException(
                        Code.INVALID_SCHEDULE,
                        n.position(),
                        "SCHEDULE EVERY "
                                + n.text()
                                + " "
                                + u
                                + " is out of range: EVERY takes 1–72 hours, 1–31 days or 1–8"
                                + " weeks");
            }
            if (peek().isWord("AT")) {
                throw unsupported(peek(), "AT TIME ZONE after SCHEDULE EVERY (only after CRON)");
            }
            return new Schedule.Every(kw.position(), (int) count, unit);
        }
        if (how.isWord("CRON")) {
            at++;
            SqlToken q = peek();
            String quartz = string("the Quartz cron expression as a string after SCHEDULE CRON");
            try {
                KubernetesCron.fromQuartz(quartz);
            } catch (IllegalArgumentException e) {
                throw new SqlException(Code.INVALID_SCHEDULE, q.position(), e.getMessage());
            }
            String zone = null;
            if (peek().isWord("AT")) {
                at++;
                expectWord("TIME", "TIME after AT");
                expectWord("ZONE", "ZONE after AT TIME");
                SqlToken z = peek();
                zone = string("the time zone as a string after AT TIME ZONE");
                if (!ZoneId.getAvailableZoneIds().contains(zone)) {
                    throw new SqlException(
                            Code.INVALID_SCHEDULE,
                            z.position(),
                            "unknown time zone '"
                                    + zone
                                    + "': give an IANA time zone id such as 'UTC' or"
                                    + " 'America/Los_Angeles'");
                }
            }
            return new Schedule.Cron(kw.position(), quartz, zone);
        }
        throw expected("EVERY or CRON after SCHEDULE");
    }

    private Column column() {
        SqlToken t = peek();
        if (t.isWord("PRIMARY") || t.isWord("FOREIGN")) {
            throw unsupported(t, "table constraints (KEYS of the flow give the key)");
        }
        String name = identifier("a column name");
        int from = at;
        SqlPosition typePosition = peek().position();
        int depth = 0;
        while (true) {
            SqlToken x = peek();
            if (x.kind() == SqlToken.Kind.END || x.isSymbol(";")) {
                break;
            }
            if (depth == 0
                    && (x.isSymbol(",")
                            || x.isSymbol(")")
                            || x.isWord("NOT")
                            || x.isWord("COMMENT")
                            || x.isWord("MASK")
                            || x.isWord("GENERATED")
                            || x.isWord("DEFAULT"))) {
                break;
            }
            if (x.isSymbol("(") || x.isSymbol("<")) {
                depth++;
            } else if (x.isSymbol(")") || x.isSymbol(">")) {
                depth--;
            }
            at++;
        }
        if (at == from) {
            throw expected("a type for column " + name);
        }
        String type = text(from, at);
        boolean notNull = false;
        String comment = null;
        while (true) {
            SqlToken x = peek();
            if (x.isWord("NOT")) {
                at++;
                expectWord("NULL", "NULL after NOT");
                notNull = true;
            } else if (x.isWord("COMMENT")) {
                at++;
                comment = string("a string after COMMENT");
            } else if (x.isWord("MASK")) {
                throw unsupported(x, "column MASK (access control is planned: S6)");
            } else if (x.isWord("GENERATED") || x.isWord("DEFAULT")) {
                throw unsupported(x, x.text().toUpperCase(Locale.ROOT) + " columns");
            } else {
                break;
            }
        }
        return new Column(name, type, notNull, comment, typePosition);
    }

    private List<String> partitionItems() {
        expectSymbol("(", "'(' after PARTITIONED BY");
        List<String> items = new ArrayList<>();
        do {
            int from = at;
            int depth = 0;
            while (!atStatementEnd()) {
                SqlToken x = peek();
                if (depth == 0 && (x.isSymbol(",") || x.isSymbol(")"))) {
                    break;
                }
                depth += x.isSymbol("(") ? 1 : x.isSymbol(")") ? -1 : 0;
                at++;
            }
            if (at == from) {
                throw expected("a column or transform in PARTITIONED BY");
            }
            items.add(text(from, at));
        } while (acceptSymbol(","));
        expectSymbol(")", "',' or ')' in PARTITIONED BY");
        return items;
    }

    private Map<String, String> properties() {
        expectSymbol("(", "'(' after TBLPROPERTIES");
        Map<String, String> out = new LinkedHashMap<>();
        do {
            SqlToken keyToken = peek();
            String key;
            if (keyToken.kind() == SqlToken.Kind.STRING) {
                at++;
                key = keyToken.value();
            } else {
                key = name("a property key ('key' = 'value')");
            }
            expectSymbol("=", "'=' after the property key");
            out.put(key, value("a property value"));
        } while (acceptSymbol(","));
        expectSymbol(")", "',' or ')' in TBLPROPERTIES");
        return out;
    }

    private SqlStatement view(SqlPosition pos) {
        String name = name("a view name after VIEW");
        expectWord("AS", "AS after the view name");
        return new SqlStatement.CreateView(pos, name, query());
    }

    private SqlStatement flow(SqlPosition pos) {
        String name = name("a flow name after CREATE FLOW");
        if (peek().isWord("COMMENT")) {
            at++;
            string("a string after COMMENT");
        }
        expectWord("AS", "AS after the flow name");
        SqlToken kind = peek();
        if (kind.isWord("AUTO")) {
            at++;
            expectWord("CDC", "CDC after AUTO");
            expectWord("INTO", "INTO after AUTO CDC");
            String target = name("a table name after INTO");
            return new SqlStatement.CreateFlow(pos, name, target, autoCdcFlow(kind.position()));
        }
        if (kind.isWord("INSERT")) {
            at++;
            if (peek().isWord("OVERWRITE")) {
                throw unsupported(peek(), "INSERT OVERWRITE flows");
            }
            expectWord("INTO", "INTO after INSERT");
            String target = name("a table name after INSERT INTO");
            if (peek().isWord("BY")) {
                at++;
                expectWord("NAME", "NAME after BY");
            }
            return new SqlStatement.CreateFlow(pos, name, target, appendFlow(kind.position()));
        }
        if (kind.kind() == SqlToken.Kind.WORD) {
            throw unsupported(kind, "flows AS " + kind.text().toUpperCase(Locale.ROOT));
        }
        throw expected("AUTO CDC INTO or INSERT INTO after AS");
    }

    private SqlStatement applyChanges() {
        SqlPosition pos = next().position();
        expectWord("CHANGES", "CHANGES after APPLY");
        expectWord("INTO", "INTO after APPLY CHANGES");
        String target = name("a table name after INTO");
        return new SqlStatement.CreateFlow(pos, null, target, autoCdcFlow(pos));
    }

    // ------------------------------------------------------------------------- flows and sources

    /** {@code FROM source cdcClause*} of an AUTO CDC flow. */
    /**
     * {@code REPLACE USING '(' names ')' SEQUENCE BY expr BY NAME query}, after {@code FLOW REPLACE
     * USING} (docs/semantics.md S5).
     */
    private Flow replaceUsingFlow(SqlPosition pos) {
        expectSymbol("(", "'(' after REPLACE USING");
        List<SqlPosition> keyPositions = new ArrayList<>();
        List<String> keys = names("REPLACE USING", keyPositions);
        expectSymbol(")", "',' or ')' in REPLACE USING (...)");
        expectWord("SEQUENCE", "SEQUENCE BY after REPLACE USING (...)");
        expectWord("BY", "BY after SEQUENCE");
        SqlPosition sequencePosition = peek().position();
        int sequenceFrom = at;
        String sequenceBy = expression("SEQUENCE BY");
        checkStructColumns(sequenceFrom, at);
        expectWord("BY", "BY NAME after SEQUENCE BY (REPLACE USING matches columns by name)");
        expectWord("NAME", "NAME after BY");
        Source source = query();
        return new Flow(
                pos,
                source,
                null,
                new SqlStatement.ReplaceUsing(keys, sequenceBy, keyPositions, sequencePosition));
    }

    /**
     * {@code REPLACE WHERE predicate BY NAME query}, after {@code FLOW REPLACE WHERE}
     * (docs/semantics.md S4); the predicate and the query (everything up to the statement's end)
     * are Flink SQL, kept as laid out in the file and planned when the table is refreshed.
     */
    private Flow replaceWhereFlow(SqlPosition pos) {
        int from = at;
        SqlPosition predicatePosition = peek().position();
        expression("REPLACE WHERE");
        String predicate = layout(from, at);
        expectWord("BY", "BY NAME after the REPLACE WHERE predicate (it matches columns by name)");
        expectWord("NAME", "NAME after BY");
        SqlToken select = peek();
        if (!select.isWord("SELECT") && !select.isWord("WITH")) {
            throw expected("a query (SELECT ...) after BY NAME");
        }
        int q = at;
        while (!atStatementEnd()) {
            at++;
        }
        return new Flow(
                pos,
                null,
                null,
                null,
                new SqlStatement.ReplaceWhere(
                        predicate, predicatePosition, layout(q, at), select.position()));
    }

    /**
     * The text of tokens {@code from..to-1} laid out as in the file: line breaks and the columns of
     * tokens kept (comments become blanks), so an offset in the text maps back to the file from the
     * first token's position.
     */
    private String layout(int from, int to) {
        StringBuilder b = new StringBuilder();
        for (int i = from; i < to; i++) {
            SqlToken t = tokens.get(i);
            if (i > from) {
                SqlToken prev = tokens.get(i - 1);
                SqlPosition p = prev.position();
                int prevEndColumn = p.column() + (prev.end() - prev.start());
                if (t.position().line() > p.line()) {
                    b.append("\n".repeat(t.position().line() - p.line()));
                    b.append(" ".repeat(Math.max(0, t.position().column() - 1)));
                } else if (t.position().column() > prevEndColumn) {
                    b.append(" ".repeat(t.position().column() - prevEndColumn));
                } else if (t.start() > prev.end()) {
                    b.append(' ');
                }
            }
            b.append(t.flinkText());
        }
        return b.toString();
    }

    private Flow autoCdcFlow(SqlPosition pos) {
        expectWord("FROM", "FROM and the source");
        SqlToken snapshot = peek();
        boolean fromSnapshot =
                snapshot.isWord("SNAPSHOT")
                        && (peekAt(1).isIdentifier() || peekAt(1).isSymbol("("))
                        // FROM snapshot KEYS (...): a view or table named snapshot
                        && !(peekAt(1).isWord("KEYS") && peekAt(2).isSymbol("("));
        Source source = fromSnapshot ? snapshotSource() : source();
        List<String> keys = null;
        List<SqlPosition> keyPositions = new ArrayList<>();
        String sequenceBy = null;
        SqlPosition sequencePosition = null;
        String deleteWhen = null;
        String truncateWhen = null;
        String columns = null;
        Boolean ignoreNulls = null;
        Integer scdType = null;
        String trackHistory = null;
        while (!atStatementEnd()) {
            SqlToken t = peek();
            if (fromSnapshot) {
                refuseForSnapshot(t);
            }
            if (t.isWord("KEYS")) {
                at++;
                once(keys, t, "KEYS");
                expectSymbol("(", "'(' after KEYS");
                keys = names("KEYS", keyPositions);
                expectSymbol(")", "',' or ')' in KEYS");
            } else if (t.isWord("SEQUENCE")) {
                at++;
                expectWord("BY", "BY after SEQUENCE");
                once(sequenceBy, t, "SEQUENCE BY");
                sequencePosition = peek().position();
                int sequenceFrom = at;
                sequenceBy = expression("SEQUENCE BY");
                checkStructColumns(sequenceFrom, at);
            } else if (t.isWord("APPLY")) {
                at++;
                expectWord("AS", "AS after APPLY");
                SqlToken what = peek();
                if (what.isWord("DELETE")) {
                    at++;
                    expectWord("WHEN", "WHEN after APPLY AS DELETE");
                    once(deleteWhen, t, "APPLY AS DELETE WHEN");
                    deleteWhen = expression("APPLY AS DELETE WHEN");
                } else if (what.isWord("TRUNCATE")) {
                    at++;
                    expectWord("WHEN", "WHEN after APPLY AS TRUNCATE");
                    once(truncateWhen, t, "APPLY AS TRUNCATE WHEN");
                    truncateWhen = expression("APPLY AS TRUNCATE WHEN");
                } else {
                    throw expected("DELETE or TRUNCATE after APPLY AS");
                }
            } else if (t.isWord("COLUMNS")) {
                at++;
                if (peek().isWord("TO")) {
                    throw unsupported(peek(), "COLUMNS TO UPDATE");
                }
                once(columns, t, "COLUMNS");
                columns = selection("COLUMNS");
            } else if (t.isWord("IGNORE")) {
                at++;
                expectWord("NULL", "NULL after IGNORE");
                expectWord("UPDATES", "UPDATES after IGNORE NULL");
                once(ignoreNulls, t, "IGNORE NULL UPDATES");
                ignoreNulls = true;
            } else if (t.isWord("STORED")) {
                at++;
                expectWord("AS", "AS after STORED");
                expectWord("SCD", "SCD after STORED AS");
                expectWord("TYPE", "TYPE after STORED AS SCD");
                once(scdType, t, "STORED AS SCD TYPE");
                SqlToken n = peek();
                if (n.isWord("BITEMPORAL")) {
                    throw unsupported(n, "STORED AS SCD TYPE BITEMPORAL");
                }
                if (n.kind() == SqlToken.Kind.NUMBER && n.text().equals("1")) {
                    scdType = 1;
                } else if (n.kind() == SqlToken.Kind.NUMBER && n.text().equals("2")) {
                    scdType = 2;
                } else {
                    throw expected("1 or 2 after STORED AS SCD TYPE");
                }
                at++;
            } else if (t.isWord("TRACK")) {
                at++;
                expectWord("HISTORY", "HISTORY after TRACK");
                expectWord("ON", "ON after TRACK HISTORY");
                once(trackHistory, t, "TRACK HISTORY ON");
                trackHistory = selection("TRACK HISTORY ON");
            } else if (t.isWord("WHERE") || t.isWord("JOIN") || t.isWord("GROUP")) {
                throw unsupported(t, t.text().toUpperCase(Locale.ROOT) + " after the source");
            } else {
                throw expected(
                        "an AUTO CDC clause (KEYS, SEQUENCE BY, APPLY AS DELETE WHEN, APPLY AS"
                                + " TRUNCATE WHEN, COLUMNS, IGNORE NULL UPDATES, STORED AS SCD TYPE,"
                                + " TRACK HISTORY ON) or ';'");
            }
        }
        if (keys == null) {
            throw expected("KEYS (...): an AUTO CDC flow needs its keys");
        }
        return new Flow(
                pos,
                source,
                new AutoCdc(
                        keys,
                        sequenceBy,
                        deleteWhen,
                        truncateWhen,
                        columns,
                        ignoreNulls != null,
                        scdType,
                        trackHistory,
                        keyPositions,
                        sequencePosition));
    }

    /**
     * {@code SNAPSHOT ( read_files '(' string [, format =&gt; 'csv' | 'json'] ')' | name )} after
     * {@code AUTO CDC FROM} (docs/semantics.md A6): a folder of snapshot files, one per version, or
     * an Iceberg table whose versions are the snapshots. {@code STREAM}, {@code read_kafka} and the
     * other read_files arguments are refused where they are written.
     */
    private Source snapshotSource() {
        SqlToken kw = next();
        SqlToken t = peek();
        if (t.isWord("STREAM")) {
            throw expected(
                    "read_files('folder') or a table name after FROM SNAPSHOT (a snapshot source is"
                            + " read whole, version by version: no STREAM)");
        }
        boolean paren = acceptSymbol("(");
        t = peek();
        Source of;
        if (t.isWord("read_files") && peekAt(1).isSymbol("(")) {
            at += 2;
            String path =
                    string("the folder of snapshot files as the first argument of read_files");
            Map<String, String> args = new LinkedHashMap<>();
            while (acceptSymbol(",")) {
                SqlToken arg = peek();
                namedArgument(
                        "read_files of FROM SNAPSHOT",
                        args,
                        List.of("format"),
                        "format => 'csv' | 'json'; each file is read by its extension");
                String format = args.get("format").toLowerCase(Locale.ROOT);
                if (!format.equals("csv") && !format.equals("json")) {
                    throw new SqlException(
                            Code.INVALID_OPTION,
                            arg.position(),
                            "read_files format '"
                                    + args.get("format")
                                    + "' of FROM SNAPSHOT: snapshot files are CSV with a header"
                                    + " or JSON lines, named <name>_<version>.csv, .json or .jsonl"
                                    + " (give format => 'csv' or 'json', or leave it out)");
                }
            }
            expectSymbol(")", "',' or ')' in read_files(...)");
            of = new SqlStatement.ReadFiles(t.position(), path, args);
        } else if ((t.isWord("read_kafka") || t.isWord("cloud_files")) && peekAt(1).isSymbol("(")) {
            throw unsupported(
                    t,
                    t.text()
                            + "(...) as a snapshot source (FROM SNAPSHOT reads read_files('folder')"
                            + " or a table)");
        } else if (t.isIdentifier()) {
            of = new SqlStatement.Named(t.position(), name("a table after FROM SNAPSHOT"));
        } else {
            throw expected("read_files('folder') or a table name after FROM SNAPSHOT");
        }
        if (paren) {
            expectSymbol(")", "')' after the snapshot source");
        }
        return new SqlStatement.Snapshot(kw.position(), of);
    }

    /**
     * The clauses of change records that an AUTO CDC FROM SNAPSHOT flow refuses, at the clause (A6:
     * the snapshot version orders the changes and absent keys are the deletes).
     */
    private void refuseForSnapshot(SqlToken t) {
        SqlToken u = peekAt(1);
        String why = null;
        String clause = null;
        if (t.isWord("SEQUENCE") && u.isWord("BY")) {
            clause = "SEQUENCE BY";
            why = "the snapshot version orders the changes";
        } else if (t.isWord("APPLY") && u.isWord("AS") && peekAt(2).isWord("DELETE")) {
            clause = "APPLY AS DELETE WHEN";
            why = "a key absent from the next snapshot is the delete";
        } else if (t.isWord("APPLY") && u.isWord("AS") && peekAt(2).isWord("TRUNCATE")) {
            clause = "APPLY AS TRUNCATE WHEN";
            why = "an empty snapshot after the first deletes every row";
        } else if (t.isWord("IGNORE") && u.isWord("NULL")) {
            clause = "IGNORE NULL UPDATES";
            why = "a snapshot row is the whole row of its key, a null is a value";
        }
        if (clause != null) {
            throw new SqlException(
                    Code.INVALID_FLOW,
                    t.position(),
                    "AUTO CDC FROM SNAPSHOT takes no "
                            + clause
                            + ": "
                            + why
                            + " (docs/semantics.md A6)");
        }
    }

    /**
     * Functions that aggregate rows or look at other rows (window functions): a streaming table's
     * query is per row (S1), so they are refused in its select list and WHERE.
     */
    private static final java.util.Set<String> AGGREGATES =
            java.util.Set.of(
                    "COUNT",
                    "SUM",
                    "SUM0",
                    "AVG",
                    "MIN",
                    "MAX",
                    "LISTAGG",
                    "COLLECT",
                    "ARRAY_AGG",
                    "JSON_ARRAYAGG",
                    "JSON_OBJECTAGG",
                    "FIRST_VALUE",
                    "LAST_VALUE",
                    "STDDEV",
                    "STDDEV_POP",
                    "STDDEV_SAMP",
                    "VARIANCE",
                    "VAR_POP",
                    "VAR_SAMP",
                    "APPROX_COUNT_DISTINCT",
                    "ANY_VALUE",
                    "BIT_AND",
                    "BIT_OR",
                    "BIT_XOR",
                    "LAG",
                    "LEAD",
                    "ROW_NUMBER",
                    "RANK",
                    "DENSE_RANK",
                    "PERCENT_RANK",
                    "CUME_DIST",
                    "NTILE");

    /** Words that end the WHERE of a streaming table's query with a clause changeflow refuses. */
    private static final java.util.Set<String> AFTER_WHERE =
            java.util.Set.of(
                    "GROUP",
                    "HAVING",
                    "ORDER",
                    "LIMIT",
                    "WINDOW",
                    "UNION",
                    "INTERSECT",
                    "EXCEPT",
                    "MINUS",
                    "QUALIFY",
                    "OFFSET",
                    "FETCH");

    /** Words that start a join after the source. */
    private static final java.util.Set<String> JOINS =
            java.util.Set.of("JOIN", "LEFT", "RIGHT", "FULL", "INNER", "CROSS", "NATURAL", "OUTER");

    /**
     * The query of an append flow (S1): {@code SELECT * FROM source} (no {@link
     * SqlStatement.Select}), or {@code SELECT list FROM source [WHERE predicate]}, whose select
     * list and predicate are Flink SQL kept as laid out in the file. Aggregates, window functions,
     * DISTINCT, subqueries, joins and clauses after the source other than WHERE are {@code
     * UNSUPPORTED_STATEMENT} at their token: the query is evaluated per source row.
     */
    private Flow appendFlow(SqlPosition pos) {
        SqlToken select = peek();
        if (!select.isWord("SELECT")) {
            if (select.kind() == SqlToken.Kind.WORD) {
                throw unsupported(select, "queries other than SELECT ... FROM STREAM source");
            }
            throw expected("SELECT ... FROM STREAM source");
        }
        at++;
        if (peek().isSymbol("*") && peekAt(1).isWord("EXCEPT")) {
            throw unsupported(peekAt(1), "SELECT * EXCEPT (name the columns in the select list)");
        }
        if (peek().isWord("DISTINCT")) {
            throw unsupported(
                    peek(),
                    "SELECT "
                            + upper(peek())
                            + " (a streaming table's query is per row: each source row gives one"
                            + " row or none)");
        }
        String list = null;
        SqlPosition listPosition = peek().position();
        if (peek().isSymbol("*") && peekAt(1).isWord("FROM")) {
            at++;
        } else {
            int from = at;
            scanPerRow(true);
            if (at == from) {
                throw expected("a select list after SELECT");
            }
            list = layout(from, at);
        }
        expectWord("FROM", "FROM after the select list");
        Source source = source();
        String where = null;
        SqlPosition wherePosition = null;
        if (peek().isWord("WHERE")) {
            at++;
            wherePosition = peek().position();
            int from = at;
            scanPerRow(false);
            if (at == from) {
                throw expected("a predicate after WHERE");
            }
            where = layout(from, at);
        }
        if (!atStatementEnd()) {
            SqlToken t = peek();
            String what;
            if (t.isSymbol(",") || (t.kind() == SqlToken.Kind.WORD && JOINS.contains(upper(t)))) {
                what =
                        "joins in a streaming table's query (it reads one source, per row; join"
                                + " in a Gold job)";
            } else if (t.isWord("WITH")) {
                what =
                        "source options WITH (...) after the source (skipChangeCommits is not"
                                + " offered: docs/semantics.md S7)";
            } else if (t.isWord("GROUP") || t.isWord("HAVING")) {
                what =
                        "GROUP BY / HAVING in a streaming table's query (it is per row; aggregate"
                                + " in a Gold job)";
            } else {
                what =
                        upper(t)
                                + " after the source (a streaming table's query is SELECT list FROM"
                                + " STREAM source [WHERE predicate])";
            }
            throw unsupported(t, what);
        }
        if (list == null && where == null) {
            return new Flow(pos, source, null);
        }
        return new Flow(
                pos,
                source,
                null,
                null,
                null,
                new SqlStatement.Select(
                        list == null ? "*" : list, listPosition, where, wherePosition));
    }

    /**
     * Skips the tokens of a select list (up to FROM outside parentheses, {@code selectList}) or of
     * a WHERE predicate (up to the statement's end or a refused clause), refusing what is not per
     * row: an aggregate or window function, OVER, a subquery.
     */
    private void scanPerRow(boolean selectList) {
        int depth = 0;
        while (!atStatementEnd()) {
            SqlToken x = peek();
            if (depth == 0 && selectList && x.isWord("FROM")) {
                return;
            }
            if (depth == 0 && !selectList && x.isSymbol(",")) {
                return;
            }
            if (depth == 0
                    && !selectList
                    && x.kind() == SqlToken.Kind.WORD
                    && (AFTER_WHERE.contains(upper(x)) || x.isWord("WITH"))) {
                return;
            }
            if (x.isSymbol("(")) {
                depth++;
            } else if (x.isSymbol(")")) {
                if (depth == 0) {
                    throw expected("an expression without an unmatched ')'");
                }
                depth--;
            } else if (x.isWord("SELECT")) {
                throw unsupported(x, "subqueries in a streaming table's query");
            } else if (x.isWord("OVER")) {
                throw unsupported(
                        x,
                        "window functions (OVER) in a streaming table's query (it is per row;"
                                + " aggregate in a Gold job)");
            } else if (x.kind() == SqlToken.Kind.WORD
                    && peekAt(1).isSymbol("(")
                    && AGGREGATES.contains(upper(x))
                    && !(at > 0 && tokens.get(at - 1).isSymbol("."))) {
                throw unsupported(
                        x,
                        "the aggregate function "
                                + upper(x)
                                + "(...) in a streaming table's query (it is per row: each"
                                + " source row gives one row or none; aggregate in a Gold job)");
            }
            at++;
        }
        if (depth > 0) {
            throw expected("')' to close the expression");
        }
    }

    /** {@code SELECT * FROM source} and nothing after it. */
    private Source query() {
        SqlToken select = peek();
        if (!select.isWord("SELECT")) {
            if (select.kind() == SqlToken.Kind.WORD) {
                throw unsupported(select, "queries other than SELECT * FROM STREAM source");
            }
            throw expected("SELECT * FROM STREAM source");
        }
        at++;
        if (!peek().isSymbol("*")) {
            throw unsupported(
                    peek(),
                    "a query that selects columns (only SELECT * FROM STREAM source; choose"
                            + " columns with COLUMNS in an AUTO CDC flow)");
        }
        at++;
        if (peek().isWord("EXCEPT")) {
            throw unsupported(peek(), "SELECT * EXCEPT (choose columns with COLUMNS * EXCEPT)");
        }
        expectWord("FROM", "FROM after SELECT *");
        Source source = source();
        if (!atStatementEnd()) {
            throw unsupported(
                    peek(),
                    peek().text().toUpperCase(Locale.ROOT)
                            + " after the source (only SELECT * FROM STREAM source)");
        }
        return source;
    }

    private Source source() {
        SqlToken first = peek();
        if (first.isWord("STREAM")) {
            at++;
        }
        boolean paren = acceptSymbol("(");
        SqlToken t = peek();
        Source source;
        if (t.isWord("read_files") && peekAt(1).isSymbol("(")) {
            at += 2;
            String path = string("the path as the first argument of read_files");
            Map<String, String> args = new LinkedHashMap<>();
            while (acceptSymbol(",")) {
                boolean hadHints = args.containsKey(SCHEMA_HINTS);
                String last =
                        namedArgument(
                                "read_files",
                                args,
                                READ_FILES_ARGUMENTS,
                                "format =>, table =>, includeExistingFiles =>, schemaHints =>,"
                                        + " maxFilesPerTrigger => and the CSV options header =>, sep =>"
                                        + " (delimiter =>), quote =>, escape =>, nullValue =>, comment =>");
                String files = args.get(MAX_FILES_PER_TRIGGER);
                if (files != null) {
                    try {
                        // S2: at the value, before anything is planned; the check of SET too
                        IngestOptions.maxFilesPerTrigger("read_files " + MAX_FILES_PER_TRIGGER)
                                .parse(files);
                    } catch (IllegalArgumentException e) {
                        throw new SqlException(
                                Code.INVALID_OPTION, tokens.get(at - 1).position(), e.getMessage());
                    }
                }
                SqlToken value = tokens.get(at - 1);
                String hints = args.get(SCHEMA_HINTS);
                if (hints != null && !hadHints) {
                    try {
                        FlowOptions.schemaHintColumns(hints);
                    } catch (IllegalArgumentException e) {
                        // S2: at the value, before anything is planned
                        throw new SqlException(
                                Code.INVALID_OPTION,
                                value.position(),
                                "read_files "
                                        + SCHEMA_HINTS
                                        + " '"
                                        + hints
                                        + "': "
                                        + (e.getCause() != null ? e.getCause() : e).getMessage());
                    }
                }
                String csvValue = args.get(last);
                if (CSV_ARGUMENTS.containsKey(last) && csvValue != null) {
                    // S2: at the value, before anything is planned
                    String problem =
                            last.equals("header")
                                    ? (csvValue.equalsIgnoreCase("true")
                                                    || csvValue.equalsIgnoreCase("false")
                                            ? null
                                            : "must be true or false")
                                    : last.equals("nullValue")
                                            ? null
                                            : csvValue.length() != 1
                                                            || csvValue.equals("\n")
                                                            || csvValue.equals("\r")
                                                    ? "must be one character (not a line break)"
                                                    : null;
                    if (problem != null) {
                        throw new SqlException(
                                Code.INVALID_OPTION,
                                value.position(),
                                "read_files " + last + " " + problem + ", got '" + csvValue + "'");
                    }
                }
                String given = args.get(INCLUDE_EXISTING_FILES);
                if (given != null
                        && !given.equalsIgnoreCase("true")
                        && !given.equalsIgnoreCase("false")) {
                    // S2: at the value, before anything is planned
                    throw new SqlException(
                            Code.INVALID_OPTION,
                            value.position(),
                            "read_files "
                                    + INCLUDE_EXISTING_FILES
                                    + " must be true or false, got '"
                                    + given
                                    + "'");
                }
            }
            expectSymbol(")", "',' or ')' in read_files(...)");
            source = new SqlStatement.ReadFiles(t.position(), path, args);
        } else if (t.isWord("read_kafka") && peekAt(1).isSymbol("(")) {
            at += 2;
            Map<String, String> args = new LinkedHashMap<>();
            if (!peek().isSymbol(")")) {
                do {
                    namedArgument(
                            "read_kafka",
                            args,
                            READ_KAFKA_ARGUMENTS,
                            String.join(", ", READ_KAFKA_ARGUMENTS));
                } while (acceptSymbol(","));
            }
            expectSymbol(")", "',' or ')' in read_kafka(...)");
            source = new SqlStatement.ReadKafka(t.position(), args);
        } else if (t.isWord("cloud_files") && peekAt(1).isSymbol("(")) {
            throw unsupported(t, t.text() + "(...) sources (read_files is supported)");
        } else if (t.isIdentifier()) {
            source = new SqlStatement.Named(t.position(), name("a source"));
        } else {
            throw expected("a source: read_files(...) or the name of a temporary view");
        }
        if (paren) {
            expectSymbol(")", "')' after the source");
        }
        return source;
    }

    // ------------------------------------------------------------------------------ small rules

    /**
     * {@code name => value} of a source function into {@code args}: a name given twice is {@code
     * DUPLICATE_CLAUSE}, one not in {@code allowed} {@code UNSUPPORTED_STATEMENT} (naming {@code
     * takes}, what the function takes).
     *
     * @return the argument's name
     */
    private String namedArgument(
            String function, Map<String, String> args, List<String> allowed, String takes) {
        SqlToken arg = peek();
        String argName = name("a named argument of " + function + " (name => value)");
        expectSymbol("=>", "'=>' after the argument name (" + function + " takes name => value)");
        if (args.containsKey(argName)) {
            throw new SqlException(
                    Code.DUPLICATE_CLAUSE,
                    arg.position(),
                    function + " argument '" + argName + "' is given twice");
        }
        String v = value("a value for " + function + " argument '" + argName + "'");
        if (!allowed.contains(argName)) {
            throw unsupported(
                    arg,
                    function + " argument '" + argName + "' (this release takes " + takes + ")");
        }
        args.put(argName, v);
        return argName;
    }

    /** {@code *}, {@code * EXCEPT (a, b)}, {@code (a, b)} or {@code a, b} → its text. */
    private String selection(String clause) {
        if (acceptSymbol("*")) {
            if (!peek().isWord("EXCEPT")) {
                return "*";
            }
            at++;
            expectSymbol("(", "'(' after EXCEPT");
            List<String> names = names(clause + " * EXCEPT (...)");
            expectSymbol(")", "',' or ')' in EXCEPT (...)");
            return "* EXCEPT (" + String.join(", ", names) + ")";
        }
        if (acceptSymbol("(")) {
            List<String> names = names(clause);
            expectSymbol(")", "',' or ')' in " + clause + " (...)");
            return String.join(", ", names);
        }
        if (!peek().isIdentifier()) {
            throw expected("columns, (columns), * or * EXCEPT (columns) after " + clause);
        }
        return String.join(", ", names(clause));
    }

    /**
     * {@code name (',' name)*}: the column names of {@code clause}.
     *
     * @throws SqlException {@code DUPLICATE_COLUMN} at the second mention of a name
     */
    private List<String> names(String clause) {
        return names(clause, new ArrayList<>());
    }

    /** As {@link #names(String)}, adding where each name is written to {@code positions}. */
    private List<String> names(String clause, List<SqlPosition> positions) {
        List<String> out = new ArrayList<>();
        do {
            SqlToken t = peek();
            String n = identifier("a column name");
            for (int i = 0; i < out.size(); i++) {
                if (out.get(i).equals(n)) {
                    throw duplicateColumn(t.position(), n, clause, positions.get(i));
                }
            }
            positions.add(t.position());
            out.add(n);
        } while (acceptSymbol(","));
        return out;
    }

    private static SqlException duplicateColumn(
            SqlPosition at, String column, String clause, SqlPosition first) {
        return new SqlException(
                Code.DUPLICATE_COLUMN,
                at,
                "column '"
                        + column
                        + "' is named twice in "
                        + clause
                        + " (first at "
                        + first.line()
                        + ":"
                        + first.column()
                        + "); name each column once");
    }

    /**
     * Checks a {@code SEQUENCE BY STRUCT(a, b, ...)} written in tokens {@code [from, to)}: a column
     * named twice is {@code DUPLICATE_COLUMN} at its second mention (Flink would refuse the STRUCT
     * only when the job is built).
     */
    private void checkStructColumns(int from, int to) {
        if (to - from < 3
                || !tokens.get(from).isWord("STRUCT")
                || !tokens.get(from + 1).isSymbol("(")) {
            return;
        }
        Map<String, SqlPosition> seen = new LinkedHashMap<>();
        int depth = 0;
        for (int i = from + 2; i < to; i++) {
            SqlToken x = tokens.get(i);
            if (x.isSymbol("(")) {
                depth++;
            } else if (x.isSymbol(")")) {
                depth--;
            }
            if (depth == 0
                    && x.isIdentifier()
                    && tokens.get(i - 1).isSymbol(i == from + 2 ? "(" : ",")
                    && (tokens.get(i + 1).isSymbol(",") || tokens.get(i + 1).isSymbol(")"))) {
                SqlPosition first = seen.putIfAbsent(x.value(), x.position());
                if (first != null) {
                    throw duplicateColumn(
                            x.position(), x.value(), "SEQUENCE BY STRUCT(...)", first);
                }
            }
            if (depth < 0) {
                break;
            }
        }
    }

    /**
     * The tokens up to the next clause of a flow or the statement's end, outside parentheses.
     *
     * @param clause names the clause in errors
     */
    private String expression(String clause) {
        int from = at;
        int depth = 0;
        while (true) {
            SqlToken x = peek();
            if (x.kind() == SqlToken.Kind.END || x.isSymbol(";")) {
                break;
            }
            if (depth == 0 && clauseStart()) {
                break;
            }
            if (x.isSymbol("(")) {
                depth++;
            } else if (x.isSymbol(")")) {
                if (depth == 0) {
                    throw expected("an expression without an unmatched ')' after " + clause);
                }
                depth--;
            }
            at++;
        }
        if (depth > 0) {
            throw expected("')' to close the expression of " + clause);
        }
        if (at == from) {
            throw expected("an expression after " + clause);
        }
        return text(from, at);
    }

    /** Whether the next tokens start a clause of an AUTO CDC flow. */
    private boolean clauseStart() {
        SqlToken t = peek();
        SqlToken u = peekAt(1);
        return (t.isWord("KEYS") && u.isSymbol("("))
                || (t.isWord("SEQUENCE") && u.isWord("BY"))
                || (t.isWord("APPLY") && u.isWord("AS"))
                || (t.isWord("COLUMNS") && (u.isIdentifier() || u.isSymbol("*") || u.isSymbol("(")))
                || (t.isWord("IGNORE") && u.isWord("NULL"))
                || (t.isWord("STORED") && u.isWord("AS"))
                || (t.isWord("TRACK") && u.isWord("HISTORY"))
                || (t.isWord("BY") && u.isWord("NAME")); // ends REPLACE USING's SEQUENCE BY
    }

    /** A possibly qualified name; a leading {@code LIVE.} is dropped. */
    /** {@code OPTIMIZE name | REORG TABLE name APPLY (PURGE) | VACUUM name [RETAIN n HOURS]}. */
    private MaintenanceStatement maintenance() {
        SqlToken keyword = next();
        if (keyword.isWord("OPTIMIZE")) {
            String t = name("a table name after OPTIMIZE");
            if (peek().isWord("WHERE") || peek().isWord("ZORDER")) {
                throw unsupported(
                        peek(),
                        "OPTIMIZE ... "
                                + peek().text().toUpperCase(Locale.ROOT)
                                + " (OPTIMIZE compacts the whole table: give its name only)");
            }
            return new MaintenanceStatement(
                    MaintenanceStatement.Kind.OPTIMIZE, TableIdentifier.parse(t), null);
        }
        if (keyword.isWord("REORG")) {
            expectWord("TABLE", "TABLE after REORG");
            String t = name("a table name after REORG TABLE");
            expectWord("APPLY", "APPLY after REORG TABLE " + t);
            expectSymbol("(", "'(' after APPLY");
            if (!peek().isWord("PURGE") && peek().kind() == SqlToken.Kind.WORD) {
                throw unsupported(
                        peek(),
                        "REORG ... APPLY ("
                                + peek().text().toUpperCase(Locale.ROOT)
                                + ") (only APPLY (PURGE))");
            }
            expectWord("PURGE", "PURGE after APPLY (");
            expectSymbol(")", "')' after APPLY (PURGE");
            return new MaintenanceStatement(
                    MaintenanceStatement.Kind.PURGE, TableIdentifier.parse(t), null);
        }
        String t = name("a table name after VACUUM");
        Duration retain = MaintenanceStatement.DEFAULT_RETAIN;
        if (peek().isWord("RETAIN")) {
            at++;
            SqlToken n = peek();
            if (n.kind() != SqlToken.Kind.NUMBER || !n.text().matches("\\d+")) {
                throw expected("a whole number of hours after RETAIN");
            }
            at++;
            if (!peek().isWord("HOURS") && !peek().isWord("HOUR")) {
                throw expected("HOURS after RETAIN " + n.text());
            }
            at++;
            String digits = n.text().replaceFirst("^0+(?=\\d)", "");
            long hours = digits.length() > 12 ? Long.MAX_VALUE : Long.parseLong(digits);
            if (hours < MaintenanceStatement.MIN_RETAIN.toHours()
                    || hours > MaintenanceStatement.MAX_RETAIN.toHours()) {
                throw new SqlException(
                        Code.INVALID_RETENTION,
                        n.position(),
                        "RETAIN "
                                + n.text()
                                + " HOURS is out of range: VACUUM keeps files modified in the last "
                                + MaintenanceStatement.MIN_RETAIN.toHours()
                                + " to "
                                + MaintenanceStatement.MAX_RETAIN.toHours()
                                + " hours (younger files may be a running job's, not committed"
                                + " yet; the default is "
                                + MaintenanceStatement.DEFAULT_RETAIN.toHours()
                                + ")");
            }
            retain = Duration.ofHours(hours);
        }
        if (peek().isWord("DRY") || peek().isWord("LITE") || peek().isWord("FULL")) {
            throw unsupported(
                    peek(),
                    "VACUUM ... "
                            + peek().text().toUpperCase(Locale.ROOT)
                            + " (VACUUM t [RETAIN n HOURS])");
        }
        return new MaintenanceStatement(
                MaintenanceStatement.Kind.VACUUM, TableIdentifier.parse(t), retain);
    }

    private String name(String what) {
        List<String> parts = new ArrayList<>();
        parts.add(identifier(what));
        while (peek().isSymbol(".") && peekAt(1).isIdentifier()) {
            at++;
            parts.add(identifier(what));
        }
        if (parts.size() > 1 && parts.get(0).equalsIgnoreCase("LIVE")) {
            parts.remove(0);
        }
        return String.join(".", parts);
    }

    private String identifier(String what) {
        SqlToken t = peek();
        if (!t.isIdentifier()) {
            throw expected(what);
        }
        at++;
        return t.value();
    }

    private String string(String what) {
        SqlToken t = peek();
        if (t.kind() != SqlToken.Kind.STRING) {
            throw expected(what);
        }
        at++;
        return t.value();
    }

    /** A string, number, word or {@code true}/{@code false} as a value (strings unquoted). */
    private String value(String what) {
        SqlToken t = peek();
        boolean negative = t.isSymbol("-") && peekAt(1).kind() == SqlToken.Kind.NUMBER;
        if (negative) {
            at++;
            t = peek();
        }
        if (t.kind() == SqlToken.Kind.STRING
                || t.kind() == SqlToken.Kind.NUMBER
                || t.kind() == SqlToken.Kind.WORD) {
            at++;
            return (negative ? "-" : "") + t.value();
        }
        throw expected(what);
    }

    /**
     * The text of tokens {@code [from, to)}: as Flink SQL reads them, one blank where the file had
     * blanks or comments between two tokens.
     */
    private String text(int from, int to) {
        StringBuilder b = new StringBuilder();
        for (int i = from; i < to; i++) {
            SqlToken t = tokens.get(i);
            if (i > from && t.start() > tokens.get(i - 1).end()) {
                b.append(' ');
            }
            b.append(t.flinkText());
        }
        return b.toString();
    }

    /** Like {@link #text} but one string literal alone gives its value, without quotes. */
    private String literal(int from, int to) {
        if (to - from == 1 && tokens.get(from).kind() == SqlToken.Kind.STRING) {
            return tokens.get(from).value();
        }
        StringBuilder b = new StringBuilder();
        for (int i = from; i < to; i++) {
            SqlToken t = tokens.get(i);
            if (i > from && t.start() > tokens.get(i - 1).end()) {
                b.append(' ');
            }
            b.append(t.kind() == SqlToken.Kind.STRING ? t.value() : t.text());
        }
        return b.toString();
    }

    private void once(@Nullable Object previous, SqlToken clause, String name) {
        if (previous != null) {
            throw new SqlException(
                    Code.DUPLICATE_CLAUSE,
                    clause.position(),
                    name + " is given twice in one statement");
        }
    }

    private boolean atStatementEnd() {
        return peek().kind() == SqlToken.Kind.END || peek().isSymbol(";");
    }

    private SqlToken peek() {
        return tokens.get(at);
    }

    private SqlToken peekAt(int ahead) {
        return tokens.get(Math.min(at + ahead, tokens.size() - 1));
    }

    private SqlToken next() {
        return tokens.get(at++);
    }

    private boolean acceptSymbol(String s) {
        if (peek().isSymbol(s)) {
            at++;
            return true;
        }
        return false;
    }

    private void expectSymbol(String s, String what) {
        if (!acceptSymbol(s)) {
            throw expected(what);
        }
    }

    private void expectWord(String w, String what) {
        if (!peek().isWord(w)) {
            throw expected(what);
        }
        at++;
    }

    private SqlException expected(String what) {
        return new SqlException(
                Code.SYNTAX_ERROR,
                peek().position(),
                "expected " + what + ", found " + peek().describe());
    }

    /**
     * The first word Flink SQL statements start with (they are handed to Flink as they are), so
     * that one of them is never taken for a misspelt maintenance keyword.
     */
    private static final java.util.Set<String> FLINK_STATEMENT_WORDS =
            java.util.Set.of(
                    "SELECT",
                    "INSERT",
                    "CREATE",
                    "DROP",
                    "ALTER",
                    "SHOW",
                    "USE",
                    "DESCRIBE",
                    "DESC",
                    "EXPLAIN",
                    "SET",
                    "RESET",
                    "LOAD",
                    "UNLOAD",
                    "WITH",
                    "VALUES",
                    "EXECUTE",
                    "BEGIN",
                    "END",
                    "ANALYZE",
                    "TRUNCATE",
                    "DELETE",
                    "UPDATE",
                    "CALL",
                    "ADD",
                    "REMOVE",
                    "JAR",
                    "STATEMENT",
                    "TABLE",
                    "REPLACE");

    private static String upper(SqlToken t) {
        return t.text().toUpperCase(Locale.ROOT);
    }

    /**
     * The keyword of {@code keywords} that the word {@code t} is one edit away from (a letter
     * added, removed, replaced, or two neighbours swapped), or null: {@code STREMING} gives {@code
     * STREAMING}, {@code OPTIMISE} gives {@code OPTIMIZE}. Words of three letters or fewer get no
     * suggestion.
     */
    static @Nullable String nearKeyword(SqlToken t, String... keywords) {
        if (t.kind() != SqlToken.Kind.WORD || t.text().length() <= 3) {
            return null;
        }
        String w = upper(t);
        for (String k : keywords) {
            if (!k.equals(w) && oneEditApart(w, k)) {
                return k;
            }
        }
        return null;
    }

    /** Whether {@code a} and {@code b} differ by one insertion, deletion, substitution or swap. */
    static boolean oneEditApart(String a, String b) {
        if (Math.abs(a.length() - b.length()) > 1) {
            return false;
        }
        int i = 0;
        while (i < a.length() && i < b.length() && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        if (a.length() == b.length()) {
            if (i == a.length()) {
                return false;
            }
            // substitution, or a swap of i and i + 1
            return a.substring(i + 1).equals(b.substring(i + 1))
                    || (i + 1 < a.length()
                            && a.charAt(i) == b.charAt(i + 1)
                            && a.charAt(i + 1) == b.charAt(i)
                            && a.substring(i + 2).equals(b.substring(i + 2)));
        }
        String longer = a.length() > b.length() ? a : b;
        String shorter = a.length() > b.length() ? b : a;
        return longer.substring(i + 1).equals(shorter.substring(i));
    }

    /** {@link #expected} with a {@code (did you mean KEYWORD?)} hint for a misspelt keyword. */
    private SqlException expectedNear(String what, String keyword) {
        return new SqlException(
                Code.SYNTAX_ERROR,
                peek().position(),
                "expected "
                        + what
                        + ", found "
                        + peek().describe()
                        + " (did you mean "
                        + keyword
                        + "?)");
    }

    private static SqlException unsupported(SqlToken at, String what) {
        return new SqlException(
                Code.UNSUPPORTED_STATEMENT,
                at.position(),
                "not supported by changeflow yet: " + what);
    }
}

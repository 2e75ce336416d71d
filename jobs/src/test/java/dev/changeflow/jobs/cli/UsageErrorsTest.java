package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a new user sees for the commonest mistakes: each is one {@code error: ...} line naming the
 * file, statement or limit, with exit code 2 (bad usage), never a raw Java exception.
 */
class UsageErrorsTest {
    @TempDir Path dir;

    /** The exit code and what the command printed on standard error. */
    private record Result(int code, String err) {}

    private static Result execute(String... args) {
        CapturedOutput.MainRun run = CapturedOutput.main(args);
        return new Result(run.code(), run.stderr());
    }

    @Test
    void aMissingFileIsNamedByEveryCommandThatTakesOne() {
        Path missing = dir.resolve("missing.sql");
        String w = dir.resolve("warehouse").toString();
        assertThat(execute("gold", "--warehouse", w, missing.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: Gold SQL file not found: "
                                        + missing
                                        + "\n"));
        assertThat(execute("gold", "--warehouse", w, dir.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: Gold SQL file not found: "
                                        + dir
                                        + " (a folder, not a file)\n"));
        assertThat(execute("run", "--warehouse", w, missing.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: pipeline file not found: "
                                        + missing
                                        + "\n"));
        assertThat(execute("run", "--dry-run", missing.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: pipeline file not found: "
                                        + missing
                                        + "\n"));
        assertThat(execute("describe", "--warehouse", w, missing.toString(), "t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: pipeline file not found: "
                                        + missing
                                        + "\n"));
        assertThat(execute("deploy", "--print", missing.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: pipeline file not found: "
                                        + missing
                                        + "\n"));
        Path flows = dir.resolve("flows.yaml");
        assertThat(execute("deploy", "--print", "--flows", flows.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: flows file not found: " + flows + "\n"));
        assertThat(execute("ingest", "--warehouse", w, "--flows", flows.toString(), dir.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: flows file not found: " + flows + "\n"));
        assertThat(dir.resolve("warehouse")).doesNotExist();
    }

    /**
     * {@code sql} statements that need a database the warehouse lacks: {@code UNKNOWN_DATABASE}
     * naming it, at the place Flink names, exit code 2, nothing created. On a new warehouse the
     * session's current database ({@code default}) does not exist either, which Flink reports for
     * any table a query reads: the message names the table and says the warehouse is empty.
     */
    @Test
    void aDatabaseTheWarehouseLacksIsUnknownDatabaseNamed() {
        String w = dir.resolve("warehouse").toString();
        String fix =
                " does not exist in catalog changeflow (check --warehouse); SHOW DATABASES"
                        + " lists its databases, CREATE DATABASE ";
        assertThat(execute("sql", "--warehouse", w, "-e", "SHOW TABLES FROM shop"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: UNKNOWN_DATABASE: database shop"
                                        + fix
                                        + "shop creates it\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "SHOW TABLES", "-e", "USE shop"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 2:1:1: UNKNOWN_DATABASE: database shop"
                                        + fix
                                        + "shop creates it\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "DROP DATABASE shop"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: UNKNOWN_DATABASE: database shop"
                                        + fix
                                        + "shop creates it\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT * FROM items"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:15: TABLE_NOT_FOUND: table items does not"
                                        + " exist: catalog changeflow has no database and no table"
                                        + " yet (a new or empty warehouse: check --warehouse);"
                                        + " CREATE TABLE items (...) creates it\n"));
        assertThat(dir.resolve("warehouse")).doesNotExist();
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "CREATE TABLE t (id INT)",
                                "-e",
                                "SELECT * FROM shop.items"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 2:1:15: UNKNOWN_DATABASE: database shop"
                                        + fix
                                        + "shop creates it\n"));
    }

    /**
     * DROP TABLE, INSERT INTO, SHOW CREATE TABLE and DESCRIBE of a table in a database the
     * warehouse lacks are {@code UNKNOWN_DATABASE}, of a missing table in a database it has {@code
     * TABLE_NOT_FOUND}, at the table's name, exit code 2; a table named without database while the
     * current database is missing names the databases there are. Nothing is created.
     */
    @Test
    void aMissingTableOrItsDatabaseIsNamedByEveryStatement() {
        String w = dir.resolve("warehouse").toString();
        String fix =
                " does not exist in catalog changeflow (check --warehouse); SHOW DATABASES"
                        + " lists its databases, CREATE DATABASE shop creates it\n";
        assertThat(execute("sql", "--warehouse", w, "-e", "DROP TABLE shop.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:12: UNKNOWN_DATABASE: database shop" + fix));
        assertThat(execute("sql", "--warehouse", w, "-e", "INSERT INTO shop.t VALUES (1)"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:13: UNKNOWN_DATABASE: database shop" + fix));
        assertThat(execute("sql", "--warehouse", w, "-e", "SHOW CREATE TABLE shop.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:19: UNKNOWN_DATABASE: database shop" + fix));
        assertThat(execute("sql", "--warehouse", w, "-e", "DESCRIBE `shop`.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:10: UNKNOWN_DATABASE: database shop" + fix));
        assertThat(execute("sql", "--warehouse", w, "-e", "SHOW CREATE TABLE t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:19: TABLE_NOT_FOUND: table t does not exist:"
                                        + " catalog changeflow has no database and no table yet (a"
                                        + " new or empty warehouse: check --warehouse); CREATE"
                                        + " TABLE t (...) creates it\n"));
        assertThat(dir.resolve("warehouse")).doesNotExist();

        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "CREATE DATABASE shop",
                                "-e",
                                "CREATE TABLE shop.items (id INT)"))
                .isEqualTo(new Result(0, ""));
        String missing =
                "TABLE_NOT_FOUND: table shop.t does not exist in catalog changeflow; SHOW TABLES"
                        + " FROM shop lists its tables\n";
        assertThat(execute("sql", "--warehouse", w, "-e", "DROP TABLE shop.t"))
                .isEqualTo(new Result(2, "error: statement 1:1:12: " + missing));
        assertThat(execute("sql", "--warehouse", w, "-e", "INSERT INTO shop.t VALUES (1)"))
                .isEqualTo(new Result(2, "error: statement 1:1:13: " + missing));
        assertThat(execute("sql", "--warehouse", w, "-e", "SHOW CREATE TABLE\n  shop.t"))
                .isEqualTo(new Result(2, "error: statement 1:2:3: " + missing));
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT * FROM shop.t"))
                .isEqualTo(new Result(2, "error: statement 1:1:15: " + missing));
        String elsewhere =
                "TABLE_NOT_FOUND: table items does not exist: a table named without database is"
                        + " looked up in the session's current database default, which catalog"
                        + " changeflow does not have; its databases are shop: name the table with"
                        + " its database (shop.items) or USE one first\n";
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT * FROM items"))
                .isEqualTo(new Result(2, "error: statement 1:1:15: " + elsewhere));
        assertThat(execute("sql", "--warehouse", w, "-e", "DROP TABLE items"))
                .isEqualTo(new Result(2, "error: statement 1:1:12: " + elsewhere));
        assertThat(execute("sql", "--warehouse", w, "-e", "USE shop", "-e", "SELECT * FROM t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 2:1:15: TABLE_NOT_FOUND: table shop.t does not"
                                        + " exist in catalog changeflow (shop is the session's"
                                        + " current database); SHOW TABLES FROM shop lists its"
                                        + " tables\n"));
        assertThat(dir.resolve("warehouse").resolve("default")).doesNotExist();
    }

    /**
     * A change-feed read whose options, timestamp or range are malformed is bad input, exit code 2
     * as every other ({@code INVALID_CDC_OPTIONS}, {@code INVALID_TIMESTAMP}, {@code
     * INVALID_CDC_RANGE}, docs/semantics.md F3/F4); a start after the latest commit depends on the
     * table's history at the time and stays a failure (exit code 1).
     */
    @Test
    void malformedChangeFeedReadsExitWith2() {
        String w = dir.resolve("warehouse").toString();
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "CREATE DATABASE db",
                                "-e",
                                "CREATE TABLE db.t (id INT) WITH ('format-version'='2')",
                                "-e",
                                "INSERT INTO db.t VALUES (1)"))
                .isEqualTo(new Result(0, ""));
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "SELECT * FROM table_changes('db.t', 3, 1)"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_CDC_RANGE: The ending version 1 of the change feed of"
                                        + " table changeflow.db.t is before its starting version 3."
                                        + " Give an ending version at or after the starting"
                                        + " version.\n"));
        Result timestamp =
                execute(
                        "sql",
                        "--warehouse",
                        w,
                        "-e",
                        "SELECT * FROM table_changes('db.t', 'yesterday')");
        assertThat(timestamp.code()).isEqualTo(2);
        assertThat(timestamp.err())
                .startsWith(
                        "error: INVALID_TIMESTAMP: 'starting-timestamp' = 'yesterday' for the change"
                                + " feed of table changeflow.db.t is not a timestamp. Use yyyy-MM-dd,"
                                + " yyyy-MM-dd HH:mm:ss or yyyy-MM-dd HH:mm:ss.SSS, optionally"
                                + " followed by an offset such as Z or +02:00 (no offset means"
                                + " UTC).\n");
        Result options =
                execute(
                        "sql",
                        "--warehouse",
                        w,
                        "-e",
                        "SELECT * FROM db.`t$changes` /*+ OPTIONS('starting-versoin'='1') */");
        assertThat(options.code()).isEqualTo(2);
        assertThat(options.err())
                .startsWith(
                        "error: INVALID_CDC_OPTIONS: Unknown option 'starting-versoin' for the"
                                + " change feed of table changeflow.db.t$changes.");
        Result after =
                execute("sql", "--warehouse", w, "-e", "SELECT * FROM table_changes('db.t', 5)");
        assertThat(after.code()).isEqualTo(1);
        assertThat(after.err()).startsWith("error: START_AFTER_LATEST_COMMIT: ");
    }

    /**
     * A6: a from-snapshot-table flow over a format v1 table is refused ({@code
     * UNSUPPORTED_FORMAT_VERSION}) with exit code 2, as other refusals of a definition, before the
     * target is created.
     */
    @Test
    void aFormatV1SnapshotTableIsARefusalWithExitCode2() throws Exception {
        Path w = dir.resolve("warehouse");
        org.apache.iceberg.catalog.Catalog cat =
                dev.changeflow.sinks.iceberg.CatalogSettings.localHadoop(w).open();
        cat.createTable(
                org.apache.iceberg.catalog.TableIdentifier.of("staging", "products"),
                new org.apache.iceberg.Schema(
                        org.apache.iceberg.types.Types.NestedField.required(
                                1, "id", org.apache.iceberg.types.Types.LongType.get())),
                org.apache.iceberg.PartitionSpec.unpartitioned(),
                java.util.Map.of("format-version", "1"));
        Path flows = dir.resolve("flows.yaml");
        java.nio.file.Files.writeString(
                flows,
                "flows:\n"
                        + "  - table: products_history\n"
                        + "    from-snapshot-table: staging.products\n"
                        + "    keys: [id]\n");
        assertThat(execute("ingest", "--warehouse", w.toString(), "--flows", flows.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: UNSUPPORTED_FORMAT_VERSION: flow 'products_history':"
                                        + " snapshot table changeflow.staging.products has format"
                                        + " version 1; its versions are snapshot sequence numbers,"
                                        + " which format 1 does not have. Upgrade the table with"
                                        + " the table property 'format-version' = '2'.\n"));
        assertThat(
                        cat.tableExists(
                                org.apache.iceberg.catalog.TableIdentifier.of(
                                        "default", "products_history")))
                .isFalse();
    }

    @Test
    void aMisspeltOrUnparsableSqlStatementIsASyntaxErrorWithItsPlace() {
        String w = dir.resolve("warehouse").toString();
        assertThat(execute("sql", "--warehouse", w, "-e", "OPTIMISE shop.items"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: SYNTAX_ERROR: expected a Flink SQL statement"
                                        + " or OPTIMIZE, REORG TABLE or VACUUM, found 'OPTIMISE'"
                                        + " (did you mean OPTIMIZE?)\n"));
        Result r = execute("sql", "--warehouse", w, "-e", "SELECT 1", "-e", "SELECT 1 FORM t");
        assertThat(r)
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 2:1:15: SYNTAX_ERROR: Flink SQL cannot parse the"
                                        + " statement: Encountered \"t\" at line 1, column 15."
                                        + " Expected one of: \"EXCEPT\", \"FETCH\", \"FROM\","
                                        + " \"INTERSECT\", \"LIMIT\", \"OFFSET\", \"ORDER\","
                                        + " \"MINUS\", ...\n"));
        // a literal of another type than its column's: Iceberg refuses the pushed-down filter
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "CREATE TABLE n (id INT)",
                                "-e",
                                "INSERT INTO n VALUES (1)",
                                "-e",
                                "SELECT * FROM n WHERE id = 'x'"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 3:1:1: INVALID_QUERY: Iceberg refuses the"
                                        + " statement's filter: Invalid value for conversion to"
                                        + " type int: x (java.lang.String) (compare each column"
                                        + " with a value of its type, or CAST it)\n"));
        // a catalog that cannot be reached
        assertThat(
                        execute(
                                "sql",
                                "--catalog",
                                "type=rest",
                                "--catalog",
                                "uri=http://127.0.0.1:1",
                                "-e",
                                "SHOW TABLES"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: catalog 'changeflow' cannot be opened at"
                                        + " http://127.0.0.1:1: HttpHostConnectException: Connect"
                                        + " to http://127.0.0.1:1 failed: Connection refused; check"
                                        + " the catalog properties and that the catalog is up\n"));
    }

    @Test
    void vacuumAndOrphanRemovalKeepAtLeastAnHour() {
        String w = dir.resolve("warehouse").toString();
        assertThat(execute("sql", "--warehouse", w, "-e", "VACUUM shop.items RETAIN 0 HOURS"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:26: INVALID_RETENTION: RETAIN 0 HOURS is out of"
                                        + " range: VACUUM keeps files modified in the last 1 to 876000"
                                        + " hours (younger files may be a running job's, not committed"
                                        + " yet; the default is 168)\n"));
        assertThat(
                        execute(
                                "maintain",
                                "shop.items",
                                "--orphans",
                                "--orphan-min-age",
                                "10m",
                                "--warehouse",
                                w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --orphan-min-age must be at least 1h (files younger than that"
                                        + " may be a running job's, not committed yet), got '10m'\n"));
    }

    /**
     * Flows-file, Kafka and flag errors of {@code ingest} carry a code as a pipeline file's do
     * (README "Exit codes", issue #13): {@code INVALID_OPTION} after the file's position, {@code
     * SYNTAX_ERROR} for a file that is not YAML, {@code INVALID_OPTION} first for a flag; a
     * per-partition start naming a topic outside {@code --topics} and an unknown start word are
     * refused before any broker is asked. Nothing is created.
     */
    @Test
    void flowsFileAndFlagErrorsCarryACode() throws Exception {
        String w = dir.resolve("warehouse").toString();
        Path flows = dir.resolve("f.yaml");
        java.nio.file.Files.writeString(
                flows, "flows:\n  - table: t\n    keys: [id]\n    sequence-bi: ts\n");
        assertThat(execute("ingest", "--warehouse", w, "--flows", flows.toString(), dir.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: "
                                        + flows
                                        + ":4:5: INVALID_OPTION: flow 't': unknown option"
                                        + " 'sequence-bi' (did you mean 'sequence-by'?)\n"));
        java.nio.file.Files.writeString(flows, "flows:\n  - table: [t\n");
        assertThat(execute("ingest", "--warehouse", w, "--flows", flows.toString(), dir.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: "
                                        + flows
                                        + ":2:14: SYNTAX_ERROR: not valid YAML: while parsing a"
                                        + " flow sequence\n"));
        String[] kafka = {
            "ingest",
            "--warehouse",
            w,
            "--table",
            "a",
            "--kafka-bootstrap",
            "127.0.0.1:1",
            "--topics",
            "srv.public.a",
            "--starting-offsets"
        };
        assertThat(execute(concat(kafka, "{\"srv.public.b\":{\"0\":5}}")))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: kafka: 'starting-offsets' names topic"
                                        + " srv.public.b, which the input does not subscribe to"
                                        + " (topics: srv.public.a)\n"));
        assertThat(execute(concat(kafka, "beginning")))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --starting-offsets: starting-offsets:"
                                        + " expected earliest, latest, committed, timestamp:<epoch"
                                        + " ms> or per-partition offsets {\"topic\":{\"0\":23,\"1\":-2}},"
                                        + " got 'beginning'\n"));
        assertThat(execute("ingest", "--warehouse", w, "--until-idle", "5s", dir.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --until-idle applies to Kafka input only\n"));
        assertThat(execute("ingest", "--warehous", w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: Unknown option: '--warehous' (did you mean"
                                        + " --warehouse?); changeflow ingest --help lists the"
                                        + " options\n"));
        assertThat(dir.resolve("warehouse")).doesNotExist();
    }

    /**
     * A {@code sql} statement Flink parses but cannot validate is bad input with a code, exit code
     * 2, at the place Flink names, Flink's message (its position text too) kept (issue #13 item 4):
     * a column no table has {@code UNKNOWN_COLUMN}, a function Flink does not know {@code
     * UNKNOWN_FUNCTION}, any other validation error, a planner error, Calcite's own checks (an
     * unknown hint) and two statements in one {@code -e} {@code INVALID_QUERY}; an update stream
     * into a table without primary key {@code UPDATES_WITHOUT_PRIMARY_KEY}. A statement whose job
     * fails while it runs is {@code QUERY_FAILED} with exit code 1. Nothing is written.
     */
    @Test
    void sqlValidationErrorsCarryACodeAndFlinksPlace() {
        String w = dir.resolve("warehouse").toString();
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "CREATE DATABASE ns",
                                "-e",
                                "CREATE TABLE ns.t (id INT, name STRING)"))
                .isEqualTo(new Result(0, ""));
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT nosuch FROM ns.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:8: UNKNOWN_COLUMN: From line 1, column 8 to"
                                        + " line 1, column 13: Column 'nosuch' not found in any"
                                        + " table; DESCRIBE a table lists its columns\n"));
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "SELECT 1",
                                "-e",
                                "SELECT id\nFROM ns.t WHERE t.nosuch = 1"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 2:2:19: UNKNOWN_COLUMN: From line 2, column 19 to"
                                        + " line 2, column 24: Column 'nosuch' not found in table"
                                        + " 't'; DESCRIBE a table lists its columns\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT nosuch(id) FROM ns.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:8: UNKNOWN_FUNCTION: From line 1, column 8 to"
                                        + " line 1, column 17: No match found for function"
                                        + " signature nosuch(<NUMERIC>); no function nosuch takes"
                                        + " these arguments: SHOW FUNCTIONS lists the"
                                        + " functions\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT UPPER(id, 2) FROM ns.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:8: INVALID_QUERY: From line 1, column 8 to"
                                        + " line 1, column 19: Invalid number of arguments to"
                                        + " function 'UPPER'. Was expecting 1 arguments\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "INSERT INTO ns.t VALUES (1)"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: INVALID_QUERY: Column types of query"
                                        + " result and sink for 'changeflow.ns.t' do not match."
                                        + " Cause: Different number of columns. Query schema:"
                                        + " [EXPR$0: INT NOT NULL] Sink schema:  [id: INT, name:"
                                        + " STRING]\n"));
        // a planner error: Flink validates the query but cannot run it in STREAMING mode
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "--streaming",
                                "-e",
                                "SELECT * FROM ns.t /*+ OPTIONS('bounded'='true') */ ORDER BY name"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: INVALID_QUERY: Sort on a non-time-attribute"
                                        + " field is not supported.\n"));
        // Calcite's own checks (an unknown hint) are bad input too
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT * FROM ns.t /*+ NOSUCH('x') */"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: INVALID_QUERY: Flink cannot plan the"
                                        + " statement: Hint: NOSUCH should be registered in the"
                                        + " HintStrategyTable\n"));
        // a valid statement whose job fails while it runs: exit code 1, with a code
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "SELECT CAST(name AS INT) FROM (VALUES ('x')) AS v(name)"))
                .isEqualTo(
                        new Result(
                                1,
                                "error: statement 1:1:1: QUERY_FAILED: the statement's job failed:"
                                        + " NumberFormatException: For input string: 'x'. Invalid"
                                        + " character found.\n"));
        // an update stream into a table without primary key, as the Gold job refuses it
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "--streaming",
                                "-e",
                                "INSERT INTO ns.t SELECT id, CAST(COUNT(*) AS STRING) FROM"
                                        + " (VALUES (1), (1)) AS v(id) GROUP BY id"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: UPDATES_WITHOUT_PRIMARY_KEY: INSERT INTO"
                                        + " changeflow.ns.t: the query is an update stream (its"
                                        + " rows are updated and retracted as its input changes),"
                                        + " and the table has no PRIMARY KEY, so Iceberg would"
                                        + " append retractions as rows. Declare the key the"
                                        + " query's rows are unique by: CREATE TABLE ... (...,"
                                        + " PRIMARY KEY (...) NOT ENFORCED)\n"));
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "INSERT INTO ns.t VALUES (1, 'a'); INSERT INTO ns.t VALUES (2, 'b')"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: INVALID_QUERY: one -e holds one statement:"
                                        + " give each statement its own -e (-e 'CREATE TABLE ...'"
                                        + " -e 'INSERT INTO ...')\n"));
        assertThat(
                        dev.changeflow.sinks.iceberg.CatalogSettings.localHadoop(
                                        dir.resolve("warehouse"))
                                .open()
                                .loadTable(org.apache.iceberg.catalog.TableIdentifier.of("ns", "t"))
                                .currentSnapshot())
                .isNull();
    }

    /**
     * The flag and argument errors of {@code maintain}, {@code expire}, {@code show}, {@code
     * deploy}, a {@code table_changes} call, an unknown command and a missing input carry a code
     * (README "Exit codes", issue #13 item 4), exit code 2: {@code INVALID_OPTION} for a value or
     * combination the command refuses, {@code TABLE_NOT_FOUND} for a table the catalog lacks,
     * {@code SOURCE_NOT_FOUND} for a missing file. {@code maintain} checks its expiry options
     * before it compacts anything.
     */
    @Test
    void commandFlagAndArgumentErrorsCarryACode() {
        String w = dir.resolve("warehouse").toString();
        assertThat(
                        execute(
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "CREATE DATABASE ns",
                                "-e",
                                "CREATE TABLE ns.t (id INT) WITH ('format-version'='2')",
                                "-e",
                                "INSERT INTO ns.t VALUES (1)",
                                "-e",
                                "INSERT INTO ns.t VALUES (2)"))
                .isEqualTo(new Result(0, ""));
        String noTable =
                "error: TABLE_NOT_FOUND: no table ns.nosuch in changeflow catalog (check"
                        + " --warehouse)\n";
        assertThat(execute("maintain", "ns.nosuch", "--warehouse", w))
                .isEqualTo(new Result(2, noTable));
        assertThat(execute("expire", "--table", "ns.nosuch", "--warehouse", w))
                .isEqualTo(new Result(2, noTable));
        // in SQL, as for any statement: the statement's place, and a missing database named so
        assertThat(execute("sql", "--warehouse", w, "-e", "OPTIMIZE ns.nosuch"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: TABLE_NOT_FOUND: table ns.nosuch does not"
                                        + " exist in catalog changeflow; SHOW TABLES FROM ns lists"
                                        + " its tables\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "OPTIMIZE nodb.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: statement 1:1:1: UNKNOWN_DATABASE: database nodb does not"
                                        + " exist in catalog changeflow (check --warehouse); SHOW"
                                        + " DATABASES lists its databases, CREATE DATABASE nodb"
                                        + " creates it\n"));
        // the catalog-qualified name the reports print (VACUUM: it commits nothing here)
        assertThat(execute("sql", "--warehouse", w, "-e", "VACUUM changeflow.ns.t").code())
                .isZero();
        assertThat(execute("show", "ns.nosuch", "--warehouse", w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: TABLE_NOT_FOUND: no table ns.nosuch in changeflow catalog;"
                                        + " tables: ns.t\n"));
        String olderThan =
                "error: INVALID_OPTION: --older-than takes an age (7d, 12h, PT90M) or a time"
                        + " (yyyy-MM-dd[ HH:mm:ss] UTC, or an ISO instant), got 'last week'\n";
        // without a task flag maintain compacts first: the bad option is refused before that
        assertThat(execute("maintain", "ns.t", "--older-than", "last week", "--warehouse", w))
                .isEqualTo(new Result(2, olderThan));
        assertThat(
                        execute(
                                "expire",
                                "--table",
                                "ns.t",
                                "--older-than",
                                "last week",
                                "--warehouse",
                                w))
                .isEqualTo(new Result(2, olderThan));
        assertThat(
                        execute(
                                "maintain",
                                "ns.t",
                                "--expire",
                                "--consumer-expiry",
                                "x",
                                "--warehouse",
                                w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --consumer-expiry: not a duration: 'x'"
                                        + " (e.g. 2s, 500ms, 10min, 2d)\n"));
        assertThat(
                        execute(
                                "maintain",
                                "ns.t",
                                "--orphans",
                                "--orphan-min-age",
                                "soon",
                                "--warehouse",
                                w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --orphan-min-age: not a duration: 'soon'"
                                        + " (e.g. 2s, 500ms, 10min, 2d)\n"));
        assertThat(execute("maintain", "ns.t", "--purge", "--rewrite", "--warehouse", w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --purge runs alone: it rewrites and"
                                        + " expires itself (drop --rewrite, --expire,"
                                        + " --orphans)\n"));
        assertThat(
                        dev.changeflow.sinks.iceberg.CatalogSettings.localHadoop(
                                        dir.resolve("warehouse"))
                                .open()
                                .loadTable(org.apache.iceberg.catalog.TableIdentifier.of("ns", "t"))
                                .snapshots())
                .as("nothing compacted or expired")
                .hasSize(2);
        assertThat(execute("show", "ns.t", "--limit", "-1", "--warehouse", w))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --limit must be 0 (all) or more, got -1\n"));
        assertThat(execute("deploy", "--print"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: give a pipeline FILE.sql or --flows FILE\n"));
        assertThat(execute("deploy", "--print", "p.sql", "--flows", "f.yaml"))
                .isEqualTo(
                        new Result(
                                2, "error: INVALID_OPTION: give FILE.sql or --flows, not both\n"));
        assertThat(execute("deploy", "--print", "--flows", "f.yaml", "--parallelism", "0"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: --parallelism must be at least 1, got 0\n"));
        Path nope = dir.resolve("nope");
        assertThat(execute("ingest", "--warehouse", w, nope.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: SOURCE_NOT_FOUND: input not found: "
                                        + nope
                                        + " (give change-record files or folders, or a quoted glob"
                                        + " pattern)\n"));
        assertThat(execute("sql", "--warehouse", w, "-e", "SELECT * FROM table_changes('ns.t')"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_CDC_OPTIONS: Cannot read table_changes('ns.t')..."
                                        + " at position 14: it takes a table name and one or two"
                                        + " bounds, got 0 bound(s). Use table_changes('db.t',"
                                        + " start[, end]) where start and end are versions"
                                        + " (integers, e.g. 5) or timestamps in quotes (e.g."
                                        + " '2026-05-01 12:00:00').\n"));
        assertThat(execute("maintian", "ns.t"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: unknown command 'maintian' (did you mean"
                                        + " maintain or ingest?); changeflow --help lists the"
                                        + " commands\n"));
        assertThat(execute("nosuch"))
                .isEqualTo(
                        new Result(
                                2,
                                "error: INVALID_OPTION: unknown command 'nosuch'; changeflow"
                                        + " --help lists the commands\n"));
    }

    private static String[] concat(String[] a, String last) {
        String[] out = java.util.Arrays.copyOf(a, a.length + 1);
        out[a.length] = last;
        return out;
    }
}

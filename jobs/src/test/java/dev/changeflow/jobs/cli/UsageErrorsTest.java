package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
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
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = CapturedOutput.stderr(err, () -> Main.execute(args));
        return new Result(code, err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aMissingFileIsNamedByEveryCommandThatTakesOne() {
        Path missing = dir.resolve("missing.sql");
        String w = dir.resolve("warehouse").toString();
        assertThat(execute("gold", "--warehouse", w, missing.toString()))
                .isEqualTo(new Result(2, "error: Gold SQL file not found: " + missing + "\n"));
        assertThat(execute("gold", "--warehouse", w, dir.toString()))
                .isEqualTo(
                        new Result(
                                2,
                                "error: Gold SQL file not found: "
                                        + dir
                                        + " (a folder, not a file)\n"));
        assertThat(execute("run", "--warehouse", w, missing.toString()))
                .isEqualTo(new Result(2, "error: pipeline file not found: " + missing + "\n"));
        assertThat(execute("run", "--dry-run", missing.toString()))
                .isEqualTo(new Result(2, "error: pipeline file not found: " + missing + "\n"));
        assertThat(execute("describe", "--warehouse", w, missing.toString(), "t"))
                .isEqualTo(new Result(2, "error: pipeline file not found: " + missing + "\n"));
        assertThat(execute("deploy", "--print", missing.toString()))
                .isEqualTo(new Result(2, "error: pipeline file not found: " + missing + "\n"));
        Path flows = dir.resolve("flows.yaml");
        assertThat(execute("deploy", "--print", "--flows", flows.toString()))
                .isEqualTo(new Result(2, "error: flows file not found: " + flows + "\n"));
        assertThat(execute("ingest", "--warehouse", w, "--flows", flows.toString(), dir.toString()))
                .isEqualTo(new Result(2, "error: flows file not found: " + flows + "\n"));
        assertThat(dir.resolve("warehouse")).doesNotExist();
    }

    /**
     * {@code sql} statements that need a database the warehouse lacks: {@code UNKNOWN_DATABASE}
     * naming it, at the place Flink names, exit code 2, nothing created. On a new warehouse the
     * session's current database ({@code default}) does not exist either, which Flink reports for
     * any table a query reads: the message says it is the current database.
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
                                "error: statement 1:1:15: UNKNOWN_DATABASE: database default (the"
                                        + " session's current database)"
                                        + fix
                                        + "default creates it\n"));
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
                                "error: --orphan-min-age must be at least 1h (files younger than that"
                                        + " may be a running job's, not committed yet), got '10m'\n"));
    }
}

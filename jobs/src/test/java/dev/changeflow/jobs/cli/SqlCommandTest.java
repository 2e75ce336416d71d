package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.maintain.Await;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code sql} command: its catalog options, and statements run on a local warehouse (a
 * MiniCluster per run) — reads of {@code db.`t$changelog`} (semantics.md G1) in STREAMING mode
 * print each row's kind in column {@code op} and leave the metadata columns out of {@code *}.
 */
class SqlCommandTest {

    @TempDir Path warehouse;

    /** The lines the command prints for {@code statements}; it must succeed. */
    private List<String> sql(boolean streaming, String... statements) {
        return sqlOn(warehouse, streaming, statements);
    }

    /** As {@link #sql}, on warehouse {@code w}. */
    private static List<String> sqlOn(Path w, boolean streaming, String... statements) {
        SqlCommand command = new SqlCommand();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        command.out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        List<String> args = new ArrayList<>(List.of("--warehouse", w.toString()));
        if (streaming) {
            args.add("--streaming");
        }
        for (String statement : statements) {
            args.add("-e");
            args.add(statement);
        }
        assertThat(new CommandLine(command).execute(args.toArray(new String[0]))).isZero();
        return List.of(printed.toString(StandardCharsets.UTF_8).split("\n"));
    }

    /**
     * The results of a run of queries, one per query: its header, then its rows (a new result
     * starts at each header, a line starting with {@code header}).
     */
    private static List<List<String>> results(List<String> lines, String header) {
        List<List<String>> results = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith(header)) {
                results.add(new ArrayList<>());
            }
            results.get(results.size() - 1).add(line);
        }
        return results;
    }

    /**
     * G1 through {@code changeflow sql --streaming}: {@code db.t} (key id) has version 1 = (1, a),
     * (2, b) and version 2 = 2 updated to b2. A changelog read prints {@code op} first and, for
     * {@code *}, t's columns only; the metadata columns are selectable by name; a bounded read from
     * {@code latest} with {@code changes-only} has nothing to read and prints its header only; from
     * {@code latest} with the default {@code snapshot-then-changes} it prints the current rows.
     * BATCH mode prints no {@code op}.
     */
    @Test
    void changelogReadsPrintRowKindsAndTheTablesColumns() {
        assertThat(
                        sql(
                                false,
                                "CREATE DATABASE db",
                                "CREATE TABLE db.t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
                                        + "WITH ('format-version'='2', 'write.upsert.enabled'='true')",
                                "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')",
                                "INSERT INTO db.t VALUES (2, 'b2')",
                                "SELECT * FROM db.t WHERE id = 2"))
                .containsExactly("OK", "OK", "OK", "OK", "id,name", "2,b2");

        List<List<String>> results =
                results(
                        sql(
                                true,
                                "SELECT * FROM db.`t$changelog` "
                                        + "/*+ OPTIONS('starting-version'='2', 'bounded'='true') */",
                                "SELECT id, _commit_version FROM db.`t$changelog` /*+ OPTIONS("
                                        + "'starting-version'='2', 'start-mode'='changes-only', 'bounded'='true') */",
                                "SELECT * FROM db.`t$changelog` /*+ OPTIONS('starting-version'='latest', "
                                        + "'start-mode'='changes-only', 'bounded'='true') */",
                                "SELECT * FROM db.`t$changelog` "
                                        + "/*+ OPTIONS('starting-version'='latest', 'bounded'='true') */"),
                        "op,");
        assertThat(results).hasSize(4);
        // the table as of version 1 as +I, then version 2; per key in order
        assertThat(results.get(0).get(0)).isEqualTo("op,id,name");
        assertThat(results.get(0).subList(1, results.get(0).size()))
                .containsExactlyInAnyOrder("+I,1,a", "+I,2,b", "-U,2,b", "+U,2,b2");
        assertThat(results.get(0).stream().filter(line -> line.contains(",2,")))
                .containsExactly("+I,2,b", "-U,2,b", "+U,2,b2");
        assertThat(results.get(1)).containsExactly("op,id,_commit_version", "-U,2,2", "+U,2,2");
        assertThat(results.get(2)).containsExactly("op,id,name");
        assertThat(results.get(3).get(0)).isEqualTo("op,id,name");
        assertThat(results.get(3).subList(1, results.get(3).size()))
                .containsExactlyInAnyOrder("+I,1,a", "+I,2,b2");
    }

    /**
     * A streaming read with {@code consumer-id} registers its consumer (F7): {@code sql
     * --streaming} checkpoints such a run (here every 500 ms), and the consumer's file names the
     * next version it reads. Without checkpoints the file was never written.
     */
    @Test
    void aStreamingReadWithConsumerIdRegistersItsConsumer() throws Exception {
        assertThat(
                        sql(
                                false,
                                "CREATE DATABASE db",
                                "CREATE TABLE db.t (id BIGINT, name STRING, PRIMARY KEY (id) NOT"
                                        + " ENFORCED) WITH ('format-version'='2')",
                                "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')"))
                .containsExactly("OK", "OK", "OK");
        Path consumer = warehouse.resolve("db/t/changeflow/consumers/gold.json");
        SqlCommand command = new SqlCommand();
        // ends the read: the first row printed once the consumer is registered stops the command
        // (its rows' iterator is closed, which cancels the job)
        command.out =
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8) {
                    @Override
                    public void println(Object line) {
                        if (Files.exists(consumer)) {
                            throw new IllegalStateException("stop the read");
                        }
                        super.println(line);
                    }
                };
        AtomicReference<Exception> stopped = new AtomicReference<>();
        Thread reader =
                new Thread(
                        () ->
                                new CommandLine(command)
                                        .setExecutionExceptionHandler(
                                                (e, line, parsed) -> {
                                                    stopped.set(e);
                                                    return 1;
                                                })
                                        .execute(
                                                "--warehouse",
                                                warehouse.toString(),
                                                "--streaming",
                                                "--checkpoint-interval",
                                                "500ms",
                                                "-e",
                                                "SELECT id FROM db.`t$changes` /*+ OPTIONS("
                                                        + "'starting-version'='1',"
                                                        + " 'consumer-id'='gold') */"),
                        "streaming sql");
        reader.setDaemon(true);
        reader.start();
        try {
            Await.until(
                    "the consumer's file",
                    Duration.ofSeconds(90),
                    () -> Files.exists(consumer),
                    () -> "reader alive: " + reader.isAlive());
            assertThat(Files.readString(consumer))
                    .startsWith("{\"consumer-id\":\"gold\",\"next-version\":2,");
        } finally {
            // a new version gives the read a row to print
            sql(false, "INSERT INTO db.t VALUES (3, 'c')");
            reader.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertThat(reader.isAlive()).as("the streaming read ended").isFalse();
        assertThat(stopped.get())
                .isInstanceOf(CliErrors.Failed.class)
                .hasMessage(
                        "statement 1:1:1: QUERY_FAILED: the statement's job failed:"
                                + " IllegalStateException: stop the read");
        assertThat(SqlCommand.needsCheckpoints(List.of("SELECT * FROM db.t"))).isFalse();
        assertThat(SqlCommand.needsCheckpoints(List.of(" insert into db.t VALUES (3, 'c')")))
                .isTrue();
    }

    /**
     * A new warehouse (its folder not created yet) and an empty one have no database and no table:
     * {@code SHOW DATABASES} and {@code SHOW TABLES} (in the session's current database, {@code
     * default}) print their header only, and nothing is created; once a table is created in {@code
     * default}, both list it. Iceberg's Hadoop catalog alone fails on both (no namespace). The
     * warehouse's {@code .changeflow} state folder is not listed as a database.
     */
    @Test
    void aNewOrEmptyWarehouseListsNoDatabaseAndNoTable() {
        Path fresh = warehouse.resolve("new");
        assertThat(sqlOn(fresh, false, "SHOW DATABASES", "SHOW TABLES", "SHOW CURRENT DATABASE"))
                .containsExactly("database name", "table name", "current database name", "default");
        assertThat(fresh).doesNotExist();
        assertThat(sql(false, "SHOW DATABASES", "SHOW TABLES"))
                .containsExactly("database name", "table name");
        assertThat(sql(false, "CREATE TABLE t (id INT)", "SHOW DATABASES", "SHOW TABLES"))
                .containsExactly("OK", "database name", "default", "table name", "t");
        // changeflow's saved state beside the tables is no database
        assertThat(warehouse.resolve(".changeflow/checkpoints").toFile().mkdirs()).isTrue();
        assertThat(sql(false, "SHOW DATABASES")).containsExactly("database name", "default");
    }

    /**
     * {@code SHOW CREATE TABLE} and {@code DESCRIBE} print each column's {@code COMMENT}: the doc
     * of its Iceberg field, which Iceberg's Flink catalog leaves out ({@code ChangeflowCatalog}),
     * for a table created through Iceberg's API (with a primary key: its identifier field) and one
     * created by Flink's {@code CREATE TABLE ... COMMENT}; a column without doc has no COMMENT. The
     * {@code src-catalog} option (it holds the warehouse's path) and the primary key's name
     * (Iceberg's, a random id) are checked by shape.
     */
    @Test
    void showCreateTableAndDescribePrintColumnComments() {
        org.apache.iceberg.catalog.Catalog cat =
                CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        cat.createTable(
                org.apache.iceberg.catalog.TableIdentifier.of("db", "api"),
                new org.apache.iceberg.Schema(
                        List.of(
                                org.apache.iceberg.types.Types.NestedField.required(
                                        1,
                                        "id",
                                        org.apache.iceberg.types.Types.IntegerType.get(),
                                        "the id"),
                                org.apache.iceberg.types.Types.NestedField.optional(
                                        2, "name", org.apache.iceberg.types.Types.StringType.get()),
                                org.apache.iceberg.types.Types.NestedField.optional(
                                        3,
                                        "note",
                                        org.apache.iceberg.types.Types.StringType.get(),
                                        "it's free text")),
                        java.util.Set.of(1)));
        List<String> lines =
                sql(
                        false,
                        "CREATE TABLE db.ddl (id INT NOT NULL COMMENT 'the key', v STRING COMMENT"
                                + " 'a value', w STRING)",
                        "SHOW CREATE TABLE db.api",
                        "DESCRIBE db.api",
                        "SHOW CREATE TABLE db.ddl",
                        "DESCRIBE db.ddl");
        assertThat(lines.stream().filter(l -> l.startsWith("  'src-catalog' = ")))
                .hasSize(2)
                .allMatch(l -> l.contains("\"\"catalog-database\"\":\"\"db\"\""));
        assertThat(
                        lines.stream()
                                .filter(l -> !l.startsWith("  'src-catalog' = "))
                                .map(
                                        l ->
                                                l.replaceFirst(
                                                        "CONSTRAINT `[^`]+` PRIMARY KEY",
                                                        "CONSTRAINT `pk` PRIMARY KEY")))
                .containsExactly(
                        "OK",
                        "result",
                        "\"CREATE TABLE `changeflow`.`db`.`api` (",
                        "  `id` INT NOT NULL COMMENT 'the id',",
                        "  `name` VARCHAR(2147483647),",
                        "  `note` VARCHAR(2147483647) COMMENT 'it''s free text',",
                        "  CONSTRAINT `pk` PRIMARY KEY (`id`) NOT ENFORCED",
                        ")",
                        "WITH (",
                        "  'connector' = 'iceberg',",
                        "  'write.parquet.compression-codec' = 'zstd'",
                        ")",
                        "\"",
                        "name,type,null,key,extras,watermark,comment",
                        "id,INT,f,PRI(id),,,the id",
                        "name,STRING,t,,,,",
                        "note,STRING,t,,,,it's free text",
                        "result",
                        "\"CREATE TABLE `changeflow`.`db`.`ddl` (",
                        "  `id` INT NOT NULL COMMENT 'the key',",
                        "  `v` VARCHAR(2147483647) COMMENT 'a value',",
                        "  `w` VARCHAR(2147483647)",
                        ")",
                        "WITH (",
                        "  'connector' = 'iceberg',",
                        // changed on purpose (session 27): a table created by DDL through the
                        // changeflow catalog gets metadata cleanup as a table-default property
                        "  'write.metadata.delete-after-commit.enabled' = 'true',",
                        "  'write.parquet.compression-codec' = 'zstd'",
                        ")",
                        "\"",
                        "name,type,null,key,extras,watermark,comment",
                        "id,INT,f,,,,the key",
                        "v,STRING,t,,,,a value",
                        "w,STRING,t,,,,");
    }

    /**
     * {@code changeflow sql --help} names {@code t$changelog} next to {@code t$changes}, and the
     * row-kind column of {@code --streaming}.
     */
    @Test
    void helpNamesChangesAndChangelog() {
        CommandLine command = new CommandLine(new SqlCommand());
        assertThat(command.getUsageMessage()).contains("`t$changes`").contains("`t$changelog`");
        assertThat(String.join(" ", command.getCommandSpec().usageMessage().description()))
                .contains(
                        "table_changes(...) and db.`t$changes` read change feeds; db.`t$changelog` "
                                + "reads one as a changelog (+I/-U/+U/-D row kinds, --streaming only;");
        assertThat(
                        String.join(
                                " ",
                                command.getCommandSpec().findOption("--streaming").description()))
                .contains("query rows start with their row kind, column op (+I, -U, +U, -D)");
    }

    @Test
    void icebergCatalogPropertiesBecomeChangeflowCatalogOptions() {
        Path warehouse = Path.of("/tmp/wh");
        assertThat(SqlCommand.flinkCatalogOptions(CatalogSettings.localHadoop(warehouse)))
                .isEqualTo(
                        Map.of(
                                "type",
                                "changeflow",
                                "catalog-type",
                                "hadoop",
                                "warehouse",
                                "file:///tmp/wh"));
        assertThat(
                        SqlCommand.flinkCatalogOptions(
                                CatalogSettings.of(
                                        "c",
                                        Map.of("type", "rest", "uri", "http://localhost:8181"))))
                .isEqualTo(
                        Map.of(
                                "type",
                                "changeflow",
                                "catalog-type",
                                "rest",
                                "uri",
                                "http://localhost:8181"));
        assertThat(
                        SqlCommand.flinkCatalogOptions(
                                CatalogSettings.of(
                                        "c", Map.of("type", "jdbc", "uri", "jdbc:sqlite:x.db"))))
                .isEqualTo(
                        Map.of(
                                "type",
                                "changeflow",
                                "catalog-impl",
                                "org.apache.iceberg.jdbc.JdbcCatalog",
                                "uri",
                                "jdbc:sqlite:x.db"));
    }
}

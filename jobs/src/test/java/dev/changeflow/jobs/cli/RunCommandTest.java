package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlPipeline;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code changeflow run FILE.sql}: the dry-run plan, and errors before anything is written. */
class RunCommandTest {
    @TempDir Path dir;

    private static final String PIPELINE =
            "SET name = shop;\n"
                    + "USE SCHEMA sales;\n"
                    + "CREATE TEMPORARY VIEW orders_cdc AS SELECT * FROM STREAM read_files('in/cdc.jsonl',"
                    + " table => 'orders');\n"
                    + "CREATE OR REFRESH STREAMING TABLE orders (id INT NOT NULL, status STRING);\n"
                    + "CREATE FLOW orders AS AUTO CDC INTO orders FROM STREAM(orders_cdc) KEYS (id)\n"
                    + "  APPLY AS DELETE WHEN status = \"gone\" STORED AS SCD TYPE 2;\n"
                    + "CREATE OR REFRESH STREAMING TABLE audit (id INT, note STRING)\n"
                    + "  AS SELECT * FROM STREAM read_files('in/cdc.jsonl');\n";

    private RunCommand command(String... args) {
        RunCommand c = new RunCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    private Path pipeline(String text) throws Exception {
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(dir.resolve("in/cdc.jsonl"), "");
        Path f = dir.resolve("shop.sql");
        Files.writeString(f, text);
        return f;
    }

    @Test
    void dryRunPrintsThePlanAndWritesNothing() throws Exception {
        Path f = pipeline(PIPELINE);
        Path warehouse = dir.resolve("warehouse");
        RunCommand c = command("--dry-run", "--warehouse", warehouse.toString(), f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        Path input = dir.resolve("in/cdc.jsonl");
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "Pipeline shop ("
                                + f
                                + "): 2 flows, format debezium-json, checkpoint interval 5000 ms,"
                                + " quarantine sales.changeflow_quarantine\n"
                                + "  sales.orders <- table orders: AUTO CDC KEYS (id) SEQUENCE BY"
                                + " source.lsn (Debezium default) STORED AS SCD TYPE 2 APPLY AS DELETE"
                                + " WHEN status = 'gone' (id INT NOT NULL, status STRING)\n"
                                + "  sales.audit <- table audit: append-only (id INT, note STRING)\n"
                                + "Inputs:\n"
                                + "  "
                                + input
                                + "\n"
                                + "Dry run: no table or state was written.\n");
        assertThat(warehouse).doesNotExist();
    }

    @Test
    void aBadPredicateOrCheckpointIntervalFailsTheDryRunAndTheRunBeforeAnythingIsWritten()
            throws Exception {
        Path f = pipeline(PIPELINE.replace("status = \"gone\"", "status === 'gone'"));
        Path warehouse = dir.resolve("warehouse");
        for (String[] args :
                List.of(
                        new String[] {"--dry-run", "--warehouse", warehouse.toString()},
                        new String[] {"--warehouse", warehouse.toString()})) {
            List<String> all = new ArrayList<>(List.of(args));
            all.add(f.toString());
            assertThatThrownBy(() -> command(all.toArray(String[]::new)).call())
                    .isInstanceOf(SqlException.class)
                    .hasMessageStartingWith(
                            f
                                    + ":5:1: INVALID_FLOW: flow 'orders': APPLY AS DELETE WHEN"
                                    + " 'status === 'gone'' / APPLY AS"
                                    + " TRUNCATE WHEN (none) is not a valid Flink SQL predicate over"
                                    + " the columns [id, status");
            assertThat(warehouse).doesNotExist();
        }
        Path zero = pipeline("SET checkpoint-interval = 0;\n" + PIPELINE);
        assertThatThrownBy(() -> command("--dry-run", zero.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        zero
                                + ":1:1: INVALID_OPTION: SET checkpoint-interval:"
                                + " 'checkpoint-interval' = '0' is not a duration of at least 10ms"
                                + " (e.g. 5s, 500ms; a bare number is seconds).");
    }

    /**
     * S2: the dry-run plan and DESCRIBE TABLE EXTENDED show read_files' schemaHints and
     * maxFilesPerTrigger when given (issue #13).
     */
    @Test
    void dryRunAndDescribeShowSchemaHintsAndMaxFilesPerTrigger() throws Exception {
        Files.createDirectories(dir.resolve("in/csv"));
        Path f = dir.resolve("hints.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE log AS SELECT * FROM STREAM read_files('in/csv',"
                        + " format => 'csv', schemaHints => 'id INT', maxFilesPerTrigger => 5);\n"
                        + "DESCRIBE TABLE EXTENDED log;\n");
        Path input = dir.resolve("in/csv");
        SqlPipeline p = SqlPipeline.read(f);
        assertThat(p.sourceOfFlow(0))
                .isEqualTo(
                        "read_files "
                                + input
                                + " (format csv, table log, schemaHints 'id INT',"
                                + " maxFilesPerTrigger 5)");
        Files.writeString(dir.resolve("in/csv/a.csv"), "id,what\n1,a\n");
        RunCommand c = command("--dry-run", f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .contains("  default.log <- table log: append-only")
                .contains(" schemaHints 'id INT'\n")
                .contains(
                        "Inputs:\n  "
                                + input
                                + "\n  maxFilesPerTrigger 5 (at most that many new files per"
                                + " checkpoint)\n");
    }

    /** S8: the dry-run plan shows a flow's expectations. */
    @Test
    void dryRunShowsTheExpectations() throws Exception {
        Path f =
                pipeline(
                        PIPELINE.replace(
                                "(id INT NOT NULL, status STRING);",
                                "(id INT NOT NULL, status STRING,\n"
                                        + "  CONSTRAINT known EXPECT (status IN ('new', 'gone')),\n"
                                        + "  CONSTRAINT pos EXPECT (id > 0) ON VIOLATION FAIL"
                                        + " UPDATE);"));
        RunCommand c = command("--dry-run", f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .contains(
                        "  sales.orders <- table orders: AUTO CDC KEYS (id) SEQUENCE BY"
                                + " source.lsn (Debezium default) STORED AS SCD TYPE 2 APPLY AS DELETE"
                                + " WHEN status = 'gone' CONSTRAINT known EXPECT (status IN ('new',"
                                + " 'gone')) CONSTRAINT pos EXPECT (id > 0) ON VIOLATION FAIL UPDATE"
                                + " (id INT NOT NULL, status STRING)\n");
    }

    /**
     * S2: plain JSON rows name no table, so two flows reading different read_files paths in one job
     * would quarantine every row as UNKNOWN_TOPIC (and mark the files read); the dry run and the
     * run refuse it before anything is written, and a job per table is accepted.
     */
    @Test
    void plainJsonFlowsOverDifferentPathsInOneJobAreRefusedBeforeAnythingIsWritten()
            throws Exception {
        Files.createDirectories(dir.resolve("in/cust"));
        Files.createDirectories(dir.resolve("in/pay"));
        Files.writeString(dir.resolve("in/cust/1.jsonl"), "{\"id\":1,\"name\":\"a\"}\n");
        Files.writeString(dir.resolve("in/pay/1.jsonl"), "{\"id\":7,\"amount\":70}\n");
        String tables =
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE customers (id INT, name STRING)\n"
                        + "  AS SELECT * FROM STREAM read_files('in/cust', format => 'json');\n"
                        + "CREATE OR REFRESH STREAMING TABLE payments (id INT, amount INT)\n"
                        + "  AS SELECT * FROM STREAM read_files('in/pay', format => 'json');\n";
        Path f = dir.resolve("combo.sql");
        Files.writeString(f, tables);
        Path warehouse = dir.resolve("warehouse");
        String expected =
                f
                        + ":5:27: CONFLICTING_SOURCES: format 'json' rows name no table, so one job"
                        + " cannot tell which flow a row belongs to, and this run's flows read"
                        + " different read_files paths: "
                        + dir.resolve("in/cust")
                        + " (customers); "
                        + dir.resolve("in/pay")
                        + " (payments). Every row would be quarantined as UNKNOWN_TOPIC. Refresh"
                        + " each table as a job of its own (REFRESH STREAMING TABLE customers;"
                        + " REFRESH STREAMING TABLE payments; in the file, or run --refresh"
                        + " customers), or use format 'debezium-json' records, which name their"
                        + " table";
        for (String[] args :
                List.of(
                        new String[] {"--dry-run", "--warehouse", warehouse.toString()},
                        new String[] {"--warehouse", warehouse.toString()})) {
            List<String> all = new ArrayList<>(List.of(args));
            all.add(f.toString());
            assertThatThrownBy(() -> command(all.toArray(new String[0])).call())
                    .isInstanceOf(SqlException.class)
                    .hasMessage(expected);
            assertThat(warehouse).doesNotExist();
        }

        // a job per table: each routes every row of its path to its one flow
        Files.writeString(
                f,
                tables + "REFRESH STREAMING TABLE customers;\nREFRESH STREAMING TABLE payments;\n");
        assertThat(run(f, "--dry-run", "--warehouse", warehouse.toString()))
                .contains("Pipeline combo-refresh-customers (")
                .contains("Pipeline combo-refresh-payments (")
                .endsWith("Dry run: no table or state was written.\n");
        assertThat(warehouse).doesNotExist();
    }

    /**
     * S2 (issue #13): a read_files path whose scheme no Flink file-system plugin serves is
     * SOURCE_NOT_FOUND at the path, naming the scheme and the plugin to add, before anything is
     * written (never Flink's raw UnsupportedFileSystemSchemeException).
     */
    @Test
    void aSchemeWithoutFileSystemPluginFailsNamingThePluginBeforeAnythingIsWritten()
            throws Exception {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Path f = dir.resolve("gs.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE other AS SELECT * FROM STREAM\n"
                        + "  read_files('gs://bucket/cdc/*.json', format => 'json');\n");
        Path warehouse = dir.resolve("warehouse");
        String key = dev.changeflow.sources.files.InputFileSystems.PLUGINS_DIR_PROPERTY;
        String saved = System.getProperty(key);
        System.setProperty(key, plugins.toString());
        try {
            assertThatThrownBy(
                            () -> command("--warehouse", warehouse.toString(), f.toString()).call())
                    .isInstanceOf(SqlException.class)
                    .hasMessage(
                            f
                                    + ":2:3: SOURCE_NOT_FOUND: read_files path"
                                    + " gs://bucket/cdc/*.json: no Flink file system for scheme"
                                    + " 'gs' of gs://bucket/cdc: add the Flink file-system plugin"
                                    + " flink-gs-fs-hadoop (flink-gs-fs-hadoop-2.1.1.jar) in a"
                                    + " sub-folder of its own of the plugins folder ("
                                    + plugins
                                    + ", from changeflow.flink-plugins-dir or FLINK_PLUGINS_DIR)")
                    .satisfies(
                            e ->
                                    assertThat(((SqlException) e).code())
                                            .isEqualTo(SqlException.Code.SOURCE_NOT_FOUND));
        } finally {
            if (saved == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, saved);
            }
            dev.changeflow.sources.files.InputFileSystems.initialize(java.util.Map.of());
        }
        assertThat(warehouse).doesNotExist();
    }

    @Test
    void aMissingInputFailsWithItsPlaceBeforeAnythingIsWritten() throws Exception {
        Path f = pipeline(PIPELINE.replace("'in/cdc.jsonl',", "'in/missing.jsonl',"));
        Path warehouse = dir.resolve("warehouse");
        assertThatThrownBy(() -> command("--warehouse", warehouse.toString(), f.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        f
                                + ":3:58: SOURCE_NOT_FOUND: read_files path "
                                + dir.resolve("in/missing.jsonl")
                                + " does not exist (a relative path is resolved against the folder of"
                                + " the pipeline file)");
        assertThat(warehouse).doesNotExist();
    }

    @Test
    void aBadFileExitsWithUsageCodeAndWritesNothing() throws Exception {
        Path f = pipeline(PIPELINE.replace("KEYS (id)", "KEYS id"));
        Path warehouse = dir.resolve("warehouse");
        assertThat(Main.execute("run", "--warehouse", warehouse.toString(), f.toString()))
                .isEqualTo(2);
        assertThatThrownBy(() -> command(f.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessage(f + ":5:73: SYNTAX_ERROR: expected '(' after KEYS, found 'id'");
        assertThat(Main.execute("run", dir.resolve("nope.sql").toString())).isEqualTo(2);
        assertThat(warehouse).doesNotExist();
    }

    private static final String TWO_INPUTS =
            "SET name = shop;\n"
                    + "CREATE OR REFRESH STREAMING TABLE orders (id INT NOT NULL, status STRING)\n"
                    + "  SCHEDULE EVERY 1 HOUR\n"
                    + "  FLOW AUTO CDC FROM STREAM read_files('in/cdc.jsonl') KEYS (id);\n"
                    + "CREATE OR REFRESH STREAMING TABLE audit (id INT, note STRING)\n"
                    + "  AS SELECT * FROM STREAM read_files('in/audit');\n";

    /** What --dry-run prints for the job of --refresh orders over TWO_INPUTS in file {@code f}. */
    private String ordersRefreshPlan(Path f) {
        return "Pipeline shop-refresh-orders ("
                + f
                + "): 1 flow, format debezium-json, checkpoint interval 5000 ms,"
                + " quarantine default.changeflow_quarantine\n"
                + "  default.orders <- table orders: AUTO CDC KEYS (id) SEQUENCE BY"
                + " source.lsn (Debezium default) STORED AS SCD TYPE 1"
                + " (id INT NOT NULL, status STRING)\n"
                + "Inputs:\n"
                + "  "
                + dir.resolve("in/cdc.jsonl")
                + "\n";
    }

    @Test
    void refreshRunsTheNamedTablesAsAJobOfTheirOwn() throws Exception {
        Path f = pipeline(TWO_INPUTS);
        Files.createDirectories(dir.resolve("in/audit"));
        RunCommand c = command("--dry-run", "--refresh", "LIVE.Orders", f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .isEqualTo(ordersRefreshPlan(f) + "Dry run: no table or state was written.\n");
        RunCommand all = command("--dry-run", "--refresh", "audit,orders", f.toString());
        ByteArrayOutputStream allOut = new ByteArrayOutputStream();
        all.out = new PrintStream(allOut, true, StandardCharsets.UTF_8);
        assertThat(all.call()).isZero();
        assertThat(allOut.toString(StandardCharsets.UTF_8))
                .startsWith("Pipeline shop (" + f + "): 2 flows,");
    }

    /**
     * {@code --dry-run} refuses what the run would refuse about a table's partitioning
     * (docs/semantics.md A1): a PARTITIONED BY that makes no valid Iceberg spec ({@code
     * INVALID_OPTION} at the table's statement) and an existing table with snapshots that is
     * partitioned otherwise ({@code TARGET_SCHEMA_MISMATCH}, also at the table's statement);
     * neither writes anything.
     */
    @Test
    void dryRunRefusesWhatTheRunWouldRefuseAboutPartitioning() throws Exception {
        Path warehouse = dir.resolve("warehouse");
        String w = warehouse.toString();
        Files.createDirectories(dir.resolve("in/audit"));
        String scheduled = "  SCHEDULE EVERY 1 HOUR\n";
        Path twice = pipeline(TWO_INPUTS.replace(scheduled, "  PARTITIONED BY (status, status)\n"));
        assertThatThrownBy(() -> command("--dry-run", "--warehouse", w, twice.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        twice
                                + ":2:1: INVALID_OPTION: PARTITIONED BY: partitionBy [status,"
                                + " status] of table default.orders: Cannot use partition name"
                                + " more than once: status");
        Path unknown = pipeline(TWO_INPUTS.replace(scheduled, "  PARTITIONED BY (nosuch)\n"));
        assertThatThrownBy(() -> command("--dry-run", "--warehouse", w, unknown.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith(
                        unknown
                                + ":2:1: INVALID_OPTION: PARTITIONED BY: partitionBy 'nosuch' of"
                                + " table default.orders: column 'nosuch' is not a column of the"
                                + " table");
        assertThat(warehouse).doesNotExist();

        // the table exists, unpartitioned, with a snapshot
        org.apache.iceberg.catalog.Catalog cat =
                dev.changeflow.sinks.iceberg.CatalogSettings.localHadoop(warehouse).open();
        org.apache.iceberg.Table orders =
                dev.changeflow.sinks.iceberg.StreamingTables.ensureTable(
                        cat,
                        org.apache.iceberg.catalog.TableIdentifier.of("default", "orders"),
                        org.apache.flink.table.types.logical.RowType.of(
                                new org.apache.flink.table.types.logical.LogicalType[] {
                                    new org.apache.flink.table.types.logical.IntType(false),
                                    new org.apache.flink.table.types.logical.VarCharType(
                                            org.apache.flink.table.types.logical.VarCharType
                                                    .MAX_LENGTH)
                                },
                                new String[] {"id", "status"}),
                        List.of("id"),
                        dev.changeflow.sinks.iceberg.StreamingTableOptions.defaults());
        orders.newAppend().commit();
        String metadata = orders.location();
        Path bucketed =
                pipeline(TWO_INPUTS.replace(scheduled, "  PARTITIONED BY (bucket(4, id))\n"));
        List<String> before = files(warehouse);
        // placed at the table's CREATE statement
        assertThatThrownBy(() -> command("--dry-run", "--warehouse", w, bucketed.toString()).call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasCauseInstanceOf(dev.changeflow.operators.AutoCdcException.class)
                .hasMessageStartingWith(
                        bucketed
                                + ":2:1: TARGET_SCHEMA_MISMATCH: table default.orders is"
                                + " partitioned by [] but its"
                                + " definition says [bucket[4](id)]; a table that holds rows keeps"
                                + " its partitioning");
        assertThat(files(warehouse)).isEqualTo(before);
        assertThat(metadata).isNotBlank();
    }

    /** Every file under {@code root}, with its size. */
    private static List<String> files(Path root) throws Exception {
        List<String> out = new ArrayList<>();
        try (var walk = Files.walk(root)) {
            walk.filter(Files::isRegularFile)
                    .sorted()
                    .forEach(
                            p -> {
                                try {
                                    out.add(p + " " + Files.size(p));
                                } catch (java.io.IOException e) {
                                    throw new java.io.UncheckedIOException(e);
                                }
                            });
        }
        return out;
    }

    @Test
    void refreshStatementsRunLikeTheFlagsInFileOrderAndAFlagReplacesThem() throws Exception {
        Path f =
                pipeline(
                        TWO_INPUTS
                                + "REFRESH STREAMING TABLE audit;\n"
                                + "REFRESH STREAMING TABLE orders FULL;\n");
        Files.createDirectories(dir.resolve("in/audit"));
        RunCommand c = command("--dry-run", f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "Pipeline shop-refresh-audit ("
                                + f
                                + "): 1 flow, format debezium-json, checkpoint interval 5000 ms,"
                                + " quarantine default.changeflow_quarantine\n"
                                + "  default.audit <- table audit: append-only (id INT, note STRING)\n"
                                + "Inputs:\n"
                                + "  "
                                + dir.resolve("in/audit")
                                + "\n"
                                + ordersRefreshPlan(f)
                                + "Dry run: no table or state was written.\n");
        RunCommand flag = command("--dry-run", "--refresh", "orders", f.toString());
        ByteArrayOutputStream flagOut = new ByteArrayOutputStream();
        flag.out = new PrintStream(flagOut, true, StandardCharsets.UTF_8);
        assertThat(flag.call()).isZero();
        assertThat(flagOut.toString(StandardCharsets.UTF_8))
                .startsWith(
                        "note: the file's REFRESH statements are not run: --refresh names the"
                                + " tables\nPipeline shop-refresh-orders (");
    }

    @Test
    void refreshRefusesUnknownTablesAndInputsSharedWithTablesLeftOut() throws Exception {
        Path f = pipeline(TWO_INPUTS);
        assertThatThrownBy(() -> command("--dry-run", "--refresh", "orderz", f.toString()).call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--refresh names orderz, which no CREATE STREAMING TABLE of the file"
                                + " declares (tables: orders, audit)");
        Path shared = pipeline(PIPELINE);
        assertThatThrownBy(
                        () -> command("--dry-run", "--refresh", "audit", shared.toString()).call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--refresh audit: read_files path "
                                + dir.resolve("in/cdc.jsonl")
                                + " also feeds streaming table orders, which is not refreshed;"
                                + " refresh them together (--refresh ...,orders) or give each table"
                                + " a path of its own");
        assertThat(Main.execute("run", "--refresh", "nope", f.toString())).isEqualTo(2);
        // the error names the option the user gave
        assertThatThrownBy(
                        () ->
                                command("--dry-run", "--full-refresh", "audit", shared.toString())
                                        .call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--full-refresh audit: read_files path "
                                + dir.resolve("in/cdc.jsonl")
                                + " also feeds streaming table orders, which is not refreshed;"
                                + " refresh them together (--full-refresh ...,orders) or give each"
                                + " table a path of its own");
    }

    @Test
    void fullRefreshIsRefusedWhereTheTableForbidsResetsAndWithRefresh() throws Exception {
        Path f =
                pipeline(
                        TWO_INPUTS.replace(
                                "  SCHEDULE EVERY 1 HOUR\n",
                                "  TBLPROPERTIES ('pipelines.reset.allowed' = 'false')\n"));
        Path warehouse = dir.resolve("warehouse");
        assertThatThrownBy(
                        () ->
                                command(
                                                "--warehouse",
                                                warehouse.toString(),
                                                "--full-refresh",
                                                "orders",
                                                f.toString())
                                        .call())
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        f
                                + ":2:1: RESET_NOT_ALLOWED: streaming table orders sets"
                                + " 'pipelines.reset.allowed' = 'false': a full refresh would empty"
                                + " it, so it is refused; refresh it without FULL, or remove the"
                                + " property first");
        assertThatThrownBy(
                        () ->
                                command(
                                                "--refresh",
                                                "audit",
                                                "--full-refresh",
                                                "orders",
                                                f.toString())
                                        .call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "give --refresh or --full-refresh, not both: a full refresh resets the saved"
                                + " state of its whole job");
        for (String refreshOption : List.of("--refresh", "--full-refresh")) {
            assertThatThrownBy(
                            () ->
                                    command(refreshOption, "orders", "--from-scratch", f.toString())
                                            .call())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "give --from-scratch or "
                                    + refreshOption
                                    + ", not both: --from-scratch drops every table of the file"
                                    + " and all saved state; to rebuild only some tables, give"
                                    + " --full-refresh with their names");
        }
        Path bad =
                pipeline(
                        TWO_INPUTS.replace(
                                "  SCHEDULE EVERY 1 HOUR\n",
                                "  TBLPROPERTIES ('pipelines.reset.allowed' = 'no')\n"));
        assertThatThrownBy(() -> command("--dry-run", bad.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        bad
                                + ":2:1: INVALID_OPTION: table property 'pipelines.reset.allowed' of"
                                + " orders is 'no': give 'true' or 'false'");
        assertThat(warehouse).doesNotExist();
    }

    private String run(Path f, String... flags) throws Exception {
        List<String> args = new ArrayList<>(List.of(flags));
        args.add(f.toString());
        RunCommand c = command(args.toArray(String[]::new));
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        return buf.toString(StandardCharsets.UTF_8);
    }

    /**
     * S1: a declared column list on a table with a select list gives the Iceberg table its columns
     * in the declared order and types, NOT NULL as a required field and COMMENT as the doc; a later
     * NULL in the NOT NULL column fails the run ({@code NULL_IN_NOT_NULL_COLUMN}, exit code 2) and
     * commits nothing.
     */
    @Test
    void aDeclaredColumnListGivesTheTableItsTypesNotNullAndComments() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("sales"));
        Files.writeString(
                dir.resolve("sales/a.json"),
                "{\"product\": \"apple\", \"price\": 1.5, \"qty\": 2}\n"
                        + "{\"product\": \"pear\", \"price\": 2.25, \"qty\": 1}\n"
                        + "{\"product\": \"fig\", \"price\": 3.0, \"qty\": 4}\n");
        Path f = dir.resolve("big.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE big_sales (\n"
                        + "  product STRING NOT NULL COMMENT 'upper-cased name',\n"
                        + "  total DECIMAL(10, 2) COMMENT 'price times quantity'\n"
                        + ") AS SELECT price * qty AS total, upper(product) AS product\n"
                        + "  FROM STREAM read_files('sales/', format => 'json')\n"
                        + "  WHERE qty > 1;\n");
        assertThat(Main.execute("run", "--warehouse", w.toString(), f.toString())).isZero();
        org.apache.iceberg.Table t =
                catalogOf(w)
                        .loadTable(
                                org.apache.iceberg.catalog.TableIdentifier.of(
                                        "default", "big_sales"));
        assertThat(t.schema().columns())
                .extracting(c -> c.name() + " " + c.type() + " " + c.isRequired() + " " + c.doc())
                .containsExactly(
                        "product string true upper-cased name",
                        "total decimal(10, 2) false price times quantity");
        assertThat(rows(t)).containsExactlyInAnyOrder("APPLE,3.00", "FIG,12.00");
        long snapshot = t.currentSnapshot().snapshotId();

        Files.writeString(
                dir.resolve("sales/b.json"), "{\"product\": null, \"price\": 1.0, \"qty\": 5}\n");
        CapturedOutput.MainRun run =
                CapturedOutput.main("run", "--warehouse", w.toString(), f.toString());
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.stderr().split("\n")[0])
                .isEqualTo(
                        "error: NULL_IN_NOT_NULL_COLUMN: flow 'big_sales': the query gives NULL for"
                                + " column product, which the streaming table declares NOT NULL;"
                                + " the run stops and nothing of the running checkpoint is"
                                + " committed: fix the record at its source, filter it out with"
                                + " WHERE, COALESCE it in the select list, or declare the column"
                                + " without NOT NULL");
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(snapshot);
    }

    /** The rows of {@code t} as CSV lines. */
    private static List<String> rows(org.apache.iceberg.Table t) throws Exception {
        List<String> out = new ArrayList<>();
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> it =
                org.apache.iceberg.data.IcebergGenerics.read(t).build()) {
            for (org.apache.iceberg.data.Record r : it) {
                List<String> fields = new ArrayList<>();
                for (int i = 0; i < r.size(); i++) {
                    fields.add(String.valueOf(r.get(i)));
                }
                out.add(String.join(",", fields));
            }
        }
        return out;
    }

    private static org.apache.iceberg.catalog.Catalog catalogOf(Path warehouse) {
        return dev.changeflow.sinks.iceberg.CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                .open();
    }

    private static final org.apache.iceberg.Schema AB =
            new org.apache.iceberg.Schema(
                    org.apache.iceberg.types.Types.NestedField.required(
                            1, "a", org.apache.iceberg.types.Types.IntegerType.get()),
                    org.apache.iceberg.types.Types.NestedField.optional(
                            2, "b", org.apache.iceberg.types.Types.StringType.get()));

    @Test
    void aFileOfDropAndDescribeStatementsActsOnTheCatalogAndRunsNoJob() throws Exception {
        Path warehouse = dir.resolve("warehouse");
        org.apache.iceberg.catalog.TableIdentifier t =
                org.apache.iceberg.catalog.TableIdentifier.of("sales", "t");
        org.apache.iceberg.catalog.TableIdentifier u =
                org.apache.iceberg.catalog.TableIdentifier.of("sales", "u");
        org.apache.iceberg.catalog.Catalog cat = catalogOf(warehouse);
        cat.createTable(t, AB);
        cat.createTable(u, AB);
        Path describe = dir.resolve("describe.sql");
        Files.writeString(describe, "USE SCHEMA sales;\nDESCRIBE TABLE EXTENDED t;\nDESC u;\n");
        assertThat(run(describe, "--warehouse", warehouse.toString()))
                .isEqualTo(
                        "Table sales.t\n"
                                + "Columns:\n"
                                + "  a int NOT NULL\n"
                                + "  b string\n"
                                + "Definition: none in this file (not a streaming table of it)\n"
                                + "Schedule: none (refreshed when the file is run)\n"
                                + "Last refresh: none recorded\n"
                                + "Table sales.u\n"
                                + "Columns:\n"
                                + "  a int NOT NULL\n"
                                + "  b string\n");

        Path drop = dir.resolve("drop.sql");
        Files.writeString(
                drop, "USE SCHEMA sales;\nDROP TABLE t;\nDROP TABLE IF EXISTS other.v;\n");
        assertThat(run(drop, "--dry-run", "--warehouse", warehouse.toString()))
                .isEqualTo(
                        "Would DROP TABLE t (sales.t)\n"
                                + "Would DROP TABLE other.v (no such table)\n"
                                + "Dry run: no table or state was written.\n");
        assertThat(cat.tableExists(t)).isTrue();
        assertThat(run(drop, "--warehouse", warehouse.toString()))
                .isEqualTo(
                        "DROP TABLE t: dropped sales.t\n"
                                + "DROP TABLE other.v: no such table, nothing dropped (IF"
                                + " EXISTS)\n");
        assertThat(cat.tableExists(t)).isFalse();
        assertThat(cat.tableExists(u)).isTrue();
    }

    @Test
    void aRefreshFlagDoesNotRunTheFilesDropStatements() throws Exception {
        // a table of its own (a flow's target that does not fit the definition is refused first)
        Path f = pipeline(PIPELINE + "DROP TABLE stale;\n");
        Path warehouse = dir.resolve("warehouse");
        org.apache.iceberg.catalog.TableIdentifier orders =
                org.apache.iceberg.catalog.TableIdentifier.of("sales", "stale");
        org.apache.iceberg.catalog.Catalog cat = catalogOf(warehouse);
        cat.createTable(orders, AB);
        assertThat(
                        run(
                                f,
                                "--dry-run",
                                "--warehouse",
                                warehouse.toString(),
                                "--refresh",
                                "orders,audit"))
                .startsWith(
                        "note: the file's DROP TABLE statements are not run: --refresh names what"
                                + " runs\nPipeline shop (");
        assertThat(cat.tableExists(orders)).isTrue();
    }

    @Test
    void dropTableOfAMissingTableFailsBeforeAnythingIsDropped() throws Exception {
        Path warehouse = dir.resolve("warehouse");
        org.apache.iceberg.catalog.TableIdentifier u =
                org.apache.iceberg.catalog.TableIdentifier.of("sales", "u");
        org.apache.iceberg.catalog.Catalog cat = catalogOf(warehouse);
        cat.createTable(u, AB);
        Path drop = dir.resolve("drop.sql");
        Files.writeString(drop, "USE SCHEMA sales;\nDROP TABLE u;\nDROP TABLE t;\n");
        CapturedOutput.MainRun run =
                CapturedOutput.main("run", "--warehouse", warehouse.toString(), drop.toString());
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.stderr())
                .isEqualTo(
                        "error: "
                                + drop
                                + ":3:12: TABLE_NOT_FOUND: DROP TABLE t: the catalog has no table"
                                + " sales.t (DROP TABLE IF EXISTS t drops it only when it exists)\n");
        assertThat(cat.tableExists(u)).isTrue();
    }

    @Test
    void describeCommandPrintsATableOfTheFileWithoutRunningIt() throws Exception {
        Path f =
                pipeline(
                        PIPELINE
                                + "ALTER STREAMING TABLE orders ADD SCHEDULE CRON '0 0 3 * * ?'"
                                + " AT TIME ZONE 'Europe/Paris';\n");
        Path warehouse = dir.resolve("warehouse");
        DescribeCommand c = new DescribeCommand();
        new CommandLine(c)
                .parseArgs("--warehouse", warehouse.toString(), f.toString(), "LIVE.orders");
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "Table sales.orders (not created yet: declared columns)\n"
                                + "Columns:\n"
                                + "  id INT NOT NULL\n"
                                + "  status STRING\n"
                                + "Definition: "
                                + f
                                + ":4:1\n"
                                + "  flow: orders\n"
                                + "  source: read_files "
                                + dir.resolve("in/cdc.jsonl")
                                + " (format debezium-json, table orders)\n"
                                + "  kind: AUTO CDC\n"
                                + "  KEYS: id\n"
                                + "  SEQUENCE BY: source.lsn (Debezium default)\n"
                                + "  SCD type: 2\n"
                                + "  COLUMNS: *\n"
                                + "  APPLY AS DELETE WHEN: status = 'gone'\n"
                                + "  on-schema-change: fail\n"
                                + "  on-invalid-record: quarantine\n"
                                + "Schedule: CRON '0 0 3 * * ?' AT TIME ZONE 'Europe/Paris'\n"
                                + "Last refresh: none recorded\n");
        assertThat(warehouse.resolve("sales")).doesNotExist();
        DescribeCommand nope = new DescribeCommand();
        new CommandLine(nope).parseArgs("--warehouse", warehouse.toString(), f.toString(), "nope");
        assertThatThrownBy(nope::call)
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        f
                                + ":1:1: UNKNOWN_TABLE: DESCRIBE TABLE nope: the catalog has no"
                                + " table sales.nope and the file declares no streaming table of"
                                + " that name");
    }

    /**
     * K8: a pipeline file copied to another name runs as a job of that name, without the original's
     * saved state; the error names the job that holds it and how to reuse it ({@code SET name}),
     * and a second run of a job while one runs names how {@code run} names jobs.
     */
    @Test
    void aCopiedFileNamesTheJobWhoseStateItLacksAndAConcurrentRunHowJobsAreNamed()
            throws Exception {
        Path warehouse = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in/t"));
        Files.writeString(dir.resolve("in/t/1.jsonl"), "{\"id\":1,\"name\":\"a\"}\n");
        String text =
                "CREATE OR REFRESH STREAMING TABLE t (id INT, name STRING)\n"
                        + "  AS SELECT * FROM STREAM read_files('in/t', format => 'json');\n";
        Path original = dir.resolve("orders.sql");
        Files.writeString(original, text);
        RunCommand first = command("--warehouse", warehouse.toString(), original.toString());
        first.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThat(first.call()).isZero();

        Path copy = dir.resolve("orders-copy.sql");
        Files.writeString(copy, text);
        Path checkpoints = warehouse.resolve(".changeflow/checkpoints").toAbsolutePath();
        assertThatThrownBy(
                        () -> command("--warehouse", warehouse.toString(), copy.toString()).call())
                .hasMessage(
                        "STATE_MISSING_FOR_EXISTING_TABLE: table default.t already holds rows but"
                                + " no checkpoint or savepoint of 'orders-copy' exists under "
                                + checkpoints.resolve("orders-copy")
                                + ": applying changes without the AUTO CDC state (sequences,"
                                + " tombstones) could resurrect deleted rows or re-apply old ones."
                                + " The saved state of job 'orders' ("
                                + checkpoints.resolve("orders")
                                + ") holds this table: this run's job is 'orders-copy' (a"
                                + " pipeline's job is named after its file, orders-copy.sql, unless"
                                + " SET name = ... names it); to continue from that state, add SET"
                                + " name = orders; at the top of "
                                + copy
                                + " (or run the original file). Re-run with --from-scratch to"
                                + " recreate the tables, or restore the checkpoint folder.");
        Files.writeString(copy, "SET name = orders;\n" + text);
        RunCommand again = command("--warehouse", warehouse.toString(), copy.toString());
        again.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThat(again.call()).as("continues from the original's state").isZero();

        Path lockFile = checkpoints.resolve("orders.state/.lock");
        try (java.nio.channels.FileChannel ch =
                        java.nio.channels.FileChannel.open(
                                lockFile, java.nio.file.StandardOpenOption.WRITE);
                java.nio.channels.FileLock held = ch.lock()) {
            assertThatThrownBy(
                            () ->
                                    command(
                                                    "--warehouse",
                                                    warehouse.toString(),
                                                    original.toString())
                                            .call())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage(
                            "another run of job 'orders' is using "
                                    + checkpoints.resolve("orders.state")
                                    + "; wait for it to finish (two runs of one job would write the"
                                    + " same tables with diverging state), or, for another"
                                    + " pipeline, give its file another name or SET name = ...;"
                                    + " (a pipeline's job is named after its file, orders.sql ->"
                                    + " 'orders', unless SET name = ... names it)");
        }
    }

    /**
     * S1: the run summary of an append flow counts the rows it wrote as applied (issue #13: it said
     * "applied 0"); rows its WHERE leaves out are not counted.
     */
    @Test
    void anAppendFlowsWrittenRowsAreCountedAsApplied() throws Exception {
        Path warehouse = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in/e"));
        Files.writeString(
                dir.resolve("in/e/1.jsonl"),
                "{\"id\":1,\"what\":\"a\"}\n"
                        + "{\"id\":2,\"what\":\"b\"}\n"
                        + "{\"id\":3,\"what\":\"skip\"}\n");
        Path f = dir.resolve("events.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE events AS SELECT * FROM STREAM"
                        + " read_files('in/e', format => 'json') WHERE what <> 'skip';\n");
        RunCommand c = command("--warehouse", warehouse.toString(), f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .contains(" 3 records (")
                .contains(", applied 2, late 0, quarantined 0.");
    }

    /**
     * S5: a REPLACE USING table's DESCRIBE shows its keys and sequence, and the run's summary
     * counts the rows the REPLACE USING operator applied (a new key, a higher sequence, an equal
     * sequence's new row) and those it found late.
     */
    @Test
    void replaceUsingIsDescribedAsSuchAndItsAppliedRowsAreCounted() throws Exception {
        Path warehouse = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in/p"));
        // two ties of key 1 and a new key 2: each row applies, whatever their order
        Files.writeString(
                dir.resolve("in/p/1.jsonl"),
                "{\"k\":1,\"v\":\"a\",\"s\":1}\n"
                        + "{\"k\":1,\"v\":\"b\",\"s\":1}\n"
                        + "{\"k\":2,\"v\":\"c\",\"s\":1}\n");
        Path f = dir.resolve("payments.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE p (k INT, v STRING, s INT)\n"
                        + "  FLOW REPLACE USING (k) SEQUENCE BY s\n"
                        + "  BY NAME SELECT * FROM STREAM read_files('in/p', format => 'json');\n"
                        + "DESCRIBE TABLE EXTENDED p;\n");
        RunCommand c = command("--warehouse", warehouse.toString(), f.toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isZero();
        String printed = buf.toString(StandardCharsets.UTF_8);
        assertThat(printed)
                .contains(" 3 records (")
                .contains(", applied 3, late 0, quarantined 0.");
        // then a lower sequence of key 1 (late) and a higher one of key 2 (replaces)
        Files.writeString(
                dir.resolve("in/p/2.jsonl"),
                "{\"k\":1,\"v\":\"old\",\"s\":0}\n" + "{\"k\":2,\"v\":\"d\",\"s\":2}\n");
        RunCommand second = command("--warehouse", warehouse.toString(), f.toString());
        ByteArrayOutputStream secondOut = new ByteArrayOutputStream();
        second.out = new PrintStream(secondOut, true, StandardCharsets.UTF_8);
        assertThat(second.call()).isZero();
        assertThat(secondOut.toString(StandardCharsets.UTF_8))
                .contains(" 2 records (")
                .contains(", applied 1, late 1, quarantined 0.");
        assertThat(printed)
                .contains("  kind: REPLACE USING\n" + "  REPLACE USING: k\n" + "  SEQUENCE BY: s\n")
                .doesNotContain("AUTO CDC");
    }

    /** What a Ctrl-C during a refresh prints: what was kept, where, and how to resume. */
    @Test
    void anInterruptedRunSaysWhatWasKeptAndHowToResume() {
        assertThat(
                        RunCommand.interruptedMessage(
                                Path.of("shop.sql"), Path.of("/w/.changeflow/checkpoints/shop")))
                .isEqualTo(
                        "run interrupted: the tables keep what the last completed checkpoint"
                                + " committed, and the job's saved state (that checkpoint, or the"
                                + " savepoint of the last finished run) stays in"
                                + " /w/.changeflow/checkpoints/shop; run changeflow run shop.sql"
                                + " again to resume from it (nothing committed is applied twice)");
    }

    private static final String SNAPSHOTS =
            PIPELINE
                    + "CREATE OR REFRESH STREAMING TABLE cities (id BIGINT, city STRING)\n"
                    + "  FLOW AUTO CDC FROM SNAPSHOT read_files('snaps') KEYS (id);\n";

    /** What --dry-run prints for the snapshot job of SNAPSHOTS. */
    private String snapshotPlan(String job) {
        return "Snapshot job "
                + job
                + ": 1 flow, run after the ingest job (AUTO CDC FROM SNAPSHOT, A6)\n"
                + "  sales.cities <- snapshot files in "
                + dir.resolve("snaps")
                + " (read_files, FROM SNAPSHOT): AUTO CDC FROM SNAPSHOT KEYS (id) STORED AS SCD"
                + " TYPE 1 (id BIGINT, city STRING)\n";
    }

    @Test
    void snapshotTablesRunAsAJobOfTheirOwnAfterTheIngestJob() throws Exception {
        Path f = pipeline(SNAPSHOTS);
        Files.createDirectories(dir.resolve("snaps"));
        assertThat(run(f, "--dry-run"))
                .contains("  sales.audit <- table audit: append-only (id INT, note STRING)\n")
                .endsWith(
                        "Inputs:\n  "
                                + dir.resolve("in/cdc.jsonl")
                                + "\n"
                                + snapshotPlan("shop-snapshots")
                                + "Dry run: no table or state was written.\n");
        // --refresh of a snapshot table runs its job only; a REFRESH statement alike
        assertThat(run(f, "--dry-run", "--refresh", "cities"))
                .isEqualTo(
                        snapshotPlan("shop-snapshots")
                                + "Dry run: no table or state was written.\n");
        assertThat(run(f, "--dry-run", "--refresh", "cities,orders,audit"))
                .startsWith("Pipeline shop (")
                .endsWith(
                        snapshotPlan("shop-snapshots")
                                + "Dry run: no table or state was written.\n");
        assertThatThrownBy(
                        () -> command("--dry-run", "--full-refresh", "cities", f.toString()).call())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--full-refresh cities: a full refresh of an AUTO CDC FROM SNAPSHOT table"
                                + " is not supported yet (A6); refresh it with --refresh cities,"
                                + " or drop it (DROP TABLE cities; in the file) and run the file"
                                + " again to rebuild it");
        Path refresh = pipeline(SNAPSHOTS + "REFRESH STREAMING TABLE cities;\n");
        assertThat(run(refresh, "--dry-run"))
                .isEqualTo(
                        snapshotPlan("shop-snapshots")
                                + "Dry run: no table or state was written.\n");
    }

    /**
     * S4: a REPLACE WHERE predicate Flink cannot parse fails before the file's ingest job runs (it
     * used to fail at its turn, after the ingest job committed), at the predicate.
     */
    @Test
    void aReplaceWherePredicateSyntaxErrorFailsBeforeAnythingIsWritten() throws Exception {
        Path f =
                pipeline(
                        PIPELINE
                                + "CREATE OR REFRESH STREAMING TABLE daily (id INT)\n"
                                + "  FLOW REPLACE WHERE id >>= 2 BY NAME SELECT id FROM orders;\n");
        Path warehouse = dir.resolve("warehouse");
        assertThatThrownBy(() -> command("--warehouse", warehouse.toString(), f.toString()).call())
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(SqlException.Code.INVALID_QUERY))
                .hasMessageStartingWith(
                        f
                                + ":10:22: INVALID_QUERY: the REPLACE WHERE predicate of"
                                + " sales.daily is not Flink SQL: ");
        // the ingest job did not run: nothing committed to the tables its planning may create
        org.apache.iceberg.catalog.Catalog cat =
                dev.changeflow.sinks.iceberg.CatalogSettings.localHadoop(warehouse).open();
        for (String t : List.of("orders", "audit", "daily")) {
            org.apache.iceberg.catalog.TableIdentifier id =
                    org.apache.iceberg.catalog.TableIdentifier.of("sales", t);
            if (cat.tableExists(id)) {
                assertThat(cat.loadTable(id).currentSnapshot()).as(t).isNull();
            }
        }
    }

    @Test
    void aMissingSnapshotFolderFailsAtItsPlaceBeforeAnythingIsWritten() throws Exception {
        Path f = pipeline(SNAPSHOTS);
        Path warehouse = dir.resolve("warehouse");
        assertThatThrownBy(() -> command("--warehouse", warehouse.toString(), f.toString()).call())
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith(f + ":10:31: SOURCE_NOT_FOUND: flow" + " 'cities': ")
                .hasMessageEndingWith(
                        " does not exist; read_files after FROM SNAPSHOT names the folder that"
                                + " holds the snapshot files (snapshot_1.csv, snapshot_2.csv,"
                                + " ...), a relative path resolved against the folder of the"
                                + " pipeline file")
                .satisfies(
                        e ->
                                assertThat(((SqlException) e).code())
                                        .isEqualTo(SqlException.Code.SOURCE_NOT_FOUND));
        assertThat(warehouse).doesNotExist();
    }
}

package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Statements compile to the flow model of a flows file, through the same option resolver: the
 * pgbench pipeline in SQL equals {@code examples/pgbench-flows.yaml} option by option.
 */
class SqlPipelineTest {
    private static final Path BASE = Path.of("/pipelines");

    private static SqlPipeline compile(String text) {
        return SqlPipeline.compile(text, "p.sql", BASE, "p");
    }

    private static void fails(String text, SqlException.Code code, String message) {
        assertThatThrownBy(() -> compile(text))
                .isInstanceOf(SqlException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((SqlException) e).code()).isEqualTo(code));
    }

    private static Path repositoryRoot() {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        assertThat(p).as("the repository root above " + System.getProperty("user.dir")).isNotNull();
        return p;
    }

    @Test
    void pgbenchPipelineEqualsTheFlowsFileOptionByOption() throws Exception {
        Path examples = repositoryRoot().resolve("examples");
        IngestConfig yaml = FlowsFile.read(examples.resolve("pgbench-flows.yaml"));
        SqlPipeline sql = SqlPipeline.read(examples.resolve("pgbench.sql"));

        assertThat(sql.config().flows).hasSameSizeAs(yaml.flows);
        for (int i = 0; i < yaml.flows.size(); i++) {
            assertThat(sql.config().flows.get(i))
                    .as(yaml.flows.get(i).table)
                    .usingRecursiveComparison()
                    .isEqualTo(yaml.flows.get(i));
        }
        assertThat(sql.config()).usingRecursiveComparison().isEqualTo(yaml);
        assertThat(sql.config().name).isEqualTo("pgbench");
        assertThat(sql.config().namespace).isEqualTo("public");
        assertThat(sql.config().format).isEqualTo("debezium-json");
        assertThat(sql.inputPaths())
                .containsExactly(
                        repositoryRoot()
                                .resolveSibling("shared")
                                .resolve("data/pgbench-s1/capture-pgbench-s1.jsonl.gz"));
        assertThat(sql.warnings()).isEmpty();
    }

    /**
     * Every clause once (TRACK HISTORY with SCD type 1 and TRUNCATE WHEN together: combinations
     * that need the schema are the planner's checks, A1, not the compiler's).
     */
    @Test
    void everyClauseBecomesItsFlowOption() {
        SqlPipeline p =
                compile(
                        "SET checkpoint-interval = 500ms;\n"
                                + "SET 'parallelism.default' = 3;\n"
                                + "SET catalog.type = rest;\n"
                                + "SET catalog.uri = 'http://127.0.0.1:8181';\n"
                                + "USE SCHEMA silver;\n"
                                + "CREATE TEMPORARY VIEW orders_cdc AS SELECT * FROM STREAM read_files(\n"
                                + "  'in/orders', format => \"json\", table => 'orders');\n"
                                + "CREATE OR REFRESH STREAMING TABLE gold.orders_current (\n"
                                + "  id BIGINT NOT NULL, region STRING, ts TIMESTAMP(3), seq INT, op STRING, note STRING)\n"
                                + "  PARTITIONED BY (region, bucket(8, id))\n"
                                + "  TBLPROPERTIES ('changeflow.apply-buffer-keys' = '1000',\n"
                                + "                 'changeflow.tombstone-gc-threshold' = '36h',\n"
                                + "                 'changeflow.keys' = 'region');\n"
                                + "CREATE FLOW orders_scd2 AS AUTO CDC INTO gold.orders_current\n"
                                + "  FROM STREAM(orders_cdc)\n"
                                + "  KEYS (id, region)\n"
                                + "  APPLY AS DELETE WHEN op = \"DELETE\"\n"
                                + "  APPLY AS TRUNCATE WHEN op = 'TRUNCATE'\n"
                                + "  SEQUENCE BY STRUCT(ts, seq)\n"
                                + "  COLUMNS * EXCEPT (op, ts)\n"
                                + "  IGNORE NULL UPDATES\n"
                                + "  STORED AS SCD TYPE 1\n"
                                + "  TRACK HISTORY ON * EXCEPT (note);\n");
        IngestConfig cfg = p.config();
        assertThat(cfg.name).isEqualTo("p");
        assertThat(cfg.format).isEqualTo("json");
        assertThat(cfg.namespace).isEqualTo("silver");
        assertThat(cfg.checkpointInterval).isEqualTo(Duration.ofMillis(500));
        assertThat(cfg.parallelism).isEqualTo(3);
        assertThat(cfg.catalog).isEqualTo(Map.of("type", "rest", "uri", "http://127.0.0.1:8181"));
        assertThat(cfg.flows).hasSize(1);
        FlowConfig f = cfg.flows.get(0);
        assertThat(f.table).isEqualTo("orders");
        assertThat(f.target).isEqualTo("gold.orders_current");
        assertThat(f.name).isEqualTo("orders_scd2");
        // the definition's KEYS win over the table property (DEFINITION > TABLE_PROPERTY)
        assertThat(f.keys).containsExactly("id", "region");
        assertThat(f.sequenceBy).containsExactly("ts", "seq");
        assertThat(f.scdType).isEqualTo(ScdType.TYPE_1);
        assertThat(f.appendOnly).isFalse();
        assertThat(f.columns).isEqualTo(ColumnSelection.except(List.of("op", "ts")));
        assertThat(f.ignoreNullUpdates).isEqualTo(ColumnSelection.all());
        assertThat(f.trackHistoryOn).isEqualTo(ColumnSelection.except(List.of("note")));
        assertThat(f.schema)
                .isEqualTo(
                        "id BIGINT NOT NULL, region STRING, ts TIMESTAMP(3), seq INT, op STRING,"
                                + " note STRING");
        assertThat(f.partitionedBy).containsExactly("region", "bucket(8, id)");
        assertThat(f.applyAsDeleteWhen).isEqualTo("op = 'DELETE'");
        assertThat(f.applyAsTruncateWhen).isEqualTo("op = 'TRUNCATE'");
        assertThat(f.applyBufferKeys).isEqualTo(1000);
        assertThat(f.applyBufferKeysSet).isTrue();
        assertThat(f.tombstoneGcThreshold).isEqualTo(Duration.ofHours(36));
        assertThat(f.format).isNull();
        assertThat(p.inputPaths()).containsExactly(Path.of("/pipelines/in/orders"));
        assertThat(p.warnings()).isEmpty();
    }

    @Test
    void appendFlowsAndDefaults() {
        SqlPipeline p =
                compile(
                        "CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_files('/abs/e');\n"
                                + "CREATE STREAMING TABLE audit;\n"
                                + "CREATE FLOW audit_in AS INSERT INTO audit BY NAME\n"
                                + "  SELECT * FROM STREAM read_files('/abs/e', table => 'audit_log');\n");
        IngestConfig cfg = p.config();
        assertThat(cfg.format).isEqualTo("debezium-json");
        assertThat(cfg.namespace).isNull();
        assertThat(cfg.checkpointInterval).isEqualTo(Duration.ofSeconds(5));
        assertThat(cfg.flows)
                .extracting(f -> f.table, f -> f.target, f -> f.name, f -> f.appendOnly)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("events", null, null, true),
                        org.assertj.core.groups.Tuple.tuple(
                                "audit_log", "audit", "audit_in", true));
        assertThat(p.inputPaths()).containsExactly(Path.of("/abs/e"));
    }

    /** A REPLACE USING table over JSON files in {@code in} (S5). */
    private static String payments(Path in) {
        return "CREATE STREAMING TABLE payments (booking STRING, payment STRING, seq BIGINT)\n"
                + "  FLOW REPLACE USING (booking) SEQUENCE BY seq BY NAME\n"
                + "  SELECT * FROM STREAM read_files('"
                + in
                + "', format => 'json');\n";
    }

    /** S5: FLOW REPLACE USING compiles to the flow options replace-using and sequence-by. */
    @Test
    void replaceUsingCompilesToItsFlowOptions(@TempDir Path in) throws Exception {
        SqlPipeline p = compile(payments(in));
        FlowConfig f = p.config().flows.get(0);
        assertThat(f.replaceUsing).containsExactly("booking");
        assertThat(f.sequenceBy).containsExactly("seq");
        assertThat(f.keys).isEmpty();
        assertThat(f.appendOnly).isFalse();
        assertThat(p.plan().flows.get(0).replaceUsing.keys()).containsExactly("booking");
        fails(
                "CREATE STREAMING TABLE payments FLOW REPLACE USING (booking) SEQUENCE BY seq BY"
                        + " NAME SELECT * FROM STREAM(silver)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:107: UNSUPPORTED_STATEMENT: not supported by changeflow yet: FLOW REPLACE"
                        + " USING over STREAM(silver), which is the change feed of a table; REPLACE"
                        + " USING reads rows (read_files or a temporary view over it,"
                        + " docs/semantics.md S5)");
    }

    /**
     * K8: a FLOW_CHANGED_FOR_EXISTING_STATE message is placed at the part of the flow it names
     * (REPLACE USING columns, SEQUENCE BY, else the statement); a message about no flow of the file
     * has no place.
     */
    @Test
    void aChangedFlowIsPlacedAtThePartThatChanged(@TempDir Path in) {
        SqlPipeline p = compile(payments(in));
        String flow = "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'payments': ";
        assertThat(p.placeOfChangedFlow(flow + "replace-using changed from [\"a\"] to [\"b\"]"))
                .hasToString("p.sql:2:23");
        assertThat(p.placeOfChangedFlow(flow + "sequence-by changed from [\"a\"] to [\"b\"]"))
                .hasToString("p.sql:2:44");
        assertThat(p.placeOfChangedFlow(flow + "the flow changed from auto-cdc to replace-using"))
                .hasToString("p.sql:1:1");
        assertThat(
                        p.placeOfChangedFlow(
                                "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'payments2': keys changed"))
                .isNull();
    }

    /**
     * S4: a FLOW REPLACE WHERE table is no flow of the ingest job but a refresh definition; REFRESH
     * ... WHERE names it alone.
     */
    @Test
    void replaceWhereTablesAreRefreshDefinitions(@TempDir Path in) throws Exception {
        SqlPipeline p =
                compile(
                        "USE SCHEMA shop;\n"
                                + "CREATE STREAMING TABLE orders FLOW AUTO CDC FROM STREAM read_files('"
                                + in
                                + "', format => 'json') KEYS (id);\n"
                                + "CREATE STREAMING TABLE daily (d BIGINT, total BIGINT NOT NULL)"
                                + " PARTITIONED BY (d)\n"
                                + "  FLOW REPLACE WHERE d >= 2 BY NAME SELECT d, SUM(a) AS total"
                                + " FROM orders GROUP BY d;\n"
                                + "REFRESH STREAMING TABLE daily WHERE d >= 1;");
        assertThat(p.config().flows).extracting(f -> f.table).containsExactly("orders");
        assertThat(p.replaceWheres()).hasSize(1);
        SqlPipeline.ReplaceWhereTable rw = p.replaceWhere("LIVE.daily");
        assertThat(rw.name()).isEqualTo("daily");
        assertThat(rw.definition().target().toString()).isEqualTo("shop.daily");
        assertThat(rw.definition().predicate()).isEqualTo("d >= 2");
        assertThat(rw.definition().query())
                .isEqualTo("SELECT d, SUM(a) AS total FROM orders GROUP BY d");
        assertThat(rw.definition().schema()).isEqualTo("`d` BIGINT, `total` BIGINT NOT NULL");
        assertThat(rw.definition().options().partitionBy()).containsExactly("d");
        assertThat(p.refreshes().get(0).where()).isEqualTo("d >= 1");
        String table =
                "CREATE STREAMING TABLE daily (d BIGINT) FLOW REPLACE WHERE d >= 2 BY NAME SELECT"
                        + " d FROM x;\n";
        fails(
                "CREATE STREAMING TABLE daily (d BIGINT, CONSTRAINT pos EXPECT (d > 0)) FLOW"
                        + " REPLACE WHERE d >= 2 BY NAME SELECT d FROM x;\n",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:41: INVALID_FLOW: expectations check AUTO CDC and append flows, not"
                        + " REPLACE WHERE (S8); streaming table daily has a REPLACE WHERE flow");
        fails(
                table + "REFRESH STREAMING TABLE daily FULL;",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:2:1: UNSUPPORTED_STATEMENT: REFRESH STREAMING TABLE daily FULL of a FLOW"
                        + " REPLACE WHERE table is not supported yet; REFRESH STREAMING TABLE daily"
                        + " WHERE <predicate> replaces any slice");
        fails(
                table
                        + "CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM read_files('x') KEYS"
                        + " (id);\nREFRESH STREAMING TABLE t WHERE id > 1;",
                SqlException.Code.INVALID_REFRESH,
                "p.sql:3:1: INVALID_REFRESH: REFRESH STREAMING TABLE ... WHERE overrides the"
                        + " predicate of a FLOW REPLACE WHERE table; t has none");
        fails(
                table
                        + "CREATE FLOW f AS AUTO CDC INTO daily FROM STREAM read_files('x') KEYS (d);",
                SqlException.Code.DUPLICATE_FLOW,
                "p.sql:2:1: DUPLICATE_FLOW: streaming table daily is already written by its FLOW"
                        + " REPLACE WHERE at p.sql:1:1; a table is written by one flow");
    }

    @Test
    void propertiesWithoutThePrefixAndUseCatalogAreReportedNotUsed() {
        SqlPipeline p =
                compile(
                        "USE CATALOG main;\n"
                                + "CREATE STREAMING TABLE t TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true',"
                                + " 'apply-buffer-keys' = '5')\n"
                                + "  FLOW AUTO CDC FROM STREAM read_files('x') KEYS (id);");
        assertThat(p.config().flows.get(0).applyBufferKeysSet).isFalse();
        assertThat(p.warnings())
                .containsExactly(
                        "p.sql:1:1: USE CATALOG main changes nothing: the tables go to the catalog of"
                                + " --warehouse or of SET catalog.<property>",
                        "p.sql:2:1: table property 'delta.enableChangeDataFeed' of t is not used (flow"
                                + " options take the prefix 'changeflow.')",
                        "p.sql:2:1: table property 'apply-buffer-keys' of t is not used (flow options"
                                + " take the prefix 'changeflow.')");
    }

    // ------------------------------------------------------------------------------ errors

    @Test
    void unknownTableAndAppendOrColumnsOverAChangeFeed() {
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('x');\n"
                        + "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(v) KEYS (id)",
                SqlException.Code.UNKNOWN_TABLE,
                "p.sql:2:1: UNKNOWN_TABLE: the flow writes t, which no CREATE STREAMING TABLE of the"
                        + " file declares (declare the target first: CREATE OR REFRESH STREAMING TABLE"
                        + " t;)");
        // a name that is no view is the change feed of that table (S7); an append flow takes
        // its appended rows, without the AUTO CDC defaults
        FlowConfig append =
                compile(
                                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM w;\n"
                                        + "CREATE STREAMING TABLE t AS SELECT a, b FROM STREAM v")
                        .config()
                        .flows
                        .get(0);
        assertThat(append.appendOnly).isTrue();
        assertThat(append.table).isEqualTo("w");
        assertThat(append.select).isEqualTo("a, b");
        assertThat(append.sequenceBy).isEmpty();
        assertThat(append.applyAsDeleteWhen).isNull();
        fails(
                "CREATE STREAMING TABLE dim (id INT);\n"
                        + "APPLY CHANGES INTO dim FROM STREAM(silver) KEYS (id)",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:1:1: UNSUPPORTED_STATEMENT: not supported by changeflow yet: a column list on"
                        + " streaming table dim, which reads the change feed of silver: its columns"
                        + " are the source table's; choose them with COLUMNS");
    }

    /**
     * S1: a select list and WHERE become the append flow's {@code select} / {@code select-where},
     * planned by Flink when the run is planned: the target's columns are the query's names and
     * types, and an error points into the file.
     */
    @Test
    void aSelectListIsPlannedByFlinkAndItsErrorsPointIntoTheFile(@TempDir Path dir)
            throws Exception {
        Files.writeString(
                dir.resolve("sales.jsonl"), "{\"product\": \"tea\", \"price\": 2.5, \"qty\": 3}\n");
        String text =
                "CREATE STREAMING TABLE sales AS SELECT upper(product) AS product,\n"
                        + "  CAST(price * qty AS DECIMAL(10, 2)) AS total\n"
                        + "  FROM STREAM read_files('sales.jsonl', format => 'json')\n"
                        + "  WHERE qty > 1;\n";
        SqlPipeline p = SqlPipeline.compile(text, "p.sql", dir, "p");
        FlowConfig f = p.config().flows.get(0);
        assertThat(f.appendOnly).isTrue();
        assertThat(f.select)
                .isEqualTo(
                        "upper(product) AS product,\n  CAST(price * qty AS DECIMAL(10, 2)) AS total");
        assertThat(f.selectWhere).isEqualTo("qty > 1");
        assertThat(p.plan().flows.get(0).appendType().asSummaryString())
                .isEqualTo("ROW<`product` STRING, `total` DECIMAL(10, 2)>");

        planFailsIn(
                dir,
                text.replace("upper(product)", "upper(prodct)"),
                SqlException.Code.UNKNOWN_COLUMN,
                "p.sql:1:46: UNKNOWN_COLUMN: flow 'sales': the query SELECT upper(prodct) AS product,"
                        + " CAST(price * qty AS DECIMAL(10, 2)) AS total WHERE qty > 1 is not valid"
                        + " Flink SQL over the source columns [product, price, qty]: Column 'prodct'"
                        + " not found in any table");
        planFailsIn(
                dir,
                text.replace("qty > 1", "qtty > 1"),
                SqlException.Code.UNKNOWN_COLUMN,
                "p.sql:4:9: UNKNOWN_COLUMN: flow 'sales': the query SELECT upper(product) AS"
                        + " product, CAST(price * qty AS DECIMAL(10, 2)) AS total WHERE qtty > 1 is"
                        + " not valid Flink SQL over the source columns [product, price, qty]: Column"
                        + " 'qtty' not found in any table");
        planFailsIn(
                dir,
                text.replace(" AS total", ""),
                SqlException.Code.INVALID_QUERY,
                "p.sql:1:40: INVALID_QUERY: flow 'sales': the select list (upper(product) AS"
                        + " product,\n  CAST(price * qty AS DECIMAL(10, 2))) has an expression"
                        + " without a name, which would be column EXPR$1 of the table: give it one"
                        + " with AS name");
    }

    /**
     * S1: a declared column list on a table with a select list becomes the flow's {@code
     * target-columns} (with NOT NULL and COMMENT); the table's columns are the declared ones in
     * their order and types, the query's cast to them. A query whose columns are not the declared
     * ones by name, or of a type Flink cannot cast, is {@code COLUMN_LIST_MISMATCH} at the table's
     * statement, naming each column declared and selected, when the run is planned.
     */
    @Test
    void aDeclaredColumnListMatchesTheSelectListByNameAndCastsToItsTypes(@TempDir Path dir)
            throws Exception {
        Files.writeString(
                dir.resolve("sales.jsonl"), "{\"product\": \"tea\", \"price\": 2.5, \"qty\": 3}\n");
        String text =
                "CREATE OR REFRESH STREAMING TABLE sales (\n"
                        + "  total DECIMAL(10, 2) COMMENT 'price ''times'' qty',\n"
                        + "  product STRING NOT NULL COMMENT 'upper, case'\n"
                        + ") AS SELECT upper(product) AS product, price * qty AS total\n"
                        + "  FROM STREAM read_files('sales.jsonl', format => 'json')\n"
                        + "  WHERE qty > 1;\n";
        SqlPipeline p = SqlPipeline.compile(text, "p.sql", dir, "p");
        FlowConfig f = p.config().flows.get(0);
        assertThat(f.targetColumns)
                .isEqualTo(
                        "total DECIMAL(10, 2) COMMENT 'price ''times'' qty', product STRING NOT NULL"
                                + " COMMENT 'upper, case'");
        assertThat(f.schema).isNull();
        RowType stored = p.plan().flows.get(0).appendType();
        assertThat(stored.asSerializableString())
                .isEqualTo(
                        "ROW<`total` DECIMAL(10, 2) 'price ''times'' qty', `product` VARCHAR(2147483647)"
                                + " NOT NULL 'upper, case'>");
        Schema iceberg =
                dev.changeflow.sinks.iceberg.StreamingTables.icebergSchema(stored, List.of());
        assertThat(iceberg.columns())
                .extracting(c -> c.name() + " " + c.isRequired() + " " + c.doc())
                .containsExactly("total false price 'times' qty", "product true upper, case");

        planFailsIn(
                dir,
                text.replace("AS total", "AS amount"),
                SqlException.Code.COLUMN_LIST_MISMATCH,
                "p.sql:1:1: COLUMN_LIST_MISMATCH: flow 'sales': the declared columns (total"
                        + " DECIMAL(10, 2), product STRING NOT NULL) do not match the query's (product"
                        + " STRING, amount DOUBLE): declared column total DECIMAL(10, 2) is not a"
                        + " column of the query; selected column amount DOUBLE is not declared."
                        + " Declare every column of the select list by its name (AS name names an"
                        + " expression), or leave the column list out");
        planFailsIn(
                dir,
                text.replace("AS SELECT upper(product) AS product", "AS SELECT qty > 1 AS product")
                        .replace("STRING NOT NULL", "DATE NOT NULL")
                        .replace("AS total\n", "AS Total\n"),
                SqlException.Code.COLUMN_LIST_MISMATCH,
                "p.sql:1:1: COLUMN_LIST_MISMATCH: flow 'sales': the declared columns (total"
                        + " DECIMAL(10, 2), product DATE NOT NULL) do not match the query's (product"
                        + " BOOLEAN, Total DOUBLE): declared column total DECIMAL(10, 2) is not a"
                        + " column of the query (did you mean Total? names are case-sensitive);"
                        + " column product is declared DATE NOT NULL but selected as BOOLEAN, which"
                        + " Flink cannot cast to it; selected column Total DOUBLE is not declared."
                        + " Declare every column of the select list by its name (AS name names an"
                        + " expression), or leave the column list out");
    }

    private static void planFailsIn(Path dir, String text, SqlException.Code code, String message) {
        assertThatThrownBy(() -> SqlPipeline.compile(text, "p.sql", dir, "p").plan())
                .isInstanceOf(SqlException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((SqlException) e).code()).isEqualTo(code));
    }

    /** STREAM(table): the change feed's defaults, overridden by the clauses (S7). */
    @Test
    void aChangeFeedSourceDefaultsItsSequenceAndDeletes() {
        SqlPipeline p =
                compile(
                        "USE SCHEMA shop;\n"
                                + "CREATE STREAMING TABLE dim;\n"
                                + "APPLY CHANGES INTO LIVE.dim FROM STREAM(LIVE.silver) KEYS (id)"
                                + " STORED AS SCD TYPE 2;\n"
                                + "CREATE STREAMING TABLE dim2;\n"
                                + "CREATE FLOW d2 AS AUTO CDC INTO dim2 FROM STREAM silver KEYS (id)"
                                + " SEQUENCE BY updated_at APPLY AS DELETE WHEN _change_type = 'delete'"
                                + " AND id > 0;");
        assertThat(p.feeds()).extracting(SqlPipeline.Feed::table).containsExactly("silver");
        assertThat(p.inputs()).isEmpty();
        FlowConfig dim = p.config().flows.get(0);
        assertThat(dim.table).isEqualTo("silver");
        assertThat(dim.target).isEqualTo("dim");
        assertThat(dim.format).isEqualTo("json");
        assertThat(dim.sequenceBy).containsExactly("_commit_version");
        assertThat(dim.applyAsDeleteWhen).isEqualTo("_change_type = 'delete'");
        assertThat(dim.scdType).isEqualTo(ScdType.TYPE_2);
        FlowConfig dim2 = p.config().flows.get(1);
        assertThat(dim2.sequenceBy).containsExactly("updated_at");
        assertThat(dim2.applyAsDeleteWhen).isEqualTo("_change_type = 'delete' AND id > 0");
        // each table of a change feed may be refreshed on its own
        assertThat(p.refreshOnly(List.of("dim2")).config().flows).hasSize(1);
    }

    private static final String ORDERS =
            "USE SCHEMA shop;\n"
                    + "CREATE STREAMING TABLE orders (id INT, status STRING, seq BIGINT);\n"
                    + "CREATE FLOW orders AS AUTO CDC INTO orders\n"
                    + "  FROM STREAM read_files('orders', format => 'json')\n"
                    + "  KEYS (id) SEQUENCE BY seq;\n";

    private static void planFails(String text, SqlException.Code code, String message) {
        assertThatThrownBy(() -> compile(text).plan())
                .isInstanceOf(SqlException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((SqlException) e).code()).isEqualTo(code));
    }

    /**
     * S8: a table's CONSTRAINTs become its flow's expectations; an expression the planner refuses
     * is an error at the CONSTRAINT.
     */
    @Test
    void constraintsBecomeExpectationsAndTheirErrorsNameTheConstraint() throws Exception {
        String text =
                "USE SCHEMA shop;\n"
                        + "CREATE STREAMING TABLE orders (id INT, status STRING, seq BIGINT,\n"
                        + "  CONSTRAINT ok EXPECT (status <> \"x\") ON VIOLATION DROP ROW);\n"
                        + "CREATE FLOW orders AS AUTO CDC INTO orders\n"
                        + "  FROM STREAM read_files('orders', format => 'json')\n"
                        + "  KEYS (id) SEQUENCE BY seq;\n";
        SqlPipeline p = compile(text);
        assertThat(p.config().flows.get(0).expectations)
                .containsExactly(
                        new Expectation("ok", "status <> 'x'", Expectation.OnViolation.DROP_ROW));
        assertThat(p.plan().flows.get(0).spec.expectations())
                .containsExactly(
                        new Expectation("ok", "status <> 'x'", Expectation.OnViolation.DROP_ROW));
        assertThatThrownBy(() -> compile(text.replace("(status <>", "(stat <>")).plan())
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith(
                        "p.sql:3:3: UNKNOWN_COLUMN: flow 'orders': expectation 'ok' (stat <> 'x')"
                                + " is not a valid Flink SQL boolean expression over the columns"
                                + " [id, status, seq")
                .hasMessageContaining("'stat'")
                .satisfies(
                        e ->
                                assertThat(((SqlException) e).code())
                                        .isEqualTo(SqlException.Code.UNKNOWN_COLUMN));
        assertThatThrownBy(() -> compile(text.replace("status <> \"x\"", "seq + 1")).plan())
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith(
                        "p.sql:3:3: INVALID_EXPECTATION: flow 'orders': expectation 'ok' (seq + 1)"
                                + " is not a valid Flink SQL boolean expression over the columns")
                .satisfies(
                        e ->
                                assertThat(((SqlException) e).code())
                                        .isEqualTo(SqlException.Code.INVALID_EXPECTATION));
        // an append flow's expectations check the rows it appends (S8)
        assertThat(
                        compile(
                                        "CREATE STREAMING TABLE events (id INT,"
                                                + " CONSTRAINT c EXPECT (id > 0))\n"
                                                + "  AS SELECT * FROM STREAM read_files('events',"
                                                + " format => 'json');\n")
                                .config()
                                .flows
                                .get(0)
                                .expectations)
                .containsExactly(
                        new dev.changeflow.operators.Expectation(
                                "c",
                                "id > 0",
                                dev.changeflow.operators.Expectation.OnViolation.KEEP));
    }

    /** Errors of a flow found when it is planned name the column or clause they are about. */
    @Test
    void flowErrorsNameTheirColumnTypeKeyAndSequence() throws Exception {
        assertThat(compile(ORDERS).plan().flows).hasSize(1);
        fails(
                ORDERS.replace("id INT,", "id INTEGR,"),
                SqlException.Code.UNKNOWN_TYPE,
                "p.sql:2:35: UNKNOWN_TYPE: streaming table orders: column 'id': cannot parse type"
                        + " 'INTEGR': unknown type (Flink SQL types: INT, BIGINT, STRING, DECIMAL(p,"
                        + " s), TIMESTAMP(p), DATE, BOOLEAN, ARRAY<t>, ROW<...>, ...)");
        planFails(
                ORDERS.replace("KEYS (id)", "KEYS (id, region)"),
                SqlException.Code.UNKNOWN_COLUMN,
                "p.sql:5:13: UNKNOWN_COLUMN: flow 'orders': key column 'region' is not a data"
                        + " column; data columns: [id, status, seq]");
        planFails(
                ORDERS.replace("SEQUENCE BY seq", "SEQUENCE BY sequence_nr"),
                SqlException.Code.UNKNOWN_COLUMN,
                "p.sql:5:25: UNKNOWN_COLUMN: flow 'orders': SEQUENCE BY column 'sequence_nr' is not"
                        + " a source column; source columns: [id, status, seq]");
        planFails(
                ORDERS.replace("SEQUENCE BY seq", "SEQUENCE BY status")
                        .replace("(id INT,", "(id DOUBLE,"),
                SqlException.Code.INVALID_FLOW,
                "p.sql:5:9: INVALID_FLOW: flow 'orders': KEYS column 'id'"
                        + " has type DOUBLE, which cannot be a key (FLOAT/DOUBLE and nested types are"
                        + " not supported); use an integer, decimal, string, binary, date, time or"
                        + " timestamp column");
        // an error about no one clause: at the flow's statement
        assertThatThrownBy(
                        () ->
                                compile(
                                                ORDERS.replace(
                                                        "SEQUENCE BY seq",
                                                        "SEQUENCE BY seq APPLY AS DELETE WHEN"
                                                                + " status === 'x'"))
                                        .plan())
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith("p.sql:3:1: INVALID_FLOW: ");
    }

    /**
     * S5: a REPLACE USING or SEQUENCE BY column the records do not have is UNKNOWN_COLUMN at that
     * column, as for AUTO CDC's KEYS, not INVALID_FLOW at the statement.
     */
    @Test
    void anUnknownReplaceUsingColumnIsNamedAtItsPlace(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("j"));
        Files.writeString(dir.resolve("j/1.jsonl"), "{\"id\":1,\"name\":\"a\",\"seq\":1}\n");
        String text =
                "SET name = x;\n"
                        + "CREATE OR REFRESH STREAMING TABLE t FLOW REPLACE USING (id, nope)"
                        + " SEQUENCE BY seq\n"
                        + "  BY NAME SELECT * FROM STREAM read_files('j', format => 'json');\n";
        assertThatThrownBy(() -> SqlPipeline.compile(text, "p.sql", dir, "p").plan())
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(SqlException.Code.UNKNOWN_COLUMN))
                .hasMessage(
                        "p.sql:2:61: UNKNOWN_COLUMN: flow 't': REPLACE USING"
                                + " column 'nope' is not a column of [id, name, seq]");
        String sequence = text.replace("(id, nope) SEQUENCE BY seq", "(id) SEQUENCE BY nope");
        assertThatThrownBy(() -> SqlPipeline.compile(sequence, "p.sql", dir, "p").plan())
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(SqlException.Code.UNKNOWN_COLUMN))
                .hasMessage(
                        "p.sql:2:73: UNKNOWN_COLUMN: flow 't': SEQUENCE BY"
                                + " column 'nope' is not a column of [id, name, seq]");
    }

    /** A job reads one kind of source; a change feed's table must exist when the run is planned. */
    @Test
    void oneKindOfSourcePerJobAndAFeedNeedsItsTable(@TempDir Path warehouse) {
        String mixed =
                ORDERS
                        + "CREATE STREAMING TABLE dim;\n"
                        + "APPLY CHANGES INTO dim FROM STREAM(orders) KEYS (id)"
                        + " STORED AS SCD TYPE 2;\n";
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        assertThatThrownBy(() -> compile(mixed).plan(catalog))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:3:1: CONFLICTING_SOURCES: one job reads one kind of source, and the"
                                + " flows of this run read files (orders); change feeds (dim):"
                                + " refresh those tables separately (REFRESH STREAMING TABLE t; in"
                                + " the file, or run --refresh t)");
        assertThatThrownBy(() -> compile(mixed).refreshOnly(List.of("dim")).plan(catalog))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:7:36: UNKNOWN_SOURCE: STREAM(orders) names no temporary view of the"
                                + " file, and table shop.orders, whose change feed it would read,"
                                + " does not exist in the catalog (a streaming table of the file"
                                + " exists once it was refreshed: REFRESH STREAMING TABLE orders;"
                                + " above it)");
    }

    private static final String KAFKA =
            "USE SCHEMA shop;\n"
                    + "CREATE TEMPORARY VIEW cdc AS SELECT * FROM STREAM read_kafka(bootstrapServers"
                    + " => 'h:9092', subscribe => 'srv.public.a, srv.public.b', startingOffsets =>"
                    + " 'latest');\n"
                    + "CREATE STREAMING TABLE a FLOW AUTO CDC FROM STREAM(cdc) KEYS (id);\n"
                    + "CREATE STREAMING TABLE b FLOW AUTO CDC FROM STREAM(cdc) KEYS (id);\n";

    @Test
    void fileReadersIsForReadFilesOnly() {
        assertThat(
                        compile(
                                        "SET file-readers = 2;\n"
                                                + "CREATE STREAMING TABLE t AS SELECT * FROM"
                                                + " read_files('x')")
                                .config()
                                .fileReaders)
                .isEqualTo(2);
        fails(
                "SET file-readers = 2;\n" + KAFKA,
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: file-readers applies to read_files, and no flow of the"
                        + " file reads files (read_kafka's readers are kafka-readers)");
    }

    /** read_kafka is the Kafka input of the flows file; the calls of one job must agree. */
    @Test
    void readKafkaIsTheKafkaInput() {
        SqlPipeline p = compile(KAFKA);
        assertThat(p.config().kafka.bootstrapServers).isEqualTo("h:9092");
        assertThat(p.config().kafka.topics).containsExactly("srv.public.a", "srv.public.b");
        assertThat(p.config().kafka.startingOffsets.toString()).isEqualTo("latest");
        assertThat(p.config().flows).extracting(f -> f.table).containsExactly("a", "b");
        assertThat(p.inputs()).isEmpty();
        assertThat(p.refreshOnly(List.of("b")).config().kafka.topics).hasSize(2);
        fails(
                KAFKA.replace("'latest'", "'newest'"),
                SqlException.Code.INVALID_OPTION,
                "p.sql:2:51: INVALID_OPTION: read_kafka: starting-offsets: expected earliest,"
                        + " latest, committed, timestamp:<epoch ms> or per-partition offsets"
                        + " {\"topic\":{\"0\":23,\"1\":-2}}, got 'newest'");
        // per-partition offsets in Spark's JSON form
        assertThat(
                        compile(
                                        KAFKA.replace(
                                                "'latest'",
                                                "'{\"srv.public.a\":{\"0\":23,\"1\":-2}}'"))
                                .config()
                                .kafka
                                .startingOffsets)
                .isEqualTo(StartingOffsets.offsets(Map.of("srv.public.a", Map.of(0, 23L, 1, -2L))));
        // a topic the call does not subscribe to is refused before any broker is asked
        fails(
                KAFKA.replace("'latest'", "'{\"srv.public.z\":{\"0\":23}}'"),
                SqlException.Code.INVALID_OPTION,
                "p.sql:2:51: INVALID_OPTION: kafka: 'starting-offsets' names topic srv.public.z,"
                        + " which the input does not subscribe to (topics: srv.public.a,"
                        + " srv.public.b)");
        // the words are read in any case, as Spark's Kafka source reads them
        assertThat(compile(KAFKA.replace("'latest'", "'Earliest'")).config().kafka.startingOffsets)
                .isEqualTo(StartingOffsets.earliest());
        fails(
                KAFKA
                        + "CREATE STREAMING TABLE c FLOW AUTO CDC FROM STREAM read_kafka("
                        + "bootstrapServers => 'h:9092', subscribePattern => 'srv[.].*') KEYS (id);",
                SqlException.Code.CONFLICTING_SOURCES,
                "p.sql:5:52: CONFLICTING_SOURCES: read_kafka {bootstrapServers=h:9092,"
                        + " subscribePattern=srv[.].*} differs from read_kafka"
                        + " {bootstrapServers=h:9092, subscribe=srv.public.a, srv.public.b,"
                        + " startingOffsets=latest} at p.sql:2:51: the flows of one job read one"
                        + " Kafka subscription, and records reach the flow of their table (the"
                        + " topic's last segment or source.table)");
    }

    /** REFRESH statements: checked with the file, kept in file order. */
    @Test
    void refreshStatementsNameTablesOfTheFile() {
        String two =
                ORDERS
                        + "CREATE STREAMING TABLE events (id INT) TBLPROPERTIES"
                        + " ('pipelines.reset.allowed' = 'false')\n"
                        + "  AS SELECT * FROM STREAM read_files('events', format => 'json');\n";
        SqlPipeline p =
                compile(
                        two
                                + "REFRESH STREAMING TABLE LIVE.orders FULL;\n"
                                + "REFRESH STREAMING TABLE events, orders;");
        assertThat(p.refreshes())
                .containsExactly(
                        new SqlStatement.Refresh(
                                new SqlPosition("p.sql", 8, 1), List.of("orders"), true),
                        new SqlStatement.Refresh(
                                new SqlPosition("p.sql", 9, 1),
                                List.of("events", "orders"),
                                false));
        assertThat(p.refreshOnly(List.of("orders")).refreshes()).isEmpty();
        assertThat(p.tableOfFlow("orders")).isEqualTo("orders");
        // S3: a scheduled table's refresh job keeps its name when the file gains tables
        String scheduled = ORDERS.replace("seq BIGINT);", "seq BIGINT) SCHEDULE EVERY 1 HOUR;");
        assertThat(compile(scheduled).refreshOnly(List.of("orders")).config().name)
                .isEqualTo("p-refresh-orders");
        assertThat(
                        compile(two.replace(ORDERS, scheduled))
                                .refreshOnly(List.of("orders"))
                                .config()
                                .name)
                .isEqualTo("p-refresh-orders");
        assertThat(compile(ORDERS).refreshOnly(List.of("orders")).config().name).isEqualTo("p");
        fails(
                two + "REFRESH STREAMING TABLE order;",
                SqlException.Code.UNKNOWN_TABLE,
                "p.sql:8:1: UNKNOWN_TABLE: REFRESH STREAMING TABLE order: no CREATE STREAMING TABLE"
                        + " of the file declares that table (tables: orders, events)");
        fails(
                two + "REFRESH STREAMING TABLE events FULL;",
                SqlException.Code.RESET_NOT_ALLOWED,
                "p.sql:6:1: RESET_NOT_ALLOWED: streaming table events sets"
                        + " 'pipelines.reset.allowed' = 'false': a full refresh would empty it, so it"
                        + " is refused; refresh it without FULL, or remove the property first");
        fails(
                two.replace("read_files('events'", "read_files('orders'")
                        + "REFRESH STREAMING TABLE events;",
                SqlException.Code.INVALID_REFRESH,
                "p.sql:8:1: INVALID_REFRESH: REFRESH STREAMING TABLE events: read_files path"
                        + " /pipelines/orders also feeds streaming table orders, which is not"
                        + " refreshed; refresh them together (REFRESH STREAMING TABLE ..., orders) or"
                        + " give each table a path of its own");
    }

    @Test
    void duplicatesAreRefused() {
        fails(
                "CREATE STREAMING TABLE t;\ncreate streaming table T",
                SqlException.Code.DUPLICATE_TABLE,
                "p.sql:2:1: DUPLICATE_TABLE: streaming table T is already defined at p.sql:1:1");
        fails(
                "CREATE TEMP VIEW v AS SELECT * FROM read_files('a');\n"
                        + "CREATE TEMP VIEW v AS SELECT * FROM read_files('b')",
                SqlException.Code.DUPLICATE_VIEW,
                "p.sql:2:1: DUPLICATE_VIEW: view v is already defined at p.sql:1:1");
        fails(
                "CREATE STREAMING TABLE t FLOW AUTO CDC FROM read_files('a') KEYS (id);\n"
                        + "APPLY CHANGES INTO t FROM read_files('a') KEYS (id)",
                SqlException.Code.DUPLICATE_FLOW,
                "p.sql:2:1: DUPLICATE_FLOW: streaming table t is already written by the flow at"
                        + " p.sql:1:1; a table is written by one flow");
        fails(
                "CREATE STREAMING TABLE a; CREATE STREAMING TABLE b;\n"
                        + "CREATE FLOW f AS AUTO CDC INTO a FROM read_files('x') KEYS (id);\n"
                        + "CREATE FLOW f AS AUTO CDC INTO b FROM read_files('x') KEYS (id)",
                SqlException.Code.DUPLICATE_FLOW,
                "p.sql:3:1: DUPLICATE_FLOW: flow f is already defined at p.sql:2:1 (a flow without"
                        + " a name is named after its table)");
        fails(
                "CREATE STREAMING TABLE a FLOW AUTO CDC FROM read_files('x') KEYS (id);\n"
                        + "CREATE STREAMING TABLE b;\n"
                        + "CREATE FLOW a AS AUTO CDC INTO b FROM read_files('x') KEYS (id)",
                SqlException.Code.DUPLICATE_FLOW,
                "p.sql:3:1: DUPLICATE_FLOW: flow a is already defined at p.sql:1:1 (a flow without"
                        + " a name is named after its table)");
    }

    @Test
    void aTableWithoutFlowAndAFileWithoutFlows() {
        fails(
                "CREATE STREAMING TABLE a AS SELECT * FROM read_files('x');\nCREATE STREAMING TABLE b",
                SqlException.Code.TABLE_WITHOUT_FLOW,
                "p.sql:2:1: TABLE_WITHOUT_FLOW: no flow writes streaming table b: add CREATE FLOW ..."
                        + " AS AUTO CDC INTO b FROM STREAM(...) KEYS (...), or give the table FLOW AUTO"
                        + " CDC or AS SELECT * FROM STREAM(...)");
        fails(
                "SET parallelism = 2;",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:1: INVALID_FLOW: the file defines no flow: give a streaming table FLOW AUTO"
                        + " CDC FROM STREAM(...) KEYS (...), or add CREATE FLOW ... AS AUTO CDC INTO ...");
        fails(
                "",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:1: INVALID_FLOW: the file defines no flow: give a streaming table FLOW AUTO"
                        + " CDC FROM STREAM(...) KEYS (...), or add CREATE FLOW ... AS AUTO CDC INTO ...");
    }

    @Test
    void includeExistingFilesFalseIsTheJobsIncludeExistingFilesOption() {
        SqlPipeline p =
                compile(
                        "CREATE OR REFRESH STREAMING TABLE sales\n"
                                + "  SCHEDULE EVERY 1 hour\n"
                                + "  AS SELECT *\n"
                                + "  FROM STREAM read_files(\n"
                                + "    'x',\n"
                                + "    includeExistingFiles => false\n"
                                + "  );\n"
                                + "CREATE STREAMING TABLE b AS SELECT * FROM read_files('x',"
                                + " includeExistingFiles => 'FALSE')");
        assertThat(p.config().includeExistingFiles).isFalse();
        assertThat(
                        compile("CREATE STREAMING TABLE t AS SELECT * FROM read_files('x')")
                                .config()
                                .includeExistingFiles)
                .isTrue();
        assertThat(
                        compile(
                                        "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x',"
                                                + " includeExistingFiles => true)")
                                .config()
                                .includeExistingFiles)
                .isTrue();
        // SET gives the flows file's option; the read_files argument is the definition, too
        assertThat(
                        compile(
                                        "SET include-existing-files = false;\n"
                                                + "CREATE STREAMING TABLE t AS SELECT * FROM"
                                                + " read_files('x')")
                                .config()
                                .includeExistingFiles)
                .isFalse();
    }

    @Test
    void includeExistingFilesMustBeTrueOrFalseAndAgree() {
        fails(
                "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x',\n"
                        + "  includeExistingFiles => 'maybe')",
                SqlException.Code.INVALID_OPTION,
                "p.sql:2:27: INVALID_OPTION: read_files includeExistingFiles must be true or"
                        + " false, got 'maybe'");
        fails(
                "CREATE STREAMING TABLE a AS SELECT * FROM read_files('x', includeExistingFiles =>"
                        + " false);\n"
                        + "CREATE STREAMING TABLE b AS SELECT * FROM read_files('y', includeExistingFiles"
                        + " => true)",
                SqlException.Code.CONFLICTING_SOURCES,
                "p.sql:2:43: CONFLICTING_SOURCES: read_files includeExistingFiles => true differs"
                        + " from read_files includeExistingFiles => false at p.sql:1:43: the files"
                        + " of one job are read one way (give every read_files of the file the same"
                        + " includeExistingFiles, or refresh the tables separately)");
        fails(
                "CREATE STREAMING TABLE a AS SELECT * FROM read_files('x');\n"
                        + "CREATE STREAMING TABLE b AS SELECT * FROM read_files('y', includeExistingFiles"
                        + " => false)",
                SqlException.Code.CONFLICTING_SOURCES,
                "p.sql:2:43: CONFLICTING_SOURCES: read_files includeExistingFiles => false differs"
                        + " from read_files without includeExistingFiles at p.sql:1:43: the files"
                        + " of one job are read one way (give every read_files of the file the same"
                        + " includeExistingFiles, or refresh the tables separately)");
        fails(
                "SET include-existing-files = maybe;\n"
                        + "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x')",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: SET include-existing-files: include-existing-files must"
                        + " be true or false, got 'maybe'");
    }

    /**
     * S2: one range for maxFilesPerTrigger in read_files and SET (one check serves both), and a SET
     * beside a read_files argument of the same file-source option must agree instead of being
     * silently overridden (issue #13).
     */
    @Test
    void maxFilesPerTriggerHasOneRangeAndSetMustAgreeWithReadFiles() {
        String range = " must be a whole number of files from 1 to 2147483647, got ";
        fails(
                "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x', maxFilesPerTrigger =>"
                        + " 2147483648)",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:81: INVALID_OPTION: read_files maxFilesPerTrigger"
                        + range
                        + "'2147483648'");
        fails(
                "SET max-files-per-trigger = 2147483648;\n"
                        + "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x')",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: SET max-files-per-trigger: max-files-per-trigger"
                        + range
                        + "'2147483648'");
        assertThat(
                        compile(
                                        "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x',"
                                                + " maxFilesPerTrigger => 2147483647)")
                                .config()
                                .maxFilesPerTrigger)
                .isEqualTo(Integer.MAX_VALUE);
        fails(
                "SET max-files-per-trigger = 10;\n"
                        + "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x',"
                        + " maxFilesPerTrigger => 5)",
                SqlException.Code.CONFLICTING_SOURCES,
                "p.sql:2:43: CONFLICTING_SOURCES: read_files maxFilesPerTrigger => '5' differs"
                        + " from SET max-files-per-trigger = '10' at p.sql:1:1: the files of one"
                        + " job are read by one source (give the value once, or the same value)");
        fails(
                "SET csv-sep = ';';\n"
                        + "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x', format =>"
                        + " 'csv', sep => '|')",
                SqlException.Code.CONFLICTING_SOURCES,
                "p.sql:2:43: CONFLICTING_SOURCES: read_files sep => '|' differs from SET csv-sep"
                        + " = ';' at p.sql:1:1: the files of one job are read by one source (give"
                        + " the value once, or the same value)");
        // the same value twice is fine
        assertThat(
                        compile(
                                        "SET max-files-per-trigger = 5;\n"
                                                + "CREATE STREAMING TABLE t AS SELECT * FROM"
                                                + " read_files('x', maxFilesPerTrigger => 5)")
                                .config()
                                .maxFilesPerTrigger)
                .isEqualTo(5);
    }

    @Test
    void formatsMustAgree() {
        fails(
                "CREATE STREAMING TABLE a AS SELECT * FROM read_files('x', format => 'json');\n"
                        + "CREATE STREAMING TABLE b AS SELECT * FROM read_files('y', format => 'debezium-json')",
                SqlException.Code.CONFLICTING_FORMATS,
                "p.sql:2:43: CONFLICTING_FORMATS: read_files format 'debezium-json' differs from"
                        + " format 'json' at p.sql:1:43: the files of one pipeline are read with one"
                        + " format");
    }

    @Test
    void aBadCatalogTypeNamesTheStatementThePropertyAndTheAcceptedTypes() {
        fails(
                "SET catalog.type = oracle;\nCREATE STREAMING TABLE t AS SELECT * FROM read_files('x')",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: SET catalog.type: 'type' = 'oracle' is not one of hadoop,"
                        + " rest, jdbc, hive, glue, nessie (or set 'catalog-impl' to a catalog class"
                        + " name).");
    }

    @Test
    void badOptionsNameTheirPlaceAndWhatIsAllowed() {
        String flow = "\nCREATE STREAMING TABLE t AS SELECT * FROM read_files('x')";
        fails(
                "SET checkpoint-intervall = 2s;" + flow,
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: unknown SET key 'checkpoint-intervall' (known:"
                        + " checkpoint-interval, checkpoint-timeout, csv-comment, csv-escape, csv-header,"
                        + " csv-null-value, csv-quote, csv-sep, file-readers, format,"
                        + " include-existing-files,"
                        + " kafka-readers, max-files-per-trigger, max-record-bytes, name, namespace,"
                        + " parallelism, execution.checkpointing.interval, parallelism.default,"
                        + " catalog.<Iceberg catalog property>)");
        // the name names the job's state folder: no path, no blank (fresh-user finding)
        for (String name : List.of("'../../escape'", "'x y'", "''", "'.'", "'a/b'")) {
            assertThatThrownBy(() -> compile("SET name = " + name + ";" + flow))
                    .as(name)
                    .isInstanceOf(SqlException.class)
                    .hasMessageStartingWith("p.sql:1:1: INVALID_OPTION: SET name: ")
                    .hasMessageContaining("a job name: letters, digits");
        }
        assertThat(compile("SET name = 'orders_v2.eu-1';" + flow).config().name)
                .isEqualTo("orders_v2.eu-1");
        assertThat(dev.changeflow.jobs.config.IngestOptions.jobNameOf("Weird Name!"))
                .isEqualTo("Weird-Name-");
        assertThat(dev.changeflow.jobs.config.IngestOptions.jobNameOf("__")).isEqualTo("pipeline");
        assertThatThrownBy(() -> compile("SET parallelism = 0;" + flow))
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith("p.sql:1:1: INVALID_OPTION: SET parallelism: ")
                .hasMessageContaining("'0'");
        fails(
                "CREATE STREAMING TABLE t AS SELECT * FROM read_files('x', format => 'avro')",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:43: INVALID_OPTION: read_files: 'format' must be json, debezium-json, csv or"
                        + " parquet, got 'avro'");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('changeflow.apply-bufer-keys' = '1')\n"
                        + "  FLOW AUTO CDC FROM read_files('x') KEYS (id)",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: table property 'changeflow.apply-bufer-keys' of t names"
                        + " no flow option (known: append-only, apply-as-delete-when,"
                        + " apply-as-truncate-when, apply-buffer-keys, columns, expectations, format,"
                        + " format-version, from-snapshot, from-snapshot-table, ignore-null-updates,"
                        + " keys, maintenance,"
                        + " maintenance-commit-count, maintenance-data-file-count,"
                        + " maintenance-delete-file-count, maintenance-delete-file-threshold,"
                        + " maintenance-expire-interval, maintenance-expire-older-than,"
                        + " maintenance-interval, maintenance-lock-jdbc-uri,"
                        + " maintenance-manifest-count, maintenance-orphans-interval,"
                        + " maintenance-orphans-older-than, maintenance-rate-limit,"
                        + " maintenance-retain-last, name, on-invalid-record,"
                        + " on-schema-change, partitioned-by, replace-using, scd-type, schema, schema-hints,"
                        + " select, select-where, sequence-by, snapshot-versions, table,"
                        + " target, tombstone-gc-threshold, track-history-on, truncate,"
                        + " unavailable-value-placeholder)");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('changeflow.replace-where' = 'id > 1')\n"
                        + "  FLOW AUTO CDC FROM read_files('x') KEYS (id)",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: table property 'changeflow.replace-where' of t: a"
                        + " REPLACE WHERE flow is written CREATE OR REFRESH STREAMING TABLE t FLOW"
                        + " REPLACE WHERE <predicate> BY NAME <query>");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('changeflow.apply-buffer-keys' = '-1')\n"
                        + "  FLOW AUTO CDC FROM read_files('x') KEYS (id)",
                SqlException.Code.INVALID_OPTION,
                "p.sql:1:1: INVALID_OPTION: TBLPROPERTIES of t: apply-buffer-keys must be a whole"
                        + " number of keys per subtask from 0 (no buffering) to 2147483647, got '-1'");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('changeflow.on-invalid-record' = 'drop')\n"
                        + "  FLOW AUTO CDC FROM read_files('x') KEYS (id)",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:1: INVALID_FLOW: flow 't': 'on-invalid-record' must be quarantine or fail,"
                        + " got 'drop'");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('changeflow.keys' = 'id')\n"
                        + "  AS SELECT * FROM read_files('x')",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:1: INVALID_FLOW: flow 't': 'append-only: true' takes no 'keys' (got [id])");
        fails(
                "CREATE STREAMING TABLE t TBLPROPERTIES ('changeflow.maintenance-interval' = '1h')\n"
                        + "  FLOW AUTO CDC FROM read_files('x') KEYS (id)",
                SqlException.Code.INVALID_FLOW,
                "p.sql:1:1: INVALID_FLOW: flow 't': 'maintenance-interval' tunes in-job"
                        + " maintenance, which is off unless turned on (docs/semantics.md M1); set"
                        + " 'maintenance' to true");
    }

    /**
     * S2 (issue #13): a read_files path on an object store is kept as its URI (read through Flink's
     * file systems), next to local paths resolved against the file's folder; SET s3.* are Flink
     * file-system options of the run.
     */
    @Test
    void objectStorePathsAreKeptAsUrisAndSetS3OptionsConfigureTheirFileSystem() {
        SqlPipeline p =
                compile(
                        "SET 's3.endpoint' = 'http://minio:9000';\n"
                                + "SET s3.path.style.access = true;\n"
                                + "CREATE STREAMING TABLE t AS SELECT * FROM"
                                + " read_files('s3://bucket/cdc/*.json');\n"
                                + "CREATE STREAMING TABLE u AS SELECT * FROM read_files('local')");
        assertThat(p.inputs())
                .extracting(SqlPipeline.Input::name)
                .containsExactly("s3://bucket/cdc/*.json", BASE.resolve("local").toString());
        assertThat(p.inputs()).extracting(SqlPipeline.Input::local).containsExactly(false, true);
        assertThat(p.config().fileSystem)
                .containsExactly(
                        Map.entry("s3.endpoint", "http://minio:9000"),
                        Map.entry("s3.path.style.access", "true"));
    }

    private static final String TWO_TABLES =
            "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('cdc', format =>"
                    + " 'debezium-json');\n"
                    + "CREATE OR REFRESH STREAMING TABLE a SCHEDULE EVERY 1 HOUR"
                    + " FLOW AUTO CDC FROM STREAM(v) KEYS (id);\n"
                    + "CREATE OR REFRESH STREAMING TABLE b FLOW AUTO CDC FROM STREAM(v) KEYS (id);\n";

    @Test
    void schedulesAfterTheFilesAlterStatementsInFileOrder() {
        SqlStatement.Schedule.Cron sixAm =
                new SqlStatement.Schedule.Cron(
                        new SqlPosition("p.sql", 4, 29), "0 0 6 * * ?", "Europe/Paris");
        SqlPipeline p =
                compile(
                        TWO_TABLES
                                + "ALTER STREAMING TABLE b ADD SCHEDULE CRON '0 0 6 * * ?' AT TIME"
                                + " ZONE 'Europe/Paris';\n"
                                + "ALTER STREAMING TABLE A DROP SCHEDULE;\n");
        assertThat(p.tables()).containsExactly("a", "b");
        assertThat(p.schedules()).containsExactly(Map.entry("b", sixAm));
        SqlPipeline q =
                compile(TWO_TABLES + "ALTER STREAMING TABLE a ALTER SCHEDULE EVERY 2 DAYS;\n");
        assertThat(q.schedules())
                .containsExactly(
                        Map.entry(
                                "a",
                                new SqlStatement.Schedule.Every(
                                        new SqlPosition("p.sql", 4, 31),
                                        2,
                                        SqlStatement.Schedule.Unit.DAYS)));
        assertThat(compile(TWO_TABLES).schedules())
                .containsExactly(
                        Map.entry(
                                "a",
                                new SqlStatement.Schedule.Every(
                                        new SqlPosition("p.sql", 2, 37),
                                        1,
                                        SqlStatement.Schedule.Unit.HOURS)));
    }

    @Test
    void alterScheduleNeedsADeclaredTableAndTheRightStartingPoint() {
        fails(
                TWO_TABLES + "ALTER STREAMING TABLE a ADD SCHEDULE EVERY 2 HOURS",
                SqlException.Code.INVALID_SCHEDULE,
                "p.sql:4:1: INVALID_SCHEDULE: streaming table a already has a schedule: change it"
                        + " with ALTER SCHEDULE");
        fails(
                TWO_TABLES + "ALTER STREAMING TABLE b ALTER SCHEDULE EVERY 2 HOURS",
                SqlException.Code.INVALID_SCHEDULE,
                "p.sql:4:1: INVALID_SCHEDULE: streaming table b has no schedule to ALTER: add one"
                        + " with ADD SCHEDULE");
        fails(
                TWO_TABLES + "ALTER STREAMING TABLE b DROP SCHEDULE",
                SqlException.Code.INVALID_SCHEDULE,
                "p.sql:4:1: INVALID_SCHEDULE: streaming table b has no schedule to DROP: add one"
                        + " with ADD SCHEDULE");
        fails(
                "ALTER STREAMING TABLE a ADD SCHEDULE EVERY 2 HOURS;\n" + TWO_TABLES,
                SqlException.Code.UNKNOWN_TABLE,
                "p.sql:1:1: UNKNOWN_TABLE: ALTER STREAMING TABLE a: no CREATE STREAMING TABLE above"
                        + " it declares that table");
    }

    // ------------------------------------------------------------ AUTO CDC FROM SNAPSHOT (A6)

    private static final String SNAPSHOT_PIPELINE =
            String.join(
                    "\n",
                    "USE SCHEMA geo;",
                    "CREATE OR REFRESH STREAMING TABLE accounts",
                    "  FLOW AUTO CDC FROM STREAM read_files('in', format => 'debezium-json')",
                    "  KEYS (aid);",
                    "CREATE OR REFRESH STREAMING TABLE cities (id BIGINT, city STRING);",
                    "CREATE FLOW snap AS AUTO CDC INTO cities",
                    "  FROM SNAPSHOT read_files('snaps', format => 'csv')",
                    "  KEYS (id) STORED AS SCD TYPE 2 TRACK HISTORY ON (city);",
                    "CREATE OR REFRESH STREAMING TABLE dim",
                    "  FLOW AUTO CDC FROM SNAPSHOT accounts KEYS (aid) STORED AS SCD TYPE 2;");

    @Test
    void snapshotFlowsCompileToTheirOwnJobBesideTheIngestJob() {
        SqlPipeline p = compile(SNAPSHOT_PIPELINE);
        assertThat(p.config().flows).extracting(FlowConfig::flowName).containsExactly("accounts");
        assertThat(p.tables()).containsExactly("accounts", "cities", "dim");
        assertThat(p.snapshotTables())
                .extracting(SqlPipeline.SnapshotTable::name)
                .containsExactly("cities", "dim");

        SqlPipeline.SnapshotTable cities = p.snapshotTable("LIVE.Cities");
        FlowConfig folder = cities.flow();
        assertThat(folder.flowName()).isEqualTo("snap");
        assertThat(folder.fromSnapshot).isEqualTo("/pipelines/snaps");
        assertThat(folder.fromSnapshotTable).isNull();
        assertThat(folder.schema).isEqualTo("id BIGINT, city STRING");
        assertThat(folder.keys).containsExactly("id");
        assertThat(folder.sequenceBy).isEmpty();
        assertThat(folder.scdType).isEqualTo(ScdType.TYPE_2);
        assertThat(folder.trackHistoryOn).isEqualTo(ColumnSelection.include(List.of("city")));
        assertThat(cities.position()).isEqualTo(new SqlPosition("p.sql", 6, 1));
        assertThat(cities.sourcePosition()).isEqualTo(new SqlPosition("p.sql", 7, 17));
        assertThat(cities.source())
                .isEqualTo("snapshot files in /pipelines/snaps (read_files, FROM SNAPSHOT)");
        assertThat(p.snapshotTarget(cities).toString()).isEqualTo("geo.cities");

        FlowConfig table = p.snapshotTable("dim").flow();
        assertThat(table.fromSnapshotTable).isEqualTo("accounts");
        assertThat(table.fromSnapshot).isNull();
        assertThat(table.schema).isNull();
        assertThat(table.keys).containsExactly("aid");

        IngestConfig all = p.snapshotConfig(p.snapshotTables());
        assertThat(all.name).isEqualTo("p-snapshots");
        assertThat(all.namespace).isEqualTo("geo");
        assertThat(all.flows).containsExactly(folder, table);
        IngestConfig one = p.snapshotConfig(List.of(cities));
        assertThat(one.name).isEqualTo("p-snapshots-refresh-cities");
        assertThat(one.flows).containsExactly(folder);

        // the ingest job is the same with and without the snapshot tables beside it
        assertThat(p.refreshOnly(List.of("accounts"))).isSameAs(p);
        assertThat(p.refreshOnly(List.of("accounts", "cities"))).isSameAs(p);
        // a REFRESH of a snapshot table is its job's (checked with the file)
        assertThat(compile(SNAPSHOT_PIPELINE + "\nREFRESH STREAMING TABLE cities;").refreshes())
                .hasSize(1);
    }

    @Test
    void snapshotFlowErrorsAreNamedAtTheirPlace() {
        String folder = "CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT read_files('d') KEYS (id);";
        fails(
                "CREATE STREAMING TABLE t;\n" + folder,
                SqlException.Code.INVALID_FLOW,
                "p.sql:2:48: INVALID_FLOW: AUTO CDC FROM SNAPSHOT read_files('d') needs the"
                        + " columns of the snapshot files: declare them on the streaming table,"
                        + " e.g. CREATE OR REFRESH STREAMING TABLE t (id BIGINT, city STRING)"
                        + " (A6)");
        fails(
                "CREATE STREAMING TABLE t (key BIGINT);\n" + folder,
                SqlException.Code.UNKNOWN_COLUMN,
                "p.sql:2:70: UNKNOWN_COLUMN: KEYS column 'id' is not a declared column of"
                        + " streaming table t [key], whose columns the snapshot files are read"
                        + " with");
        fails(
                "CREATE STREAMING TABLE t (id BIGINT,\n"
                        + "  CONSTRAINT pos EXPECT (id > 0) ON VIOLATION DROP ROW);\n"
                        + folder,
                SqlException.Code.INVALID_FLOW,
                "p.sql:2:3: INVALID_FLOW: expectations are not checked on an AUTO CDC FROM"
                        + " SNAPSHOT flow (S8, A6): a row left out of a snapshot would read as a"
                        + " delete of its key; streaming table t is written FROM SNAPSHOT at"
                        + " p.sql:3:39");
        fails(
                "CREATE STREAMING TABLE t (id BIGINT);\n"
                        + folder
                        + "\nREFRESH STREAMING TABLE t FULL;",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:3:1: UNSUPPORTED_STATEMENT: not supported by changeflow yet: REFRESH"
                        + " STREAMING TABLE t FULL of an AUTO CDC FROM SNAPSHOT table (A6);"
                        + " refresh it without FULL, or drop it (DROP TABLE t;) and run the file"
                        + " again to rebuild it from every snapshot");
        fails(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('x');\n"
                        + "CREATE STREAMING TABLE t (id BIGINT)\n"
                        + "  FLOW AUTO CDC FROM SNAPSHOT v KEYS (id);",
                SqlException.Code.UNSUPPORTED_STATEMENT,
                "p.sql:3:31: UNSUPPORTED_STATEMENT: not supported by changeflow yet: temporary"
                        + " view v as a snapshot source; name read_files('folder') or a table"
                        + " after FROM SNAPSHOT");
        fails(
                "CREATE STREAMING TABLE t (id BIGINT) FLOW AUTO CDC FROM SNAPSHOT s KEYS (id);\n"
                        + "APPLY CHANGES INTO t FROM SNAPSHOT s2 KEYS (id);",
                SqlException.Code.DUPLICATE_FLOW,
                "p.sql:2:1: DUPLICATE_FLOW: streaming table t is already written by the flow at"
                        + " p.sql:1:1; a table is written by one flow");
    }

    @Test
    void aSnapshotFolderIsCheckedWhenPlanned(@TempDir Path dir) throws Exception {
        String text =
                "CREATE STREAMING TABLE t (id BIGINT, city STRING)\n"
                        + "  FLOW AUTO CDC FROM SNAPSHOT read_files('snaps') KEYS (id);";
        SqlPipeline p = SqlPipeline.compile(text, "p.sql", dir, "p");
        SqlPipeline.SnapshotTable t = p.snapshotTables().get(0);
        assertThatThrownBy(() -> p.checkSnapshot(t, CatalogSettings.localHadoop(dir.resolve("wh"))))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:2:31: SOURCE_NOT_FOUND: flow 't': snapshot folder "
                                + dir.resolve("snaps")
                                + " does not exist; read_files after FROM SNAPSHOT names the folder"
                                + " that holds the snapshot files (snapshot_1.csv, snapshot_2.csv,"
                                + " ...), a relative path resolved against the folder of the"
                                + " pipeline file");
        Files.createDirectories(dir.resolve("snaps"));
        Files.writeString(dir.resolve("snaps/snapshot_x.csv"), "id,city\n");
        assertThatThrownBy(() -> p.checkSnapshot(t, CatalogSettings.localHadoop(dir.resolve("wh"))))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:1:1: INVALID_FLOW: snapshot file 'snapshot_x.csv' has no integer"
                                + " version in its name; name snapshot files <name>_<n>.csv or"
                                + " <name>_<n>.json (n an integer, e.g. snapshot_3.csv)");
        Files.delete(dir.resolve("snaps/snapshot_x.csv"));
        Files.writeString(dir.resolve("snaps/snapshot_1.csv"), "id,city\n1,Lyon\n");
        p.checkSnapshot(t, CatalogSettings.localHadoop(dir.resolve("wh")));
    }

    @Test
    void aSnapshotTableIsCheckedInTheCatalog(@TempDir Path dir) throws Exception {
        String text =
                "CREATE STREAMING TABLE t\n" + "  FLOW AUTO CDC FROM SNAPSHOT raw.src KEYS (id);";
        SqlPipeline p = SqlPipeline.compile(text, "p.sql", dir, "p");
        SqlPipeline.SnapshotTable t = p.snapshotTables().get(0);
        CatalogSettings catalog = CatalogSettings.localHadoop(dir.resolve("wh"));
        assertThatThrownBy(() -> p.checkSnapshot(t, catalog))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:2:31: UNKNOWN_TABLE: flow 't': snapshot table raw.src does not"
                                + " exist in the catalog; create it or fix the table name after"
                                + " FROM SNAPSHOT");
        Catalog cat = catalog.open();
        cat.createTable(
                TableIdentifier.of("raw", "src"),
                new Schema(
                        Types.NestedField.required(1, "id", Types.LongType.get()),
                        Types.NestedField.optional(2, "city", Types.StringType.get())),
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "1"));
        assertThatThrownBy(() -> p.checkSnapshot(t, catalog))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:1:1: INVALID_FLOW: flow 't': snapshot"
                                + " table changeflow.raw.src has format version 1; its versions are"
                                + " snapshot sequence numbers, which format 1 does not have. Upgrade"
                                + " the table with the table property 'format-version' = '2'.");
        cat.dropTable(TableIdentifier.of("raw", "src"));
        cat.createTable(
                TableIdentifier.of("raw", "src"),
                new Schema(
                        Types.NestedField.required(1, "id", Types.LongType.get()),
                        Types.NestedField.optional(2, "city", Types.StringType.get())),
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "2"));
        p.checkSnapshot(t, catalog);
    }

    @Test
    void aSnapshotOfATableTheFileWritesIsNotUnknownBeforeItsFirstRun(@TempDir Path dir)
            throws Exception {
        String text =
                "USE SCHEMA raw;\n"
                        + "CREATE STREAMING TABLE orders FLOW AUTO CDC FROM STREAM read_files('in',"
                        + " format => 'json', table => 'orders') KEYS (id) SEQUENCE BY seq;\n"
                        + "CREATE STREAMING TABLE h FLOW AUTO CDC FROM SNAPSHOT orders KEYS (id);\n"
                        + "CREATE STREAMING TABLE g FLOW AUTO CDC FROM SNAPSHOT other KEYS (id);";
        SqlPipeline p = SqlPipeline.compile(text, "p.sql", dir, "p");
        CatalogSettings catalog = CatalogSettings.localHadoop(dir.resolve("wh"));
        p.checkSnapshot(p.snapshotTables().get(0), catalog);
        assertThatThrownBy(() -> p.checkSnapshot(p.snapshotTables().get(1), catalog))
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith(
                        "p.sql:4:54: UNKNOWN_TABLE: flow 'g': snapshot"
                                + " table raw.other does not exist in the catalog");
    }
}

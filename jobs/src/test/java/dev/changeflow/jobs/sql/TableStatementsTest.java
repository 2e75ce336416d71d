package dev.changeflow.jobs.sql;

import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DESCRIBE and DROP TABLE of a pipeline file and the last-refresh record (docs/semantics.md S9),
 * over a Hadoop catalog on disk.
 */
class TableStatementsTest {
    @TempDir Path dir;

    private Catalog catalog;

    private static final Schema ORDERS =
            new Schema(
                    Types.NestedField.required(1, "id", Types.IntegerType.get()),
                    Types.NestedField.optional(2, "status", Types.StringType.get(), "where"));

    private static final String PIPELINE =
            "SET name = shop;\n"
                    + "USE SCHEMA sales;\n"
                    + "CREATE OR REFRESH STREAMING TABLE orders (id INT NOT NULL, status STRING"
                    + " COMMENT 'where',\n"
                    + "  CONSTRAINT ok EXPECT (id > 0) ON VIOLATION DROP ROW)\n"
                    + "  COMMENT 'the orders' TBLPROPERTIES ('pipelines.reset.allowed' = 'false')\n"
                    + "  SCHEDULE EVERY 2 HOURS\n"
                    + "  FLOW AUTO CDC FROM STREAM read_files('in/cdc.jsonl', table => 'orders')\n"
                    + "  KEYS (id) SEQUENCE BY seq APPLY AS DELETE WHEN status = 'gone'\n"
                    + "  STORED AS SCD TYPE 2;\n"
                    + "CREATE OR REFRESH STREAMING TABLE audit (id INT, note STRING)\n"
                    + "  AS SELECT * FROM STREAM read_files('in/cdc.jsonl');\n";

    private static final TableIdentifier ORDERS_ID = TableIdentifier.of("sales", "orders");
    private static final TableIdentifier AUDIT_ID = TableIdentifier.of("sales", "audit");

    @BeforeEach
    void open() {
        catalog = CatalogSettings.localHadoop(dir.resolve("warehouse")).open();
    }

    @AfterEach
    void close() throws IOException {
        if (catalog instanceof Closeable c) {
            c.close();
        }
    }

    private SqlPipeline pipeline(String extra) {
        return SqlPipeline.compile(PIPELINE + extra, "p.sql", dir, "p");
    }

    private Table create(TableIdentifier id) {
        return catalog.createTable(id, ORDERS, PartitionSpec.unpartitioned());
    }

    /** Commits one (metadata-only) data file: one new snapshot. */
    private static void commitOne(Table t) {
        DataFile f =
                DataFiles.builder(t.spec())
                        .withPath(t.location() + "/data/" + System.nanoTime() + ".parquet")
                        .withFormat(FileFormat.PARQUET)
                        .withFileSizeInBytes(100)
                        .withRecordCount(1)
                        .build();
        t.newAppend().appendFile(f).commit();
    }

    @Test
    void aRefreshIsRecordedExactlyInTheTablesProperties() {
        Table t = create(ORDERS_ID);
        commitOne(t);
        Instant before = Instant.now();
        TableStatements.RefreshRecord r =
                TableStatements.RefreshRecord.start(catalog, List.of(ORDERS_ID, AUDIT_ID), true);
        commitOne(t);
        commitOne(t);
        r.succeeded(catalog, 42);
        Instant after = Instant.now();
        Map<String, String> p = catalog.loadTable(ORDERS_ID).properties();
        assertThat(Instant.parse(p.get(TableStatements.START))).isBetween(before, after);
        assertThat(Instant.parse(p.get(TableStatements.END)))
                .isBetween(Instant.parse(p.get(TableStatements.START)), after);
        assertThat(p)
                .containsEntry(TableStatements.FULL, "true")
                .containsEntry(TableStatements.RECORDS, "42")
                .containsEntry(TableStatements.VERSIONS, "2")
                .containsEntry(TableStatements.STATUS, "SUCCEEDED")
                .doesNotContainKey(TableStatements.ERROR);
        // a table of the refresh that does not exist at its end is not created
        assertThat(catalog.tableExists(AUDIT_ID)).isFalse();
        // the properties commit wrote no snapshot
        assertThat(catalog.loadTable(ORDERS_ID).snapshots()).hasSize(3);

        TableStatements.RefreshRecord failed =
                TableStatements.RefreshRecord.start(catalog, List.of(ORDERS_ID), false);
        commitOne(catalog.loadTable(ORDERS_ID));
        failed.failed(catalog, new IllegalStateException("boom", new IOException("disk is full")));
        assertThat(catalog.loadTable(ORDERS_ID).properties())
                .containsEntry(TableStatements.FULL, "false")
                .containsEntry(TableStatements.VERSIONS, "1")
                .containsEntry(TableStatements.STATUS, "FAILED")
                .containsEntry(
                        TableStatements.ERROR, "boom (cause: java.io.IOException: disk is full)")
                .doesNotContainKey(TableStatements.RECORDS);

        // nothing committed; then the record of a success removes the error
        TableStatements.RefreshRecord.start(catalog, List.of(ORDERS_ID), false)
                .succeeded(catalog, 0);
        assertThat(catalog.loadTable(ORDERS_ID).properties())
                .containsEntry(TableStatements.VERSIONS, "0")
                .containsEntry(TableStatements.RECORDS, "0")
                .containsEntry(TableStatements.STATUS, "SUCCEEDED")
                .doesNotContainKey(TableStatements.ERROR);
    }

    @Test
    void versionsOfATableCreatedOrRecreatedDuringTheRefreshAreAllItsSnapshots() {
        Table t = create(ORDERS_ID);
        commitOne(t);
        TableStatements.RefreshRecord r =
                TableStatements.RefreshRecord.start(catalog, List.of(ORDERS_ID, AUDIT_ID), false);
        catalog.dropTable(ORDERS_ID, true);
        Table again = create(ORDERS_ID);
        commitOne(again);
        Table audit = create(AUDIT_ID);
        commitOne(audit);
        commitOne(audit);
        commitOne(audit);
        r.succeeded(catalog, 7);
        assertThat(catalog.loadTable(ORDERS_ID).properties())
                .containsEntry(TableStatements.VERSIONS, "1");
        assertThat(catalog.loadTable(AUDIT_ID).properties())
                .containsEntry(TableStatements.VERSIONS, "3");
    }

    @Test
    void aLongErrorIsShortened() {
        String m = "x".repeat(3000);
        assertThat(TableStatements.message(new RuntimeException(m)))
                .hasSize(TableStatements.MAX_ERROR_CHARS)
                .endsWith("xx...");
        assertThat(TableStatements.message(new RuntimeException()))
                .isEqualTo("java.lang.RuntimeException");
    }

    @Test
    void describeExtendedPrintsDefinitionScheduleAndLastRefresh() {
        SqlPipeline p =
                pipeline("DESCRIBE TABLE EXTENDED orders;\nDESCRIBE audit;\nDESC EXTENDED audit;");
        assertThat(p.describes()).hasSize(3);
        Table t = create(ORDERS_ID);
        t.updateProperties()
                .set(TableStatements.START, "2026-12-03T07:00:00Z")
                .set(TableStatements.END, "2026-12-03T07:00:05.5Z")
                .set(TableStatements.FULL, "false")
                .set(TableStatements.RECORDS, "1000")
                .set(TableStatements.VERSIONS, "3")
                .set(TableStatements.STATUS, "SUCCEEDED")
                .commit();
        assertThat(TableStatements.describe(p, p.describes().get(0), catalog, ORDERS_ID))
                .containsExactly(
                        "Table sales.orders",
                        "Columns:",
                        "  id int NOT NULL",
                        "  status string COMMENT 'where'",
                        "Definition: p.sql:3:1",
                        "  flow: orders",
                        "  source: read_files "
                                + dir.resolve("in/cdc.jsonl")
                                + " (format debezium-json, table orders)",
                        "  kind: AUTO CDC",
                        "  KEYS: id",
                        "  SEQUENCE BY: seq",
                        "  SCD type: 2",
                        "  COLUMNS: *",
                        "  APPLY AS DELETE WHEN: status = 'gone'",
                        "  expectation: CONSTRAINT ok EXPECT (id > 0) ON VIOLATION DROP ROW",
                        "  COMMENT: the orders",
                        "  TBLPROPERTIES pipelines.reset.allowed = false",
                        "  on-schema-change: fail",
                        "  on-invalid-record: quarantine",
                        "Schedule: EVERY 2 HOURS",
                        "Last refresh:",
                        "  start: 2026-12-03T07:00:00Z",
                        "  end: 2026-12-03T07:00:05.5Z",
                        "  full: false",
                        "  records: 1000",
                        "  versions written: 3",
                        "  status: SUCCEEDED",
                        "  error: -");
        // not created yet: the declared columns; without EXTENDED nothing else
        assertThat(TableStatements.describe(p, p.describes().get(1), catalog, AUDIT_ID))
                .containsExactly(
                        "Table sales.audit (not created yet: declared columns)",
                        "Columns:",
                        "  id INT",
                        "  note STRING");
        assertThat(TableStatements.describe(p, p.describes().get(2), catalog, AUDIT_ID))
                .containsExactly(
                        "Table sales.audit (not created yet: declared columns)",
                        "Columns:",
                        "  id INT",
                        "  note STRING",
                        "Definition: p.sql:10:1",
                        "  flow: audit",
                        "  source: read_files "
                                + dir.resolve("in/cdc.jsonl")
                                + " (format debezium-json, table audit)",
                        "  kind: append-only (AS SELECT * FROM STREAM ...)",
                        "  on-schema-change: fail",
                        "  on-invalid-record: quarantine",
                        "Schedule: none (refreshed when the file is run)",
                        "Last refresh: none recorded");
    }

    /** S1, S9: DESCRIBE EXTENDED shows an append flow's select list and WHERE. */
    @Test
    void describeShowsASelectListAndWhere() {
        SqlPipeline p =
                SqlPipeline.compile(
                        "USE SCHEMA sales;\n"
                                + "CREATE STREAMING TABLE big AS SELECT id, upper(note) AS note\n"
                                + "  FROM STREAM raw WHERE id > 1;\n"
                                + "DESCRIBE TABLE EXTENDED big;",
                        "p.sql",
                        dir,
                        "p");
        assertThat(
                        TableStatements.describe(
                                p,
                                p.describes().get(0),
                                catalog,
                                TableIdentifier.of("sales", "big")))
                .contains(
                        "  kind: append-only (AS SELECT list FROM STREAM ... [WHERE ...])",
                        "  SELECT: id, upper(note) AS note",
                        "  WHERE: id > 1");
    }

    /**
     * S9: a continuous job ({@code ingest --cluster}, {@code deploy --flows}) records no refresh;
     * DESCRIBE EXTENDED then names the last commit of a Flink job (from the snapshot summary), when
     * it is newer than the recorded refresh (or none is recorded), and not otherwise.
     */
    @Test
    void describeExtendedNamesTheLastCommitOfAContinuousJob() {
        SqlPipeline p = pipeline("DESCRIBE TABLE EXTENDED other.t;");
        TableIdentifier other = TableIdentifier.of("other", "t");
        Table t =
                catalog.createTable(
                        other,
                        new Schema(Types.NestedField.optional(1, "a", Types.LongType.get())),
                        PartitionSpec.unpartitioned(),
                        Map.of("format-version", "2"));
        commitOne(t);
        t.newAppend()
                .appendFile(
                        DataFiles.builder(t.spec())
                                .withPath(t.location() + "/data/job.parquet")
                                .withFormat(FileFormat.PARQUET)
                                .withFileSizeInBytes(100)
                                .withRecordCount(1)
                                .build())
                .set("flink.job-id", "0f1e2d3c4b5a69788796a5b4c3d2e1f0")
                .set("flink.max-committed-checkpoint-id", "12")
                .commit();
        t.refresh();
        String at = Instant.ofEpochMilli(t.currentSnapshot().timestampMillis()).toString();
        List<String> base =
                List.of(
                        "Table other.t",
                        "Columns:",
                        "  a long",
                        "Definition: none in this file (not a streaming table of it)",
                        "Schedule: none (refreshed when the file is run)",
                        "Last refresh: none recorded");
        List<String> expected = new ArrayList<>(base);
        expected.add(
                "Last commit by a Flink job: version 2 at "
                        + at
                        + " (job 0f1e2d3c4b5a69788796a5b4c3d2e1f0, checkpoint 12); a continuous"
                        + " job (ingest --cluster, deploy --flows) records no refresh");
        assertThat(TableStatements.describe(p, p.describes().get(0), catalog, other))
                .containsExactlyElementsOf(expected);
        // a refresh recorded after that commit: its record only
        TableStatements.RefreshRecord.start(catalog, List.of(other), false).succeeded(catalog, 0);
        List<String> described = TableStatements.describe(p, p.describes().get(0), catalog, other);
        assertThat(described).hasSize(base.size() + 7);
        assertThat(described.get(base.size() - 1)).isEqualTo("Last refresh:");
        assertThat(described.get(described.size() - 1)).isEqualTo("  error: -");
    }

    @Test
    void describeOfAFailedRefreshAndOfATableOutsideTheFile() {
        SqlPipeline p = pipeline("DESCRIBE TABLE EXTENDED other.t;\nDESCRIBE TABLE nope;");
        TableIdentifier other = TableIdentifier.of("other", "t");
        catalog.createTable(
                other,
                new Schema(Types.NestedField.optional(1, "a", Types.LongType.get())),
                PartitionSpec.unpartitioned());
        TableStatements.RefreshRecord.start(catalog, List.of(other), true)
                .failed(catalog, new IllegalArgumentException("p.sql:3:1: INVALID_FLOW: bad"));
        Map<String, String> props = catalog.loadTable(other).properties();
        assertThat(TableStatements.describe(p, p.describes().get(0), catalog, other))
                .containsExactly(
                        "Table other.t",
                        "Columns:",
                        "  a long",
                        "Definition: none in this file (not a streaming table of it)",
                        "Schedule: none (refreshed when the file is run)",
                        "Last refresh:",
                        "  start: " + props.get(TableStatements.START),
                        "  end: " + props.get(TableStatements.END),
                        "  full: true",
                        "  records: -",
                        "  versions written: 0",
                        "  status: FAILED",
                        "  error: p.sql:3:1: INVALID_FLOW: bad");
        assertThatThrownBy(
                        () ->
                                TableStatements.describe(
                                        p,
                                        p.describes().get(1),
                                        catalog,
                                        TableIdentifier.of("sales", "nope")))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:13:16: UNKNOWN_TABLE: DESCRIBE TABLE nope: the catalog has no table"
                                + " sales.nope and the file declares no streaming table of that"
                                + " name");
    }

    @Test
    void identifiersAreQualifiedPlannedOrInTheFilesNamespace() {
        Map<String, TableIdentifier> planned = Map.of("orders", TableIdentifier.of("db", "orders"));
        assertThat(TableStatements.identifier("Orders", planned, "sales"))
                .isEqualTo(TableIdentifier.of("db", "orders"));
        assertThat(TableStatements.identifier("a.b.t", planned, "sales"))
                .isEqualTo(TableIdentifier.of(Namespace.of("a", "b"), "t"));
        assertThat(TableStatements.identifier("t", planned, "sales"))
                .isEqualTo(TableIdentifier.of("sales", "t"));
    }

    private Path checkpoints() {
        return dir.resolve("warehouse/.changeflow/checkpoints");
    }

    private List<TableStatements.DropPlan> plan(SqlPipeline p) throws IOException {
        return TableStatements.planDrops(
                p, Map.of("orders", ORDERS_ID, "audit", AUDIT_ID), "sales", catalog, checkpoints());
    }

    @Test
    void dropTableOfAMissingTableFailsUnlessIfExists() throws IOException {
        SqlPipeline p = pipeline("DROP TABLE IF EXISTS audit;\n  DROP TABLE orders;");
        assertThatThrownBy(() -> plan(p))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:13:14: TABLE_NOT_FOUND: DROP TABLE orders: the catalog has no table"
                                + " sales.orders (DROP TABLE IF EXISTS orders drops it only when it"
                                + " exists)")
                .satisfies(
                        e ->
                                assertThat(((SqlException) e).code())
                                        .isEqualTo(SqlException.Code.TABLE_NOT_FOUND));
        SqlPipeline only = pipeline("DROP TABLE IF EXISTS audit;");
        List<TableStatements.DropPlan> plans = plan(only);
        assertThat(TableStatements.drop(plans, catalog))
                .containsExactly("DROP TABLE audit: no such table, nothing dropped (IF EXISTS)");
    }

    @Test
    void dropTableDropsTheTableAndTheStateOfTheJobsWritingIt() throws IOException {
        for (String job :
                List.of(
                        "shop",
                        "shop-refresh-orders",
                        "shop-refresh-audit",
                        "shop-refresh-audit-orders")) {
            Files.createDirectories(checkpoints().resolve(job).resolve("chk-1"));
        }
        Files.createDirectories(checkpoints().resolve("other-job"));
        commitOne(create(ORDERS_ID));
        create(AUDIT_ID);

        // orders shares the whole pipeline's state with audit, which stays
        SqlPipeline one = pipeline("DROP TABLE orders;");
        assertThatThrownBy(() -> plan(one))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "p.sql:12:1: DROP_SHARES_STATE: DROP TABLE orders: its flow's saved state"
                                + " (job 'shop', "
                                + checkpoints().resolve("shop")
                                + ") also holds the flows of orders, audit, and table sales.audit"
                                + " stays; drop those tables too in the same file (DROP TABLE"
                                + " audit;), or empty orders with REFRESH STREAMING TABLE orders"
                                + " FULL instead");
        assertThat(catalog.tableExists(ORDERS_ID)).isTrue();

        // audit gone: orders' jobs go with it, audit's own refresh job stays
        catalog.dropTable(AUDIT_ID, true);
        List<TableStatements.DropPlan> plans = plan(one);
        assertThat(TableStatements.drop(plans, catalog))
                .containsExactly(
                        "DROP TABLE orders: dropped sales.orders; deleted the saved state of job shop;"
                                + " deleted the saved state of job shop-refresh-audit-orders;"
                                + " deleted the saved state of job shop-refresh-orders");
        assertThat(catalog.tableExists(ORDERS_ID)).isFalse();
        List<String> left = new ArrayList<>();
        try (var s = Files.list(checkpoints())) {
            s.forEach(x -> left.add(x.getFileName().toString()));
        }
        assertThat(left).containsExactlyInAnyOrder("shop-refresh-audit", "other-job");
    }

    @Test
    void droppingEveryTableOfAJobDropsItsState() throws IOException {
        Files.createDirectories(checkpoints().resolve("shop").resolve("chk-1"));
        create(ORDERS_ID);
        create(AUDIT_ID);
        SqlPipeline both = pipeline("DROP TABLE orders;\nDROP TABLE LIVE.audit;");
        assertThat(TableStatements.drop(plan(both), catalog))
                .containsExactly(
                        "DROP TABLE orders: dropped sales.orders; deleted the saved state of job"
                                + " shop",
                        "DROP TABLE audit: dropped sales.audit");
        assertThat(catalog.tableExists(ORDERS_ID)).isFalse();
        assertThat(catalog.tableExists(AUDIT_ID)).isFalse();
        assertThat(checkpoints().resolve("shop")).doesNotExist();
    }

    @Test
    void aFileOfDropAndDescribeStatementsAloneCompiles() {
        SqlPipeline p =
                SqlPipeline.compile(
                        "USE SCHEMA sales; DROP TABLE IF EXISTS t; DESCRIBE TABLE u;",
                        "q.sql",
                        dir,
                        "q");
        assertThat(p.config().flows).isEmpty();
        assertThat(p.drops()).hasSize(1);
        assertThat(p.describes()).hasSize(1);
        assertThatThrownBy(() -> SqlPipeline.compile("USE SCHEMA sales;", "q.sql", dir, "q"))
                .isInstanceOf(SqlException.class)
                .satisfies(
                        e ->
                                assertThat(((SqlException) e).code())
                                        .isEqualTo(SqlException.Code.INVALID_FLOW));
    }

    @Test
    void describeExtendedOfASnapshotTableNamesItsKindSourceKeysAndHistory() {
        SqlPipeline p =
                pipeline(
                        "CREATE OR REFRESH STREAMING TABLE cities (id BIGINT NOT NULL, city STRING)\n"
                                + "  COMMENT 'exports' SCHEDULE EVERY 1 DAY\n"
                                + "  FLOW AUTO CDC FROM SNAPSHOT read_files('snaps', format => 'csv')\n"
                                + "  KEYS (id) STORED AS SCD TYPE 2 TRACK HISTORY ON (city);\n"
                                + "CREATE OR REFRESH STREAMING TABLE dim;\n"
                                + "APPLY CHANGES INTO dim FROM SNAPSHOT sales.orders KEYS (id);\n"
                                + "DESCRIBE TABLE EXTENDED cities;\n"
                                + "DESCRIBE TABLE EXTENDED dim;");
        TableIdentifier cities = TableIdentifier.of("sales", "cities");
        assertThat(p.snapshotTarget(p.snapshotTable("cities"))).isEqualTo(cities);
        assertThat(TableStatements.describe(p, p.describes().get(0), catalog, cities))
                .containsExactly(
                        "Table sales.cities (not created yet: declared columns)",
                        "Columns:",
                        "  id BIGINT NOT NULL",
                        "  city STRING",
                        "Definition: p.sql:12:1",
                        "  flow: cities",
                        "  kind: AUTO CDC FROM SNAPSHOT",
                        "  source: snapshot files in "
                                + dir.resolve("snaps")
                                + " (read_files, FROM SNAPSHOT)",
                        "  KEYS: id",
                        "  SCD type: 2",
                        "  COLUMNS: *",
                        "  TRACK HISTORY ON: (city)",
                        "  COMMENT: exports",
                        "Schedule: EVERY 1 DAY",
                        "Last refresh: none recorded");
        TableIdentifier dim = TableIdentifier.of("sales", "dim");
        assertThat(TableStatements.describe(p, p.describes().get(1), catalog, dim))
                .containsExactly(
                        "Table sales.dim (not created yet: declared columns)",
                        "Columns:",
                        "  (from the source's records, when first refreshed)",
                        "Definition: p.sql:16:1",
                        "  flow: dim",
                        "  kind: AUTO CDC FROM SNAPSHOT",
                        "  source: versions of table sales.orders (FROM SNAPSHOT)",
                        "  KEYS: id",
                        "  SCD type: 1",
                        "  COLUMNS: *",
                        "Schedule: none (refreshed when the file is run)",
                        "Last refresh: none recorded");
    }
}

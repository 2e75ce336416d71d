package dev.changeflow.e2e;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The vendor's own statement examples (issue #13 item 5), run with names and paths adapted and
 * checked row for row: the AUTO CDC examples of the standalone streaming-table page (SCD type 1 and
 * SCD type 2 over {@code stream(cdc_data.users)}), the vendor's canonical users example as SQL for
 * SCD1, SCD1 + TRUNCATE, SCD2 and SCD2 TRACK HISTORY (docs/semantics.md A3, A4), and the pipeline
 * example of the change-data-feed page: {@code APPLY CHANGES INTO LIVE.silver FROM
 * STREAM(LIVE.bronze)} (SCD1) and {@code APPLY CHANGES INTO LIVE.dim FROM STREAM(LIVE.silver)}
 * (SCD2) refreshed in order, twice (S7).
 *
 * <p>{@code cdc_data.users} is an Iceberg table of change records (appended rows, no identifier
 * fields), as on the platform: {@code STREAM(t)} reads its change feed, whose rows are all {@code
 * insert}s, so the flows see exactly the appended records. The records arrive out of sequence order
 * (sequence 6 before 5), as in the vendor's example.
 */
class VendorExamplesITCase {
    @TempDir Path tmp;

    private static final Schema USERS =
            new Schema(
                    Types.NestedField.optional(1, "userId", Types.IntegerType.get()),
                    Types.NestedField.optional(2, "name", Types.StringType.get()),
                    Types.NestedField.optional(3, "city", Types.StringType.get()),
                    Types.NestedField.optional(4, "operation", Types.StringType.get()),
                    Types.NestedField.optional(5, "sequenceNum", Types.IntegerType.get()));

    /** The vendor's canonical change records, in arrival order. */
    private static final Object[][] USER_RECORDS = {
        {124, "Raul", "Oaxaca", "INSERT", 1},
        {123, "Isabel", "Monterrey", "INSERT", 1},
        {125, "Mercedes", "Tijuana", "INSERT", 2},
        {126, "Lily", "Cancun", "INSERT", 2},
        {123, null, null, "DELETE", 6},
        {125, "Mercedes", "Guadalajara", "UPDATE", 6},
        {125, "Mercedes", "Mexicali", "UPDATE", 5},
        {123, "Isabel", "Chihuahua", "UPDATE", 5}
    };

    /**
     * The seed's two AUTO CDC statements (targets renamed, one file) and the two of the users
     * example.
     */
    private static final String USERS_PIPELINE =
            "USE SCHEMA cdc_data;\n"
                    // seed 003, SCD type 1: no delete clause, so the DELETE record is an upsert
                    + "CREATE OR REFRESH STREAMING TABLE target\n"
                    + "  FLOW AUTO CDC\n"
                    + "  FROM stream(cdc_data.users)\n"
                    + "  KEYS (userId)\n"
                    + "  SEQUENCE BY sequenceNum\n"
                    + "  STORED AS SCD TYPE 1;\n"
                    // seed 003, SCD type 2
                    + "CREATE OR REFRESH STREAMING TABLE target_history\n"
                    + "  FLOW AUTO CDC\n"
                    + "  FROM stream(cdc_data.users)\n"
                    + "  KEYS (userId)\n"
                    + "  APPLY AS DELETE WHEN operation = \"DELETE\"\n"
                    + "  SEQUENCE BY sequenceNum\n"
                    + "  COLUMNS * EXCEPT (operation, sequenceNum)\n"
                    + "  STORED AS SCD TYPE 2;\n"
                    // the users example, SCD type 2 tracking history on every column but city
                    + "CREATE OR REFRESH STREAMING TABLE target_tracked\n"
                    + "  FLOW AUTO CDC\n"
                    + "  FROM stream(cdc_data.users)\n"
                    + "  KEYS (userId)\n"
                    + "  APPLY AS DELETE WHEN operation = \"DELETE\"\n"
                    + "  SEQUENCE BY sequenceNum\n"
                    + "  COLUMNS * EXCEPT (operation, sequenceNum)\n"
                    + "  STORED AS SCD TYPE 2\n"
                    + "  TRACK HISTORY ON * EXCEPT (city);\n"
                    // the users example with a TRUNCATE record, SCD type 1
                    + "CREATE OR REFRESH STREAMING TABLE target_truncated\n"
                    + "  FLOW AUTO CDC\n"
                    + "  FROM stream(cdc_data.users_truncated)\n"
                    + "  KEYS (userId)\n"
                    + "  APPLY AS DELETE WHEN operation = \"DELETE\"\n"
                    + "  APPLY AS TRUNCATE WHEN operation = \"TRUNCATE\"\n"
                    + "  SEQUENCE BY sequenceNum\n"
                    + "  COLUMNS * EXCEPT (operation, sequenceNum)\n"
                    + "  STORED AS SCD TYPE 1;\n";

    @Test
    void theUsersExampleAsSqlGivesTheVendorsTables() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("cdc_data"));
        List<Object[]> truncated = new ArrayList<>(List.of(USER_RECORDS));
        truncated.add(new Object[] {null, null, null, "TRUNCATE", 3});
        append(createUsers(catalog, "users"), List.of(USER_RECORDS));
        append(createUsers(catalog, "users_truncated"), truncated);

        Path file = tmp.resolve("users.sql");
        Files.writeString(file, USERS_PIPELINE);
        assertThat(Main.execute("run", "--warehouse", warehouse.toString(), file.toString()))
                .isZero();

        // userId, name, city, operation, sequenceNum
        assertThat(rows(catalog, "target"))
                .containsExactlyInAnyOrder(
                        "123,,,DELETE,6",
                        "124,Raul,Oaxaca,INSERT,1",
                        "125,Mercedes,Guadalajara,UPDATE,6",
                        "126,Lily,Cancun,INSERT,2");
        // userId, name, city, __START_AT, __END_AT
        assertThat(rows(catalog, "target_history"))
                .containsExactlyInAnyOrder(
                        "123,Isabel,Monterrey,1,5",
                        "123,Isabel,Chihuahua,5,6",
                        "124,Raul,Oaxaca,1,",
                        "125,Mercedes,Tijuana,2,5",
                        "125,Mercedes,Mexicali,5,6",
                        "125,Mercedes,Guadalajara,6,",
                        "126,Lily,Cancun,2,");
        assertThat(rows(catalog, "target_tracked"))
                .containsExactlyInAnyOrder(
                        "123,Isabel,Chihuahua,1,6",
                        "124,Raul,Oaxaca,1,",
                        "125,Mercedes,Guadalajara,2,",
                        "126,Lily,Cancun,2,");
        // the truncate at 3 removes every row applied below 3; later records apply after it
        assertThat(rows(catalog, "target_truncated")).containsExactly("125,Mercedes,Guadalajara");
    }

    private static final Schema BRONZE =
            new Schema(
                    Types.NestedField.optional(1, "cliente_id", Types.LongType.get()),
                    Types.NestedField.optional(2, "status", Types.StringType.get()),
                    Types.NestedField.optional(3, "updated_at", Types.LongType.get()));

    /** The change-data-feed page's pipeline, in file order: Silver first, then the dimension. */
    private static final String CDF_PIPELINE =
            "USE SCHEMA loja;\n"
                    + "CREATE OR REFRESH STREAMING TABLE silver_clientes;\n"
                    + "CREATE OR REFRESH STREAMING TABLE dim_cliente;\n"
                    + "-- SCD type 1 via the change feed\n"
                    + "APPLY CHANGES INTO LIVE.silver_clientes\n"
                    + "FROM STREAM(LIVE.bronze_clientes)\n"
                    + "KEYS (cliente_id)\n"
                    + "SEQUENCE BY updated_at;\n"
                    + "-- SCD type 2 via the change feed\n"
                    + "APPLY CHANGES INTO LIVE.dim_cliente\n"
                    + "FROM STREAM(LIVE.silver_clientes)\n"
                    + "KEYS (cliente_id)\n"
                    + "SEQUENCE BY updated_at\n"
                    + "STORED AS SCD TYPE 2;\n"
                    + "REFRESH STREAMING TABLE silver_clientes;\n"
                    + "REFRESH STREAMING TABLE dim_cliente;\n";

    @Test
    void theChangeFeedPipelineExampleBuildsSilverThenItsScd2DimensionTwice() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("loja"));
        Table bronze =
                catalog.createTable(
                        TableIdentifier.of("loja", "bronze_clientes"),
                        BRONZE,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        // client 1 arrives late-first (20 before 10)
        append(
                bronze,
                List.of(new Object[][] {{1L, "gold", 20L}, {1L, "new", 10L}, {2L, "new", 10L}}));
        Path file = tmp.resolve("clientes.sql");
        Files.writeString(file, CDF_PIPELINE);
        String w = warehouse.toString();

        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        // cliente_id, status, updated_at
        assertThat(rows(catalog, "loja", "silver_clientes"))
                .containsExactlyInAnyOrder("1,gold,20", "2,new,10");
        // cliente_id, status, updated_at, __START_AT, __END_AT (Silver's first snapshot)
        assertThat(rows(catalog, "loja", "dim_cliente"))
                .containsExactlyInAnyOrder("1,gold,20,20,", "2,new,10,10,");

        // client 2 changes twice (the older record later), client 3 is new
        append(
                bronze,
                List.of(
                        new Object[][] {
                            {2L, "silver", 40L}, {2L, "bronze", 30L}, {3L, "new", 35L}
                        }));
        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        assertThat(rows(catalog, "loja", "silver_clientes"))
                .containsExactlyInAnyOrder("1,gold,20", "2,silver,40", "3,new,35");
        // Silver's change feed carries 2's net change (new@10 -> silver@40) in one version
        assertThat(rows(catalog, "loja", "dim_cliente"))
                .containsExactlyInAnyOrder(
                        "1,gold,20,20,", "2,new,10,10,40", "2,silver,40,40,", "3,new,35,35,");
    }

    private static final Schema RAW_DATA =
            new Schema(
                    Types.NestedField.optional(1, "product", Types.StringType.get()),
                    Types.NestedField.optional(2, "price", Types.DoubleType.get()),
                    Types.NestedField.optional(3, "store", Types.StringType.get()));

    /**
     * Seed 003's first statement (S1, S7): {@code sales} takes columns of the rows appended to
     * Iceberg table {@code raw_data}; run twice with rows appended in between, each row lands once;
     * a version of {@code raw_data} that deletes rows then fails the flow with {@code
     * SOURCE_ROWS_CHANGED}, naming the table and the version, and {@code sales} keeps its rows.
     */
    @Test
    void theSeedsSelectListOverATableTakesItsAppendedRowsOnce() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("shop"));
        Table raw =
                catalog.createTable(
                        TableIdentifier.of("shop", "raw_data"),
                        RAW_DATA,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        append(raw, List.of(new Object[][] {{"tea", 2.5, "north"}, {"cake", 4.0, "south"}}));
        Path file = tmp.resolve("sales.sql");
        Files.writeString(
                file,
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE sales\n"
                        + "  SCHEDULE EVERY 1 hour\n"
                        + "  AS SELECT product, price FROM STREAM raw_data;\n");
        String w = warehouse.toString();

        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        // product, price: the select list's columns, no store
        assertThat(rows(catalog, "shop", "sales")).containsExactlyInAnyOrder("tea,2.5", "cake,4.0");

        DataFile scones = append(raw, List.of(new Object[][] {{"scone", 3.0, "north"}}));
        append(raw, List.of(new Object[][] {{"tea", 2.75, "south"}}));
        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        assertThat(rows(catalog, "shop", "sales"))
                .containsExactlyInAnyOrder("tea,2.5", "cake,4.0", "scone,3.0", "tea,2.75");

        // version 4 of raw_data (three appends before) deletes the scone row: an append flow cannot
        // apply it
        raw.newDelete().deleteFile(scones).commit();
        raw.refresh();
        CapturedOutput.MainRun run = CapturedOutput.main("run", "--warehouse", w, file.toString());
        String message = run.stderr();
        assertThat(run.code()).as(message).isNotZero();
        assertThat(message)
                .contains(
                        "SOURCE_ROWS_CHANGED: flow 'sales' appends the rows added to table"
                                + " shop.raw_data, and version 4 of shop.raw_data changes rows that"
                                + " were there (a 'delete' change)")
                .contains("Fix: REFRESH STREAMING TABLE sales FULL, or run --full-refresh sales");
        assertThat(rows(catalog, "shop", "sales"))
                .containsExactlyInAnyOrder("tea,2.5", "cake,4.0", "scone,3.0", "tea,2.75");

        // the documented way out: a full refresh reads raw_data's current rows
        assertThat(
                        Main.execute(
                                "run",
                                "--warehouse",
                                w,
                                "--full-refresh",
                                "sales",
                                file.toString()))
                .isZero();
        assertThat(rows(catalog, "shop", "sales"))
                .containsExactlyInAnyOrder("tea,2.5", "cake,4.0", "tea,2.75");
    }

    /**
     * S1: a select list with a function, a cast of an expression and a WHERE over plain JSON rows
     * of {@code read_files}, evaluated by Flink: the table has the select list's columns and the
     * rows the predicate keeps.
     */
    @Test
    void aSelectListWithACastAndAWhereOverJsonFiles() throws Exception {
        Path sales = Files.createDirectories(tmp.resolve("in/sales"));
        Files.writeString(
                sales.resolve("part-1.json"),
                "{\"product\": \"tea\", \"price\": 2.5, \"qty\": 3}\n"
                        + "{\"product\": \"cake\", \"price\": 4.0, \"qty\": 1}\n"
                        + "{\"product\": \"scone\", \"price\": 1.25, \"qty\": 2}\n");
        Path file = tmp.resolve("in/big_sales.sql");
        Files.writeString(
                file,
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE big_sales\n"
                        + "  AS SELECT upper(product) AS product,\n"
                        + "     CAST(price * qty AS DECIMAL(10, 2)) AS total\n"
                        + "  FROM STREAM read_files('sales', format => \"json\")\n"
                        + "  WHERE qty > 1;\n");
        Path warehouse = tmp.resolve("warehouse");
        assertThat(Main.execute("run", "--warehouse", warehouse.toString(), file.toString()))
                .isZero();
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table t = catalog.loadTable(TableIdentifier.of("shop", "big_sales"));
        assertThat(t.schema().columns())
                .extracting(c -> c.name() + " " + c.type())
                .containsExactly("product string", "total decimal(10, 2)");
        assertThat(rows(catalog, "shop", "big_sales"))
                .containsExactlyInAnyOrder("TEA,7.50", "SCONE,2.50");
    }

    /**
     * S2: the seed's {@code read_files(..., includeExistingFiles => false)} (with {@code format =>
     * "json"}: the seed's files are plain JSON rows, and changeflow reads Debezium records unless
     * told) — the file present at the first run is never read, files added later are read once
     * each, on the next run; a full refresh is a new first start.
     */
    @Test
    void theSeedsIncludeExistingFilesFalseReadsOnlyFilesAddedAfterTheFirstRun() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("in/files"));
        Files.writeString(
                data.resolve("day-1.json"),
                "{\"product\": \"tea\", \"qty\": 3}\n{\"product\": \"cake\", \"qty\": 1}\n");
        Path file = tmp.resolve("in/sales.sql");
        Files.writeString(
                file,
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE sales\n"
                        + "  SCHEDULE EVERY 1 hour\n"
                        + "  AS SELECT *\n"
                        + "  FROM STREAM read_files(\n"
                        + "    'files',\n"
                        + "    format => \"json\",\n"
                        + "    includeExistingFiles => false\n"
                        + "  );\n");
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();

        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        // the table exists, with the columns of the skipped file, and no row
        assertThat(catalog.loadTable(TableIdentifier.of("shop", "sales")).schema().columns())
                .extracting(c -> c.name() + " " + c.type())
                .containsExactly("product string", "qty long");
        assertThat(rows(catalog, "shop", "sales")).isEmpty();

        Files.writeString(data.resolve("day-2.json"), "{\"product\": \"scone\", \"qty\": 2}\n");
        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        assertThat(rows(catalog, "shop", "sales")).containsExactly("scone,2");

        Files.writeString(data.resolve("day-3.json"), "{\"product\": \"jam\", \"qty\": 5}\n");
        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        assertThat(rows(catalog, "shop", "sales")).containsExactlyInAnyOrder("scone,2", "jam,5");

        // REFRESH ... FULL drops the saved state: a new first start, which empties the table and
        // skips the three files present now (the vendor evaluates the option at a stream's first
        // start)
        assertThat(
                        Main.execute(
                                "run",
                                "--warehouse",
                                w,
                                "--full-refresh",
                                "sales",
                                file.toString()))
                .isZero();
        assertThat(rows(catalog, "shop", "sales")).isEmpty();
    }

    @Test
    void theSeedsStatementsChangeflowDoesNotRunYetAreRefusedNamingTheClause() throws Exception {
        SoftAssertions softly = new SoftAssertions();
        assertRefused(
                softly,
                "CREATE OR REFRESH STREAMING TABLE sales\n"
                        + "  SCHEDULE EVERY 1 hour\n"
                        + "  AS SELECT *\n"
                        + "  FROM STREAM read_files(\n"
                        + "    'abfss://myContainer@myStorageAccount.dfs.core.windows.net/analysis/*/*/*.json',\n"
                        + "    format => \"json\"\n"
                        + "  );\n",
                // object-store paths are read through Flink's file systems now (issue #13): an
                // abfss:// path without the Azure plugin is refused naming the plugin to add
                "sales.sql:4:15: SOURCE_NOT_FOUND: read_files path abfss://myContainer@myStorageAccount"
                        + ".dfs.core.windows.net/analysis/*/*/*.json: no Flink file system for scheme"
                        + " 'abfss' of abfss://myContainer@myStorageAccount.dfs.core.windows.net/analysis:"
                        + " add the Flink file-system plugin flink-azure-fs-hadoop");
        assertRefused(
                softly,
                "CREATE OR REFRESH STREAMING TABLE payments_current\n"
                        + "FLOW REPLACE USING (payment_id) SEQUENCE BY payment_date BY NAME\n"
                        + "SELECT payment_id, booking_id, status, payment_date\n"
                        + "FROM STREAM(samples.wanderbricks.payments);\n",
                "sales.sql:3:8: UNSUPPORTED_STATEMENT: not supported by changeflow yet: a query that"
                        + " selects columns");
        softly.assertAll();
    }

    /**
     * Runs {@code sql} with {@code --dry-run}: exit 2, stderr holding {@code prefix}, no warehouse.
     */
    private void assertRefused(SoftAssertions softly, String sql, String prefix) throws Exception {
        Path file = tmp.resolve("sales.sql");
        Files.writeString(file, sql);
        Path warehouse = tmp.resolve("refused-warehouse");
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "run", "--warehouse", warehouse.toString(), "--dry-run", file.toString());
        String message = run.stderr();
        softly.assertThat(run.code()).as(message).isEqualTo(2);
        softly.assertThat(message).as("refusal of:%n%s", sql).contains(prefix);
        softly.assertThat(warehouse).doesNotExist();
    }

    private static Table createUsers(Catalog catalog, String name) {
        return catalog.createTable(
                TableIdentifier.of("cdc_data", name),
                USERS,
                PartitionSpec.unpartitioned(),
                Map.of(TableProperties.FORMAT_VERSION, "2"));
    }

    /** One appended version of {@code table}: a data file of {@code records} (column values). */
    private static DataFile append(Table table, List<Object[]> records) {
        List<Record> rows = new ArrayList<>();
        for (Object[] values : records) {
            GenericRecord r = GenericRecord.create(table.schema());
            for (int i = 0; i < values.length; i++) {
                r.set(i, values[i]);
            }
            rows.add(r);
        }
        DataFile file = IcebergWrites.dataFile(table, rows);
        table.newAppend().appendFile(file).commit();
        table.refresh();
        return file;
    }

    private static List<String> rows(Catalog catalog, String table) {
        return rows(catalog, "cdc_data", table);
    }

    private static List<String> rows(Catalog catalog, String namespace, String table) {
        return TableRows.toCsvLines(catalog.loadTable(TableIdentifier.of(namespace, table)));
    }
}

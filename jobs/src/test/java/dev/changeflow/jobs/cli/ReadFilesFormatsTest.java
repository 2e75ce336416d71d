package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code bin/changeflow run pipeline.sql} over {@code read_files} with {@code schemaHints}, {@code
 * format => 'csv'}, {@code format => 'parquet'} and {@code maxFilesPerTrigger} (docs/semantics.md
 * S2): real runs on the MiniCluster into a Hadoop catalog on disk, exact rows and quarantine rows.
 */
class ReadFilesFormatsTest {
    @TempDir Path dir;

    /**
     * S2: schemaHints type the hinted plain-JSON columns (here a DECIMAL and a TIMESTAMP the
     * records carry as strings), for the AUTO CDC flow and the append flow alike; a value that does
     * not fit its hint is quarantined with the reason, the other rows are written.
     */
    @Test
    void schemaHintsTypeTheHintedColumnsAndAValueNotFittingItsHintIsQuarantined() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(
                dir.resolve("in/a.json"),
                "{\"id\": 1, \"amount\": \"12.50\", \"ts\": \"2024-01-02 03:04:05\", \"seq\": 1}\n"
                        + "{\"id\": 2, \"amount\": 7, \"ts\": \"2024-01-02T05:00:00\", \"seq\": 1}\n"
                        + "{\"id\": 1, \"amount\": \"13.75\", \"ts\": \"2024-01-03 00:00:00\","
                        + " \"seq\": 2}\n"
                        + "{\"id\": 3, \"amount\": \"12.345\", \"ts\": \"2024-01-03 00:00:00\","
                        + " \"seq\": 1}\n");
        String source =
                "read_files('in/', format => 'json', table => 'orders',"
                        + " schemaHints => 'amount DECIMAL(10,2), ts TIMESTAMP_NTZ')";
        // plain rows name no table: a job reads one plain-row flow (S2), so one file per flow
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE orders FLOW AUTO CDC FROM STREAM "
                        + source
                        + "\n  KEYS (id) SEQUENCE BY seq STORED AS SCD TYPE 1;\n",
                "CREATE OR REFRESH STREAMING TABLE order_log AS SELECT * FROM STREAM "
                        + source
                        + ";\n");
        Table orders = table(w, "orders");
        assertThat(orders.schema().columns())
                .extracting(c -> c.name() + " " + c.type())
                .containsExactly("id long", "amount decimal(10, 2)", "ts timestamp", "seq long");
        assertThat(rows(orders))
                .containsExactlyInAnyOrder(
                        "1,13.75,2024-01-03T00:00,2", "2,7.00,2024-01-02T05:00,1");
        assertThat(rows(table(w, "order_log")))
                .containsExactlyInAnyOrder(
                        "1,12.50,2024-01-02T03:04:05,1",
                        "2,7.00,2024-01-02T05:00,1",
                        "1,13.75,2024-01-03T00:00,2");
        assertThat(quarantine(w))
                .containsExactlyInAnyOrder(
                        "orders|a.json|4|TYPE_MISMATCH|" + DECIMAL_DETAIL,
                        "order_log|a.json|4|TYPE_MISMATCH|" + DECIMAL_DETAIL);
    }

    private static final String DECIMAL_DETAIL =
            "column 'amount' DECIMAL(10, 2): string \"12.345\" has more than 2 fractional digits";

    /**
     * S2: a glob pattern in the path, as the vendor's examples write it ({@code
     * analysis/*&#47;*&#47;*.json}, double-quoted): only the visible files under its base that
     * match it are read; a pattern whose base folder does not exist is SOURCE_NOT_FOUND at the
     * path, before anything runs.
     */
    @Test
    void aGlobPatternReadsOnlyTheMatchingFiles() throws Exception {
        Path w = dir.resolve("warehouse");
        String[][] files = {
            {"in/2024/01/a.json", "{\"id\": 1, \"v\": \"a\", \"seq\": 1}"},
            {"in/2024/01/b.csv", "id,v,seq\n9,csv,1"},
            {"in/2024/c.json", "{\"id\": 9, \"v\": \"depth\", \"seq\": 1}"},
            {"in/2024/_tmp/d.json", "{\"id\": 9, \"v\": \"hidden\", \"seq\": 1}"},
            {
                "in/2025/03/f.json",
                "{\"id\": 1, \"v\": \"f\", \"seq\": 2}\n{\"id\": 2, \"v\": \"g\", \"seq\": 1}"
            }
        };
        for (String[] f : files) {
            Files.createDirectories(dir.resolve(f[0]).getParent());
            Files.writeString(dir.resolve(f[0]), f[1] + "\n");
        }
        Path sql = dir.resolve("glob.sql");
        Files.writeString(
                sql,
                "CREATE OR REFRESH STREAMING TABLE items FLOW AUTO CDC FROM STREAM read_files(\n"
                        + "  \"in/*/*/*.json\", format => \"json\", table => 'items')\n"
                        + "  KEYS (id) SEQUENCE BY seq STORED AS SCD TYPE 1;\n");
        assertThat(run(w, sql)).isZero();
        assertThat(rows(table(w, "items"))).containsExactlyInAnyOrder("1,f,2", "2,g,1");

        Path missing = dir.resolve("missing.sql");
        Files.writeString(
                missing,
                "CREATE OR REFRESH STREAMING TABLE other AS SELECT * FROM STREAM\n"
                        + "  read_files('nowhere/*/*.json', format => 'json');\n");
        assertRunRefused(w, missing)
                .hasMessage(
                        missing
                                + ":2:3: SOURCE_NOT_FOUND: read_files path "
                                + dir.resolve("nowhere/*/*.json")
                                + ": its base folder "
                                + dir.resolve("nowhere")
                                + " does not exist (a relative path is resolved against the"
                                + " folder of the pipeline file)");
    }

    /**
     * S2: a hint that does not parse, or names an unknown type, fails at the argument's value
     * (file:line:column) before anything is written.
     */
    @Test
    void aBadSchemaHintFailsAtItsArgumentBeforeAnythingIsWritten() throws Exception {
        Files.createDirectories(dir.resolve("in"));
        Path w = dir.resolve("warehouse");
        Path f = dir.resolve("bad.sql");
        for (String[] hint :
                List.of(
                        new String[] {
                            "amount DECIMAL(10,2), ts TIMESTAMPX",
                            "column 'ts': cannot parse type 'TIMESTAMPX': unknown type"
                        },
                        new String[] {
                            "amount", "column 'amount' has no type in column list 'amount'"
                        })) {
            Files.writeString(
                    f,
                    "CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM\n"
                            + "  read_files('in/', format => 'json', schemaHints => '"
                            + hint[0]
                            + "');\n");
            assertRunRefused(w, f)
                    .hasMessage(
                            f
                                    + ":2:54: INVALID_OPTION: read_files schemaHints '"
                                    + hint[0]
                                    + "': "
                                    + hint[1]);
            assertThat(w).doesNotExist();
        }
    }

    /**
     * S2: CSV files with a header line are plain rows; each file's header names its columns (b.csv
     * orders them differently). With a declared column list the cells take the declared types (AUTO
     * CDC flow with KEYS, APPLY AS DELETE WHEN and SEQUENCE BY); without one they are STRING unless
     * schemaHints type them (append flow). A cell that does not fit its type is TYPE_MISMATCH, a
     * line that is no CSV record of its file MALFORMED_CSV, each with file and line; the other rows
     * are written.
     */
    @Test
    void csvFilesAreRowsTypedByTheColumnListOrHintsAndBadLinesAreQuarantined() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(
                dir.resolve("in/a.csv"),
                "id,name,amount,seq,op\n"
                        + "1,apple,1.50,1,upsert\n"
                        + "2,\"pear, green\",2.25,1,upsert\n"
                        + "1,apple,1.75,2,upsert\n"
                        + "3,fig,x,1,upsert\n"
                        + "4,\"broken,1,1,upsert\n"
                        + "5,kiwi,1.00\n"
                        + "2,,,2,delete\n");
        Files.writeString(
                dir.resolve("in/b.csv"), "seq,id,name,amount,op\r\n3,1,apple,2.00,upsert\r\n");
        // plain rows name no table: a job reads one plain-row flow (S2), so one file per flow
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE fruit (id INT, name STRING, amount"
                        + " DECIMAL(10, 2), seq INT, op STRING)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('in/', format => 'csv')\n"
                        + "  KEYS (id) APPLY AS DELETE WHEN op = 'delete' SEQUENCE BY seq\n"
                        + "  STORED AS SCD TYPE 1;\n",
                "CREATE OR REFRESH STREAMING TABLE fruit_log AS SELECT * FROM STREAM"
                        + " read_files('in/', format => 'csv', schemaHints => 'id INT');\n");
        assertThat(rows(table(w, "fruit"))).containsExactly("1,apple,2.00,3,upsert");
        Table fruitLog = table(w, "fruit_log");
        assertThat(fruitLog.schema().columns())
                .extracting(c -> c.name() + " " + c.type())
                .containsExactly(
                        "id int", "name string", "amount string", "seq string", "op string");
        assertThat(rows(fruitLog))
                .containsExactlyInAnyOrder(
                        "1,apple,1.50,1,upsert",
                        "2,pear, green,2.25,1,upsert",
                        "1,apple,1.75,2,upsert",
                        "3,fig,x,1,upsert",
                        "2,null,null,2,delete",
                        "1,apple,2.00,3,upsert");
        assertThat(quarantine(w))
                .containsExactlyInAnyOrder(
                        "fruit|a.csv|5|TYPE_MISMATCH|column 'amount' DECIMAL(10, 2): string \"x\" not a decimal number",
                        "fruit|a.csv|6|MALFORMED_CSV|line 6 is not a CSV record: Missing closing quote for value",
                        "fruit|a.csv|7|MALFORMED_CSV|line 7 has 3 field(s), its file's header (line 1) has 5",
                        "fruit_log|a.csv|6|MALFORMED_CSV|line 6 is not a CSV record: Missing closing quote for value",
                        "fruit_log|a.csv|7|MALFORMED_CSV|line 7 has 3 field(s), its file's header (line 1) has 5");
    }

    /**
     * S2: CSV header names match the declared columns ignoring case (as the vendor's reader does):
     * {@code ID,Name,SEQ} fills {@code id, name, seq}; a file whose header names two columns that
     * differ only in case is quarantined as MALFORMED_CSV naming both (issue #13).
     */
    @Test
    void csvHeaderNamesMatchTheColumnsIgnoringCase() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(dir.resolve("in/a.csv"), "ID,Name,SEQ\n1,apple,1\n2,pear,1\n1,fig,2\n");
        Files.writeString(dir.resolve("in/b.csv"), "id,name,ID\n3,kiwi,3\n");
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE fruit (id INT, name STRING, seq INT)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('in/', format => 'csv')\n"
                        + "  KEYS (id) SEQUENCE BY seq STORED AS SCD TYPE 1;\n");
        assertThat(rows(table(w, "fruit"))).containsExactlyInAnyOrder("1,fig,2", "2,pear,1");
        assertThat(quarantine(w))
                .containsExactly(
                        "fruit|b.csv|2|MALFORMED_CSV|the header (line 1) of CSV file file:"
                                + dir.resolve("in/b.csv").toUri().getPath()
                                + " names columns 'id' and 'ID', which differ only in case (header"
                                + " names match the table's columns ignoring case)");
    }

    /**
     * S2: Parquet files are plain rows with the file's schema (no column list): an AUTO CDC flow
     * with KEYS, APPLY AS DELETE WHEN and SEQUENCE BY, and an append flow; a file that is not
     * Parquet is quarantined as DAMAGED_FILE naming it, the other files are written.
     */
    @Test
    void parquetFilesAreRowsOfTheirSchemaAndACorruptFileIsQuarantined() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Schema schema =
                new Schema(
                        Types.NestedField.optional(1, "id", Types.IntegerType.get()),
                        Types.NestedField.optional(2, "name", Types.StringType.get()),
                        Types.NestedField.optional(3, "amount", Types.DecimalType.of(10, 2)),
                        Types.NestedField.optional(4, "ts", Types.TimestampType.withoutZone()),
                        Types.NestedField.required(5, "seq", Types.LongType.get()),
                        Types.NestedField.optional(6, "op", Types.StringType.get()));
        LocalDateTime t0 = LocalDateTime.of(2024, 1, 2, 3, 4, 5);
        writeParquet(
                dir.resolve("in/a.parquet"),
                schema,
                List.of(
                        List.of(1, "apple", new BigDecimal("1.50"), t0, 1L, "upsert"),
                        List.of(2, "pear", new BigDecimal("2.25"), t0, 1L, "upsert"),
                        List.of(1, "apple", new BigDecimal("1.75"), t0.plusDays(1), 2L, "upsert")));
        List<Object> delete = new ArrayList<>(List.of(2));
        delete.addAll(java.util.Arrays.asList(null, null, null));
        delete.addAll(List.of(2L, "delete"));
        writeParquet(
                dir.resolve("in/b.parquet"),
                schema,
                List.of(delete, List.of(3, "fig", new BigDecimal("3.00"), t0, 1L, "upsert")));
        Files.writeString(dir.resolve("in/c.parquet"), "not parquet at all\n");
        // plain rows name no table: a job reads one plain-row flow (S2), so one file per flow
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE fruit\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('in/', format => 'parquet')\n"
                        + "  KEYS (id) APPLY AS DELETE WHEN op = 'delete' SEQUENCE BY seq\n"
                        + "  STORED AS SCD TYPE 1;\n",
                "CREATE OR REFRESH STREAMING TABLE fruit_log AS SELECT * FROM STREAM"
                        + " read_files('in/', format => 'parquet');\n");
        Table fruit = table(w, "fruit");
        assertThat(fruit.schema().columns())
                .extracting(c -> c.name() + " " + c.type())
                .containsExactly(
                        "id int",
                        "name string",
                        "amount decimal(10, 2)",
                        "ts timestamp",
                        "seq long",
                        "op string");
        assertThat(rows(fruit))
                .containsExactlyInAnyOrder(
                        "1,apple,1.75,2024-01-03T03:04:05,2,upsert",
                        "3,fig,3.00,2024-01-02T03:04:05,1,upsert");
        assertThat(rows(table(w, "fruit_log")))
                .containsExactlyInAnyOrder(
                        "1,apple,1.50,2024-01-02T03:04:05,1,upsert",
                        "2,pear,2.25,2024-01-02T03:04:05,1,upsert",
                        "1,apple,1.75,2024-01-03T03:04:05,2,upsert",
                        "2,null,null,null,2,delete",
                        "3,fig,3.00,2024-01-02T03:04:05,1,upsert");
        String c = "file:" + dir.resolve("in/c.parquet").toAbsolutePath();
        String corrupt =
                "Parquet file "
                        + c
                        + " cannot be read after 0 record(s): java.lang.RuntimeException: "
                        + c
                        + " is not a Parquet file. Expected magic number at tail, but found [97,"
                        + " 108, 108, 10]";
        assertThat(quarantine(w))
                .containsExactlyInAnyOrder(
                        "fruit|c.parquet|1|DAMAGED_FILE|" + corrupt,
                        "fruit_log|c.parquet|1|DAMAGED_FILE|" + corrupt);
    }

    /**
     * S2: the vendor's CSV options: {@code header => false} reads every line as a record into the
     * declared columns by position (else {@code _c0, _c1, ...}), {@code sep}, {@code quote}, {@code
     * nullValue} and {@code comment} change how a line splits into cells; a line with another
     * number of cells than the first record is MALFORMED_CSV.
     */
    @Test
    void csvOptionsHeaderSepQuoteNullValueAndComment() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(
                dir.resolve("in/a.csv"),
                "# exported by a tool that writes no header\n"
                        + "1;'apple; red';1.50;1\n"
                        + "2;NA;2.25;1\n"
                        + "1;apple;1.75;2\n"
                        + "3;fig\n");
        String options =
                "format => 'csv', header => false, sep => ';', quote => \"'\", nullValue => 'NA',"
                        + " comment => '#'";
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE fruit (id INT, name STRING, amount DECIMAL(10, 2),"
                        + " seq INT)\n  FLOW AUTO CDC FROM STREAM read_files('in/', "
                        + options
                        + ")\n  KEYS (id) SEQUENCE BY seq STORED AS SCD TYPE 1;\n",
                "CREATE OR REFRESH STREAMING TABLE fruit_log AS SELECT * FROM STREAM"
                        + " read_files('in/', "
                        + options
                        + ");\n");
        assertThat(rows(table(w, "fruit")))
                .containsExactlyInAnyOrder("1,apple,1.75,2", "2,null,2.25,1");
        Table log = table(w, "fruit_log");
        assertThat(log.schema().columns())
                .extracting(c -> c.name() + " " + c.type())
                .containsExactly("_c0 string", "_c1 string", "_c2 string", "_c3 string");
        assertThat(rows(log))
                .containsExactlyInAnyOrder(
                        "1,apple; red,1.50,1", "2,null,2.25,1", "1,apple,1.75,2");
        assertThat(quarantine(w))
                .containsExactlyInAnyOrder(
                        "fruit|a.csv|5|MALFORMED_CSV|line 5 has 2 field(s), the declared column list has 4",
                        "fruit_log|a.csv|5|MALFORMED_CSV|line 5 has 2 field(s), the file's first record has 4");
    }

    /**
     * S2: CSV cells are text, read by the column's type: a number is never days or microseconds
     * since the epoch for a DATE or TIMESTAMP column (TYPE_MISMATCH, as the vendor refuses it), an
     * integer takes {@code 007} and {@code +5}, a BOOLEAN {@code TRUE} and {@code False}.
     */
    @Test
    void csvCellsAreTextReadByTheColumnsType() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(
                dir.resolve("in/a.csv"),
                "id,ts,dt,n,b\n"
                        + "1,2024-01-02 03:04:05,2024-01-02,007,TRUE\n"
                        + "2,42,2024-01-02,1,false\n"
                        + "3,2024-01-02 03:04:05,20261204,1,false\n"
                        + "4,2024-01-02 03:04:05,2024-01-02,+5,False\n"
                        + "5,2024-01-02 03:04:05,2024-01-02,x,true\n");
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE typed AS SELECT * FROM STREAM read_files('in/',"
                        + " format => 'csv', schemaHints => 'id INT, ts TIMESTAMP(3), dt DATE, n INT,"
                        + " b BOOLEAN');\n");
        assertThat(rows(table(w, "typed")))
                .containsExactlyInAnyOrder(
                        "1,2024-01-02T03:04:05,2024-01-02,7,true",
                        "4,2024-01-02T03:04:05,2024-01-02,5,false");
        assertThat(quarantine(w))
                .containsExactlyInAnyOrder(
                        "typed|a.csv|3|TYPE_MISMATCH|column 'ts' TIMESTAMP(3): string \"42\" not an ISO"
                                + " timestamp",
                        "typed|a.csv|4|TYPE_MISMATCH|column 'dt' DATE: string \"20261204\" not an ISO"
                                + " date",
                        "typed|a.csv|6|TYPE_MISMATCH|column 'n' INT: string \"x\" not an integer"
                                + " number");
    }

    /**
     * S2: the columns of a table without a column list come from the first file that has them: a
     * first CSV file with a duplicate header name, or a first "Parquet" file of random bytes, is
     * quarantined by the source and the next file gives the columns.
     */
    @Test
    void aBadFirstFileIsQuarantinedAndTheNextFileGivesTheColumns() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("csv"));
        Files.writeString(dir.resolve("csv/a.csv"), "id,id\n1,2\n");
        Files.writeString(dir.resolve("csv/b.csv"), "id,name\n7,kiwi\n");
        Files.createDirectories(dir.resolve("pq"));
        Files.write(dir.resolve("pq/a.parquet"), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        Schema schema =
                new Schema(
                        Types.NestedField.optional(1, "id", Types.IntegerType.get()),
                        Types.NestedField.optional(2, "name", Types.StringType.get()));
        writeParquet(dir.resolve("pq/b.parquet"), schema, List.of(List.of(8, "lime")));
        runEachInItsOwnFile(
                w,
                "CREATE OR REFRESH STREAMING TABLE from_csv AS SELECT * FROM STREAM"
                        + " read_files('csv/', format => 'csv');\n",
                "CREATE OR REFRESH STREAMING TABLE from_parquet AS SELECT * FROM STREAM"
                        + " read_files('pq/', format => 'parquet');\n");
        assertThat(rows(table(w, "from_csv"))).containsExactly("7,kiwi");
        assertThat(rows(table(w, "from_parquet"))).containsExactly("8,lime");
        assertThat(quarantine(w))
                .extracting(q -> String.join("|", List.of(q.split("\\|")).subList(0, 4)))
                .containsExactlyInAnyOrder(
                        "from_csv|a.csv|2|MALFORMED_CSV", "from_parquet|a.parquet|1|DAMAGED_FILE");
    }

    /**
     * S2: a schema hint that gives a declared column another type contradicts the column list:
     * refused before anything runs (the hint no longer silently wins).
     */
    @Test
    void aSchemaHintContradictingTheColumnListIsRefused() throws Exception {
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(dir.resolve("in/a.csv"), "id,amount\n1,2.50\n");
        Path f = dir.resolve("conflict.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE t (id INT, amount DECIMAL(10, 2)) AS SELECT *"
                        + " FROM STREAM\n  read_files('in/', format => 'csv', schemaHints => 'amount"
                        + " BOOLEAN');\n");
        assertRunRefused(dir.resolve("warehouse"), f)
                .hasMessageContaining(
                        "schema-hints types column 'amount' BOOLEAN, the declared column list"
                                + " DECIMAL(10, 2); a declared column takes the declared type (leave"
                                + " the hint out, or change the column list)");
        assertThat(Files.exists(dir.resolve("warehouse/default/t"))).isFalse();
    }

    /**
     * S2: two tables over the same CSV path in one file would each get no row (plain rows name no
     * table): refused before anything runs, naming the path, the tables and the fix.
     */
    @Test
    void twoPlainRowTablesOverOnePathInOneJobAreRefused() throws Exception {
        Files.createDirectories(dir.resolve("exports/orders"));
        Files.writeString(
                dir.resolve("exports/orders/a.csv"), "id,amount,status,seq\n1,2.50,new,1\n");
        Path f = dir.resolve("orders.sql");
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE orders (id INT, amount DECIMAL(10, 2), status"
                        + " STRING, seq INT)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('exports/orders/', format => 'csv')\n"
                        + "  KEYS (id) APPLY AS DELETE WHEN status = 'deleted' SEQUENCE BY seq STORED AS"
                        + " SCD TYPE 1;\n"
                        + "CREATE OR REFRESH STREAMING TABLE order_log AS SELECT * FROM STREAM\n"
                        + "  read_files('exports/orders/', format => 'csv');\n");
        assertRunRefused(dir.resolve("warehouse"), f)
                .hasMessage(
                        f
                                + ":5:3: CONFLICTING_SOURCES: format 'csv' rows name no table, so one"
                                + " job gives every row to its one flow, and this run's flows"
                                + " orders, order_log all read "
                                + dir.resolve("exports/orders")
                                + ". Refresh each table as a job of its own (REFRESH STREAMING"
                                + " TABLE orders; REFRESH STREAMING TABLE order_log; in the file, or"
                                + " run --refresh orders)");
        assertThat(Files.exists(dir.resolve("warehouse/default/orders"))).isFalse();
    }

    /**
     * S2: a CSV option that is not a proper value fails at the value; one given for another format
     * is INVALID_OPTION at the call; two calls of one file giving different values are
     * CONFLICTING_SOURCES.
     */
    @Test
    void badCsvOptionsFailBeforeAnythingRuns() throws Exception {
        Files.createDirectories(dir.resolve("in"));
        Path w = dir.resolve("warehouse");
        Path f = dir.resolve("bad.sql");
        String[][] cases = {
            {
                "read_files('in/', format => 'csv', header => 'maybe')",
                ":2:48: INVALID_OPTION: read_files header must be true or false, got 'maybe'"
            },
            {
                "read_files('in/', format => 'csv', sep => ';;')",
                ":2:45: INVALID_OPTION: read_files sep must be one character (not a line break),"
                        + " got ';;'"
            },
            {
                "read_files('in/', format => 'json', header => false)",
                ":2:3: INVALID_OPTION: read_files header => is an option of CSV files; the files"
                        + " are read as 'json' (give format => 'csv', or leave it out)"
            },
            {
                "read_files('in/', format => 'csv', sep => ';', quote => ';')",
                ": INVALID_OPTION: the CSV options sep, quote, escape and comment must be"
                        + " different characters; ';' is given twice"
            }
        };
        for (String[] c : cases) {
            Files.writeString(
                    f,
                    "CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM\n  "
                            + c[0]
                            + ";\n");
            assertRunRefused(w, f).as(c[0]).hasMessageContaining(c[1]);
        }
        Files.writeString(
                f,
                "CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM\n"
                        + "  read_files('in/', format => 'csv', sep => ';');\n"
                        + "CREATE OR REFRESH STREAMING TABLE u AS SELECT * FROM STREAM\n"
                        + "  read_files('in/', format => 'csv', delimiter => '|');\n");
        assertRunRefused(w, f)
                .hasMessageContaining(
                        ":4:3: CONFLICTING_SOURCES: read_files delimiter => '|' differs from sep"
                                + " => ';' at ");
    }

    /**
     * S2: maxFilesPerTrigger => 1 takes one new file per checkpoint, so each Iceberg commit holds
     * the rows of exactly one file (1, 2 and 3 rows), every row once; a value that is not a
     * positive whole number fails at the value before anything is written.
     */
    @Test
    void maxFilesPerTriggerTakesThatManyFilesPerCommit() throws Exception {
        Path w = dir.resolve("warehouse");
        Files.createDirectories(dir.resolve("in"));
        Files.writeString(dir.resolve("in/a.json"), "{\"id\": 1}\n");
        Files.writeString(dir.resolve("in/b.json"), "{\"id\": 2}\n{\"id\": 3}\n");
        Files.writeString(dir.resolve("in/c.json"), "{\"id\": 4}\n{\"id\": 5}\n{\"id\": 6}\n");
        Path f = dir.resolve("limited.sql");
        String statement =
                "SET checkpoint-interval = 300ms;\n"
                        + "CREATE OR REFRESH STREAMING TABLE events AS SELECT * FROM STREAM\n"
                        + "  read_files('in/', format => 'json', maxFilesPerTrigger => {n});\n";
        Files.writeString(f, statement.replace("{n}", "0"));
        assertRunRefused(w, f)
                .hasMessage(
                        f
                                + ":3:61: INVALID_OPTION: read_files maxFilesPerTrigger must be a"
                                + " whole number of files from 1 to 2147483647, got '0'");
        assertThat(w).doesNotExist();

        Files.writeString(f, statement.replace("{n}", "1"));
        assertThat(run(w, f)).isZero();
        Table events = table(w, "events");
        assertThat(rows(events)).containsExactlyInAnyOrder("1", "2", "3", "4", "5", "6");
        // the ids each commit added, by file: a.json 1, b.json 2-3, c.json 4-6
        List<String> perCommit = new ArrayList<>();
        java.util.Set<String> before = new java.util.TreeSet<>();
        List<org.apache.iceberg.Snapshot> history = new ArrayList<>();
        events.snapshots().forEach(history::add);
        for (org.apache.iceberg.Snapshot s : history) {
            java.util.Set<String> now = new java.util.TreeSet<>();
            try (CloseableIterable<Record> it =
                    IcebergGenerics.read(events).useSnapshot(s.snapshotId()).build()) {
                it.forEach(r -> now.add(String.valueOf(r.getField("id"))));
            }
            java.util.Set<String> added = new java.util.TreeSet<>(now);
            added.removeAll(before);
            java.util.Set<String> files = new java.util.TreeSet<>();
            for (String id : added) {
                files.add(id.equals("1") ? "a" : id.compareTo("3") <= 0 ? "b" : "c");
            }
            if (!files.isEmpty()) {
                perCommit.add(String.join("+", files));
            }
            before = now;
        }
        // one file per commit (a file may spread over commits): never two files in one commit
        assertThat(perCommit).allMatch(files -> files.length() == 1);
        assertThat(perCommit.stream().distinct().sorted()).containsExactly("a", "b", "c");
    }

    private static void writeParquet(Path file, Schema schema, List<List<Object>> rows)
            throws Exception {
        try (FileAppender<Record> out =
                Parquet.write(org.apache.iceberg.Files.localOutput(file.toFile()))
                        .schema(schema)
                        .createWriterFunc(GenericParquetWriter::create)
                        .build()) {
            for (List<Object> row : rows) {
                Record r = GenericRecord.create(schema);
                for (int i = 0; i < row.size(); i++) {
                    r.set(i, row.get(i));
                }
                out.add(r);
            }
        }
    }

    /**
     * Runs each statement as a {@code .sql} file of its own ({@code run}), in order, and asserts
     * that each exits 0.
     */
    private void runEachInItsOwnFile(Path warehouse, String... statements) throws IOException {
        for (int i = 0; i < statements.length; i++) {
            Path file = dir.resolve("flow-" + i + ".sql");
            Files.writeString(file, statements[i]);
            assertThat(run(warehouse, file)).as(statements[i]).isZero();
        }
    }

    /** Asserts that {@code run} of {@code file} throws a {@link SqlException} (before running). */
    private static org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable>
            assertRunRefused(Path warehouse, Path file) {
        RunCommand command = new RunCommand();
        new CommandLine(command).parseArgs("--warehouse", warehouse.toString(), file.toString());
        return assertThatThrownBy(command::call).isInstanceOf(SqlException.class);
    }

    static int run(Path warehouse, Path file) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code =
                CapturedOutput.stderr(
                        err,
                        () ->
                                Main.execute(
                                        "run",
                                        "--warehouse",
                                        warehouse.toString(),
                                        file.toString()));
        if (code != 0) {
            System.err.println(err.toString(StandardCharsets.UTF_8));
        }
        return code;
    }

    static Table table(Path warehouse, String name) {
        return catalogOf(warehouse).loadTable(TableIdentifier.of("default", name));
    }

    /** Quarantine rows as {@code flow|file name|line|reason|detail}. */
    static List<String> quarantine(Path warehouse) throws Exception {
        List<String> out = new ArrayList<>();
        Table q = table(warehouse, "changeflow_quarantine");
        try (CloseableIterable<Record> it = IcebergGenerics.read(q).build()) {
            for (Record r : it) {
                String source = String.valueOf(r.getField("source"));
                out.add(
                        r.getField("flow")
                                + "|"
                                + source.substring(source.lastIndexOf('/') + 1)
                                + "|"
                                + r.getField("offset")
                                + "|"
                                + r.getField("reason")
                                + "|"
                                + r.getField("detail"));
            }
        }
        return out;
    }

    /** The rows of {@code t} as CSV lines, columns in the table's order. */
    static List<String> rows(Table t) throws Exception {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
            for (Record r : it) {
                List<String> fields = new ArrayList<>();
                for (int i = 0; i < r.size(); i++) {
                    fields.add(String.valueOf(r.get(i)));
                }
                out.add(String.join(",", fields));
            }
        }
        return out;
    }

    private static Catalog catalogOf(Path warehouse) {
        return CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
    }
}

package dev.changeflow.sinks.iceberg;

import dev.changeflow.operators.AutoCdcException;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StreamingTablesTest {

    private static final TableIdentifier ACCOUNTS = TableIdentifier.of("db", "accounts");

    @TempDir Path warehouse;
    private Catalog catalog;

    @BeforeEach
    void open() {
        catalog = CatalogSettings.localHadoop(warehouse).open();
    }

    private static RowType rowType(Object... namesAndTypes) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (int i = 0; i < namesAndTypes.length; i += 2) {
            fields.add(
                    new RowType.RowField(
                            (String) namesAndTypes[i], (LogicalType) namesAndTypes[i + 1]));
        }
        return new RowType(fields);
    }

    private static RowType accounts() {
        return rowType(
                "aid",
                new IntType(false),
                "bid",
                new IntType(),
                "abalance",
                new BigIntType(),
                "filler",
                new CharType(84),
                "mtime",
                new TimestampType(6),
                "seen_at",
                new LocalZonedTimestampType(3));
    }

    /**
     * A streaming table commits at every checkpoint: each commit deletes the metadata files beyond
     * the last {@code write.metadata.previous-versions-max}, so their number stays bounded (without
     * the property 2,000 commits left 2,246 files, 3.0 GB). Snapshots, time travel to the first one
     * included, are unaffected.
     */
    @Test
    void oldMetadataFilesAreDeletedAtCommit() throws IOException {
        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .property("write.metadata.previous-versions-max", "3")
                        .build();
        Table table =
                StreamingTables.ensureTable(
                        catalog,
                        ACCOUNTS,
                        rowType("aid", new IntType(false)),
                        List.of("aid"),
                        options);
        for (int i = 0; i < 10; i++) {
            table.newAppend()
                    .appendFile(
                            DataFiles.builder(table.spec())
                                    .withPath(warehouse.resolve("f" + i + ".parquet").toString())
                                    .withFileSizeInBytes(10)
                                    .withRecordCount(1)
                                    .build())
                    .commit();
        }
        Path metadata = warehouse.resolve("db/accounts/metadata");
        try (Stream<Path> files = Files.list(metadata)) {
            // the current version v11 and the 3 before it
            assertThat(
                            files.map(f -> f.getFileName().toString())
                                    .filter(n -> n.endsWith(".metadata.json"))
                                    .sorted())
                    .containsExactly(
                            "v10.metadata.json",
                            "v11.metadata.json",
                            "v8.metadata.json",
                            "v9.metadata.json");
        }
        table.refresh();
        assertThat(table.snapshots()).hasSize(10);
        Snapshot first = table.snapshots().iterator().next();
        assertThat(
                        table.newScan()
                                .useSnapshot(first.snapshotId())
                                .planFiles()
                                .iterator()
                                .next()
                                .file()
                                .location())
                .endsWith("f0.parquet");
    }

    /**
     * An existing table that does not name {@code write.metadata.delete-after-commit.enabled} (made
     * by an earlier release, or by hand) gets it at the next start; one that names it keeps it.
     */
    @Test
    void anExistingTableGetsMetadataCleanupUnlessItChoseItself() {
        RowType type = rowType("aid", new IntType(false));
        Schema schema =
                new Schema(
                        List.of(
                                org.apache.iceberg.types.Types.NestedField.required(
                                        1,
                                        "aid",
                                        org.apache.iceberg.types.Types.IntegerType.get())),
                        java.util.Set.of(1));
        catalog.createTable(ACCOUNTS, schema);
        TableIdentifier chose = TableIdentifier.of("db", "chose");
        catalog.buildTable(chose, schema)
                .withProperty("write.metadata.delete-after-commit.enabled", "false")
                .create();
        StreamingTableOptions options = StreamingTableOptions.builder().build();

        assertThat(
                        StreamingTables.ensureTable(
                                        catalog, ACCOUNTS, type, List.of("aid"), options)
                                .properties())
                .containsEntry("write.metadata.delete-after-commit.enabled", "true");
        assertThat(catalog.loadTable(ACCOUNTS).properties())
                .containsEntry("write.metadata.delete-after-commit.enabled", "true");
        assertThat(
                        StreamingTables.ensureTable(catalog, chose, type, List.of("aid"), options)
                                .properties())
                .containsEntry("write.metadata.delete-after-commit.enabled", "false");
    }

    @Test
    void createsV2TableWithSchemaIdentifierFieldsPartitionSpecAndProperties() {
        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .partitionBy(
                                "bucket(16, aid)",
                                "days(mtime)",
                                "truncate(4, filler)",
                                "bid",
                                "identity(abalance)")
                        .targetFileSizeBytes(64L << 20)
                        .property("write.metadata.previous-versions-max", "50")
                        .build();

        Table table =
                StreamingTables.ensureTable(catalog, ACCOUNTS, accounts(), List.of("aid"), options);

        assertThat(((SupportsNamespaces) catalog).namespaceExists(Namespace.of("db"))).isTrue();
        Schema schema = table.schema();
        assertThat(
                        schema.columns().stream()
                                .map(
                                        f ->
                                                f.name()
                                                        + " "
                                                        + (f.isRequired()
                                                                ? "required "
                                                                : "optional ")
                                                        + f.type())
                                .collect(Collectors.toList()))
                .containsExactly(
                        "aid required int",
                        "bid optional int",
                        "abalance optional long",
                        "filler optional string",
                        "mtime optional timestamp",
                        "seen_at optional timestamptz");
        assertThat(schema.identifierFieldNames()).containsExactly("aid");
        assertThat(
                        table.spec().fields().stream()
                                .map(PartitionField::toString)
                                .collect(Collectors.toList()))
                .containsExactly(
                        "1000: aid_bucket: bucket[16](1)",
                        "1001: mtime_day: day(5)",
                        "1002: filler_trunc: truncate[4](4)",
                        "1003: bid: identity(2)",
                        "1004: abalance: identity(3)");
        assertThat(formatVersion(table)).isEqualTo(2);
        assertThat(table.properties())
                .containsEntry("write.upsert.enabled", "false")
                .containsEntry("changeflow.eq-deletes-carry-rows", "true")
                .containsEntry("flink.max-continuous-empty-commits", "2147483647")
                .containsEntry("write.parquet.bloom-filter-enabled.column.aid", "true")
                .containsEntry("write.target-file-size-bytes", "67108864")
                .containsEntry("write.metadata.previous-versions-max", "50")
                .containsEntry("write.metadata.delete-after-commit.enabled", "true")
                .doesNotContainKey("write.parquet.bloom-filter-enabled.column.bid");
        assertThat(table.currentSnapshot()).isNull();
        assertThat(StreamingTables.isEmpty(table)).isTrue();
    }

    @Test
    void createsV3Scd2TableWithoutBloomFiltersWhenAsked() {
        RowType scd2 =
                rowType(
                        "id",
                        new IntType(false),
                        "name",
                        VarCharType.STRING_TYPE,
                        "__START_AT",
                        new BigIntType(false),
                        "__END_AT",
                        new BigIntType());
        StreamingTableOptions options =
                StreamingTableOptions.builder().formatVersion(3).bloomFilters(false).build();

        Table table =
                StreamingTables.ensureTable(
                        catalog,
                        TableIdentifier.of("db", "history"),
                        scd2,
                        List.of("id", "__START_AT"),
                        options);

        assertThat(formatVersion(table)).isEqualTo(3);
        assertThat(table.schema().identifierFieldNames())
                .containsExactlyInAnyOrder("id", "__START_AT");
        assertThat(table.spec().isUnpartitioned()).isTrue();
        assertThat(table.properties().keySet()).noneMatch(k -> k.contains("bloom-filter"));
    }

    @Test
    void nanosecondTimestampsNeedFormatV3WithAClearError() {
        RowType nanos = rowType("id", new IntType(false), "ts", new TimestampType(9));
        TableIdentifier id = TableIdentifier.of("db", "nanos");
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        id,
                                        nanos,
                                        List.of("id"),
                                        StreamingTableOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "table db.nanos: column 'ts' holds nanoseconds (TIMESTAMP(9), e.g. Debezium"
                                + " NanoTimestamp), which Iceberg stores as timestamp_ns from format"
                                + " version 3 on; set 'format-version: 3' for the flow, or declare"
                                + " the column TIMESTAMP(6)");
        assertThat(catalog.tableExists(id)).isFalse();

        Table table =
                StreamingTables.ensureTable(
                        catalog,
                        id,
                        nanos,
                        List.of("id"),
                        StreamingTableOptions.builder().formatVersion(3).build());
        assertThat(formatVersion(table)).isEqualTo(3);
        assertThat(table.schema().findField("ts").type().toString()).isEqualTo("timestamp_ns");
    }

    @Test
    void existingMatchingTableIsReturnedUnchanged() {
        Table first =
                StreamingTables.ensureTable(
                        catalog,
                        ACCOUNTS,
                        accounts(),
                        List.of("aid"),
                        StreamingTableOptions.builder().partitionBy("bid").build());
        Table again =
                StreamingTables.ensureTable(
                        catalog,
                        ACCOUNTS,
                        accounts(),
                        List.of("aid"),
                        StreamingTableOptions.builder()
                                .partitionBy("bid")
                                .formatVersion(3)
                                .build());

        assertThat(again.uuid()).isEqualTo(first.uuid());
        assertThat(formatVersion(again)).isEqualTo(2);
        assertThat(again.spec().fields()).hasSize(1);
    }

    /**
     * docs/semantics.md A1: an existing table without a snapshot takes the definition's
     * partitioning; one with snapshots that is partitioned otherwise is refused naming both.
     */
    @Test
    void existingTableWithAnotherPartitioningTakesItWhenEmptyAndIsRefusedOnceWritten() {
        StreamingTables.ensureTable(
                catalog,
                ACCOUNTS,
                accounts(),
                List.of("aid"),
                StreamingTableOptions.builder().partitionBy("bid").build());
        Table empty =
                StreamingTables.ensureTable(
                        catalog,
                        ACCOUNTS,
                        accounts(),
                        List.of("aid"),
                        StreamingTableOptions.builder().partitionBy("bucket(4, aid)").build());
        assertThat(StreamingTables.partitioning(empty.spec(), empty.schema()))
                .containsExactly("bucket[4](aid)");

        empty.newAppend().commit();
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        accounts(),
                                        List.of("aid"),
                                        StreamingTableOptions.defaults()))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageStartingWith(
                        "TARGET_SCHEMA_MISMATCH: table db.accounts is partitioned by"
                                + " [bucket[4](aid)] but its definition says []; a table that holds"
                                + " rows keeps its partitioning");
        Table kept = catalog.loadTable(ACCOUNTS);
        assertThat(StreamingTables.partitioning(kept.spec(), kept.schema()))
                .containsExactly("bucket[4](aid)");
    }

    @Test
    void existingTableWithAnotherColumnTypeIsTargetSchemaMismatch() {
        StreamingTables.ensureTable(
                catalog, ACCOUNTS, accounts(), List.of("aid"), StreamingTableOptions.defaults());
        RowType changed =
                rowType(
                        "aid",
                        new IntType(false),
                        "bid",
                        new IntType(),
                        "abalance",
                        new IntType(),
                        "filler",
                        new CharType(84),
                        "mtime",
                        new TimestampType(6),
                        "seen_at",
                        new LocalZonedTimestampType(3));

        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        changed,
                                        List.of("aid"),
                                        StreamingTableOptions.defaults()))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(AutoCdcException.Code.TARGET_SCHEMA_MISMATCH))
                .hasMessage(
                        "TARGET_SCHEMA_MISMATCH: table db.accounts exists and does not match the flow's "
                                + "definition: column 'abalance' has type BIGINT (Iceberg long) in the table but INT "
                                + "(Iceberg int) in the definition. Fix: run with --from-scratch to drop and recreate "
                                + "the table (its data is lost and reprocessed from the source), or change the "
                                + "definition to match the existing table; in a .sql pipeline, a full refresh of "
                                + "the table (run --full-refresh accounts, or REFRESH STREAMING TABLE accounts "
                                + "FULL) rebuilds it under the definition and keeps the table where Iceberg can "
                                + "evolve it (a type widened, a column added, dropped or moved).");
    }

    @Test
    void otherMismatchesNameTheColumnOrTheIdentifierFields() {
        RowType base = rowType("id", new IntType(false), "v", VarCharType.STRING_TYPE);
        StreamingTables.ensureTable(
                catalog, ACCOUNTS, base, List.of("id"), StreamingTableOptions.defaults());

        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        rowType(
                                                "id",
                                                new IntType(false),
                                                "v",
                                                VarCharType.STRING_TYPE,
                                                "w",
                                                new IntType()),
                                        List.of("id"),
                                        StreamingTableOptions.defaults()))
                .hasMessageContaining(
                        "column 'w' (INT (Iceberg int) in the definition) does not exist in the table");
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        rowType("id", new IntType(false)),
                                        List.of("id"),
                                        StreamingTableOptions.defaults()))
                .hasMessageContaining(
                        "column 'v' (STRING (Iceberg string) in the table) is not in the definition");
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        rowType(
                                                "v",
                                                VarCharType.STRING_TYPE,
                                                "id",
                                                new IntType(false)),
                                        List.of("id"),
                                        StreamingTableOptions.defaults()))
                .hasMessageContaining(
                        "the column order differs: table (id, v), definition (v, id)");
        TableIdentifier strict = TableIdentifier.of("db", "strict");
        StreamingTables.ensureTable(
                catalog,
                strict,
                rowType("id", new IntType(false), "v", new IntType(false)),
                List.of("id"),
                StreamingTableOptions.defaults());
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        strict,
                                        rowType("id", new IntType(false), "v", new IntType()),
                                        List.of("id"),
                                        StreamingTableOptions.defaults()))
                .hasMessageContaining(
                        "column 'v' is NOT NULL in the table but nullable in the definition (INT (Iceberg int))");
        // a NOT NULL column in the definition may write into a nullable table column
        StreamingTables.ensureTable(
                catalog,
                ACCOUNTS,
                rowType("id", new IntType(false), "v", new VarCharType(false, 10)),
                List.of("id"),
                StreamingTableOptions.defaults());
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        rowType(
                                                "id",
                                                new IntType(false),
                                                "v",
                                                VarCharType.STRING_TYPE),
                                        List.of(),
                                        StreamingTableOptions.defaults()))
                .hasMessageContaining("the identifier fields differ: table [id], definition []");
    }

    @Test
    void scd2StartAtWithAnotherSequenceTypeIsMismatch() {
        RowType scd2 =
                rowType(
                        "id",
                        new IntType(false),
                        "__START_AT",
                        new BigIntType(false),
                        "__END_AT",
                        new BigIntType());
        TableIdentifier history = TableIdentifier.of("db", "history");
        StreamingTables.ensureTable(
                catalog,
                history,
                scd2,
                List.of("id", "__START_AT"),
                StreamingTableOptions.defaults());
        RowType byTimestamp =
                rowType(
                        "id",
                        new IntType(false),
                        "__START_AT",
                        new TimestampType(false, 6),
                        "__END_AT",
                        new TimestampType(6));

        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        history,
                                        byTimestamp,
                                        List.of("id", "__START_AT"),
                                        StreamingTableOptions.defaults()))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("table db.history exists and does not match")
                .hasMessageContaining(
                        "column '__START_AT' has type BIGINT (Iceberg long) in the table "
                                + "but TIMESTAMP(6) (Iceberg timestamp) in the definition")
                .hasMessageContaining("--from-scratch");
    }

    @Test
    void nullableIdentifierFieldOrUnknownPartitionColumnIsRejected() {
        RowType nullableKey = rowType("id", new IntType(), "v", new IntType());
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        nullableKey,
                                        List.of("id"),
                                        StreamingTableOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "identifier field 'id' of table db.accounts must be NOT NULL");
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        accounts(),
                                        List.of("aid"),
                                        StreamingTableOptions.builder()
                                                .partitionBy("days(created)")
                                                .build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "partitionBy 'days(created)' of table db.accounts: column 'created' is not a column "
                                + "of the table; columns: aid, bid, abalance, filler, mtime, seen_at");
        assertThatThrownBy(
                        () ->
                                StreamingTables.ensureTable(
                                        catalog,
                                        ACCOUNTS,
                                        accounts(),
                                        List.of("aid"),
                                        StreamingTableOptions.builder()
                                                .partitionBy("days(bid)")
                                                .build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("partitionBy 'days(bid)' of table db.accounts: ");
        assertThat(catalog.tableExists(ACCOUNTS)).isFalse();
    }

    @Test
    void isEmptyFollowsLiveRowsAndDropIfExistsPurges() throws Exception {
        RowType type = rowType("id", new IntType(false), "v", new IntType());
        Table table =
                StreamingTables.ensureTable(
                        catalog, ACCOUNTS, type, List.of("id"), StreamingTableOptions.defaults());
        assertThat(StreamingTables.isEmpty(table)).isTrue();

        appendRows(table, 1, 2);
        table.refresh();
        assertThat(StreamingTables.isEmpty(table)).isFalse();
        assertThat(TableRows.count(table)).isEqualTo(2);

        table.newDelete().deleteFromRowFilter(Expressions.alwaysTrue()).commit();
        assertThat(StreamingTables.isEmpty(table)).isTrue();
        assertThat(table.currentSnapshot()).isNotNull();

        Path location = Path.of(URI.create(table.location()));
        assertThat(Files.exists(location)).isTrue();
        assertThat(StreamingTables.dropIfExists(catalog, ACCOUNTS)).isTrue();
        assertThat(catalog.tableExists(ACCOUNTS)).isFalse();
        assertThat(Files.exists(location.resolve("data"))).isFalse();
        assertThat(StreamingTables.dropIfExists(catalog, ACCOUNTS)).isFalse();
    }

    static void appendRows(Table table, int... ids) throws Exception {
        Schema schema = table.schema();
        String path = table.locationProvider().newDataLocation(UUID.randomUUID() + ".parquet");
        DataWriter<Record> writer =
                Parquet.writeData(table.io().newOutputFile(path))
                        .schema(schema)
                        .createWriterFunc(type -> GenericParquetWriter.create(schema, type))
                        .withSpec(table.spec())
                        .overwrite()
                        .build();
        try (writer) {
            for (int id : ids) {
                GenericRecord r = GenericRecord.create(schema);
                r.setField("id", id);
                r.setField("v", id * 10);
                writer.write(r);
            }
        }
        table.newAppend().appendFile(writer.toDataFile()).commit();
    }

    private static int formatVersion(Table table) {
        return ((HasTableOperations) table).operations().current().formatVersion();
    }
}

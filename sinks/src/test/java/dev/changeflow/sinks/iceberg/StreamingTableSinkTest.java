package dev.changeflow.sinks.iceberg;

import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.ScdType;
import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sinks.quarantine.QuarantineTable;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static dev.changeflow.sinks.iceberg.PacedChangelog.batch;
import static dev.changeflow.sinks.iceberg.PacedChangelog.delete;
import static dev.changeflow.sinks.iceberg.PacedChangelog.insert;
import static dev.changeflow.sinks.iceberg.PacedChangelog.updateAfter;
import static dev.changeflow.sinks.iceberg.PacedChangelog.updateBefore;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Writes hand-built AUTO CDC changelogs through Iceberg's Flink sink on a MiniCluster into a real
 * Hadoop catalog, one batch per checkpoint, and checks the exact rows of every version.
 */
@Timeout(180)
class StreamingTableSinkTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Namespace DB = Namespace.of("db");

    @TempDir Path warehouse;

    private CatalogSettings settings;
    private Catalog catalog;

    @BeforeEach
    void openCatalog() {
        settings = CatalogSettings.localHadoop(warehouse);
        catalog = settings.open();
    }

    @AfterEach
    void closeCatalog() throws Exception {
        if (catalog instanceof Closeable) {
            ((Closeable) catalog).close();
        }
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

    private static StreamExecutionEnvironment env() {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(200);
        return env;
    }

    private static List<String> linesAtVersion(Table table, long version) {
        return TableRows.readAtVersion(table, version).stream()
                .map(TableRows::toCsvLine)
                .sorted()
                .collect(Collectors.toList());
    }

    private static Snapshot snapshotOf(Table table, long version) {
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            if (s.sequenceNumber() == version) {
                return s;
            }
        }
        throw new AssertionError("no version " + version);
    }

    private static Map<String, String> summaryOf(Table table, long version) {
        return new TreeMap<>(snapshotOf(table, version).summary());
    }

    private static List<Record> readDeleteFile(Table table, DeleteFile file) throws Exception {
        List<Record> rows = new ArrayList<>();
        try (CloseableIterable<Record> it =
                Parquet.read(table.io().newInputFile(file.location()))
                        .project(table.schema())
                        .createReaderFunc(
                                fileSchema ->
                                        GenericParquetReaders.buildReader(
                                                table.schema(), fileSchema))
                        .build()) {
            it.forEach(r -> rows.add(r.copy()));
        }
        return rows;
    }

    private static List<DeleteFile> addedDeleteFiles(
            Table table, long version, FileContent content) {
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            if (s.sequenceNumber() == version) {
                List<DeleteFile> out = new ArrayList<>();
                for (DeleteFile f :
                        SnapshotChanges.builderFor(table).snapshot(s).build().addedDeleteFiles()) {
                    if (f.content() == content) {
                        out.add(f);
                    }
                }
                return out;
            }
        }
        throw new AssertionError("no version " + version);
    }

    // ---------------------------------------------------------------------------------- SCD1

    @Test
    void scd1ChangelogCommitsOneVersionPerCheckpointWithExactRows() throws Exception {
        RowType type =
                rowType(
                        "id",
                        new IntType(false),
                        "name",
                        VarCharType.STRING_TYPE,
                        "amount",
                        new BigIntType());
        TableIdentifier id = TableIdentifier.of(DB, "accounts");
        StreamingTables.ensureTable(
                catalog, id, type, List.of("id"), StreamingTableOptions.defaults());

        StreamExecutionEnvironment env = env();
        DataStream<RowData> changelog =
                PacedChangelog.stream(
                        env,
                        type,
                        "changes",
                        List.of(
                                batch(
                                        insert(1, "a", 10L),
                                        insert(2, "b", 20L),
                                        insert(3, "c", 30L)),
                                // update; delete; a key inserted and updated in the same checkpoint
                                batch(
                                        updateBefore(1, "a", 10L),
                                        updateAfter(1, "a2", 11L),
                                        delete(2, "b", 20L),
                                        insert(4, "d", 40L),
                                        updateBefore(4, "d", 40L),
                                        updateAfter(4, "d2", 41L)),
                                // re-insert after delete; two updates of one key in one checkpoint
                                batch(
                                        insert(2, "b3", 22L),
                                        updateBefore(3, "c", 30L),
                                        updateAfter(3, "c2", 31L),
                                        updateBefore(3, "c2", 31L),
                                        updateAfter(3, "c3", 32L)),
                                batch(delete(4, "d2", 41L))));
        StreamingTableSink.write(
                changelog,
                settings.loader(),
                id,
                List.of("id"),
                StreamingTableOptions.defaults(),
                "accounts");
        env.execute("scd1");

        Table table = catalog.loadTable(id);
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,a2,11", "2,b3,22", "3,c3,32");
        assertThat(TableRows.count(table)).isEqualTo(3);
        // one version per checkpoint that carried changes, no empty commits
        assertThat(SnapshotUtil.currentAncestors(table)).hasSize(4);
        assertThat(table.currentSnapshot().sequenceNumber()).isEqualTo(4);
        assertThat(linesAtVersion(table, 1)).containsExactly("1,a,10", "2,b,20", "3,c,30");
        assertThat(linesAtVersion(table, 2)).containsExactly("1,a2,11", "3,c,30", "4,d2,41");
        assertThat(linesAtVersion(table, 3))
                .containsExactly("1,a2,11", "2,b3,22", "3,c3,32", "4,d2,41");
        assertThat(linesAtVersion(table, 4)).containsExactly("1,a2,11", "2,b3,22", "3,c3,32");

        // +I writes no delete: version 1 is a plain append
        Map<String, String> v1 = summaryOf(table, 1);
        assertThat(snapshotOf(table, 1).operation()).isEqualTo("append");
        assertThat(snapshotOf(table, 2).operation()).isEqualTo("overwrite");
        assertThat(v1).doesNotContainKey("added-delete-files").containsEntry("added-records", "3");
        // version 2: equality deletes for keys 1 and 2 (complete rows), a position delete for key 4
        Map<String, String> v2 = summaryOf(table, 2);
        assertThat(v2)
                .containsEntry("added-equality-deletes", "2")
                .containsEntry("added-position-deletes", "1");
        assertThat(v2).containsKey("flink.max-committed-checkpoint-id").containsKey("flink.job-id");
        List<Record> eqRows = new ArrayList<>();
        for (DeleteFile f : addedDeleteFiles(table, 2, FileContent.EQUALITY_DELETES)) {
            assertThat(table.schema().findColumnName(f.equalityFieldIds().get(0))).isEqualTo("id");
            eqRows.addAll(readDeleteFile(table, f));
        }
        assertThat(eqRows.stream().map(TableRows::toCsvLine).sorted())
                .as("equality deletes carry the complete previous rows (A3)")
                .containsExactly("1,a,10", "2,b,20");
    }

    // ---------------------------------------------------------------------------------- K4, K8

    @Test
    void commitsFailingBeforeOrAfterTheCatalogAreRecoveredExactlyOnce() throws Exception {
        CatalogSettings failing =
                CatalogSettings.of(
                        "failing",
                        Map.of(
                                "catalog-impl", FailingHadoopCatalog.class.getName(),
                                "warehouse", warehouse.toUri().toString()));
        RowType type = rowType("id", new IntType(false), "v", new IntType());
        TableIdentifier id = TableIdentifier.of(DB, "flaky");
        StreamingTables.ensureTable(
                catalog, id, type, List.of("id"), StreamingTableOptions.defaults());
        // 2nd snapshot commit never reaches the catalog; 4th commits but its answer is lost
        FailingHadoopCatalog.reset(
                Map.of(
                        2,
                        FailingHadoopCatalog.Failure.BEFORE_COMMIT,
                        4,
                        FailingHadoopCatalog.Failure.AFTER_COMMIT));

        List<List<PacedChangelog.Change>> batches = new ArrayList<>();
        batches.add(batch(insert(1, 0), insert(2, 0), insert(3, 0)));
        for (int i = 1; i <= 6; i++) {
            batches.add(
                    batch(
                            updateBefore(1, i - 1),
                            updateAfter(1, i),
                            updateBefore(2, i - 1),
                            updateAfter(2, i),
                            insert(10 + i, i)));
        }
        batches.add(batch(delete(3, 0)));

        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 5);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(200);
        DataStream<RowData> changelog = PacedChangelog.stream(env, type, "changes", batches);
        StreamingTableSink.write(
                changelog,
                failing.loader(),
                id,
                List.of("id"),
                StreamingTableOptions.defaults(),
                "flaky");
        env.execute("k4");

        assertThat(FailingHadoopCatalog.INJECTED.get()).isEqualTo(2);
        Table table = catalog.loadTable(id);
        assertThat(TableRows.toCsvLines(table))
                .containsExactly("1,6", "2,6", "11,1", "12,2", "13,3", "14,4", "15,5", "16,6");
        List<String> committed = new ArrayList<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            committed.add(s.summary().get("flink.max-committed-checkpoint-id"));
        }
        assertThat(committed).as("no checkpoint committed twice").doesNotHaveDuplicates();
    }

    // ---------------------------------------------------------------------------------- K1, K2

    @Test
    void partitionMovingUpdatesAndNullPartitionDeletesLeaveNoStaleRows() throws Exception {
        RowType type =
                rowType(
                        "id",
                        new IntType(false),
                        "region",
                        VarCharType.STRING_TYPE,
                        "v",
                        new IntType());
        TableIdentifier id = TableIdentifier.of(DB, "by_region");
        StreamingTableOptions options =
                StreamingTableOptions.builder().partitionBy("region").build();
        StreamingTables.ensureTable(catalog, id, type, List.of("id"), options);

        StreamExecutionEnvironment env = env();
        DataStream<RowData> changelog =
                PacedChangelog.stream(
                        env,
                        type,
                        "changes",
                        List.of(
                                batch(insert(1, "eu", 1), insert(2, "us", 2), insert(3, null, 3)),
                                // K1: key 1 moves eu -> us; K2: the stored row of key 3 has a null
                                // partition value
                                batch(
                                        updateBefore(1, "eu", 1),
                                        updateAfter(1, "us", 10),
                                        delete(3, null, 3)),
                                // key 1 moves twice inside one checkpoint (back to eu); key 5
                                // inserted and moved
                                batch(
                                        updateBefore(1, "us", 10),
                                        updateAfter(1, "ap", 11),
                                        updateBefore(1, "ap", 11),
                                        updateAfter(1, "eu", 12),
                                        insert(5, "eu", 5),
                                        updateBefore(5, "eu", 5),
                                        updateAfter(5, "us", 6))));
        StreamingTableSink.write(
                changelog, settings.loader(), id, List.of("id"), options, "by-region");
        env.execute("k1");

        Table table = catalog.loadTable(id);
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,eu,12", "2,us,2", "5,us,6");
        assertThat(linesAtVersion(table, 2)).containsExactly("1,us,10", "2,us,2");
        assertThat(regionRows(table, "eu")).containsExactly("1,eu,12");
        assertThat(regionRows(table, "us")).containsExactly("2,us,2", "5,us,6");
        assertThat(regionRows(table, "ap")).isEmpty();
        assertThat(TableRows.read(table, Expressions.isNull("region"))).isEmpty();
        // the equality deletes of version 2 carry the complete old rows, filed under their old
        // partitions
        List<String> filed = new ArrayList<>();
        for (DeleteFile f : addedDeleteFiles(table, 2, FileContent.EQUALITY_DELETES)) {
            for (Record r : readDeleteFile(table, f)) {
                filed.add(f.partition().get(0, String.class) + " <- " + TableRows.toCsvLine(r));
            }
        }
        assertThat(filed).containsExactlyInAnyOrder("eu <- 1,eu,1", "null <- 3,,3");
    }

    private static List<String> regionRows(Table table, String region) {
        return TableRows.read(table, Expressions.equal("region", region)).stream()
                .map(TableRows::toCsvLine)
                .sorted()
                .collect(Collectors.toList());
    }

    // ---------------------------------------------------------------------------------- SCD2 on v3

    @Test
    void scd2VersionsAreClosedAndSplitOnFormatV3() throws Exception {
        RowType type =
                rowType(
                        "id",
                        new IntType(false),
                        "name",
                        VarCharType.STRING_TYPE,
                        "__START_AT",
                        new BigIntType(false),
                        "__END_AT",
                        new BigIntType());
        TableIdentifier id = TableIdentifier.of(DB, "customers_history");
        StreamingTableOptions options = StreamingTableOptions.builder().formatVersion(3).build();
        List<String> identifier = List.of("id", "__START_AT");
        StreamingTables.ensureTable(catalog, id, type, identifier, options);

        StreamExecutionEnvironment env = env();
        DataStream<RowData> changelog =
                PacedChangelog.stream(
                        env,
                        type,
                        "changes",
                        List.of(
                                batch(insert(1, "a", 1L, null), insert(2, "x", 1L, null)),
                                // a change closes version [1, ∞) at 5 and opens [5, ∞); key 3
                                // opened and closed at once
                                batch(
                                        updateBefore(1, "a", 1L, null),
                                        updateAfter(1, "a", 1L, 5L),
                                        insert(1, "b", 5L, null),
                                        insert(3, "p", 2L, null),
                                        updateBefore(3, "p", 2L, null),
                                        updateAfter(3, "p", 2L, 4L)),
                                // a late change at 3 splits [1, 5) into [1, 3) and [3, 5)
                                batch(
                                        updateBefore(1, "a", 1L, 5L),
                                        updateAfter(1, "a", 1L, 3L),
                                        insert(1, "c", 3L, 5L)),
                                // a delete at 7 closes the current version of key 2
                                batch(
                                        updateBefore(2, "x", 1L, null),
                                        updateAfter(2, "x", 1L, 7L))));
        StreamingTableSink.write(changelog, settings.loader(), id, identifier, options, "history");
        env.execute("scd2");

        Table table = catalog.loadTable(id);
        assertThat(TableRows.toCsvLines(table))
                .containsExactly("1,a,1,3", "1,c,3,5", "1,b,5,", "2,x,1,7", "3,p,2,4");
        assertThat(linesAtVersion(table, 2))
                .containsExactly("1,a,1,5", "1,b,5,", "2,x,1,", "3,p,2,4");
        Map<String, String> v2 = summaryOf(table, 2);
        // v3: the same-checkpoint rewrite of key 3 is a deletion vector, not a position-delete file
        assertThat(v2).containsEntry("added-dvs", "1").containsEntry("added-equality-deletes", "1");
    }

    /**
     * SCD2 with a multi-column SEQUENCE BY (A4): the table is created from the flow's own target
     * type and identifier fields ({@link AutoCdcSpec}): {@code __START_AT} / {@code __END_AT} are
     * STRUCTs of the sequence columns, and the identifier fields are the key and the fields nested
     * in {@code __START_AT}, so equality deletes close and split versions by (id, file, pos).
     */
    @Test
    void scd2WithAStructSequenceCreatesTheTableAndClosesVersions() throws Exception {
        RowType source =
                rowType(
                        "id",
                        new IntType(false),
                        "name",
                        VarCharType.STRING_TYPE,
                        "file",
                        VarCharType.STRING_TYPE,
                        "pos",
                        new BigIntType());
        AutoCdcSpec spec =
                AutoCdcSpec.builder("s", source)
                        .keys("id")
                        .sequenceBy("file", "pos")
                        .columns(ColumnSelection.include(List.of("id", "name")))
                        .scdType(ScdType.TYPE_2)
                        .build();
        TableIdentifier id = TableIdentifier.of(DB, "binlog_history");
        StreamingTableOptions options = StreamingTableOptions.builder().formatVersion(2).build();
        StreamingTables.ensureTable(
                catalog, id, spec.targetType(), spec.identifierFields(), options);
        Table created = catalog.loadTable(id);
        assertThat(created.schema().identifierFieldNames())
                .containsExactlyInAnyOrder("id", "__START_AT.file", "__START_AT.pos");
        assertThat(created.schema().findField("__START_AT").type().toString())
                .isEqualTo("struct<5: file: required string, 6: pos: required long>");
        assertThat(created.schema().findField("__END_AT").isOptional()).isTrue();
        // the same definition again: the existing table matches
        StreamingTables.ensureTable(
                catalog, id, spec.targetType(), spec.identifierFields(), options);

        Object[] b1 = {"bin.1", 5L};
        Object[] b2 = {"bin.2", 1L};
        Object[] b2later = {"bin.2", 7L};
        StreamExecutionEnvironment env = env();
        DataStream<RowData> changelog =
                PacedChangelog.stream(
                        env,
                        spec.targetType(),
                        "changes",
                        List.of(
                                batch(insert(1, "a", b1, null), insert(2, "x", b1, null)),
                                // a change of 1 at (bin.2, 1) closes [(bin.1, 5), ∞); key 3 is
                                // opened and closed in one checkpoint (a position delete)
                                batch(
                                        updateBefore(1, "a", b1, null),
                                        updateAfter(1, "a", b1, b2),
                                        insert(1, "b", b2, null),
                                        insert(3, "p", b1, null),
                                        updateBefore(3, "p", b1, null),
                                        updateAfter(3, "p", b1, b2later)),
                                // a delete at (bin.2, 7) closes the current version of key 2
                                batch(
                                        updateBefore(2, "x", b1, null),
                                        updateAfter(2, "x", b1, b2later))));
        StreamingTableSink.write(
                changelog, settings.loader(), id, spec.identifierFields(), options, "struct-seq");
        env.execute("scd2 struct sequence");

        Table table = catalog.loadTable(id);
        assertThat(linesAtVersion(table, 3))
                .containsExactly(
                        "1,a,\"(bin.1,5)\",\"(bin.2,1)\"",
                        "1,b,\"(bin.2,1)\",",
                        "2,x,\"(bin.1,5)\",\"(bin.2,7)\"",
                        "3,p,\"(bin.1,5)\",\"(bin.2,7)\"");
        assertThat(linesAtVersion(table, 2))
                .containsExactly(
                        "1,a,\"(bin.1,5)\",\"(bin.2,1)\"",
                        "1,b,\"(bin.2,1)\",",
                        "2,x,\"(bin.1,5)\",",
                        "3,p,\"(bin.1,5)\",\"(bin.2,7)\"");
        assertThat(summaryOf(table, 2))
                .containsEntry("added-equality-deletes", "1")
                .containsEntry("added-position-deletes", "1");
        // the delete files hold the key and the nested sequence fields as equality fields
        DeleteFile eq = addedDeleteFiles(table, 3, FileContent.EQUALITY_DELETES).get(0);
        assertThat(eq.equalityFieldIds())
                .containsExactlyInAnyOrderElementsOf(table.schema().identifierFieldIds());
    }

    // ----------------------------------------------------------------------------------
    // append-only

    @Test
    void appendOnlyTableAndQuarantineTableReceiveEveryRow() throws Exception {
        RowType history =
                rowType(
                        "tid",
                        new IntType(),
                        "aid",
                        new IntType(),
                        "delta",
                        new IntType(),
                        "mtime",
                        new TimestampType(6),
                        "filler",
                        VarCharType.STRING_TYPE);
        TableIdentifier historyId = TableIdentifier.of(DB, "history");
        StreamingTableOptions options =
                StreamingTableOptions.builder().partitionBy("days(mtime)").build();
        StreamingTables.ensureTable(catalog, historyId, history, List.of(), options);
        QuarantineTable.ensure(catalog, DB);

        StreamExecutionEnvironment env = env();
        LocalDateTime t = LocalDateTime.parse("2026-11-30T03:17:21.882801");
        DataStream<RowData> rows =
                PacedChangelog.stream(
                        env,
                        history,
                        "history",
                        List.of(
                                batch(
                                        insert(4, 71926, -4018, t, "  "),
                                        insert(1, 83876, 4635, t.plusNanos(1_556_000), null)),
                                batch(
                                        insert(
                                                4, 71926, -4018, t,
                                                "  ")), // an identical row is a second row
                                batch(
                                        insert(
                                                2,
                                                1,
                                                7,
                                                t.plusDays(1).withNano(500_000_000),
                                                "x,y"))));
        StreamingTableSink.append(rows, settings.loader(), historyId, options, "history");

        DataStream<RowData> quarantine =
                env.fromData(
                                List.of(
                                        QuarantineRecords.of(
                                                "accounts",
                                                "pgbench.public.accounts",
                                                0,
                                                17L,
                                                "{not json".getBytes(StandardCharsets.UTF_8),
                                                QuarantineReason.NOT_JSON,
                                                "line 17 is not JSON",
                                                Instant.parse("2026-11-30T03:17:21.123Z")
                                                        .toEpochMilli())),
                                InternalTypeInfo.of(QuarantineRecords.ROW_TYPE))
                        .setParallelism(1);
        QuarantineTable.append(quarantine, settings.loader(), DB, "quarantine");
        env.execute("append");

        Table table = catalog.loadTable(historyId);
        assertThat(TableRows.toCsvLines(table))
                .containsExactly(
                        "1,83876,4635,2026-11-30 03:17:21.884357,",
                        "2,1,7,2026-12-01 03:17:21.5,\"x,y\"",
                        "4,71926,-4018,2026-11-30 03:17:21.882801,  ",
                        "4,71926,-4018,2026-11-30 03:17:21.882801,  ");
        assertThat(table.currentSnapshot().summary()).containsEntry("total-records", "4");
        assertThat(table.spec().fields()).hasSize(1);

        Table q = catalog.loadTable(QuarantineTable.identifier(DB));
        assertThat(TableRows.toCsvLines(q))
                .containsExactly(
                        "accounts,pgbench.public.accounts,0,17,\\x7b6e6f74206a736f6e,NOT_JSON,line 17 is not JSON,"
                                + "2026-11-30 03:17:21.123+00");
    }

    @Test
    void appendRefusesTablesWithIdentifierFieldsAndChangelogNeedsEqualityFields() {
        RowType type = rowType("id", new IntType(false), "v", new IntType());
        TableIdentifier id = TableIdentifier.of(DB, "keyed");
        StreamingTables.ensureTable(
                catalog, id, type, List.of("id"), StreamingTableOptions.defaults());
        StreamExecutionEnvironment env = env();
        DataStream<RowData> rows =
                PacedChangelog.stream(env, type, "rows", List.of(batch(insert(1, 1))));

        assertThatThrownBy(
                        () ->
                                StreamingTableSink.append(
                                        rows,
                                        settings.loader(),
                                        id,
                                        StreamingTableOptions.defaults(),
                                        "keyed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table db.keyed has identifier fields [id]");
        assertThatThrownBy(
                        () ->
                                StreamingTableSink.write(
                                        rows,
                                        settings.loader(),
                                        id,
                                        List.of(),
                                        StreamingTableOptions.defaults(),
                                        "keyed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs equality fields");
    }
}

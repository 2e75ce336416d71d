package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;

import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/** Change computation and row shape of the change feed: F1, F2, F5 (exact rows). */
class TableChangesTest {

    @TempDir Path warehouse;

    private CdfTestTables tables;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
    }

    private static List<String> changes(Table table, long start, long end) {
        return CdfRows.changes(table, start, end);
    }

    /** F1: columns, metadata columns, types, non-null, Record and RowData forms. */
    @Test
    void f1OutputShape() throws Exception {
        Table table = tables.create("t", 2);
        table.newAppend().appendFile(tables.dataFile(table, row(1L, "a", "eu"))).commit();
        long committed = table.currentSnapshot().timestampMillis();

        TableChanges changes = TableChanges.forTable(table).startingVersion(1).build();

        assertThat(changes.schema().asStruct())
                .isEqualTo(
                        Types.StructType.of(
                                Types.NestedField.required(1, "id", Types.LongType.get()),
                                Types.NestedField.optional(2, "name", Types.StringType.get()),
                                Types.NestedField.optional(3, "region", Types.StringType.get()),
                                ChangeFeedColumns.CHANGE_TYPE_FIELD,
                                ChangeFeedColumns.COMMIT_VERSION_FIELD,
                                ChangeFeedColumns.COMMIT_TIMESTAMP_FIELD));
        assertThat(changes.rowType().asSummaryString())
                .isEqualTo(
                        "ROW<`id` BIGINT NOT NULL, `name` STRING, `region` STRING, `_change_type` STRING NOT NULL, "
                                + "`_commit_version` BIGINT NOT NULL, `_commit_timestamp` TIMESTAMP_LTZ(3) NOT NULL> NOT NULL");
        try (CloseableIterable<Record> rows = changes.read()) {
            assertThat(rows)
                    .containsExactly(
                            record(
                                    changes.schema(),
                                    1L,
                                    "a",
                                    "eu",
                                    "insert",
                                    1L,
                                    CdfTestTables.utc(committed)));
        }
        try (CloseableIterable<RowData> rows = changes.readRowData()) {
            List<RowData> list = new ArrayList<>();
            rows.forEach(list::add);
            assertThat(list).hasSize(1);
            RowData data = list.get(0);
            assertThat(data.getLong(0)).isEqualTo(1L);
            assertThat(data.getString(1).toString()).isEqualTo("a");
            assertThat(data.getString(3).toString()).isEqualTo("insert");
            assertThat(data.getLong(4)).isEqualTo(1L);
            assertThat(data.getTimestamp(5, 3)).isEqualTo(TimestampData.fromEpochMillis(committed));
        }
    }

    private static Record record(Schema schema, Object... values) {
        return row(schema, values);
    }

    /** F2: appended rows are inserts. */
    @Test
    void f2AppendsAreInserts() {
        Table table = tables.create("t", 2);
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us")))
                .commit();
        table.newAppend().appendFile(tables.dataFile(table, row(3L, "c", "eu"))).commit();

        assertThat(changes(table, 1, 2))
                .containsExactly(
                        "1 insert (1, a, eu)", "1 insert (2, b, us)", "2 insert (3, c, eu)");
    }

    /**
     * F2: equality deletes carrying complete rows (changeflow's tables): pre-image from the file.
     */
    @Test
    void f2EqualityDeletesCarryingRows() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();
        // update 1, delete 2, insert 3 — as changeflow's sink writes them
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema(), row(1L, "a", "eu"), row(2L, "b", "us")))
                .addRows(tables.dataFile(table, row(1L, "a2", "eu"), row(3L, "c", "eu")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();

        assertThat(changes(table, 2, 2))
                .containsExactly(
                        "2 update_preimage (1, a, eu)",
                        "2 update_postimage (1, a2, eu)",
                        "2 delete (2, b, us)",
                        "2 insert (3, c, eu)");
    }

    /**
     * F2/design.md: with carried rows the pre-image is the delete file's row itself (no lookup of
     * the parent snapshot): a deliberately different carried row shows which path was taken.
     */
    @Test
    void f2CarriedRowIsTakenFromTheDeleteFile() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(1L, "carried", "eu")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();

        assertThat(changes(table, 2, 2)).containsExactly("2 delete (1, carried, eu)");
    }

    /**
     * F2: carried rows are trusted only on an ancestry written by changeflow's changelog writer
     * alone. Another writer's commit (here an upsert with a key-only equality delete) makes the
     * writer's carried rows stale for every later version, even when the parent is the writer's
     * own: the pre-images are then looked up in the parent. Commits that change no row (an empty
     * append) and {@code replace} snapshots keep the lineage.
     */
    @Test
    void f2CarriedRowsAfterAnotherWriterAreLookedUp() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        DataFile first = tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"));
        table.newAppend()
                .appendFile(first)
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();
        table.newAppend().set(ChangeFeedOptions.CHANGELOG_WRITER, "other").commit(); // empty
        DataFile copy = tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"));
        table.newRewrite().rewriteFiles(Set.of(first), Set.of(copy)).commit(); // compaction
        // v4: still changeflow's own lineage: the carried row is taken as it is
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(2L, "carried", "us")))
                .addRows(tables.dataFile(table, row(2L, "b4", "us")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();
        // v5: another writer updates 1 (key-only equality delete)
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema().select("id"), row(1L, null, null)))
                .addRows(tables.dataFile(table, row(1L, "a5", "eu")))
                .commit();
        // v6: changeflow appends only; v7: changeflow updates 1 and 2 carrying its stale rows
        table.newAppend()
                .appendFile(tables.dataFile(table, row(3L, "c", "eu")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema(), row(1L, "a", "eu"), row(2L, "b4", "us")))
                .addRows(tables.dataFile(table, row(1L, "a7", "eu"), row(2L, "b7", "us")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();

        assertThat(changes(table, 4, 7))
                .containsExactly(
                        "4 update_preimage (2, carried, us)",
                        "4 update_postimage (2, b4, us)",
                        "5 update_preimage (1, a, eu)",
                        "5 update_postimage (1, a5, eu)",
                        "6 insert (3, c, eu)",
                        "7 update_preimage (1, a5, eu)",
                        "7 update_postimage (1, a7, eu)",
                        "7 update_preimage (2, b4, us)",
                        "7 update_postimage (2, b7, us)");
    }

    /**
     * F2: an ancestry cut by another tool's expiry (Iceberg's API here, as Spark's {@code
     * expire_snapshots}) may have held another writer's commits, so carried rows are no longer
     * trusted: the deliberately different carried row shows the parent lookup is taken. The same
     * cut made by {@code ChangeFeedExpiry} records the sole writer and keeps trusting them.
     */
    @Test
    void f2AncestryCutByAnotherToolsExpiryIsNotTrusted() {
        for (boolean ours : new boolean[] {false, true}) {
            Table table =
                    tables.create(
                            "cut" + ours,
                            CdfTestTables.SCHEMA,
                            PartitionSpec.unpartitioned(),
                            2,
                            Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
            for (long id = 1; id <= 2; id++) {
                table.newAppend()
                        .appendFile(tables.dataFile(table, row(id, "r" + id, "eu")))
                        .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                        .commit();
            }
            table.newRowDelta()
                    .addDeletes(
                            tables.equalityDeletes(table, table.schema(), row(1L, "carried", "eu")))
                    .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                    .commit();
            table.refresh();
            if (ours) {
                ChangeFeedExpiry.forTable(table)
                        .olderThan(Instant.now().plusSeconds(60))
                        .retainLast(2)
                        .execute();
            } else {
                table.expireSnapshots()
                        .expireOlderThan(System.currentTimeMillis() + 60_000)
                        .retainLast(2)
                        .commit();
            }
            table.refresh();
            assertThat(table.snapshots()).hasSize(2);
            assertThat(changes(table, 3, 3))
                    .as("expired by changeflow: " + ours)
                    .containsExactly(ours ? "3 delete (1, carried, eu)" : "3 delete (1, r1, eu)");
        }
    }

    /**
     * F2: once another writer's commit is expired by {@code ChangeFeedExpiry}, the table remembers
     * it ({@value ChangeFeedOptions#OTHER_WRITER_COMMITS_EXPIRED}), so a later changeflow version
     * whose carried row is stale still gets the row it deleted; a table without another writer
     * keeps trusting carried rows after expiry.
     */
    @Test
    void f2ExpiredOtherWriterCommitsKeepCarriedRowsUntrusted() {
        for (boolean otherWriter : new boolean[] {true, false}) {
            Table table =
                    tables.create(
                            "t" + otherWriter,
                            CdfTestTables.SCHEMA,
                            PartitionSpec.unpartitioned(),
                            2,
                            Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
            table.newAppend()
                    .appendFile(tables.dataFile(table, row(1L, "a", "eu")))
                    .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                    .commit();
            // v2: another writer (or, for comparison, the flow) updates 1
            table.newRowDelta()
                    .addDeletes(
                            tables.equalityDeletes(
                                    table, table.schema(), row(1L, otherWriter ? "x" : "a", "eu")))
                    .addRows(tables.dataFile(table, row(1L, "a2", "eu")))
                    .set(ChangeFeedOptions.CHANGELOG_WRITER, otherWriter ? "other" : "flow")
                    .commit();
            table.newAppend()
                    .appendFile(tables.dataFile(table, row(2L, "b", "us")))
                    .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                    .commit();
            // v4: the flow deletes 1 carrying the row of its state: (1, a) after another writer
            table.newRowDelta()
                    .addDeletes(
                            tables.equalityDeletes(
                                    table, table.schema(), row(1L, otherWriter ? "a" : "a2", "eu")))
                    .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                    .commit();
            table.refresh();
            ChangeFeedExpiry.forTable(table)
                    .olderThan(Instant.now().plusSeconds(60))
                    .retainLast(2)
                    .execute();
            table.refresh();

            assertThat(table.snapshots()).hasSize(2);
            if (otherWriter) {
                assertThat(table.properties())
                        .containsEntry(ChangeFeedOptions.OTHER_WRITER_COMMITS_EXPIRED, "true");
            } else {
                assertThat(table.properties())
                        .doesNotContainKey(ChangeFeedOptions.OTHER_WRITER_COMMITS_EXPIRED)
                        .containsEntry(ChangeFeedOptions.EXPIRED_HISTORY_WRITER, "flow");
            }
            assertThat(changes(table, 4, 4))
                    .as("other writer: " + otherWriter)
                    .containsExactly("4 delete (1, a2, eu)");
        }
    }

    /**
     * F2 on an SCD type 2 table with a multi-column sequence (A4): {@code __START_AT} is a STRUCT
     * whose nested fields are identifier fields; versions pair by (id, __START_AT), with carried
     * rows and with the parent lookup alike.
     */
    @Test
    void f2StructPeriodColumnsPairByNestedIdentifierFields() {
        Types.StructType period =
                Types.StructType.of(
                        Types.NestedField.required(5, "file", Types.StringType.get()),
                        Types.NestedField.required(6, "pos", Types.LongType.get()));
        Types.StructType openPeriod =
                Types.StructType.of(
                        Types.NestedField.optional(7, "file", Types.StringType.get()),
                        Types.NestedField.optional(8, "pos", Types.LongType.get()));
        Schema schema =
                new Schema(
                        List.of(
                                Types.NestedField.required(1, "id", Types.LongType.get()),
                                Types.NestedField.optional(2, "name", Types.StringType.get()),
                                Types.NestedField.required(3, "__START_AT", period),
                                Types.NestedField.optional(4, "__END_AT", openPeriod)),
                        Set.of(1, 5, 6));
        for (boolean marked : new boolean[] {true, false}) {
            Table table =
                    tables.create(
                            "scd2" + marked,
                            schema,
                            PartitionSpec.unpartitioned(),
                            2,
                            Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
            String writer = marked ? "flow" : null;
            table.newAppend()
                    .appendFile(
                            tables.dataFile(
                                    table,
                                    scd2Row(schema, 1L, "a", "b1", 5L, null, null),
                                    scd2Row(schema, 2L, "x", "b1", 5L, null, null)))
                    .set(ChangeFeedOptions.CHANGELOG_WRITER, marked ? "flow" : "other")
                    .commit();
            // 1 changes at (b2, 1): its version [(b1, 5), ∞) is closed, [(b2, 1), ∞) opened
            org.apache.iceberg.RowDelta delta =
                    table.newRowDelta()
                            .addDeletes(
                                    tables.equalityDeletes(
                                            table,
                                            new int[] {1, 5, 6},
                                            schema,
                                            scd2Row(schema, 1L, "a", "b1", 5L, null, null)))
                            .addRows(
                                    tables.dataFile(
                                            table,
                                            scd2Row(schema, 1L, "a", "b1", 5L, "b2", 1L),
                                            scd2Row(schema, 1L, "b", "b2", 1L, null, null)));
            if (writer != null) {
                delta.set(ChangeFeedOptions.CHANGELOG_WRITER, writer);
            }
            delta.commit();

            assertThat(changes(table, 2, 2))
                    .as("carried rows trusted: " + marked)
                    .containsExactly(
                            "2 update_preimage (1, a, Record(b1, 5), null)",
                            "2 update_postimage (1, a, Record(b1, 5), Record(b2, 1))",
                            "2 insert (1, b, Record(b2, 1), null)");
        }
    }

    private static Record scd2Row(
            Schema schema,
            long id,
            String name,
            String startFile,
            long startPos,
            String endFile,
            Long endPos) {
        Record start = GenericRecord.create(schema.findField("__START_AT").type().asStructType());
        start.set(0, startFile);
        start.set(1, startPos);
        Record end = null;
        if (endFile != null) {
            end = GenericRecord.create(schema.findField("__END_AT").type().asStructType());
            end.set(0, endFile);
            end.set(1, endPos);
        }
        return row(schema, id, name, start, end);
    }

    /**
     * F2: a snapshot of another changelog writer (another flow's uid suffix) on a lineage of one
     * writer is another writer too: its carried rows are not trusted, nor are the first writer's
     * after it.
     */
    @Test
    void f2CarriedRowsOfASecondChangelogWriterAreLookedUp() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(1L, "stale", "eu")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "second-flow")
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(2L, "stale", "us")))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, "flow")
                .commit();

        assertThat(changes(table, 2, 3))
                .containsExactly("2 delete (1, a, eu)", "3 delete (2, b, us)");
    }

    /**
     * F2: key-only equality deletes (Iceberg's upsert sink): pre-images come from the parent
     * snapshot, with earlier deletes applied; a delete of a key that does not exist yields nothing.
     */
    @Test
    void f2EqualityDeletesLookedUpInParent() {
        Table table = tables.create("t", 2);
        Schema keyOnly = table.schema().select("id");
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us")))
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, keyOnly, row(1L, null, null)))
                .addRows(tables.dataFile(table, row(1L, "a2", "eu")))
                .commit();
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table,
                                keyOnly,
                                row(1L, null, null),
                                row(2L, null, null),
                                row(9L, null, null)))
                .addRows(tables.dataFile(table, row(1L, "a3", "us"), row(9L, "z", "us")))
                .commit();

        assertThat(changes(table, 2, 3))
                .containsExactly(
                        "2 update_preimage (1, a, eu)",
                        "2 update_postimage (1, a2, eu)",
                        "3 update_preimage (1, a2, eu)",
                        "3 update_postimage (1, a3, us)",
                        "3 delete (2, b, us)",
                        "3 insert (9, z, us)");
    }

    /** F2: with the carry-rows property but key-only delete files, the parent lookup is used. */
    @Test
    void f2CarryRowsPropertyWithKeyOnlyFilesFallsBackToLookup() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        table.newAppend().appendFile(tables.dataFile(table, row(1L, "a", "eu"))).commit();
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema().select("id"), row(1L, null, null)))
                .commit();

        assertThat(changes(table, 2, 2)).containsExactly("2 delete (1, a, eu)");
    }

    /**
     * F2: v2 position deletes remove rows; a key written twice in one commit shows its last value.
     */
    @Test
    void f2PositionDeletes() {
        Table table = tables.create("t", 2);
        DataFile first =
                tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"), row(3L, "c", "eu"));
        table.newAppend().appendFile(first).commit();
        table.newRowDelta().addDeletes(tables.positionDeletes(table, first, 1)).commit();
        // one commit inserts 4 twice: the first copy is removed by a position delete in the same
        // commit
        DataFile second = tables.dataFile(table, row(4L, "d", "eu"), row(4L, "d2", "eu"));
        table.newRowDelta()
                .addRows(second)
                .addDeletes(tables.positionDeletes(table, second, 0))
                .addDeletes(tables.positionDeletes(table, first, 0, 1))
                .commit();

        assertThat(changes(table, 2, 3))
                .containsExactly(
                        "2 delete (2, b, us)", "3 delete (1, a, eu)", "3 insert (4, d2, eu)");
    }

    /** F2: v3 deletion vectors; a replacing DV yields only the newly deleted rows. */
    @Test
    void f2DeletionVectors() {
        Table table = tables.create("t", 3);
        DataFile file =
                tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"), row(3L, "c", "eu"));
        table.newAppend().appendFile(file).commit();
        DeleteFile dv = tables.deletionVector(table, file, 0);
        table.newRowDelta()
                .addDeletes(dv)
                .addRows(tables.dataFile(table, row(1L, "a2", "eu")))
                .commit();
        DeleteFile committedDv =
                table.currentSnapshot().addedDeleteFiles(table.io()).iterator().next();
        table.newRowDelta()
                .validateFromSnapshot(table.currentSnapshot().snapshotId())
                .removeDeletes(committedDv)
                .addDeletes(tables.deletionVector(table, file, 0, 2))
                .commit();

        assertThat(changes(table, 2, 3))
                .containsExactly(
                        "2 update_preimage (1, a, eu)",
                        "2 update_postimage (1, a2, eu)",
                        "3 delete (3, c, eu)");
    }

    /** F2: a copy-on-write rewrite: carried-over rows cancel, the changed row is an update. */
    @Test
    void f2CopyOnWriteOverwrite() {
        Table table = tables.create("t", 2);
        DataFile file =
                tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"), row(3L, "c", "eu"));
        table.newAppend().appendFile(file).commit();
        DataFile rewritten = tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b2", "us"));
        table.newOverwrite().deleteFile(file).addFile(rewritten).commit();

        assertThat(changes(table, 2, 2))
                .containsExactly(
                        "2 update_preimage (2, b, us)",
                        "2 update_postimage (2, b2, us)",
                        "2 delete (3, c, eu)");
    }

    /** F2: a compaction (replace) snapshot yields nothing, but the version exists. */
    @Test
    void f2CompactionYieldsNothing() {
        Table table = tables.create("t", 2);
        DataFile a = tables.dataFile(table, row(1L, "a", "eu"));
        DataFile b = tables.dataFile(table, row(2L, "b", "us"));
        table.newAppend().appendFile(a).appendFile(b).commit();
        table.newRewrite()
                .rewriteFiles(
                        Set.of(a, b),
                        Set.of(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"))))
                .commit();

        TableChanges changes = TableChanges.forTable(table).startingVersion(2).build();
        assertThat(table.currentSnapshot().operation()).isEqualTo("replace");
        assertThat(changes.versions()).containsExactly(2L);
        assertThat(CdfRows.render(changes)).isEmpty();
    }

    /** F2: a key deleted in one version and re-inserted identically later: delete, then insert. */
    @Test
    void f2DeleteThenIdenticalReinsert() {
        Table table = tables.create("t", 2);
        DataFile file = tables.dataFile(table, row(1L, "a", "eu"));
        table.newAppend().appendFile(file).commit();
        table.newRowDelta().addDeletes(tables.positionDeletes(table, file, 0)).commit();
        table.newAppend().appendFile(tables.dataFile(table, row(1L, "a", "eu"))).commit();

        assertThat(changes(table, 2, 3))
                .containsExactly("2 delete (1, a, eu)", "3 insert (1, a, eu)");
    }

    /** F2: an update moving a row to another partition: preimage old values, postimage new ones. */
    @Test
    void f2UpdateAcrossPartitions() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.builderFor(CdfTestTables.SCHEMA).identity("region").build(),
                        2,
                        Map.of());
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "eu")))
                .appendFile(tables.dataFile(table, row(3L, "c", "us")))
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(1L, "a", "eu")))
                .addRows(tables.dataFile(table, row(1L, "a", "us")))
                .commit();

        assertThat(changes(table, 2, 2))
                .containsExactly("2 update_preimage (1, a, eu)", "2 update_postimage (1, a, us)");
    }

    /** F2: tables without identifier fields: plain delete + insert; carry-overs still cancel. */
    @Test
    void f2WithoutIdentifierFields() {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.KEYLESS_SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of());
        Schema s = CdfTestTables.KEYLESS_SCHEMA;
        DataFile file = tables.dataFile(table, row(s, 1L, "a", "eu"), row(s, 2L, "b", "us"));
        table.newAppend().appendFile(file).commit();
        table.newOverwrite()
                .deleteFile(file)
                .addFile(tables.dataFile(table, row(s, 1L, "a", "eu"), row(s, 2L, "b2", "us")))
                .commit();

        assertThat(changes(table, 2, 2))
                .containsExactly("2 delete (2, b, us)", "2 insert (2, b2, us)");
    }

    /** F5: the ending version's schema; a column added later is null in earlier versions. */
    @Test
    void f5SchemaOfEndingVersion() {
        Table table = tables.create("t", 2);
        table.newAppend().appendFile(tables.dataFile(table, row(1L, "a", "eu"))).commit();
        table.updateSchema().addColumn("score", Types.IntegerType.get()).commit();
        table.newAppend()
                .appendFile(tables.dataFile(table, row(table.schema(), 2L, "b", "us", 7)))
                .commit();

        assertThat(changes(table, 1, 2))
                .containsExactly("1 insert (1, a, eu, null)", "2 insert (2, b, us, 7)");
        assertThat(changes(table, 1, 1)).containsExactly("1 insert (1, a, eu)");
    }
}

package dev.changeflow.sources.cdf;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * F2 on format v3 tables without identifier fields: row identity is the row lineage {@code _row_id}
 * (design.md "Iceberg mapping of the change feed", "Row identity"). Real tables built with
 * Iceberg's Java API in a {@code HadoopCatalog}; exact rows.
 */
class TableChangesRowLineageTest {

    static final Schema S = CdfTestTables.KEYLESS_SCHEMA;

    @TempDir Path warehouse;

    private CdfTestTables tables;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
    }

    private static List<String> changes(Table table, long start, long end) {
        return CdfRows.changes(table, start, end);
    }

    /**
     * Commits four versions to a v3 table without identifier fields (ids 1..7 are a data column,
     * not an identity):
     *
     * <ol>
     *   <li>append of file A: ids 1..5, row ids 0..4 inherited from A's first row id;
     *   <li>copy-on-write overwrite of A by B, written as a lineage-keeping engine does: ids 1 and
     *       5 carried over and ids 2, 3 updated, each with its {@code _row_id} stored; id 4
     *       deleted; id 6 inserted (row id inherited: 5 + its position 4 = 9);
     *   <li>compaction ({@code replace}) of B into C keeping every {@code _row_id};
     *   <li>merge-on-read: a deletion vector on C removes id 1 (row id 0) and id 5 (row id 4), file
     *       D adds id 5 updated with its {@code _row_id} 4 and id 7 (inherited: D starts at 15, so
     *       16).
     * </ol>
     */
    static void commitLineageVersions(CdfTestTables tables, Table table) {
        DataFile a =
                tables.dataFile(
                        table,
                        row(S, 1L, "a", "eu"),
                        row(S, 2L, "b", "us"),
                        row(S, 3L, "c", "eu"),
                        row(S, 4L, "d", "us"),
                        row(S, 5L, "e", "eu"));
        table.newAppend().appendFile(a).commit();
        DataFile b =
                tables.dataFileWithRowIds(
                        table,
                        new Object[] {1L, "a", "eu", 0L},
                        new Object[] {2L, "b2", "us", 1L},
                        new Object[] {3L, "c2", "us", 2L},
                        new Object[] {5L, "e", "eu", 4L},
                        new Object[] {6L, "f", "eu", null});
        table.newOverwrite().deleteFile(a).addFile(b).commit();
        DataFile c =
                tables.dataFileWithRowIds(
                        table,
                        new Object[] {1L, "a", "eu", 0L},
                        new Object[] {2L, "b2", "us", 1L},
                        new Object[] {3L, "c2", "us", 2L},
                        new Object[] {5L, "e", "eu", 4L},
                        new Object[] {6L, "f", "eu", 9L});
        table.newRewrite().rewriteFiles(Set.of(b), Set.of(c)).commit();
        DataFile d =
                tables.dataFileWithRowIds(
                        table,
                        new Object[] {5L, "e2", "us", 4L},
                        new Object[] {7L, "g", "eu", null});
        table.newRowDelta().addRows(d).addDeletes(tables.deletionVector(table, c, 0, 3)).commit();
    }

    /** Row ids as the reader materialises them: stored values, else first row id + position. */
    @Test
    void rowIdsAreStoredOrInheritedFromTheFirstRowId() {
        Table table = tables.create("t", S, PartitionSpec.unpartitioned(), 3, Map.of());
        commitLineageVersions(tables, table);

        assertThat(rowIds(table)).containsExactlyInAnyOrder("2=1", "3=2", "5=4", "6=9", "7=16");
    }

    /** F2: pairs by {@code _row_id}; carry-overs cancel; the output has the data columns only. */
    @Test
    void updatesKeepingTheirRowIdBecomePreAndPostimages() {
        Table table = tables.create("t", S, PartitionSpec.unpartitioned(), 3, Map.of());
        commitLineageVersions(tables, table);

        assertThat(changes(table, 1, 1))
                .containsExactly(
                        "1 insert (1, a, eu)",
                        "1 insert (2, b, us)",
                        "1 insert (3, c, eu)",
                        "1 insert (4, d, us)",
                        "1 insert (5, e, eu)");
        assertThat(changes(table, 2, 2))
                .containsExactly(
                        "2 update_preimage (2, b, us)",
                        "2 update_postimage (2, b2, us)",
                        "2 update_preimage (3, c, eu)",
                        "2 update_postimage (3, c2, us)",
                        "2 delete (4, d, us)",
                        "2 insert (6, f, eu)");
        assertThat(changes(table, 3, 3)).isEmpty();
        assertThat(
                        TableChanges.forTable(table)
                                .startingVersion(3)
                                .endingVersion(3)
                                .build()
                                .versions())
                .containsExactly(3L);
        assertThat(changes(table, 4, 4))
                .containsExactly(
                        "4 delete (1, a, eu)",
                        "4 update_preimage (5, e, eu)",
                        "4 update_postimage (5, e2, us)",
                        "4 insert (7, g, eu)");
        assertThat(TableChanges.forTable(table).startingVersion(1).build().schema().columns())
                .extracting(f -> f.name())
                .containsExactly(
                        "id",
                        "name",
                        "region",
                        "_change_type",
                        "_commit_version",
                        "_commit_timestamp");
    }

    /**
     * Documented behaviour: a writer that does not write {@code _row_id} gives every row it writes
     * a new (inherited) row id, so a rewrite's rows, changed or carried over unchanged, are plain
     * delete + insert.
     */
    @Test
    void rowsWithNewInheritedRowIdsStayDeleteAndInsert() {
        Table table = tables.create("t", S, PartitionSpec.unpartitioned(), 3, Map.of());
        DataFile a = tables.dataFile(table, row(S, 1L, "a", "eu"), row(S, 2L, "b", "us"));
        table.newAppend().appendFile(a).commit();
        table.newOverwrite()
                .deleteFile(a)
                .addFile(tables.dataFile(table, row(S, 1L, "a", "eu"), row(S, 2L, "b2", "us")))
                .commit();

        assertThat(rowIds(table)).containsExactlyInAnyOrder("1=2", "2=3");
        assertThat(changes(table, 2, 2))
                .containsExactly(
                        "2 delete (1, a, eu)",
                        "2 delete (2, b, us)",
                        "2 insert (1, a, eu)",
                        "2 insert (2, b2, us)");
    }

    /** A rewrite that keeps some row ids: those rows pair or cancel, the others do not. */
    @Test
    void aRowThatLostItsRowIdIsDeleteAndInsert() {
        Table table = tables.create("t", S, PartitionSpec.unpartitioned(), 3, Map.of());
        DataFile a =
                tables.dataFile(
                        table, row(S, 1L, "a", "eu"), row(S, 2L, "b", "us"), row(S, 3L, "c", "eu"));
        table.newAppend().appendFile(a).commit();
        table.newOverwrite()
                .deleteFile(a)
                .addFile(
                        tables.dataFileWithRowIds(
                                table,
                                new Object[] {1L, "a", "eu", null},
                                new Object[] {2L, "b2", "us", 1L},
                                new Object[] {3L, "c", "eu", 2L}))
                .commit();

        assertThat(changes(table, 2, 2))
                .containsExactly(
                        "2 delete (1, a, eu)",
                        "2 update_preimage (2, b, us)",
                        "2 update_postimage (2, b2, us)",
                        "2 insert (1, a, eu)");
    }

    /**
     * Rows of files written before an upgrade to v3 have no {@code _row_id}: plain delete + insert
     * (as without identity; their carry-overs cancel only against rows that have no {@code _row_id}
     * either, and a new file gives every row one).
     */
    @Test
    void rowsWithoutRowIdAfterAnUpgradeToV3() {
        Table table = tables.create("t", S, PartitionSpec.unpartitioned(), 2, Map.of());
        DataFile a = tables.dataFile(table, row(S, 1L, "a", "eu"), row(S, 2L, "b", "us"));
        table.newAppend().appendFile(a).commit();
        table.updateProperties().set("format-version", "3").commit();
        table.newOverwrite()
                .deleteFile(a)
                .addFile(tables.dataFile(table, row(S, 1L, "a", "eu"), row(S, 2L, "b2", "us")))
                .addFile(tables.dataFileWithRowIds(table, new Object[] {3L, "c", "eu", null}))
                .commit();

        assertThat(changes(table, 2, 2))
                .containsExactly(
                        "2 insert (1, a, eu)",
                        "2 insert (2, b2, us)",
                        "2 insert (3, c, eu)",
                        "2 delete (1, a, eu)",
                        "2 delete (2, b, us)");
    }

    /** Tables with identifier fields keep pairing by them on v3 (row ids differ, keys match). */
    @Test
    void identifierFieldsStillWinOnV3() {
        Table table = tables.create("t", 3);
        DataFile a = tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"));
        table.newAppend().appendFile(a).commit();
        table.newOverwrite()
                .deleteFile(a)
                .addFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b2", "us")))
                .commit();

        assertThat(changes(table, 2, 2))
                .containsExactly("2 update_preimage (2, b, us)", "2 update_postimage (2, b2, us)");
    }

    /**
     * {@code "<id>=<_row_id>"} of the live rows of the current snapshot, read with _row_id
     * projected.
     */
    private static List<String> rowIds(Table table) {
        table.refresh();
        List<String> ids = new ArrayList<>();
        Schema projection = ChangePairing.lineageSchema(table.schema());
        FileRows files = new FileRows(table.io());
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                for (FileRows.PositionedRow row :
                        files.liveRows(
                                task, table.schema(), projection, Expressions.alwaysTrue())) {
                    Record r = row.row;
                    ids.add(
                            r.get(0)
                                    + "="
                                    + r.get(projection.columns().indexOf(MetadataColumns.ROW_ID)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ids;
    }
}

package dev.changeflow.sources.cdf;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The delete-file cache of a change-feed read ({@link DeleteFileCache}): the versions of one read
 * parse each delete file once, and the changes are exactly those read without a cache (F2).
 */
class DeleteFileCacheTest {

    /**
     * Versions 2..5 of {@link #upsertKeyOneFourTimes}: each is an upsert of key 1 by Iceberg's
     * upsert sink (key-only equality delete + new row), so its pre-image is looked up in the
     * parent.
     */
    private static final List<String> CHANGES =
            List.of(
                    "2 update_preimage (1, a1, eu)",
                    "2 update_postimage (1, a2, eu)",
                    "3 update_preimage (1, a2, eu)",
                    "3 update_postimage (1, a3, eu)",
                    "4 update_preimage (1, a3, eu)",
                    "4 update_postimage (1, a4, eu)",
                    "5 update_preimage (1, a4, eu)",
                    "5 update_postimage (1, a5, eu)");

    @TempDir Path warehouse;

    private CdfTestTables tables;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
    }

    /**
     * Version 1 appends keys 1, 2, 3; versions 2..5 each upsert key 1 with a key-only equality
     * delete file and a data file: after version k, k - 1 delete files pile up, each applying to
     * every older data file.
     */
    private Table upsertKeyOneFourTimes() {
        Table table = tables.create("t", 2);
        Schema keyOnly = table.schema().select("id");
        table.newAppend()
                .appendFile(
                        tables.dataFile(
                                table,
                                row(1L, "a1", "eu"),
                                row(2L, "b1", "us"),
                                row(3L, "c1", "eu")))
                .commit();
        for (int version = 2; version <= 5; version++) {
            DataFile upserted = tables.dataFile(table, row(1L, "a" + version, "eu"));
            table.newRowDelta()
                    .addDeletes(tables.equalityDeletes(table, keyOnly, row(1L, null, null)))
                    .addRows(upserted)
                    .commit();
        }
        return table;
    }

    private static List<String> read(Table table, DeleteFileCache cache) {
        return CdfRows.render(
                TableChanges.forTable(table)
                        .startingVersion(2)
                        .endingVersion(5)
                        .deleteFileCache(cache)
                        .build());
    }

    /**
     * Each of the 4 equality-delete files is parsed once by the read of versions 2..5: version k
     * loads its own file to find the keys, then reads the parent's data files with the k - 2 older
     * files applied, all of them already loaded by earlier versions (10 uses served by the cache).
     */
    @Test
    void eachDeleteFileIsLoadedOncePerRead() {
        Table table = upsertKeyOneFourTimes();
        DeleteFileCache cache = new DeleteFileCache();

        assertThat(read(table, cache)).containsExactlyElementsOf(CHANGES);
        assertThat(cache.loads()).isEqualTo(4);
        assertThat(cache.hits()).isEqualTo(10);
    }

    /**
     * Without caching (bound 0) the same read gives the same changes, parsing the delete files 14
     * times: version k reads its own file once and, for each data file i < k of the parent, the k -
     * 1 - i files newer than it (1 + 1 + 3 + 6 + ... grows with the square of the pile).
     */
    @Test
    void withoutCachingTheSameChangesReadEveryDeleteFileAgain() {
        Table table = upsertKeyOneFourTimes();
        DeleteFileCache none = new DeleteFileCache(0);

        assertThat(read(table, none)).containsExactlyElementsOf(CHANGES);
        assertThat(none.loads()).isEqualTo(14);
        assertThat(none.hits()).isZero();
        assertThat(none.bytes()).isZero();
    }

    /**
     * A bound that holds one delete file (a one-row key-only file weighs 8 + 64 + 16 = 88 estimated
     * bytes): least recently used files are evicted, the changes stay exact and the held bytes stay
     * within the bound.
     */
    @Test
    void evictionKeepsTheBoundAndTheChanges() {
        Table table = upsertKeyOneFourTimes();
        DeleteFileCache small = new DeleteFileCache(100);

        assertThat(read(table, small)).containsExactlyElementsOf(CHANGES);
        assertThat(small.bytes()).isEqualTo(88);
        assertThat(small.loads()).isGreaterThan(4);
        assertThat(small.loads() + small.hits()).isEqualTo(14);
    }

    /** Position-delete files are cached too: their changes are exact across versions. */
    @Test
    void positionDeletesThroughTheCache() {
        Table table = tables.create("t", 2);
        DataFile first =
                tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"), row(3L, "c", "eu"));
        table.newAppend().appendFile(first).commit();
        table.newRowDelta().addDeletes(tables.positionDeletes(table, first, 1)).commit();
        table.newRowDelta().addDeletes(tables.positionDeletes(table, first, 0)).commit();
        DeleteFileCache cache = new DeleteFileCache();

        assertThat(
                        CdfRows.render(
                                TableChanges.forTable(table)
                                        .startingVersion(2)
                                        .endingVersion(3)
                                        .deleteFileCache(cache)
                                        .build()))
                .containsExactly("2 delete (2, b, us)", "3 delete (1, a, eu)");
        // version 2 loads its file (the file after); version 3 reads the file before with it (a
        // hit) and after with it (a hit) and its own (a load)
        assertThat(cache.loads()).isEqualTo(2);
        assertThat(cache.hits()).isEqualTo(2);
    }

    /**
     * The option {@code delete-file-cache-size} sizes a read's own cache: {@code 0} reads as
     * without the cache (14 loads), {@code 256 kb} holds the 4 files; a value that is no size is
     * {@code INVALID_CDC_OPTIONS} naming the option and what it accepts.
     */
    @Test
    void theDeleteFileCacheSizeOptionSizesTheReadsOwnCache() {
        Table table = upsertKeyOneFourTimes();
        for (String size : List.of("0", "256 kb")) {
            TableChanges changes =
                    TableChanges.forTable(table)
                            .options(
                                    Map.of(
                                            "starting-version", "2",
                                            "ending-version", "5",
                                            "delete-file-cache-size", size))
                            .build();
            assertThat(CdfRows.render(changes)).as(size).containsExactlyElementsOf(CHANGES);
            DeleteFileCache cache = changes.deleteFileCache();
            assertThat(cache.maxBytes()).as(size).isEqualTo(size.equals("0") ? 0 : 256 * 1024);
            assertThat(cache.loads()).as(size).isEqualTo(size.equals("0") ? 14 : 4);
        }
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .options(
                                                Map.of(
                                                        "starting-version", "2",
                                                        "delete-file-cache-size", "lots")))
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'delete-file-cache-size' = 'lots' for the change feed"
                                + " of table hadoop.db.t is not a size (for example '64 mb', '256"
                                + " kb', or '0' for no cache).");
    }

    @Test
    void negativeBoundIsRejected() {
        assertThatThrownBy(() -> new DeleteFileCache(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the delete-file cache bound must be at least 0 bytes, got -1");
    }
}

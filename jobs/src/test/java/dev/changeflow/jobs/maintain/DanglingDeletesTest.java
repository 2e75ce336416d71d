package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.DanglingDeletes;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.compact;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DanglingDeletes} on real tables in a Hadoop catalog on disk (docs/semantics.md M1, M3,
 * F2): after a compaction that keeps the starting sequence number (Iceberg's {@code RewriteFiles}
 * with the planned snapshot's data sequence number, as {@code TableCompaction} and the in-job task
 * commit it), exactly the delete files that apply to no live data file are removed in one {@code
 * replace} commit; the rows are the same before and after, the removal's version has no change
 * rows, and a concurrent commit of an older-sequence data file makes it plan again.
 *
 * <p>Delete files are named in assertions as {@code <content>:<data sequence number>}, e.g. {@code
 * EQUALITY_DELETES:2}; versions are sequence numbers (1 for the first commit).
 */
class DanglingDeletesTest {
    @TempDir Path warehouse;

    /**
     * Unpartitioned: v1 inserts 1..4 (file D1), v2 deletes 1 (eq, seq 2), v3 updates 2 to B (eq seq
     * 3 + file D3), v4 position-deletes (3, c) in D1 (seq 4, file-scoped). A compaction plans on
     * v4; v5 — committed while it runs — deletes 4 (eq, seq 5); v6 is the compaction: D1 and D3
     * rewritten into one file of (2, B), (4, d) with data sequence number 4.
     */
    @Test
    void removesExactlyTheDeleteFilesNoLiveDataFileIsOlderThan() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("unpart");
        DataFile d1 = tables.dataFile(t, row(1, "a"), row(2, "b"), row(3, "c"), row(4, "d"));
        t.newAppend().appendFile(d1).commit();
        tables.ingest(t, List.of(row(1, "a")), List.of());
        DataFile d3 = tables.dataFile(t, row(2, "B"));
        t.newRowDelta().addDeletes(tables.equalityDeletes(t, row(2, "b"))).addRows(d3).commit();
        t.newRowDelta().addDeletes(tables.positionDeletes(t, d1, 2)).commit();
        Snapshot planned = t.currentSnapshot();
        tables.ingest(t, List.of(row(4, "d")), List.of());
        compact(t, planned, List.of(d1, d3), tables.dataFile(t, row(2, "B"), row(4, "d")));
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(6);
        // Iceberg's rewrite commit itself dropped only the file-scoped position delete of the
        // removed D1 (4): its delete-manifest filter skips every manifest checked after the first
        // one it dropped a file from (see MaintenanceTestTables.compact)
        assertThat(liveDeletes(t))
                .containsExactlyInAnyOrder(
                        "EQUALITY_DELETES:2", "EQUALITY_DELETES:3", "EQUALITY_DELETES:5");
        List<String> before = MaintenanceTestTables.rows(t);
        assertThat(before).containsExactly("(2, B)");
        List<String> feedBefore = MaintenanceTestTables.changes(t, 1, 6);

        DanglingDeletes.Result r = DanglingDeletes.remove(t);

        assertThat(names(r.removed))
                .containsExactlyInAnyOrder("EQUALITY_DELETES:2", "EQUALITY_DELETES:3");
        assertThat(r.removedEqualityDeletes()).isEqualTo(2);
        assertThat(r.removedPositionDeletes()).isEqualTo(0);
        assertThat(r.kept).isEqualTo(1);
        assertThat(r.readVersion).isEqualTo(6);
        assertThat(r.committedVersion).isEqualTo(7);
        assertThat(r.attempts).isEqualTo(1);
        assertThat(r.describe())
                .isEqualTo(
                        "Dangling delete files of hadoop.db.unpart at version 6: 2 removed (2"
                                + " equality, 0 position), 1 still apply; committed as version 7"
                                + " (replace)");
        Snapshot removal = t.currentSnapshot();
        assertThat(removal.operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(removal.sequenceNumber()).isEqualTo(7);
        // the equality delete committed after the compaction's starting sequence number still
        // applies
        assertThat(liveDeletes(t)).containsExactly("EQUALITY_DELETES:5");
        assertThat(MaintenanceTestTables.rows(t)).isEqualTo(before);
        assertThat(rowsAt(t, removal.parentId())).isEqualTo(before);
        // F2: no change rows for the removal, so state(6) + changes(7) = state(7); older versions
        // read as before
        assertThat(MaintenanceTestTables.changes(t, 7, 7)).isEmpty();
        assertThat(MaintenanceTestTables.changes(t, 1, 7)).isEqualTo(feedBefore);
        assertThat(feedBefore)
                .containsExactly(
                        "1 insert (1, a)",
                        "1 insert (2, b)",
                        "1 insert (3, c)",
                        "1 insert (4, d)",
                        "2 delete (1, a)",
                        "3 update_preimage (2, b)",
                        "3 update_postimage (2, B)",
                        "4 delete (3, c)",
                        "5 delete (4, d)");

        DanglingDeletes.Result again = DanglingDeletes.remove(t);
        assertThat(again.removed).isEmpty();
        assertThat(again.committedVersion).isNull();
        assertThat(again.kept).isEqualTo(1);
        assertThat(again.describe())
                .isEqualTo(
                        "Dangling delete files of hadoop.db.unpart at version 7: none (1 delete"
                                + " files still apply); no version written");
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(removal.snapshotId());
    }

    /**
     * Partitioned by {@code id}: partition 1 is compacted (its data file then has sequence number
     * 5), partition 2 is not (its oldest file has 2). In partition 1 the update's equality delete
     * (3) and the partition-scoped position delete (4) are dangling; the update of 2 (eq, seq 5)
     * still applies to partition 2's file of seq 2 — against the whole table's minimum (2) none
     * would go, and Iceberg's rewrite commit dropped none of them.
     */
    @Test
    void decidesPerPartition() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = partitionedAndCompacted(tables, "part");
        List<String> before = MaintenanceTestTables.rows(t);
        assertThat(before).containsExactly("(1, A)", "(2, B)");
        assertThat(liveDeletes(t))
                .containsExactlyInAnyOrder(
                        "EQUALITY_DELETES:3", "POSITION_DELETES:4", "EQUALITY_DELETES:5");
        List<String> feedBefore = MaintenanceTestTables.changes(t, 1, 6);

        DanglingDeletes.Result r = DanglingDeletes.remove(t);

        assertThat(names(r.removed))
                .containsExactlyInAnyOrder("EQUALITY_DELETES:3", "POSITION_DELETES:4");
        for (DeleteFile d : r.removed) {
            assertThat(d.partition().get(0, Long.class)).isEqualTo(1L);
        }
        assertThat(r.removedPositionDeletes()).isEqualTo(1);
        assertThat(r.kept).isEqualTo(1);
        assertThat(r.committedVersion).isEqualTo(7);
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(liveDeletes(t)).containsExactly("EQUALITY_DELETES:5");
        assertThat(MaintenanceTestTables.rows(t)).isEqualTo(before);
        assertThat(rowsAt(t, t.currentSnapshot().parentId())).isEqualTo(before);
        assertThat(MaintenanceTestTables.changes(t, 7, 7)).isEmpty();
        assertThat(MaintenanceTestTables.changes(t, 1, 7)).isEqualTo(feedBefore);
        assertThat(feedBefore)
                .containsExactly(
                        "1 insert (1, a)",
                        "2 insert (2, b)",
                        "3 update_preimage (1, a)",
                        "3 update_postimage (1, A)",
                        "5 update_preimage (2, b)",
                        "5 update_postimage (2, B)");
    }

    /**
     * An ingest commit lands between the plan and the commit: its file has a new (greater) sequence
     * number, so the removal goes through on Iceberg's retry, on top of it.
     */
    @Test
    void aRacingIngestCommitDoesNotConflict() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = partitionedAndCompacted(tables, "ingestrace");
        RacingCommitTable racing =
                RacingCommitTable.of(
                        tables.load("ingestrace"),
                        () -> tables.insert(tables.load("ingestrace"), row(5, "e")));

        DanglingDeletes.Result r = DanglingDeletes.remove(racing.table());

        assertThat(racing.raced()).isTrue();
        assertThat(racing.replaceAttempts()).isEqualTo(2);
        assertThat(r.attempts).isEqualTo(1);
        assertThat(names(r.removed))
                .containsExactlyInAnyOrder("EQUALITY_DELETES:3", "POSITION_DELETES:4");
        assertThat(r.readVersion).isEqualTo(6);
        assertThat(r.committedVersion).isEqualTo(8);
        t.refresh();
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(MaintenanceTestTables.rows(t)).containsExactly("(1, A)", "(2, B)", "(5, e)");
        assertThat(MaintenanceTestTables.changes(t, 7, 8)).containsExactly("7 insert (5, e)");
    }

    /**
     * A commit lands between the plan and the commit that adds a data file with an older data
     * sequence number (2) than the planned removal of partition 1's equality delete (3) and
     * position delete (4), which therefore apply to it again: the attempt is rejected, the second
     * plan finds nothing dangling, nothing is committed and the rows are those of the racing
     * commit.
     */
    @Test
    void aRacingOlderSequenceDataFileMakesItPlanAgain() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = partitionedAndCompacted(tables, "oldrace");
        DataFile compacted = liveDataFiles(t, 1L).get(0);
        RacingCommitTable racing =
                RacingCommitTable.of(
                        tables.load("oldrace"),
                        () -> {
                            Table other = tables.load("oldrace");
                            other.newRewrite()
                                    .validateFromSnapshot(other.currentSnapshot().snapshotId())
                                    .dataSequenceNumber(2)
                                    .deleteFile(compacted)
                                    .addFile(tables.dataFile(other, row(1, "A")))
                                    .commit();
                        });

        DanglingDeletes.Result r = DanglingDeletes.remove(racing.table());

        assertThat(racing.raced()).isTrue();
        assertThat(r.attempts).isEqualTo(2);
        assertThat(r.removed).isEmpty();
        assertThat(r.committedVersion).isNull();
        t.refresh();
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(7);
        assertThat(liveDeletes(t))
                .containsExactlyInAnyOrder(
                        "EQUALITY_DELETES:3", "POSITION_DELETES:4", "EQUALITY_DELETES:5");
        // the racing file is older than the update of 1, which applies to it (old image (1, a)
        // carried, key 1 deleted): the removal must not change that
        assertThat(MaintenanceTestTables.rows(t)).containsExactly("(2, B)");
    }

    /** A table without snapshot: nothing to do, no commit. */
    @Test
    void aTableWithoutSnapshot() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("empty");
        DanglingDeletes.Result r = DanglingDeletes.remove(t);
        assertThat(r.readVersion).isNull();
        assertThat(r.committedVersion).isNull();
        assertThat(r.describe())
                .isEqualTo(
                        "Dangling delete files of hadoop.db.empty: the table has no snapshot yet");
        assertThat(t.currentSnapshot()).isNull();
    }

    /**
     * Partitioned by {@code id}: v1 inserts (1, a), v2 inserts (2, b), v3 updates 1 to A (eq seq
     * 3), v4 position-deletes (1, a) once more together with a position of another file (so the
     * delete file is partition-scoped, seq 4), v5 updates 2 to B (eq seq 5), v6 compacts partition
     * 1 as planned on v5 (sequence number 5).
     */
    private static Table partitionedAndCompacted(MaintenanceTestTables tables, String name) {
        Table t =
                tables.create(
                        name,
                        PartitionSpec.builderFor(MaintenanceTestTables.SCHEMA)
                                .identity("id")
                                .build());
        tables.insert(t, row(1, "a"));
        tables.insert(t, row(2, "b"));
        tables.ingest(t, List.of(row(1, "a")), List.of(row(1, "A")));
        DataFile d1 =
                liveDataFiles(t, 1L).stream()
                        .filter(f -> f.dataSequenceNumber() == 1)
                        .findFirst()
                        .orElseThrow();
        t.newRowDelta()
                .addDeletes(tables.positionDeletes(t, d1, d1.location() + ".other", 0))
                .commit();
        tables.ingest(t, List.of(row(2, "b")), List.of(row(2, "B")));
        compact(t, t.currentSnapshot(), liveDataFiles(t, 1L), tables.dataFile(t, row(1, "A")));
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(6);
        return t;
    }

    /** The live data files of partition {@code id} (identity on id) of the current snapshot. */
    private static List<DataFile> liveDataFiles(Table t, long id) {
        t.refresh();
        List<DataFile> out = new ArrayList<>();
        for (ManifestFile m : t.currentSnapshot().dataManifests(t.io())) {
            try (ManifestReader<DataFile> r = ManifestFiles.read(m, t.io(), t.specs())) {
                for (DataFile f : r) {
                    if (f.partition().get(0, Long.class) == id) {
                        out.add(f.copy());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    /**
     * The live delete files of the current snapshot as {@code <content>:<data sequence number>}.
     */
    private static List<String> liveDeletes(Table t) {
        t.refresh();
        List<DeleteFile> out = new ArrayList<>();
        for (ManifestFile m : t.currentSnapshot().deleteManifests(t.io())) {
            try (ManifestReader<DeleteFile> r =
                    ManifestFiles.readDeleteManifest(m, t.io(), t.specs())) {
                r.forEach(d -> out.add(d.copy()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return names(out);
    }

    private static List<String> names(List<DeleteFile> files) {
        List<String> out = new ArrayList<>();
        files.forEach(d -> out.add(d.content() + ":" + d.dataSequenceNumber()));
        return out;
    }

    /** The rows of snapshot {@code snapshotId}, as {@code (id, name)}, sorted. */
    private static List<String> rowsAt(Table t, long snapshotId) {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read =
                IcebergGenerics.read(t).useSnapshot(snapshotId).build()) {
            read.forEach(r -> out.add("(" + r.getField("id") + ", " + r.getField("name") + ")"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(null);
        return out;
    }
}

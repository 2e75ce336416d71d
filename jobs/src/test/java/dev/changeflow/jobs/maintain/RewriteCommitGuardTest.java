package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.RewriteCommitGuard;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.changes;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.compact;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.row;
import static dev.changeflow.jobs.maintain.MaintenanceTestTables.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RewriteCommitGuard} on real tables in a Hadoop catalog on disk (docs/semantics.md M1,
 * issue 17): a compaction commit as Iceberg's rewrite makes it (the replaced file out, its rows
 * rewritten with the planned snapshot's data sequence number, validated from the planned snapshot)
 * after two commits that landed while the compaction ran.
 *
 * <p>Table: version 1 inserts {@code (1, a), (2, b)} (file D1); the compaction plans on version 1.
 * Then, unless a test says otherwise, version 2 deletes 1 (an ingest commit with only an equality
 * delete, sequence number 2) and version 3 inserts {@code (3, c)} (sequence number 3); the
 * compaction's commit is version 4.
 */
class RewriteCommitGuardTest {
    @TempDir Path warehouse;

    /**
     * The pitfall itself, without the guard: Iceberg's commit drops the delete of 1 (older than
     * every data file that was there before, the rewritten file with sequence number 1 not counted)
     * and the deleted row is back. If an Iceberg upgrade fixes this (apache/iceberg#10962), this
     * test fails and the guard's class comment should say so.
     */
    @Test
    void icebergsOwnRewriteCommitDropsADeleteThatStillApplies() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("plain");
        Race race = race(tables, t);

        compactRace(t, race);

        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(t.currentSnapshot().summary())
                .containsEntry("removed-equality-delete-files", "1");
        assertThat(rows(t)).containsExactly("(1, a)", "(2, b)", "(3, c)");
    }

    /**
     * The same commit through the guard is refused with the files and sequence numbers named;
     * nothing is committed, the refusal is counted, and the rows and changes are those of the
     * ingest commits.
     */
    @Test
    void theGuardRefusesTheCommitAndNothingComesBack() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("guarded");
        Race race = race(tables, t);

        assertThatThrownBy(() -> compactRace(RewriteCommitGuard.guard(t), race))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("refused to commit a rewrite of")
                .hasMessageContaining("(data sequence number 2)")
                .hasMessageContaining("new data file " + race.compacted.location())
                .hasMessageContaining("(data sequence number 1), and the rows it deleted would");

        assertThat(RewriteCommitGuard.refusals(t.location())).isEqualTo(1);
        t.refresh();
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(3);
        assertThat(rows(t)).containsExactly("(2, b)", "(3, c)");
        assertThat(changes(t, 1, 3))
                .containsExactly(
                        "1 insert (1, a)", "1 insert (2, b)", "2 delete (1, a)", "3 insert (3, c)");
        // planned again on the current snapshot, the delete is applied while rewriting: the
        // guard lets that commit through
        Snapshot current = t.currentSnapshot();
        List<DataFile> live = TableFiles.liveDataFiles(t);
        compact(
                RewriteCommitGuard.guard(t),
                current,
                live,
                tables.dataFile(t, row(2, "b"), row(3, "c")));
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(rows(t)).containsExactly("(2, b)", "(3, c)");
        assertThat(changes(t, 4, 4)).isEmpty();
        assertThat(RewriteCommitGuard.refusals(t.location())).isEqualTo(1);
    }

    /**
     * An ordinary ingest commit racing the compaction (the delete of 1 and the insert of 3 in one
     * commit, sequence number 2): Iceberg's commit drops nothing that applies, the guard lets it
     * through and the delete still hits the compacted file.
     */
    @Test
    void anIngestCommitWithDeletesAndInsertsPassesTheGuard() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("ordinary");
        DataFile d1 = tables.dataFile(t, row(1, "a"), row(2, "b"));
        t.newAppend().appendFile(d1).commit();
        Snapshot planned = t.currentSnapshot();
        tables.ingest(t, List.of(row(1, "a")), List.of(row(3, "c")));

        compact(
                RewriteCommitGuard.guard(t),
                planned,
                List.of(d1),
                tables.dataFile(t, row(1, "a"), row(2, "b")));

        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(3);
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(rows(t)).containsExactly("(2, b)", "(3, c)");
        assertThat(changes(t, 3, 3)).isEmpty();
    }

    /**
     * Partitioned by {@code id}: the dropped delete belongs to partition 1, the rewrite's new file
     * to partition 2, so the delete applies to no new file (the delete's partition holds no data
     * file any more) and the guard lets the commit through.
     */
    @Test
    void aDroppedDeleteOfAnotherPartitionPasses() {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t =
                tables.create(
                        "part",
                        PartitionSpec.builderFor(MaintenanceTestTables.SCHEMA)
                                .identity("id")
                                .build());
        DataFile one = tables.dataFile(t, row(1, "a"));
        DataFile two = tables.dataFile(t, row(2, "b"));
        t.newAppend().appendFile(one).appendFile(two).commit();
        Snapshot planned = t.currentSnapshot();
        tables.ingest(t, List.of(row(1, "a")), List.of()); // partition 1, sequence number 2
        tables.insert(t, row(3, "c")); // partition 3, sequence number 3
        // the compaction rewrote partition 2 only; a concurrent copy-on-write removal emptied
        // partition 1 (seq 4)
        t.newDelete().deleteFile(one).commit();

        compact(
                RewriteCommitGuard.guard(t),
                planned,
                List.of(two),
                tables.dataFile(t, row(2, "b")));

        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(rows(t)).containsExactly("(2, b)", "(3, c)");
    }

    /** The two commits after the plan, and the file the compaction writes. */
    private record Race(Snapshot planned, DataFile replaced, DataFile compacted) {}

    private static Race race(MaintenanceTestTables tables, Table t) {
        DataFile d1 = tables.dataFile(t, row(1, "a"), row(2, "b"));
        t.newAppend().appendFile(d1).commit();
        Snapshot planned = t.currentSnapshot();
        tables.ingest(t, List.of(row(1, "a")), List.of());
        tables.insert(t, row(3, "c"));
        assertThat(rows(t)).containsExactly("(2, b)", "(3, c)");
        return new Race(planned, d1, tables.dataFile(t, row(1, "a"), row(2, "b")));
    }

    private static void compactRace(Table t, Race race) {
        compact(t, race.planned, List.of(race.replaced), race.compacted);
    }

    /** Live data files of a table's current snapshot. */
    private static final class TableFiles {
        static List<DataFile> liveDataFiles(Table t) {
            t.refresh();
            List<DataFile> out = new ArrayList<>();
            try (var tasks = t.newScan().planFiles()) {
                tasks.forEach(task -> out.add(task.file().copy()));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return out;
        }
    }
}

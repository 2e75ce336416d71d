package dev.changeflow.sources.cdf;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The differential check of F2 shared by the differential tests (tables of {@link
 * CdfTestTables#SCHEMA}), and the random commits they make: for every version v checked, the state
 * at v−1 with the changes of v applied equals the state at v (both states read by Iceberg's own
 * scan), every removed row exists in the state at v−1, and per identity a preimage is directly
 * followed by its postimage. Rows render as {@code "(id, name, region)"}, changes as {@code "<type>
 * (id, name, region)"}.
 */
final class ChangeFeedDifferential {
    private ChangeFeedDifferential() {}

    /**
     * Checks {@code versions} (consecutive ancestors of the table's current snapshot, oldest first)
     * against {@code changesByVersion}: the state before the first one is {@code stateBefore}.
     *
     * @return the state at the last version
     */
    static List<String> assertEveryVersion(
            Table table,
            List<Snapshot> versions,
            List<String> stateBefore,
            Map<Long, List<String>> changesByVersion) {
        for (Snapshot snapshot : versions) {
            List<String> state = new ArrayList<>(stateBefore);
            List<String> changes =
                    changesByVersion.getOrDefault(snapshot.sequenceNumber(), List.of());
            for (int c = 0; c < changes.size(); c++) {
                String change = changes.get(c);
                String type = change.substring(0, change.indexOf(' '));
                String values = change.substring(change.indexOf(' ') + 1);
                switch (type) {
                    case "insert":
                    case "update_postimage":
                        state.add(values);
                        break;
                    case "update_preimage":
                        assertThat(changes.get(c + 1))
                                .startsWith("update_postimage (" + key(values) + ",");
                        assertThat(state.remove(values))
                                .as("%s at version %d", change, snapshot.sequenceNumber())
                                .isTrue();
                        break;
                    default:
                        assertThat(state.remove(values))
                                .as("%s at version %d", change, snapshot.sequenceNumber())
                                .isTrue();
                }
            }
            List<String> stateAfter = renderAll(CdfTestTables.state(table, snapshot));
            assertThat(state)
                    .as("state at version %d (%s)", snapshot.sequenceNumber(), snapshot.operation())
                    .containsExactlyInAnyOrderElementsOf(stateAfter);
            stateBefore = stateAfter;
        }
        return stateBefore;
    }

    /** The changes of a read by version, each version's in the order read. */
    static Map<Long, List<String>> changesByVersion(TableChanges read) {
        Map<Long, List<String>> byVersion = new HashMap<>();
        for (Record change : read(read)) {
            byVersion
                    .computeIfAbsent((Long) change.get(4), v -> new ArrayList<>())
                    .add(render(change));
        }
        return byVersion;
    }

    /**
     * One random commit: an append (op 0, or when fewer than 3 rows live), an equality-delete
     * update of one key with the delete of another and an insert (1), a position delete or deletion
     * vector (2), a copy-on-write rewrite of one file (3), or a compaction of all files without
     * deletes (4).
     *
     * @return the next unused key
     */
    static long randomCommit(
            CdfTestTables tables,
            Table table,
            Random random,
            int i,
            long nextKey,
            int formatVersion,
            boolean carryRows) {
        table.refresh();
        List<Record> live = CdfTestTables.state(table, table.currentSnapshot());
        live.sort(Comparator.comparing(r -> (Long) r.get(0)));
        int op = random.nextInt(5);
        if (op == 0 || live.size() < 3) { // append
            table.newAppend()
                    .appendFile(
                            tables.dataFile(
                                    table,
                                    row(nextKey++, "n" + i, "eu"),
                                    row(nextKey++, "n" + i, "us")))
                    .commit();
        } else if (op
                == 1) { // equality-delete update of one key, delete of another, insert of a new one
            Record updated = live.get(random.nextInt(live.size()));
            Record deleted = live.stream().filter(r -> r != updated).findFirst().orElseThrow();
            table.newRowDelta()
                    .addDeletes(
                            tables.equalityDeletes(
                                    table,
                                    carryRows ? table.schema() : table.schema().select("id"),
                                    updated,
                                    deleted))
                    .addRows(
                            tables.dataFile(
                                    table,
                                    row((Long) updated.get(0), "u" + i, "us"),
                                    row(nextKey++, "n" + i, "eu")))
                    .commit();
        } else if (op
                == 2) { // position delete or deletion vector of one live row of a file without
            // deletes
            FileScanTask task = taskWithoutDeletes(table, random);
            if (task == null) {
                return randomCommit(tables, table, random, i, nextKey, formatVersion, carryRows);
            }
            List<FileRows.PositionedRow> rows =
                    new FileRows(table.io())
                            .liveRows(
                                    task, table.schema(), table.schema(), Expressions.alwaysTrue());
            long pos = rows.get(random.nextInt(rows.size())).pos;
            table.newRowDelta()
                    // validate from here, not from the table's root: a v3 commit checks for
                    // concurrent deletion vectors, and expiry may have cut the history
                    .validateFromSnapshot(table.currentSnapshot().snapshotId())
                    .addDeletes(
                            formatVersion >= 3
                                    ? tables.deletionVector(table, task.file(), pos)
                                    : tables.positionDeletes(table, task.file(), pos))
                    .commit();
        } else if (op
                == 3) { // copy-on-write: rewrite one file, changing one row and dropping another
            FileScanTask task = taskWithoutDeletes(table, random);
            if (task == null) {
                return randomCommit(tables, table, random, i, nextKey, formatVersion, carryRows);
            }
            List<FileRows.PositionedRow> rows =
                    new FileRows(table.io())
                            .liveRows(
                                    task, table.schema(), table.schema(), Expressions.alwaysTrue());
            List<Record> kept = new ArrayList<>();
            for (int r = 0; r < rows.size(); r++) {
                Record rowValue = rows.get(r).row;
                if (r == 0) {
                    kept.add(row((Long) rowValue.get(0), "c" + i, (String) rowValue.get(2)));
                } else if (r != 1) {
                    kept.add(rowValue);
                }
            }
            var overwrite =
                    table.newOverwrite()
                            .validateFromSnapshot(table.currentSnapshot().snapshotId())
                            .deleteFile(task.file());
            if (!kept.isEmpty()) {
                overwrite.addFile(tables.dataFile(table, kept.toArray(new Record[0])));
            }
            overwrite.commit();
        } else { // compaction of all files without deletes
            List<DataFile> files = new ArrayList<>();
            List<Record> rows = new ArrayList<>();
            for (FileScanTask task : tasks(table)) {
                if (task.deletes().isEmpty()) {
                    files.add(task.file());
                    new FileRows(table.io())
                            .forEachLiveRow(
                                    task,
                                    table.schema(),
                                    table.schema(),
                                    Expressions.alwaysTrue(),
                                    r -> rows.add(r.row));
                }
            }
            if (files.size() < 2) {
                table.newAppend()
                        .appendFile(tables.dataFile(table, row(nextKey++, "n" + i, "eu")))
                        .commit();
            } else {
                table.newRewrite()
                        .validateFromSnapshot(table.currentSnapshot().snapshotId())
                        .rewriteFiles(
                                Set.copyOf(files),
                                Set.of(tables.dataFile(table, rows.toArray(new Record[0]))))
                        .commit();
            }
        }
        return nextKey;
    }

    private static FileScanTask taskWithoutDeletes(Table table, Random random) {
        List<FileScanTask> candidates = new ArrayList<>();
        for (FileScanTask task : tasks(table)) {
            if (task.deletes().isEmpty() && task.file().recordCount() >= 2) {
                candidates.add(task);
            }
        }
        return candidates.isEmpty() ? null : candidates.get(random.nextInt(candidates.size()));
    }

    /** The current snapshot's scan tasks, by file location. */
    static List<FileScanTask> tasks(Table table) {
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
            planned.forEach(tasks::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        tasks.sort(Comparator.comparing(t -> t.file().location()));
        return tasks;
    }

    static List<Record> read(TableChanges changes) {
        List<Record> rows = new ArrayList<>();
        try (CloseableIterable<Record> read = changes.read()) {
            read.forEach(rows::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }

    /** {@code "<type> (id, name, region)"}. */
    static String render(Record change) {
        return change.get(3)
                + " ("
                + change.get(0)
                + ", "
                + change.get(1)
                + ", "
                + change.get(2)
                + ")";
    }

    private static String key(String values) {
        return values.substring(1, values.indexOf(','));
    }

    /** {@code "(id, name, region)"} of each row. */
    static List<String> renderAll(List<Record> rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add("(" + r.get(0) + ", " + r.get(1) + ", " + r.get(2) + ")"));
        return out;
    }
}

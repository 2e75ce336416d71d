package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.WriteResult;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Commits the files {@link SliceReplaceWriter}'s subtasks wrote for one REPLACE WHERE refresh
 * (docs/semantics.md S4) as <b>one</b> Iceberg snapshot (a row delta: the equality deletes and the
 * data files together), validated against the snapshot the refresh read.
 *
 * <p><b>Validation.</b> The commit fails, writing nothing, when the table changed after {@code
 * readSnapshotId}: any data file or delete file added since then (an append, an overwrite, another
 * refresh's deletes) is a conflict, because the refresh's deletes and inserts were computed from
 * the rows of {@code readSnapshotId}. Iceberg checks this on every commit attempt, including its
 * own retries after a concurrent metadata update. A {@code replace} snapshot (compaction) is not a
 * conflict: it keeps the rows and their sequence numbers. On failure the written files are deleted.
 */
@Internal
public final class SliceReplaceCommit {
    private SliceReplaceCommit() {}

    /** Thrown when the table changed between the refresh's read and its commit. */
    public static final class ConflictException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ConflictException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Deserializes the writers' outputs ({@link SliceReplaceWriter}). */
    public static List<WriteResult> results(List<byte[]> serialized) {
        List<WriteResult> out = new ArrayList<>();
        for (byte[] b : serialized) {
            try {
                out.add(
                        InstantiationUtil.deserializeObject(
                                b, SliceReplaceCommit.class.getClassLoader()));
            } catch (IOException | ClassNotFoundException e) {
                throw new IllegalStateException("cannot read a REPLACE WHERE write result", e);
            }
        }
        return out;
    }

    /**
     * Commits {@code results} to {@code table} in one row delta.
     *
     * @param readSnapshotId the snapshot the refresh read the target at; null when the table had no
     *     snapshot (then any snapshot committed since is a conflict)
     * @param summary snapshot summary properties to add
     * @return the new snapshot, or null when {@code results} hold no file (nothing is committed)
     * @throws ConflictException when the table changed since {@code readSnapshotId}; the written
     *     files are deleted
     */
    @Nullable
    public static Snapshot commit(
            Table table,
            @Nullable Long readSnapshotId,
            List<WriteResult> results,
            Map<String, String> summary) {
        List<DataFile> data = new ArrayList<>();
        List<DeleteFile> deletes = new ArrayList<>();
        for (WriteResult r : results) {
            data.addAll(List.of(r.dataFiles()));
            deletes.addAll(List.of(r.deleteFiles()));
        }
        if (data.isEmpty() && deletes.isEmpty()) {
            return null;
        }
        table.refresh();
        RowDelta delta = table.newRowDelta();
        data.forEach(delta::addRows);
        deletes.forEach(delta::addDeletes);
        if (readSnapshotId != null) {
            delta.validateFromSnapshot(readSnapshotId);
        }
        delta.conflictDetectionFilter(Expressions.alwaysTrue())
                .validateNoConflictingDataFiles()
                .validateNoConflictingDeleteFiles();
        summary.forEach(delta::set);
        try {
            delta.commit();
        } catch (ValidationException e) {
            deleteQuietly(table, data, deletes);
            throw new ConflictException(
                    "table "
                            + table.name()
                            + " changed after the refresh read it at snapshot "
                            + readSnapshotId
                            + " ("
                            + e.getMessage()
                            + "); nothing was committed: run the refresh again",
                    e);
        }
        table.refresh();
        return table.currentSnapshot();
    }

    private static void deleteQuietly(Table table, List<DataFile> data, List<DeleteFile> deletes) {
        for (DataFile f : data) {
            try {
                table.io().deleteFile(f.location());
            } catch (RuntimeException ignored) {
                // an orphan file: removed by orphan-file clean-up (M2)
            }
        }
        for (DeleteFile f : deletes) {
            try {
                table.io().deleteFile(f.location());
            } catch (RuntimeException ignored) {
                // an orphan file: removed by orphan-file clean-up (M2)
            }
        }
    }
}

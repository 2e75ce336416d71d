package dev.changeflow.sources.cdf.stream.enumerator;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ScanTaskParser;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Plans the splits of one discovery cycle of the streaming change feed (plain logic over an Iceberg
 * table, no Flink), shaped like Iceberg's {@code ContinuousSplitPlannerImpl}.
 *
 * <p><b>Splits per version</b>: a version that changed rows gets one {@link
 * ChangeFeedSplit.Kind#REMOVED} split when it removed data files or added/removed delete files, and
 * one {@link ChangeFeedSplit.Kind#ADDED} split per added data file. A compaction-only ({@code
 * replace}) or empty version gets no split but is planned all the same (F6: it advances the
 * position and the watermark). The initial snapshot (F6) gets one {@link
 * ChangeFeedSplit.Kind#INITIAL} split per scan task, tasks ordered by file location.
 *
 * <p><b>Rate limits</b> (F6): a cycle admits whole versions while the files it touches (data and
 * delete files added or removed) stay within {@code maxFilesPerCycle} and their sizes within {@code
 * maxBytesPerCycle}; the first version of a cycle is admitted even when it alone exceeds a limit; a
 * version that does not fit is deferred, and so is every later one. The initial snapshot may be
 * split over cycles (one task counts as its data file plus its delete files).
 *
 * <p><b>Errors</b> ({@link CdfException}): {@code TABLE_HISTORY_REWRITTEN} when the last planned
 * snapshot is no longer an ancestor of {@code main} (F8); {@code VERSION_NOT_AVAILABLE} when the
 * next version to plan has expired (F4).
 */
@Internal
public final class ChangeFeedSplitPlanner {

    /** The outcome of one cycle: the versions planned and the position after them. */
    public record Cycle(
            PlanningPosition from, PlanningPosition to, List<PlannedVersion> versions) {}

    /**
     * Splits planned for one version in one cycle.
     *
     * @param lastPart whether the version is now fully planned (false while the initial snapshot is
     *     still being split over cycles)
     */
    public record PlannedVersion(long version, List<ChangeFeedSplit> splits, boolean lastPart) {}

    private final Table table;
    private final long maxFilesPerCycle;
    private final long maxBytesPerCycle;

    public ChangeFeedSplitPlanner(Table table, long maxFilesPerCycle, long maxBytesPerCycle) {
        this.table = table;
        this.maxFilesPerCycle = maxFilesPerCycle;
        this.maxBytesPerCycle = maxBytesPerCycle;
    }

    /** Plans one cycle from {@code from}, never past {@code boundVersion}. */
    public Cycle plan(PlanningPosition from, long boundVersion) {
        table.refresh();
        List<PlannedVersion> planned = new ArrayList<>();
        Budget budget = new Budget();
        PlanningPosition position = from;
        if (position.planningInitialSnapshot()) {
            position = planInitial(position, budget, planned);
            if (position.planningInitialSnapshot()) {
                return new Cycle(from, position, planned);
            }
        }
        StreamingAccess.History history = StreamingAccess.history(table);
        if (position.lastSnapshotId() >= 0 && !history.isAncestor(position.lastSnapshotId())) {
            throw StreamingAccess.error(
                    CdfException.ErrorCode.TABLE_HISTORY_REWRITTEN,
                    String.format(
                            "The history of table %s was rewritten: version %d (snapshot %d), which the change "
                                    + "feed already read, is no longer an ancestor of the current version %d "
                                    + "(a rollback). Start a new stream from a starting version after the "
                                    + "rollback.",
                            table.name(),
                            position.nextVersion() - 1,
                            position.lastSnapshotId(),
                            history.latestVersion()));
        }
        List<Snapshot> snapshots = history.ancestorsFrom(position.nextVersion());
        long earliest = history.earliestAvailableVersion();
        if (!snapshots.isEmpty() && position.nextVersion() < earliest) {
            throw StreamingAccess.error(
                    CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                    String.format(
                            "Version %d of table %s, the next version the change feed has to read, is not "
                                    + "available: its snapshots have expired (earliest available version: "
                                    + "%d). Restart the stream from version %d or later, or retain snapshots "
                                    + "longer (register a consumer).",
                            position.nextVersion(), table.name(), earliest, earliest));
        }
        for (Snapshot snapshot : snapshots) {
            long version = snapshot.sequenceNumber();
            if (version > boundVersion) {
                break;
            }
            VersionFiles files = VersionFiles.of(table, snapshot);
            if (!budget.admit(files.count, files.bytes)) {
                break; // deferred: later versions wait behind it
            }
            planned.add(new PlannedVersion(version, files.splits(snapshot), true));
            position = new PlanningPosition(version + 1, snapshot.snapshotId(), -1L, 0);
        }
        return new Cycle(from, position, planned);
    }

    private PlanningPosition planInitial(
            PlanningPosition position, Budget budget, List<PlannedVersion> planned) {
        Snapshot snapshot = table.snapshot(position.initialSnapshotId());
        if (snapshot == null) {
            throw StreamingAccess.error(
                    CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                    String.format(
                            "The snapshot %d of table %s that the change feed emits as its initial rows has "
                                    + "expired before it was read completely. Restart the stream.",
                            position.initialSnapshotId(), table.name()));
        }
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> scan =
                table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
            scan.forEach(tasks::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        tasks.sort(
                Comparator.comparing((FileScanTask t) -> t.file().location())
                        .thenComparingLong(FileScanTask::start));
        List<ChangeFeedSplit> splits = new ArrayList<>();
        int next = position.initialTasksPlanned();
        while (next < tasks.size()) {
            FileScanTask task = tasks.get(next);
            long bytes = task.file().fileSizeInBytes();
            for (DeleteFile delete : task.deletes()) {
                bytes += delete.fileSizeInBytes();
            }
            if (!budget.admit(1 + task.deletes().size(), bytes)) {
                break;
            }
            splits.add(
                    ChangeFeedSplit.of(
                            snapshot.sequenceNumber(),
                            snapshot.snapshotId(),
                            snapshot.timestampMillis(),
                            ChangeFeedSplit.Kind.INITIAL,
                            next,
                            ScanTaskParser.toJson(task)));
            next++;
        }
        boolean done = next >= tasks.size();
        planned.add(new PlannedVersion(snapshot.sequenceNumber(), splits, done));
        return done
                ? new PlanningPosition(snapshot.sequenceNumber() + 1, snapshot.snapshotId(), -1L, 0)
                : new PlanningPosition(
                        position.nextVersion(),
                        position.lastSnapshotId(),
                        snapshot.snapshotId(),
                        next);
    }

    /** Files and bytes admitted in this cycle. */
    private final class Budget {
        private long files;
        private long bytes;
        private boolean any;

        boolean admit(long moreFiles, long moreBytes) {
            if (any
                    && (files + moreFiles > maxFilesPerCycle
                            || bytes + moreBytes > maxBytesPerCycle)) {
                return false;
            }
            any = true;
            files += moreFiles;
            bytes += moreBytes;
            return true;
        }
    }

    /** The files one version added and removed, from its manifests. */
    private static final class VersionFiles {
        final List<DataFile> addedData = new ArrayList<>();
        boolean removes;
        long count;
        long bytes;

        static VersionFiles of(Table table, Snapshot snapshot) {
            VersionFiles files = new VersionFiles();
            if (DataOperations.REPLACE.equals(snapshot.operation())) {
                return files; // compaction only: no change, no split (F2)
            }
            snapshot.addedDataFiles(table.io()).forEach(f -> files.addedData.add(f));
            files.addedData.forEach(files::count);
            snapshot.removedDataFiles(table.io()).forEach(f -> files.removed(f));
            snapshot.addedDeleteFiles(table.io()).forEach(f -> files.removed(f));
            snapshot.removedDeleteFiles(table.io()).forEach(f -> files.removed(f));
            return files;
        }

        private void removed(ContentFile<?> file) {
            removes = true;
            count(file);
        }

        private void count(ContentFile<?> file) {
            count++;
            bytes += file.fileSizeInBytes();
        }

        List<ChangeFeedSplit> splits(Snapshot snapshot) {
            List<ChangeFeedSplit> splits = new ArrayList<>();
            long v = snapshot.sequenceNumber();
            if (removes) {
                splits.add(
                        ChangeFeedSplit.of(
                                v,
                                snapshot.snapshotId(),
                                snapshot.timestampMillis(),
                                ChangeFeedSplit.Kind.REMOVED,
                                0,
                                null));
            }
            addedData.sort(Comparator.comparing(DataFile::location));
            for (int i = 0; i < addedData.size(); i++) {
                splits.add(
                        ChangeFeedSplit.of(
                                v,
                                snapshot.snapshotId(),
                                snapshot.timestampMillis(),
                                ChangeFeedSplit.Kind.ADDED,
                                i,
                                addedData.get(i).location()));
            }
            return splits;
        }
    }
}

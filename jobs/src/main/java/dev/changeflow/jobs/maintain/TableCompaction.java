package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.RewriteCommitGuard;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.actions.RewriteDataFilesActionResult;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.actions.Actions;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.io.CloseableIterable;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One compaction of a table's data files (M1) with Iceberg's Flink rewrite action ({@link
 * Actions#rewriteDataFiles()}, a bounded Flink batch job): the data files of each partition are
 * read with their equality and position deletes applied and written again as files of up to the
 * table's {@code write.target-file-size-bytes}. A partition with a single file is left as it is.
 *
 * <p>The rewrite plans on the snapshot the given {@link Table} instance holds (it does not refresh
 * it) and commits a {@code replace} snapshot on top of whatever is current then. The new files get
 * the data sequence number of the planned snapshot ({@code useStartingSequenceNumber}), so an
 * equality delete committed while the rewrite ran still removes rows from them (M1). A conflicting
 * concurrent commit (a position delete against a rewritten file, or a removed file) makes the
 * commit fail with Iceberg's {@code ValidationException}; nothing is overwritten. The commit goes
 * through {@link RewriteCommitGuard}: one that would drop an equality delete committed meanwhile
 * that still applies to the new files fails the same way instead of resurrecting rows. The replace
 * snapshot yields no change rows (F2).
 *
 * <p>Delete files are not removed here: they stop applying to the rewritten files (whose sequence
 * number is not below theirs) but stay referenced until {@code DanglingDeletes#remove} (sinks)
 * drops them, as {@link MaintenanceActions#rewrite} does right after.
 *
 * <p><b>Format v3 (row lineage).</b> Iceberg 1.11's Flink rewrite action refuses a table that
 * supports row lineage ("Flink does not support compaction on row lineage enabled tables"). Such a
 * table is compacted with Iceberg's Flink maintenance task {@link RewriteDataFiles} instead, run
 * once as a bounded job (as {@link TablePurge} runs it): it reads every data file with its deletes
 * applied together with the row lineage columns ({@code _row_id}, {@code
 * _last_updated_sequence_number}) and writes them back, so every row keeps its row id (the change
 * feed pairs the updates of a table without identifier fields by it) and the new files keep the
 * planned snapshot's data sequence number (M1). On v3 every data file is rewritten ({@code
 * rewriteAll}), also a partition's single file: that is how the run can tell success from a task
 * that failed (Iceberg's task reports its errors only in its log and metrics) — afterwards no data
 * file of the planned snapshot may be live, else {@link IllegalStateException}. This needs a {@link
 * TableLoader}: {@link #rewrite( StreamExecutionEnvironment, TableLoader, Table)}.
 *
 * <p>Two maintainers must not compact one table at once (no lock is taken in this one-off form).
 */
@PublicEvolving
public final class TableCompaction {
    private TableCompaction() {}

    /**
     * Compacts {@code table} as of the snapshot it holds.
     *
     * @param env the environment of the rewrite job; null for {@link
     *     StreamExecutionEnvironment#getExecutionEnvironment()} with Iceberg's batch configuration
     * @return the files before and after and the versions involved
     * @throws org.apache.iceberg.exceptions.ValidationException when a concurrent commit conflicts
     * @throws IllegalArgumentException when the table has no snapshot yet
     */
    public static Result rewrite(@Nullable StreamExecutionEnvironment env, Table table) {
        Snapshot start = table.currentSnapshot();
        if (start == null) {
            throw new IllegalArgumentException(
                    "table " + table.name() + " has no snapshot yet: nothing to compact");
        }
        if (TableUtil.supportsRowLineage(table)) {
            throw new IllegalArgumentException(
                    "table "
                            + table.name()
                            + " has format version "
                            + TableUtil.formatVersion(table)
                            + " (row lineage), which Iceberg's Flink rewrite action refuses: compact"
                            + " it with TableCompaction.rewrite(env, loader, table)");
        }
        Files before = Files.of(start);
        RewriteDataFilesActionResult r =
                (env == null
                                ? Actions.forTable(RewriteCommitGuard.guard(table))
                                : Actions.forTable(env, RewriteCommitGuard.guard(table)))
                        .rewriteDataFiles()
                        .useStartingSequenceNumber(true)
                        .execute();
        table.refresh();
        Snapshot end = table.currentSnapshot();
        return new Result(
                table.name(),
                start.sequenceNumber(),
                r.deletedDataFiles().isEmpty() ? null : end.sequenceNumber(),
                r.deletedDataFiles().size(),
                r.addedDataFiles().size(),
                before,
                Files.of(end));
    }

    /**
     * Compacts {@code table} as of the snapshot it holds: a table of format v2 as {@link
     * #rewrite(StreamExecutionEnvironment, Table)}, one that supports row lineage (v3) with
     * Iceberg's {@link RewriteDataFiles} maintenance task (class comment).
     *
     * @param env the environment of the rewrite job; null for {@link
     *     StreamExecutionEnvironment#getExecutionEnvironment()} (at parallelism 1 on v3)
     * @param loader loads {@code table} inside the job (used on v3 only)
     * @return the files before and after and the versions involved
     * @throws org.apache.iceberg.exceptions.ValidationException when a concurrent commit conflicts
     *     (v2)
     * @throws IllegalStateException on v3 when a data file of the planned snapshot is still live
     *     after the task ran (the task failed, e.g. on a conflicting concurrent commit; its error
     *     is in the log); nothing was changed then
     * @throws IllegalArgumentException when the table has no snapshot yet
     * @throws Exception when the rewrite job fails
     */
    public static Result rewrite(
            @Nullable StreamExecutionEnvironment env, TableLoader loader, Table table)
            throws Exception {
        if (!TableUtil.supportsRowLineage(table) || table.currentSnapshot() == null) {
            return rewrite(env, table);
        }
        Snapshot start = table.currentSnapshot();
        Files before = Files.of(start);
        Set<String> planned = liveDataFiles(table, start);
        if (env == null) {
            env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
        }
        OrphanFileRemoval.runOnce(
                env,
                loader,
                table,
                RewriteDataFiles.builder().scheduleOnCommitCount(1).rewriteAll(true),
                "changeflow maintain: compaction of " + table.name());
        table.refresh();
        Snapshot end = table.currentSnapshot();
        Set<String> left = liveDataFiles(table, end);
        left.retainAll(planned);
        if (!left.isEmpty()) {
            throw new IllegalStateException(
                    "the compaction of "
                            + table.name()
                            + " (format v3) at version "
                            + start.sequenceNumber()
                            + " committed nothing: "
                            + left.size()
                            + " of its "
                            + planned.size()
                            + " data file(s) are still live, so Iceberg's RewriteDataFiles task"
                            + " failed (its error is in the log; a concurrent commit that removed"
                            + " or position-deleted one of the files makes it fail); the table is"
                            + " unchanged, run it again");
        }
        Long committed = null;
        int added = 0;
        for (Snapshot s = end;
                s != null && s.snapshotId() != start.snapshotId();
                s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
            if (DataOperations.REPLACE.equals(s.operation())) {
                committed = committed == null ? s.sequenceNumber() : committed;
                added += (int) total(s.summary(), SnapshotSummary.ADDED_FILES_PROP);
            }
        }
        return new Result(
                table.name(),
                start.sequenceNumber(),
                planned.isEmpty() ? null : committed,
                planned.size(),
                added,
                before,
                Files.of(end));
    }

    /** Locations of the live data files of {@code snapshot}. */
    static Set<String> liveDataFiles(Table table, Snapshot snapshot) {
        Set<String> files = new TreeSet<>();
        try (CloseableIterable<FileScanTask> tasks =
                table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
            for (FileScanTask t : tasks) {
                DataFile f = t.file();
                files.add(f.location());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    private static long total(Map<String, String> summary, String key) {
        String v = summary.get(key);
        return v == null ? 0 : Long.parseLong(v);
    }

    /** Live files of a snapshot, from its summary. */
    public static final class Files {
        /** Live data files. */
        public final long dataFiles;

        /** Live delete files (equality and position). */
        public final long deleteFiles;

        /** Live data rows before deletes are applied. */
        public final long records;

        Files(long dataFiles, long deleteFiles, long records) {
            this.dataFiles = dataFiles;
            this.deleteFiles = deleteFiles;
            this.records = records;
        }

        /** The totals in {@code snapshot}'s summary. */
        public static Files of(Snapshot snapshot) {
            Map<String, String> s = snapshot.summary();
            return new Files(
                    total(s, SnapshotSummary.TOTAL_DATA_FILES_PROP),
                    total(s, SnapshotSummary.TOTAL_DELETE_FILES_PROP),
                    total(s, SnapshotSummary.TOTAL_RECORDS_PROP));
        }

        private static long total(Map<String, String> summary, String key) {
            String v = summary.get(key);
            return v == null ? 0 : Long.parseLong(v);
        }
    }

    /** What one compaction did. */
    public static final class Result {
        /** The table's name. */
        public final String table;

        /** The version the rewrite read (and whose sequence number the new files carry). */
        public final long plannedVersion;

        /** The version of the replace snapshot; null when nothing was rewritten. */
        @Nullable public final Long committedVersion;

        /** Data files replaced. */
        public final int rewrittenFiles;

        /** Data files written. */
        public final int addedFiles;

        /** Live files at the planned version. */
        public final Files before;

        /** Live files after the commit. */
        public final Files after;

        Result(
                String table,
                long plannedVersion,
                @Nullable Long committedVersion,
                int rewrittenFiles,
                int addedFiles,
                Files before,
                Files after) {
            this.table = table;
            this.plannedVersion = plannedVersion;
            this.committedVersion = committedVersion;
            this.rewrittenFiles = rewrittenFiles;
            this.addedFiles = addedFiles;
            this.before = before;
            this.after = after;
        }

        /** A few lines for the command line. */
        public String describe() {
            StringBuilder b = new StringBuilder();
            b.append(
                    String.format(
                            Locale.ROOT, "Rewrite of %s at version %d: ", table, plannedVersion));
            if (committedVersion == null) {
                b.append("nothing to rewrite (no partition has more than one data file)\n");
            } else {
                b.append(
                        String.format(
                                Locale.ROOT,
                                "%d data files rewritten into %d, committed as version %d (data"
                                        + " sequence number %d kept)%n",
                                rewrittenFiles,
                                addedFiles,
                                committedVersion,
                                plannedVersion));
            }
            b.append(
                    String.format(
                            Locale.ROOT,
                            "  data files   %,d -> %,d%n  delete files %,d -> %,d%n"
                                    + "  data rows    %,d -> %,d (before deletes)",
                            before.dataFiles,
                            after.dataFiles,
                            before.deleteFiles,
                            after.deleteFiles,
                            before.records,
                            after.records));
            return b.toString();
        }
    }
}

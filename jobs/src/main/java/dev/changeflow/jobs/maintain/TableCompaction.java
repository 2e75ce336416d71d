package dev.changeflow.jobs.maintain;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.actions.RewriteDataFilesActionResult;
import org.apache.iceberg.flink.actions.Actions;

import javax.annotation.Nullable;

import java.util.Locale;
import java.util.Map;

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
 * commit fail with Iceberg's {@code ValidationException}; nothing is overwritten. The replace
 * snapshot yields no change rows (F2).
 *
 * <p>Delete files are not removed here: they stop applying to the rewritten files (whose sequence
 * number is not below theirs) but stay referenced until {@code DanglingDeletes#remove} (sinks)
 * drops them, as {@link MaintenanceActions#rewrite} does right after.
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
        Files before = Files.of(start);
        RewriteDataFilesActionResult r =
                (env == null ? Actions.forTable(table) : Actions.forTable(env, table))
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

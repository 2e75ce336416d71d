package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.DanglingDeletes;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;
import dev.changeflow.sources.cdf.retention.ConsumerPosition;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.cdf.retention.ExpiryReport;
import dev.changeflow.sources.cdf.retention.FlinkCommitters;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.util.SnapshotUtil;

import javax.annotation.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code REORG TABLE t APPLY (PURGE)} (semantics.md S6, M3): removes deleted rows physically, so no
 * file of the table's live snapshots holds a row that was deleted or an old value of an updated
 * row. Three steps, each Iceberg's own operation:
 *
 * <ol>
 *   <li><b>Rewrite every data file</b> with its deletes applied: Iceberg's Flink {@link
 *       RewriteDataFiles} maintenance task with {@code rewriteAll}, run once as a bounded job. The
 *       new files keep the data sequence number of the snapshot the rewrite planned on, so an
 *       equality delete an ingest commits meanwhile still applies to them (M1).
 *   <li><b>Drop the delete files that no longer apply</b>: an equality delete applies to data files
 *       of a lower data sequence number, a position delete to those of a lower or equal one; once
 *       every live data file is at or above that, the delete file is dangling — and changeflow's
 *       equality deletes carry whole rows ({@code changeflow.eq-deletes-carry-rows}), so they must
 *       go too. {@link DanglingDeletes#remove} drops them in one {@link RewriteFiles} commit
 *       ({@code replace}: no change rows, F2), per partition spec and partition.
 *   <li><b>Expire every older snapshot</b> with changeflow's consumer-aware expiry (F7): the files
 *       only those snapshots referenced are deleted. Iceberg deletes a file when the snapshot that
 *       removed it expires, so an empty commit (summary {@code changeflow.purge=true}, no change
 *       rows) comes first and the rewrite and drop snapshots expire with the rest. It carries the
 *       {@code flink.*} stamp (job id, operator id, last committed checkpoint) of the newest commit
 *       of the Iceberg Flink sink committer that wrote the table — one closing commit per live
 *       committer ({@link FlinkCommitters#live}) — and is made only on top of the snapshot that
 *       stamp was read from ({@link #closingCommits}). The expiry keeps each committer's newest
 *       commit reachable (F7, issue #17), which after the closing commits is the closing commit:
 *       the ingest writing the table resumes from its checkpoint or savepoint as before. Versions a
 *       live change-feed consumer still needs are kept, and the result names the consumers that
 *       hold them: the purge is then not complete until they move on (or are stale).
 * </ol>
 *
 * <p>The change feed of the purged versions is gone (their snapshots are expired); later versions
 * read as before. Two maintainers must not run on one table at once (an in-process lock only).
 */
@PublicEvolving
public final class TablePurge {
    /** Snapshot summary property of the empty commit that ends a purge. */
    public static final String PURGE_PROPERTY = "changeflow.purge";

    private TablePurge() {}

    /**
     * Purges {@code table}.
     *
     * @param env the environment of the rewrite job (bounded; executed here)
     * @param loader loads the table inside the job
     * @param consumerExpiry consumers not updated for this long do not hold snapshots back
     * @return what each step did
     * @throws IllegalArgumentException when the table has no snapshot yet
     * @throws IllegalStateException when a consumer file of the table is malformed ({@link
     *     ConsumerRegistry#list}), before anything is rewritten
     * @throws IllegalStateException when the rewrite task committed nothing (it failed; its error
     *     is in the log): nothing is expired then
     * @throws Exception when the rewrite job fails, or concurrent commits conflict with each
     *     attempt at the drop of the dangling delete files (Iceberg's {@code ValidationException},
     *     {@link DanglingDeletes#remove}; run it again)
     */
    public static Result run(
            StreamExecutionEnvironment env,
            TableLoader loader,
            Table table,
            Duration consumerExpiry)
            throws Exception {
        Snapshot start = table.currentSnapshot();
        if (start == null) {
            throw new IllegalArgumentException(
                    "table " + table.name() + " has no snapshot yet: nothing to purge");
        }
        // a malformed consumer file stops the expiry: found now, before anything is rewritten
        ConsumerRegistry.forTable(table).list();
        TableCompaction.Files before = TableCompaction.Files.of(start);
        State state = state(table);
        if (state.clean() && !state.olderKept) {
            // nothing to rewrite and nothing older to expire: no new version either
            return new Result(
                    table.name(), before, before, 0, null, List.of(), true, -1, List.of());
        }
        TableCompaction.Files rewritten = before;
        int dropped = 0;
        long closingFrom;
        List<Long> racing = List.of();
        if (state.clean()) {
            // an earlier purge's rewrite is current and nothing deleted a row since: only its
            // expiry is left (a consumer held older versions), so no rewrite and no new version
            closingFrom = state.closingFrom;
        } else {
            Set<String> planned = TableCompaction.liveDataFiles(table, start);
            OrphanFileRemoval.runOnce(
                    env,
                    loader,
                    table,
                    RewriteDataFiles.builder().scheduleOnCommitCount(1).rewriteAll(true),
                    "changeflow maintain: purge of " + table.name());
            table.refresh();
            Set<String> left = TableCompaction.liveDataFiles(table, table.currentSnapshot());
            left.retainAll(planned);
            if (!left.isEmpty()) {
                // Iceberg's task reports a failure only in its log and metrics: a purge that went
                // on would expire and report complete while the deleted rows are still in these
                // files
                throw new IllegalStateException(
                        "the purge of "
                                + table.name()
                                + " stopped: its rewrite at version "
                                + start.sequenceNumber()
                                + " committed nothing ("
                                + left.size()
                                + " of "
                                + planned.size()
                                + " data file(s) still live), so Iceberg's RewriteDataFiles task"
                                + " failed (its error is in the log; a concurrent commit that"
                                + " removed or position-deleted one of the files makes it fail);"
                                + " nothing was expired, run it again");
            }
            dropped = DanglingDeletes.remove(table).removed.size();
            table.refresh();
            rewritten = TableCompaction.Files.of(table.currentSnapshot());
            // Iceberg deletes a removed file when the snapshot that removed it is expired: an
            // empty commit on top lets the expiry take the rewrite and the drop too (F2)
            closingFrom = closingCommits(table, consumerExpiry);
            table.refresh();
            racing = racingDeletes(table, start.sequenceNumber(), closingFrom);
        }
        ExpiryReport expiry =
                ChangeFeedExpiry.forTable(table)
                        .olderThan(Instant.now())
                        .retainLast(1)
                        .consumerExpiry(consumerExpiry)
                        .execute();
        table.refresh();
        List<ConsumerPosition> blocking = new ArrayList<>();
        for (ConsumerPosition c : expiry.liveConsumers()) {
            if (c.nextVersion() - 1 < closingFrom) {
                blocking.add(c);
            }
        }
        boolean complete =
                expiry.oldestRetainedVersion() != null
                        && expiry.oldestRetainedVersion() >= closingFrom;
        return new Result(
                table.name(),
                before,
                rewritten,
                dropped,
                expiry,
                blocking,
                complete,
                state.clean() ? -1 : start.sequenceNumber(),
                racing);
    }

    /**
     * Where {@code main} stands for a purge. {@code closingFrom}: the version of the oldest closing
     * commit of the newest purge when every snapshot from it to the current one holds no delete
     * file (no live data file of those versions holds a deleted row) and each snapshot after it is
     * an append, else -1 (a purge must rewrite). {@code olderKept}: versions older than those
     * closing commits are still retained.
     */
    record State(long closingFrom, boolean olderKept) {
        boolean clean() {
            return closingFrom >= 0;
        }
    }

    static State state(Table table) {
        long closingFrom = -1;
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            boolean closing = "true".equals(s.summary().get(PURGE_PROPERTY));
            if (!closing && closingFrom >= 0) {
                return new State(closingFrom, true); // a version older than the closing commits
            }
            if (TableCompaction.Files.of(s).deleteFiles > 0) {
                return new State(-1, false); // e.g. rows a commit racing the last purge deleted
            }
            if (closing) {
                closingFrom = s.sequenceNumber();
            } else if (!DataOperations.APPEND.equals(s.operation())) {
                return new State(-1, false);
            }
        }
        return new State(closingFrom, false);
    }

    /**
     * Whether {@code table} needs no purge: {@code main}'s retained history is the closing commits
     * of an earlier purge, optionally followed by appends, and none of them holds a delete file (so
     * no row was deleted or updated since). Then no retained snapshot can reference a data file
     * holding a deleted row.
     */
    static boolean alreadyPurged(Table table) {
        State state = state(table);
        return state.clean() && !state.olderKept;
    }

    /**
     * Versions of {@code main} after {@code fromVersion} and before {@code toVersion} that added
     * delete files, oldest first: the commits that deleted or updated rows while a purge that read
     * {@code fromVersion} ran (its own rewrite and drop add none).
     */
    static List<Long> racingDeletes(Table table, long fromVersion, long toVersion) {
        List<Long> racing = new ArrayList<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            long v = s.sequenceNumber();
            String added = s.summary().get(SnapshotSummary.ADDED_DELETE_FILES_PROP);
            if (v > fromVersion && v < toVersion && added != null && Long.parseLong(added) > 0) {
                racing.add(0, v);
            }
        }
        return racing;
    }

    /** Closing rounds tried before a purge gives up on commits racing it. */
    static final int CLOSING_ATTEMPTS = 10;

    /**
     * The empty closing commits (summary {@value #PURGE_PROPERTY}{@code =true}, no change rows,
     * F2): one per live Iceberg Flink sink committer ({@link FlinkCommitters#live}), oldest first,
     * each carrying the {@code flink.*} summary properties of that committer's newest commit — or
     * one without them when no Flink job committed. The expiry after them keeps every committer's
     * newest commit reachable, so without the copies it would keep the snapshots that still hold
     * the purged rows; with them, a resumed ingest finds its last committed checkpoint in a closing
     * commit (issue #17).
     *
     * <p>The copies are only right when nothing was committed between the snapshot they were read
     * from and the closing commit: a copy of checkpoint n on top of the commit of checkpoint n + 1
     * would make a restored ingest commit checkpoint n + 1 again. So each closing commit is made
     * only on top of the snapshot it expects ({@link ParentGuard}); when an ingest commits
     * meanwhile, the round starts again from the new current snapshot.
     *
     * @return the version of the first closing commit of the round that went through
     * @throws IllegalStateException when commits raced every one of {@value #CLOSING_ATTEMPTS}
     *     rounds
     */
    static long closingCommits(Table table, Duration consumerExpiry) {
        for (int attempt = 1; attempt <= CLOSING_ATTEMPTS; attempt++) {
            table.refresh();
            long parent = table.currentSnapshot().snapshotId();
            List<Map<String, String>> stamps = new ArrayList<>();
            for (FlinkCommitters.Committer c :
                    FlinkCommitters.live(table, Instant.now(), consumerExpiry)) {
                stamps.add(c.properties());
            }
            if (stamps.isEmpty()) {
                stamps.add(Map.of());
            }
            Long first = null;
            try {
                for (Map<String, String> stamp : stamps) {
                    Snapshot closing = commitOnTop(table, parent, stamp);
                    parent = closing.snapshotId();
                    first = first == null ? closing.sequenceNumber() : first;
                }
                return first;
            } catch (ParentGuard.MainMovedException e) {
                // an ingest committed meanwhile: stamp again on top of it
            }
        }
        throw new IllegalStateException(
                "purge of "
                        + table.name()
                        + ": commits to main raced each of "
                        + CLOSING_ATTEMPTS
                        + " attempts at the closing commit; run it again");
    }

    /**
     * One empty append on {@code main} whose parent is exactly {@code parentId}, its summary
     * {@value #PURGE_PROPERTY}{@code =true} and {@code stamp}.
     *
     * @return the committed snapshot
     * @throws ParentGuard.MainMovedException when {@code main} is no longer at {@code parentId}
     */
    static Snapshot commitOnTop(Table table, long parentId, Map<String, String> stamp) {
        ParentGuard guard = new ParentGuard(((HasTableOperations) table).operations(), parentId);
        AppendFiles closing =
                new BaseTable(guard, table.name()).newFastAppend().set(PURGE_PROPERTY, "true");
        stamp.forEach(closing::set);
        closing.commit();
        return guard.committed();
    }

    /** What a purge did. */
    public static final class Result {
        /** The table's name. */
        public final String table;

        /** Live files before, and after the rewrite and the drop of dangling delete files. */
        public final TableCompaction.Files before;

        public final TableCompaction.Files after;

        /** Delete files removed because they no longer applied. */
        public final int droppedDeleteFiles;

        /** The expiry of the older snapshots; null when the table was already purged. */
        @Nullable public final ExpiryReport expiry;

        /** Live consumers that kept older snapshots. */
        public final List<ConsumerPosition> blockingConsumers;

        private final boolean complete;

        /** The version the rewrite read: every row deleted up to it is purged; -1 when none ran. */
        public final long purgedUpTo;

        /**
         * Versions committed during the purge that deleted or updated rows ({@link
         * #racingDeletes}).
         */
        public final List<Long> racingDeletes;

        Result(
                String table,
                TableCompaction.Files before,
                TableCompaction.Files after,
                int droppedDeleteFiles,
                @Nullable ExpiryReport expiry,
                List<ConsumerPosition> blockingConsumers,
                boolean complete,
                long purgedUpTo,
                List<Long> racingDeletes) {
            this.table = table;
            this.before = before;
            this.after = after;
            this.droppedDeleteFiles = droppedDeleteFiles;
            this.expiry = expiry;
            this.blockingConsumers = blockingConsumers;
            this.complete = complete;
            this.purgedUpTo = purgedUpTo;
            this.racingDeletes = racingDeletes;
        }

        /**
         * Whether only the closing commits (and commits made after them) are left in main's
         * history, so no retained snapshot can hold a deleted row any more.
         */
        public boolean complete() {
            return complete;
        }

        /** Lines for the command line. */
        public String describe() {
            if (expiry == null) {
                return String.format(
                        Locale.ROOT,
                        "Purge of %s: nothing to do, already purged (no delete file, and no version"
                                + " older than the last purge's closing commit is kept); no version"
                                + " written",
                        table);
            }
            String head =
                    String.format(
                            Locale.ROOT,
                            "Purge of %s: data files %,d -> %,d, delete files %,d -> %,d"
                                    + " (%,d no longer applying removed)%n%s",
                            table,
                            before.dataFiles,
                            after.dataFiles,
                            before.deleteFiles,
                            after.deleteFiles,
                            droppedDeleteFiles,
                            expiry.describe());
            if (purgedUpTo < 0) {
                head =
                        String.format(
                                        Locale.ROOT,
                                        "Purge of %s: the rewrite of an earlier purge is current and no row"
                                                + " was deleted since; expiring the versions before it%n",
                                        table)
                                + expiry.describe();
            }
            if (complete() && !racingDeletes.isEmpty()) {
                return head
                        + String.format(
                                Locale.ROOT,
                                "%nPurge complete for the rows deleted up to version %d: no"
                                        + " retained snapshot holds them. %d commit(s) made during"
                                        + " the purge (version(s) %s) deleted or updated rows too;"
                                        + " those rows stay in the table's files until the next"
                                        + " purge.",
                                purgedUpTo,
                                racingDeletes.size(),
                                racingDeletes.stream()
                                        .map(String::valueOf)
                                        .collect(Collectors.joining(", ")));
            }
            if (complete()) {
                return head
                        + String.format(
                                "%nPurge complete: no retained snapshot holds a deleted row");
            }
            return head
                    + String.format(
                            Locale.ROOT,
                            "%nPurge NOT complete: versions from %d are kept%s; their files may"
                                    + " still hold deleted rows. Run it again once they have moved"
                                    + " on (or after --consumer-expiry).",
                            expiry.oldestRetainedVersion(),
                            blockingConsumers.isEmpty()
                                    ? " (the table's history.expire.min-snapshots-to-keep, or a"
                                            + " commit made during the purge)"
                                    : " for the live change-feed consumers "
                                            + blockingConsumers.stream()
                                                    .map(ConsumerPosition::consumerId)
                                                    .collect(Collectors.toList()));
        }
    }
}

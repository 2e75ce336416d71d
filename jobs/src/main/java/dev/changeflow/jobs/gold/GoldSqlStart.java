package dev.changeflow.jobs.gold;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;
import dev.changeflow.sources.cdf.sql.SourceVersionLog;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Where a run of {@code gold FILE.sql} starts (docs/semantics.md G3), before its job is built.
 * Every run starts without Flink state, so it rebuilds the queries' state from its changelog reads:
 * each read gives Silver's rows as of version N−1 as inserts, then the changes from N (G1
 * snapshot-then-changes; N = {@code starting-version}, by default one past Silver's latest
 * version). To end with exactly the Gold tables an uninterrupted run gives, the run first empties
 * each Gold table that has rows ({@link #reset}): the query then emits every row the Gold table
 * must hold, and the upsert sink's last write of each key is its final value.
 *
 * <p><b>The recorded version</b> of a Gold table for Silver table {@code s} ({@link
 * #recordedVersion}) is {@code changeflow.source-version.<s>} of its newest commit that has one
 * (G2, {@link SourceVersionLog}); a commit of an emptying run ({@value #RESET_PREFIX}{@code <s>} =
 * N) before it stands for N−1: that run rebuilds Gold as of Silver's version N−1 onwards, and its
 * commits carry no version until its reads' snapshots are complete.
 *
 * <p><b>Per INSERT</b> (issue #16): a Gold table's reads are the changelog reads of the INSERTs
 * that write it, not every read of the file's job; its commits record the versions of those reads
 * only ({@link dev.changeflow.sources.cdf.sql.SourceVersionStamping}), and the gap rule, the
 * emptying and its marks below concern those reads only.
 *
 * <p><b>The gap rule</b> (G3, {@link #checkNoGap}): a read of {@code s} with an explicit {@code
 * starting-version} N, in an INSERT into a Gold table recorded at R for {@code s}, fails with
 * {@code GOLD_VERSION_MISMATCH} when N > R + 1 and versions R+1..N−1 have changes — checked for
 * every Gold table and each of its own reads before anything is committed. A replay that starts
 * later than the Gold tables' history reaches is almost always the wrong version (a typo, another
 * table's numbering), and its Gold history would jump over Silver versions it never reflected. A
 * start at or before R + 1 is always fine: the tables are rebuilt.
 *
 * <p>Reads with {@code 'start-mode'='changes-only'} do not rebuild Gold's state from a snapshot, so
 * a Gold table written from one is not emptied (the gap rule still applies to it); nor is a Gold
 * table whose INSERTs read no changelog.
 */
@Internal
public final class GoldSqlStart {
    /**
     * Summary property prefix of the commit that empties a Gold table before a run: {@code
     * changeflow.gold-reset.<db.table>} = the first Silver version the run reads of that table.
     */
    public static final String RESET_PREFIX = "changeflow.gold-reset.";

    /**
     * Summary property of an emptying commit made for a cluster job with a fixed job id: that id.
     * When the program runs again for the same job id (its JobManager recovering it), the tables
     * are not emptied again ({@link #emptiedForJob}).
     */
    public static final String RESET_JOB_ID = "changeflow.gold-reset-job-id";

    private GoldSqlStart() {}

    /**
     * Whether one of {@code gold}'s commits (current ancestry) emptied it for job {@code jobId}
     * ({@value #RESET_JOB_ID}).
     */
    public static boolean emptiedForJob(Table gold, String jobId) {
        gold.refresh();
        if (gold.currentSnapshot() == null) {
            return false;
        }
        for (Snapshot s : SnapshotUtil.currentAncestors(gold)) {
            if (s.summary() != null && jobId.equals(s.summary().get(RESET_JOB_ID))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A changelog read's start: its Silver table ({@code db.t}), its explicit starting version
     * (null: Silver's current snapshot, or a timestamp/{@code latest}), and whether it starts with
     * a snapshot.
     */
    public record Read(String table, @Nullable Long startingVersion, boolean snapshotFirst) {}

    /**
     * The distinct reads of {@code reads} (each planning of a statement lists its reads again): per
     * table, the smallest explicit starting version; a read without one stands for none.
     */
    public static List<Read> reads(List<ChangeflowCatalog.ChangelogRead> reads) {
        Map<String, Read> byTable = new TreeMap<>();
        for (ChangeflowCatalog.ChangelogRead r : reads) {
            String v = r.options().get(ChangeFeedOptions.STARTING_VERSION.key());
            Long version = v != null && v.matches("\\d+") ? Long.valueOf(v) : null;
            String mode = r.options().get(ChangeFeedOptions.START_MODE.key());
            boolean snapshot =
                    mode == null
                            || mode.toLowerCase(Locale.ROOT)
                                    .replace('_', '-')
                                    .equals(
                                            ChangeFeedOptions.StartMode.SNAPSHOT_THEN_CHANGES
                                                    .value());
            Read read = new Read(r.table(), version, snapshot);
            byTable.merge(r.table(), read, GoldSqlStart::merge);
        }
        return new ArrayList<>(byTable.values());
    }

    private static Read merge(Read a, Read b) {
        Long version;
        if (a.startingVersion() == null) {
            version = b.startingVersion();
        } else if (b.startingVersion() == null) {
            version = a.startingVersion();
        } else {
            version = Math.min(a.startingVersion(), b.startingVersion());
        }
        return new Read(a.table(), version, a.snapshotFirst() && b.snapshotFirst());
    }

    /**
     * The Silver version of {@code silver} ({@code db.t}) up to which {@code gold} is recorded
     * complete: see the class comment.
     *
     * @return empty when no commit of {@code gold} names {@code silver}
     */
    public static OptionalLong recordedVersion(Table gold, String silver) {
        gold.refresh();
        if (gold.currentSnapshot() == null) {
            return OptionalLong.empty();
        }
        for (Snapshot s : SnapshotUtil.currentAncestors(gold)) {
            Map<String, String> summary = s.summary();
            String v =
                    summary == null
                            ? null
                            : summary.get(SourceVersionLog.SOURCE_VERSION_PREFIX + silver);
            if (v != null) {
                return OptionalLong.of(Long.parseLong(v));
            }
            String reset = summary == null ? null : summary.get(RESET_PREFIX + silver);
            if (reset != null) {
                return OptionalLong.of(Long.parseLong(reset) - 1);
            }
        }
        return OptionalLong.empty();
    }

    /**
     * Checks every read with an explicit starting version against every Gold table's recorded
     * version of its Silver table (G3 gap rule), before anything is committed: {@link #check(Map,
     * Map, Function)} for Gold tables that are all written from {@code reads}.
     *
     * @param gold the INSERT targets that exist, by name
     * @param silver loads a Silver table by {@code db.t}
     * @throws GoldException {@code GOLD_VERSION_MISMATCH} naming the Gold table, its recorded
     *     version and the starting version
     */
    public static void check(
            Map<String, Table> gold, List<Read> reads, Function<String, Table> silver) {
        Map<String, List<Read>> readsOf = new LinkedHashMap<>();
        gold.keySet().forEach(g -> readsOf.put(g, reads));
        check(gold, readsOf, silver);
    }

    /**
     * Checks each Gold table against the reads of its own INSERTs (G3 gap rule, per INSERT): every
     * read in {@code readsOf.get(g)} with an explicit starting version against {@code g}'s recorded
     * version of that read's Silver table, before anything is committed. A Gold table is never
     * checked against a read it is not written from: it records no version of that read's table (or
     * an older one, written before issue #16), which says nothing about what it holds.
     *
     * @param gold the INSERT targets that exist, by name
     * @param readsOf per Gold table name, the reads of the INSERTs into it ({@link #reads}); a
     *     table without entry has none
     * @param silver loads a Silver table by {@code db.t}
     * @throws GoldException {@code GOLD_VERSION_MISMATCH} naming the Gold table, its recorded
     *     version and the starting version
     */
    public static void check(
            Map<String, Table> gold,
            Map<String, List<Read>> readsOf,
            Function<String, Table> silver) {
        Map<String, Table> loaded = new TreeMap<>();
        for (Map.Entry<String, Table> g : gold.entrySet()) {
            for (Read read : readsOf.getOrDefault(g.getKey(), List.of())) {
                if (read.startingVersion() == null) {
                    continue;
                }
                OptionalLong recorded = recordedVersion(g.getValue(), read.table());
                if (recorded.isEmpty()) {
                    continue;
                }
                Table s =
                        loaded.computeIfAbsent(
                                read.table(),
                                name -> {
                                    Table t = silver.apply(name);
                                    t.refresh();
                                    return t;
                                });
                long latest =
                        s.currentSnapshot() == null ? 0 : s.currentSnapshot().sequenceNumber();
                checkNoGap(
                        s,
                        "Gold table "
                                + g.getKey()
                                + " (recorded "
                                + SourceVersionLog.SOURCE_VERSION_PREFIX
                                + read.table()
                                + " = "
                                + recorded.getAsLong()
                                + ")",
                        recorded.getAsLong(),
                        read.startingVersion(),
                        latest);
            }
        }
    }

    /**
     * Whether the run rebuilds the Gold tables: every read starts with Silver's rows (G1
     * snapshot-then-changes, the default).
     */
    public static boolean rebuilds(List<Read> reads) {
        return !reads.isEmpty() && reads.stream().allMatch(Read::snapshotFirst);
    }

    /**
     * Empties {@code gold} when it has rows, in one commit carrying {@value #RESET_PREFIX}{@code
     * <db.t>} = the first version read of each Silver table ({@code firstVersion}).
     *
     * @return whether a commit was made
     */
    public static boolean reset(Table gold, Map<String, Long> firstVersion) {
        return reset(gold, firstVersion, null);
    }

    /**
     * As {@link #reset(Table, Map)}; a non-null {@code jobId} (a cluster job's fixed id) is
     * recorded on the commit as {@value #RESET_JOB_ID}, for {@link #emptiedForJob}; the commit is
     * then made on a table without snapshot too (so the mark exists).
     */
    public static boolean reset(
            Table gold, Map<String, Long> firstVersion, @Nullable String jobId) {
        gold.refresh();
        if (gold.currentSnapshot() == null && jobId == null) {
            return false;
        }
        boolean rows =
                gold.currentSnapshot() != null && gold.newScan().planFiles().iterator().hasNext();
        DeleteFiles delete = gold.newDelete().deleteFromRowFilter(Expressions.alwaysTrue());
        Map<String, String> marks = new LinkedHashMap<>();
        firstVersion.forEach((t, v) -> marks.put(RESET_PREFIX + t, Long.toString(v)));
        if (!rows && marks.isEmpty()) {
            return false;
        }
        if (jobId != null) {
            marks.put(RESET_JOB_ID, jobId);
        }
        marks.forEach(delete::set);
        delete.commit();
        return true;
    }

    /**
     * G3's gap rule: a start without state at Silver version {@code requested} beside Gold tables
     * complete up to version {@code g} must not skip a version that has changes. Fails when {@code
     * requested} is after Silver's next version, or when {@code requested > g + 1} and versions
     * {@code g + 1 .. requested - 1} hold at least one change (versions without changes, such as
     * compactions, leave nothing to skip).
     *
     * @param tables how the message names the Gold tables
     * @param latest Silver's latest version
     * @throws GoldException {@code GOLD_VERSION_MISMATCH} naming the tables, {@code g} and {@code
     *     requested}; also when the versions after {@code g} are expired
     */
    static void checkNoGap(Table silver, String tables, long g, long requested, long latest) {
        if (requested > latest + 1) {
            throw afterLatest(
                    requested,
                    silver,
                    latest,
                    "start at version " + (g + 1) + " or omit the starting version");
        }
        if (requested > g + 1) {
            long changes = checkAvailable(silver, g + 1, requested - 1, tables, g, true);
            if (changes > 0) {
                throw new GoldException(
                        GoldException.Code.GOLD_VERSION_MISMATCH,
                        String.format(
                                "starting version %d leaves a gap: %s contain Silver %s up to version %d, and versions %d..%d "
                                        + "hold %d change(s) no Gold commit contains. Start at version %d (or omit the starting version).",
                                requested,
                                tables,
                                silver.name(),
                                g,
                                g + 1,
                                requested - 1,
                                changes,
                                g + 1));
            }
        }
    }

    private static GoldException afterLatest(
            long requested, Table silver, long latest, String fix) {
        return new GoldException(
                GoldException.Code.GOLD_VERSION_MISMATCH,
                String.format(
                        "starting version %d is after Silver %s's next version %d (its latest is %d): %s.",
                        requested, silver.name(), latest + 1, latest, fix));
    }

    /**
     * Checks that versions from..to are still available (their snapshots not expired, F4) and, when
     * {@code count} is set, counts their changes (none when from > to). The check alone only plans
     * the range from the table's metadata; the job reads the changes anyway, and a data file gone
     * since fails it with {@code VERSION_NOT_AVAILABLE} (K6).
     *
     * @return the number of changes, or 0 when not counted
     * @throws GoldException GOLD_VERSION_MISMATCH when a version of the range has expired
     */
    private static long checkAvailable(
            Table silver, long from, long to, String tables, long g, boolean count) {
        if (from > to) {
            return 0;
        }
        try {
            if (!count) {
                TableChanges.forTable(silver).startingVersion(from).endingVersion(to).build();
                return 0;
            }
            return countChanges(silver, from, to);
        } catch (CdfException e) {
            if (e.code() != CdfException.ErrorCode.VERSION_NOT_AVAILABLE) {
                throw e;
            }
            throw new GoldException(
                    GoldException.Code.GOLD_VERSION_MISMATCH,
                    String.format(
                            "%s contain Silver %s up to version %d, but versions from %d on are no longer available (snapshots"
                                    + " expired), so Gold cannot continue exactly: rebuild it from Silver's current snapshot (omit"
                                    + " the starting version). %s",
                            tables, silver.name(), g, from, e.getMessage()),
                    e);
        }
    }

    private static long countChanges(Table silver, long from, long to) {
        long n = 0;
        try (CloseableIterable<Record> rows =
                TableChanges.forTable(silver)
                        .startingVersion(from)
                        .endingVersion(to)
                        .build()
                        .read()) {
            for (Record ignored : rows) {
                n++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }
}

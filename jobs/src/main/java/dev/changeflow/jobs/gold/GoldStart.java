package dev.changeflow.jobs.gold;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.stream.ChangeFeedStart;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.OptionalLong;

/**
 * Where a Silver→Gold job starts reading the Silver change feed when it starts <em>without</em>
 * Flink state (a first start, every local run — local runs keep no state —, or a restart with a new
 * checkpoint after the old one was lost).
 *
 * <p><b>What a Gold table holds.</b> Every Gold commit holds whole Silver versions: all changes of
 * the versions up to some version W and none of a later one. The change feed emits the changes of
 * version v when its watermark reaches v, and a watermark of v follows every change of versions
 * {@code <= v} (design.md "Order — the guarantee"); the upsert operator passes them on as they
 * come, the aggregate applies them at that watermark. Watermarks reach every subtask downstream,
 * and with aligned checkpoints (the Gold job turns unaligned ones off) each subtask snapshots after
 * all its inputs sent before the barrier, so whether watermark v came before barrier c is the same
 * on every subtask: the writers of checkpoint c hold all changes of version v or none, however many
 * splits, readers and subtasks carry them, and so does each table's commit of c. The two tables are
 * committed by two committers, so a process killed between them leaves one table a checkpoint
 * behind the other.
 *
 * <p><b>The Gold version</b> of a table is the largest {@code _source_version} it received (the
 * upper bound of the column over its data files). It is at most the table's W, so every change of
 * the versions up to it is in the table, and it may lag W: a version that only deleted upsert rows,
 * or changed only rows the filter or a NULL group drops, leaves no row. A table without rows has no
 * Gold version: its filter matched nothing yet, or the commit that brought its first rows was lost.
 * Hence:
 *
 * <ul>
 *   <li>each Gold operator skips the changes of versions up to its own table's Gold version (they
 *       are in it), and a start below a table's W replays versions harmlessly: the upsert table's
 *       rows are decided by the last change of their key (upserts and deletes by key are
 *       idempotent; a change that the filter drops, or a preimage, applies only where Gold holds no
 *       row of the key anyway), the aggregate skips per group the versions its row contains ({@link
 *       GoldAggregateFunction});
 *   <li>no Gold table has a row and no starting version is given → the initial snapshot of Silver
 *       (as inserts), then its later changes;
 *   <li>every Gold table has rows and no starting version is given → the changes from {@code
 *       min(gold versions) + 1};
 *   <li>one existing table without rows beside one with rows at Gold version G → Silver's rows as
 *       of G (as inserts, tagged with that snapshot's version, as the initial snapshot's are), then
 *       the changes from G + 1 ({@link #snapshotFirst()}, G1 snapshot-then-changes): the table
 *       without rows takes them all and so holds Silver's projection whatever its commits lost, the
 *       other skips what is in it;
 *   <li>a table that does not exist yet beside one with rows → {@code GOLD_VERSION_MISMATCH} (the
 *       initial snapshot that fills one would be counted twice in the other);
 *   <li>an explicit starting version S is checked against the job's Gold version G (the aggregate's
 *       when it has rows, else the upsert table's): {@code S <= G} would apply versions twice
 *       (overlap), {@code S > G + 1} would skip the changes of versions {@code G + 1 .. S - 1}
 *       (gap) unless those versions have none; both fail with {@code GOLD_VERSION_MISMATCH}. A
 *       table that lags G is replayed from its own Gold version + 1, a table without rows gets the
 *       snapshot as above.
 * </ul>
 */
public final class GoldStart implements Serializable {
    private static final long serialVersionUID = 1L;

    @Nullable private final Long startingVersion;
    private final boolean snapshotFirst;

    private GoldStart(@Nullable Long startingVersion, boolean snapshotFirst) {
        this.startingVersion = startingVersion;
        this.snapshotFirst = snapshotFirst;
    }

    private static GoldStart initialSnapshot() {
        return new GoldStart(null, true);
    }

    private static GoldStart changesFrom(long version) {
        return new GoldStart(version, false);
    }

    private static GoldStart snapshotThenChanges(long version) {
        return new GoldStart(version, true);
    }

    /**
     * The first Silver version whose changes are read; empty = Silver's current snapshot (as
     * inserts) first.
     */
    public OptionalLong startingVersion() {
        return startingVersion == null ? OptionalLong.empty() : OptionalLong.of(startingVersion);
    }

    /**
     * Whether Silver's rows come first, as inserts: its current snapshot when {@link
     * #startingVersion()} is empty, else its rows as of {@code startingVersion − 1} (a Gold table
     * without rows beside one with rows).
     */
    public boolean snapshotFirst() {
        return snapshotFirst;
    }

    /** The start of the change feed. */
    public ChangeFeedStart feedStart() {
        if (startingVersion == null) {
            return ChangeFeedStart.currentSnapshot();
        }
        return snapshotFirst
                ? ChangeFeedStart.snapshotThenChanges(startingVersion)
                : ChangeFeedStart.changesFrom(startingVersion);
    }

    /**
     * Resolves the start.
     *
     * @param silver the Silver table (its change feed is checked for a gap)
     * @param upsert the Gold upsert table, or null when the job has none
     * @param aggregate the Gold aggregate table, or null when the job has none
     * @param requested the user's starting version, or null
     * @throws GoldException {@code GOLD_VERSION_MISMATCH} on an overlap or a gap (message names the
     *     tables, the Gold version and the version to use)
     * @throws dev.changeflow.sources.cdf.CdfException when the versions needed are not available
     *     (F4)
     */
    public static GoldStart resolve(
            Table silver,
            @Nullable Table upsert,
            @Nullable Table aggregate,
            @Nullable Long requested) {
        return resolve(silver, upsert, upsert != null, aggregate, aggregate != null, requested);
    }

    /**
     * Resolves the start, knowing which Gold tables the job has ({@code ...Configured}) and which
     * of them exist already (non-null tables).
     *
     * @throws GoldException {@code GOLD_VERSION_MISMATCH} on an overlap or a gap, when a Gold table
     *     is created beside one that holds rows, when empty Gold tables would start after versions
     *     that left rows in Silver, or when the versions after the Gold version are expired
     * @throws IllegalArgumentException for a negative starting version
     */
    public static GoldStart resolve(
            Table silver,
            @Nullable Table upsert,
            boolean upsertConfigured,
            @Nullable Table aggregate,
            boolean aggregateConfigured,
            @Nullable Long requested) {
        if (requested != null && requested < 0) {
            throw new IllegalArgumentException(
                    "the starting version must be >= 0, got " + requested);
        }
        silver.refresh();
        long latest =
                silver.currentSnapshot() == null ? 0 : silver.currentSnapshot().sequenceNumber();
        OptionalLong gUpsert = upsert == null ? OptionalLong.empty() : goldVersion(upsert);
        OptionalLong gAggregate = aggregate == null ? OptionalLong.empty() : goldVersion(aggregate);
        String tables =
                (upsertConfigured ? describe(upsert, gUpsert) : "")
                        + (upsertConfigured && aggregateConfigured ? " and " : "")
                        + (aggregateConfigured ? describe(aggregate, gAggregate) : "");
        if ((upsertConfigured && upsert == null && gAggregate.isPresent())
                || (aggregateConfigured && aggregate == null && gUpsert.isPresent())) {
            // the initial snapshot that fills the new table would be counted again in the other
            throw new GoldException(
                    GoldException.Code.GOLD_VERSION_MISMATCH,
                    String.format(
                            "a new Gold table beside one that already holds rows: %s. Both must start from the same Silver"
                                    + " snapshot: drop the other one too (or run with --from-scratch) to rebuild both.",
                            tables));
        }
        // the job's position, which a starting version must follow: the aggregate's when it has
        // rows
        // (a version applied twice would count twice), else the upsert table's; a table without
        // rows
        // has no position
        OptionalLong job = gAggregate.isPresent() ? gAggregate : gUpsert;
        if (job.isEmpty()) {
            if (requested == null) {
                return initialSnapshot();
            }
            if (requested > latest + 1) {
                throw afterLatest(requested, silver, latest, "omit the starting version");
            }
            if (requested > 0 && hasRowsAt(silver, requested - 1)) {
                throw new GoldException(
                        GoldException.Code.GOLD_VERSION_MISMATCH,
                        String.format(
                                "the Gold tables are empty (%s), and starting at version %d would leave out the rows Silver %s"
                                        + " held at version %d. Omit the starting version: an empty Gold starts from Silver's"
                                        + " current snapshot.",
                                tables, requested, silver.name(), requested - 1));
            }
            return changesFrom(requested);
        }
        long g = job.getAsLong();
        long replayFrom = Math.min(g, gUpsert.orElse(g)) + 1;
        // an existing table without rows beside one with rows: what it holds is unknown (nothing
        // passed its filter yet, or a kill between the two committers lost its first rows), so it
        // is rebuilt from Silver's rows at the other's Gold version
        boolean rowless =
                (upsertConfigured && gUpsert.isEmpty())
                        || (aggregateConfigured && gAggregate.isEmpty());
        if (requested == null) {
            checkAvailable(silver, replayFrom, latest, tables, g, false);
            return rowless ? snapshotThenChanges(replayFrom) : changesFrom(replayFrom);
        }
        if (requested <= g) {
            throw new GoldException(
                    GoldException.Code.GOLD_VERSION_MISMATCH,
                    String.format(
                            "starting version %d overlaps the Gold tables: %s already contain Silver %s up to version %d; "
                                    + "its changes would be applied twice. Start at version %d (or omit the starting version).",
                            requested, tables, silver.name(), g, g + 1));
        }
        checkNoGap(silver, tables, g, requested, latest);
        if (rowless) {
            // the gap (if any) holds no change: Silver's rows at g are its rows at requested - 1
            return snapshotThenChanges(g + 1);
        }
        // the upsert table may lag (a lost commit, or delete-only versions): replay it,
        // idempotently;
        // the aggregate skips per group what its rows contain
        return changesFrom(
                gUpsert.isPresent() ? Math.min(requested, gUpsert.getAsLong() + 1) : requested);
    }

    /**
     * G3's gap rule, shared by the definition-file job ({@link #resolve}) and {@code gold FILE.sql}
     * ({@link GoldSqlStart}): a start without state at Silver version {@code requested} beside Gold
     * tables complete up to version {@code g} must not skip a version that has changes. Fails when
     * {@code requested} is after Silver's next version, or when {@code requested > g + 1} and
     * versions {@code g + 1 .. requested - 1} hold at least one change (versions without changes,
     * such as compactions, leave nothing to skip).
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
                                    + " expired), so Gold cannot continue exactly: rebuild it with --from-scratch. (A Gold job"
                                    + " registers as a change-feed consumer of Silver, so changeflow's expire keeps what it"
                                    + " needs; other tools' expiry does not.) %s",
                            tables, silver.name(), g, from, e.getMessage()),
                    e);
        }
    }

    /**
     * Whether Silver held at least one row at {@code version} (the newest ancestor at or before
     * it).
     */
    private static boolean hasRowsAt(Table silver, long version) {
        Snapshot chosen = null;
        for (Snapshot s : SnapshotUtil.currentAncestors(silver)) {
            if (s.sequenceNumber() <= version) {
                chosen = s;
                break;
            }
        }
        if (chosen == null) {
            return false;
        }
        try (CloseableIterable<Record> rows =
                IcebergGenerics.read(silver).useSnapshot(chosen.snapshotId()).build()) {
            return rows.iterator().hasNext();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String describe(@Nullable Table table, OptionalLong v) {
        return table == null
                ? "(a new table)"
                : table.name() + " (_source_version " + describe(v) + ")";
    }

    private static String describe(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "none: no rows";
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

    /**
     * The largest {@code _source_version} a Gold table received: the maximum of the column's upper
     * bounds over the current data files (exact for BIGINT), or a scan where a file has no bound.
     *
     * @return empty when the table has no data file
     */
    public static OptionalLong goldVersion(Table gold) {
        gold.refresh();
        if (gold.currentSnapshot() == null) {
            return OptionalLong.empty();
        }
        Types.NestedField field = gold.schema().findField(GoldSpec.SOURCE_VERSION);
        if (field == null) {
            throw new GoldException(
                    GoldException.Code.GOLD_DEFINITION_INVALID,
                    "table "
                            + gold.name()
                            + " has no column "
                            + GoldSpec.SOURCE_VERSION
                            + ": it was not written by a Gold job");
        }
        long max = -1;
        boolean any = false;
        try (CloseableIterable<FileScanTask> tasks =
                gold.newScan().includeColumnStats().planFiles()) {
            for (FileScanTask task : tasks) {
                DataFile file = task.file();
                any = true;
                ByteBuffer upper =
                        file.upperBounds() == null ? null : file.upperBounds().get(field.fieldId());
                if (upper == null) {
                    return scanMax(gold);
                }
                long v = Conversions.<Long>fromByteBuffer(Types.LongType.get(), upper);
                max = Math.max(max, v);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return any ? OptionalLong.of(max) : OptionalLong.empty();
    }

    private static OptionalLong scanMax(Table gold) {
        long max = -1;
        boolean any = false;
        try (CloseableIterable<Record> rows =
                IcebergGenerics.read(gold).select(GoldSpec.SOURCE_VERSION).build()) {
            for (Record r : rows) {
                any = true;
                max = Math.max(max, (Long) r.getField(GoldSpec.SOURCE_VERSION));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return any ? OptionalLong.of(max) : OptionalLong.empty();
    }

    @Override
    public String toString() {
        return "GoldStart{startingVersion="
                + (startingVersion == null ? "initial snapshot" : startingVersion)
                + (startingVersion != null && snapshotFirst
                        ? ", Silver's rows at version " + (startingVersion - 1) + " first"
                        : "")
                + "}";
    }
}

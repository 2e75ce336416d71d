package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.DanglingDeletes;
import dev.changeflow.sinks.iceberg.RewriteCommitGuard;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;
import dev.changeflow.sources.cdf.retention.ExpiryReport;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One run of changeflow's in-job snapshot expiry and manifest rewrite per tick (docs/semantics.md
 * M2, F7), the operator of the expiry graph {@link JobMaintenance} adds to a job.
 *
 * <p>Per tick (any {@code Long}; the value is ignored): when the table's maintenance lock — the
 * {@link TriggerLockFactory} Iceberg's {@code TableMaintenance} graph of the same table uses — is
 * free (neither its task lock nor its recovery lock held), it takes the task lock, and
 *
 * <ol>
 *   <li>removes the delete files no live data file can see any more ({@link DanglingDeletes}: an
 *       in-job compaction keeps the starting sequence number, and Iceberg's rewrite commit drops
 *       only some of the equality deletes older than every rewritten file), in one {@code replace}
 *       commit that changes no row (F2, M1);
 *   <li>with {@code olderThan} set, runs {@link ChangeFeedExpiry} with {@code now − olderThan} and
 *       {@code retainLast} (0: the table's own {@code history.expire.min-snapshots-to-keep}): no
 *       snapshot a live registered consumer still reads from, and none from the newest commit of a
 *       live Iceberg Flink committer up (the job's own committer included), is expired (F7);
 *   <li>with {@code manifestCount} above 0, rewrites the data manifests of the current snapshot
 *       when there are more than {@code manifestCount} of them, with Iceberg's {@code
 *       table.rewriteManifests()} clustered by partition spec: one {@code replace} snapshot that
 *       adds and removes no file (so no change rows, F2), whose manifests keep every entry's data
 *       and file sequence numbers;
 * </ol>
 *
 * then releases the lock. A lock held by someone else — or a lock database that fails to insert the
 * lock row, as it does when the compaction graph takes the lock at the same moment — skips the tick
 * (and never releases their lock). Each tick emits (and logs at INFO) one line saying what it did;
 * counters in the metric group {@code changeflowMaintenance.table.<name>}: {@code expiryRuns},
 * {@code danglingDeletesRemoved} (delete files), {@code expiredSnapshots}, {@code
 * manifestRewrites}, {@code lockHeldSkips}, {@code expiryErrors}; and gauge {@code
 * compactionsRefused}: compaction commits of the table {@link RewriteCommitGuard} refused in this
 * JVM (Iceberg's in-job compaction task logs such a failed commit but counts it nowhere).
 *
 * <p><b>After a compaction</b> (docs/semantics.md M1). With {@code fullRunEvery} above zero the
 * ticks come more often than the full runs above (every {@code maintenance-rate-limit}, {@link
 * JobMaintenance}): a tick in between looks, from the table's metadata only, for a compaction
 * committed since the previous tick — a {@code replace} snapshot that removed data files, as
 * Iceberg's {@code RewriteDataFiles} task commits it — and if there is one, takes the lock the same
 * way and runs step 1 ({@link DanglingDeletes}) alone, emitting {@code in-job maintenance of
 * <table> after the compaction of version <v>: ...}. A tick that finds no new compaction does and
 * emits nothing; one that finds the lock held counts {@code lockHeldSkips} and the next tick tries
 * again. So the delete files a compaction leaves dangling are gone within about one rate limit of
 * its commit, not at the next full run. Iceberg's {@code TableMaintenance} API gives no way to run
 * a step inside its graph after the rewrite's commit (its {@code append()} returns nothing, and a
 * task's graph-building hook is package-private), hence this step watches the table instead. The
 * first such tick after {@link #open} looks at the whole history, so it runs the removal once when
 * the table was ever compacted.
 *
 * <p><b>Errors.</b> A run that fails (a commit conflict Iceberg could not retry, a malformed
 * consumer file — F7 refuses to expire then —, an unreachable store) is logged at ERROR with the
 * table, counted in {@code expiryErrors} and emitted as a line; the job carries on, and the next
 * tick tries again. Maintenance never fails the ingest.
 *
 * <p><b>Start.</b> Ticks within {@code firstRunDelay} of {@link #open} are skipped: a {@code
 * TableMaintenance} graph started without state releases the table's locks when it initializes,
 * which would release a lock this function took in the same moment.
 */
@Internal
public final class InJobExpiryFunction extends ProcessFunction<Long, String> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(InJobExpiryFunction.class);

    /** Metric group of the counters. */
    public static final String METRIC_GROUP = "changeflowMaintenance";

    /**
     * Gauge in {@link #METRIC_GROUP}: compaction commits of the table that {@link
     * RewriteCommitGuard} refused in this JVM (the in-job compaction's included).
     */
    public static final String COMPACTIONS_REFUSED = "compactionsRefused";

    private final TableLoader loader;
    private final TriggerLockFactory lockFactory;
    @Nullable private final Duration olderThan;
    private final int retainLast;
    private final int manifestCount;
    private final Duration consumerExpiry;
    private final Duration firstRunDelay;
    private final Duration fullRunEvery;

    private transient Table table;
    private transient long openedAt;
    private transient long lastFullRun;

    /** The current snapshot when dangling deletes were last looked for; null: not since open. */
    @Nullable private transient Long checkedSnapshotId;

    private transient Counter runs;
    private transient Counter expired;
    private transient Counter danglingRemoved;
    private transient Counter manifestRewrites;
    private transient Counter lockHeld;
    private transient Counter errors;

    /**
     * @param loader loads the table (opened here)
     * @param lockFactory the table's maintenance lock ({@code InJobMaintenance.lockFactory})
     * @param olderThan expire snapshots older than this; null: no expiry
     * @param retainLast ancestors always kept; 0: the table's property
     * @param manifestCount rewrite above this many data manifests; 0: never
     * @param consumerExpiry consumers and committers silent for longer are stale (F7)
     * @param firstRunDelay ticks this soon after the start are skipped
     */
    public InJobExpiryFunction(
            TableLoader loader,
            TriggerLockFactory lockFactory,
            @Nullable Duration olderThan,
            int retainLast,
            int manifestCount,
            Duration consumerExpiry,
            Duration firstRunDelay) {
        this(
                loader,
                lockFactory,
                olderThan,
                retainLast,
                manifestCount,
                consumerExpiry,
                firstRunDelay,
                Duration.ZERO);
    }

    /**
     * As the other constructor, with ticks more frequent than the full runs: a tick less than
     * {@code fullRunEvery} after the last full run (or after {@link #open}) only looks for a
     * compaction committed since the previous tick and, when there is one, removes the delete files
     * it left dangling (class comment, "After a compaction").
     *
     * @param fullRunEvery least time between two full runs (dangling deletes, expiry, manifest
     *     check); {@link Duration#ZERO}: every tick is a full run
     */
    public InJobExpiryFunction(
            TableLoader loader,
            TriggerLockFactory lockFactory,
            @Nullable Duration olderThan,
            int retainLast,
            int manifestCount,
            Duration consumerExpiry,
            Duration firstRunDelay,
            Duration fullRunEvery) {
        this.fullRunEvery = Objects.requireNonNull(fullRunEvery, "fullRunEvery");
        this.loader = Objects.requireNonNull(loader, "loader");
        this.lockFactory = Objects.requireNonNull(lockFactory, "lockFactory");
        this.olderThan = olderThan;
        this.retainLast = retainLast;
        this.manifestCount = manifestCount;
        this.consumerExpiry = Objects.requireNonNull(consumerExpiry, "consumerExpiry");
        this.firstRunDelay = Objects.requireNonNull(firstRunDelay, "firstRunDelay");
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        loader.open();
        table = loader.loadTable();
        lockFactory.open();
        openedAt = System.currentTimeMillis();
        lastFullRun = openedAt;
        checkedSnapshotId = null;
        MetricGroup group =
                getRuntimeContext()
                        .getMetricGroup()
                        .addGroup(METRIC_GROUP)
                        .addGroup("table", table.name());
        runs = group.counter("expiryRuns");
        expired = group.counter("expiredSnapshots");
        danglingRemoved = group.counter("danglingDeletesRemoved");
        manifestRewrites = group.counter("manifestRewrites");
        lockHeld = group.counter("lockHeldSkips");
        errors = group.counter("expiryErrors");
        String location = table.location();
        group.gauge(COMPACTIONS_REFUSED, (Gauge<Long>) () -> RewriteCommitGuard.refusals(location));
    }

    @Override
    public void processElement(Long tick, Context ctx, Collector<String> out) {
        long now = System.currentTimeMillis();
        if (now - openedAt < firstRunDelay.toMillis()) {
            return;
        }
        if (fullRunEvery.isZero() || now - lastFullRun >= fullRunEvery.toMillis()) {
            fullRun(out);
            lastFullRun = now;
            return;
        }
        Snapshot compaction;
        try {
            table.refresh();
            compaction = compactionSince(checkedSnapshotId);
        } catch (RuntimeException e) {
            errors.inc();
            LOG.error("in-job maintenance of {}: cannot read the table", table.name(), e);
            return;
        }
        if (compaction == null) {
            return;
        }
        TriggerLockFactory.Lock lock = lockFactory.createLock();
        if (!acquire(lock)) {
            // the compaction graph (or another job) works on the table: the next tick tries again
            lockHeld.inc();
            return;
        }
        String line;
        try {
            table.refresh();
            DanglingDeletes.Result dangling = DanglingDeletes.remove(table);
            danglingRemoved.inc(dangling.removed.size());
            // under the lock no other compaction commits: every later snapshot is not one
            table.refresh();
            checkedSnapshotId = table.currentSnapshot().snapshotId();
            line =
                    "in-job maintenance of "
                            + table.name()
                            + " after the compaction of version "
                            + compaction.sequenceNumber()
                            + ": "
                            + (dangling.committedVersion == null
                                    ? "no dangling delete file"
                                    : dangling.removed.size()
                                            + " dangling delete file(s) removed (version "
                                            + dangling.committedVersion
                                            + ")");
            LOG.info(line);
        } catch (RuntimeException e) {
            errors.inc();
            line = "in-job maintenance of " + table.name() + " after a compaction failed: " + e;
            LOG.error(line, e);
        } finally {
            lock.unlock();
        }
        out.collect(line);
    }

    /**
     * The newest compaction — a {@code replace} snapshot that removed data files (Iceberg's
     * rewrite; a manifest rewrite or a dangling-delete removal removes none) — among the ancestors
     * of the current snapshot after {@code sinceId}; when {@code sinceId} is null or no longer an
     * ancestor (not looked at since the start), the current snapshot counts as one if any ancestor
     * is a compaction. Null: none.
     */
    @Nullable
    private Snapshot compactionSince(@Nullable Long sinceId) {
        Snapshot current = table.currentSnapshot();
        for (Snapshot s = current;
                s != null;
                s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
            if (sinceId != null && s.snapshotId() == sinceId) {
                return null;
            }
            if (DataOperations.REPLACE.equals(s.operation())
                    && Long.parseLong(
                                    s.summary()
                                            .getOrDefault(SnapshotSummary.DELETED_FILES_PROP, "0"))
                            > 0) {
                return s;
            }
        }
        return null;
    }

    private void fullRun(Collector<String> out) {
        String line;
        TriggerLockFactory.Lock lock = lockFactory.createLock();
        if (!acquire(lock)) {
            lockHeld.inc();
            line = "in-job expiry of " + table.name() + ": skipped, the maintenance lock is held";
            LOG.info(line);
            out.collect(line);
            return;
        }
        try {
            line = run();
            runs.inc();
            LOG.info(line);
        } catch (RuntimeException e) {
            errors.inc();
            line = "in-job expiry of " + table.name() + " failed: " + e;
            LOG.error(line, e);
        } finally {
            lock.unlock();
        }
        out.collect(line);
    }

    /**
     * Takes the task lock when neither it nor the recovery lock is held. A failing lock database
     * counts as held: a concurrent {@code tryLock} of the compaction graph makes Iceberg's {@code
     * JdbcLock} fail on the primary key instead of returning false.
     */
    private boolean acquire(TriggerLockFactory.Lock lock) {
        try {
            return !lockFactory.createRecoveryLock().isHeld() && lock.tryLock();
        } catch (RuntimeException e) {
            LOG.info(
                    "in-job expiry of {}: the maintenance lock is taken: {}",
                    table.name(),
                    e.toString());
            return false;
        }
    }

    /** Expiry, then the manifest check; returns the line describing both. */
    private String run() {
        table.refresh();
        StringBuilder b = new StringBuilder("in-job expiry of ").append(table.name()).append(": ");
        if (table.currentSnapshot() == null) {
            return b.append("no snapshot yet").toString();
        }
        DanglingDeletes.Result dangling = DanglingDeletes.remove(table);
        danglingRemoved.inc(dangling.removed.size());
        table.refresh();
        checkedSnapshotId = table.currentSnapshot().snapshotId();
        b.append(
                        dangling.committedVersion == null
                                ? "no dangling delete file"
                                : dangling.removed.size()
                                        + " dangling delete file(s) removed (version "
                                        + dangling.committedVersion
                                        + ")")
                .append("; ");
        table.refresh();
        if (olderThan != null) {
            ChangeFeedExpiry.Builder e =
                    ChangeFeedExpiry.forTable(table)
                            .olderThan(Instant.now().minus(olderThan))
                            .consumerExpiry(consumerExpiry);
            if (retainLast > 0) {
                e.retainLast(retainLast);
            }
            ExpiryReport r = e.execute();
            expired.inc(r.expiredVersions().size());
            b.append("expired ")
                    .append(r.expiredVersions().size())
                    .append(" snapshot(s) (versions ")
                    .append(ExpiryReport.ranges(r.expiredVersions()))
                    .append("), oldest retained version ")
                    .append(r.oldestRetainedVersion())
                    .append(", kept for consumers from ")
                    .append(r.keptForConsumersFrom() == null ? "-" : r.keptForConsumersFrom())
                    .append(", for Flink committers from ")
                    .append(
                            r.keptForFlinkCommittersFrom() == null
                                    ? "-"
                                    : r.keptForFlinkCommittersFrom())
                    .append(", ")
                    .append(r.deletedFiles())
                    .append(" file(s) deleted");
        } else {
            b.append("expiry off");
        }
        if (manifestCount > 0) {
            table.refresh();
            Snapshot current = table.currentSnapshot();
            int before = current.dataManifests(table.io()).size();
            if (before > manifestCount) {
                table.rewriteManifests().clusterBy(file -> file.specId()).commit();
                table.refresh();
                int after = table.currentSnapshot().dataManifests(table.io()).size();
                manifestRewrites.inc();
                b.append("; data manifests rewritten ")
                        .append(before)
                        .append(" -> ")
                        .append(after)
                        .append(" (version ")
                        .append(table.currentSnapshot().sequenceNumber())
                        .append(')');
            } else {
                b.append("; ")
                        .append(before)
                        .append(" data manifest(s), at most ")
                        .append(manifestCount)
                        .append(": not rewritten");
            }
        }
        return b.toString();
    }

    @Override
    public void close() throws Exception {
        try {
            lockFactory.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot close the maintenance lock of {}", table, e);
        }
        loader.close();
    }
}

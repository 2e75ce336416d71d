package dev.changeflow.sources.cdf.retention;

import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.ChangelogLineage;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.iceberg.util.SnapshotUtil;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * changeflow's snapshot expiry (F7), built on Iceberg's {@link ExpireSnapshots}: expires snapshots
 * older than {@link Builder#olderThan} (default: now minus the table's {@code
 * history.expire.max-snapshot-age-ms}, 5 days by default) beyond the last {@link
 * Builder#retainLast} (default: the table's {@code history.expire.min-snapshots-to-keep}, 1 by
 * default), except that it keeps every snapshot of {@code main}'s history at or above the smallest
 * {@code next-version − 1} of the live consumers in the table's {@link ConsumerRegistry}. A
 * consumer whose file was not updated within {@link Builder#consumerExpiry} (default {@link
 * #DEFAULT_CONSUMER_EXPIRY}) is stale: reported, and ignored.
 *
 * <p>It also keeps {@code main}'s history from the newest commit of each Iceberg Flink sink
 * committer up ({@link FlinkCommitters#live}: the committer of the newest Flink commit always,
 * others while their newest commit is younger than the consumer expiry), so the ingest that wrote
 * the table still finds its last committed checkpoint when it resumes from its checkpoint or
 * savepoint (M2, issue #17). After a compaction on top of the last ingest commit, {@code
 * --retain-last 1} therefore keeps two snapshots until the ingest commits again.
 *
 * <p>Iceberg removes the files only the expired snapshots referenced. Other tools' expiry (Spark's
 * {@code expire_snapshots}, Iceberg's table maintenance) does not read the consumer registry.
 *
 * <pre>{@code
 * ExpiryReport report = ChangeFeedExpiry.forTable(table).olderThan(cutoff).retainLast(1).execute();
 * }</pre>
 */
@PublicEvolving
public final class ChangeFeedExpiry {

    /** Consumers not updated for this long are stale (F7 {@code consumer-expiry}, 7 days). */
    public static final Duration DEFAULT_CONSUMER_EXPIRY = Duration.ofDays(7);

    private final Table table;
    private final Instant olderThan;
    private final Integer retainLast;
    private final Duration consumerExpiry;
    private final Clock clock;

    private ChangeFeedExpiry(
            Table table,
            Instant olderThan,
            Integer retainLast,
            Duration consumerExpiry,
            Clock clock) {
        this.table = table;
        this.olderThan = olderThan;
        this.retainLast = retainLast;
        this.consumerExpiry = consumerExpiry;
        this.clock = clock;
    }

    /**
     * Before expiring, on a table whose equality deletes carry rows: when the current snapshot's
     * ancestry holds commits of a writer other than changeflow's changelog sink, records {@value
     * ChangeFeedOptions#OTHER_WRITER_COMMITS_EXPIRED}{@code =true}, so the change feed does not
     * trust carried rows once those commits are expired; when one changelog writer alone committed
     * it, records that writer as {@value ChangeFeedOptions#EXPIRED_HISTORY_WRITER}, so the change
     * feed keeps trusting that writer's carried rows after the expiry cuts the ancestry (F2).
     */
    private void markOtherWriters() {
        Snapshot current = table.currentSnapshot();
        if (current == null
                || !Boolean.parseBoolean(
                        table.properties()
                                .getOrDefault(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "false"))
                || Boolean.parseBoolean(
                        table.properties()
                                .getOrDefault(
                                        ChangeFeedOptions.OTHER_WRITER_COMMITS_EXPIRED, "false"))) {
            return;
        }
        String writer = new ChangelogLineage(table).soleWriter(current);
        if (writer == null) {
            table.updateProperties()
                    .set(ChangeFeedOptions.OTHER_WRITER_COMMITS_EXPIRED, "true")
                    .commit();
        } else if (!writer.equals(
                table.properties().get(ChangeFeedOptions.EXPIRED_HISTORY_WRITER))) {
            table.updateProperties().set(ChangeFeedOptions.EXPIRED_HISTORY_WRITER, writer).commit();
        }
    }

    /** Starts an expiry of {@code table}'s snapshots. */
    public static Builder forTable(Table table) {
        return new Builder(table);
    }

    /**
     * Reads the consumers, expires the snapshots Iceberg may expire under the resulting cutoff and
     * reports what happened.
     *
     * @throws IllegalStateException when a consumer file is malformed (nothing is expired then)
     */
    public ExpiryReport execute() {
        table.refresh();
        Instant now = clock.instant();
        List<ConsumerPosition> live = new ArrayList<>();
        List<ConsumerPosition> stale = new ArrayList<>();
        for (ConsumerPosition consumer : ConsumerRegistry.forTable(table).list()) {
            (consumer.updatedAt().isBefore(now.minus(consumerExpiry)) ? stale : live).add(consumer);
        }
        Long keepFrom = null;
        for (ConsumerPosition consumer : live) {
            long needed = Math.max(0, consumer.nextVersion() - 1);
            keepFrom = keepFrom == null ? needed : Math.min(keepFrom, needed);
        }

        // the newest commit of each Flink sink committer stays reachable from main's current
        // snapshot, or a restored ingest would commit its last checkpoint again (FlinkCommitters)
        List<FlinkCommitters.Committer> committers =
                FlinkCommitters.live(table, now, consumerExpiry);
        Long keptForCommittersFrom =
                committers.isEmpty() ? null : committers.get(0).newest().sequenceNumber();
        Long keepFromAll = keepFrom;
        if (keptForCommittersFrom != null) {
            keepFromAll =
                    keepFrom == null
                            ? keptForCommittersFrom
                            : Long.valueOf(Math.min(keepFrom, keptForCommittersFrom));
        }

        long cutoff =
                olderThan != null
                        ? olderThan.toEpochMilli()
                        : now.toEpochMilli()
                                - PropertyUtil.propertyAsLong(
                                        table.properties(),
                                        TableProperties.MAX_SNAPSHOT_AGE_MS,
                                        TableProperties.MAX_SNAPSHOT_AGE_MS_DEFAULT);
        if (keepFromAll != null) {
            for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
                if (s.sequenceNumber() >= keepFromAll) {
                    cutoff = Math.min(cutoff, s.timestampMillis());
                }
            }
        }

        Map<Long, Long> before = new HashMap<>();
        table.snapshots().forEach(s -> before.put(s.snapshotId(), s.sequenceNumber()));
        markOtherWriters();
        AtomicLong deletedFiles = new AtomicLong();
        ExpireSnapshots expire =
                table.expireSnapshots()
                        .expireOlderThan(cutoff)
                        .deleteWith(
                                location -> {
                                    table.io().deleteFile(location);
                                    deletedFiles.incrementAndGet();
                                });
        if (retainLast != null) {
            expire.retainLast(retainLast);
        }
        expire.commit();
        table.refresh();

        table.snapshots().forEach(s -> before.remove(s.snapshotId()));
        List<Long> expired = new ArrayList<>(before.values());
        expired.sort(null);
        long oldestRetained = Long.MAX_VALUE;
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            oldestRetained = Math.min(oldestRetained, s.sequenceNumber());
        }
        return new ExpiryReport(
                table.name(),
                expired,
                oldestRetained == Long.MAX_VALUE ? null : oldestRetained,
                keepFrom,
                keptForCommittersFrom,
                committers.stream().map(FlinkCommitters.Committer::key).toList(),
                Instant.ofEpochMilli(cutoff),
                live,
                stale,
                deletedFiles.get());
    }

    /** Builder of {@link ChangeFeedExpiry}; options are validated in {@link #build()}. */
    @PublicEvolving
    public static final class Builder {
        private final Table table;
        private Instant olderThan;
        private Integer retainLast;
        private Duration consumerExpiry = DEFAULT_CONSUMER_EXPIRY;
        private Clock clock = Clock.systemUTC();

        private Builder(Table table) {
            this.table = table;
        }

        /**
         * Expire snapshots committed before this instant (unless kept for a consumer or by
         * retainLast).
         */
        public Builder olderThan(Instant instant) {
            this.olderThan = instant;
            return this;
        }

        /** Always keep the last {@code count} ancestors of the current snapshot (≥ 1). */
        public Builder retainLast(int count) {
            this.retainLast = count;
            return this;
        }

        /** Consumers not updated for this long are stale (positive). */
        public Builder consumerExpiry(Duration expiry) {
            this.consumerExpiry = expiry;
            return this;
        }

        /** The clock deciding "now" (tests). */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * The action.
         *
         * @throws IllegalArgumentException for {@code retainLast} &lt; 1 or a consumer expiry that
         *     is not positive
         */
        public ChangeFeedExpiry build() {
            if (retainLast != null && retainLast < 1) {
                throw new IllegalArgumentException(
                        "retain-last of the snapshot expiry of table "
                                + table.name()
                                + " must be >= 1, got "
                                + retainLast);
            }
            if (consumerExpiry == null || consumerExpiry.isNegative() || consumerExpiry.isZero()) {
                throw new IllegalArgumentException(
                        "consumer-expiry of the snapshot expiry of table "
                                + table.name()
                                + " must be positive, got "
                                + consumerExpiry);
            }
            return new ChangeFeedExpiry(table, olderThan, retainLast, consumerExpiry, clock);
        }

        /** {@code build().execute()}. */
        public ExpiryReport execute() {
            return build().execute();
        }
    }
}

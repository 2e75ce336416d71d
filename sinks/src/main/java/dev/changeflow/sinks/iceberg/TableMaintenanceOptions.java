package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * How {@link InJobMaintenance} compacts one streaming table inside the job that writes it
 * (docs/semantics.md M1): when a compaction is triggered, how data files are chosen, and which lock
 * keeps two jobs from maintaining the table at once.
 *
 * <p><b>Triggers.</b> A compaction is started when any enabled trigger fires, counted since the
 * last compaction: {@link #commitCount} commits, {@link #dataFileCount} new data files, {@link
 * #deleteFileCount} new delete files (equality or position, each kind counted on its own), or
 * {@link #interval} of time. A count of 0 (or a null interval) switches that trigger off; at least
 * one must stay on. Two compactions of a table start at least {@link #rateLimit} apart, which is
 * also how often the table is looked at for new commits.
 *
 * <p><b>Which files.</b> Iceberg's planner rewrites, per partition, the files smaller than 75 % of
 * the table's {@code write.target-file-size-bytes} (or larger than 180 %), when there are at least
 * 5 of them, plus every data file to which at least {@link #deleteFileThreshold} delete files
 * apply, whatever its size — so equality deletes stop applying and, once no live data file is older
 * than them, Iceberg drops them from the table.
 *
 * <p><b>Lock.</b> {@link #lockJdbcUri}: a JDBC database for Iceberg's {@code JdbcLockFactory} (lock
 * id: the table's {@code namespace.name}); null means the embedded default, a SQLite file {@value
 * #EMBEDDED_LOCK_FILE} in a local warehouse folder, which is refused for a warehouse that is not a
 * local folder.
 *
 * <p><b>Expiry, manifests and orphans</b> (M2), also on with {@link #enabled}: every {@link
 * #expireInterval} the job runs changeflow's consumer-aware snapshot expiry ({@code
 * ChangeFeedExpiry}, F7) with {@link #expireOlderThan} and {@link #retainLast}, then rewrites the
 * data manifests when the current snapshot has more than {@link #manifestCount} of them; every
 * {@link #orphansInterval} Iceberg's {@code DeleteOrphanFiles} task removes the files under the
 * data folder that no snapshot references and that are older than {@link #orphansOlderThan}. {@code
 * expireOlderThan} null switches expiry off, {@code manifestCount} 0 the manifest rewrite, {@code
 * expireInterval} null both; {@code orphansOlderThan} null (or {@code orphansInterval} null)
 * switches orphan removal off. The graph that runs them is built in the {@code jobs} module ({@code
 * dev.changeflow.jobs.maintain.JobMaintenance}); {@link InJobMaintenance} only reads the compaction
 * options.
 *
 * <p>Instances are immutable; build them with {@link #builder()}.
 */
@PublicEvolving
public final class TableMaintenanceOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The embedded lock database, relative to a local warehouse folder. */
    public static final String EMBEDDED_LOCK_FILE = ".changeflow/maintenance-locks.db";

    /** Default of {@link #commitCount}: 100 commits (8 minutes at 5 s checkpoints). */
    public static final int DEFAULT_COMMIT_COUNT = 100;

    /** Default of {@link #dataFileCount}. */
    public static final int DEFAULT_DATA_FILE_COUNT = 500;

    /**
     * Default of {@link #deleteFileCount}: 10 delete files. Every AUTO CDC commit that updates or
     * deletes existing keys writes an equality-delete file, and a reader applies each one written
     * since the last compaction to every older data file, so a scan's cost grows with this count
     * (MaintenanceBenchmark, 200 pgbench commits: at 100 the live table scanned 27.7× slower than
     * freshly compacted, at 10 3.3×, with 29 compactions instead of 6). A table with large data
     * files, where a compaction rewrites much, may raise it.
     */
    public static final int DEFAULT_DELETE_FILE_COUNT = 10;

    /** Default of {@link #interval}. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofHours(1);

    /** Default of {@link #rateLimit}. */
    public static final Duration DEFAULT_RATE_LIMIT = Duration.ofMinutes(1);

    /** Default of {@link #deleteFileThreshold}. */
    public static final int DEFAULT_DELETE_FILE_THRESHOLD = 1;

    /**
     * Default of {@link #expireOlderThan}: a day of history stays readable (live change-feed
     * consumers keep what they still need whatever its age, F7). Every retained snapshot is listed
     * in each {@code metadata.json} a commit writes and a reader parses, about 1.2 KB each
     * (measured on the pgbench stream): at one commit per 5-s checkpoint a day is 17,280 snapshots,
     * about 20 MB per commit; the week kept before was about 140 MB at every commit.
     */
    public static final Duration DEFAULT_EXPIRE_OLDER_THAN = Duration.ofDays(1);

    /**
     * Default of {@link #retainLast}: 0, the table's {@code history.expire.min-snapshots-to-keep}.
     */
    public static final int DEFAULT_RETAIN_LAST = 0;

    /** Default of {@link #expireInterval}. */
    public static final Duration DEFAULT_EXPIRE_INTERVAL = Duration.ofHours(1);

    /**
     * Default of {@link #manifestCount}: Iceberg's commits merge manifests from 100 on ({@code
     * commit.manifest.min-count-to-merge}), so a table rarely holds many more; 50 keeps planning
     * short without rewriting on every expiry run of a quiet table.
     */
    public static final int DEFAULT_MANIFEST_COUNT = 50;

    /** Default of {@link #orphansOlderThan} (M2: longer than any commit takes to finish). */
    public static final Duration DEFAULT_ORPHANS_OLDER_THAN = Duration.ofDays(3);

    /** Default of {@link #orphansInterval}. */
    public static final Duration DEFAULT_ORPHANS_INTERVAL = Duration.ofDays(1);

    /**
     * Least {@link #orphansOlderThan}: the job's own writers keep files that are not committed yet
     * (until their checkpoint completes) under the data folder, and a younger limit could delete
     * them.
     */
    public static final Duration MIN_ORPHANS_OLDER_THAN = Duration.ofHours(1);

    private final boolean enabled;
    private final int commitCount;
    private final int dataFileCount;
    private final int deleteFileCount;
    @Nullable private final Duration interval;
    private final Duration rateLimit;
    private final int deleteFileThreshold;
    @Nullable private final String lockJdbcUri;
    @Nullable private final Duration expireOlderThan;
    private final int retainLast;
    @Nullable private final Duration expireInterval;
    private final int manifestCount;
    @Nullable private final Duration orphansOlderThan;
    @Nullable private final Duration orphansInterval;

    private TableMaintenanceOptions(Builder b) {
        this.enabled = b.enabled;
        this.commitCount = b.commitCount;
        this.dataFileCount = b.dataFileCount;
        this.deleteFileCount = b.deleteFileCount;
        this.interval = b.interval;
        this.rateLimit = b.rateLimit;
        this.deleteFileThreshold = b.deleteFileThreshold;
        this.lockJdbcUri = b.lockJdbcUri;
        this.expireOlderThan = b.expireOlderThan;
        this.retainLast = b.retainLast;
        this.expireInterval = b.expireInterval;
        this.manifestCount = b.manifestCount;
        this.orphansOlderThan = b.orphansOlderThan;
        this.orphansInterval = b.orphansInterval;
    }

    /** A builder with the defaults (maintenance off). */
    public static Builder builder() {
        return new Builder();
    }

    /** Maintenance off. */
    public static TableMaintenanceOptions off() {
        return builder().build();
    }

    /** Whether the job compacts the table at all. */
    public boolean enabled() {
        return enabled;
    }

    /** Commits since the last compaction that start one; 0 = this trigger is off. */
    public int commitCount() {
        return commitCount;
    }

    /** New data files since the last compaction that start one; 0 = off. */
    public int dataFileCount() {
        return dataFileCount;
    }

    /**
     * New equality (or position) delete files since the last compaction that start one; 0 = off.
     */
    public int deleteFileCount() {
        return deleteFileCount;
    }

    /** Time since the last compaction that starts one; null = off. */
    @Nullable
    public Duration interval() {
        return interval;
    }

    /** Least time between two compactions of the table (positive). */
    public Duration rateLimit() {
        return rateLimit;
    }

    /** Delete files applying to a data file that make it rewritten whatever its size (≥ 1). */
    public int deleteFileThreshold() {
        return deleteFileThreshold;
    }

    /** The lock database's JDBC URI; null = the embedded SQLite file of a local warehouse. */
    @Nullable
    public String lockJdbcUri() {
        return lockJdbcUri;
    }

    /**
     * Age past which the in-job expiry expires a snapshot (unless a live consumer, a Flink
     * committer or {@link #retainLast} keeps it, F7); null = in-job expiry off.
     */
    @Nullable
    public Duration expireOlderThan() {
        return expireOlderThan;
    }

    /**
     * Ancestors of the current snapshot the in-job expiry always keeps; 0 = the table's {@code
     * history.expire.min-snapshots-to-keep} (Iceberg's default 1).
     */
    public int retainLast() {
        return retainLast;
    }

    /** How often the in-job expiry and manifest check run; null = neither runs. */
    @Nullable
    public Duration expireInterval() {
        return expireInterval;
    }

    /** Data manifests of the current snapshot above which the expiry run rewrites them; 0 = off. */
    public int manifestCount() {
        return manifestCount;
    }

    /** Least age of a file the in-job orphan removal deletes; null = orphan removal off. */
    @Nullable
    public Duration orphansOlderThan() {
        return orphansOlderThan;
    }

    /** How often the in-job orphan removal runs; null = off. */
    @Nullable
    public Duration orphansInterval() {
        return orphansInterval;
    }

    /** Whether the job runs the expiry graph (maintenance on, an interval and something to do). */
    public boolean expiryGraphOn() {
        return enabled && expireInterval != null && (expireOlderThan != null || manifestCount > 0);
    }

    /** Whether the job runs Iceberg's orphan-file task. */
    public boolean orphansOn() {
        return enabled && orphansOlderThan != null && orphansInterval != null;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TableMaintenanceOptions)) {
            return false;
        }
        TableMaintenanceOptions t = (TableMaintenanceOptions) o;
        return enabled == t.enabled
                && commitCount == t.commitCount
                && dataFileCount == t.dataFileCount
                && deleteFileCount == t.deleteFileCount
                && Objects.equals(interval, t.interval)
                && rateLimit.equals(t.rateLimit)
                && deleteFileThreshold == t.deleteFileThreshold
                && Objects.equals(lockJdbcUri, t.lockJdbcUri)
                && Objects.equals(expireOlderThan, t.expireOlderThan)
                && retainLast == t.retainLast
                && Objects.equals(expireInterval, t.expireInterval)
                && manifestCount == t.manifestCount
                && Objects.equals(orphansOlderThan, t.orphansOlderThan)
                && Objects.equals(orphansInterval, t.orphansInterval);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                enabled,
                commitCount,
                dataFileCount,
                deleteFileCount,
                interval,
                rateLimit,
                deleteFileThreshold,
                lockJdbcUri,
                expireOlderThan,
                retainLast,
                expireInterval,
                manifestCount,
                orphansOlderThan,
                orphansInterval);
    }

    @Override
    public String toString() {
        return "TableMaintenanceOptions{enabled="
                + enabled
                + ", commitCount="
                + commitCount
                + ", dataFileCount="
                + dataFileCount
                + ", deleteFileCount="
                + deleteFileCount
                + ", interval="
                + interval
                + ", rateLimit="
                + rateLimit
                + ", deleteFileThreshold="
                + deleteFileThreshold
                + ", lockJdbcUri="
                + lockJdbcUri
                + ", expireOlderThan="
                + expireOlderThan
                + ", retainLast="
                + retainLast
                + ", expireInterval="
                + expireInterval
                + ", manifestCount="
                + manifestCount
                + ", orphansOlderThan="
                + orphansOlderThan
                + ", orphansInterval="
                + orphansInterval
                + "}";
    }

    /** Builder of {@link TableMaintenanceOptions}; {@link #build()} validates. */
    public static final class Builder {
        private boolean enabled;
        private int commitCount = DEFAULT_COMMIT_COUNT;
        private int dataFileCount = DEFAULT_DATA_FILE_COUNT;
        private int deleteFileCount = DEFAULT_DELETE_FILE_COUNT;
        @Nullable private Duration interval = DEFAULT_INTERVAL;
        private Duration rateLimit = DEFAULT_RATE_LIMIT;
        private int deleteFileThreshold = DEFAULT_DELETE_FILE_THRESHOLD;
        @Nullable private String lockJdbcUri;
        @Nullable private Duration expireOlderThan = DEFAULT_EXPIRE_OLDER_THAN;
        private int retainLast = DEFAULT_RETAIN_LAST;
        @Nullable private Duration expireInterval = DEFAULT_EXPIRE_INTERVAL;
        private int manifestCount = DEFAULT_MANIFEST_COUNT;
        @Nullable private Duration orphansOlderThan = DEFAULT_ORPHANS_OLDER_THAN;
        @Nullable private Duration orphansInterval = DEFAULT_ORPHANS_INTERVAL;

        private Builder() {}

        /** Null or zero switches the in-job expiry off. */
        public Builder expireOlderThan(@Nullable Duration value) {
            this.expireOlderThan = value == null || value.isZero() ? null : value;
            return this;
        }

        /** 0: the table's {@code history.expire.min-snapshots-to-keep}. */
        public Builder retainLast(int value) {
            this.retainLast = value;
            return this;
        }

        /** Null or zero switches the in-job expiry and manifest rewrite off. */
        public Builder expireInterval(@Nullable Duration value) {
            this.expireInterval = value == null || value.isZero() ? null : value;
            return this;
        }

        /** 0 switches the manifest rewrite off. */
        public Builder manifestCount(int value) {
            this.manifestCount = value;
            return this;
        }

        /** Null or zero switches the in-job orphan removal off. */
        public Builder orphansOlderThan(@Nullable Duration value) {
            this.orphansOlderThan = value == null || value.isZero() ? null : value;
            return this;
        }

        /** Null or zero switches the in-job orphan removal off. */
        public Builder orphansInterval(@Nullable Duration value) {
            this.orphansInterval = value == null || value.isZero() ? null : value;
            return this;
        }

        public Builder enabled(boolean value) {
            this.enabled = value;
            return this;
        }

        public Builder commitCount(int value) {
            this.commitCount = value;
            return this;
        }

        public Builder dataFileCount(int value) {
            this.dataFileCount = value;
            return this;
        }

        public Builder deleteFileCount(int value) {
            this.deleteFileCount = value;
            return this;
        }

        /** Null or zero switches the time trigger off. */
        public Builder interval(@Nullable Duration value) {
            this.interval = value == null || value.isZero() ? null : value;
            return this;
        }

        public Builder rateLimit(Duration value) {
            this.rateLimit = Objects.requireNonNull(value, "rateLimit");
            return this;
        }

        public Builder deleteFileThreshold(int value) {
            this.deleteFileThreshold = value;
            return this;
        }

        /** Null or blank: the embedded SQLite lock of a local warehouse. */
        public Builder lockJdbcUri(@Nullable String value) {
            this.lockJdbcUri = value == null || value.isBlank() ? null : value.trim();
            return this;
        }

        /**
         * @throws IllegalArgumentException for a negative count, retain-last or duration, a rate
         *     limit that is not positive, a delete-file threshold below 1, an orphan age below
         *     {@link #MIN_ORPHANS_OLDER_THAN}, a lock URI not starting with {@code jdbc:}, or
         *     (maintenance on) every compaction trigger off
         */
        public TableMaintenanceOptions build() {
            nonNegative(retainLast, "retain-last");
            nonNegative(manifestCount, "manifest count");
            for (Duration d : new Duration[] {expireOlderThan, expireInterval, orphansInterval}) {
                if (d != null && d.isNegative()) {
                    throw new IllegalArgumentException(
                            "maintenance durations must not be negative, got " + d);
                }
            }
            if (orphansOlderThan != null
                    && orphansOlderThan.compareTo(MIN_ORPHANS_OLDER_THAN) < 0) {
                throw new IllegalArgumentException(
                        "maintenance orphans-older-than must be 0 (off) or at least "
                                + MIN_ORPHANS_OLDER_THAN
                                + " (the job's uncommitted files are younger), got "
                                + orphansOlderThan);
            }
            nonNegative(commitCount, "commit count");
            nonNegative(dataFileCount, "data file count");
            nonNegative(deleteFileCount, "delete file count");
            if (interval != null && interval.isNegative()) {
                throw new IllegalArgumentException(
                        "maintenance interval must not be negative, got " + interval);
            }
            if (rateLimit.isZero() || rateLimit.isNegative()) {
                throw new IllegalArgumentException(
                        "maintenance rate limit must be positive, got " + rateLimit);
            }
            if (deleteFileThreshold < 1) {
                throw new IllegalArgumentException(
                        "maintenance delete-file threshold must be at least 1, got "
                                + deleteFileThreshold);
            }
            if (lockJdbcUri != null && !lockJdbcUri.startsWith("jdbc:")) {
                throw new IllegalArgumentException(
                        "maintenance lock URI must be a JDBC URI (jdbc:...), got '"
                                + lockJdbcUri
                                + "'");
            }
            if (enabled
                    && commitCount == 0
                    && dataFileCount == 0
                    && deleteFileCount == 0
                    && interval == null) {
                throw new IllegalArgumentException(
                        "maintenance is on but every trigger is off (commit count, data file"
                                + " count, delete file count and interval are all 0): set at least"
                                + " one");
            }
            return new TableMaintenanceOptions(this);
        }

        private static void nonNegative(int v, String what) {
            if (v < 0) {
                throw new IllegalArgumentException(
                        "maintenance " + what + " must be 0 (off) or more, got " + v);
            }
        }
    }
}

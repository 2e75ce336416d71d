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

    /** Default of {@link #deleteFileCount}. */
    public static final int DEFAULT_DELETE_FILE_COUNT = 100;

    /** Default of {@link #interval}. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofHours(1);

    /** Default of {@link #rateLimit}. */
    public static final Duration DEFAULT_RATE_LIMIT = Duration.ofMinutes(1);

    /** Default of {@link #deleteFileThreshold}. */
    public static final int DEFAULT_DELETE_FILE_THRESHOLD = 1;

    private final boolean enabled;
    private final int commitCount;
    private final int dataFileCount;
    private final int deleteFileCount;
    @Nullable private final Duration interval;
    private final Duration rateLimit;
    private final int deleteFileThreshold;
    @Nullable private final String lockJdbcUri;

    private TableMaintenanceOptions(Builder b) {
        this.enabled = b.enabled;
        this.commitCount = b.commitCount;
        this.dataFileCount = b.dataFileCount;
        this.deleteFileCount = b.deleteFileCount;
        this.interval = b.interval;
        this.rateLimit = b.rateLimit;
        this.deleteFileThreshold = b.deleteFileThreshold;
        this.lockJdbcUri = b.lockJdbcUri;
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
                && Objects.equals(lockJdbcUri, t.lockJdbcUri);
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
                lockJdbcUri);
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

        private Builder() {}

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
         * @throws IllegalArgumentException for a negative count or interval, a rate limit that is
         *     not positive, a delete-file threshold below 1, a lock URI not starting with {@code
         *     jdbc:}, or (maintenance on) every trigger off
         */
        public TableMaintenanceOptions build() {
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

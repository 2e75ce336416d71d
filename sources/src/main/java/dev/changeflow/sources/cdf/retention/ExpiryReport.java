package dev.changeflow.sources.cdf.retention;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Instant;
import java.util.List;

/**
 * What a {@link ChangeFeedExpiry} did: the versions (snapshot sequence numbers) of the snapshots it
 * expired, ascending; the oldest version still in {@code main}'s history; the version from which
 * snapshots were kept for live consumers (null without live consumer); the version from which they
 * were kept for Flink sink committers ({@link FlinkCommitters}); the effective cutoff; the live and
 * the stale (ignored) consumers; and how many files Iceberg deleted.
 */
@PublicEvolving
public final class ExpiryReport {

    private final String tableName;
    private final List<Long> expiredVersions;
    private final Long oldestRetainedVersion;
    private final Long keptForConsumersFrom;
    private final Long keptForFlinkCommittersFrom;
    private final List<String> flinkCommitters;
    private final Instant cutoff;
    private final List<ConsumerPosition> liveConsumers;
    private final List<ConsumerPosition> staleConsumers;
    private final long deletedFiles;

    ExpiryReport(
            String tableName,
            List<Long> expiredVersions,
            Long oldestRetainedVersion,
            Long keptForConsumersFrom,
            Long keptForFlinkCommittersFrom,
            List<String> flinkCommitters,
            Instant cutoff,
            List<ConsumerPosition> liveConsumers,
            List<ConsumerPosition> staleConsumers,
            long deletedFiles) {
        this.tableName = tableName;
        this.expiredVersions = List.copyOf(expiredVersions);
        this.oldestRetainedVersion = oldestRetainedVersion;
        this.keptForConsumersFrom = keptForConsumersFrom;
        this.keptForFlinkCommittersFrom = keptForFlinkCommittersFrom;
        this.flinkCommitters = List.copyOf(flinkCommitters);
        this.cutoff = cutoff;
        this.liveConsumers = List.copyOf(liveConsumers);
        this.staleConsumers = List.copyOf(staleConsumers);
        this.deletedFiles = deletedFiles;
    }

    /** The table's name as its catalog gives it. */
    public String tableName() {
        return tableName;
    }

    /**
     * Versions of the expired snapshots, ascending (may include snapshots outside main's history).
     */
    public List<Long> expiredVersions() {
        return expiredVersions;
    }

    /** The oldest version left in main's history, or null for a table without snapshot. */
    public Long oldestRetainedVersion() {
        return oldestRetainedVersion;
    }

    /** The smallest {@code next-version − 1} of the live consumers, or null when there is none. */
    public Long keptForConsumersFrom() {
        return keptForConsumersFrom;
    }

    /**
     * The oldest newest commit of the Flink sink committers kept reachable ({@link
     * FlinkCommitters#live}): main's history from this version up was kept for them; null when the
     * table has no Flink commit in main.
     */
    public Long keptForFlinkCommittersFrom() {
        return keptForFlinkCommittersFrom;
    }

    /** The keys (operator ids) of those committers, oldest newest commit first. */
    public List<String> flinkCommitters() {
        return flinkCommitters;
    }

    /** Snapshots committed before this instant were eligible for expiry. */
    public Instant cutoff() {
        return cutoff;
    }

    /** Consumers updated within the consumer expiry, ordered by id; they held snapshots back. */
    public List<ConsumerPosition> liveConsumers() {
        return liveConsumers;
    }

    /** Consumers not updated within the consumer expiry; they did not hold snapshots back. */
    public List<ConsumerPosition> staleConsumers() {
        return staleConsumers;
    }

    /**
     * Files Iceberg deleted (manifests, manifest lists, data and delete files no longer
     * referenced).
     */
    public long deletedFiles() {
        return deletedFiles;
    }

    /** Multi-line summary as the launcher prints it. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        b.append("table: ").append(tableName).append('\n');
        b.append("expired versions: ").append(ranges(expiredVersions)).append('\n');
        b.append("oldest retained version: ")
                .append(oldestRetainedVersion == null ? "-" : oldestRetainedVersion)
                .append('\n');
        b.append("cutoff: ").append(cutoff).append('\n');
        b.append("kept for consumers from version: ")
                .append(keptForConsumersFrom == null ? "-" : keptForConsumersFrom)
                .append('\n');
        if (keptForFlinkCommittersFrom != null) {
            b.append("kept for Flink sink committers from version: ")
                    .append(keptForFlinkCommittersFrom)
                    .append(' ')
                    .append(flinkCommitters)
                    .append('\n');
        }
        b.append("live consumers: ")
                .append(liveConsumers.isEmpty() ? "-" : liveConsumers.toString())
                .append('\n');
        b.append("stale consumers (ignored): ")
                .append(staleConsumers.isEmpty() ? "-" : staleConsumers.toString())
                .append('\n');
        b.append("deleted files: ").append(deletedFiles);
        return b.toString();
    }

    /** {@code 1-69, 75} for a sorted list; {@code -} when empty. */
    public static String ranges(List<Long> sorted) {
        if (sorted.isEmpty()) {
            return "-";
        }
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (i < sorted.size()) {
            int j = i;
            while (j + 1 < sorted.size() && sorted.get(j + 1) == sorted.get(j) + 1) {
                j++;
            }
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(sorted.get(i));
            if (j > i) {
                b.append('-').append(sorted.get(j));
            }
            i = j + 1;
        }
        return b.toString();
    }
}

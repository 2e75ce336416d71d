package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.Snapshot;

import java.util.List;

/**
 * A resolved, inclusive range of versions (F3, F4, F8) and the snapshots of {@code main}'s ancestry
 * in it, oldest first. An empty range has no snapshots.
 */
@Internal
final class VersionRange {

    private static final String TOLERANCE = ChangeFeedOptions.TIMESTAMP_OUT_OF_RANGE_ENABLED.key();

    private final long start;
    private final long end;
    private final List<Snapshot> snapshots;

    private VersionRange(long start, long end, List<Snapshot> snapshots) {
        this.start = start;
        this.end = end;
        this.snapshots = snapshots;
    }

    /** First version of the range (as resolved; for an empty range the requested start). */
    long start() {
        return start;
    }

    /** Last version of the range (as resolved). */
    long end() {
        return end;
    }

    List<Snapshot> snapshots() {
        return snapshots;
    }

    boolean isEmpty() {
        return snapshots.isEmpty();
    }

    private static VersionRange empty(long start, long end) {
        return new VersionRange(start, end, List.of());
    }

    /**
     * Resolves the bounds of a batch read against the table's versions. Exactly one of {@code
     * startVersion} and {@code startTimestamp} is set; at most one of the ending bounds is set
     * (none = latest). A {@code START_AFTER_LATEST_COMMIT} error advises {@code
     * timestamp-out-of-range.enabled}, an option of batch reads.
     */
    static VersionRange resolve(
            TableVersions versions,
            Long startVersion,
            String startTimestamp,
            Long endVersion,
            String endTimestamp,
            boolean tolerateOutOfRange) {
        return resolve(
                versions,
                startVersion,
                startTimestamp,
                endVersion,
                endTimestamp,
                tolerateOutOfRange,
                false);
    }

    /**
     * As {@link #resolve(TableVersions, Long, String, Long, String, boolean)}; with {@code stream}
     * (the start of a streaming read, F6: no ending bound, no tolerance) a {@code
     * START_AFTER_LATEST_COMMIT} error advises only what a stream accepts — an earlier start, or
     * {@code starting-version} = {@code latest} — since streams (the changelog {@code t$changelog}
     * among them) have no {@code timestamp-out-of-range.enabled} (F4, G1).
     */
    static VersionRange resolve(
            TableVersions versions,
            Long startVersion,
            String startTimestamp,
            Long endVersion,
            String endTimestamp,
            boolean tolerateOutOfRange,
            boolean stream) {
        String table = versions.tableName();
        long latest = versions.latestVersion();
        Long startMillis =
                startTimestamp == null
                        ? null
                        : CdfTimestamps.parseMillis(
                                startTimestamp, ChangeFeedOptions.STARTING_TIMESTAMP.key(), table);
        Long endMillis =
                endTimestamp == null
                        ? null
                        : CdfTimestamps.parseMillis(
                                endTimestamp, ChangeFeedOptions.ENDING_TIMESTAMP.key(), table);

        // INVALID_CDC_RANGE on the bounds as given (F4)
        if (startVersion != null && endVersion != null && endVersion < startVersion) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_RANGE,
                    String.format(
                            "The ending version %d of the change feed of table %s is before its starting "
                                    + "version %d. Give an ending version at or after the starting version.",
                            endVersion, table, startVersion));
        }
        if (startMillis != null && endMillis != null && endMillis < startMillis) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_RANGE,
                    String.format(
                            "The ending timestamp '%s' of the change feed of table %s is before its starting "
                                    + "timestamp '%s'. Give an ending timestamp at or after the starting timestamp.",
                            endTimestamp, table, startTimestamp));
        }

        // start (F3: a start between two versions begins at the next one)
        long start;
        if (startVersion != null) {
            if (startVersion > latest) {
                if (tolerateOutOfRange) {
                    return empty(startVersion, startVersion);
                }
                if (stream) {
                    throw new CdfException(
                            CdfException.ErrorCode.START_AFTER_LATEST_COMMIT,
                            String.format(
                                    "The starting version %d of the change feed of table %s is after the latest "
                                            + "version %d. Start at version %d or earlier; '%s' = '%s' starts "
                                            + "after the latest commit.",
                                    startVersion,
                                    table,
                                    latest,
                                    latest + 1,
                                    ChangeFeedOptions.STARTING_VERSION.key(),
                                    ChangeFeedOptions.LATEST));
                }
                throw new CdfException(
                        CdfException.ErrorCode.START_AFTER_LATEST_COMMIT,
                        String.format(
                                "The starting version %d of the change feed of table %s is after the latest "
                                        + "version %d. Start at version %d or earlier, or set '%s' = 'true' "
                                        + "to get an empty result.",
                                startVersion, table, latest, latest, TOLERANCE));
            }
            start = versions.firstVersionAtOrAfter(startVersion);
        } else {
            start = versions.firstVersionCommittedAtOrAfter(startMillis);
            if (start < 0) {
                if (tolerateOutOfRange) {
                    return empty(latest + 1, latest);
                }
                if (stream) {
                    throw new CdfException(
                            CdfException.ErrorCode.START_AFTER_LATEST_COMMIT,
                            String.format(
                                    "The starting timestamp '%s' of the change feed of table %s is after the last "
                                            + "commit: %s. Give an earlier starting timestamp, or set '%s' = '%s' "
                                            + "instead to start after the latest commit.",
                                    startTimestamp,
                                    table,
                                    versions.describeLatestCommit(),
                                    ChangeFeedOptions.STARTING_VERSION.key(),
                                    ChangeFeedOptions.LATEST));
                }
                throw new CdfException(
                        CdfException.ErrorCode.START_AFTER_LATEST_COMMIT,
                        String.format(
                                "The starting timestamp '%s' of the change feed of table %s is after the last "
                                        + "commit: %s. Give an earlier starting timestamp, or set '%s' = 'true' "
                                        + "to get an empty result.",
                                startTimestamp, table, versions.describeLatestCommit(), TOLERANCE));
            }
        }

        // end (F3: an ending timestamp resolves to the last commit at or before it)
        long end;
        if (endVersion != null) {
            if (endVersion > latest && !tolerateOutOfRange) {
                throw new CdfException(
                        CdfException.ErrorCode.END_AFTER_LATEST_COMMIT,
                        String.format(
                                "The ending version %d of the change feed of table %s is after the latest "
                                        + "version %d. End at version %d or earlier, or set '%s' = 'true' "
                                        + "to read up to the latest version.",
                                endVersion, table, latest, latest, TOLERANCE));
            }
            end = Math.min(endVersion, latest);
        } else if (endMillis != null) {
            if (endMillis > versions.latestCommitMillis() && !tolerateOutOfRange) {
                throw new CdfException(
                        CdfException.ErrorCode.END_AFTER_LATEST_COMMIT,
                        String.format(
                                "The ending timestamp '%s' of the change feed of table %s is after the last "
                                        + "commit: %s. Give an ending timestamp at or before that commit, or "
                                        + "set '%s' = 'true' to read up to the latest version.",
                                endTimestamp, table, versions.describeLatestCommit(), TOLERANCE));
            }
            end = versions.lastVersionCommittedAtOrBefore(endMillis);
            if (end < 0) {
                throw new CdfException(
                        CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                        String.format(
                                "The ending timestamp '%s' of the change feed of table %s is before the oldest "
                                        + "retained snapshot. Available versions: %s. Give a later ending "
                                        + "timestamp, or retain snapshots longer.",
                                endTimestamp, table, versions.describeAvailable()));
            }
        } else {
            end = latest;
        }

        // VERSION_NOT_AVAILABLE (F4, F8): the start needs its parent's state
        long requestedStart = startVersion != null ? startVersion : (start < 0 ? latest : start);
        long earliest = versions.earliestAvailableVersion();
        if (requestedStart < earliest) {
            throw new CdfException(
                    CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                    String.format(
                            "Version %d of table %s is not available: the snapshots it needs have expired. "
                                    + "Available versions: %s. Start at version %d or later, or retain "
                                    + "snapshots longer (register a consumer so that changeflow's snapshot "
                                    + "expiry keeps them).",
                            requestedStart, table, versions.describeAvailable(), earliest));
        }

        if (start < 0 || start > end) {
            if (startVersion != null
                    && endVersion == null
                    && endMillis != null
                    && end < startVersion) {
                throw new CdfException(
                        CdfException.ErrorCode.INVALID_CDC_RANGE,
                        String.format(
                                "The ending timestamp '%s' of the change feed of table %s resolves to version %d, "
                                        + "before the starting version %d. Give an ending bound at or after the start.",
                                endTimestamp, table, end, startVersion));
            }
            return empty(start < 0 ? requestedStart : start, end);
        }

        List<Snapshot> snapshots = versions.between(start, end);
        checkHistoryNotRewritten(versions, snapshots.get(0), end);
        return new VersionRange(start, end, snapshots);
    }

    /** F8: a range reaching over versions that a rollback removed from main fails. */
    private static void checkHistoryNotRewritten(TableVersions versions, Snapshot first, long end) {
        long parentVersion = versions.parentVersion(first);
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (Snapshot s : versions.rolledBack()) {
            long v = s.sequenceNumber();
            if (v > parentVersion && v <= end) {
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }
        if (min != Long.MAX_VALUE) {
            throw new CdfException(
                    CdfException.ErrorCode.TABLE_HISTORY_REWRITTEN,
                    String.format(
                            "The history of table %s was rewritten: versions %d to %d were the table's current "
                                    + "version once but are no longer ancestors of the current version %d (a "
                                    + "rollback), so the changes from version %d to %d cannot be read as one "
                                    + "history. Read only versions before %d, or re-read the table's state as "
                                    + "of version %d and read the changes after it.",
                            versions.tableName(),
                            min,
                            max,
                            versions.latestVersion(),
                            first.sequenceNumber(),
                            end,
                            min,
                            end));
        }
    }
}

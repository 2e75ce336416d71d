package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.HistoryEntry;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The versions of a table as the change feed sees them (F1, F8, design.md "Version").
 *
 * <p>A version is the sequence number of a snapshot in the ancestry of {@code main}'s current
 * snapshot; a table without a snapshot is at version 0. Gaps between versions are normal. Only
 * retained ancestors are known: the walk from the current snapshot stops at the first expired
 * parent. The earliest available version is the oldest retained ancestor whose parent is retained
 * too; when the whole history is retained it is 0.
 */
@Internal
final class TableVersions {

    private final String tableName;
    private final List<Snapshot> ancestors;
    private final boolean rootRetained;
    private final List<Snapshot> rolledBack;

    private TableVersions(
            String tableName,
            List<Snapshot> ancestors,
            boolean rootRetained,
            List<Snapshot> rolledBack) {
        this.tableName = tableName;
        this.ancestors = ancestors;
        this.rootRetained = rootRetained;
        this.rolledBack = rolledBack;
    }

    /** Version histories read lately, per table name and metadata file: at most this many. */
    private static final int CACHED = 32;

    private static final Map<String, TableVersions> RECENT = RecentlyUsed.map(CACHED);

    /**
     * Reads the version history of {@code table}; rejects format v1 tables. A table whose metadata
     * file is known gets the history read for the same name and metadata file before, if one of the
     * last {@value #CACHED} (a metadata file is never rewritten): a one-version read of a table
     * with thousands of snapshots does not walk them all again.
     */
    static TableVersions of(Table table) {
        String metadata =
                table instanceof HasTableOperations
                        ? ((HasTableOperations) table).operations().current().metadataFileLocation()
                        : null;
        if (metadata == null) {
            return read(table);
        }
        // the UUID too: a Hadoop table dropped and created again at the same place writes
        // v1.metadata.json, v2... again, with other content
        String key = table.name() + "\n" + uuid(table) + "\n" + metadata;
        TableVersions known = RECENT.get(key);
        if (known == null) {
            known = read(table);
            RECENT.put(key, known);
        }
        return known;
    }

    private static String uuid(Table table) {
        try {
            return String.valueOf(table.uuid());
        } catch (UnsupportedOperationException e) {
            return "";
        }
    }

    private static TableVersions read(Table table) {
        int formatVersion = TableUtil.formatVersion(table);
        if (formatVersion < 2) {
            throw new CdfException(
                    CdfException.ErrorCode.UNSUPPORTED_FORMAT_VERSION,
                    String.format(
                            "Table %s has format version %d; the change feed needs format version 2 or 3 "
                                    + "(versions are snapshot sequence numbers, which v1 does not have). "
                                    + "Upgrade the table with the table property 'format-version' = '2'.",
                            table.name(), formatVersion));
        }
        List<Snapshot> ancestors = new ArrayList<>();
        boolean rootRetained = true;
        Snapshot current = table.currentSnapshot();
        while (current != null) {
            ancestors.add(current);
            Long parentId = current.parentId();
            if (parentId == null) {
                break;
            }
            Snapshot parent = table.snapshot(parentId);
            if (parent == null) {
                rootRetained = false;
            }
            current = parent;
        }
        Collections.reverse(ancestors);

        Set<Long> ancestorIds = new HashSet<>();
        ancestors.forEach(s -> ancestorIds.add(s.snapshotId()));
        List<Snapshot> rolledBack = new ArrayList<>();
        for (HistoryEntry entry : table.history()) {
            Snapshot snapshot = table.snapshot(entry.snapshotId());
            if (snapshot != null && !ancestorIds.contains(entry.snapshotId())) {
                rolledBack.add(snapshot);
            }
        }
        return new TableVersions(
                table.name(),
                Collections.unmodifiableList(ancestors),
                rootRetained,
                Collections.unmodifiableList(rolledBack));
    }

    String tableName() {
        return tableName;
    }

    /** The version of {@code main}'s current snapshot, 0 for a table without snapshot. */
    long latestVersion() {
        return ancestors.isEmpty() ? 0L : ancestors.get(ancestors.size() - 1).sequenceNumber();
    }

    /**
     * The earliest version whose changes can be computed; {@code latest + 1} when there is none.
     */
    long earliestAvailableVersion() {
        if (rootRetained) {
            return 0L;
        }
        return ancestors.size() >= 2 ? ancestors.get(1).sequenceNumber() : latestVersion() + 1;
    }

    /** Retained ancestors of {@code main}, oldest first. */
    List<Snapshot> ancestors() {
        return ancestors;
    }

    /** Snapshots that were {@code main}'s current snapshot once but are no longer its ancestors. */
    List<Snapshot> rolledBack() {
        return rolledBack;
    }

    /** The ancestors with {@code start <= version <= end}, oldest first. */
    List<Snapshot> between(long start, long end) {
        List<Snapshot> result = new ArrayList<>();
        for (Snapshot s : ancestors) {
            if (s.sequenceNumber() >= start && s.sequenceNumber() <= end) {
                result.add(s);
            }
        }
        return result;
    }

    /** The first ancestor version at or after {@code version}, or -1. */
    long firstVersionAtOrAfter(long version) {
        for (Snapshot s : ancestors) {
            if (s.sequenceNumber() >= version) {
                return s.sequenceNumber();
            }
        }
        return -1L;
    }

    /** The version of the first commit at or after {@code millis}, or -1 when there is none. */
    long firstVersionCommittedAtOrAfter(long millis) {
        for (Snapshot s : ancestors) {
            if (s.timestampMillis() >= millis) {
                return s.sequenceNumber();
            }
        }
        return -1L;
    }

    /** The version of the last commit at or before {@code millis}; 0 or -1 when there is none. */
    long lastVersionCommittedAtOrBefore(long millis) {
        long result = rootRetained ? 0L : -1L;
        for (Snapshot s : ancestors) {
            if (s.timestampMillis() <= millis) {
                result = s.sequenceNumber();
            } else {
                break;
            }
        }
        return result;
    }

    /** Commit time of the latest snapshot, or {@link Long#MIN_VALUE} without snapshots. */
    long latestCommitMillis() {
        return ancestors.isEmpty()
                ? Long.MIN_VALUE
                : ancestors.get(ancestors.size() - 1).timestampMillis();
    }

    /** Human-readable description of the latest commit for messages. */
    String describeLatestCommit() {
        if (ancestors.isEmpty()) {
            return "the table has no commit yet (version 0)";
        }
        Snapshot last = ancestors.get(ancestors.size() - 1);
        return String.format(
                "the last commit is version %d at %s",
                last.sequenceNumber(), Instant.ofEpochMilli(last.timestampMillis()));
    }

    /** Human-readable available range for {@code VERSION_NOT_AVAILABLE} messages. */
    String describeAvailable() {
        long earliest = earliestAvailableVersion();
        if (earliest > latestVersion()) {
            return String.format(
                    "none (only version %d is retained and its parent snapshot has expired)",
                    latestVersion());
        }
        return String.format("%d to %d", earliest, latestVersion());
    }

    /**
     * The version of {@code snapshot}'s parent among the ancestors, or 0 for the first snapshot.
     */
    long parentVersion(Snapshot snapshot) {
        for (int i = 0; i < ancestors.size(); i++) {
            if (ancestors.get(i).snapshotId() == snapshot.snapshotId()) {
                return i == 0 ? 0L : ancestors.get(i - 1).sequenceNumber();
            }
        }
        throw new IllegalArgumentException("not an ancestor: " + snapshot.snapshotId());
    }
}

package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which writers committed the ancestry of a snapshot, for the change feed's choice of pre-images
 * (semantics.md F2): the rows carried by changeflow's equality-delete files come from the changelog
 * sink's state, which any other writer's commit (Iceberg's upsert sink, Spark, a copy-on-write
 * rewrite, a row-level delete, another changeflow flow) makes stale for every later version. A
 * snapshot's carried rows are trusted only when the snapshot names a changelog writer (summary
 * {@value ChangeFeedOptions#CHANGELOG_WRITER}) and every retained snapshot it descends from names
 * the same writer, apart from snapshots that change no row ({@code replace}, commits that add and
 * remove no file).
 *
 * <p>Where the ancestry is cut by snapshot expiry, the expired part counts as the writer named by
 * the table property {@value ChangeFeedOptions#EXPIRED_HISTORY_WRITER}, which {@code
 * ChangeFeedExpiry} sets before it expires the commits of one writer alone; without it (expiry by
 * another tool, which cannot say whose commits it expired), or with {@value
 * ChangeFeedOptions#OTHER_WRITER_COMMITS_EXPIRED}{@code =true}, as another writer's.
 *
 * <p>Results are cached per instance (not thread-safe) and, for tables with a UUID, in one cache
 * shared by all instances of the JVM (thread-safe, at most {@value #SHARED_MAX} snapshots, least
 * recently used dropped), keyed by table UUID and snapshot id: a snapshot's ancestry never changes,
 * and when expiry cuts it the table records the expired part's writer first (so the answer stays
 * the same), so a change-feed read of one version does not walk the whole retained history again
 * (with 2,245 snapshots the walk took a third of a one-version read).
 */
@PublicEvolving
public final class ChangelogLineage {

    private static final String ANY_WRITER = "";
    private static final String MIXED_WRITERS = "\u0000mixed";

    /** Snapshots the shared cache holds at most. */
    static final int SHARED_MAX = 200_000;

    private static final Map<String, String> SHARED = RecentlyUsed.map(SHARED_MAX);

    private final Table table;

    /** The table's UUID followed by '/', the prefix of its keys in {@link #SHARED}; or null. */
    @javax.annotation.Nullable private final String sharedPrefix;

    /**
     * Per snapshot id: the changelog writer whose commits alone (with commits that change no row)
     * lead to it, {@link #ANY_WRITER} when only such commits do, {@link #MIXED_WRITERS} otherwise.
     */
    private final Map<Long, String> lineageWriters = new HashMap<>();

    /**
     * @param table the table whose snapshots are asked about (its metadata as loaded)
     */
    public ChangelogLineage(Table table) {
        this.table = table;
        java.util.UUID uuid = null;
        try {
            uuid = table.uuid();
        } catch (UnsupportedOperationException e) {
            // a table without a UUID: this instance's cache only
        }
        this.sharedPrefix = uuid == null ? null : uuid + "/";
    }

    /**
     * Whether the rows carried by {@code snapshot}'s equality-delete files are trusted: it names a
     * changelog writer and its retained ancestry was committed by that writer alone.
     */
    public boolean carriedRowsTrusted(Snapshot snapshot) {
        String writer = snapshot.summary().get(ChangeFeedOptions.CHANGELOG_WRITER);
        return writer != null && writer.equals(lineageWriter(snapshot));
    }

    /**
     * Whether the retained ancestry of {@code snapshot} (itself included) holds a commit that
     * changed rows without naming a changelog writer, or commits of two writers.
     */
    public boolean hasOtherWriters(Snapshot snapshot) {
        return lineageWriter(snapshot).equals(MIXED_WRITERS);
    }

    private String lineageWriter(Snapshot snapshot) {
        List<Snapshot> chain = new ArrayList<>();
        String base = ANY_WRITER;
        for (Snapshot s = snapshot; s != null; ) {
            String known = lineageWriters.get(s.snapshotId());
            if (known == null && sharedPrefix != null) {
                known = SHARED.get(sharedPrefix + s.snapshotId());
            }
            if (known != null) {
                base = known;
                break;
            }
            chain.add(s);
            Snapshot parent = s.parentId() == null ? null : table.snapshot(s.parentId());
            if (s.parentId() != null && parent == null) {
                base = expiredHistoryWriter(); // the ancestry was cut by snapshot expiry
            }
            s = parent;
        }
        for (int i = chain.size() - 1; i >= 0; i--) {
            Snapshot s = chain.get(i);
            String writer = s.summary().get(ChangeFeedOptions.CHANGELOG_WRITER);
            if (changesNoRow(s)) {
                // the lineage passes through unchanged
            } else if (writer != null && (base.equals(ANY_WRITER) || base.equals(writer))) {
                base = writer;
            } else {
                base = MIXED_WRITERS;
            }
            lineageWriters.put(s.snapshotId(), base);
            if (sharedPrefix != null) {
                SHARED.put(sharedPrefix + s.snapshotId(), base);
            }
        }
        return base;
    }

    /**
     * The changelog writer of {@code snapshot}'s retained ancestry (itself included) when one
     * writer alone committed the commits that changed rows — empty when none did — or null when
     * another writer committed too (see the class comment for expired history).
     */
    @javax.annotation.Nullable
    public String soleWriter(Snapshot snapshot) {
        String w = lineageWriter(snapshot);
        return w.equals(MIXED_WRITERS) ? null : w;
    }

    /** Whose commits the expired part of the ancestry holds (class comment). */
    private String expiredHistoryWriter() {
        Map<String, String> p = table.properties();
        if (Boolean.parseBoolean(
                p.getOrDefault(ChangeFeedOptions.OTHER_WRITER_COMMITS_EXPIRED, "false"))) {
            return MIXED_WRITERS;
        }
        String writer = p.get(ChangeFeedOptions.EXPIRED_HISTORY_WRITER);
        return writer == null ? MIXED_WRITERS : writer;
    }

    /** A {@code replace} snapshot, or one whose summary counts no added or removed file. */
    private static boolean changesNoRow(Snapshot snapshot) {
        if (DataOperations.REPLACE.equals(snapshot.operation())) {
            return true;
        }
        Map<String, String> summary = snapshot.summary();
        if (!summary.containsKey(SnapshotSummary.TOTAL_DATA_FILES_PROP)) {
            return false; // no file counts: assume it changed rows
        }
        for (String key :
                List.of(
                        SnapshotSummary.ADDED_FILES_PROP,
                        SnapshotSummary.DELETED_FILES_PROP,
                        SnapshotSummary.ADDED_DELETE_FILES_PROP,
                        SnapshotSummary.REMOVED_DELETE_FILES_PROP)) {
            if (Long.parseLong(summary.getOrDefault(key, "0")) != 0) {
                return false;
            }
        }
        return true;
    }
}

package dev.changeflow.sources.cdf.stream.enumerator;

import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;

import org.apache.flink.annotation.Internal;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Per-version completion bookkeeping of the enumerator (plain logic, no Flink): which splits of
 * each planned version are not finished yet, whether the version is fully planned (the initial
 * snapshot may be planned over several cycles), and the highest version {@code v} such that every
 * planned version {@code <= v} is complete — the version-completion watermark.
 *
 * <p>Versions complete strictly in order: a complete version waits for every earlier one, so the
 * completed version is the version before the first outstanding one (or the last planned version).
 * It is a version number or lies in a gap between versions; either way every change of versions
 * {@code <=} it has been emitted. A version planned without splits (empty or compaction-only, F6)
 * completes as soon as the versions before it do. Finishing an unknown split id is ignored (a
 * reader reports finished splits again after a restore).
 */
@Internal
public final class VersionTracker {

    /** Unfinished split ids and whether all of the version's splits were planned. */
    public static final class VersionProgress {
        final Set<String> unfinished;
        boolean fullyPlanned;

        public VersionProgress(Set<String> unfinished, boolean fullyPlanned) {
            this.unfinished = new LinkedHashSet<>(unfinished);
            this.fullyPlanned = fullyPlanned;
        }

        public Set<String> unfinished() {
            return Collections.unmodifiableSet(unfinished);
        }

        public boolean fullyPlanned() {
            return fullyPlanned;
        }
    }

    private final TreeMap<Long, VersionProgress> versions = new TreeMap<>();
    private long completedVersion;

    /**
     * @param completedVersion the watermark already reached (-1 when none)
     */
    public VersionTracker(long completedVersion) {
        this.completedVersion = completedVersion;
    }

    /** Restores bookkeeping from an enumerator state. */
    public VersionTracker(long completedVersion, Map<Long, VersionProgress> versions) {
        this(completedVersion);
        versions.forEach(
                (v, p) -> this.versions.put(v, new VersionProgress(p.unfinished, p.fullyPlanned)));
    }

    /** Records planned splits of {@code version}; {@code lastPart} when no more will be planned. */
    public void planned(long version, Iterable<ChangeFeedSplit> splits, boolean lastPart) {
        VersionProgress progress =
                versions.computeIfAbsent(version, v -> new VersionProgress(Set.of(), false));
        splits.forEach(s -> progress.unfinished.add(s.splitId()));
        progress.fullyPlanned = lastPart;
    }

    /** Marks a split finished (unknown ids are ignored). */
    public void finished(String splitId) {
        VersionProgress progress = versions.get(ChangeFeedSplit.versionOf(splitId));
        if (progress != null) {
            progress.unfinished.remove(splitId);
        }
    }

    /**
     * Re-opens splits handed back after a failover (their rows will be emitted again): their
     * versions become outstanding again, so the completed version may go down.
     */
    public void reopen(Iterable<ChangeFeedSplit> splits) {
        for (ChangeFeedSplit split : splits) {
            versions.computeIfAbsent(split.version(), v -> new VersionProgress(Set.of(), true))
                    .unfinished
                    .add(split.splitId());
        }
    }

    /**
     * Drops the leading complete versions and returns the completed version: the version before the
     * first outstanding one, or {@code lastPlannedVersion} when none is outstanding.
     */
    public long advance(long lastPlannedVersion) {
        while (!versions.isEmpty()) {
            Map.Entry<Long, VersionProgress> first = versions.firstEntry();
            if (!first.getValue().fullyPlanned || !first.getValue().unfinished.isEmpty()) {
                break;
            }
            versions.pollFirstEntry();
        }
        completedVersion = versions.isEmpty() ? lastPlannedVersion : versions.firstKey() - 1;
        return completedVersion;
    }

    /** The highest version whose changes (and all earlier ones) were all emitted; -1 when none. */
    public long completedVersion() {
        return completedVersion;
    }

    /** Whether no planned version is outstanding. */
    public boolean isEmpty() {
        return versions.isEmpty();
    }

    /** Outstanding versions and their progress, ascending (a read-only view). */
    public Map<Long, VersionProgress> versions() {
        return Collections.unmodifiableMap(versions);
    }
}

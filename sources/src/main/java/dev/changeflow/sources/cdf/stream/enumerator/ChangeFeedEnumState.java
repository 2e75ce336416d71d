package dev.changeflow.sources.cdf.stream.enumerator;

import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;

import org.apache.flink.annotation.Internal;

import java.util.List;
import java.util.Map;

/**
 * Checkpointed state of {@link ChangeFeedEnumerator} (design.md "Position"): the planning position
 * (next version to plan, initial-snapshot progress), the version the stream reads to in bounded
 * mode ({@link Long#MAX_VALUE} when unbounded), the version-completion watermark reached, the
 * planned splits not yet assigned to a reader, and the unfinished splits of every outstanding
 * version (assigned splits are also in the readers' state, with their offsets).
 */
@Internal
public record ChangeFeedEnumState(
        PlanningPosition position,
        long boundVersion,
        long completedVersion,
        List<ChangeFeedSplit> pendingSplits,
        Map<Long, VersionTracker.VersionProgress> outstandingVersions) {}

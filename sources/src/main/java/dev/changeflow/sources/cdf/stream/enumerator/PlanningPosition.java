package dev.changeflow.sources.cdf.stream.enumerator;

import org.apache.flink.annotation.Internal;

import java.io.Serializable;

/**
 * Where planning stands (immutable): the next version to plan, the snapshot of the last planned
 * version (to detect a rewritten history, F8), and, while the initial snapshot is being planned,
 * its snapshot id and the number of its scan tasks already planned.
 *
 * @param nextVersion the first version not planned yet
 * @param lastSnapshotId snapshot id of the last planned version, -1 when none
 * @param initialSnapshotId snapshot emitted as inserts (F6), -1 when there is none or it is planned
 * @param initialTasksPlanned scan tasks of the initial snapshot planned so far (tasks sorted by
 *     file)
 */
@Internal
public record PlanningPosition(
        long nextVersion, long lastSnapshotId, long initialSnapshotId, int initialTasksPlanned)
        implements Serializable {

    /** A position that starts with the snapshot {@code snapshotId} as inserts. */
    public static PlanningPosition initialSnapshot(long snapshotId, long version) {
        return new PlanningPosition(version, -1L, snapshotId, 0);
    }

    /** A position that starts at {@code version}. */
    public static PlanningPosition at(long version) {
        return new PlanningPosition(version, -1L, -1L, 0);
    }

    /** Whether the initial snapshot is still (partly) unplanned. */
    public boolean planningInitialSnapshot() {
        return initialSnapshotId >= 0;
    }
}

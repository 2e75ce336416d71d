package dev.changeflow.sources.snapshots;

import org.apache.flink.annotation.Internal;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.assigners.FileSplitAssigner;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;
import java.util.PriorityQueue;

/**
 * Hands out snapshot files in version order (semantics.md A6), smallest version first, whatever
 * order the file enumerator found them in; with the single reader of {@link SnapshotFiles}, which
 * asks for the next file only when it finished one, snapshots are read one after the other in
 * ascending version. A file found later with a version below one already handed out is still handed
 * out: the ordering step ({@code SnapshotSequencer}) skips and counts it.
 *
 * @throws dev.changeflow.operators.AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} (from
 *     {@link #addSplits}) for a file name without a version
 */
@Internal
final class SnapshotSplitAssigner implements FileSplitAssigner {
    private static final Comparator<FileSourceSplit> ORDER =
            Comparator.comparingLong((FileSourceSplit s) -> version(s))
                    .thenComparing(s -> s.path().toString());

    private final PriorityQueue<FileSourceSplit> pending = new PriorityQueue<>(ORDER);

    SnapshotSplitAssigner(Collection<FileSourceSplit> splits) {
        addSplits(splits);
    }

    static long version(FileSourceSplit split) {
        return SnapshotFileNames.version(split.path().getName());
    }

    @Override
    public Optional<FileSourceSplit> getNext(String hostname) {
        return Optional.ofNullable(pending.poll());
    }

    @Override
    public void addSplits(Collection<FileSourceSplit> splits) {
        for (FileSourceSplit s : splits) {
            version(s); // fail on a name without a version before anything is read
            pending.add(s);
        }
    }

    @Override
    public Collection<FileSourceSplit> remainingSplits() {
        return new ArrayList<>(pending);
    }
}

package dev.changeflow.sources.cdf.stream.enumerator;

import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplitSerializer;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Versioned serializer of {@link ChangeFeedEnumState}.
 *
 * <p>Version 1 layout: position ({@code nextVersion} long, {@code lastSnapshotId} long, {@code
 * initialSnapshotId} long, {@code initialTasksPlanned} int), {@code boundVersion} long, {@code
 * completedVersion} long, pending splits (int count, then each split in {@link
 * ChangeFeedSplitSerializer} layout 1), outstanding versions (int count, then each: version long,
 * fully planned boolean, int count of unfinished split ids, each as modified UTF-8). Never change a
 * version's layout; add a version and keep reading the old ones.
 */
@Internal
public final class ChangeFeedEnumStateSerializer
        implements SimpleVersionedSerializer<ChangeFeedEnumState> {

    public static final ChangeFeedEnumStateSerializer INSTANCE =
            new ChangeFeedEnumStateSerializer();

    public static final int CURRENT_VERSION = 1;

    @Override
    public int getVersion() {
        return CURRENT_VERSION;
    }

    @Override
    public byte[] serialize(ChangeFeedEnumState state) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(256);
        PlanningPosition p = state.position();
        out.writeLong(p.nextVersion());
        out.writeLong(p.lastSnapshotId());
        out.writeLong(p.initialSnapshotId());
        out.writeInt(p.initialTasksPlanned());
        out.writeLong(state.boundVersion());
        out.writeLong(state.completedVersion());
        out.writeInt(state.pendingSplits().size());
        for (ChangeFeedSplit split : state.pendingSplits()) {
            ChangeFeedSplitSerializer.write(split, out);
        }
        out.writeInt(state.outstandingVersions().size());
        for (Map.Entry<Long, VersionTracker.VersionProgress> e :
                state.outstandingVersions().entrySet()) {
            out.writeLong(e.getKey());
            out.writeBoolean(e.getValue().fullyPlanned());
            out.writeInt(e.getValue().unfinished().size());
            for (String id : e.getValue().unfinished()) {
                out.writeUTF(id);
            }
        }
        return out.getCopyOfBuffer();
    }

    @Override
    public ChangeFeedEnumState deserialize(int version, byte[] serialized) throws IOException {
        if (version != 1) {
            throw new IOException(
                    "Unknown change-feed enumerator state serializer version "
                            + version
                            + " (this build reads versions 1 to "
                            + CURRENT_VERSION
                            + ")");
        }
        DataInputDeserializer in = new DataInputDeserializer(serialized);
        PlanningPosition position =
                new PlanningPosition(in.readLong(), in.readLong(), in.readLong(), in.readInt());
        long boundVersion = in.readLong();
        long completedVersion = in.readLong();
        int pendingCount = in.readInt();
        List<ChangeFeedSplit> pending = new ArrayList<>(pendingCount);
        for (int i = 0; i < pendingCount; i++) {
            pending.add(ChangeFeedSplitSerializer.read(1, in));
        }
        int versionCount = in.readInt();
        Map<Long, VersionTracker.VersionProgress> versions = new LinkedHashMap<>();
        for (int i = 0; i < versionCount; i++) {
            long v = in.readLong();
            boolean fullyPlanned = in.readBoolean();
            int ids = in.readInt();
            Set<String> unfinished = new LinkedHashSet<>();
            for (int j = 0; j < ids; j++) {
                unfinished.add(in.readUTF());
            }
            versions.put(v, new VersionTracker.VersionProgress(unfinished, fullyPlanned));
        }
        return new ChangeFeedEnumState(position, boundVersion, completedVersion, pending, versions);
    }
}

package dev.changeflow.sources.cdf.stream.enumerator;

import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplitSerializer;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
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
 * Versioned serializer of {@link ChangeFeedEnumState}, shaped like Iceberg's {@code
 * IcebergEnumeratorStateSerializer}: the pending splits are written with the version of the split
 * serializer that wrote them, so a later split layout does not need a new enumerator layout.
 *
 * <p>Version 2 layout (current): position ({@code nextVersion} long, {@code lastSnapshotId} long,
 * {@code initialSnapshotId} long, {@code initialTasksPlanned} int), {@code boundVersion} long,
 * {@code completedVersion} long, pending splits ({@link ChangeFeedSplitSerializer} version int, int
 * count, then each split as int length + the split serializer's bytes), outstanding versions (int
 * count, then each: version long, fully planned boolean, int count of unfinished split ids, each as
 * modified UTF-8).
 *
 * <p>Version 1 layout (still read): as version 2, but the pending splits are an int count, then
 * each split inline in {@link ChangeFeedSplitSerializer} layout 1 (no serializer version, no
 * length).
 *
 * <p>Never change a version's layout; add a version and keep reading the old ones (stored samples
 * under {@code src/test/resources/cdf-stream-samples/}).
 */
@Internal
public final class ChangeFeedEnumStateSerializer
        implements SimpleVersionedSerializer<ChangeFeedEnumState> {

    public static final ChangeFeedEnumStateSerializer INSTANCE =
            new ChangeFeedEnumStateSerializer(ChangeFeedSplitSerializer.INSTANCE);

    /** The layout {@link #serialize} writes. */
    public static final int CURRENT_VERSION = 2;

    private final SimpleVersionedSerializer<ChangeFeedSplit> splitSerializer;

    /**
     * @param splitSerializer writes and reads the pending splits; its version is stored with them
     */
    @VisibleForTesting
    public ChangeFeedEnumStateSerializer(
            SimpleVersionedSerializer<ChangeFeedSplit> splitSerializer) {
        this.splitSerializer = splitSerializer;
    }

    @Override
    public int getVersion() {
        return CURRENT_VERSION;
    }

    @Override
    public byte[] serialize(ChangeFeedEnumState state) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(256);
        writePosition(state, out);
        out.writeInt(splitSerializer.getVersion());
        out.writeInt(state.pendingSplits().size());
        for (ChangeFeedSplit split : state.pendingSplits()) {
            byte[] bytes = splitSerializer.serialize(split);
            out.writeInt(bytes.length);
            out.write(bytes);
        }
        writeVersions(state, out);
        return out.getCopyOfBuffer();
    }

    /**
     * Reads a state written in layout {@code version}.
     *
     * @throws IOException for a version this build does not know (neither 1 nor 2), or bytes that
     *     are not a state of that version
     */
    @Override
    public ChangeFeedEnumState deserialize(int version, byte[] serialized) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(serialized);
        switch (version) {
            case 1:
                return readV1(in);
            case 2:
                return readV2(in);
            default:
                throw new IOException(
                        "Unknown change-feed enumerator state serializer version "
                                + version
                                + " (this build reads versions 1 to "
                                + CURRENT_VERSION
                                + ")");
        }
    }

    private static void writePosition(ChangeFeedEnumState state, DataOutputSerializer out)
            throws IOException {
        PlanningPosition p = state.position();
        out.writeLong(p.nextVersion());
        out.writeLong(p.lastSnapshotId());
        out.writeLong(p.initialSnapshotId());
        out.writeInt(p.initialTasksPlanned());
        out.writeLong(state.boundVersion());
        out.writeLong(state.completedVersion());
    }

    private static void writeVersions(ChangeFeedEnumState state, DataOutputSerializer out)
            throws IOException {
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
    }

    private static ChangeFeedEnumState readV1(DataInputDeserializer in) throws IOException {
        PlanningPosition position =
                new PlanningPosition(in.readLong(), in.readLong(), in.readLong(), in.readInt());
        long boundVersion = in.readLong();
        long completedVersion = in.readLong();
        int pendingCount = in.readInt();
        List<ChangeFeedSplit> pending = new ArrayList<>(pendingCount);
        for (int i = 0; i < pendingCount; i++) {
            pending.add(ChangeFeedSplitSerializer.read(1, in));
        }
        return new ChangeFeedEnumState(
                position, boundVersion, completedVersion, pending, readVersions(in));
    }

    private ChangeFeedEnumState readV2(DataInputDeserializer in) throws IOException {
        PlanningPosition position =
                new PlanningPosition(in.readLong(), in.readLong(), in.readLong(), in.readInt());
        long boundVersion = in.readLong();
        long completedVersion = in.readLong();
        int splitVersion = in.readInt();
        int pendingCount = in.readInt();
        List<ChangeFeedSplit> pending = new ArrayList<>(pendingCount);
        for (int i = 0; i < pendingCount; i++) {
            byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            pending.add(splitSerializer.deserialize(splitVersion, bytes));
        }
        return new ChangeFeedEnumState(
                position, boundVersion, completedVersion, pending, readVersions(in));
    }

    private static Map<Long, VersionTracker.VersionProgress> readVersions(DataInputDeserializer in)
            throws IOException {
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
        return versions;
    }
}

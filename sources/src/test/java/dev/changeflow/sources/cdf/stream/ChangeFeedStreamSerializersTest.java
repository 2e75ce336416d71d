package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumState;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumStateSerializer;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;
import dev.changeflow.sources.cdf.stream.enumerator.VersionTracker;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplitSerializer;

import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Versioned serializers of the streaming change feed's splits and enumerator state: round trips,
 * and the stored samples under {@code src/test/resources/cdf-stream-samples/<version>/}, written by
 * {@link #main} with the code of that version: {@code v1/} (splits, and the enumerator state of
 * layout 1), {@code v2/} (the enumerator state of layout 2, which stores the split serializer's
 * version). Never regenerate an existing version's samples; add a directory for a new version.
 */
class ChangeFeedStreamSerializersTest {

    static final ChangeFeedSplit ADDED =
            ChangeFeedSplit.of(
                            76,
                            5_000_000_001L,
                            1_764_000_000_123L,
                            ChangeFeedSplit.Kind.ADDED,
                            3,
                            "file:/warehouse/db/t/data/00003-1-ä.parquet")
                    .withOffset(1500);
    static final ChangeFeedSplit REMOVED =
            ChangeFeedSplit.of(
                            77,
                            5_000_000_002L,
                            1_764_000_000_456L,
                            ChangeFeedSplit.Kind.REMOVED,
                            0,
                            null)
                    .asFinished();
    static final ChangeFeedSplit INITIAL =
            ChangeFeedSplit.of(
                    12,
                    5_000_000_000L,
                    1_763_000_000_000L,
                    ChangeFeedSplit.Kind.INITIAL,
                    0,
                    "{\"task-type\":\"file-scan-task\"," + "\"x\":\"" + "y".repeat(70_000) + "\"}");

    static ChangeFeedEnumState sampleState() {
        Map<Long, VersionTracker.VersionProgress> versions = new LinkedHashMap<>();
        versions.put(76L, new VersionTracker.VersionProgress(Set.of("76-A3"), true));
        versions.put(77L, new VersionTracker.VersionProgress(Set.of("77-R0"), true));
        return new ChangeFeedEnumState(
                new PlanningPosition(78, 5_000_000_002L, -1, 0),
                80,
                75,
                List.of(REMOVED.withOffset(0)),
                versions);
    }

    /**
     * An enumerator state in the middle of an initial snapshot: two scan tasks of snapshot {@code
     * 5_000_000_000} planned, one pending ({@link #INITIAL}, its JSON over 64 KiB) beside a pending
     * split of a later version, the snapshot's version not fully planned.
     */
    static ChangeFeedEnumState initialSnapshotState() {
        Map<Long, VersionTracker.VersionProgress> versions = new LinkedHashMap<>();
        versions.put(
                12L,
                new VersionTracker.VersionProgress(
                        new LinkedHashSet<>(List.of("12-I0", "12-I1")), false));
        return new ChangeFeedEnumState(
                new PlanningPosition(13, -1, 5_000_000_000L, 2),
                Long.MAX_VALUE,
                -1,
                List.of(INITIAL, ADDED),
                versions);
    }

    /**
     * The samples today's code writes, by path under {@code cdf-stream-samples/}: splits in layout
     * 1 (still current), the enumerator state in layout 2 (layout 1's samples stay as written by
     * the v1 code).
     */
    static Map<String, byte[]> currentSamples() throws IOException {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("v1/split-added.bin", ChangeFeedSplitSerializer.INSTANCE.serialize(ADDED));
        m.put(
                "v1/split-removed-finished.bin",
                ChangeFeedSplitSerializer.INSTANCE.serialize(REMOVED));
        m.put("v2/enum-state.bin", ChangeFeedEnumStateSerializer.INSTANCE.serialize(sampleState()));
        m.put(
                "v2/enum-state-initial.bin",
                ChangeFeedEnumStateSerializer.INSTANCE.serialize(initialSnapshotState()));
        return m;
    }

    static byte[] load(String version, String name) throws IOException {
        try (InputStream in =
                ChangeFeedStreamSerializersTest.class.getResourceAsStream(
                        "/cdf-stream-samples/" + version + "/" + name)) {
            assertThat(in).as("sample %s/%s", version, name).isNotNull();
            return in.readAllBytes();
        }
    }

    private static String render(ChangeFeedEnumState s) {
        StringBuilder out =
                new StringBuilder(
                        s.position()
                                + " bound="
                                + s.boundVersion()
                                + " completed="
                                + s.completedVersion()
                                + " pending="
                                + s.pendingSplits()
                                + " versions=");
        s.outstandingVersions()
                .forEach(
                        (v, p) ->
                                out.append(v)
                                        .append(p.unfinished())
                                        .append(p.fullyPlanned() ? "" : "+")
                                        .append(' '));
        return out.toString();
    }

    @Test
    void splitRoundTrip() throws IOException {
        for (ChangeFeedSplit split : List.of(ADDED, REMOVED, INITIAL)) {
            byte[] bytes = ChangeFeedSplitSerializer.INSTANCE.serialize(split);
            assertThat(ChangeFeedSplitSerializer.INSTANCE.deserialize(1, bytes)).isEqualTo(split);
        }
        assertThat(ADDED.splitId()).isEqualTo("76-A3");
        assertThat(ChangeFeedSplit.versionOf("76-A3")).isEqualTo(76L);
    }

    @Test
    void enumStateRoundTrip() throws IOException {
        ChangeFeedEnumState state = sampleState();
        byte[] bytes = ChangeFeedEnumStateSerializer.INSTANCE.serialize(state);
        assertThat(
                        render(
                                ChangeFeedEnumStateSerializer.INSTANCE.deserialize(
                                        ChangeFeedEnumStateSerializer.CURRENT_VERSION, bytes)))
                .isEqualTo(render(state));
    }

    /**
     * Layout 2 stores the split serializer's version with the pending splits and reads them back
     * with that version (Iceberg's {@code IcebergEnumeratorStateSerializer} does the same).
     */
    @Test
    void enumStateV2WritesTheSplitSerializersVersion() throws IOException {
        List<Integer> versionsRead = new ArrayList<>();
        SimpleVersionedSerializer<ChangeFeedSplit> version7 =
                new SimpleVersionedSerializer<>() {
                    @Override
                    public int getVersion() {
                        return 7;
                    }

                    @Override
                    public byte[] serialize(ChangeFeedSplit split) throws IOException {
                        return ChangeFeedSplitSerializer.INSTANCE.serialize(split);
                    }

                    @Override
                    public ChangeFeedSplit deserialize(int version, byte[] serialized)
                            throws IOException {
                        versionsRead.add(version);
                        return ChangeFeedSplitSerializer.INSTANCE.deserialize(1, serialized);
                    }
                };
        ChangeFeedEnumStateSerializer serializer = new ChangeFeedEnumStateSerializer(version7);
        ChangeFeedEnumState state = initialSnapshotState();
        byte[] bytes = serializer.serialize(state);

        assertThat(serializer.getVersion()).isEqualTo(2);
        // position (3 longs + int), bound, completed, then the split serializer's version
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        in.skipBytesToRead(3 * 8 + 4 + 8 + 8);
        assertThat(in.readInt()).isEqualTo(7);
        assertThat(in.readInt()).isEqualTo(2);
        ChangeFeedEnumState restored = serializer.deserialize(2, bytes);
        assertThat(versionsRead).containsExactly(7, 7);
        assertThat(render(restored)).isEqualTo(render(state));
        assertThat(restored.pendingSplits()).containsExactly(INITIAL, ADDED);
    }

    @Test
    void v1SamplesDecode() throws IOException {
        assertThat(ChangeFeedSplitSerializer.INSTANCE.deserialize(1, load("v1", "split-added.bin")))
                .isEqualTo(ADDED);
        assertThat(
                        ChangeFeedSplitSerializer.INSTANCE.deserialize(
                                1, load("v1", "split-removed-finished.bin")))
                .isEqualTo(REMOVED);
        assertThat(
                        render(
                                ChangeFeedEnumStateSerializer.INSTANCE.deserialize(
                                        1, load("v1", "enum-state.bin"))))
                .isEqualTo(
                        "PlanningPosition[nextVersion=78, lastSnapshotId=5000000002, initialSnapshotId=-1, "
                                + "initialTasksPlanned=0] bound=80 completed=75 pending=[ChangeFeedSplit{77-R0, "
                                + "snapshot=5000000002, offset=0, finished}] versions=76[76-A3] 77[77-R0] ");
    }

    @Test
    void v1InitialSnapshotSampleDecodes() throws IOException {
        ChangeFeedEnumState restored =
                ChangeFeedEnumStateSerializer.INSTANCE.deserialize(
                        1, load("v1", "enum-state-initial.bin"));
        assertThat(render(restored)).isEqualTo(render(initialSnapshotState()));
        assertThat(restored.pendingSplits()).containsExactly(INITIAL, ADDED);
        assertThat(restored.position()).isEqualTo(new PlanningPosition(13, -1, 5_000_000_000L, 2));
    }

    @Test
    void v2SamplesDecode() throws IOException {
        assertThat(
                        render(
                                ChangeFeedEnumStateSerializer.INSTANCE.deserialize(
                                        2, load("v2", "enum-state.bin"))))
                .isEqualTo(render(sampleState()));
        ChangeFeedEnumState initial =
                ChangeFeedEnumStateSerializer.INSTANCE.deserialize(
                        2, load("v2", "enum-state-initial.bin"));
        assertThat(render(initial)).isEqualTo(render(initialSnapshotState()));
        assertThat(initial.pendingSplits()).containsExactly(INITIAL, ADDED);
    }

    @Test
    void currentCodeWritesTheStoredSamplesByteForByte() throws IOException {
        assertThat(ChangeFeedSplitSerializer.CURRENT_VERSION).isEqualTo(1);
        assertThat(ChangeFeedEnumStateSerializer.CURRENT_VERSION).isEqualTo(2);
        for (Map.Entry<String, byte[]> s : currentSamples().entrySet()) {
            String[] path = s.getKey().split("/");
            assertThat(s.getValue()).as(s.getKey()).isEqualTo(load(path[0], path[1]));
        }
    }

    @Test
    void unknownVersionsFailWithAClearMessage() {
        assertThatThrownBy(() -> ChangeFeedSplitSerializer.INSTANCE.deserialize(2, new byte[8]))
                .isInstanceOf(IOException.class)
                .hasMessage(
                        "Unknown change-feed split serializer version 2 (this build reads versions 1 to 1)");
        assertThatThrownBy(() -> ChangeFeedEnumStateSerializer.INSTANCE.deserialize(0, new byte[8]))
                .isInstanceOf(IOException.class)
                .hasMessage(
                        "Unknown change-feed enumerator state serializer version 0 (this build reads versions 1 to 2)");
    }

    /**
     * Writes the samples of the current versions; run once when a version is introduced (it must
     * leave the files of existing versions unchanged).
     */
    public static void main(String[] args) throws IOException {
        Path dir =
                Paths.get(
                        args.length > 0
                                ? args[0]
                                : "sources/src/test/resources/cdf-stream-samples");
        for (Map.Entry<String, byte[]> s : currentSamples().entrySet()) {
            Path file = dir.resolve(s.getKey());
            Files.createDirectories(file.getParent());
            Files.write(file, s.getValue());
        }
    }
}

package dev.changeflow.sources.files;

import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.api.connector.source.mocks.MockSplitEnumeratorContext;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.PendingSplitsCheckpoint;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FilesPerCheckpoint} across a restore (docs/semantics.md S2, {@code maxFilesPerTrigger}):
 * the files held back when a savepoint is taken are in the enumerator state as pending files, so
 * the restored source reads each of them once, still at most {@code max} per checkpoint, and never
 * again the file that was with the reader. Driven through Flink's enumerator test context with the
 * enumerator state serialized as a savepoint stores it.
 */
class FilesPerCheckpointTest {
    @TempDir Path dir;

    private static final ReaderInfo READER = new ReaderInfo(0, "localhost");

    @Test
    void filesHeldBackAtASavepointAreReadOnceAfterTheRestoreAtMostMaxPerCheckpoint()
            throws Exception {
        Path in = Files.createDirectories(dir.resolve("in"));
        for (String name : List.of("a", "b", "c", "d")) {
            Files.writeString(in.resolve(name + ".jsonl"), "{\"" + name + "\":1}\n");
        }
        FilesPerCheckpoint<SourceLine> source =
                new FilesPerCheckpoint<>(ChangeFiles.source(List.of(in), null), 1);

        // run 1: the reader gets one file; when it asks for the next, that one is held back
        PendingSplitsCheckpoint<FileSourceSplit> saved;
        List<String> others = new ArrayList<>(List.of("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"));
        try (MockSplitEnumeratorContext<FileSourceSplit> context =
                        new MockSplitEnumeratorContext<>(1);
                SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>
                        enumerator = source.createEnumerator(context)) {
            context.registerReader(READER);
            enumerator.start();
            enumerator.addReader(0);
            enumerator.handleSplitRequest(0, "localhost");
            enumerator.handleSplitRequest(0, "localhost"); // the reader finished its file
            List<String> first = names(context.getSplitsAssignmentSequence());
            assertThat(first).hasSize(1).isSubsetOf(others);
            others.removeAll(first);
            saved = roundTrip(source, enumerator.snapshotState(1));
        }
        assertThat(names(saved.getSplits())).containsExactlyInAnyOrderElementsOf(others);

        // run 2, restored: one file per completed checkpoint, each held file once
        try (MockSplitEnumeratorContext<FileSourceSplit> context =
                        new MockSplitEnumeratorContext<>(1);
                SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>
                        enumerator = source.restoreEnumerator(context, saved)) {
            context.registerReader(READER);
            enumerator.start();
            enumerator.addReader(0);
            List<List<String>> perCheckpoint = new ArrayList<>();
            for (long checkpoint = 2; checkpoint <= 5; checkpoint++) {
                int before = context.getSplitsAssignmentSequence().size();
                enumerator.handleSplitRequest(0, "localhost");
                enumerator.snapshotState(checkpoint);
                enumerator.notifyCheckpointComplete(checkpoint);
                perCheckpoint.add(
                        names(
                                context.getSplitsAssignmentSequence()
                                        .subList(
                                                before,
                                                context.getSplitsAssignmentSequence().size())));
            }
            assertThat(perCheckpoint)
                    .allSatisfy(files -> assertThat(files.size()).isLessThanOrEqualTo(1));
            assertThat(names(context.getSplitsAssignmentSequence()))
                    .containsExactlyInAnyOrderElementsOf(others);
            assertThat(context.hasNoMoreSplits(0)).isTrue();
        }
    }

    private static PendingSplitsCheckpoint<FileSourceSplit> roundTrip(
            FilesPerCheckpoint<SourceLine> source, PendingSplitsCheckpoint<FileSourceSplit> state)
            throws Exception {
        SimpleVersionedSerializer<PendingSplitsCheckpoint<FileSourceSplit>> serializer =
                source.getEnumeratorCheckpointSerializer();
        return serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
    }

    private static List<String> names(List<SplitsAssignment<FileSourceSplit>> assignments) {
        List<FileSourceSplit> splits = new ArrayList<>();
        for (SplitsAssignment<FileSourceSplit> a : assignments) {
            a.assignment().values().forEach(splits::addAll);
        }
        return names(splits);
    }

    private static List<String> names(java.util.Collection<FileSourceSplit> splits) {
        List<String> out = new ArrayList<>();
        for (FileSourceSplit s : splits) {
            out.add(s.path().getName());
        }
        return out;
    }
}

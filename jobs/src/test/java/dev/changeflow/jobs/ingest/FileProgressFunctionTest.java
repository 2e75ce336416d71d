package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.streaming.api.operators.ProcessOperator;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FileProgressFunction}'s gauge of the run's completed files: restored files count, a file
 * read again after a restore counts once, files outside the run do not count; with several readers
 * each writes its own list per checkpoint and the checkpoint's files are their union.
 */
class FileProgressFunctionTest {
    private static final List<String> RUN = List.of("/in/a.json", "/in/b.json", "/in/c.json");

    private static OneInputStreamOperatorTestHarness<SourceLine, SourceLine> harness(
            FileProgressFunction fn) throws Exception {
        return new OneInputStreamOperatorTestHarness<>(new ProcessOperator<>(fn));
    }

    /** Subtask {@code subtask} of {@code parallelism}, in job {@code job}. */
    private static OneInputStreamOperatorTestHarness<SourceLine, SourceLine> harness(
            FileProgressFunction fn, JobID job, int parallelism, int subtask) throws Exception {
        return new OneInputStreamOperatorTestHarness<>(
                new ProcessOperator<>(fn),
                new MockEnvironmentBuilder()
                        .setJobID(job)
                        .setParallelism(parallelism)
                        .setMaxParallelism(parallelism)
                        .setSubtaskIndex(subtask)
                        .build());
    }

    @Test
    void aFileReadAgainAfterARestoreCountsOnce() throws Exception {
        FileProgressFunction first = new FileProgressFunction(null, RUN);
        OperatorSubtaskState checkpoint;
        try (var h = harness(first)) {
            h.open();
            h.processElement(
                    SourceLine.data("/in/a.json", 1, "{}".getBytes(StandardCharsets.UTF_8)), 0L);
            h.processElement(SourceLine.endOfFile("/in/a.json", 1), 0L);
            // a file of an earlier run, still in the state: not one of this run's
            h.processElement(SourceLine.endOfFile("/in/old.json", 4), 0L);
            assertThat(first.runCompleted()).isEqualTo(1);
            checkpoint = h.snapshot(1L, 1L);
            // completed after the checkpoint, then the attempt fails
            h.processElement(SourceLine.endOfFile("/in/b.json", 2), 0L);
            assertThat(first.runCompleted()).isEqualTo(2);
            assertThat(h.extractOutputValues()).hasSize(4);
        }
        FileProgressFunction restored = new FileProgressFunction(null, RUN);
        try (var h = harness(restored)) {
            h.initializeState(checkpoint);
            h.open();
            assertThat(restored.runCompleted()).isEqualTo(1);
            h.processElement(SourceLine.endOfFile("/in/b.json", 2), 0L);
            h.processElement(SourceLine.endOfFile("/in/b.json", 2), 0L);
            assertThat(restored.runCompleted()).isEqualTo(2);
            // file sources name local files as URIs too
            h.processElement(SourceLine.endOfFile("file:/in/c.json", 3), 0L);
            assertThat(restored.runCompleted()).isEqualTo(3);
        }
    }

    @Test
    void eachReaderWritesItsListAndACheckpointsFilesAreTheirUnion(@TempDir Path tmp)
            throws Exception {
        Path done = tmp.resolve("files-done");
        JobID id = new JobID();
        String job = id.toString();
        // two readers (file-readers: 2), each completing its own files
        try (var h0 = harness(new FileProgressFunction(StateFiles.of(done), RUN), id, 2, 0);
                var h1 = harness(new FileProgressFunction(StateFiles.of(done), RUN), id, 2, 1)) {
            h0.open();
            h1.open();
            h0.processElement(SourceLine.endOfFile("/in/a.json", 1), 0L);
            h1.processElement(SourceLine.endOfFile("/in/b.json", 1), 0L);
            h1.processElement(SourceLine.endOfFile("/in/c.json", 1), 0L);
            h0.snapshot(7L, 1L);
            h1.snapshot(7L, 1L);
        }
        Path jobDir = done.resolve(job);
        assertThat(Files.readAllLines(jobDir.resolve("7.txt"))).containsExactly("/in/a.json");
        assertThat(Files.readAllLines(jobDir.resolve("7-1.txt")))
                .containsExactly("/in/b.json", "/in/c.json");
        // a list of another checkpoint beside them is not read
        Files.write(jobDir.resolve("8-1.txt"), List.of("/in/d.json"));
        Files.write(jobDir.resolve("17.txt"), List.of("/in/e.json"));
        Path chk =
                Files.createDirectories(tmp.resolve("checkpoints").resolve(job).resolve("chk-7"));
        assertThat(FileProgressFunction.doneAt(done, chk, 7L))
                .containsExactlyInAnyOrder("/in/a.json", "/in/b.json", "/in/c.json");
        assertThat(FileProgressFunction.doneAt(StateFiles.of(done), StateFiles.of(chk), 7L))
                .containsExactlyInAnyOrder("/in/a.json", "/in/b.json", "/in/c.json");
        assertThat(FileProgressFunction.doneAt(done, chk, 8L)).containsExactly("/in/d.json");
    }

    @Test
    void listNamesAreTheCheckpointIdAndTheSubtask() {
        assertThat(FileProgressFunction.listName(12, 0)).isEqualTo("12.txt");
        assertThat(FileProgressFunction.listName(12, 3)).isEqualTo("12-3.txt");
        assertThat(FileProgressFunction.isListOf("12.txt", 12)).isTrue();
        assertThat(FileProgressFunction.isListOf("12-3.txt", 12)).isTrue();
        assertThat(FileProgressFunction.isListOf("12-0.txt", 12)).isFalse();
        assertThat(FileProgressFunction.isListOf("12-x.txt", 12)).isFalse();
        assertThat(FileProgressFunction.isListOf("123.txt", 12)).isFalse();
        assertThat(FileProgressFunction.isListOf("12.txt.tmp", 12)).isFalse();
        assertThat(FileProgressFunction.isListOf("1-2.txt", 12)).isFalse();
    }

    @Test
    void withoutRunFilesTheGaugeCountsTheCompletedList() throws Exception {
        FileProgressFunction fn = new FileProgressFunction(null, null);
        try (var h = harness(fn)) {
            h.open();
            h.processElement(SourceLine.endOfFile("/in/a.json", 1), 0L);
            h.processElement(SourceLine.endOfFile("/in/a.json", 1), 0L);
            h.processElement(SourceLine.endOfFile("/in/z.json", 1), 0L);
            assertThat(fn.runCompleted()).isEqualTo(2);
        }
    }
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.ProcessOperator;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FileProgressFunction}'s gauge of the run's completed files: restored files count, a file
 * read again after a restore counts once, files outside the run do not count.
 */
class FileProgressFunctionTest {
    private static final List<String> RUN = List.of("/in/a.json", "/in/b.json", "/in/c.json");

    private static OneInputStreamOperatorTestHarness<SourceLine, SourceLine> harness(
            FileProgressFunction fn) throws Exception {
        return new OneInputStreamOperatorTestHarness<>(new ProcessOperator<>(fn));
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

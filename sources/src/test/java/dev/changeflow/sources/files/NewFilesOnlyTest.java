package dev.changeflow.sources.files;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.CommonTestUtils;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ChangeFiles#newFilesOnly} on a MiniCluster (docs/semantics.md S2, {@code
 * includeExistingFiles => false}): the files present at the first start are never read, files added
 * afterwards are.
 */
class NewFilesOnlyTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    /**
     * Pause between two new files in the first test: twice the monitor interval, so the enumerator
     * lists in between, without waiting a second per file.
     */
    private static final Duration NEW_FILE_PACE = Duration.ofMillis(200);

    @TempDir java.nio.file.Path dir;

    /** Lines of the source until the end-of-file marker of {@code last}. */
    private static List<SourceLine> readUntil(CloseableIterator<SourceLine> it, String last) {
        List<SourceLine> out = new ArrayList<>();
        while (it.hasNext()) {
            SourceLine l = it.next();
            out.add(l);
            if (l.endOfFile && l.source.equals(last)) {
                break;
            }
        }
        return out;
    }

    private static String uri(java.nio.file.Path p) {
        return new Path(p.toUri()).toString();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyFileFoundAtTheFirstStartIsSkippedAndALaterFileIsRead(
            @InjectMiniCluster MiniCluster miniCluster) throws Exception {
        java.nio.file.Path in = Files.createDirectories(dir.resolve("in"));
        Files.write(in.resolve("a.jsonl"), utf8("{\"a\":1}\n{\"a\":2}\n"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        CloseableIterator<SourceLine> it =
                env.fromSource(
                                ChangeFiles.newFilesOnly(
                                        List.of(in), Duration.ofMillis(100), 1 << 20, null),
                                WatermarkStrategy.noWatermarks(),
                                "change-files")
                        .collectAsync();
        JobClient job = env.executeAsync("new files only");
        try {
            CommonTestUtils.waitForAllTaskRunning(miniCluster, job.getJobID(), false);
            // a file written before the enumerator's first listing is skipped like a.jsonl: write
            // b-1, b-2, ... every NEW_FILE_PACE until one is read; the first line read must be one
            // of them (never a.jsonl's), followed by exactly that file's line and end-of-file
            // marker
            CountDownLatch read = new CountDownLatch(1);
            Thread writer =
                    new Thread(
                            () -> {
                                // at most 5 minutes of new files; the next one is written when
                                // NEW_FILE_PACE passed without a line read
                                try {
                                    for (int k = 1; k <= 1500; k++) {
                                        Files.write(
                                                in.resolve("b-" + k + ".jsonl"),
                                                utf8("{\"b\":1}\n"));
                                        if (read.await(
                                                NEW_FILE_PACE.toMillis(), TimeUnit.MILLISECONDS)) {
                                            return;
                                        }
                                    }
                                } catch (Exception e) {
                                    // the test fails on its own assertions
                                }
                            });
            writer.start();
            SourceLine first = it.next();
            read.countDown();
            writer.join();
            assertThat(first.source).matches(".*/b-[0-9]+\\.jsonl");
            List<SourceLine> lines = new ArrayList<>(List.of(first));
            lines.addAll(readUntil(it, first.source));
            assertThat(lines)
                    .containsExactly(
                            SourceLine.data(first.source, 1, utf8("{\"b\":1}")),
                            SourceLine.endOfFile(first.source, 1));
        } finally {
            job.cancel().get();
            it.close();
        }
    }

    @Test
    void aGivenListSkipsExactlyThoseFiles() throws Exception {
        java.nio.file.Path in = Files.createDirectories(dir.resolve("in"));
        java.nio.file.Path a = in.resolve("a.jsonl");
        java.nio.file.Path c = in.resolve("c.jsonl");
        Files.write(a, utf8("{\"a\":1}\n"));
        Files.write(c, utf8("{\"c\":1}\n"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        CloseableIterator<SourceLine> it =
                env.fromSource(
                                ChangeFiles.newFilesOnly(
                                        List.of(in),
                                        Duration.ofMillis(100),
                                        1 << 20,
                                        List.of(a.toAbsolutePath().toString())),
                                WatermarkStrategy.noWatermarks(),
                                "change-files")
                        .collectAsync();
        JobClient job = env.executeAsync("given list");
        try {
            // c was there too, but not in the list: a launcher listed before it arrived
            assertThat(readUntil(it, uri(c)))
                    .containsExactly(
                            SourceLine.data(uri(c), 1, utf8("{\"c\":1}")),
                            SourceLine.endOfFile(uri(c), 1));
        } finally {
            job.cancel().get();
            it.close();
        }
    }

    @Test
    void aBoundedSourceIsRefused() {
        assertThatThrownBy(() -> ChangeFiles.newFilesOnly(List.of(dir), null, 1 << 20, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "skipping the existing files needs a monitor interval (a bounded source"
                                + " would read nothing)");
    }
}

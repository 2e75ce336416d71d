package dev.changeflow.sources.files;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ChangeFiles#source} on a MiniCluster: a damaged gzip never fails the job (A5
 * TRUNCATED_FILE).
 */
class ChangeFilesTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir java.nio.file.Path dir;

    private static List<SourceLine> run(List<Path> paths, int parallelism) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        List<SourceLine> out = new ArrayList<>();
        try (CloseableIterator<SourceLine> it =
                env.fromSource(
                                ChangeFiles.forFlinkPaths(paths, null, 1 << 20),
                                WatermarkStrategy.noWatermarks(),
                                "change-files")
                        .executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    @Test
    void damagedGzipYieldsTheLinesBeforeTheDamageThenOneDamageMarkerThenEndOfFile()
            throws Exception {
        GzipFixtures.Damaged d = GzipFixtures.damaged(dir.resolve("capture.jsonl.gz"), 5000);
        Path path = new Path(d.file.toUri());
        List<SourceLine> lines = run(List.of(path), 1);
        assertThat(lines).containsExactlyElementsOf(d.expected(path.toString()));
        assertThat(lines.get(lines.size() - 2).getDamage())
                .startsWith(
                        "compressed stream damaged after line "
                                + d.intactLines.size()
                                + ": java.io.EOFException: Unexpected end of ZLIB input stream");
    }

    @Test
    void boundedWithoutMonitorIntervalContinuousWithIt() {
        List<java.nio.file.Path> paths = List.of(dir);
        assertThat(ChangeFiles.source(paths, null).getBoundedness()).isEqualTo(Boundedness.BOUNDED);
        assertThat(ChangeFiles.source(paths, Duration.ofSeconds(5)).getBoundedness())
                .isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
    }

    @Test
    void readsADirectoryOfPlainAndGzipFilesSkippingHiddenOnes() throws Exception {
        java.nio.file.Path sub = Files.createDirectories(dir.resolve("in/sub"));
        Files.write(
                dir.resolve("in/a.jsonl"),
                "{\"a\":1}\r\n{\"a\":2}".getBytes(StandardCharsets.UTF_8));
        try (var os = new GZIPOutputStream(Files.newOutputStream(sub.resolve("b.jsonl.gz")))) {
            os.write("{\"b\":1}\n".getBytes(StandardCharsets.UTF_8));
        }
        Files.write(dir.resolve("in/.hidden"), "x\n".getBytes(StandardCharsets.UTF_8));
        Files.write(dir.resolve("in/_tmp"), "x\n".getBytes(StandardCharsets.UTF_8));
        List<SourceLine> lines = run(List.of(new Path(dir.resolve("in").toUri())), 2);
        String a = new Path(dir.resolve("in/a.jsonl").toUri()).toString();
        String b = new Path(sub.resolve("b.jsonl.gz").toUri()).toString();
        lines.sort(Comparator.comparing(SourceLine::getSource).thenComparing(SourceLine::getLine));
        assertThat(lines)
                .containsExactly(
                        SourceLine.data(a, 1, "{\"a\":1}".getBytes(StandardCharsets.UTF_8)),
                        SourceLine.data(a, 2, "{\"a\":2}".getBytes(StandardCharsets.UTF_8)),
                        SourceLine.endOfFile(a, 2),
                        SourceLine.data(b, 1, "{\"b\":1}".getBytes(StandardCharsets.UTF_8)),
                        SourceLine.endOfFile(b, 1));
    }
}

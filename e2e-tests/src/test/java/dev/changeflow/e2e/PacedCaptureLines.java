package dev.changeflow.e2e;

import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;

/**
 * A test stream of a capture file's lines in batches, one batch per completed checkpoint: batch i+1
 * is emitted only after a checkpoint taken after batch i has completed (batch 0 at once), so the
 * lines of every batch are exactly the content of one checkpoint and — for each table they change —
 * of one Iceberg version (Iceberg's {@code FlinkSink} commits each checkpoint as its own snapshot
 * in {@code notifyCheckpointComplete}, which reaches the committer before the barrier of the next
 * checkpoint). No sleeps: the reader is unavailable until the releasing checkpoint's completion
 * notification arrives. Parallelism 1; the file is read by the expanding function, so the job graph
 * carries only the batch bounds.
 */
final class PacedCaptureLines {
    private PacedCaptureLines() {}

    /**
     * @param bounds line indexes (0-based) where batches start, ascending, with the number of lines
     *     as the last element: batch i holds lines {@code [bounds[i], bounds[i+1])}
     * @param keep which lines (as text) of a batch are emitted
     */
    static DataStream<SourceLine> stream(
            StreamExecutionEnvironment env, Path gzFile, int[] bounds, SerializablePredicate keep) {
        return stream(env, gzFile, bounds, keep, -1, null);
    }

    /**
     * As {@link #stream(StreamExecutionEnvironment, Path, int[], SerializablePredicate)}, holding
     * batch {@code holdAt} back until {@code OneBatchPerCheckpointSource.release(holdName)}.
     */
    static DataStream<SourceLine> stream(
            StreamExecutionEnvironment env,
            Path gzFile,
            int[] bounds,
            SerializablePredicate keep,
            int holdAt,
            String holdName) {
        return env.fromSource(
                        new OneBatchPerCheckpointSource(bounds.length - 1, holdAt, holdName),
                        WatermarkStrategy.noWatermarks(),
                        "paced batches")
                .uid("paced-batches")
                .setParallelism(1)
                .flatMap(
                        new ExpandBatch(gzFile.toString(), bounds.clone(), keep),
                        TypeInformation.of(SourceLine.class))
                .uid("paced-lines")
                .name("paced capture lines")
                .setParallelism(1);
    }

    /** A serializable line filter. */
    interface SerializablePredicate extends Predicate<String>, Serializable {}

    private static final class ExpandBatch extends RichFlatMapFunction<Long, SourceLine> {
        private static final long serialVersionUID = 1L;
        private final String file;
        private final int[] bounds;
        private final SerializablePredicate keep;
        private transient List<String> lines;

        ExpandBatch(String file, int[] bounds, SerializablePredicate keep) {
            this.file = file;
            this.bounds = bounds;
            this.keep = keep;
        }

        @Override
        public void open(OpenContext context) throws Exception {
            lines = SharedData.readLines(Path.of(file));
            if (lines.size() != bounds[bounds.length - 1]) {
                throw new IllegalStateException(
                        file
                                + " has "
                                + lines.size()
                                + " lines, the batches cover "
                                + bounds[bounds.length - 1]);
            }
        }

        @Override
        public void flatMap(Long batch, Collector<SourceLine> out) {
            int b = batch.intValue();
            for (int i = bounds[b]; i < bounds[b + 1]; i++) {
                String line = lines.get(i);
                if (keep.test(line)) {
                    out.collect(
                            SourceLine.data(file, i + 1, line.getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
    }
}

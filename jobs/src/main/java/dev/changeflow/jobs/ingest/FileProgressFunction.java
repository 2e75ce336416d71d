package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Passes lines through and remembers, in checkpointed operator state, which input files have been
 * read completely (their end-of-file marker passed). At every checkpoint it also writes that list
 * to {@code <doneDir>/<checkpointId>.txt}, so a local launcher that restores checkpoint N knows
 * exactly which files N already contains — also after a crash, without reading Flink's state.
 * Counter {@code inputFilesCompleted} counts files completed by this run. Runs at parallelism 1.
 */
final class FileProgressFunction extends ProcessFunction<SourceLine, SourceLine> implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    static final String METRIC = "inputFilesCompleted";

    @Nullable private final String doneDir;
    private transient TreeSet<String> completed;
    private transient ListState<String> state;
    private transient Counter counter;

    FileProgressFunction(@Nullable Path doneDir) {
        this.doneDir = doneDir == null ? null : doneDir.toAbsolutePath().toString();
    }

    @Override
    public void open(OpenContext ctx) {
        counter = getRuntimeContext().getMetricGroup().counter(METRIC);
    }

    @Override
    public void processElement(SourceLine line, Context ctx, Collector<SourceLine> out) {
        if (line.endOfFile) {
            completed.add(normalize(line.source));
            counter.inc();
        }
        out.collect(line);
    }

    /** File sources name files as URIs or paths; the launcher compares plain absolute paths. */
    static String normalize(String source) {
        String s = source.startsWith("file:") ? java.net.URI.create(source).getPath() : source;
        return Path.of(s).toAbsolutePath().normalize().toString();
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        state.update(new ArrayList<>(completed));
        if (doneDir != null) {
            Path dir = Path.of(doneDir);
            Files.createDirectories(dir);
            Path tmp = dir.resolve(ctx.getCheckpointId() + ".txt.tmp");
            Files.write(tmp, completed);
            Files.move(tmp, dir.resolve(ctx.getCheckpointId() + ".txt"), java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        state = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("completed-files", Types.STRING));
        completed = new TreeSet<>();
        for (String s : state.get()) {
            completed.add(s);
        }
    }

    /** The files recorded for checkpoint {@code checkpointId}, or empty when none was written. */
    static List<String> doneAt(Path doneDir, long checkpointId) throws IOException {
        Path f = doneDir.resolve(checkpointId + ".txt");
        return Files.exists(f) ? Files.readAllLines(f) : List.of();
    }
}

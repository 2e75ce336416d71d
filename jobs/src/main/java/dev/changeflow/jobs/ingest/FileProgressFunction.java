package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Passes lines through and remembers, in checkpointed operator state, which input files have been
 * read completely (their end-of-file marker passed). At every checkpoint and savepoint it also
 * writes that list to {@code <doneDir>/<jobId>/<checkpointId>.txt} (one path per line; with {@code
 * file-readers} above 1 each subtask writes its share of the list, the files it completed plus
 * those the restore gave it, subtask i &gt; 0 to {@code <checkpointId>-<i>.txt} beside it), before
 * it acknowledges the checkpoint: a checkpoint whose {@code _metadata} exists therefore has the
 * lists of all its subtasks, and a local launcher that restores it knows exactly which files it
 * contains — the union of those lists — also after a {@code kill -9}, without reading Flink's state
 * ({@link #doneAt}). The job id is part of the name because a resumed job counts checkpoint ids on
 * from the one it restored: ids repeat across jobs, and a list of another job's checkpoint N says
 * nothing about this one's (within one job an id is never taken twice, so a list left by a
 * checkpoint that failed is never read as another's).
 *
 * <p>A file in the list has all its records before the checkpoint's barrier, so they are in that
 * checkpoint's state; they are in a <em>committed</em> Iceberg snapshot only once the checkpoint's
 * commit happened, which the launcher makes sure of by restoring it (Iceberg's committer commits
 * what a restored checkpoint holds) rather than trusting the list alone.
 *
 * <p>Gauge {@code inputFilesCompleted}: how many of the run's files (given by a local launcher) the
 * completed list holds — restored ones included, each counted once, so after a failover a file read
 * again after the restored checkpoint does not count twice and the launcher never stops the job
 * before the restored attempt has read everything (with {@link LocalMetrics}, which keeps only the
 * newest attempt's gauge); without run files, the size of the completed list. Runs chained to each
 * file reader; the completed list is split among the subtasks on restore (each file in exactly one
 * subtask's state), so the gauge is meaningful summed over the subtasks of one attempt ({@link
 * LocalMetrics#sumOfOneAttempt}).
 */
final class FileProgressFunction extends ProcessFunction<SourceLine, SourceLine>
        implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    static final String METRIC = "inputFilesCompleted";

    @Nullable private final String doneDir;
    @Nullable private final HashSet<String> runFiles;
    private transient TreeSet<String> completed;
    private transient ListState<String> state;
    private transient volatile int runCompleted;

    /**
     * @param doneDir where the per-checkpoint lists go, on any Flink file system: a local folder,
     *     or an object store ({@code s3://...}), where each list is one object; null: no lists
     * @param runFiles the files of this run (for gauge {@value #METRIC}); null: count every
     *     completed file
     */
    FileProgressFunction(
            @Nullable org.apache.flink.core.fs.Path doneDir,
            @Nullable Collection<String> runFiles) {
        this.runFiles = runFiles == null ? null : new HashSet<>(runFiles);
        this.doneDir =
                doneDir == null
                        ? null
                        : StateFiles.isLocal(doneDir)
                                ? StateFiles.local(doneDir).toString()
                                : doneDir.toString();
    }

    @Override
    public void open(OpenContext ctx) {
        getRuntimeContext().getMetricGroup().gauge(METRIC, (Gauge<Integer>) () -> runCompleted);
    }

    @Override
    public void processElement(SourceLine line, Context ctx, Collector<SourceLine> out) {
        if (line.endOfFile) {
            String file = normalize(line.source);
            if (completed.add(file) && counts(file)) {
                runCompleted++;
            }
        }
        out.collect(line);
    }

    /** The value of gauge {@value #METRIC} (for tests). */
    int runCompleted() {
        return runCompleted;
    }

    private boolean counts(String file) {
        return runFiles == null || runFiles.contains(file);
    }

    /**
     * File sources name files as URIs or paths; the launcher compares plain absolute paths for
     * local files and URIs ({@code s3://bucket/key}) for files of other file systems ({@link
     * dev.changeflow.sources.files.FileGlob#key}).
     */
    static String normalize(String source) {
        if (source.startsWith("file:") || !source.contains("://")) {
            String s = source.startsWith("file:") ? URI.create(source).getPath() : source;
            return Path.of(s).toAbsolutePath().normalize().toString();
        }
        return dev.changeflow.sources.files.FileGlob.key(new org.apache.flink.core.fs.Path(source));
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        state.update(new ArrayList<>(completed));
        String name =
                listName(
                        ctx.getCheckpointId(),
                        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
        if (doneDir != null && doneDir.contains("://")) {
            org.apache.flink.core.fs.Path list =
                    new org.apache.flink.core.fs.Path(
                            new org.apache.flink.core.fs.Path(
                                    new org.apache.flink.core.fs.Path(doneDir),
                                    getRuntimeContext().getJobInfo().getJobId().toString()),
                            name);
            StateFiles.writeLines(list, completed);
        } else if (doneDir != null) {
            Path dir =
                    Path.of(doneDir)
                            .resolve(getRuntimeContext().getJobInfo().getJobId().toString());
            Files.createDirectories(dir);
            Path tmp = dir.resolve(name + ".tmp");
            Files.write(tmp, completed);
            Files.move(
                    tmp,
                    dir.resolve(name),
                    StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /** The name of a subtask's list: {@code N.txt} for subtask 0, {@code N-i.txt} for subtask i. */
    static String listName(long checkpointId, int subtask) {
        return subtask == 0 ? checkpointId + ".txt" : checkpointId + "-" + subtask + ".txt";
    }

    /**
     * Whether {@code name} is the list of a subtask of checkpoint {@code checkpointId} ({@link
     * #listName}).
     */
    static boolean isListOf(String name, long checkpointId) {
        String id = Long.toString(checkpointId);
        return name.equals(id + ".txt")
                || name.startsWith(id + "-")
                        && name.endsWith(".txt")
                        && SUBTASK.matcher(name.substring(id.length() + 1, name.length() - 4))
                                .matches();
    }

    private static final Pattern SUBTASK = Pattern.compile("[1-9][0-9]*");

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        state =
                ctx.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>("completed-files", Types.STRING));
        completed = new TreeSet<>();
        int count = 0;
        for (String s : state.get()) {
            if (completed.add(s) && counts(s)) {
                count++;
            }
        }
        runCompleted = count;
    }

    /**
     * The files recorded as read completely in a checkpoint or savepoint folder: {@code
     * checkpoints/<jobId>/chk-N} and {@code savepoints/<jobId>/savepoint-…} (the launcher's layout)
     * are looked up under {@code <doneDir>/<jobId>/}, a savepoint directly in {@code savepoints/}
     * (written by releases before job-id folders, after a clean stop that removed every other list)
     * under {@code <doneDir>/}; the files are the union of the lists {@code N.txt} and {@code
     * N-i.txt} there (one per reader subtask, {@link #listName}).
     *
     * @param checkpointId the id in the folder's {@code _metadata}
     * @return the absolute paths, or empty when no list was written (nothing was read completely)
     */
    static List<String> doneAt(Path doneDir, Path stateDir, long checkpointId) throws IOException {
        Set<String> done = new LinkedHashSet<>();
        for (Path f : lists(listFile(doneDir, stateDir, checkpointId), checkpointId)) {
            done.addAll(Files.readAllLines(f));
        }
        return new ArrayList<>(done);
    }

    /**
     * The lists of every subtask of a checkpoint that exist: {@code list} (subtask 0's, as {@link
     * #listFile} names it) and the {@code N-i.txt} beside it, sorted by name.
     */
    static List<Path> lists(Path list, long checkpointId) throws IOException {
        Path dir = list.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            return List.of();
        }
        try (java.util.stream.Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> isListOf(p.getFileName().toString(), checkpointId))
                    .sorted()
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    /** As {@link #lists(Path, long)}, on any Flink file system. */
    static List<org.apache.flink.core.fs.Path> lists(
            org.apache.flink.core.fs.Path list, long checkpointId) throws IOException {
        org.apache.flink.core.fs.Path dir = list.getParent();
        List<org.apache.flink.core.fs.Path> out = new ArrayList<>();
        if (dir == null || !StateFiles.exists(dir)) {
            return out;
        }
        for (org.apache.flink.core.fs.FileStatus st : StateFiles.list(dir)) {
            if (!st.isDir() && isListOf(st.getPath().getName(), checkpointId)) {
                out.add(st.getPath());
            }
        }
        out.sort(java.util.Comparator.comparing(org.apache.flink.core.fs.Path::getName));
        return out;
    }

    /** As {@link #doneAt(Path, Path, long)}, for folders on any Flink file system. */
    static List<String> doneAt(
            org.apache.flink.core.fs.Path doneDir,
            org.apache.flink.core.fs.Path stateDir,
            long checkpointId)
            throws IOException {
        if (StateFiles.isLocal(doneDir) && StateFiles.isLocal(stateDir)) {
            return doneAt(StateFiles.local(doneDir), StateFiles.local(stateDir), checkpointId);
        }
        Set<String> done = new LinkedHashSet<>();
        for (org.apache.flink.core.fs.Path f :
                lists(listFile(doneDir, stateDir, checkpointId), checkpointId)) {
            done.addAll(StateFiles.readLines(f));
        }
        return new ArrayList<>(done);
    }

    /** As {@link #listFile(Path, Path, long)}, for folders on any Flink file system. */
    static org.apache.flink.core.fs.Path listFile(
            org.apache.flink.core.fs.Path doneDir,
            org.apache.flink.core.fs.Path stateDir,
            long checkpointId) {
        org.apache.flink.core.fs.Path parent = stateDir.getParent();
        String name = parent == null ? "" : parent.getName();
        String job = JOB_ID.matcher(name).matches() ? name : null;
        return new org.apache.flink.core.fs.Path(
                job == null ? doneDir : new org.apache.flink.core.fs.Path(doneDir, job),
                checkpointId + ".txt");
    }

    /**
     * Where {@link #doneAt} looks for the list of a checkpoint or savepoint folder (subtask 0's;
     * the other subtasks' are beside it, {@link #lists}).
     */
    static Path listFile(Path doneDir, Path stateDir, long checkpointId) {
        String job = jobIdOf(stateDir);
        return (job == null ? doneDir : doneDir.resolve(job)).resolve(checkpointId + ".txt");
    }

    /**
     * The job id a state folder is filed under ({@code <jobId>/chk-N}), or null for the old
     * savepoint layout.
     */
    @Nullable
    static String jobIdOf(Path stateDir) {
        Path parent = stateDir.toAbsolutePath().normalize().getParent();
        String name = parent == null ? "" : parent.getFileName().toString();
        return JOB_ID.matcher(name).matches() ? name : null;
    }

    private static final Pattern JOB_ID = Pattern.compile("[0-9a-f]{32}");
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.files.FileGlob;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Files in a local run: each file read once, identified by its path (see the README). A run reads
 * the files under the inputs that no earlier run read completely (the lists in {@link
 * LocalCheckpoints#filesDone}), and ends when the job has read them all.
 *
 * <p>With {@code include-existing-files} false (docs/semantics.md S2), a run that starts without
 * saved state lists the files under the inputs, records them in the job state ({@link
 * LocalJobState#skippedFiles}) and starts the source with exactly those taken as read ({@link
 * IngestJob#build(StreamExecutionEnvironment, IngestPlan, CatalogSettings, List, Duration, Path,
 * boolean, List)}): that run reads nothing of them, and stops with a savepoint that says so; later
 * runs read only the files added since. The option counts only at such a start: a resumed run keeps
 * what its state says.
 */
final class LocalFileInput implements LocalInput {
    private final List<org.apache.flink.core.fs.Path> inputs;
    private final boolean includeExisting;
    private org.apache.flink.core.fs.Path filesDone;
    private boolean skipping;
    private List<String> skipped;
    private List<String> files;
    private List<String> fresh;
    private Map<String, String> seen;
    private Map<String, String> fingerprints;

    /** The file readers' parallelism ({@code file-readers}), set when the job is built. */
    private int readers = 1;

    LocalFileInput(List<org.apache.flink.core.fs.Path> inputs) {
        this(inputs, true);
    }

    /**
     * @param includeExisting false: a start without saved state takes the files present then as
     *     read without reading them
     */
    LocalFileInput(List<org.apache.flink.core.fs.Path> inputs, boolean includeExisting) {
        this.inputs = inputs;
        this.includeExisting = includeExisting;
    }

    @Override
    public boolean prepare(
            LocalCheckpoints checkpoints,
            Optional<org.apache.flink.core.fs.Path> restore,
            LocalJobState state,
            PrintStream out)
            throws IOException {
        filesDone = checkpoints.filesDone();
        Set<String> done = new LinkedHashSet<>();
        if (restore.isPresent()) {
            done.addAll(
                    FileProgressFunction.doneAt(
                            filesDone,
                            restore.get(),
                            LocalCheckpoints.checkpointId(restore.get())));
        }
        files = listFiles(inputs);
        skipping = restore.isEmpty() && !includeExisting;
        if (restore.isEmpty()) {
            // a first start: what it skips is decided now, and kept for the later runs
            skipped = skipping ? List.copyOf(files) : List.of();
            state.saveSkippedFiles(skipped);
        } else {
            skipped = state.skippedFiles();
        }
        done.addAll(skipped);
        seen = state.seenFiles();
        fingerprints = LocalJobState.fingerprints(files);
        LocalJobState.warnChanged(seen, fingerprints, out);
        fresh = files.stream().filter(f -> !done.contains(f)).collect(Collectors.toList());
        if (skipping) {
            out.println(
                    "include-existing-files is false: the "
                            + skipped.size()
                            + " file(s) under "
                            + display(inputs)
                            + " now are taken as read without reading them; files added later"
                            + " are read.");
            // run even with nothing fresh: the savepoint records the skipped files as processed
            return true;
        }
        if (fresh.isEmpty()) {
            if (restore.isPresent() && !state.committed(restore.get())) {
                // the files were read, but the run that read them was stopped before it
                // finished: the state may hold Iceberg files that were never committed;
                // restoring it commits them
                out.println(
                        "No new input file, but the last run was stopped before it finished: resuming its state"
                                + " to commit what it had read.");
                return true;
            }
            out.println(
                    files.isEmpty()
                            ? "Nothing to ingest: no input files under " + display(inputs) + "."
                            : "Nothing new to ingest: all "
                                    + files.size()
                                    + " input file(s) were read by an earlier run.");
            return false;
        }
        return true;
    }

    @Override
    public String describe() {
        return fresh.size() + " file(s)";
    }

    @Override
    public void build(StreamExecutionEnvironment env, IngestPlan plan, CatalogSettings catalog) {
        readers = plan.config.fileReaders;
        IngestJob.buildFiles(
                env,
                plan,
                catalog,
                inputs,
                Duration.ofMillis(500),
                filesDone,
                !skipping,
                skipping ? skipped : null,
                fresh);
    }

    @Override
    public boolean done() {
        // the gauges of the running attempt only, summed once every reader registered in it:
        // after a failover, files the failed attempt completed after the restored checkpoint are
        // read again and count once, and a sum over two attempts' gauges could end the run early
        return LocalMetrics.sumOfOneAttempt(FileProgressFunction.METRIC, readers).orElse(-1)
                >= fresh.size();
    }

    @Override
    public String progress() {
        return "files " + LocalMetrics.sum(FileProgressFunction.METRIC) + "/" + fresh.size();
    }

    @Override
    public void nothingToDo(LocalJobState state) throws IOException {
        state.saveSeenFiles(seen);
    }

    @Override
    public void finished(org.apache.flink.core.fs.Path savepoint, LocalJobState state)
            throws IOException {
        for (String f :
                FileProgressFunction.doneAt(
                        filesDone, savepoint, LocalCheckpoints.checkpointId(savepoint))) {
            if (fingerprints.containsKey(f) && !seen.containsKey(f) || fresh.contains(f)) {
                seen.put(f, fingerprints.get(f));
            }
        }
        seen.values().removeIf(Objects::isNull);
        state.saveSeenFiles(seen);
    }

    /**
     * Regular, visible files under the inputs (as Flink's FileSource enumerates them; a glob
     * pattern: the files under its base that match it, {@link FileGlob}), listed through Flink's
     * file systems, as {@link FileGlob#key} names them (a local file by its absolute path, another
     * by its URI), sorted.
     *
     * @throws IllegalArgumentException when an input (a pattern: its base) does not exist, or no
     *     file system serves its scheme
     */
    static List<String> listFiles(List<org.apache.flink.core.fs.Path> inputs) throws IOException {
        List<String> files = new ArrayList<>();
        for (org.apache.flink.core.fs.Path f : FileGlob.list(inputs)) {
            files.add(FileGlob.key(f));
        }
        return files;
    }

    /** The inputs as messages show them (local paths plain, other file systems' as URIs). */
    private static List<String> display(List<org.apache.flink.core.fs.Path> inputs) {
        List<String> out = new ArrayList<>();
        inputs.forEach(p -> out.add(FileGlob.key(p)));
        return out;
    }
}

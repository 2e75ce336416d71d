package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.local.LocalRunner;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;

import javax.annotation.Nullable;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The retained state of a local ingest job, in its checkpoint folder {@code <root>}: Flink's
 * retained checkpoints ({@code checkpoints/<job id>/chk-<n>}), savepoints ({@code savepoints/<job
 * id>/savepoint-...}), and per job id and checkpoint id the lists of input files read completely
 * (one per reader subtask; {@code files-done}, {@link FileProgressFunction}). Beside it, {@code
 * <root>.state} holds changeflow's own records ({@link LocalJobState}).
 *
 * <p>A run resumes from the newest checkpoint or savepoint ({@link #latest}); after a clean stop
 * only the new savepoint is kept ({@link #cleanUpOlderState}).
 *
 * <p>The folder is a local folder or an object-store location ({@code s3://bucket/prefix/<job>},
 * {@code run --state-dir}): Flink writes its checkpoints and savepoints there through its file
 * system of that scheme, and this class reads and deletes through the same file systems ({@link
 * StateFiles}). A local folder is handled exactly as before object stores were supported.
 */
final class LocalCheckpoints {
    /** Per job id and checkpoint id, the files read completely ({@link FileProgressFunction}). */
    static final String FILES_DONE = "files-done";

    /** Retained checkpoints of a local job (beside the newest savepoint). */
    static final int MAX_RETAINED_CHECKPOINTS = 2;

    private final org.apache.flink.core.fs.Path root;

    LocalCheckpoints(Path root) {
        this(StateFiles.of(root));
    }

    /** A checkpoint folder on any Flink file system (local or an object store). */
    LocalCheckpoints(org.apache.flink.core.fs.Path root) {
        this.root = root;
    }

    /** The checkpoint folder (absolute). */
    org.apache.flink.core.fs.Path root() {
        return root;
    }

    /** The checkpoint folder as messages show it (a local folder plain, else its URI). */
    String display() {
        return StateFiles.display(root);
    }

    /** Whether the folder is local (else on an object store, without a lock file). */
    boolean local() {
        return StateFiles.isLocal(root);
    }

    /** Where the job's lists of files read go ({@link FileProgressFunction}). */
    org.apache.flink.core.fs.Path filesDone() {
        return StateFiles.child(root, FILES_DONE);
    }

    /**
     * Where a stop with savepoint of job {@code jobId} files its savepoint: under the job id, as
     * its checkpoints are, so its list of files read is found ({@link FileProgressFunction}).
     *
     * @return the folder as a URI for {@link LocalRunner#stopWithSavepoint(
     *     org.apache.flink.core.execution.JobClient, String)}
     */
    String savepointDir(JobID jobId) {
        return StateFiles.uri(
                StateFiles.child(StateFiles.child(root, "savepoints"), jobId.toString()));
    }

    /**
     * Flink configuration of a local ingest job that keeps its state here: {@link
     * LocalRunner#configuration} plus savepoints under {@code savepoints}, the last {@value
     * #MAX_RETAINED_CHECKPOINTS} checkpoints retained when the job is cancelled or killed, and a
     * restore from {@code restore}.
     *
     * @param checkpointTimeout when a checkpoint not yet complete is declared failed
     * @param restore a checkpoint or savepoint folder, null to start without state
     */
    Configuration configuration(
            Duration checkpointInterval,
            Duration checkpointTimeout,
            @Nullable org.apache.flink.core.fs.Path restore) {
        Configuration conf =
                LocalRunner.configuration(
                        StateFiles.uri(StateFiles.child(root, "checkpoints")),
                        checkpointInterval,
                        checkpointTimeout);
        conf.set(
                CheckpointingOptions.SAVEPOINT_DIRECTORY,
                StateFiles.uri(StateFiles.child(root, "savepoints")));
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, MAX_RETAINED_CHECKPOINTS);
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, StateFiles.uri(restore));
        }
        return conf;
    }

    /** changeflow's records beside the checkpoints: {@code <root>.state}. */
    org.apache.flink.core.fs.Path jobStateRoot() {
        return new org.apache.flink.core.fs.Path(root.getParent(), root.getName() + ".state");
    }

    /**
     * Locks changeflow's records beside the checkpoints ({@code <root>.state}).
     *
     * @throws IllegalStateException when another run holds them ({@link LocalJobState#lock})
     */
    LocalJobState lockJobState(String job) throws IOException {
        return LocalJobState.lock(jobStateRoot(), job, "or give this run another --name");
    }

    /** As {@link #lockJobState(String)}, the error ending with {@code otherName}. */
    LocalJobState lockJobState(String job, String otherName) throws IOException {
        return LocalJobState.lock(jobStateRoot(), job, otherName);
    }

    /** The newest savepoint or retained checkpoint here. */
    Optional<org.apache.flink.core.fs.Path> latest() throws IOException {
        if (local()) {
            return latest(StateFiles.local(root)).map(StateFiles::of);
        }
        // an object store's modification times have a resolution of a second: among folders of
        // the same second the highest checkpoint id is the newest (ids count on across restores)
        List<FileStatus> all = StateFiles.find(root, "_metadata", 4);
        long newest = all.stream().mapToLong(FileStatus::getModificationTime).max().orElse(-1);
        org.apache.flink.core.fs.Path best = null;
        long bestId = Long.MIN_VALUE;
        for (FileStatus st : all) {
            if (st.getModificationTime() != newest) {
                continue;
            }
            org.apache.flink.core.fs.Path dir = st.getPath().getParent();
            long id = checkpointId(dir);
            if (best == null || id > bestId) {
                best = dir;
                bestId = id;
            }
        }
        return Optional.ofNullable(best);
    }

    /** Deletes every checkpoint, savepoint and list of files read (with --from-scratch). */
    void delete() throws IOException {
        StateFiles.deleteRecursively(root);
    }

    /**
     * After a clean stop only the new savepoint is needed: removes retained checkpoints, older
     * savepoints and their file lists (a canonical savepoint is self-contained).
     */
    void cleanUpOlderState(org.apache.flink.core.fs.Path savepoint) throws IOException {
        if (local()) {
            Path keep = StateFiles.local(savepoint).normalize();
            Path keepList =
                    FileProgressFunction.listFile(
                                    StateFiles.local(filesDone()), keep, checkpointId(keep))
                            .toAbsolutePath()
                            .normalize();
            Path r = StateFiles.local(root);
            LocalRunner.deleteRecursively(r.resolve("checkpoints"));
            deleteAllBut(r.resolve("savepoints"), List.of(keep));
            List<Path> keepLists = new ArrayList<>();
            for (Path p : FileProgressFunction.lists(keepList, checkpointId(keep))) {
                keepLists.add(p.toAbsolutePath().normalize());
            }
            deleteAllBut(StateFiles.local(filesDone()), keepLists);
            return;
        }
        long id = checkpointId(savepoint);
        org.apache.flink.core.fs.Path keepList =
                FileProgressFunction.listFile(filesDone(), savepoint, id);
        StateFiles.deleteRecursively(StateFiles.child(root, "checkpoints"));
        deleteAllBut(StateFiles.child(root, "savepoints"), List.of(savepoint));
        deleteAllBut(filesDone(), FileProgressFunction.lists(keepList, id));
    }

    /**
     * The newest savepoint or retained checkpoint (a folder with {@code _metadata}) under {@code
     * root}, by the modification time of its {@code _metadata}.
     *
     * @return empty when there is none, or no folder {@code root}
     */
    static Optional<Path> latest(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> s = Files.walk(root, 4)) {
            return s.filter(p -> p.getFileName().toString().equals("_metadata"))
                    .max(Comparator.comparingLong(LocalCheckpoints::mtime))
                    .map(Path::getParent);
        }
    }

    private static long mtime(Path p) {
        try {
            return Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Bytes of state per operator uid in a savepoint or checkpoint (Flink's own accounting of the
     * snapshot: for a canonical savepoint the full serialized keyed state).
     */
    static Map<String, Long> stateSizes(Path stateDir) throws IOException {
        return stateSizes(StateFiles.of(stateDir));
    }

    /** As {@link #stateSizes(Path)}, for a folder on any Flink file system. */
    static Map<String, Long> stateSizes(org.apache.flink.core.fs.Path stateDir) throws IOException {
        Map<String, Long> sizes = new TreeMap<>();
        for (OperatorState op : metadata(stateDir).getOperatorStates()) {
            op.getOperatorUid().ifPresent(uid -> sizes.merge(uid, op.getStateSize(), Long::sum));
        }
        return sizes;
    }

    /**
     * The parallelism the operator of this uid ran at when the savepoint or checkpoint was taken
     * (read from its {@code _metadata}), or empty when the folder holds no such operator.
     */
    static java.util.OptionalInt parallelism(org.apache.flink.core.fs.Path stateDir, String uid)
            throws IOException {
        for (OperatorState op : metadata(stateDir).getOperatorStates()) {
            if (op.getOperatorUid().filter(uid::equals).isPresent()) {
                return java.util.OptionalInt.of(op.getParallelism());
            }
        }
        return java.util.OptionalInt.empty();
    }

    /** The checkpoint id of a savepoint or checkpoint folder (read from its {@code _metadata}). */
    static long checkpointId(Path stateDir) throws IOException {
        return checkpointId(StateFiles.of(stateDir));
    }

    /** As {@link #checkpointId(Path)}, for a folder on any Flink file system. */
    static long checkpointId(org.apache.flink.core.fs.Path stateDir) throws IOException {
        return metadata(stateDir).getCheckpointId();
    }

    private static CheckpointMetadata metadata(org.apache.flink.core.fs.Path stateDir)
            throws IOException {
        try (DataInputStream in =
                new DataInputStream(StateFiles.open(StateFiles.child(stateDir, "_metadata")))) {
            return Checkpoints.loadCheckpointMetadata(
                    in, LocalCheckpoints.class.getClassLoader(), StateFiles.uri(stateDir));
        }
    }

    /**
     * Deletes everything under {@code root} except {@code keep} and the folders that lead to it.
     */
    private static void deleteAllBut(Path root, List<Path> keep) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> s = Files.list(root)) {
            for (Path p : s.collect(Collectors.toList())) {
                Path abs = p.toAbsolutePath().normalize();
                if (keep.contains(abs)) {
                    continue;
                }
                if (keep.stream().anyMatch(k -> k.startsWith(abs)) && Files.isDirectory(abs)) {
                    deleteAllBut(abs, keep);
                } else {
                    LocalRunner.deleteRecursively(abs);
                }
            }
        }
    }

    /** As {@link #deleteAllBut(Path, List)}, on an object store (paths compared by their keys). */
    private static void deleteAllBut(
            org.apache.flink.core.fs.Path root, List<org.apache.flink.core.fs.Path> keep)
            throws IOException {
        List<String> keepKeys = new ArrayList<>();
        keep.forEach(p -> keepKeys.add(key(p)));
        List<FileStatus> entries = new ArrayList<>(StateFiles.list(root));
        for (FileStatus st : entries) {
            String k = key(st.getPath());
            if (keepKeys.contains(k)) {
                continue;
            }
            if (st.isDir() && keepKeys.stream().anyMatch(kk -> kk.startsWith(k + "/"))) {
                deleteAllBut(st.getPath(), keep);
            } else {
                StateFiles.deleteRecursively(st.getPath());
            }
        }
    }

    /** An object-store path without scheme and bucket variations: its path, no trailing slash. */
    private static String key(org.apache.flink.core.fs.Path p) {
        String s = p.toUri().getPath();
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }
}

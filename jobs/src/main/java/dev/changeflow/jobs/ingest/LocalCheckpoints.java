package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.local.LocalRunner;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;
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
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The retained state of a local ingest job, in its checkpoint folder {@code <root>}: Flink's
 * retained checkpoints ({@code checkpoints/<job id>/chk-<n>}), savepoints ({@code savepoints/<job
 * id>/savepoint-...}), and per job id and checkpoint id the list of input files read completely
 * ({@code files-done}, {@link FileProgressFunction}). Beside it, {@code <root>.state} holds
 * changeflow's own records ({@link LocalJobState}).
 *
 * <p>A run resumes from the newest checkpoint or savepoint ({@link #latest}); after a clean stop
 * only the new savepoint is kept ({@link #cleanUpOlderState}).
 */
final class LocalCheckpoints {
    /** Per job id and checkpoint id, the files read completely ({@link FileProgressFunction}). */
    static final String FILES_DONE = "files-done";

    /** Retained checkpoints of a local job (beside the newest savepoint). */
    static final int MAX_RETAINED_CHECKPOINTS = 2;

    private final Path root;

    LocalCheckpoints(Path root) {
        this.root = root;
    }

    /** The checkpoint folder, absolute. */
    Path root() {
        return root;
    }

    /** Where the job's lists of files read go ({@link FileProgressFunction}). */
    Path filesDone() {
        return root.resolve(FILES_DONE);
    }

    /**
     * Where a stop with savepoint of job {@code jobId} files its savepoint: under the job id, as
     * its checkpoints are, so its list of files read is found ({@link FileProgressFunction}).
     */
    Path savepointDir(JobID jobId) {
        return root.resolve("savepoints").resolve(jobId.toString());
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
            Duration checkpointInterval, Duration checkpointTimeout, @Nullable Path restore) {
        Configuration conf =
                LocalRunner.configuration(
                        root.resolve("checkpoints"), checkpointInterval, checkpointTimeout);
        conf.set(
                CheckpointingOptions.SAVEPOINT_DIRECTORY,
                root.resolve("savepoints").toUri().toString());
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, MAX_RETAINED_CHECKPOINTS);
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore.toUri().toString());
        }
        return conf;
    }

    /**
     * Locks changeflow's records beside the checkpoints ({@code <root>.state}).
     *
     * @throws IllegalStateException when another run holds them ({@link LocalJobState#lock})
     */
    LocalJobState lockJobState(String job) throws IOException {
        return LocalJobState.lock(root.resolveSibling(root.getFileName() + ".state"), job);
    }

    /** As {@link #lockJobState(String)}, the error ending with {@code otherName}. */
    LocalJobState lockJobState(String job, String otherName) throws IOException {
        return LocalJobState.lock(
                root.resolveSibling(root.getFileName() + ".state"), job, otherName);
    }

    /** The newest savepoint or retained checkpoint here. */
    Optional<Path> latest() throws IOException {
        return latest(root);
    }

    /** Deletes every checkpoint, savepoint and list of files read (with --from-scratch). */
    void delete() throws IOException {
        LocalRunner.deleteRecursively(root);
    }

    /**
     * After a clean stop only the new savepoint is needed: removes retained checkpoints, older
     * savepoints and their file lists (a canonical savepoint is self-contained).
     */
    void cleanUpOlderState(Path savepoint) throws IOException {
        Path keep = savepoint.toAbsolutePath().normalize();
        Path keepList =
                FileProgressFunction.listFile(filesDone(), keep, checkpointId(keep))
                        .toAbsolutePath()
                        .normalize();
        LocalRunner.deleteRecursively(root.resolve("checkpoints"));
        deleteAllBut(root.resolve("savepoints"), keep);
        deleteAllBut(filesDone(), keepList);
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
        Map<String, Long> sizes = new TreeMap<>();
        for (OperatorState op : metadata(stateDir).getOperatorStates()) {
            op.getOperatorUid().ifPresent(uid -> sizes.merge(uid, op.getStateSize(), Long::sum));
        }
        return sizes;
    }

    /** The checkpoint id of a savepoint or checkpoint folder (read from its {@code _metadata}). */
    static long checkpointId(Path stateDir) throws IOException {
        return metadata(stateDir).getCheckpointId();
    }

    private static CheckpointMetadata metadata(Path stateDir) throws IOException {
        try (DataInputStream in =
                new DataInputStream(Files.newInputStream(stateDir.resolve("_metadata")))) {
            return Checkpoints.loadCheckpointMetadata(
                    in, LocalCheckpoints.class.getClassLoader(), stateDir.toUri().toString());
        }
    }

    /**
     * Deletes everything under {@code root} except {@code keep} and the folders that lead to it.
     */
    private static void deleteAllBut(Path root, Path keep) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> s = Files.list(root)) {
            for (Path p : s.collect(Collectors.toList())) {
                Path abs = p.toAbsolutePath().normalize();
                if (abs.equals(keep)) {
                    continue;
                }
                if (keep.startsWith(abs) && Files.isDirectory(abs)) {
                    deleteAllBut(abs, keep);
                } else {
                    LocalRunner.deleteRecursively(abs);
                }
            }
        }
    }
}

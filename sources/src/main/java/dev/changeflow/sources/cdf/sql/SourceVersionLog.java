package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.stream.enumerator.CheckpointVersionListener;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Which Silver version each changelog read (G1) had completely emitted at each checkpoint of a Gold
 * job, kept where the Gold sinks' committers can read it (G2: "every Gold commit carries the Silver
 * version up to which it is complete").
 *
 * <p><b>Why a log.</b> Iceberg's Flink sink (1.11) stamps each commit with the checkpoint id whose
 * data it holds ({@code flink.max-committed-checkpoint-id}) and otherwise only with fixed snapshot
 * properties. The version a read reached is known to its enumerator when it is checkpointed ({@link
 * CheckpointVersionListener}), which happens before the checkpoint completes, hence before any
 * committer commits that checkpoint. So each read writes, per checkpoint {@code c}, the file {@code
 * <dir>/<db.table>@<read id>/<c>} holding its completed version, and {@link SourceVersionStamping}
 * adds {@code changeflow.source-version.<db.table>} to a Gold commit of checkpoint {@code c} from
 * the files of {@code c} ({@link #versionsAt}) of the Silver tables the Gold table's own INSERT
 * reads (issue #16: not every read of the job). A table read twice (a self-join, or two INSERTs
 * reading it with different options) gets the smaller of its reads' versions. A read that wrote
 * nothing for {@code c} (its initial snapshot not yet emitted) adds nothing, so the commit claims
 * nothing for it.
 *
 * <p>The directory is a Flink file system path (local or any Flink file system); a Gold job uses
 * {@code <checkpoint root>/source-versions}. Each read keeps the files of its last {@value #KEEP}
 * checkpoints (a committer commits the pending checkpoints up to the one completed, so it needs the
 * last few); an older, missing entry only leaves the commit without the property. A bounded read
 * also records its bound under {@link #END_OF_INPUT} once it has emitted everything, for the commit
 * the committers make when their input ends.
 */
@PublicEvolving
public final class SourceVersionLog implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * Summary property prefix: {@code changeflow.source-version.<db.table>} = the Silver version of
     * {@code db.table} up to which the Gold commit is complete (G2).
     */
    public static final String SOURCE_VERSION_PREFIX = "changeflow.source-version.";

    /**
     * The checkpoint id of the commit Iceberg's Flink committers make at the end of a bounded job's
     * input ({@code IcebergStreamWriter.END_INPUT_CHECKPOINT_ID}): a bounded read records its bound
     * under it once every change up to the bound was emitted.
     */
    public static final long END_OF_INPUT = Long.MAX_VALUE;

    /** Checkpoints whose entries each read keeps. */
    public static final int KEEP = 100;

    private final String dir;

    /** A log in directory {@code dir} (a Flink file system URI or local path). */
    public SourceVersionLog(String dir) {
        this.dir = dir;
    }

    /** The log's directory. */
    public String dir() {
        return dir;
    }

    /**
     * The listener of one read of {@code table} ({@code db.t}): a new read id, so each read of the
     * same table writes its own entries.
     */
    public CheckpointVersionListener listener(String table) {
        return new ReadListener(dir, table + "@" + UUID.randomUUID());
    }

    /**
     * The versions recorded for checkpoint {@code checkpointId}: per table, the smallest over its
     * reads that recorded one.
     *
     * @return table ({@code db.t}) → version, sorted; empty when none recorded
     */
    public Map<String, Long> versionsAt(long checkpointId) {
        return versionsAt(checkpointId, null);
    }

    /**
     * As {@link #versionsAt(long)}, for the Silver tables {@code tables} only (the tables a Gold
     * table's own INSERT reads, {@link SourceVersionStamping}); null: every table.
     */
    public Map<String, Long> versionsAt(long checkpointId, @Nullable Set<String> tables) {
        Map<String, Long> versions = new TreeMap<>();
        try {
            Path root = new Path(dir);
            FileSystem fs = root.getFileSystem();
            if (!fs.exists(root)) {
                return versions;
            }
            FileStatus[] reads = fs.listStatus(root);
            if (reads == null) {
                return versions;
            }
            for (FileStatus read : reads) {
                Path entry = new Path(read.getPath(), Long.toString(checkpointId));
                if (!read.isDir() || !fs.exists(entry)) {
                    continue;
                }
                String name = read.getPath().getName();
                String table = name.substring(0, name.lastIndexOf('@'));
                if (tables != null && !tables.contains(table)) {
                    continue;
                }
                long v;
                try (FSDataInputStream in = fs.open(entry)) {
                    v =
                            Long.parseLong(
                                    new String(in.readAllBytes(), StandardCharsets.UTF_8).trim());
                }
                versions.merge(table, v, Math::min);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Reading the source version log " + dir, e);
        }
        return versions;
    }

    /** Writes one read's entry for a checkpoint (to a temporary name, then renamed). */
    static void write(String dir, String read, long checkpointId, long version) {
        try {
            Path readDir = new Path(dir, read);
            FileSystem fs = readDir.getFileSystem();
            fs.mkdirs(readDir);
            Path tmp = new Path(readDir, "." + checkpointId + ".tmp");
            try (FSDataOutputStream out = fs.create(tmp, FileSystem.WriteMode.OVERWRITE)) {
                out.write(Long.toString(version).getBytes(StandardCharsets.UTF_8));
            }
            Path entry = new Path(readDir, Long.toString(checkpointId));
            fs.delete(entry, false);
            if (!fs.rename(tmp, entry)) {
                throw new IOException("could not rename " + tmp + " to " + entry);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Writing the source version log " + dir, e);
        }
    }

    /** Deletes one read's entries of checkpoints before {@code checkpointId - KEEP}. */
    static void discardOld(String dir, String read, long checkpointId) {
        try {
            Path readDir = new Path(dir, read);
            FileSystem fs = readDir.getFileSystem();
            FileStatus[] entries = fs.exists(readDir) ? fs.listStatus(readDir) : null;
            if (entries == null) {
                return;
            }
            for (FileStatus e : entries) {
                String name = e.getPath().getName();
                if (name.matches("\\d+") && Long.parseLong(name) < checkpointId - KEEP) {
                    fs.delete(e.getPath(), false);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cleaning the source version log " + dir, e);
        }
    }

    /** The listener of one read: one entry per checkpoint. */
    private static final class ReadListener implements CheckpointVersionListener {
        private static final long serialVersionUID = 1L;
        private final String dir;
        private final String read;

        ReadListener(String dir, String read) {
            this.dir = dir;
            this.read = read;
        }

        @Override
        public void checkpointing(long checkpointId, long completedVersion) {
            write(dir, read, checkpointId, completedVersion);
        }

        @Override
        public void checkpointCompleted(long checkpointId) {
            discardOld(dir, read, checkpointId);
        }

        @Override
        public void ended(long completedVersion) {
            write(dir, read, END_OF_INPUT, completedVersion);
        }
    }
}

package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotOrigin;
import dev.changeflow.operators.SnapshotVersions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of the snapshot-folder source of AUTO CDC FROM SNAPSHOT (semantics.md A6): a Flink
 * {@link FileSource} over a folder of snapshot files, one file per version ({@link
 * SnapshotFileNames}: {@code snapshot_1.csv}, {@code snapshot_2.json}, ...), read one file after
 * the other in ascending version by a single reader. Each file yields its rows (the flow's source
 * type; the version column, a BIGINT, holds the file's version) and then its end marker, the input
 * {@code AutoCdcOperators.applySnapshots} expects.
 *
 * <p>Bounded (the files present at the start) or, with a monitor interval, continuous (new files
 * are read as they appear; each file is read once, tracked by path in the checkpoint as by Flink's
 * file source). Files should appear atomically (written elsewhere, then renamed). A file whose
 * version is not above the last applied snapshot is skipped and counted by the ordering step.
 *
 * <pre>{@code
 * DataStream<RowData> snapshots = SnapshotFiles.stream(env, new Path("/exports/customers"), spec, null);
 * AutoCdcOperators.applySnapshots(snapshots, spec, SnapshotFiles.origin(folder));
 * }</pre>
 */
@PublicEvolving
public final class SnapshotFiles {
    /** Uid prefix of the source; the flow's name follows. */
    public static final String UID_PREFIX = "snapshot-files-";

    private SnapshotFiles() {}

    /**
     * The file source of {@code folder} for {@code spec}.
     *
     * @param monitorInterval null reads the files present at the start and ends; else scans the
     *     folder for new files at this interval
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} when the spec's version column
     *     is not a BIGINT (file versions are integers)
     * @throws IllegalArgumentException for a column type a snapshot file cannot hold (ARRAY, MAP,
     *     ROW, BINARY, TIME, ...)
     */
    public static FileSource<RowData> source(
            Path folder, AutoCdcSpec spec, @Nullable Duration monitorInterval) {
        SnapshotVersions versions =
                SnapshotVersions.requireBigint(spec, "snapshot files carry integer versions");
        RowType type = spec.sourceType();
        for (int i = 0; i < type.getFieldCount(); i++) {
            if (i != versions.index() && !SnapshotValues.supported(type.getTypeAt(i))) {
                throw new IllegalArgumentException(
                        "flow '"
                                + spec.name()
                                + "': column '"
                                + type.getFieldNames().get(i)
                                + "' is "
                                + type.getTypeAt(i)
                                + ", which snapshot files cannot hold; use STRING, numbers,"
                                + " BOOLEAN, DATE or TIMESTAMP columns");
            }
        }
        FileSource.FileSourceBuilder<RowData> b =
                FileSource.forBulkFileFormat(
                                new SnapshotBulkFormat(type, versions, spec.keyIndexesInSource()),
                                folder)
                        .setSplitAssigner(SnapshotSplitAssigner::new);
        if (monitorInterval != null) {
            b.monitorContinuously(monitorInterval);
        }
        return b.build();
    }

    /**
     * The snapshot rows and end markers of {@code folder} as a stream at parallelism 1 (uid {@code
     * snapshot-files-<flow>}), for {@code AutoCdcOperators.applySnapshots}.
     */
    public static DataStream<RowData> stream(
            StreamExecutionEnvironment env,
            Path folder,
            AutoCdcSpec spec,
            @Nullable Duration monitorInterval) {
        return env.fromSource(
                        source(folder, spec, monitorInterval),
                        WatermarkStrategy.noWatermarks(),
                        "snapshot files " + spec.name())
                .uid(UID_PREFIX + spec.name())
                .setParallelism(1);
    }

    /**
     * Names the snapshot file of a version of {@code folder} in the messages of the snapshot
     * operators ({@code file /exports/customers/snapshot_3.csv}), for {@code
     * AutoCdcOperators.applySnapshots}. It lists the folder when asked (only on an error or a
     * skipped snapshot, never per row); several files of one version are all named ({@code files a,
     * b}); a version without a file (the file was removed since) reads {@code no file of version 3
     * left in /exports/customers}, a folder that cannot be listed {@code a file of version 3 in
     * /exports/customers}.
     */
    public static SnapshotOrigin origin(Path folder) {
        String uri = folder.toUri().toString();
        return version -> describe(new Path(uri), version);
    }

    private static String describe(Path folder, long version) {
        List<String> files = new ArrayList<>();
        try {
            FileStatus[] listed = folder.getFileSystem().listStatus(folder);
            if (listed == null) {
                throw new IOException("cannot list " + folder);
            }
            for (FileStatus f : listed) {
                String name = f.getPath().getName();
                if (!f.isDir() && !SnapshotFileNames.ignored(name) && versionOf(name) == version) {
                    files.add(display(f.getPath()));
                }
            }
        } catch (IOException | RuntimeException e) {
            return "a file of version " + version + " in " + display(folder);
        }
        if (files.isEmpty()) {
            return "no file of version " + version + " left in " + display(folder);
        }
        files.sort(null);
        return (files.size() == 1 ? "file " : "files ") + String.join(", ", files);
    }

    /** The version in a file's name, or {@code Long.MIN_VALUE} when it has none. */
    private static long versionOf(String name) {
        try {
            return SnapshotFileNames.version(name);
        } catch (AutoCdcException e) {
            return Long.MIN_VALUE;
        }
    }

    /** A path as messages show it: a local path without {@code file:}, else the URI. */
    static String display(Path path) {
        java.net.URI uri = path.toUri();
        if (uri.getScheme() == null || "file".equals(uri.getScheme())) {
            return new File(uri.getPath()).getPath();
        }
        return path.toString();
    }
}

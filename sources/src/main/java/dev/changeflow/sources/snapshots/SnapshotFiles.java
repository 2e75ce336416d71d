package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotVersions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.time.Duration;

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
 * AutoCdcOperators.applySnapshots(snapshots, spec);
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
        SnapshotVersions versions = new SnapshotVersions(spec);
        RowType type = spec.sourceType();
        if (type.getTypeAt(versions.index()).getTypeRoot() != LogicalTypeRoot.BIGINT) {
            throw new AutoCdcException(
                    AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                    "flow '"
                            + spec.name()
                            + "': snapshot files carry integer versions; the version column '"
                            + spec.sequenceBy().get(0)
                            + "' must be BIGINT, got "
                            + type.getTypeAt(versions.index()));
        }
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
                FileSource.forBulkFileFormat(new SnapshotBulkFormat(type, versions), folder)
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
}

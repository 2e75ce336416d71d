package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcOperators;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotVersions;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.snapshots.SnapshotFileNames;
import dev.changeflow.sources.snapshots.SnapshotFiles;

import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An AUTO CDC FROM SNAPSHOT flow (docs/semantics.md A6) as a job part: the snapshot folder, the
 * diff and the AUTO CDC apply, the Iceberg sink.
 *
 * <pre>
 * snapshot files ──> order ──keyBy(KEYS)──> diff ──> AUTO CDC apply (SCD 1 / 2) ──> Iceberg
 * </pre>
 *
 * The flow's source rows are its declared {@code schema} (KEYS made NOT NULL) followed by the
 * version column {@code _snapshot_version} BIGINT (a metadata column: stored only when {@code
 * columns} names it); SEQUENCE BY is that column, so SCD type 2's {@code __START_AT} / {@code
 * __END_AT} are BIGINT snapshot versions. Uids: {@code snapshot-files-<flow>}, {@code
 * snapshot-sequencer-<flow>}, {@code snapshot-diff-<flow>}, {@code auto-cdc-<flow>}, and the
 * Iceberg sink's with suffix {@code <flow>}.
 */
public final class SnapshotJob {
    private SnapshotJob() {}

    /** The resolved plan of one snapshot flow. */
    public static final class Plan implements Serializable {
        private static final long serialVersionUID = 1L;
        public final FlowConfig config;
        public final AutoCdcSpec spec;
        public final TableIdentifier target;
        public final StreamingTableOptions tableOptions;

        /** The folder of snapshot files, as a URI (a local folder or any Flink file system). */
        public final String folder;

        Plan(
                FlowConfig config,
                AutoCdcSpec spec,
                TableIdentifier target,
                StreamingTableOptions tableOptions,
                String folder) {
            this.config = config;
            this.spec = spec;
            this.target = target;
            this.tableOptions = tableOptions;
            this.folder = folder;
        }
    }

    /**
     * Resolves a validated flow with {@code from-snapshot} into its AUTO CDC definition and target.
     * A local folder is listed now, so a file name without a version fails before the job starts.
     *
     * @param namespace the target's namespace when {@code target} names none
     * @throws IllegalArgumentException for a bad schema or a flow without {@code from-snapshot}
     * @throws AutoCdcException for a definition that breaks A1 ({@code KEY_NOT_IN_SOURCE} lists the
     *     declared columns, not the internal version column), or, for a local folder, {@code
     *     SNAPSHOT_VERSION_NOT_SORTABLE} for a snapshot file name without a version and {@code
     *     SNAPSHOT_FOLDER_NOT_FOUND} for a folder that does not exist, naming the flow (A6)
     */
    public static Plan plan(FlowConfig f, String namespace) {
        if (f.fromSnapshot == null) {
            if (f.fromSnapshotTable != null) {
                throw new IllegalArgumentException(
                        "flow '"
                                + f.flowName()
                                + "': 'from-snapshot-table' is not runnable yet (issue #15)");
            }
            throw new IllegalArgumentException("flow '" + f.flowName() + "' has no from-snapshot");
        }
        RowType declared = SchemaSampler.parseColumns(f.schema);
        for (String k : f.keys) {
            // checked here, against the declared columns only: the version column is internal
            if (!declared.getFieldNames().contains(k)) {
                throw new AutoCdcException(
                        AutoCdcException.Code.KEY_NOT_IN_SOURCE,
                        "flow '"
                                + f.flowName()
                                + "': KEYS column '"
                                + k
                                + "' is not in the flow's schema "
                                + declared.getFieldNames()
                                + "; name an existing column");
            }
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (RowType.RowField c : declared.getFields()) {
            fields.add(
                    f.keys.contains(c.getName())
                            ? new RowType.RowField(c.getName(), c.getType().copy(false))
                            : c);
        }
        fields.add(new RowType.RowField(SnapshotVersions.VERSION_COLUMN, new BigIntType()));
        AutoCdcSpec spec =
                AutoCdcSpec.builder(f.flowName(), new RowType(fields))
                        .metadataColumns(List.of(SnapshotVersions.VERSION_COLUMN))
                        .keys(f.keys)
                        .sequenceBy(SnapshotVersions.VERSION_COLUMN)
                        .scdType(f.scdType)
                        .columns(f.columns)
                        .trackHistory(f.trackHistoryOn)
                        .applyBufferKeys(f.applyBufferKeys)
                        .build();
        String folder = folderUri(f.fromSnapshot);
        if (folder.startsWith("file:")) {
            try {
                SnapshotFileNames.list(java.nio.file.Path.of(URI.create(folder)));
            } catch (AutoCdcException e) {
                if (e.code() != AutoCdcException.Code.SNAPSHOT_FOLDER_NOT_FOUND) {
                    throw e;
                }
                String message = e.getMessage().substring(e.code().name().length() + 2);
                throw new AutoCdcException(e.code(), "flow '" + f.flowName() + "': " + message);
            }
        }
        String ns = f.targetNamespace() != null ? f.targetNamespace() : namespace;
        TableIdentifier target = TableIdentifier.of(Namespace.of(ns.split("\\.")), f.targetName());
        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .formatVersion(f.formatVersion)
                        .partitionBy(f.partitionedBy)
                        .build();
        return new Plan(f, spec, target, options, folder);
    }

    /** A folder given as a URI ({@code s3://...}) or a local path. */
    private static String folderUri(String folder) {
        if (folder.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
            return folder;
        }
        return java.nio.file.Path.of(folder).toAbsolutePath().toUri().toString();
    }

    /** Creates the target table when it does not exist (an existing one must match: A1). */
    public static void ensureTable(Catalog catalog, Plan plan) {
        StreamingTables.ensureTable(
                catalog,
                plan.target,
                plan.spec.targetType(),
                plan.spec.identifierFields(),
                plan.tableOptions);
    }

    /**
     * Adds the flow to {@code env}: snapshot files → diff → apply → Iceberg, and the table's in-job
     * maintenance when the flow's {@code maintenance} option is on ({@link JobMaintenance}). The
     * table must exist ({@link #ensureTable}).
     *
     * @param monitorInterval null reads the snapshot files present at the start and ends; else
     *     keeps reading new ones
     * @return the target rows the apply operator emits ({@code spec.targetType()})
     */
    public static DataStream<RowData> build(
            StreamExecutionEnvironment env,
            Plan plan,
            CatalogSettings catalog,
            @Nullable Duration monitorInterval) {
        DataStream<RowData> snapshots =
                SnapshotFiles.stream(env, new Path(plan.folder), plan.spec, monitorInterval);
        AutoCdcOperators.Applied applied =
                AutoCdcOperators.applySnapshots(
                        snapshots, plan.spec, SnapshotFiles.origin(new Path(plan.folder)));
        StreamingTableSink.write(
                applied.rows,
                catalog.loader(),
                plan.target,
                plan.spec.identifierFields(),
                plan.tableOptions,
                plan.config.flowName());
        JobMaintenance.append(
                env,
                catalog,
                plan.target,
                plan.config.maintenance,
                "maintenance-" + plan.config.flowName());
        return applied.rows;
    }
}

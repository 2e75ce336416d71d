package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcOperators;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotOrigin;
import dev.changeflow.operators.SnapshotVersions;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.snapshots.IcebergSnapshots;
import dev.changeflow.sources.snapshots.SnapshotFileNames;
import dev.changeflow.sources.snapshots.SnapshotFiles;

import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An AUTO CDC FROM SNAPSHOT flow (docs/semantics.md A6) as a job part: the snapshot source (a
 * folder of snapshot files, or the versions of an Iceberg table), the diff and the AUTO CDC apply,
 * the Iceberg sink.
 *
 * <pre>
 * snapshot files | table versions ──> order ──keyBy(KEYS)──> diff ──> AUTO CDC apply (SCD 1 / 2) ──> Iceberg
 * </pre>
 *
 * The flow's source rows are its declared {@code schema} (for a table flow: the source table's
 * columns, or the declared ones among them; KEYS made NOT NULL) followed by the version column
 * {@code _snapshot_version} BIGINT (a metadata column: stored only when {@code columns} names it;
 * for a table flow the version's sequence number); SEQUENCE BY is that column, so SCD type 2's
 * {@code __START_AT} / {@code __END_AT} are BIGINT snapshot versions. Uids: {@code
 * snapshot-files-<flow>} or {@code snapshot-table-<flow>}, {@code snapshot-sequencer-<flow>},
 * {@code snapshot-diff-<flow>}, {@code auto-cdc-<flow>}, and the Iceberg sink's with suffix {@code
 * <flow>}.
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

        /**
         * The folder of snapshot files, as a URI (a local folder or any Flink file system); null
         * for a flow over a table's versions.
         */
        @Nullable public final String folder;

        /** The source table whose versions are the snapshots; null for a folder flow. */
        @Nullable public final TableIdentifier sourceTable;

        /** Which versions of {@link #sourceTable} are read ({@code snapshot-versions}). */
        public final IcebergSnapshots.Versions versions;

        Plan(
                FlowConfig config,
                AutoCdcSpec spec,
                TableIdentifier target,
                StreamingTableOptions tableOptions,
                @Nullable String folder,
                @Nullable TableIdentifier sourceTable,
                IcebergSnapshots.Versions versions) {
            this.config = config;
            this.spec = spec;
            this.target = target;
            this.tableOptions = tableOptions;
            this.folder = folder;
            this.sourceTable = sourceTable;
            this.versions = versions;
        }

        /** Names a snapshot version in the snapshot operators' messages (file or table version). */
        SnapshotOrigin origin() {
            return sourceTable != null
                    ? IcebergSnapshots.origin(sourceTable.toString())
                    : SnapshotFiles.origin(new Path(folder));
        }
    }

    /**
     * Resolves a validated flow with {@code from-snapshot} (a folder) into its AUTO CDC definition
     * and target; {@link #plan(FlowConfig, String, Catalog)} resolves {@code from-snapshot-table}
     * flows too.
     *
     * @throws IllegalArgumentException for a {@code from-snapshot-table} flow (it needs the
     *     catalog)
     */
    public static Plan plan(FlowConfig f, String namespace) {
        return plan(f, namespace, null);
    }

    /**
     * Resolves a validated flow with {@code from-snapshot} or {@code from-snapshot-table} into its
     * AUTO CDC definition and target. A local folder is listed now, so a file name without a
     * version fails before the job starts. A source table ({@code [namespace.]name}, by default in
     * the target's namespace) is loaded from {@code catalog}: its columns are the flow's (or the
     * declared {@code schema}'s, which must be table columns of the same types).
     *
     * @param namespace the target's namespace when {@code target} names none
     * @param catalog the catalog of the source table; needed for {@code from-snapshot-table}
     * @throws IllegalArgumentException for a bad schema, a flow without {@code from-snapshot} or
     *     {@code from-snapshot-table}, a table flow without {@code catalog}, a declared column
     *     whose type differs from the source table's, or a MAP column
     * @throws dev.changeflow.sources.cdf.CdfException {@code UNSUPPORTED_FORMAT_VERSION} for a
     *     format v1 source table
     * @throws AutoCdcException {@code SNAPSHOT_TABLE_NOT_FOUND} for a source table that does not
     *     exist and {@code UNKNOWN_COLUMN} for a declared column it lacks (naming the flow and the
     *     table); for a definition that breaks A1 ({@code KEY_NOT_IN_SOURCE} lists the declared
     *     columns, not the internal version column), or, for a local folder, {@code
     *     SNAPSHOT_VERSION_NOT_SORTABLE} for a snapshot file name without a version and {@code
     *     SNAPSHOT_FOLDER_NOT_FOUND} for a folder that does not exist, naming the flow (A6)
     */
    public static Plan plan(FlowConfig f, String namespace, @Nullable Catalog catalog) {
        String ns = f.targetNamespace() != null ? f.targetNamespace() : namespace;
        TableIdentifier sourceTable = null;
        RowType declared;
        if (f.fromSnapshot == null) {
            if (f.fromSnapshotTable == null) {
                throw new IllegalArgumentException(
                        "flow '" + f.flowName() + "' has no from-snapshot");
            }
            if (catalog == null) {
                throw new IllegalArgumentException(
                        "flow '"
                                + f.flowName()
                                + "': 'from-snapshot-table' needs the catalog of table "
                                + f.fromSnapshotTable);
            }
            sourceTable = tableIdentifier(f.fromSnapshotTable, ns);
            if (!catalog.tableExists(sourceTable)) {
                throw new AutoCdcException(
                        AutoCdcException.Code.SNAPSHOT_TABLE_NOT_FOUND,
                        "flow '"
                                + f.flowName()
                                + "': snapshot table "
                                + sourceTable
                                + " does not exist in the catalog; create it or fix"
                                + " 'from-snapshot-table'");
            }
            Table source = catalog.loadTable(sourceTable);
            IcebergSnapshots.check(source, f.flowName());
            declared =
                    IcebergSnapshots.columns(
                            source,
                            f.schema == null ? null : SchemaSampler.parseColumns(f.schema),
                            f.flowName());
        } else {
            declared = SchemaSampler.parseColumns(f.schema);
        }
        for (String k : f.keys) {
            // checked here, against the declared columns only: the version column is internal
            if (!declared.getFieldNames().contains(k)) {
                throw new AutoCdcException(
                        AutoCdcException.Code.KEY_NOT_IN_SOURCE,
                        "flow '"
                                + f.flowName()
                                + "': KEYS column '"
                                + k
                                + "' is not in the flow's "
                                + (f.fromSnapshot != null ? "schema " : "source columns ")
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
        String folder = f.fromSnapshot == null ? null : folderUri(f.fromSnapshot);
        if (folder != null && folder.startsWith("file:")) {
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
        TableIdentifier target = IngestPlanner.target(f, namespace);
        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .formatVersion(f.formatVersion)
                        .partitionBy(f.partitionedBy)
                        .build();
        return new Plan(
                f,
                spec,
                target,
                options,
                folder,
                sourceTable,
                IcebergSnapshots.Versions.parse(f.snapshotVersions));
    }

    /**
     * A table named {@code [namespace.]name} (a {@code from-snapshot-table}), in {@code namespace}
     * when it names none.
     */
    public static TableIdentifier tableIdentifier(String name, String namespace) {
        int dot = name.lastIndexOf('.');
        return dot < 0
                ? TableIdentifier.of(Namespace.of(namespace.split("\\.")), name)
                : TableIdentifier.of(
                        Namespace.of(name.substring(0, dot).split("\\.")), name.substring(dot + 1));
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
                plan.sourceTable != null
                        ? IcebergSnapshots.stream(
                                env,
                                TableLoader.fromCatalog(catalog.loader(), plan.sourceTable),
                                plan.spec,
                                plan.versions,
                                monitorInterval)
                        : SnapshotFiles.stream(
                                env, new Path(plan.folder), plan.spec, monitorInterval);
        AutoCdcOperators.Applied applied =
                AutoCdcOperators.applySnapshots(snapshots, plan.spec, plan.origin());
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

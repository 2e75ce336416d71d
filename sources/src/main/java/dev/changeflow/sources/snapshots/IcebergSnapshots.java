package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotOrigin;
import dev.changeflow.operators.SnapshotVersions;
import dev.changeflow.sources.cdf.CdfException;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.util.SnapshotUtil;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Entry point of the Iceberg-table source of AUTO CDC FROM SNAPSHOT (semantics.md A6, "Iceberg
 * table versions"): each version of a source table is one snapshot. A version is the sequence
 * number of an Iceberg snapshot on the ancestry of the table's {@code main} branch (as the change
 * feed numbers versions, design.md "Version"); the source reads every live row of that Iceberg
 * snapshot (data files minus position and equality deletes, with Iceberg's Flink readers), emits
 * them as rows of the flow's source type with the version column ({@code _snapshot_version} BIGINT)
 * set to the sequence number, then the version's end marker ({@link SnapshotVersions#endOf}) — the
 * input {@code AutoCdcOperators.applySnapshots} expects. Versions come in ascending order.
 *
 * <p>Which versions ({@link Versions}): {@code ALL} reads every retained version after the last one
 * the source emitted; {@code LATEST} only the table's current version when it is newer than that
 * (intermediate versions are not read: the platform's "table read at each refresh", versioned by
 * its sequence number — Decision: deterministic, unlike the time of the read). {@code replace}
 * snapshots (compaction, rewrites: no row changes) are not versions here: they are skipped.
 *
 * <p>Bounded (the versions present at the start) or, with a monitor interval, continuous (the table
 * is looked at every interval). The position (last discovered version, versions not yet read, the
 * version being read and how many of its rows were emitted) is in the checkpoint: a restore between
 * versions resumes after the last completed one, inside a version it reads that version again in
 * the same order and skips the rows emitted before.
 *
 * <pre>{@code
 * DataStream<RowData> snapshots =
 *         IcebergSnapshots.stream(env, loader, spec, IcebergSnapshots.Versions.ALL, null);
 * AutoCdcOperators.applySnapshots(snapshots, spec, IcebergSnapshots.origin("db.customers"));
 * }</pre>
 */
@PublicEvolving
public final class IcebergSnapshots {
    /** Uid prefix of the source; the flow's name follows. */
    public static final String UID_PREFIX = "snapshot-table-";

    /** Which versions of the source table are snapshots (flow option {@code snapshot-versions}). */
    public enum Versions {
        /** Every retained version after the last one read, in ascending order (default). */
        ALL,
        /** Only the current version at each look, when newer than the last one read. */
        LATEST;

        /**
         * {@code all} or {@code latest}, any case.
         *
         * @throws IllegalArgumentException for another value
         */
        public static Versions parse(String text) {
            try {
                return valueOf(text.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "snapshot-versions must be all or latest, got '" + text + "'");
            }
        }
    }

    private IcebergSnapshots() {}

    /**
     * Checks that {@code table} can be a snapshot source: format version 2 or 3.
     *
     * @throws CdfException {@code UNSUPPORTED_FORMAT_VERSION} for a format v1 table (its snapshots
     *     have no sequence numbers), as the change feed
     */
    public static void check(Table table, String flow) {
        int format = TableUtil.formatVersion(table);
        if (format < 2) {
            throw new CdfException(
                    CdfException.ErrorCode.UNSUPPORTED_FORMAT_VERSION,
                    String.format(
                            "flow '%s': snapshot table %s has format version %d; its versions are"
                                    + " snapshot sequence numbers, which format 1 does not have."
                                    + " Upgrade the table with the table property"
                                    + " 'format-version' = '2'.",
                            flow, table.name(), format));
        }
    }

    /**
     * The flow's columns read from {@code table} (without the version column): the table's columns
     * (Iceberg schema converted by Flink's Iceberg connector) in table order, or, when the flow
     * declares its {@code schema}, the declared columns in declared order, which must be columns of
     * the table with the same type (nullability aside).
     *
     * @throws AutoCdcException {@code UNKNOWN_COLUMN} naming the flow, the table and the declared
     *     column it lacks; {@code RESERVED_COLUMN_NAME} when the table has a column named {@code
     *     _snapshot_version}
     * @throws IllegalArgumentException for a declared type other than the table's, or a MAP column
     *     (map entries have no order the diff could compare)
     */
    public static RowType columns(Table table, @Nullable RowType declared, String flow) {
        RowType tableType = FlinkSchemaUtil.convert(table.schema());
        if (tableType.getFieldNames().contains(SnapshotVersions.VERSION_COLUMN)) {
            throw new AutoCdcException(
                    AutoCdcException.Code.RESERVED_COLUMN_NAME,
                    "flow '"
                            + flow
                            + "': snapshot table "
                            + table.name()
                            + " has a column '"
                            + SnapshotVersions.VERSION_COLUMN
                            + "', the name of the snapshot version column; rename it");
        }
        RowType result = tableType;
        if (declared != null) {
            List<RowType.RowField> fields = new ArrayList<>();
            for (RowType.RowField d : declared.getFields()) {
                int i = tableType.getFieldIndex(d.getName());
                if (i < 0) {
                    throw new AutoCdcException(
                            AutoCdcException.Code.UNKNOWN_COLUMN,
                            "flow '"
                                    + flow
                                    + "': declared column '"
                                    + d.getName()
                                    + "' is not a column of snapshot table "
                                    + table.name()
                                    + " "
                                    + tableType.getFieldNames());
                }
                LogicalType actual = tableType.getTypeAt(i);
                if (!actual.copy(true).equals(d.getType().copy(true))) {
                    throw new IllegalArgumentException(
                            "flow '"
                                    + flow
                                    + "': declared column '"
                                    + d.getName()
                                    + "' is "
                                    + d.getType()
                                    + ", but snapshot table "
                                    + table.name()
                                    + " holds "
                                    + actual.copy(true)
                                    + "; declare that type or leave 'schema' out");
                }
                fields.add(new RowType.RowField(d.getName(), actual));
            }
            result = new RowType(fields);
        }
        for (RowType.RowField f : result.getFields()) {
            if (LogicalTypeChecks.hasNested(
                            f.getType(), t -> t.getTypeRoot() == LogicalTypeRoot.MAP)
                    || f.getType().getTypeRoot() == LogicalTypeRoot.MAP) {
                throw new IllegalArgumentException(
                        "flow '"
                                + flow
                                + "': column '"
                                + f.getName()
                                + "' of snapshot table "
                                + table.name()
                                + " is or holds a MAP, whose entries have no order a snapshot"
                                + " diff can compare; declare the flow's 'schema' without it");
            }
        }
        return result;
    }

    /**
     * The versions of {@code table} after {@code after} that the source reads, ascending: every
     * retained {@code main} ancestor that is not a {@code replace} snapshot ({@code ALL}), or the
     * newest of them ({@code LATEST}). The table must be fresh (refreshed by the caller).
     */
    static List<TableVersionSplit> versionsAfter(Table table, Versions mode, long after) {
        List<TableVersionSplit> result = new ArrayList<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            if (s.sequenceNumber() <= after) {
                break;
            }
            if (DataOperations.REPLACE.equals(s.operation())) {
                continue;
            }
            result.add(new TableVersionSplit(s.snapshotId(), s.sequenceNumber(), 0));
            if (mode == Versions.LATEST) {
                break;
            }
        }
        Collections.reverse(result);
        return result;
    }

    /**
     * The newest version of {@code table} the source would read (the newest {@code main} ancestor
     * that is not a {@code replace} snapshot), or -1 when the table has none.
     */
    public static long newestVersion(Table table) {
        List<TableVersionSplit> v = versionsAfter(table, Versions.LATEST, Long.MIN_VALUE);
        return v.isEmpty() ? -1L : v.get(0).version;
    }

    /**
     * The source of the versions of the table {@code loader} loads, for {@code spec}: its source
     * type is the flow's columns ({@link #columns}) and the version column.
     *
     * @param monitorInterval null reads the versions present at the start and ends; else looks for
     *     new versions at this interval
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} when the spec's version column
     *     is not a BIGINT (sequence numbers)
     */
    public static org.apache.flink.api.connector.source.Source<RowData, ?, ?> source(
            TableLoader loader,
            AutoCdcSpec spec,
            Versions mode,
            @Nullable Duration monitorInterval) {
        SnapshotVersions versions =
                SnapshotVersions.requireBigint(spec, "table versions are sequence numbers");
        RowType type = spec.sourceType();
        return new IcebergSnapshotSource(
                loader,
                type,
                versions,
                mode,
                monitorInterval == null ? 0L : Math.max(1L, monitorInterval.toMillis()));
    }

    /**
     * The snapshot rows and end markers of the table's versions as a stream at parallelism 1 (uid
     * {@code snapshot-table-<flow>}), for {@code AutoCdcOperators.applySnapshots}.
     */
    public static DataStream<RowData> stream(
            StreamExecutionEnvironment env,
            TableLoader loader,
            AutoCdcSpec spec,
            Versions mode,
            @Nullable Duration monitorInterval) {
        return env.fromSource(
                        source(loader, spec, mode, monitorInterval),
                        WatermarkStrategy.noWatermarks(),
                        "snapshot table " + spec.name(),
                        org.apache.flink.table.runtime.typeutils.InternalTypeInfo.of(
                                spec.sourceType()))
                .uid(UID_PREFIX + spec.name())
                .setParallelism(1);
    }

    /**
     * Names a version in the snapshot operators' messages: {@code table db.customers version 7}.
     */
    public static SnapshotOrigin origin(String tableName) {
        return version -> "table " + tableName + " version " + version;
    }
}

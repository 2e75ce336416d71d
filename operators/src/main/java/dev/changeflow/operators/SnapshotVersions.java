package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.types.RowKind;

import java.io.Serializable;

/**
 * The snapshot version of an AUTO CDC FROM SNAPSHOT flow (semantics.md A6) and the shape of its
 * input.
 *
 * <p>The flow's {@link AutoCdcSpec} names one SEQUENCE BY column: the <b>version column</b>, set on
 * every row of a snapshot (usually a metadata column such as {@link #VERSION_COLUMN}, so the target
 * does not store it). Its type must be TINYINT, SMALLINT, INT, BIGINT, DATE, TIMESTAMP(p) or
 * TIMESTAMP_LTZ(p): each maps to a {@code long} that orders the versions (the integer, days since
 * 1970-01-01, milliseconds since the epoch) and travels as the Flink watermark that ends the
 * snapshot. Timestamps are compared to the millisecond: a version with digits below it is {@code
 * SNAPSHOT_VERSION_NOT_SORTABLE}.
 *
 * <p><b>Input contract</b> of {@link AutoCdcOperators#applySnapshots}: the rows of snapshot v (kind
 * {@code +I}, every column of {@link AutoCdcSpec#sourceType()}, version column = v), then one
 * <b>end marker</b> of v ({@link #endOf}: kind {@code -D}, version column = v, all else null); then
 * the next snapshot. An empty snapshot is just its end marker.
 */
@PublicEvolving
public final class SnapshotVersions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The default version column name (a metadata column: not stored unless COLUMNS names it). */
    public static final String VERSION_COLUMN = "_snapshot_version";

    private final String flow;
    private final int index;
    private final LogicalType type;
    private final int arity;

    /**
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} when the spec has more than
     *     one SEQUENCE BY column or the column's type cannot be ordered as a version
     */
    public SnapshotVersions(AutoCdcSpec spec) {
        this.flow = spec.name();
        if (spec.sequenceBy().size() != 1) {
            throw new AutoCdcException(
                    AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                    "flow '"
                            + flow
                            + "' reads snapshots: its version is one column, got SEQUENCE BY "
                            + spec.sequenceBy());
        }
        this.index = spec.sequenceIndexesInSource()[0];
        this.type = spec.sourceType().getTypeAt(index);
        this.arity = spec.sourceType().getFieldCount();
        switch (type.getTypeRoot()) {
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case DATE:
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                break;
            default:
                throw new AutoCdcException(
                        AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                        "flow '"
                                + flow
                                + "': snapshot version column '"
                                + spec.sequenceBy().get(0)
                                + "' is "
                                + type
                                + "; use an integer, DATE or TIMESTAMP column");
        }
    }

    /**
     * The versions of a source whose versions are integers (Iceberg sequence numbers, snapshot file
     * versions): as {@link #SnapshotVersions(AutoCdcSpec)}, and the version column must be a BIGINT
     * (docs/semantics.md A6).
     *
     * @param versionsAre what the source's versions are, for the message (e.g. "table versions are
     *     sequence numbers")
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} as the constructor, or when
     *     the version column is not a BIGINT
     */
    public static SnapshotVersions requireBigint(AutoCdcSpec spec, String versionsAre) {
        SnapshotVersions versions = new SnapshotVersions(spec);
        LogicalType type = spec.sourceType().getTypeAt(versions.index());
        if (type.getTypeRoot() != LogicalTypeRoot.BIGINT) {
            throw new AutoCdcException(
                    AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                    "flow '"
                            + spec.name()
                            + "': "
                            + versionsAre
                            + "; the version column '"
                            + spec.sequenceBy().get(0)
                            + "' must be BIGINT, got "
                            + type);
        }
        return versions;
    }

    /** Position of the version column in the source row. */
    public int index() {
        return index;
    }

    /** Whether {@code row} is the end marker of a snapshot (see the class comment). */
    public static boolean isEnd(RowData row) {
        return row.getRowKind() == RowKind.DELETE;
    }

    /** The end marker of snapshot {@code version} (a value of the version column's type). */
    public RowData endOf(Object version) {
        GenericRowData marker = new GenericRowData(RowKind.DELETE, arity);
        marker.setField(index, version);
        return marker;
    }

    /**
     * The version of {@code row} as the ordering {@code long}.
     *
     * @throws AutoCdcException {@code NULL_SNAPSHOT_VERSION} when it is null, {@code
     *     SNAPSHOT_VERSION_NOT_SORTABLE} for a timestamp with digits below the millisecond
     */
    public long versionOf(RowData row) {
        if (row.isNullAt(index)) {
            throw new AutoCdcException(
                    AutoCdcException.Code.NULL_SNAPSHOT_VERSION,
                    "flow '"
                            + flow
                            + "': a snapshot "
                            + (isEnd(row) ? "end marker" : "row")
                            + " has no version; every row of a snapshot needs its version");
        }
        switch (type.getTypeRoot()) {
            case TINYINT:
                return row.getByte(index);
            case SMALLINT:
                return row.getShort(index);
            case INTEGER:
            case DATE:
                return row.getInt(index);
            case BIGINT:
                return row.getLong(index);
            default:
                TimestampData ts = row.getTimestamp(index, precision());
                if (ts.getNanoOfMillisecond() != 0) {
                    throw new AutoCdcException(
                            AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                            "flow '"
                                    + flow
                                    + "': snapshot version "
                                    + ts
                                    + " has digits below the millisecond; versions are compared"
                                    + " to the millisecond");
                }
                return ts.getMillisecond();
        }
    }

    /** The version column's value for the ordering {@code long} {@code version}. */
    public Object valueOf(long version) {
        switch (type.getTypeRoot()) {
            case TINYINT:
                return (byte) version;
            case SMALLINT:
                return (short) version;
            case INTEGER:
            case DATE:
                return (int) version;
            case BIGINT:
                return version;
            default:
                return TimestampData.fromEpochMillis(version);
        }
    }

    private int precision() {
        return type instanceof TimestampType
                ? ((TimestampType) type).getPrecision()
                : ((LocalZonedTimestampType) type).getPrecision();
    }
}

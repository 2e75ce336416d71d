package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * An AUTO CDC flow definition or target table that violates semantics.md A1, raised before any data
 * is read, or a snapshot that AUTO CDC FROM SNAPSHOT cannot apply (A6; raised while the job runs,
 * and not retried: the job fails with the code). {@link #code()} is a stable error code (see {@link
 * Code}); the message names the clause, the values and the fix.
 */
@PublicEvolving
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class AutoCdcException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Stable error codes of A1 (and A5's key type rule, A7's type changes). */
    public enum Code {
        EMPTY_KEYS,
        KEY_NOT_IN_SOURCE,
        SEQUENCE_NOT_IN_SOURCE,
        EMPTY_SEQUENCE,
        KEY_DROPPED_BY_COLUMNS,
        SEQUENCE_NOT_ORDERABLE,
        KEY_TYPE_NOT_SUPPORTED,
        TRUNCATE_REQUIRES_SCD1,
        TRACK_HISTORY_REQUIRES_SCD2,
        RESERVED_COLUMN_NAME,
        UNKNOWN_COLUMN,
        TARGET_SCHEMA_MISMATCH,
        STATE_MISSING_FOR_EXISTING_TABLE,
        FLOW_CHANGED_FOR_EXISTING_STATE,
        /**
         * A source column's type changed in a way the table cannot follow (semantics.md A7 item 4):
         * neither type is an Iceberg promotion of the other, a KEYS or SEQUENCE BY column changed
         * type, or a widening the saved AUTO CDC state could not read. The message names the
         * column, the table's type and the source's type.
         */
        INCOMPATIBLE_TYPE_CHANGE,
        /**
         * AUTO CDC FROM SNAPSHOT (semantics.md A6): one key appears twice in one snapshot. The
         * message names the flow, the key and the version. The job fails (the snapshot is
         * ambiguous); fix the source and restart from the last checkpoint.
         */
        DUPLICATE_KEY_VIOLATION,
        /** A6: the first snapshot a flow reads has no rows (an empty export, a wrong path). */
        FIRST_SNAPSHOT_EMPTY,
        /** A6: a snapshot row or end marker without a version. */
        NULL_SNAPSHOT_VERSION,
        /**
         * A6: a snapshot version that cannot be ordered: a version column whose type is not an
         * integer, DATE or TIMESTAMP, a timestamp with digits below the millisecond, or a snapshot
         * file whose name carries no integer version.
         */
        SNAPSHOT_VERSION_NOT_SORTABLE,
        /**
         * A6: a snapshot row that cannot be read: a value that does not fit its column's type, a
         * null KEYS column, a malformed CSV or JSON line. The message names the file, the line and
         * the column. A snapshot is never applied in part (a row left out would read as a delete).
         */
        MALFORMED_SNAPSHOT_ROW,
        /**
         * A6: the snapshot folder of a flow ({@code from-snapshot}) does not exist or is not a
         * folder. The message names the flow's folder.
         */
        SNAPSHOT_FOLDER_NOT_FOUND,
        /**
         * A6: the source table of a flow ({@code from-snapshot-table}) does not exist in the
         * catalog. The message names the flow and the table.
         */
        SNAPSHOT_TABLE_NOT_FOUND,
        /** S8: two expectations of one flow share a name. */
        DUPLICATE_EXPECTATION,
        /**
         * S8: a record violated an expectation with {@code ON VIOLATION FAIL UPDATE}. Raised while
         * the job runs and not retried: the job fails before the running checkpoint completes, so
         * nothing of it is committed. The message names the flow, the expectation, its expression,
         * the record's KEYS and its values.
         */
        EXPECTATION_FAILED,
        /**
         * S7: an append flow reads the change feed of a table ({@code AS SELECT ... FROM
         * STREAM(t)}), which takes the rows appended to it, and a version of that table updated or
         * deleted rows. Raised while the job runs and not retried; the message names the flow, the
         * table, the version and the fix ({@code REFRESH STREAMING TABLE ... FULL}, or AUTO CDC).
         */
        SOURCE_ROWS_CHANGED,
        /**
         * S1: an append flow's query gave NULL for a column its streaming table declares {@code NOT
         * NULL} ({@code CREATE STREAMING TABLE t (c TYPE NOT NULL, ...) AS SELECT ...}). Raised
         * while the job runs and not retried: nothing of the running checkpoint is committed; the
         * message names the flow, the column and the fix.
         */
        NULL_IN_NOT_NULL_COLUMN
    }

    private final Code code;

    public AutoCdcException(Code code, String message) {
        super(code + ": " + message);
        this.code = code;
    }

    public Code code() {
        return code;
    }
}

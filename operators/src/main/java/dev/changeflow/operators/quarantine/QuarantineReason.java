package dev.changeflow.operators.quarantine;

import org.apache.flink.annotation.PublicEvolving;

/** Reason codes of records sent to the quarantine table (semantics.md A5). */
@PublicEvolving
public enum QuarantineReason {
    /** The record is not JSON at all (does not start like a JSON value). */
    NOT_JSON,
    /** JSON that does not parse (truncated, unbalanced, bad token). */
    MALFORMED_JSON,
    /**
     * A line of a CSV file ({@code read_files(..., format => 'csv')}) that is no record of it: it
     * does not parse as CSV, has another number of fields than the header, or the file's header is
     * missing or bad (docs/semantics.md S2); the detail says which, with the line.
     */
    MALFORMED_CSV,
    /** A value that cannot be converted to its column's type. */
    TYPE_MISMATCH,
    /** A declared or key/sequence column absent from the record. */
    MISSING_COLUMN,
    /** A null or missing key column (truncates exempt). */
    NULL_KEY,
    /** A null or missing SEQUENCE BY column. */
    NULL_SEQUENCE,
    /** A Debezium {@code op} other than c, r, u, d, t, or a c/r/u without {@code after}. */
    UNKNOWN_OP,
    /** A record larger than the configured maximum record size. */
    RECORD_TOO_LARGE,
    /** A record of a topic/table no flow is configured for (pattern subscriptions). */
    UNKNOWN_TOPIC,
    /** A record with fields the table lacks under {@code on-schema-change = quarantine}. */
    SCHEMA_CHANGED,
    /** A Debezium truncate ({@code op = t}) for a flow without TRUNCATE enabled. */
    TRUNCATE_NOT_ENABLED,
    /**
     * An upsert with an unavailable value (the connector's placeholder, e.g. PostgreSQL TOAST
     * {@code __debezium_unavailable_value}) in a stored column, for a key that has no stored row to
     * take that column's value from (its first record, or the first after a delete). Detected by
     * the AUTO CDC operator, not the decoder; the detail names the columns.
     */
    UNAVAILABLE_VALUE,
    /**
     * A compressed file whose stream ends early (or, for compressions other than gzip, fails while
     * read): everything from there on.
     */
    TRUNCATED_FILE,
    /**
     * A compressed file that fails its integrity checks (gzip: a member's CRC32 or ISIZE, a deflate
     * data error, a bad member header): everything from the first line not in a verified member on.
     */
    DAMAGED_FILE,
    /**
     * A MongoDB update that carries only what changed, where the change cannot be expressed as
     * whole column values: a field inside a nested document ({@code a.b}), a truncated array, or an
     * update operator other than {@code $set} / {@code $unset} (semantics.md A5 "MongoDB partial
     * updates"). Capturing full documents avoids it.
     */
    PARTIAL_UPDATE,
    /**
     * An upsert that violated a flow's expectation with {@code ON VIOLATION DROP ROW} (semantics.md
     * S8); the detail names the expectations it violated and their expressions.
     */
    EXPECTATION_VIOLATED
}

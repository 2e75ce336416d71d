package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The one error type of the change data feed. Every error carries a stable {@link ErrorCode}; the
 * message starts with the code and names the table, the versions involved and the fix (F4).
 */
@PublicEvolving
public class CdfException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Stable error codes of the change data feed (semantics.md F3, F4, F8, K6). */
    @PublicEvolving
    public enum ErrorCode {
        /** Options that contradict each other or are malformed (e.g. two starting bounds, F3). */
        INVALID_CDC_OPTIONS,
        /** The end of the range lies before its start (F4). */
        INVALID_CDC_RANGE,
        /**
         * The start lies after the latest version, or a starting timestamp after the last commit
         * (F4).
         */
        START_AFTER_LATEST_COMMIT,
        /** The end lies after the latest version or the last commit (F4). */
        END_AFTER_LATEST_COMMIT,
        /**
         * A version is older than the earliest available version or one of its files is gone (F4,
         * K6).
         */
        VERSION_NOT_AVAILABLE,
        /** The range spans a non-additive schema change (F4). */
        INCOMPATIBLE_SCHEMA_CHANGE,
        /** A table column is named like a change-feed metadata column (F4). */
        RESERVED_COLUMN_NAME,
        /**
         * A timestamp bound is not of the form {@code yyyy-MM-dd[ HH:mm:ss[.SSS]][offset]} (F3).
         */
        INVALID_TIMESTAMP,
        /** The range covers versions that a rollback removed from {@code main}'s history (F8). */
        TABLE_HISTORY_REWRITTEN,
        /** The table has format version 1, which has no sequence numbers (design.md). */
        UNSUPPORTED_FORMAT_VERSION
    }

    private final ErrorCode code;

    /**
     * An error with {@code code}; the message is prefixed with the code. Public so that the change
     * feed's SQL layer and retention tooling report through the same type.
     */
    public CdfException(ErrorCode code, String message) {
        super(code.name() + ": " + message);
        this.code = code;
    }

    /** As {@link #CdfException(ErrorCode, String)}, with the underlying cause. */
    public CdfException(ErrorCode code, String message, Throwable cause) {
        super(code.name() + ": " + message, cause);
        this.code = code;
    }

    /** The stable code of this error. */
    public ErrorCode code() {
        return code;
    }
}

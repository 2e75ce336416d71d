package dev.changeflow.jobs.gold;

/**
 * An error of the Silver→Gold job that the user must act on, with a stable code.
 *
 * <p>Codes:
 *
 * <ul>
 *   <li>{@code GOLD_VERSION_MISMATCH}: a start without Flink state whose starting version would
 *       leave a gap (Silver versions with changes that no Gold commit contains) or an overlap
 *       (versions that a Gold commit already contains, which the aggregate would count twice)
 *       relative to the Gold tables' {@code _source_version}.
 *   <li>{@code GOLD_DEFINITION_INVALID}: the Gold definition names unknown columns, an aggregate
 *       that is not {@code SUM(expr)} / {@code COUNT(*)} / {@code COUNT(expr)}, an upsert
 *       projection without the Silver table's identifier fields, or an existing Gold table of
 *       another shape.
 * </ul>
 */
public final class GoldException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The stable error codes (printed first in the message). */
    public enum Code {
        GOLD_VERSION_MISMATCH,
        GOLD_DEFINITION_INVALID
    }

    private final Code code;

    GoldException(Code code, String message) {
        super(code + ": " + message);
        this.code = code;
    }

    GoldException(Code code, String message, Throwable cause) {
        super(code + ": " + message, cause);
        this.code = code;
    }

    /** The error code. */
    public Code code() {
        return code;
    }
}

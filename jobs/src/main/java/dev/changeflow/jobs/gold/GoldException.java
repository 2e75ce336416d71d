package dev.changeflow.jobs.gold;

/**
 * An error of the Silver→Gold job that the user must act on, with a stable code.
 *
 * <p>Codes:
 *
 * <ul>
 *   <li>{@code GOLD_VERSION_MISMATCH} (docs/semantics.md G3): a start without Flink state whose
 *       starting version would leave a gap — Silver versions with changes that no Gold commit
 *       contains, after a Gold table's recorded {@code changeflow.source-version.<table>} — or
 *       whose skipped versions have expired.
 *   <li>{@code GOLD_DEFINITION_INVALID} (G2): the definition flags of {@code gold} name no Silver
 *       table or no Gold table, an aggregate table without {@code --group-by} or {@code
 *       --aggregate}, an upsert projection without the Silver table's identifier fields, an unknown
 *       group-by column, an aggregate not of the form {@code NAME=FN(expr)}, or a column or
 *       predicate Flink cannot plan, an upsert select list naming a column twice ({@link
 *       GoldFlags}).
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

    /**
     * {@code GOLD_DEFINITION_INVALID} with {@code message}: the definition flags of {@code gold}
     * name no Silver or no Gold table, or an aggregate table without its group-by or aggregates.
     */
    public static GoldException definitionInvalid(String message) {
        return new GoldException(Code.GOLD_DEFINITION_INVALID, message);
    }

    /** The error code. */
    public Code code() {
        return code;
    }
}

package dev.changeflow.operators.options;

/**
 * Thrown by a parser made with {@link OptionParsers#parsing} for a value its option does not
 * accept: {@code "'KEY' = 'VALUE' is not ALLOWED."}. The option's key, the value as given and the
 * description of what is allowed are kept for callers that word the error their own way.
 */
public final class InvalidOptionValueException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final String value;
    private final String allowed;

    InvalidOptionValueException(String key, String value, String allowed, Throwable cause) {
        super("'" + key + "' = '" + value + "' is not " + allowed + ".", cause);
        this.key = key;
        this.value = value;
        this.allowed = allowed;
    }

    /** The option's key. */
    public String key() {
        return key;
    }

    /** The value as given. */
    public String value() {
        return value;
    }

    /** What the option accepts, e.g. {@code "a number of files (an integer from 1 to 10)"}. */
    public String allowed() {
        return allowed;
    }
}

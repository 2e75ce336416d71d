package dev.changeflow.jobs.cli;

import javax.annotation.Nullable;

import java.util.regex.Pattern;

/**
 * Gives a code to the errors of a flows file and of command-line options, which are thrown as plain
 * {@link IllegalArgumentException}s by the option checks they share with pipeline files (README
 * "Exit codes"): {@code INVALID_OPTION} for an unknown or malformed option, flag or flows-file key
 * (the code a pipeline file's {@code SET} and table properties use), {@code SYNTAX_ERROR} for a
 * flows file that is not YAML. The code follows the file's position, as in a pipeline file's
 * errors: {@code flows.yaml:12:5: INVALID_OPTION: flow 'pgbench_accounts': unknown option
 * 'sequence-bi' (did you mean 'sequence-by'?)}; without a position it comes first: {@code
 * INVALID_OPTION: --until-idle applies to Kafka input only}. A message that carries a code already
 * ({@code SqlException}, {@code AutoCdcException}, ...) is kept. A file a command was given that
 * does not exist is {@code SOURCE_NOT_FOUND} ({@link #fileNotFound}), a table the catalog does not
 * have {@code TABLE_NOT_FOUND} ({@link #tableNotFound}); {@link Main} gives {@code INVALID_OPTION}
 * to any other plain {@link IllegalArgumentException} a command ends with ({@link #withCode}).
 */
final class CliErrors {
    /** The code of an unknown or malformed option, flag or flows-file key. */
    static final String INVALID_OPTION = "INVALID_OPTION";

    /** The code of a flows file that is not YAML. */
    static final String SYNTAX_ERROR = "SYNTAX_ERROR";

    /**
     * The code of a file a command was given that does not exist (a pipeline, flows or input file),
     * as a {@code read_files} path that does not exist.
     */
    static final String SOURCE_NOT_FOUND = "SOURCE_NOT_FOUND";

    /** The code of a table the catalog does not have, as in {@code bin/changeflow sql}. */
    static final String TABLE_NOT_FOUND = "TABLE_NOT_FOUND";

    /** The code of a statement of {@code sql -e} whose job failed while it ran (exit code 1). */
    static final String QUERY_FAILED = "QUERY_FAILED";

    /**
     * A failure of a command's job whose message carries its code (exit code 1, README "Exit
     * codes"), e.g. {@code statement 2: QUERY_FAILED: ...}.
     */
    static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A code: upper case words joined by underscores, followed by ": ". */
    private static final Pattern CODE =
            Pattern.compile("[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+: .*", Pattern.DOTALL);

    /** {@code :line:column} after a file's name. */
    private static final Pattern LINE_COLUMN = Pattern.compile("^:[0-9]+:[0-9]+");

    /**
     * The place a message starts with when it has one: a {@code .sql}, {@code .yaml} or {@code
     * .yml} file or {@code statement N}, optionally followed by {@code :line:column}, then ": ".
     */
    private static final Pattern PLACE =
            Pattern.compile("^(?:statement [0-9]+|\\S+\\.(?:sql|yaml|yml))(?::[0-9]+:[0-9]+)?: ");

    private CliErrors() {}

    /**
     * {@code SOURCE_NOT_FOUND: <what> not found: <path><more>}, e.g. {@code SOURCE_NOT_FOUND:
     * pipeline file not found: p.sql}.
     *
     * @param what the kind of file ({@code pipeline file}, {@code flows file}, {@code input})
     * @param more what follows the path ("" or, e.g., " (a folder, not a file)")
     */
    static IllegalArgumentException fileNotFound(String what, Object path, String more) {
        return new IllegalArgumentException(
                SOURCE_NOT_FOUND + ": " + what + " not found: " + path + more);
    }

    /**
     * {@code TABLE_NOT_FOUND: no table <id> in <catalog> catalog<more>}, e.g. {@code
     * TABLE_NOT_FOUND: no table shop.t in changeflow catalog (check --warehouse)}.
     */
    static IllegalArgumentException tableNotFound(Object id, String catalog, String more) {
        return new IllegalArgumentException(
                TABLE_NOT_FOUND + ": no table " + id + " in " + catalog + " catalog" + more);
    }

    /** {@code INVALID_OPTION: <detail>}: a flag, argument or option value the command refuses. */
    static IllegalArgumentException invalidOption(String detail) {
        return new IllegalArgumentException(INVALID_OPTION + ": " + detail);
    }

    /**
     * Whether {@code message} carries a code: first, or after its place (a file, {@code statement
     * N}, with or without {@code :line:column}).
     */
    static boolean hasCode(@Nullable String message) {
        String msg = String.valueOf(message);
        if (CODE.matcher(msg).matches()) {
            return true;
        }
        java.util.regex.Matcher place = PLACE.matcher(msg);
        return place.find() && CODE.matcher(msg.substring(place.end())).matches();
    }

    /**
     * The message of an error a command ended with, with a code (README "Exit codes": every error
     * has one): {@code message} itself when it carries one ({@link #hasCode}), else {@code
     * INVALID_OPTION} inserted after its place when it starts with a file's name ({@code p.sql:
     * INVALID_OPTION: ...}), else first ({@code INVALID_OPTION: --limit must be ...}). Used by
     * {@link Main} for the {@link IllegalArgumentException}s of bad usage that no check gave a more
     * precise code.
     */
    static String withCode(@Nullable String message) {
        String msg = String.valueOf(message);
        if (hasCode(msg)) {
            return msg;
        }
        java.util.regex.Matcher place = PLACE.matcher(msg);
        int at = place.find() ? place.end() : 0;
        String detail = msg.substring(at);
        String code = detail.startsWith("not valid YAML") ? SYNTAX_ERROR : INVALID_OPTION;
        return msg.substring(0, at) + code + ": " + detail;
    }

    /**
     * {@code e} with a code: see the class comment.
     *
     * @param file the flows file's name as its messages start with ({@code flows.yaml}); null when
     *     there is none
     * @return {@code e} itself when its message carries a code, else an exception of the same
     *     message with the code inserted (no cause: the message is the whole story)
     */
    static IllegalArgumentException coded(IllegalArgumentException e, @Nullable String file) {
        String msg = String.valueOf(e.getMessage());
        String place = "";
        if (file != null && msg.startsWith(file)) {
            String rest = msg.substring(file.length());
            java.util.regex.Matcher lc = LINE_COLUMN.matcher(rest);
            int end = file.length() + (lc.find() ? lc.end() : 0);
            if (msg.startsWith(": ", end)) {
                place = msg.substring(0, end + 2);
            }
        }
        String detail = msg.substring(place.length());
        if (CODE.matcher(detail).matches() || CODE.matcher(msg).matches()) {
            return e;
        }
        String code = detail.startsWith("not valid YAML") ? SYNTAX_ERROR : INVALID_OPTION;
        IllegalArgumentException coded = new IllegalArgumentException(place + code + ": " + detail);
        coded.setStackTrace(e.getStackTrace());
        return coded;
    }
}

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
 * ({@code SqlException}, {@code AutoCdcException}, ...) is kept.
 */
final class CliErrors {
    /** The code of an unknown or malformed option, flag or flows-file key. */
    static final String INVALID_OPTION = "INVALID_OPTION";

    /** The code of a flows file that is not YAML. */
    static final String SYNTAX_ERROR = "SYNTAX_ERROR";

    /** A code: upper case words joined by underscores, followed by ": ". */
    private static final Pattern CODE =
            Pattern.compile("[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+: .*", Pattern.DOTALL);

    /** {@code :line:column} after a file's name. */
    private static final Pattern LINE_COLUMN = Pattern.compile("^:[0-9]+:[0-9]+");

    private CliErrors() {}

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

package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Rewrites the {@code table_changes} form of the vendor seeds into a read of changeflow's
 * change-feed table with {@code OPTIONS} hints (design.md "Interfaces"):
 *
 * <pre>
 * table_changes('db.t', 5, 10)                 → `db`.`t$changes` /*+ OPTIONS('starting-version'='5', 'ending-version'='10') *&#47;
 * table_changes('db.t', '2026-05-01')          → `db`.`t$changes` /*+ OPTIONS('starting-timestamp'='2026-05-01') *&#47;
 * table_changes('`s`.`dotted.t`', 0)           → `s`.`dotted.t$changes` /*+ OPTIONS('starting-version'='0') *&#47;
 * </pre>
 *
 * <p>A bound is a version when it is an integer literal and a timestamp when it is a quoted string
 * (F3; the timestamp's form is checked when the statement is planned). The table name is one string
 * literal of dot-separated parts ({@code t}, {@code db.t} or {@code catalog.db.t}), each optionally
 * in backquotes. {@code table_changes} is matched case-insensitively as a whole word outside string
 * literals, quoted identifiers and comments; everything else is left as it is.
 *
 * <p>Usable from Java ({@code tEnv.executeSql(TableChangesRewrite.rewrite(sql))}) and from the
 * launcher ({@code changeflow sql -e ...}).
 */
@PublicEvolving
public final class TableChangesRewrite {

    private static final String FUNCTION = "table_changes";

    private TableChangesRewrite() {}

    /**
     * {@code sql} with every {@code table_changes(...)} call replaced.
     *
     * @throws CdfException {@code INVALID_CDC_OPTIONS} when a call is malformed (not 2 or 3
     *     arguments, a table name that is not a string literal, a bound that is neither an integer
     *     nor a string literal, an empty name part), naming the position and the accepted form
     */
    public static String rewrite(String sql) {
        StringBuilder out = new StringBuilder(sql.length());
        int i = 0;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            int skip = skipQuotedOrComment(sql, i);
            if (skip > i) {
                out.append(sql, i, skip);
                i = skip;
            } else if (isCallAt(sql, i)) {
                Call call = new Parser(sql, i + FUNCTION.length()).parse(i);
                out.append(call.replacement());
                i = call.end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** End of the literal, quoted identifier or comment starting at {@code i}, or {@code i}. */
    private static int skipQuotedOrComment(String sql, int i) {
        char c = sql.charAt(i);
        if (c == '\'' || c == '`' || c == '"') {
            int j = i + 1;
            while (j < sql.length()) {
                if (sql.charAt(j) == c) {
                    if (j + 1 < sql.length() && sql.charAt(j + 1) == c) {
                        j += 2;
                        continue;
                    }
                    return j + 1;
                }
                j++;
            }
            return sql.length();
        }
        if (sql.startsWith("--", i)) {
            int end = sql.indexOf('\n', i);
            return end < 0 ? sql.length() : end + 1;
        }
        if (sql.startsWith("/*", i)) {
            int end = sql.indexOf("*/", i + 2);
            return end < 0 ? sql.length() : end + 2;
        }
        return i;
    }

    private static boolean isCallAt(String sql, int i) {
        if (!sql.regionMatches(true, i, FUNCTION, 0, FUNCTION.length())) {
            return false;
        }
        if (i > 0 && isIdentifierChar(sql.charAt(i - 1))) {
            return false;
        }
        int j = i + FUNCTION.length();
        while (j < sql.length() && Character.isWhitespace(sql.charAt(j))) {
            j++;
        }
        return j < sql.length() && sql.charAt(j) == '(';
    }

    private static boolean isIdentifierChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$' || c == '.' || c == '`';
    }

    /** One parsed call: its end offset and its replacement. */
    private static final class Call {
        final int end;
        final List<String> nameParts;
        final Bound start;
        final Bound end_;

        Call(int end, List<String> nameParts, Bound start, Bound endBound) {
            this.end = end;
            this.nameParts = nameParts;
            this.start = start;
            this.end_ = endBound;
        }

        String replacement() {
            StringBuilder b = new StringBuilder();
            for (int k = 0; k < nameParts.size(); k++) {
                String part =
                        nameParts.get(k)
                                + (k == nameParts.size() - 1
                                        ? ChangeflowCatalog.CHANGES_SUFFIX
                                        : "");
                if (k > 0) {
                    b.append('.');
                }
                b.append('`').append(part.replace("`", "``")).append('`');
            }
            b.append(" /*+ OPTIONS(");
            b.append(start.option(true));
            if (end_ != null) {
                b.append(", ").append(end_.option(false));
            }
            return b.append(") */").toString();
        }
    }

    /** A bound: a version (integer literal) or a timestamp (string literal). */
    private static final class Bound {
        final String value;
        final boolean version;

        Bound(String value, boolean version) {
            this.value = value;
            this.version = version;
        }

        String option(boolean starting) {
            String key =
                    version
                            ? (starting
                                            ? ChangeFeedOptions.STARTING_VERSION
                                            : ChangeFeedOptions.ENDING_VERSION)
                                    .key()
                            : (starting
                                            ? ChangeFeedOptions.STARTING_TIMESTAMP
                                            : ChangeFeedOptions.ENDING_TIMESTAMP)
                                    .key();
            return "'" + key + "'='" + value.replace("'", "''") + "'";
        }
    }

    private static final class Parser {
        private final String sql;
        private int pos;

        Parser(String sql, int pos) {
            this.sql = sql;
            this.pos = pos;
        }

        Call parse(int callStart) {
            skipSpaces();
            expect('(', callStart);
            skipSpaces();
            if (peek() != '\'') {
                throw error(callStart, "the table name must be a string literal such as 'db.t'");
            }
            List<String> name = nameParts(stringLiteral(callStart), callStart);
            List<Bound> bounds = new ArrayList<>();
            skipSpaces();
            while (peek() == ',') {
                pos++;
                skipSpaces();
                bounds.add(bound(callStart));
                skipSpaces();
            }
            expect(')', callStart);
            if (bounds.isEmpty() || bounds.size() > 2) {
                throw error(
                        callStart,
                        "it takes a table name and one or two bounds, got "
                                + bounds.size()
                                + " bound(s)");
            }
            return new Call(pos, name, bounds.get(0), bounds.size() > 1 ? bounds.get(1) : null);
        }

        private Bound bound(int callStart) {
            if (peek() == '\'') {
                return new Bound(stringLiteral(callStart), false);
            }
            int from = pos;
            if (peek() == '-' || peek() == '+') {
                pos++;
            }
            while (pos < sql.length() && Character.isDigit(sql.charAt(pos))) {
                pos++;
            }
            String digits = sql.substring(from, pos);
            if (digits.isEmpty()
                    || !Character.isDigit(digits.charAt(digits.length() - 1))
                    || (pos < sql.length() && isIdentifierChar(sql.charAt(pos)))) {
                throw error(
                        callStart,
                        "a bound must be a version (an integer) or a timestamp in quotes");
            }
            return new Bound(digits.startsWith("+") ? digits.substring(1) : digits, true);
        }

        private String stringLiteral(int callStart) {
            StringBuilder value = new StringBuilder();
            pos++;
            while (pos < sql.length()) {
                char c = sql.charAt(pos++);
                if (c == '\'') {
                    if (peek() == '\'') {
                        value.append('\'');
                        pos++;
                        continue;
                    }
                    return value.toString();
                }
                value.append(c);
            }
            throw error(callStart, "a string literal is not closed");
        }

        private List<String> nameParts(String name, int callStart) {
            List<String> parts = new ArrayList<>();
            StringBuilder part = new StringBuilder();
            boolean quoted = false;
            boolean wasQuoted = false;
            for (int k = 0; k < name.length(); k++) {
                char c = name.charAt(k);
                if (c == '`') {
                    if (quoted && k + 1 < name.length() && name.charAt(k + 1) == '`') {
                        part.append('`');
                        k++;
                    } else {
                        quoted = !quoted;
                        wasQuoted = true;
                    }
                } else if (c == '.' && !quoted) {
                    parts.add(namePart(part, wasQuoted, name, callStart));
                    part.setLength(0);
                    wasQuoted = false;
                } else {
                    part.append(c);
                }
            }
            if (quoted) {
                throw error(callStart, "the table name '" + name + "' has an unclosed backquote");
            }
            parts.add(namePart(part, wasQuoted, name, callStart));
            if (parts.size() > 3) {
                throw error(
                        callStart,
                        "the table name '" + name + "' has more than 3 parts (catalog.db.table)");
            }
            return parts;
        }

        private String namePart(StringBuilder part, boolean quoted, String name, int callStart) {
            String value = quoted ? part.toString() : part.toString().trim();
            if (value.isEmpty()) {
                throw error(callStart, "the table name '" + name + "' has an empty part");
            }
            return value;
        }

        private char peek() {
            return pos < sql.length() ? sql.charAt(pos) : '\0';
        }

        private void skipSpaces() {
            while (pos < sql.length() && Character.isWhitespace(sql.charAt(pos))) {
                pos++;
            }
        }

        private void expect(char c, int callStart) {
            if (peek() != c) {
                throw error(callStart, "expected '" + c + "' at position " + pos);
            }
            pos++;
        }

        private CdfException error(int callStart, String problem) {
            int end = Math.min(sql.length(), Math.max(pos, callStart + FUNCTION.length()) + 1);
            return new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                    String.format(
                            "Cannot read %s... at position %d: %s. Use %s('db.t', start[, end]) where start and "
                                    + "end are versions (integers, e.g. 5) or timestamps in quotes (e.g. "
                                    + "'2026-05-01 12:00:00').",
                            sql.substring(callStart, end).toLowerCase(Locale.ROOT).strip(),
                            callStart,
                            problem,
                            FUNCTION));
        }
    }
}

package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.Internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a pipeline file into {@link SqlToken}s with Spark SQL's lexical rules, by hand (no regular
 * expressions): {@code --} line comments and {@code /* *}{@code /} block comments are skipped;
 * {@code 'text'} and {@code "text"} are string literals (a doubled quote or a backslash escapes the
 * next character; {@code \n}, {@code \t} and {@code \r} stand for line break, tab, carriage
 * return); {@code `name`} is an identifier ({@code ``} is a back-quote); words start with a letter
 * or {@code _} and go on with letters, digits and {@code _}; numbers are digits with an optional
 * fraction and exponent; two-character symbols are {@code => <= >= <> != :: ||}.
 *
 * @see SqlParser
 */
@Internal
final class SqlTokenizer {
    private static final String TWO_CHAR_SYMBOLS = "=> <= >= <> != :: ||";
    private static final String ONE_CHAR_SYMBOLS = "(),;.*=<>+-/%:[]{}|&^~!?";

    private final String text;
    private final String file;
    private int at;
    private int line = 1;
    private int lineStart;

    private SqlTokenizer(String text, String file) {
        this.text = text;
        this.file = file;
    }

    /**
     * @param text the file's text
     * @param file how positions name the file
     * @return the tokens, the last of kind {@link SqlToken.Kind#END}
     * @throws SqlException {@code SYNTAX_ERROR} for an unterminated string, identifier or comment,
     *     or a character that starts no token
     */
    static List<SqlToken> tokenize(String text, String file) {
        return new SqlTokenizer(text, file).run();
    }

    private List<SqlToken> run() {
        List<SqlToken> out = new ArrayList<>();
        while (true) {
            skipSpaceAndComments();
            if (at >= text.length()) {
                out.add(new SqlToken(SqlToken.Kind.END, "", "", at, at, position(at)));
                return out;
            }
            out.add(next());
        }
    }

    private SqlToken next() {
        int start = at;
        SqlPosition pos = position(start);
        char c = text.charAt(at);
        if (c == '\'' || c == '"') {
            String value = quoted(c, pos, "string literal");
            return new SqlToken(
                    SqlToken.Kind.STRING, text.substring(start, at), value, start, at, pos);
        }
        if (c == '`') {
            String value = quoted('`', pos, "back-quoted identifier");
            return new SqlToken(
                    SqlToken.Kind.QUOTED_IDENTIFIER,
                    text.substring(start, at),
                    value,
                    start,
                    at,
                    pos);
        }
        if (Character.isLetter(c) || c == '_') {
            while (at < text.length()
                    && (Character.isLetterOrDigit(text.charAt(at)) || text.charAt(at) == '_')) {
                at++;
            }
            String w = text.substring(start, at);
            return new SqlToken(SqlToken.Kind.WORD, w, w, start, at, pos);
        }
        if (Character.isDigit(c)) {
            digits();
            if (at + 1 < text.length()
                    && text.charAt(at) == '.'
                    && Character.isDigit(text.charAt(at + 1))) {
                at++;
                digits();
            }
            if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
                int mark = at;
                at++;
                if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
                    at++;
                }
                if (at < text.length() && Character.isDigit(text.charAt(at))) {
                    digits();
                } else {
                    at = mark;
                }
            }
            String n = text.substring(start, at);
            return new SqlToken(SqlToken.Kind.NUMBER, n, n, start, at, pos);
        }
        if (at + 1 < text.length()) {
            String two = text.substring(at, at + 2);
            if (TWO_CHAR_SYMBOLS.contains(two) && !two.contains(" ")) {
                at += 2;
                return new SqlToken(SqlToken.Kind.SYMBOL, two, two, start, at, pos);
            }
        }
        if (ONE_CHAR_SYMBOLS.indexOf(c) >= 0) {
            at++;
            String s = String.valueOf(c);
            return new SqlToken(SqlToken.Kind.SYMBOL, s, s, start, at, pos);
        }
        throw new SqlException(
                SqlException.Code.SYNTAX_ERROR,
                pos,
                "unexpected character '" + c + "' (U+" + String.format("%04X", (int) c) + ")");
    }

    private void digits() {
        while (at < text.length() && Character.isDigit(text.charAt(at))) {
            at++;
        }
    }

    /** Reads a quoted token starting at {@code at}; returns its value. */
    private String quoted(char quote, SqlPosition pos, String what) {
        StringBuilder value = new StringBuilder();
        at++;
        while (true) {
            if (at >= text.length()) {
                throw new SqlException(
                        SqlException.Code.SYNTAX_ERROR,
                        pos,
                        "unterminated "
                                + what
                                + ": no closing "
                                + quote
                                + " before the end of file");
            }
            char c = text.charAt(at);
            if (c == quote) {
                if (at + 1 < text.length() && text.charAt(at + 1) == quote) {
                    value.append(quote);
                    at += 2;
                    continue;
                }
                at++;
                return value.toString();
            }
            if (c == '\\' && quote != '`' && at + 1 < text.length()) {
                char e = text.charAt(at + 1);
                value.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e);
                at += 2;
                continue;
            }
            if (c == '\n') {
                line++;
                lineStart = at + 1;
            }
            value.append(c);
            at++;
        }
    }

    private void skipSpaceAndComments() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c == '\n') {
                at++;
                line++;
                lineStart = at;
            } else if (Character.isWhitespace(c)) {
                at++;
            } else if (c == '-' && at + 1 < text.length() && text.charAt(at + 1) == '-') {
                while (at < text.length() && text.charAt(at) != '\n') {
                    at++;
                }
            } else if (c == '/' && at + 1 < text.length() && text.charAt(at + 1) == '*') {
                SqlPosition pos = position(at);
                at += 2;
                while (true) {
                    if (at + 1 >= text.length()) {
                        throw new SqlException(
                                SqlException.Code.SYNTAX_ERROR,
                                pos,
                                "unterminated comment: no closing */ before the end of file");
                    }
                    if (text.charAt(at) == '*' && text.charAt(at + 1) == '/') {
                        at += 2;
                        break;
                    }
                    if (text.charAt(at) == '\n') {
                        line++;
                        lineStart = at + 1;
                    }
                    at++;
                }
            } else {
                return;
            }
        }
    }

    private SqlPosition position(int offset) {
        return new SqlPosition(file, line, offset - lineStart + 1);
    }
}

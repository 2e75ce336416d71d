package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.Internal;

/**
 * One token of a pipeline file: its kind, its text as written, its value (a string literal without
 * quotes and escapes, a back-quoted identifier without back-quotes) and where it stands.
 *
 * @param start offset of the first character in the file's text
 * @param end offset after the last character
 */
@Internal
record SqlToken(Kind kind, String text, String value, int start, int end, SqlPosition position) {

    /** Token kinds. */
    enum Kind {
        /** A bare word: keyword or identifier (keywords are not reserved). */
        WORD,
        /** {@code `name`}: an identifier that may hold any character. */
        QUOTED_IDENTIFIER,
        /** {@code 'text'} or {@code "text"} (Spark's rule: both are string literals). */
        STRING,
        /** Digits, with an optional fraction and exponent. */
        NUMBER,
        /** Punctuation or an operator: {@code ( ) , ; . * = => < > <= >= <> != + - / %} ... */
        SYMBOL,
        /** The end of the file. */
        END
    }

    /** Whether this is the bare word {@code w}, ignoring case. */
    boolean isWord(String w) {
        return kind == Kind.WORD && text.equalsIgnoreCase(w);
    }

    /** Whether this is the symbol {@code s}. */
    boolean isSymbol(String s) {
        return kind == Kind.SYMBOL && text.equals(s);
    }

    /** Whether this names something: a bare word or a back-quoted identifier. */
    boolean isIdentifier() {
        return kind == Kind.WORD || kind == Kind.QUOTED_IDENTIFIER;
    }

    /** How error messages show it: {@code 'text'}, or {@code end of file}. */
    String describe() {
        return kind == Kind.END ? "end of file" : "'" + text + "'";
    }

    /**
     * The token as Flink SQL reads it: a string literal single-quoted (quotes doubled), everything
     * else as written.
     */
    String flinkText() {
        return kind == Kind.STRING ? "'" + value.replace("'", "''") + "'" : text;
    }
}

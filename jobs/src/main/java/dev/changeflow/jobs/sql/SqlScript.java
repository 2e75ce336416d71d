package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A file of Flink SQL statements split at the {@code ;} that end them, with {@link SqlTokenizer}'s
 * lexical rules (the tokenizer of pipeline files): a {@code ;} inside a string literal, a
 * back-quoted identifier or a comment does not end a statement. Each statement keeps its text as
 * written (comments inside it, such as {@code /*+ OPTIONS(...) *}{@code /} hints, included) and
 * where it starts. Empty statements ({@code ;;}) are dropped. One difference to Flink's own lexer:
 * a backslash in a string literal escapes the next character, as in Spark SQL, so a literal that
 * ends in a backslash ({@code 'C:\'}) reads as unterminated here; build such a value with {@code
 * CONCAT} or {@code CHR(92)}.
 */
@PublicEvolving
public final class SqlScript {
    private SqlScript() {}

    /**
     * One statement of a script.
     *
     * @param text the statement as written, without its {@code ;}
     * @param position where its first token starts
     * @param words its leading bare words and identifiers, upper-cased for keywords (at most the
     *     first 8 tokens; a symbol ends the list), e.g. {@code [INSERT, INTO, GOLD]}
     * @param tokens the identifiers and symbols of the statement as written, in order ({@link
     *     #target()} reads them)
     */
    public record Statement(
            String text, SqlPosition position, List<String> words, List<String> tokens) {

        /** Whether the statement starts with these keywords (case-insensitive). */
        public boolean startsWith(String... keywords) {
            if (words.size() < keywords.length) {
                return false;
            }
            for (int i = 0; i < keywords.length; i++) {
                if (!words.get(i).equalsIgnoreCase(keywords[i])) {
                    return false;
                }
            }
            return true;
        }

        /**
         * The table an {@code INSERT INTO} or {@code INSERT OVERWRITE} statement writes: the dotted
         * name after {@code INTO}/{@code OVERWRITE} ({@code [[catalog.]db.]table}, back-quotes
         * removed), or an empty list when the statement is no INSERT or the name is missing.
         */
        public List<String> target() {
            if (!startsWith("INSERT")) {
                return List.of();
            }
            int i = 1;
            if (i < tokens.size()
                    && (tokens.get(i).equalsIgnoreCase("INTO")
                            || tokens.get(i).equalsIgnoreCase("OVERWRITE"))) {
                i++;
            }
            List<String> parts = new ArrayList<>();
            while (i < tokens.size()) {
                String t = tokens.get(i);
                if (t.isEmpty()
                        || !(t.charAt(0) == '`'
                                || t.charAt(0) == '_'
                                || Character.isLetter(t.charAt(0)))) {
                    return List.of();
                }
                parts.add(unquote(t));
                if (i + 1 < tokens.size() && tokens.get(i + 1).equals(".")) {
                    i += 2;
                } else {
                    break;
                }
            }
            return Collections.unmodifiableList(parts);
        }

        private static String unquote(String t) {
            return t.startsWith("`") && t.endsWith("`") && t.length() >= 2
                    ? t.substring(1, t.length() - 1).replace("``", "`")
                    : t;
        }
    }

    /**
     * Splits {@code text} into its statements.
     *
     * @param file how positions name the file
     * @throws SqlException {@code SYNTAX_ERROR} for an unterminated string, identifier or comment,
     *     or a character that starts no token
     */
    public static List<Statement> split(String text, String file) {
        List<SqlToken> tokens = SqlTokenizer.tokenize(text, file);
        List<Statement> out = new ArrayList<>();
        int first = -1;
        for (int i = 0; i < tokens.size(); i++) {
            SqlToken t = tokens.get(i);
            boolean end = t.kind() == SqlToken.Kind.END || t.isSymbol(";");
            if (!end) {
                if (first < 0) {
                    first = i;
                }
                continue;
            }
            if (first >= 0) {
                out.add(statement(text, tokens.subList(first, i)));
                first = -1;
            }
        }
        return Collections.unmodifiableList(out);
    }

    private static Statement statement(String text, List<SqlToken> tokens) {
        SqlToken first = tokens.get(0);
        SqlToken last = tokens.get(tokens.size() - 1);
        List<String> words = new ArrayList<>();
        for (SqlToken t : tokens) {
            if (words.size() == 8 || !t.isIdentifier()) {
                break;
            }
            words.add(
                    t.kind() == SqlToken.Kind.WORD ? t.text().toUpperCase(Locale.ROOT) : t.value());
        }
        List<String> texts = new ArrayList<>();
        for (SqlToken t : tokens) {
            texts.add(t.kind() == SqlToken.Kind.STRING ? "" : t.text());
        }
        return new Statement(
                text.substring(first.start(), last.end()),
                first.position(),
                Collections.unmodifiableList(words),
                Collections.unmodifiableList(texts));
    }
}

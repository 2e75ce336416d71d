package dev.changeflow.sources.files;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * How CSV files are read ({@code read_files(..., format => 'csv', header => ..., sep => ..., quote
 * => ..., escape => ..., nullValue => ..., comment => ...)}, docs/semantics.md S2): the vendor's
 * CSV options that change which cells a line holds. One set per job (its one file source).
 *
 * <ul>
 *   <li>{@code header} (default true): the first non-empty line of each file names the columns.
 *       False: every line is a record; the columns are the table's declared columns by position
 *       ({@link #withColumns}), else {@code _c0, _c1, ...}, as many as the first record of the
 *       first file has cells.
 *   <li>{@code sep} (alias {@code delimiter}, default {@code ,}): the one character between cells.
 *   <li>{@code quote} (default {@code "}): the one character that quotes a cell (RFC 4180; a
 *       doubled quote inside stands for one).
 *   <li>{@code escape} (default none): a character that makes the next one literal inside a quoted
 *       cell (for files written with {@code \"}; the vendor's default is {@code \}, RFC 4180 has
 *       none).
 *   <li>{@code nullValue} (default none): a cell with exactly this text is null (an empty cell is
 *       always null).
 *   <li>{@code comment} (default none): lines starting with this character are skipped.
 * </ul>
 */
@PublicEvolving
public final class CsvOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Header line, {@code ,} separator, {@code "} quote, no escape, no null text, no comments. */
    public static final CsvOptions DEFAULT = new CsvOptions(true, ',', '"', null, null, null, null);

    public final boolean header;
    public final char separator;
    public final char quote;
    @Nullable public final Character escape;
    @Nullable public final String nullValue;
    @Nullable public final Character comment;

    /**
     * With {@code header} false: the names of the cells by position (a table's declared column
     * list), or null for {@code _c0, _c1, ...}.
     */
    @Nullable public final List<String> columns;

    private transient ObjectReader reader;

    /**
     * @throws IllegalArgumentException when two of separator, quote, escape and comment are the
     *     same character, or one of them is a line break
     */
    public CsvOptions(
            boolean header,
            char separator,
            char quote,
            @Nullable Character escape,
            @Nullable String nullValue,
            @Nullable Character comment) {
        this(header, separator, quote, escape, nullValue, comment, null);
    }

    private CsvOptions(
            boolean header,
            char separator,
            char quote,
            @Nullable Character escape,
            @Nullable String nullValue,
            @Nullable Character comment,
            @Nullable List<String> columns) {
        this.header = header;
        this.columns = columns == null ? null : List.copyOf(columns);
        this.separator = separator;
        this.quote = quote;
        this.escape = escape;
        this.nullValue = nullValue;
        this.comment = comment;
        String chars =
                ""
                        + separator
                        + quote
                        + (escape == null ? "" : escape)
                        + (comment == null ? "" : comment);
        for (int i = 0; i < chars.length(); i++) {
            char c = chars.charAt(i);
            if (c == '\n' || c == '\r') {
                throw new IllegalArgumentException("a CSV option cannot be a line break");
            }
            if (chars.indexOf(c, i + 1) >= 0) {
                throw new IllegalArgumentException(
                        "the CSV options sep, quote, escape and comment must be different"
                                + " characters; '"
                                + c
                                + "' is given twice");
            }
        }
    }

    /**
     * These options with the cells named by position ({@code header} false and a declared column
     * list: the vendor reads the columns of a file without a header by position).
     */
    public CsvOptions withColumns(List<String> names) {
        return new CsvOptions(header, separator, quote, escape, nullValue, comment, names);
    }

    /** A reader of one line's cells with these options (Jackson's CSV parser). */
    ObjectReader reader() {
        if (reader == null) {
            CsvSchema schema =
                    CsvSchema.emptySchema().withColumnSeparator(separator).withQuoteChar(quote);
            schema = escape == null ? schema.withoutEscapeChar() : schema.withEscapeChar(escape);
            reader =
                    new CsvMapper()
                            .readerFor(String[].class)
                            .with(CsvParser.Feature.WRAP_AS_ARRAY)
                            .with(schema);
        }
        return reader;
    }

    /** Whether a line (its first byte) is a comment to skip. */
    boolean isComment(byte[] line, long length) {
        return comment != null
                && comment < 128
                && length > 0
                && line[0] == (byte) comment.charValue();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof CsvOptions)) {
            return false;
        }
        CsvOptions other = (CsvOptions) o;
        return header == other.header
                && separator == other.separator
                && quote == other.quote
                && Objects.equals(escape, other.escape)
                && Objects.equals(nullValue, other.nullValue)
                && Objects.equals(comment, other.comment)
                && Objects.equals(columns, other.columns);
    }

    @Override
    public int hashCode() {
        return Objects.hash(header, separator, quote, escape, nullValue, comment, columns);
    }

    @Override
    public String toString() {
        return "header="
                + header
                + ", sep="
                + separator
                + ", quote="
                + quote
                + ", escape="
                + escape
                + ", nullValue="
                + nullValue
                + ", comment="
                + comment
                + (columns == null ? "" : ", columns=" + columns);
    }
}

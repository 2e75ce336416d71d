package dev.changeflow.sources.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.MappingIterator;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.io.compression.InflaterInputStreamFactory;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.compression.StandardDeCompressors;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * CSV lines as plain JSON rows ({@code read_files(..., format => 'csv')}, docs/semantics.md S2):
 * the first non-empty line of a file is its header (the column names); every later line is one
 * record, read with Jackson's CSV parser (RFC 4180 quoting, {@code ,} separator, {@code "} quote;
 * as the vendor's default {@code multiLine = false}, a record does not span lines) and turned into
 * the JSON object {@code {"header1": cell1, ...}} the plain-JSON decoder reads.
 *
 * <p>Cells: an empty cell (or one equal to {@code nullValue}) is null (as the vendor reads CSV);
 * every other cell is written as a JSON string and the line is marked {@link SourceLine#textCells},
 * so the decoder reads each cell's text by its column's type: an integer or BOOLEAN from {@code 42}
 * / {@code true}, a DECIMAL or DOUBLE from a decimal number, a DATE or TIMESTAMP from an ISO text
 * only (a cell such as {@code 20261204} is never days or microseconds since the epoch, as a JSON
 * number of a Debezium record would be); a cell that does not fit its column is {@code
 * TYPE_MISMATCH} with the file and line.
 *
 * <p>A line that does not parse as CSV, or has another number of fields than the header, is marked
 * {@link SourceLine#malformed} (quarantined as {@code MALFORMED_CSV} with its file, line and raw
 * bytes).
 */
@Internal
final class CsvLines {
    private CsvLines() {}

    private static final JsonFactory JSON = new JsonFactory();

    /** A file's header: its 1-based line and column names, or why it has none. */
    static final class Header {
        final long line;
        @Nullable final String[] names;
        @Nullable final String error;

        Header(long line, @Nullable String[] names, @Nullable String error) {
            this.line = line;
            this.names = names;
            this.error = error;
        }
    }

    /**
     * The header of the file of {@code split}: its first non-empty line, decompressed by the file's
     * extension as the reader does.
     */
    static Header header(FileSourceSplit split, CsvOptions options) {
        return header(split.path(), options);
    }

    /**
     * The header of CSV file {@code file} (see {@link #header(FileSourceSplit, CsvOptions)}); with
     * {@code header = false} the columns {@code _c0, _c1, ...} of its first record (line 0: no line
     * is dropped).
     */
    static Header header(Path file, CsvOptions options) {
        String path = file.toString();
        try (InputStream raw = file.getFileSystem().open(file);
                InputStream in = decompressed(file, raw);
                BufferedReader r =
                        new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            long n = 0;
            String line;
            while ((line = r.readLine()) != null) {
                n++;
                byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
                if (!line.isEmpty() && !options.isComment(bytes, bytes.length)) {
                    return options.header
                            ? header(path, n, bytes, options)
                            : positional(path, n, bytes, options);
                }
            }
            return new Header(
                    0,
                    null,
                    "CSV file "
                            + path
                            + (options.header ? " has no header line" : " has no record"));
        } catch (IOException e) {
            return new Header(0, null, "the header of CSV file " + path + " cannot be read: " + e);
        }
    }

    private static InputStream decompressed(Path file, InputStream raw) throws IOException {
        InflaterInputStreamFactory<?> f =
                StandardDeCompressors.getDecompressorForFileName(file.getPath());
        return f == null ? raw : f.create(raw);
    }

    /**
     * Columns by position: the declared ones ({@link CsvOptions#columns}), else {@code _c0, _c1,
     * ...}, as many as the record at {@code line} has cells.
     */
    private static Header positional(String path, long line, byte[] bytes, CsvOptions options) {
        if (options.columns != null) {
            return new Header(0, options.columns.toArray(new String[0]), null);
        }
        String[] cells;
        try {
            cells = cells(bytes, options);
        } catch (IOException e) {
            return new Header(
                    0,
                    null,
                    "the first record (line "
                            + line
                            + ") of CSV file "
                            + path
                            + " does not parse: "
                            + message(e));
        }
        String[] names = new String[cells.length];
        for (int i = 0; i < names.length; i++) {
            names[i] = "_c" + i;
        }
        return new Header(0, names, null);
    }

    /** The header at {@code line} of file {@code path}. */
    static Header header(String path, long line, byte[] bytes, CsvOptions options) {
        String[] names;
        try {
            names = cells(bytes, options);
            if (names.length > 0 && names[0].startsWith("\uFEFF")) {
                names[0] = names[0].substring(1); // a UTF-8 byte order mark
            }
        } catch (IOException e) {
            return badHeader(path, line, "does not parse: " + message(e));
        }
        Set<String> seen = new HashSet<>();
        Map<String, String> folded = new HashMap<>();
        for (String name : names) {
            String other = folded.putIfAbsent(name.toLowerCase(Locale.ROOT), name);
            if (other != null && !other.equals(name)) {
                // S2: header names match the columns ignoring case, so these two are one column
                return badHeader(
                        path,
                        line,
                        "names columns '"
                                + other
                                + "' and '"
                                + name
                                + "', which differ only in case (header names match the"
                                + " table's columns ignoring case)");
            }
            if (name.isEmpty() || !seen.add(name)) {
                return badHeader(
                        path,
                        line,
                        name.isEmpty()
                                ? "has an empty column name"
                                : "names column '" + name + "' twice");
            }
        }
        return new Header(line, names, null);
    }

    /** A refused header: "the header (line n) of CSV file p " followed by {@code what}. */
    private static Header badHeader(String path, long line, String what) {
        return new Header(
                line, null, "the header (line " + line + ") of CSV file " + path + " " + what);
    }

    /** The cells of one CSV line. */
    static String[] cells(byte[] line, CsvOptions options) throws IOException {
        try (MappingIterator<String[]> it = options.reader().readValues(line)) {
            if (!it.hasNextValue()) {
                return new String[0];
            }
            String[] cells = it.nextValue();
            if (it.hasNextValue()) {
                throw new IOException("the line holds more than one record");
            }
            return cells;
        } catch (RuntimeException e) {
            // Jackson wraps parse errors of an iterator in RuntimeJsonMappingException
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * Turns data line {@code l} of a file with {@code header} into its JSON row in place, or marks
     * it malformed.
     */
    static void convert(Header header, SourceLine l, CsvOptions options) {
        if (header.names == null) {
            l.malformed = header.error;
            return;
        }
        String[] cells;
        try {
            cells = cells(l.bytes, options);
        } catch (IOException e) {
            l.malformed = "line " + l.line + " is not a CSV record: " + message(e);
            return;
        }
        if (cells.length != header.names.length) {
            l.malformed =
                    "line "
                            + l.line
                            + " has "
                            + cells.length
                            + " field(s), "
                            + (header.line > 0
                                    ? "its file's header (line " + header.line + ") has "
                                    : options.columns != null
                                            ? "the declared column list has "
                                            : "the file's first record has ")
                            + header.names.length;
            return;
        }
        try {
            byte[] json = json(header.names, cells, options.nullValue);
            l.bytes = json;
            l.length = json.length;
            l.textCells = true;
        } catch (IOException e) {
            throw new IllegalStateException("writing JSON to memory failed", e);
        }
    }

    private static byte[] json(String[] names, String[] cells, @Nullable String nullValue)
            throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 16 * cells.length);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            for (int i = 0; i < names.length; i++) {
                g.writeFieldName(names[i]);
                String c = cells[i];
                if (c.isEmpty() || c.equals(nullValue)) {
                    g.writeNull();
                } else {
                    g.writeString(c);
                }
            }
            g.writeEndObject();
        }
        return out.toByteArray();
    }

    private static String message(Exception e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}

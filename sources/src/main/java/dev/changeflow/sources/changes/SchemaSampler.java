package dev.changeflow.sources.changes;

import dev.changeflow.sources.files.FileGlob;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.UnresolvedUserDefinedType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Derives the data columns of tables from sample records (semantics.md A5 "Types, routing and table
 * names"), and parses declared Flink DDL column lists.
 *
 * <p><b>Sampling</b> ({@link #sample}, {@link #sampleFlinkPaths}) reads the given files (plain or
 * {@code .gz}; a directory means every file below it whose name does not start with {@code .} or
 * {@code _}, in path order) line by line until every wanted table has been seen or {@code maxLines}
 * lines were read. Each line is parsed and routed as {@link ChangeRecordDecoder} does it, each
 * wanted name standing for a flow of that one source name: the same record forms, and a record
 * belongs to a wanted name when the name equals its topic, {@code source.schema.source.table},
 * {@code source.table} or the topic's last segment (in that order, {@link DecoderFlow}); a record
 * naming neither topic nor table belongs to the only wanted name. Lines the decoder would reject
 * before routing (not JSON, malformed, a form member of the wrong kind) and tombstones describe no
 * schema and are passed over. With two or more wanted names, once the namespace is known, a line
 * that does not contain the last dot-separated segment of any wanted name (nor a <code>&#92;u
 * </code> escape that could spell one) is passed over without being parsed: the parser would route
 * it to no wanted name, so the sample is the same, at a fraction of the cost when the first record
 * of a table comes late in a capture. A damaged gzip ends that file's sample (logged).
 *
 * <p><b>Types</b> come from Debezium's schema wrapper when present (the envelope's {@code after}
 * struct: {@code int32} → INT, {@code int64} → BIGINT, {@code MicroTimestamp} → TIMESTAMP(6),
 * {@code Timestamp} → TIMESTAMP(3), {@code Date} → DATE, Connect {@code Decimal} → DECIMAL(p, s),
 * {@code string} → STRING, {@code boolean}, {@code float64} → DOUBLE, {@code bytes} → BYTES; {@code
 * optional} → nullable), taken from the first such record of the table. Otherwise they are inferred
 * from the JSON values of every sampled record of the table (the {@code after} image, else {@code
 * before}; the row itself for plain JSON): integer → BIGINT, decimal number → DOUBLE (an integer
 * and a decimal column → DOUBLE), string → STRING, boolean → BOOLEAN, object → ROW, array → ARRAY,
 * only nulls → STRING, conflicting kinds → STRING; all nullable; field order as first seen.
 */
@PublicEvolving
public final class SchemaSampler {
    private static final Logger LOG = LoggerFactory.getLogger(SchemaSampler.class);

    /** Default cap on lines read. */
    public static final long DEFAULT_MAX_LINES = 2_000_000L;

    private SchemaSampler() {}

    /** What sampling found: the data columns per wanted table, and the namespace. */
    @PublicEvolving
    public static final class Result {
        private final Map<String, RowType> types;
        private final Map<String, String> connectors;
        @Nullable private final String namespace;
        private final long linesRead;

        Result(
                Map<String, RowType> types,
                Map<String, String> connectors,
                @Nullable String namespace,
                long linesRead) {
            this.types = Collections.unmodifiableMap(types);
            this.connectors = Collections.unmodifiableMap(connectors);
            this.namespace = namespace;
            this.linesRead = linesRead;
        }

        /**
         * Per wanted name that was seen in Debezium records naming their connector, the {@code
         * source.connector} of its first such record (postgresql, mysql, ...): it chooses the
         * flow's default sequence (semantics.md A5).
         */
        public Map<String, String> connectors() {
            return connectors;
        }

        /** Per wanted name that was seen, its data columns (in the order the names were given). */
        public Map<String, RowType> types() {
            return types;
        }

        /**
         * The namespace of the captured tables (A5): {@code source.schema} of the first Debezium
         * record sampled ({@code source.db} when it has no schema, as with MySQL), or null (plain
         * JSON, no record).
         */
        @Nullable
        public String namespace() {
            return namespace;
        }

        public long linesRead() {
            return linesRead;
        }
    }

    /** Samples local files or directories; see {@link #sampleFlinkPaths}. */
    public static Result sample(
            List<java.nio.file.Path> paths, ChangeRecordFormat format, Collection<String> tables)
            throws IOException {
        return sample(paths, format, tables, DEFAULT_MAX_LINES);
    }

    /** Samples local files or directories; see {@link #sampleFlinkPaths}. */
    public static Result sample(
            List<java.nio.file.Path> paths,
            ChangeRecordFormat format,
            Collection<String> tables,
            long maxLines)
            throws IOException {
        List<Path> flinkPaths = new ArrayList<>();
        for (java.nio.file.Path p : paths) {
            flinkPaths.add(new Path(p.toAbsolutePath().toUri()));
        }
        return sampleFlinkPaths(flinkPaths, format, tables, maxLines);
    }

    /**
     * Samples the files for the wanted tables (and the namespace, for Debezium).
     *
     * @param paths files or directories (any Flink file system: local, s3://, ...)
     * @param format the records' format
     * @param tables the wanted table names (as in {@link DecoderFlow#sourceNames()}); may be empty
     *     to learn only the namespace
     * @param maxLines the most lines to read over all files
     * @return the types of the wanted names that were seen (names not seen within the cap are
     *     absent) and the namespace
     * @throws IOException when a file cannot be listed or read (other than gzip damage)
     */
    public static Result sampleFlinkPaths(
            List<Path> paths, ChangeRecordFormat format, Collection<String> tables, long maxLines)
            throws IOException {
        Sampling sampling = new Sampling(format, tables);
        // with no table wanted, read until the namespace is known (the first Debezium record)
        boolean wantNamespace = format == ChangeRecordFormat.DEBEZIUM_JSON && tables.isEmpty();
        long lines = 0;
        files:
        for (Path file : listFiles(paths)) {
            if (lines >= maxLines) {
                break;
            }
            try (SampleLines r = new SampleLines(open(file))) {
                while (lines < maxLines && r.next()) {
                    lines++;
                    if (sampling.passesOver(r.buf, r.start, r.end)) {
                        continue;
                    }
                    sampling.sample(r.line(), RecordForm.RECORD, null, null);
                    if (sampling.allSeen() && (!wantNamespace || sampling.namespace != null)) {
                        break files;
                    }
                }
            } catch (EOFException | ZipException e) {
                LOG.warn(
                        "Damaged compressed file {} after {} lines in total: {}",
                        file,
                        lines,
                        e.toString());
            }
        }
        Result result = sampling.result(lines);
        LOG.info(
                "Sampled {} lines; tables found: {}; namespace: {}",
                lines,
                result.types().keySet(),
                result.namespace());
        return result;
    }

    /** A Kafka record to sample: its topic, key (null = none) and value (null = tombstone). */
    @PublicEvolving
    public record KafkaSample(String topic, @Nullable byte[] key, @Nullable byte[] value) {}

    /**
     * Samples Kafka records as {@link #sampleFlinkPaths} samples file lines (same routing, types,
     * connectors and namespace; A5 "Default sequence per connector"): each value is read as a Kafka
     * value of its topic, with its key; tombstones and values that do not parse are skipped.
     *
     * @param records in the order to sample (the first record of a table names its connector)
     * @param tables the source names of the flows to sample
     */
    public static Result sampleKafka(
            List<KafkaSample> records, ChangeRecordFormat format, Collection<String> tables)
            throws IOException {
        Sampling sampling = new Sampling(format, tables);
        long read = 0;
        for (KafkaSample r : records) {
            read++;
            if (r.value() != null) {
                sampling.sample(
                        r.value(),
                        RecordForm.VALUE,
                        r.topic(),
                        r.key() != null && r.key().length > 0 ? r.key() : null);
            }
        }
        Result result = sampling.result(read);
        LOG.info(
                "Sampled {} Kafka records; tables found: {}; connectors: {}",
                read,
                result.types().keySet(),
                result.connectors());
        return result;
    }

    /**
     * What one sampling pass has learnt so far: the decoder's own parser and routing (one route per
     * wanted table name), the types from a Kafka Connect schema or inferred from the values, the
     * connector per table, and the namespace of the first Debezium record.
     */
    private static final class Sampling {
        private final Set<String> wanted;
        private final List<String> names;
        private final FlowRouter router;
        private final ChangeRecordParser parser;
        private final Map<String, RowType> fromSchema = new LinkedHashMap<>();
        private final Map<String, Inferred> inferred = new LinkedHashMap<>();
        private final Map<String, String> connectors = new LinkedHashMap<>();
        @Nullable private String namespace;

        Sampling(ChangeRecordFormat format, Collection<String> tables) {
            this.wanted = new LinkedHashSet<>(tables);
            this.names = new ArrayList<>(wanted);
            FlowRouter.Builder routes = FlowRouter.builder();
            for (String name : names) {
                routes.add(name, List.of(name));
            }
            this.router = routes.build();
            this.parser = ChangeRecordParser.forFormat(format, ChangeRecordDecoder.jsonFactory());
            this.namespaces = format == ChangeRecordFormat.DEBEZIUM_JSON;
            this.literalNames = LiteralNames.of(names);
        }

        /** Whether records of the format name a namespace (only Debezium's do). */
        private final boolean namespaces;

        /** What a line routed to a wanted name contains, or null to pass over no line. */
        @Nullable private final LiteralNames literalNames;

        /**
         * Whether the line {@code b[start, end)} can be passed over unparsed because parsing it
         * would teach nothing: the namespace is known (or the format has none), and {@link
         * LiteralNames#mayName} says the parser would route it to no wanted name — the same sample,
         * without the parse (semantics.md A5 "Types, routing and table names").
         */
        boolean passesOver(byte[] b, int start, int end) {
            return literalNames != null
                    && (!namespaces || namespace != null)
                    && !literalNames.mayName(b, start, end);
        }

        boolean allSeen() {
            for (String w : wanted) {
                if (!fromSchema.containsKey(w) && !inferred.containsKey(w)) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Learns from one record; records that are not JSON or do not parse are skipped (they do
         * not describe a schema; the decoder quarantines them).
         */
        void sample(byte[] record, int level, @Nullable String topic, @Nullable byte[] key)
                throws IOException {
            if (RecordForm.notJson(record) != null) {
                return;
            }
            try {
                learn(record, level, topic, key);
            } catch (JsonProcessingException e) {
                // skipped: the decoder quarantines it
            }
        }

        private void learn(byte[] record, int level, @Nullable String topic, @Nullable byte[] key)
                throws IOException {
            if (parser.parse(record, level, topic, key) != ChangeRecordParser.Parsed.RECORD
                    || parser.form.structureError != null) {
                return; // a tombstone, or a record the decoder quarantines before routing
            }
            if (namespace == null) {
                namespace = parser.namespace();
            }
            int route = router.route(parser.topic(), parser.sourceSchema(), parser.sourceTable());
            if (route == FlowRouter.NONE) {
                return;
            }
            String name = names.get(route);
            if (parser.connector() != null) {
                connectors.putIfAbsent(name, parser.connector());
            }
            if (fromSchema.containsKey(name)) {
                return;
            }
            JsonFields image = parser.sampleImage();
            if (image == null) {
                return;
            }
            ConnectSchema imageSchema = parser.imageSchema(parser.sampleImageName());
            if (imageSchema != null && "struct".equals(imageSchema.type)) {
                fromSchema.put(name, imageSchema.toRowType(true));
                inferred.remove(name);
                return;
            }
            inferred.computeIfAbsent(name, k -> new Inferred(Inferred.ROW))
                    .mergeObject(image, parser.factory);
        }

        Result result(long read) {
            Map<String, RowType> types = new LinkedHashMap<>();
            for (String t : wanted) {
                if (fromSchema.containsKey(t)) {
                    types.put(t, fromSchema.get(t));
                } else if (inferred.containsKey(t)) {
                    types.put(t, (RowType) inferred.get(t).toLogicalType());
                }
            }
            return new Result(types, connectors, namespace, read);
        }
    }

    /**
     * The bytes a record that {@link FlowRouter} routes to one of several names must contain
     * literally: the last dot-separated segment of that name. The record's topic or {@code
     * source.table} (MongoDB: {@code source.collection}) is the name itself, the table of a {@code
     * schema.table} name, or ends in the name (the topic's last segment), and a JSON string can
     * hide a segment's characters only with <code>&#92;u</code> escapes when the segment has no
     * {@code "}, {@code \}, {@code /} or control character. So a line with none of the segments and
     * no <code>&#92;u</code> is routed to none of the names.
     */
    static final class LiteralNames {
        /** The UTF-8 bytes of the last dot-separated segment of every name. */
        private final byte[][] segments;

        /** The length of the shortest segment. */
        private final int shortest;

        /**
         * Per byte value, how far a window of {@link #shortest} bytes ending in it may move without
         * passing over the start of a segment: the least distance from that byte's places among the
         * first {@code shortest - 1} bytes of any segment to the window's end; {@code shortest} for
         * a byte in none (Horspool's shift, for several patterns).
         */
        private final int[] shifts = new int[256];

        private LiteralNames(byte[][] segments) {
            this.segments = segments;
            int m = Integer.MAX_VALUE;
            for (byte[] s : segments) {
                m = Math.min(m, s.length);
            }
            this.shortest = m;
            java.util.Arrays.fill(shifts, m);
            for (byte[] s : segments) {
                for (int j = 0; j < m - 1; j++) {
                    int v = s[j] & 0xff;
                    shifts[v] = Math.min(shifts[v], m - 1 - j);
                }
            }
        }

        /**
         * The literal names of {@code names}, or null when a line cannot be judged by them: a
         * single name (a record naming neither topic nor table belongs to it), or a segment that is
         * empty or has a character JSON may escape other than by <code>&#92;u</code> ({@code "},
         * {@code \}, {@code /}, control characters) or that malformed UTF-8 may become (U+FFFD).
         */
        @Nullable
        static LiteralNames of(List<String> names) {
            if (names.size() < 2) {
                return null;
            }
            byte[][] out = new byte[names.size()][];
            for (int i = 0; i < names.size(); i++) {
                String n = names.get(i);
                String segment = n.substring(n.lastIndexOf('.') + 1);
                if (segment.isEmpty()) {
                    return null;
                }
                for (int c = 0; c < segment.length(); c++) {
                    char ch = segment.charAt(c);
                    if (ch < 0x20 || ch == '"' || ch == '\\' || ch == '/' || ch == '\uFFFD') {
                        return null;
                    }
                }
                out[i] = segment.getBytes(StandardCharsets.UTF_8);
            }
            return new LiteralNames(out);
        }

        /**
         * Whether {@code b[start, end)} contains one of the segments or a <code>&#92;u</code> (then
         * it may be routed to one of the names); false means it is routed to none.
         */
        boolean mayName(byte[] b, int start, int end) {
            int m = shortest;
            for (int i = start; i + m <= end; i += shifts[b[i + m - 1] & 0xff]) {
                byte last = b[i + m - 1];
                for (byte[] s : segments) {
                    if (s[m - 1] == last && matchesAt(b, i, end, s)) {
                        return true;
                    }
                }
            }
            for (int i = start; i + 1 < end; i++) {
                if (b[i] == '\\' && b[i + 1] == 'u') {
                    return true;
                }
            }
            return false;
        }

        private static boolean matchesAt(byte[] b, int at, int end, byte[] s) {
            if (end - at < s.length) {
                return false;
            }
            for (int j = 0; j < s.length; j++) {
                if (b[at + j] != s[j]) {
                    return false;
                }
            }
            return true;
        }
    }

    private static InputStream open(Path file) throws IOException {
        FileSystem fs = file.getFileSystem();
        InputStream in = fs.open(file);
        try {
            if (file.getName().endsWith(".gz") || file.getName().endsWith(".gzip")) {
                in = new GZIPInputStream(in, 64 * 1024);
            }
        } catch (IOException e) {
            in.close();
            throw e;
        }
        return in;
    }

    /**
     * The lines of a stream as {@link BufferedReader#readLine()} splits them (a line ends at {@code
     * \n}, {@code \r} or {@code \r\n}; a last line without terminator is a line; an empty line is a
     * line), each a slice {@code buf[start, end)} of the raw bytes, so that lines the sampler
     * passes over are never decoded. {@link #line()} gives a line's bytes as {@code
     * readLine().getBytes(UTF_8)} gave them: the raw bytes when they are ASCII, else the line
     * decoded from UTF-8 (malformed input replaced, as the reader did) and encoded again.
     */
    static final class SampleLines implements java.io.Closeable {
        private final InputStream in;
        byte[] buf = new byte[256 * 1024];

        /** The current line: {@code buf[start, end)}. */
        int start;

        int end;
        private int pos;
        private int lim;

        /** The last line ended at a {@code \r}: a {@code \n} right after it belongs to it. */
        private boolean skipLf;

        private boolean eof;

        SampleLines(InputStream in) {
            this.in = in;
        }

        /** Moves to the next line; false at the end of the stream. */
        boolean next() throws IOException {
            int scanned = pos;
            while (true) {
                if (skipLf && pos < lim) {
                    if (buf[pos] == '\n') {
                        pos++;
                        scanned = pos;
                    }
                    skipLf = false;
                }
                for (int i = scanned; i < lim; i++) {
                    byte b = buf[i];
                    if (b == '\n' || b == '\r') {
                        start = pos;
                        end = i;
                        pos = i + 1;
                        skipLf = b == '\r';
                        return true;
                    }
                }
                if (eof) {
                    if (pos < lim) {
                        start = pos;
                        end = lim;
                        pos = lim;
                        return true;
                    }
                    return false;
                }
                // no terminator in buf[pos, lim): keep those bytes, read more
                int kept = lim - pos;
                if (kept == buf.length) {
                    buf = java.util.Arrays.copyOf(buf, buf.length * 2);
                } else if (pos > 0) {
                    System.arraycopy(buf, pos, buf, 0, kept);
                }
                pos = 0;
                lim = kept;
                scanned = kept;
                int n = in.read(buf, lim, buf.length - lim);
                if (n < 0) {
                    eof = true;
                } else {
                    lim += n;
                }
            }
        }

        /** The current line's bytes, as {@code readLine().getBytes(UTF_8)} gave them. */
        byte[] line() {
            for (int i = start; i < end; i++) {
                if (buf[i] < 0) {
                    return new String(buf, start, end - start, StandardCharsets.UTF_8)
                            .getBytes(StandardCharsets.UTF_8);
                }
            }
            return java.util.Arrays.copyOfRange(buf, start, end);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /**
     * Files under the paths (directories recursively, hidden {@code .}/{@code _} names skipped; a
     * glob pattern: the files under its base that match it, {@link FileGlob}), sorted by path.
     */
    static List<Path> listFiles(List<Path> paths) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path input : paths) {
            Path p = FileGlob.base(input);
            FileSystem fs = dev.changeflow.sources.files.InputFileSystems.of(p);
            FileStatus st = fs.getFileStatus(p);
            if (st.isDir()) {
                List<Path> found = new ArrayList<>();
                collect(fs, st, found);
                found.sort(Comparator.comparing(Path::toString));
                if (FileGlob.isPattern(input.toUri().getPath())) {
                    // S2: a pattern's files under its base that match it
                    found.removeIf(FileGlob.of(List.of(input)).negate());
                }
                out.addAll(found);
            } else {
                out.add(p);
            }
        }
        return out;
    }

    private static void collect(FileSystem fs, FileStatus dir, List<Path> out) throws IOException {
        FileStatus[] children = fs.listStatus(dir.getPath());
        if (children == null) {
            return;
        }
        for (FileStatus c : children) {
            String n = c.getPath().getName();
            if (n.startsWith(".") || n.startsWith("_")) {
                continue;
            }
            if (c.isDir()) {
                collect(fs, c, out);
            } else {
                out.add(c.getPath());
            }
        }
    }

    /**
     * Parses a Flink DDL column list such as {@code "tid INT, bid INT NOT NULL, mtime TIMESTAMP(6),
     * filler STRING"} into a ROW type: columns split at top-level commas (commas inside {@code ()}
     * or {@code <>} belong to the type), each a name (optionally in backticks) and a type
     * understood by Flink's {@link LogicalTypeParser} (including {@code NOT NULL}), optionally
     * followed by {@code COMMENT 'text'} (a doubled quote stands for one), which becomes the
     * field's description.
     *
     * @throws IllegalArgumentException naming the column that does not parse, or a duplicate name
     */
    public static RowType parseColumns(String ddlColumnList) {
        List<RowType.RowField> fields = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (String part : splitTopLevel(ddlColumnList)) {
            String col = part.trim();
            if (col.isEmpty()) {
                throw new IllegalArgumentException(
                        "empty column in column list '" + ddlColumnList + "'");
            }
            String name;
            String rest;
            if (col.startsWith("`")) {
                int close = col.indexOf('`', 1);
                if (close < 0) {
                    throw new IllegalArgumentException("unclosed backtick in column '" + col + "'");
                }
                name = col.substring(1, close);
                rest = col.substring(close + 1).trim();
            } else {
                int sp = 0;
                while (sp < col.length() && !Character.isWhitespace(col.charAt(sp))) {
                    sp++;
                }
                name = col.substring(0, sp);
                rest = col.substring(sp).trim();
            }
            String comment = null;
            Matcher commented = COMMENT.matcher(rest);
            if (commented.matches()) {
                rest = commented.group(1).trim();
                comment = commented.group(2).replace("''", "'");
            }
            if (rest.isEmpty()) {
                throw new IllegalArgumentException(
                        "column '" + name + "' has no type in column list '" + ddlColumnList + "'");
            }
            LogicalType type;
            try {
                type = LogicalTypeParser.parse(rest, SchemaSampler.class.getClassLoader());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "column '"
                                + name
                                + "': cannot parse type '"
                                + rest
                                + "': "
                                + e.getMessage(),
                        e);
            }
            if (type instanceof UnresolvedUserDefinedType) {
                throw new IllegalArgumentException(
                        "column '" + name + "': cannot parse type '" + rest + "': unknown type");
            }
            if (!names.add(name)) {
                throw new IllegalArgumentException(
                        "duplicate column '" + name + "' in column list '" + ddlColumnList + "'");
            }
            fields.add(new RowType.RowField(name, type, comment));
        }
        return new RowType(fields);
    }

    /** A column's type followed by {@code COMMENT 'text'}. */
    private static final Pattern COMMENT =
            Pattern.compile("(?is)(.*?)\\s+COMMENT\\s+'((?:[^']|'')*)'\\s*");

    private static List<String> splitTopLevel(String s) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        boolean quoted = false;
        boolean literal = false; // inside a COMMENT '...'
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'' && !quoted) {
                literal = !literal;
            } else if (c == '`' && !literal) {
                quoted = !quoted;
            } else if (!quoted && !literal) {
                if (c == '(' || c == '<') {
                    depth++;
                } else if (c == ')' || c == '>') {
                    depth--;
                } else if (c == ',' && depth == 0) {
                    parts.add(s.substring(start, i));
                    start = i + 1;
                }
            }
        }
        parts.add(s.substring(start));
        return parts;
    }

    /** A type inferred from JSON values, widened as more values are seen. */
    private static final class Inferred {
        static final int NULL = 0,
                BIGINT = 1,
                DOUBLE = 2,
                STRING = 3,
                BOOLEAN = 4,
                ROW = 5,
                ARRAY = 6;

        /**
         * By {@link JsonFields} kind (null, true, false, integer, big integer, fraction, string,
         * object, array).
         */
        private static final int[] OF_JSON_KIND = {
            NULL, BOOLEAN, BOOLEAN, BIGINT, BIGINT, DOUBLE, STRING, ROW, ARRAY
        };

        int kind;
        final LinkedHashMap<String, Inferred> fields = new LinkedHashMap<>();
        Inferred element;

        Inferred(int kind) {
            this.kind = kind;
        }

        void mergeObject(JsonFields obj, JsonFactory factory) throws IOException {
            for (int i = 0; i < obj.size; i++) {
                fields.computeIfAbsent(obj.names[i], k -> new Inferred(NULL))
                        .merge(obj, i, factory);
            }
        }

        void merge(JsonFields f, int i, JsonFactory factory) throws IOException {
            int k = OF_JSON_KIND[f.kinds[i]];
            if (k == NULL) {
                return;
            }
            if (kind == NULL) {
                kind = k;
            } else if (kind != k) {
                kind =
                        (kind == BIGINT && k == DOUBLE) || (kind == DOUBLE && k == BIGINT)
                                ? DOUBLE
                                : STRING;
            }
            if (kind == ROW && k == ROW) {
                mergeObject(nested(f, i, factory), factory);
            } else if (kind == ARRAY && k == ARRAY) {
                if (element == null) {
                    element = new Inferred(NULL);
                }
                JsonFields items = nested(f, i, factory);
                for (int j = 0; j < items.size; j++) {
                    element.merge(items, j, factory);
                }
            }
        }

        /** The members (or elements) of the object (or array) at entry {@code i} of {@code f}. */
        private static JsonFields nested(JsonFields f, int i, JsonFactory factory)
                throws IOException {
            JsonFields inner = new JsonFields();
            inner.clear(f.buf);
            try (JsonParser p = factory.createParser(f.buf, f.starts[i], f.ends[i] - f.starts[i])) {
                p.nextToken();
                if (f.kinds[i] == JsonFields.OBJECT) {
                    inner.readObject(p, f.starts[i]);
                } else {
                    inner.readArray(p, f.starts[i]);
                }
            }
            return inner;
        }

        LogicalType toLogicalType() {
            switch (kind) {
                case BIGINT:
                    return new BigIntType();
                case DOUBLE:
                    return new DoubleType();
                case BOOLEAN:
                    return new BooleanType();
                case ROW:
                    List<RowType.RowField> out = new ArrayList<>();
                    for (Map.Entry<String, Inferred> e : fields.entrySet()) {
                        out.add(new RowType.RowField(e.getKey(), e.getValue().toLogicalType()));
                    }
                    return new RowType(out);
                case ARRAY:
                    return new ArrayType(
                            element == null ? VarCharType.STRING_TYPE : element.toLogicalType());
                case NULL:
                case STRING:
                default:
                    return VarCharType.STRING_TYPE;
            }
        }
    }
}

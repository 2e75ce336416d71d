package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.formats.ReadBuilder;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.iceberg.util.StructProjection;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Reads a table's live rows with Iceberg's readers (deletes applied by Iceberg) and prints them as
 * PostgreSQL prints {@code \copy ... CSV}: for the {@code show} command and for end-to-end
 * comparisons with PostgreSQL exports.
 *
 * <p>Line format ({@link #toCsvLine}): fields joined by {@code ,}; null is an empty unquoted field;
 * integers and decimals in plain decimal; strings as they are (blank padding kept), quoted with
 * {@code "} (inner quotes doubled) only when PostgreSQL quotes them — when they contain {@code ,},
 * {@code "}, CR or LF, or are empty; booleans {@code t}/{@code f}; timestamps {@code yyyy-MM-dd
 * HH:mm:ss[.ffffff]} with trailing fractional zeros trimmed ({@code 2026-11-30 03:17:21.882801},
 * {@code 2026-11-30 03:17:21.5}, {@code 2026-11-30 03:17:21}); {@code timestamptz} in UTC with
 * {@code +00}; binary as {@code \x} + lower-case hex; structs as PostgreSQL composites {@code
 * (v1,v2)} and lists as PostgreSQL arrays {@code {v1,v2}} (then CSV-quoted, as they hold commas).
 */
@PublicEvolving
public final class TableRows {

    private TableRows() {}

    /** Live rows of the current snapshot of {@code main}; empty when the table has no snapshot. */
    public static List<Record> read(Table table) {
        Snapshot current = table.currentSnapshot();
        return current == null ? new ArrayList<>() : readSnapshot(table, current.snapshotId());
    }

    /**
     * Live rows of the current snapshot that match an Iceberg row filter (for example {@code
     * Expressions.equal("region", "eu")}); files and partitions that cannot match are skipped.
     */
    public static List<Record> read(Table table, Expression rowFilter) {
        Snapshot current = table.currentSnapshot();
        return current == null ? new ArrayList<>() : read(table, current.snapshotId(), rowFilter);
    }

    /** Live rows as of a snapshot id, with the columns of that snapshot's schema. */
    public static List<Record> readSnapshot(Table table, long snapshotId) {
        return read(table, snapshotId, Expressions.alwaysTrue());
    }

    private static List<Record> read(Table table, long snapshotId, Expression rowFilter) {
        List<Record> out = new ArrayList<>();
        forEachRow(table, snapshotId, rowFilter, out::add);
        return out;
    }

    /**
     * Passes every live row of a snapshot that matches {@code rowFilter} to {@code consumer}, in
     * the columns of that snapshot's schema (a fresh record per row), file after file.
     *
     * <p>Each data file is read with Iceberg's format readers and its deletes applied by Iceberg's
     * {@code GenericDeleteFilter} (position deletes, deletion vectors, equality deletes), as {@code
     * IcebergGenerics} does, except that the delete files of a data file load in the calling
     * thread: Iceberg's shared delete worker pool polls for their completion every 10 ms, which
     * made a read of a table with n data files with deletes wait about n × 10 ms.
     *
     * @throws UncheckedIOException when a file cannot be read
     */
    public static void forEachRow(
            Table table, long snapshotId, Expression rowFilter, Consumer<Record> consumer) {
        Schema schema = table.schemas().get(table.snapshot(snapshotId).schemaId());
        if (schema == null) {
            schema = table.schema();
        }
        try (CloseableIterable<FileScanTask> tasks =
                table.newScan()
                        .useSnapshot(snapshotId)
                        .project(schema)
                        .filter(rowFilter)
                        .planFiles()) {
            CachingDeleteLoader loader = new CachingDeleteLoader(table.io());
            for (FileScanTask task : tasks) {
                readTask(table.io(), task, schema, consumer, loader);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read table " + table.name(), e);
        }
    }

    private static void readTask(
            FileIO io,
            FileScanTask task,
            Schema schema,
            Consumer<Record> consumer,
            CachingDeleteLoader loader)
            throws IOException {
        GenericDeleteFilter deletes =
                new GenericDeleteFilter(io, task, schema, schema) {
                    @Override
                    protected DeleteLoader newDeleteLoader() {
                        return loader;
                    }
                };
        Schema readSchema = deletes.requiredSchema();
        DataFile file = task.file();
        ReadBuilder<Record, Schema> builder =
                FormatModelRegistry.readBuilder(file.format(), Record.class, io.newInputFile(file));
        builder.project(readSchema)
                .idToConstant(
                        PartitionUtil.constantsMap(
                                task, IdentityPartitionConverters::convertConstant))
                .split(task.start(), task.length())
                .caseSensitive(true)
                .filter(task.residual());
        Evaluator residual = new Evaluator(readSchema.asStruct(), task.residual(), true);
        List<Types.NestedField> columns = schema.columns();
        try (CloseableIterable<Record> records = deletes.filter(builder.build())) {
            for (Record r : records) {
                if (!residual.eval(r)) {
                    continue;
                }
                // the read schema may hold metadata columns (_pos) and columns the deletes need
                GenericRecord copy = GenericRecord.create(schema);
                for (int i = 0; i < columns.size(); i++) {
                    copy.set(i, r.getField(columns.get(i).name()));
                }
                consumer.accept(copy);
            }
        }
    }

    /**
     * Live rows as of a version (a snapshot sequence number, design.md): the snapshot of {@code
     * main}'s ancestry with the highest sequence number at or below {@code sequenceNumber}; empty
     * when there is none (version 0).
     */
    public static List<Record> readAtVersion(Table table, long sequenceNumber) {
        Snapshot chosen = null;
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            if (s.sequenceNumber() <= sequenceNumber) {
                chosen = s;
                break;
            }
        }
        return chosen == null ? new ArrayList<>() : readSnapshot(table, chosen.snapshotId());
    }

    /**
     * Number of live rows in the current snapshot: a data file without delete files counts its
     * record count from the manifest (exact: Iceberg records every file's row count); a file with
     * delete files is read with one column (plus what its deletes need), deletes applied by
     * Iceberg, as {@link #forEachRow} reads it.
     *
     * @throws UncheckedIOException when a file cannot be read
     */
    public static long count(Table table) {
        Snapshot current = table.currentSnapshot();
        if (current == null) {
            return 0;
        }
        Schema schema = table.schemas().get(current.schemaId());
        if (schema == null) {
            schema = table.schema();
        }
        Schema oneColumn = schema.select(schema.columns().get(0).name());
        long n = 0;
        try (CloseableIterable<FileScanTask> tasks =
                table.newScan().useSnapshot(current.snapshotId()).project(schema).planFiles()) {
            CachingDeleteLoader loader = new CachingDeleteLoader(table.io());
            for (FileScanTask task : tasks) {
                DataFile file = task.file();
                if (task.deletes().isEmpty()
                        && task.start() == 0
                        && task.length() == file.fileSizeInBytes()) {
                    n += file.recordCount();
                } else {
                    n += countTask(table.io(), task, schema, oneColumn, loader);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read table " + table.name(), e);
        }
        return n;
    }

    private static long countTask(
            FileIO io,
            FileScanTask task,
            Schema schema,
            Schema requested,
            CachingDeleteLoader loader)
            throws IOException {
        GenericDeleteFilter deletes =
                new GenericDeleteFilter(io, task, schema, requested) {
                    @Override
                    protected DeleteLoader newDeleteLoader() {
                        return loader;
                    }
                };
        DataFile file = task.file();
        ReadBuilder<Record, Schema> builder =
                FormatModelRegistry.readBuilder(file.format(), Record.class, io.newInputFile(file));
        builder.project(deletes.requiredSchema())
                .idToConstant(
                        PartitionUtil.constantsMap(
                                task, IdentityPartitionConverters::convertConstant))
                .split(task.start(), task.length())
                .caseSensitive(true);
        long n = 0;
        try (CloseableIterable<Record> records = deletes.filter(builder.build())) {
            for (Record ignored : records) {
                n++;
            }
        }
        return n;
    }

    /** The CSV header: column names joined by {@code ,}. */
    public static String header(Schema schema) {
        return schema.columns().stream()
                .map(Types.NestedField::name)
                .collect(Collectors.joining(","));
    }

    /**
     * The table's live rows as CSV lines (no header), ordered by the identifier fields when the
     * table has them, else by the line text.
     */
    public static List<String> toCsvLines(Table table) {
        List<Record> rows = read(table);
        if (sortByIdentifierFields(table.schema(), rows)) {
            return rows.stream().map(TableRows::toCsvLine).collect(Collectors.toList());
        }
        return rows.stream().map(TableRows::toCsvLine).sorted().collect(Collectors.toList());
    }

    /**
     * Sorts rows of {@code schema} by its identifier fields, in place.
     *
     * @return false (and leaves the order) when the schema has no identifier fields
     */
    public static boolean sortByIdentifierFields(Schema schema, List<Record> rows) {
        if (schema.identifierFieldIds().isEmpty()) {
            return false;
        }
        Schema keySchema = schema.select(schema.identifierFieldNames());
        Comparator<StructLike> byKey = Comparators.forType(keySchema.asStruct());
        StructProjection left = StructProjection.create(schema, keySchema);
        StructProjection right = StructProjection.create(schema, keySchema);
        rows.sort((a, b) -> byKey.compare(left.wrap(a), right.wrap(b)));
        return true;
    }

    /** One row as a CSV line (see the class comment for the format). */
    public static String toCsvLine(Record record) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < record.size(); i++) {
            if (i > 0) {
                line.append(',');
            }
            line.append(formatValue(record.get(i)));
        }
        return line.toString();
    }

    /**
     * One value as PostgreSQL's CSV output prints it; null → empty string. A struct (for example
     * the {@code __START_AT} of a multi-column SEQUENCE BY) prints as PostgreSQL prints a composite
     * value, {@code (v1,v2)}, a list as PostgreSQL prints an array, {@code {v1,v2}}.
     */
    public static String formatValue(Object value) {
        if (value == null) {
            return "";
        }
        return quote(text(value));
    }

    /** The value in PostgreSQL's text output, before CSV quoting. */
    private static String text(Object value) {
        if (value instanceof CharSequence) {
            return value.toString();
        }
        if (value instanceof Boolean) {
            return ((Boolean) value) ? "t" : "f";
        }
        if (value instanceof BigDecimal) {
            return ((BigDecimal) value).toPlainString();
        }
        if (value instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) value;
            return t.toLocalDate() + " " + time(t.toLocalTime());
        }
        if (value instanceof OffsetDateTime) {
            LocalDateTime t =
                    ((OffsetDateTime) value)
                            .withOffsetSameInstant(ZoneOffset.UTC)
                            .toLocalDateTime();
            return t.toLocalDate() + " " + time(t.toLocalTime()) + "+00";
        }
        if (value instanceof LocalTime) {
            return time((LocalTime) value);
        }
        if (value instanceof ByteBuffer) {
            ByteBuffer b = ((ByteBuffer) value).duplicate();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            return hex(bytes);
        }
        if (value instanceof byte[]) {
            return hex((byte[]) value);
        }
        if (value instanceof StructLike) {
            StructLike struct = (StructLike) value;
            StringBuilder b = new StringBuilder("(");
            for (int i = 0; i < struct.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                Object field = struct.get(i, Object.class);
                if (field != null) {
                    b.append(element(text(field), "(),", false));
                }
            }
            return b.append(')').toString();
        }
        if (value instanceof List) {
            StringBuilder b = new StringBuilder("{");
            List<?> list = (List<?>) value;
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                Object element = list.get(i);
                b.append(element == null ? "NULL" : element(text(element), "{},", true));
            }
            return b.append('}').toString();
        }
        return value.toString();
    }

    /**
     * A field of a composite or an element of an array as PostgreSQL writes it: in double quotes
     * (with {@code "} and {@code \} escaped) when empty, when it holds a delimiter, a quote, a
     * backslash or white space, or (arrays) when it reads {@code NULL}.
     */
    private static String element(String t, String delimiters, boolean array) {
        boolean needs = t.isEmpty() || (array && t.equalsIgnoreCase("NULL"));
        for (int i = 0; i < t.length() && !needs; i++) {
            char c = t.charAt(i);
            needs =
                    delimiters.indexOf(c) >= 0
                            || c == '"'
                            || c == '\\'
                            || Character.isWhitespace(c);
        }
        if (!needs) {
            return t;
        }
        String escaped =
                array
                        ? t.replace("\\", "\\\\").replace("\"", "\\\"")
                        : t.replace("\"", "\"\"").replace("\\", "\\\\");
        return '"' + escaped + '"';
    }

    private static String time(LocalTime t) {
        StringBuilder s = new StringBuilder();
        s.append(two(t.getHour()))
                .append(':')
                .append(two(t.getMinute()))
                .append(':')
                .append(two(t.getSecond()));
        int micros = t.getNano() / 1000;
        if (micros != 0) {
            String frac = String.format("%06d", micros);
            int end = frac.length();
            while (frac.charAt(end - 1) == '0') {
                end--;
            }
            s.append('.').append(frac, 0, end);
        }
        return s.toString();
    }

    private static String two(int n) {
        return n < 10 ? "0" + n : Integer.toString(n);
    }

    private static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder(2 + bytes.length * 2).append("\\x");
        for (byte b : bytes) {
            s.append(Character.forDigit((b >> 4) & 0xF, 16))
                    .append(Character.forDigit(b & 0xF, 16));
        }
        return s.toString();
    }

    private static String quote(String s) {
        boolean needs = s.isEmpty() || s.equals("\\.");
        for (int i = 0; i < s.length() && !needs; i++) {
            char c = s.charAt(i);
            needs = c == ',' || c == '"' || c == '\n' || c == '\r';
        }
        return needs ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }

    /**
     * Iceberg's delete loader, reading inline, that keeps what it read for the other data files of
     * one scan: each equality-delete file (its rows projected on its equality columns, the same for
     * every data file it applies to) and each position-delete file (its positions for every data
     * file) is read once per scan instead of once per data file it applies to, up to {@value
     * #CACHE_BYTES} bytes of Iceberg's size estimate. Single-threaded, one scan.
     */
    private static final class CachingDeleteLoader extends BaseDeleteLoader {
        static final long CACHE_BYTES = 256L << 20;
        private final Map<String, Object> cache = new HashMap<>();
        private long cachedBytes;

        CachingDeleteLoader(FileIO io) {
            super(file -> io.newInputFile(file), null);
        }

        @Override
        protected boolean canCache(long size) {
            return cachedBytes + size <= CACHE_BYTES;
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <V> V getOrLoad(String key, Supplier<V> valueSupplier, long valueSize) {
            Object cached = cache.get(key);
            if (cached == null) {
                cached = valueSupplier.get();
                cache.put(key, cached);
                cachedBytes += valueSize;
            }
            return (V) cached;
        }
    }
}

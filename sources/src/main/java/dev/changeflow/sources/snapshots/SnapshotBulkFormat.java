package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.SnapshotVersions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.io.compression.InflaterInputStreamFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.compression.StandardDeCompressors;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.IteratorResultIterator;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Reads one snapshot file (semantics.md A6) as snapshot rows of the flow's source type — every
 * column by name, the version column set to the version in the file name — followed by the end
 * marker of that version ({@link SnapshotVersions#endOf}). CSV files have a header line naming the
 * columns (in any order; columns the flow does not declare are ignored) and an empty field is null;
 * JSON files hold one object per line, an absent member is null, nested values are read as their
 * JSON text. Values are read by {@link SnapshotValues}. {@code .gz} files are decompressed.
 *
 * <p>Positions are record counts (the end marker counts), so a restored reader opens the file again
 * and skips what it emitted before. Files are not split.
 *
 * <p>A value that does not fit its column, a declared column missing from a CSV header, a CSV row
 * with fewer fields than the header, a line that is not a JSON object, or a null KEYS column fails
 * the job with {@code MALFORMED_SNAPSHOT_ROW} naming the file and its snapshot version, the row and
 * the column (and for CSV the file's header): a snapshot is never applied in part, since a row left
 * out would read as a delete. Rows are counted from 1, the CSV header not counted.
 *
 * <p>A CSV file without a header line (0 bytes, or only blank lines) or a CSV file without rows
 * whose header lacks a declared column fails the same way, naming the file and its version (no
 * row): the header line is the proof the export was written, so such a file is one still being
 * written or not an export of this table, and reading it as an empty snapshot would delete every
 * row. A CSV file of a header naming every declared column and no row is an empty snapshot. A
 * zero-byte JSON lines file is an empty snapshot (JSON has no header to tell a partial file).
 * Messages are one line.
 */
@Internal
final class SnapshotBulkFormat implements BulkFormat<RowData, FileSourceSplit> {
    private static final long serialVersionUID = 1L;

    /** Records per batch handed to Flink's reader thread. */
    static final int BATCH = 1024;

    private static final String NEEDS_HEADER =
            ": a CSV snapshot file starts with its header line, even without rows (write the file"
                    + " elsewhere, then rename it into the folder)";

    private final RowType rowType;
    private final SnapshotVersions versions;
    private final int[] keyPositions;

    /**
     * @param rowType the flow's source type (its version column is {@code versions.index()})
     * @param keyPositions positions of the KEYS columns in {@code rowType}: null there is an error
     */
    SnapshotBulkFormat(RowType rowType, SnapshotVersions versions, int[] keyPositions) {
        this.rowType = rowType;
        this.versions = versions;
        this.keyPositions = keyPositions.clone();
    }

    @Override
    public Reader<RowData> createReader(Configuration config, FileSourceSplit split)
            throws IOException {
        return new FileReader(split, 0);
    }

    @Override
    public Reader<RowData> restoreReader(Configuration config, FileSourceSplit split)
            throws IOException {
        long skip =
                split.getReaderPosition()
                        .map(CheckpointedPosition::getRecordsAfterOffset)
                        .orElse(0L);
        return new FileReader(split, skip);
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(rowType);
    }

    private final class FileReader implements Reader<RowData> {
        private final String file;
        private final Object version;
        private final boolean csv;
        private final InputStream stream;
        @Nullable private final MappingIterator<Map<String, String>> csvRows;
        @Nullable private final MappingIterator<JsonNode> jsonRows;
        private long emitted;
        private long row;
        private boolean markerDone;
        private final boolean empty;

        FileReader(FileSourceSplit split, long skip) throws IOException {
            this.file = SnapshotFiles.display(split.path());
            String name = split.path().getName();
            this.version = versions.valueOf(SnapshotFileNames.version(name));
            this.csv = SnapshotFileNames.format(name) == SnapshotFileNames.Format.CSV;
            InputStream in = split.path().getFileSystem().open(split.path());
            InflaterInputStreamFactory<?> inflater =
                    StandardDeCompressors.getDecompressorForFileName(split.path().getPath());
            PushbackInputStream data =
                    new PushbackInputStream(inflater == null ? in : inflater.create(in), 1);
            this.stream = data;
            int first = data.read();
            this.empty = first < 0; // a zero-byte file
            if (!empty) {
                data.unread(first);
            }
            if (empty && csv) {
                // the header line is the proof a CSV export was written: without it, the file
                // may be one still being written, and reading it as no rows would delete them all
                data.close();
                throw malformedFile("is empty (0 bytes)" + NEEDS_HEADER);
            }
            if (empty) {
                // a zero-byte JSON lines file: a snapshot without rows (JSON has no header)
                this.csvRows = null;
                this.jsonRows = null;
            } else if (csv) {
                try {
                    // reads the header line
                    this.csvRows =
                            new CsvMapper()
                                    .readerFor(Map.class)
                                    .with(CsvSchema.emptySchema().withHeader())
                                    .readValues(stream);
                } catch (IOException e) {
                    data.close();
                    throw String.valueOf(e.getMessage()).startsWith("Empty header line")
                            ? malformedFile("has no header line (only blank lines)" + NEEDS_HEADER)
                            : malformedFile("header cannot be read: " + e.getMessage());
                }
                this.jsonRows = null;
            } else {
                this.jsonRows = new ObjectMapper().readerFor(JsonNode.class).readValues(stream);
                this.csvRows = null;
            }
            while (emitted < skip && next() != null) {
                emitted++;
            }
        }

        @Nullable
        @Override
        public RecordIterator<RowData> readBatch() throws IOException {
            long before = emitted;
            List<RowData> batch = new ArrayList<>(BATCH);
            RowData r;
            while (batch.size() < BATCH && (r = next()) != null) {
                batch.add(r);
            }
            if (batch.isEmpty()) {
                return null;
            }
            emitted += batch.size();
            return new IteratorResultIterator<>(
                    batch.iterator(), CheckpointedPosition.NO_OFFSET, before);
        }

        /** The next row, then the end marker, then null. */
        @Nullable
        private RowData next() throws IOException {
            if (markerDone) {
                return null;
            }
            boolean more;
            try {
                more = !empty && (csv ? csvRows.hasNextValue() : jsonRows.hasNextValue());
            } catch (IOException e) {
                row++; // the parser failed on the row after the last one read
                throw malformed("cannot be read: " + e.getMessage(), e);
            }
            if (more) {
                row++;
                RowData r;
                try {
                    r = csv ? fromCsv(csvRows.nextValue()) : fromJson(jsonRows.nextValue());
                } catch (IOException e) {
                    throw malformed("cannot be read: " + e.getMessage(), e);
                }
                for (int k : keyPositions) {
                    if (r.isNullAt(k)) {
                        throw malformed(
                                "has a null KEYS column '" + rowType.getFieldNames().get(k) + "'",
                                null);
                    }
                }
                return r;
            }
            if (csv && row == 0) {
                checkHeaderOfEmptyCsv();
            }
            markerDone = true;
            return versions.endOf(version);
        }

        private RowData fromCsv(Map<String, String> values) {
            return row(
                    column -> {
                        if (!values.containsKey(column)) {
                            List<String> header = header();
                            throw malformed(
                                    header.contains(column)
                                            ? "has "
                                                    + values.size()
                                                    + " field(s), the header has "
                                                    + header.size()
                                                    + ": no value for column '"
                                                    + column
                                                    + "' (header: "
                                                    + header
                                                    + ")"
                                            : "has no column '"
                                                    + column
                                                    + "' (header: "
                                                    + header
                                                    + ")",
                                    null);
                        }
                        String text = values.get(column);
                        return text == null || text.isEmpty() ? null : text;
                    });
        }

        /**
         * A CSV file with a header line and no row is an empty snapshot only if its header names
         * every declared column, as a row would need: otherwise it is no export of this table.
         */
        private void checkHeaderOfEmptyCsv() {
            List<String> header = header();
            for (int i = 0; i < rowType.getFieldCount(); i++) {
                String column = rowType.getFieldNames().get(i);
                if (i != versions.index() && !header.contains(column)) {
                    throw malformedFile(
                            "has no row and its header has no column '"
                                    + column
                                    + "' (header: "
                                    + header
                                    + ")");
                }
            }
        }

        /** The column names of the CSV file's header line (read with the first row). */
        private List<String> header() {
            CsvSchema schema = ((CsvParser) csvRows.getParser()).getSchema();
            List<String> names = new ArrayList<>(schema.size());
            for (int i = 0; i < schema.size(); i++) {
                names.add(schema.columnName(i));
            }
            return names;
        }

        private RowData fromJson(JsonNode node) {
            if (!node.isObject()) {
                throw malformed("is not a JSON object", null);
            }
            return row(
                    column -> {
                        JsonNode v = node.get(column);
                        if (v == null || v.isNull()) {
                            return null;
                        }
                        return v.isValueNode() ? v.asText() : v.toString();
                    });
        }

        /** A snapshot row from the text of each column (null = null), the version set. */
        private RowData row(Function<String, String> textOf) {
            GenericRowData out = new GenericRowData(rowType.getFieldCount());
            for (int i = 0; i < out.getArity(); i++) {
                if (i == versions.index()) {
                    out.setField(i, version);
                    continue;
                }
                String column = rowType.getFieldNames().get(i);
                String text = textOf.apply(column);
                if (text != null) {
                    out.setField(i, value(text, rowType.getTypeAt(i), column));
                }
            }
            return out;
        }

        private Object value(String text, LogicalType type, String column) {
            try {
                return SnapshotValues.parse(text, type);
            } catch (IllegalArgumentException e) {
                throw malformed(
                        "column '" + column + "': '" + text + "' is " + e.getMessage(), null);
            }
        }

        /**
         * {@code MALFORMED_SNAPSHOT_ROW} for the current row. A parser's exception ({@code cause})
         * is not attached: its message is in {@code what} already (first line), and attached it
         * would print again, with the parser's stream position, as the error's cause.
         */
        private AutoCdcException malformed(String what, @Nullable Exception cause) {
            return malformedFile("row " + row + " " + what);
        }

        /**
         * {@code MALFORMED_SNAPSHOT_ROW} naming the file and its version, then {@code what}: only
         * its first line (a Jackson message's second line, {@code at [Source: ...]}, names the
         * stream, not the file).
         */
        private AutoCdcException malformedFile(String what) {
            int eol = what.indexOf('\n');
            return new AutoCdcException(
                    AutoCdcException.Code.MALFORMED_SNAPSHOT_ROW,
                    "snapshot file "
                            + file
                            + " (snapshot "
                            + version
                            + ") "
                            + (eol < 0 ? what : what.substring(0, eol)).stripTrailing());
        }

        @Override
        public void close() throws IOException {
            stream.close();
        }
    }
}

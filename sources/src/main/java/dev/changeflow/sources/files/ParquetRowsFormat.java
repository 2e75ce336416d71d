package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.IteratorResultIterator;
import org.apache.flink.core.fs.Path;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.CloseableIterator;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.schema.MessageType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The {@link BulkFormat} of Parquet files as plain JSON rows ({@code read_files(..., format =>
 * 'parquet')}, docs/semantics.md S2): each record of a file becomes one {@link SourceLine} whose
 * {@code bytes} are the JSON object of its columns and whose {@code line} is the record's 1-based
 * number in the file, then the end-of-file marker; the plain-JSON decoder types them. The file's
 * schema is its own (no column list needed): {@link #rowType} gives it to the planner.
 *
 * <p>Read with Iceberg's generic Parquet reader ({@code GenericParquetReaders}, iceberg-parquet /
 * iceberg-data, already on the classpath for the catalog) rather than parquet-avro: it maps every
 * Parquet logical type to one Java value (decimals, timestamps with and without zone, dates, UUIDs,
 * nested groups, lists and maps) with Iceberg's type rules, the same ones {@code FlinkSchemaUtil}
 * turns into the Flink columns, so the file's schema and its values agree without an Avro detour;
 * files written without field ids are read by name.
 *
 * <p>Values in JSON: numbers as numbers (DECIMAL exact), strings, booleans, dates / times /
 * timestamps as ISO text (with zone: an instant in UTC, {@code Z}), binary and fixed as base64,
 * UUID as text, structs as objects, lists as arrays, maps as objects (keys as text).
 *
 * <p>A file that cannot be read (not Parquet, a bad footer, a damaged page) never fails the job:
 * its records up to the damage are emitted, then one damage marker ({@code DAMAGED_FILE}, the
 * detail naming the file and the error) and the end-of-file marker. Positions are record counts; a
 * restored reader reads the file again and skips the records already emitted.
 */
@Internal
final class ParquetRowsFormat implements BulkFormat<SourceLine, FileSourceSplit> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ParquetRowsFormat.class);
    private static final int BATCH = 1024;
    private static final JsonFactory JSON = new JsonFactory();

    @Override
    public Reader<SourceLine> createReader(Configuration config, FileSourceSplit split) {
        return new RowReader(split, 0);
    }

    @Override
    public Reader<SourceLine> restoreReader(Configuration config, FileSourceSplit split) {
        long skip =
                split.getReaderPosition()
                        .map(CheckpointedPosition::getRecordsAfterOffset)
                        .orElse(0L);
        return new RowReader(split, skip);
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<SourceLine> getProducedType() {
        return TypeInformation.of(SourceLine.class);
    }

    /**
     * The Iceberg schema of Parquet file {@code file} (its footer), read through Flink's file
     * system of the path (local, {@code s3://}, ...).
     */
    static Schema schema(Path file) throws IOException {
        try (ParquetFileReader r = ParquetFileReader.open(FlinkFsInputFiles.parquet(file))) {
            MessageType type = r.getFooter().getFileMetaData().getSchema();
            return ParquetSchemaUtil.convert(type);
        }
    }

    /** The Flink row type of Parquet file {@code file}: its columns, all nullable. */
    static RowType rowType(Path file) throws IOException {
        List<RowType.RowField> fields = new ArrayList<>();
        for (RowType.RowField f : FlinkSchemaUtil.convert(schema(file)).getFields()) {
            fields.add(new RowType.RowField(f.getName(), f.getType().copy(true)));
        }
        return new RowType(fields);
    }

    /** Reads one file's records in batches; damage becomes markers. */
    private static final class RowReader implements Reader<SourceLine> {
        private final FileSourceSplit split;
        private final String path;
        private final long skip;
        @Nullable private CloseableIterable<Record> rows;
        @Nullable private CloseableIterator<Record> it;
        @Nullable private Schema schema;

        /** Records read so far (emitted or skipped). */
        private long count;

        private boolean done;

        RowReader(FileSourceSplit split, long skip) {
            this.split = split;
            this.path = split.path().toString();
            this.skip = skip;
        }

        @Nullable
        @Override
        public RecordIterator<SourceLine> readBatch() {
            while (!done) {
                long first = count; // items emitted before this batch (markers come last)
                List<SourceLine> batch = read();
                // drop what a restored reader already emitted
                long from = Math.max(0, skip - first);
                if (from < batch.size()) {
                    return new IteratorResultIterator<>(
                            batch.subList((int) from, batch.size()).iterator(),
                            CheckpointedPosition.NO_OFFSET,
                            first + from);
                }
            }
            return null;
        }

        /** The next records, and the markers after the last one or the damage. */
        private List<SourceLine> read() {
            List<SourceLine> batch = new ArrayList<>();
            try {
                if (it == null) {
                    schema = schema(split.path());
                    Schema s = schema;
                    rows =
                            Parquet.read(FlinkFsInputFiles.iceberg(split.path()))
                                    .project(s)
                                    .createReaderFunc(
                                            fileSchema ->
                                                    GenericParquetReaders.buildReader(
                                                            s, fileSchema))
                                    .withNameMapping(MappingUtil.create(s))
                                    .build();
                    it = rows.iterator();
                }
                while (batch.size() < BATCH && it.hasNext()) {
                    Record r = it.next();
                    count++;
                    batch.add(SourceLine.data(path, count, json(schema.asStruct(), r)));
                }
                if (!it.hasNext()) {
                    batch.add(SourceLine.endOfFile(path, count));
                    count++;
                    done = true;
                }
            } catch (RuntimeException | IOException e) {
                LOG.warn(
                        "Parquet file {} cannot be read after {} records; quarantining the rest as"
                                + " DAMAGED_FILE: {}",
                        path,
                        count,
                        e.toString());
                long records = count;
                batch.add(
                        SourceLine.damage(
                                path,
                                records + 1,
                                QuarantineReason.DAMAGED_FILE,
                                "Parquet file "
                                        + path
                                        + " cannot be read after "
                                        + records
                                        + " record(s): "
                                        + e,
                                null));
                batch.add(SourceLine.endOfFile(path, records));
                count += 2;
                done = true;
            }
            return batch;
        }

        @Override
        public void close() throws IOException {
            if (rows != null) {
                rows.close();
            }
        }
    }

    /** The JSON object of record {@code r} of {@code struct}. */
    static byte[] json(Types.StructType struct, Record r) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            writeStruct(g, struct, r);
        }
        return out.toByteArray();
    }

    private static void writeStruct(JsonGenerator g, Types.StructType struct, Record r)
            throws IOException {
        g.writeStartObject();
        List<Types.NestedField> fields = struct.fields();
        for (int i = 0; i < fields.size(); i++) {
            g.writeFieldName(fields.get(i).name());
            write(g, fields.get(i).type(), r.get(i));
        }
        g.writeEndObject();
    }

    private static void write(JsonGenerator g, Type type, @Nullable Object v) throws IOException {
        if (v == null) {
            g.writeNull();
            return;
        }
        switch (type.typeId()) {
            case BOOLEAN:
                g.writeBoolean((Boolean) v);
                return;
            case INTEGER:
                g.writeNumber((Integer) v);
                return;
            case LONG:
                g.writeNumber((Long) v);
                return;
            case FLOAT:
                g.writeNumber((Float) v);
                return;
            case DOUBLE:
                g.writeNumber((Double) v);
                return;
            case DECIMAL:
                g.writeNumber(((BigDecimal) v).toPlainString());
                return;
            case STRING:
                g.writeString(v.toString());
                return;
            case UUID:
                g.writeString(((UUID) v).toString());
                return;
            case DATE:
                g.writeString(((LocalDate) v).toString());
                return;
            case TIME:
                g.writeString(((LocalTime) v).toString());
                return;
            case TIMESTAMP:
            case TIMESTAMP_NANO:
                if (v instanceof OffsetDateTime o) {
                    g.writeString(o.toInstant().toString());
                } else {
                    g.writeString(((LocalDateTime) v).toString());
                }
                return;
            case BINARY:
            case FIXED:
                ByteBuffer b =
                        v instanceof ByteBuffer bb ? bb.duplicate() : ByteBuffer.wrap((byte[]) v);
                byte[] bytes = new byte[b.remaining()];
                b.get(bytes);
                g.writeString(Base64.getEncoder().encodeToString(bytes));
                return;
            case STRUCT:
                writeStruct(g, type.asStructType(), (Record) v);
                return;
            case LIST:
                g.writeStartArray();
                for (Object e : (List<?>) v) {
                    write(g, type.asListType().elementType(), e);
                }
                g.writeEndArray();
                return;
            case MAP:
                g.writeStartObject();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    g.writeFieldName(String.valueOf(e.getKey()));
                    write(g, type.asMapType().valueType(), e.getValue());
                }
                g.writeEndObject();
                return;
            default:
                g.writeString(v.toString());
        }
    }
}

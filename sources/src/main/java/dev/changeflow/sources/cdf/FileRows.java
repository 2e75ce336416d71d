package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.BaseFileScanTask;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.formats.ReadBuilder;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads rows of one data file with Iceberg's own readers ({@link FormatModelRegistry}, the format
 * registry {@code GenericReader} uses) and Iceberg's delete application ({@link
 * GenericDeleteFilter}: position deletes, deletion vectors and equality deletes of the task).
 *
 * <p>Rows come out in the {@code projection} schema plus the row position, so callers can tell
 * exactly which rows of a file a snapshot removed.
 *
 * <p>Delete files are loaded through a {@link DeleteFileCache}: the one given, shared with other
 * readers of the same change-feed read, or one of this instance's own.
 */
@Internal
final class FileRows {

    /** A row of a data file with its position in the file. */
    static final class PositionedRow {
        final long pos;
        final Record row;

        PositionedRow(long pos, Record row) {
            this.pos = pos;
            this.row = row;
        }
    }

    private final FileIO io;
    private final DeleteFileCache deleteCache;

    /**
     * Rows of files of {@code io}, with a delete-file cache of its own ({@link DeleteFileCache}).
     */
    FileRows(FileIO io) {
        this(io, new DeleteFileCache());
    }

    /** Rows of files of {@code io}, loading delete files through {@code deleteCache}. */
    FileRows(FileIO io, DeleteFileCache deleteCache) {
        this.io = io;
        this.deleteCache = deleteCache;
    }

    /** A delete loader for the calling thread, reading delete files through the cache. */
    DeleteLoader deleteLoader() {
        return deleteCache.loader(io::newInputFile);
    }

    /** A scan task for a data file without deletes (for files added without delete files). */
    static FileScanTask taskWithoutDeletes(DataFile file, Schema schema, PartitionSpec spec) {
        return new BaseFileScanTask(
                file,
                new DeleteFile[0],
                SchemaParser.toJson(schema),
                PartitionSpecParser.toJson(spec),
                ResidualEvaluator.unpartitioned(Expressions.alwaysTrue()));
    }

    /**
     * The live rows of {@code task} (its delete files applied), in {@code projection} plus
     * position.
     *
     * @param tableSchema the schema of the snapshot the task was planned in (resolves
     *     equality-delete columns)
     * @param filter row-group filter pushed to the reader (rows are not filtered by it exactly)
     */
    List<PositionedRow> liveRows(
            FileScanTask task, Schema tableSchema, Schema projection, Expression filter) {
        List<PositionedRow> rows = new ArrayList<>();
        forEachLiveRow(task, tableSchema, projection, filter, rows::add);
        return rows;
    }

    void forEachLiveRow(
            FileScanTask task,
            Schema tableSchema,
            Schema projection,
            Expression filter,
            Consumer<PositionedRow> consumer) {
        Schema requested = withPosition(projection);
        GenericDeleteFilter deletes =
                new GenericDeleteFilter(io, task, tableSchema, requested) {
                    @Override
                    protected DeleteLoader newDeleteLoader() {
                        // inline (no worker pool), through the cache shared across versions
                        return deleteCache.loader(this::loadInputFile);
                    }
                };
        Schema readSchema = deletes.requiredSchema();
        Map<Integer, ?> constants =
                PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant);
        DataFile file = task.file();
        ReadBuilder<Record, Schema> builder =
                FormatModelRegistry.readBuilder(file.format(), Record.class, io.newInputFile(file));
        builder.project(readSchema)
                .idToConstant(constants)
                .split(task.start(), task.length())
                .caseSensitive(true)
                .filter(filter);
        int[] positions = positionsOf(readSchema.asStruct(), projection.asStruct());
        int posIndex = indexOf(readSchema.asStruct(), MetadataColumns.ROW_POSITION.fieldId());
        try (CloseableIterable<Record> records = deletes.filter(builder.build())) {
            for (Record record : records) {
                GenericRecord out = GenericRecord.create(projection.asStruct());
                for (int i = 0; i < positions.length; i++) {
                    out.set(i, positions[i] < 0 ? null : record.get(positions[i]));
                }
                consumer.accept(new PositionedRow((Long) record.get(posIndex), out));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads every row of a delete file (equality deletes carrying whole rows) in {@code
     * projection}.
     */
    List<Record> deleteFileRows(DeleteFile deleteFile, Schema projection) {
        ReadBuilder<Record, Schema> builder =
                FormatModelRegistry.readBuilder(
                        deleteFile.format(), Record.class, io.newInputFile(deleteFile));
        builder.project(projection);
        List<Record> rows = new ArrayList<>();
        try (CloseableIterable<Record> records = builder.build()) {
            for (Record record : records) {
                rows.add(record.copy());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }

    static Schema withPosition(Schema projection) {
        if (projection.findField(MetadataColumns.ROW_POSITION.fieldId()) != null) {
            return projection;
        }
        List<Types.NestedField> fields = new ArrayList<>(projection.columns());
        fields.add(MetadataColumns.ROW_POSITION);
        return new Schema(fields);
    }

    private static int[] positionsOf(Types.StructType read, Types.StructType projection) {
        int[] positions = new int[projection.fields().size()];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = indexOf(read, projection.fields().get(i).fieldId());
        }
        return positions;
    }

    private static int indexOf(Types.StructType struct, int fieldId) {
        List<Types.NestedField> fields = struct.fields();
        for (int i = 0; i < fields.size(); i++) {
            if (fields.get(i).fieldId() == fieldId) {
                return i;
            }
        }
        return -1;
    }
}

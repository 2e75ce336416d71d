package dev.changeflow.sources.cdf;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Builds Iceberg tables holding every kind of change with Iceberg's Java API (tests only). */
public final class CdfTestTables {

    public static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.LongType.get()),
                            Types.NestedField.optional(2, "name", Types.StringType.get()),
                            Types.NestedField.optional(3, "region", Types.StringType.get())),
                    Set.of(1));

    static final Schema KEYLESS_SCHEMA =
            new Schema(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "name", Types.StringType.get()),
                    Types.NestedField.optional(3, "region", Types.StringType.get()));

    private static final DateTimeFormatter MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    private final HadoopCatalog catalog;
    private long fileCounter;

    public CdfTestTables(Path warehouse) {
        this.catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
        catalog.createNamespace(Namespace.of("db"));
    }

    public Table create(
            String name,
            Schema schema,
            PartitionSpec spec,
            int formatVersion,
            Map<String, String> props) {
        Map<String, String> properties = new HashMap<>(props);
        properties.put(TableProperties.FORMAT_VERSION, String.valueOf(formatVersion));
        return catalog.createTable(TableIdentifier.of("db", name), schema, spec, properties);
    }

    public Table create(String name, int formatVersion) {
        return create(name, SCHEMA, PartitionSpec.unpartitioned(), formatVersion, Map.of());
    }

    public static Record row(Schema schema, Object... values) {
        GenericRecord record = GenericRecord.create(schema);
        for (int i = 0; i < values.length; i++) {
            record.set(i, values[i]);
        }
        return record;
    }

    public static Record row(long id, String name, String region) {
        return row(SCHEMA, id, name, region);
    }

    private OutputFileFactory files(Table table, FileFormat format) {
        return OutputFileFactory.builderFor(table, 1, ++fileCounter).format(format).build();
    }

    private StructLike partition(Table table, Record row) {
        if (table.spec().isUnpartitioned()) {
            return null;
        }
        PartitionKey key = new PartitionKey(table.spec(), table.schema());
        key.partition(new InternalRecordWrapper(table.schema().asStruct()).wrap(row));
        return key;
    }

    /** One data file holding {@code rows} (all in one partition). */
    public DataFile dataFile(Table table, Record... rows) {
        GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).build();
        StructLike partition = partition(table, rows[0]);
        DataWriter<Record> writer =
                factory.newDataWriter(
                        files(table, FileFormat.PARQUET).newOutputFile(table.spec(), partition),
                        table.spec(),
                        partition);
        try (writer) {
            for (Record row : rows) {
                writer.write(row);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDataFile();
    }

    /**
     * One data file holding {@code rows} with their {@code _row_id} written explicitly, as an
     * engine that keeps row lineage writes updated and carried-over rows: each row is the data
     * columns followed by the {@code _row_id} (null: inherited from the file's first row id on
     * read).
     */
    DataFile dataFileWithRowIds(Table table, Object[]... rows) {
        List<Types.NestedField> fields = new ArrayList<>(table.schema().columns());
        fields.add(MetadataColumns.ROW_ID);
        Schema withRowId = new Schema(fields);
        GenericFileWriterFactory factory =
                new GenericFileWriterFactory.Builder(table).dataSchema(withRowId).build();
        DataWriter<Record> writer =
                factory.newDataWriter(
                        files(table, FileFormat.PARQUET).newOutputFile(table.spec(), null),
                        table.spec(),
                        null);
        try (writer) {
            for (Object[] values : rows) {
                writer.write(row(withRowId, values));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDataFile();
    }

    /**
     * An equality-delete file on {@code id} holding {@code rows} projected to {@code rowSchema}.
     */
    public DeleteFile equalityDeletes(Table table, Schema rowSchema, Record... rows) {
        return equalityDeletes(table, new int[] {1}, rowSchema, rows);
    }

    /** An equality-delete file on {@code equalityFieldIds} holding {@code rows}. */
    DeleteFile equalityDeletes(
            Table table, int[] equalityFieldIds, Schema rowSchema, Record... rows) {
        GenericFileWriterFactory factory =
                new GenericFileWriterFactory.Builder(table)
                        .equalityFieldIds(equalityFieldIds)
                        .equalityDeleteRowSchema(rowSchema)
                        .build();
        StructLike partition = table.spec().isUnpartitioned() ? null : partition(table, rows[0]);
        EqualityDeleteWriter<Record> writer =
                factory.newEqualityDeleteWriter(
                        files(table, FileFormat.PARQUET).newOutputFile(table.spec(), partition),
                        table.spec(),
                        partition);
        try (writer) {
            for (Record row : rows) {
                Record projected = GenericRecord.create(rowSchema);
                for (Types.NestedField field : rowSchema.columns()) {
                    projected.setField(field.name(), row.getField(field.name()));
                }
                writer.write(projected);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDeleteFile();
    }

    /** A v2 position-delete file deleting {@code positions} of {@code file}. */
    public DeleteFile positionDeletes(Table table, DataFile file, long... positions) {
        GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).build();
        PositionDeleteWriter<Record> writer =
                factory.newPositionDeleteWriter(
                        files(table, FileFormat.PARQUET)
                                .newOutputFile(table.spec(), file.partition()),
                        table.spec(),
                        file.partition());
        try (writer) {
            for (long pos : positions) {
                writer.write(PositionDelete.<Record>create().set(file.location(), pos, null));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDeleteFile();
    }

    /** A v3 deletion vector (Puffin) deleting {@code positions} of {@code file}. */
    DeleteFile deletionVector(Table table, DataFile file, long... positions) {
        BaseDVFileWriter writer =
                new BaseDVFileWriter(files(table, FileFormat.PUFFIN), path -> null);
        try (writer) {
            for (long pos : positions) {
                writer.delete(file.location(), pos, table.spec(), file.partition());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<DeleteFile> result = writer.result().deleteFiles();
        return result.get(0);
    }

    static long version(Table table) {
        table.refresh();
        return table.currentSnapshot().sequenceNumber();
    }

    /** The live rows of the table at {@code snapshot} (null = empty table), read by Iceberg. */
    static List<Record> state(Table table, Snapshot snapshot) {
        List<Record> rows = new ArrayList<>();
        if (snapshot == null) {
            return rows;
        }
        try (CloseableIterable<Record> read =
                IcebergGenerics.read(table).useSnapshot(snapshot.snapshotId()).build()) {
            read.forEach(r -> rows.add(r.copy()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }

    /**
     * Spins until the wall clock has moved past {@code millis} (distinct commit times, no sleep).
     */
    static void clockPast(long millis) {
        while (System.currentTimeMillis() <= millis) {
            Thread.onSpinWait();
        }
    }

    static String format(long millis) {
        return MILLIS.format(Instant.ofEpochMilli(millis));
    }

    static OffsetDateTime utc(long millis) {
        return OffsetDateTime.ofInstant(Instant.ofEpochMilli(millis), ZoneOffset.UTC);
    }
}

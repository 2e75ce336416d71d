package dev.changeflow.e2e;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes Iceberg data and equality-delete files with Iceberg's generic writers (Parquet,
 * unpartitioned tables), for tests that build a table's versions themselves — a Silver table as an
 * SCD1 streaming table gets them: new row images, and the keys they replace or delete.
 */
public final class IcebergWrites {
    private static final AtomicLong FILES = new AtomicLong();

    private IcebergWrites() {}

    private static OutputFileFactory files(Table table) {
        return OutputFileFactory.builderFor(table, 1, FILES.incrementAndGet())
                .format(FileFormat.PARQUET)
                .build();
    }

    /** A data file of {@code rows} (records of the table's schema), not yet committed. */
    public static DataFile dataFile(Table table, List<Record> rows) {
        DataWriter<Record> writer =
                new GenericFileWriterFactory.Builder(table)
                        .build()
                        .newDataWriter(
                                files(table).newOutputFile(table.spec(), null), table.spec(), null);
        try (writer) {
            rows.forEach(writer::write);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDataFile();
    }

    /**
     * An equality-delete file of {@code keys} (records of {@code keySchema}, the columns of field
     * ids {@code fieldIds}), not yet committed.
     */
    public static DeleteFile equalityDeletes(
            Table table, Schema keySchema, int[] fieldIds, List<Record> keys) {
        EqualityDeleteWriter<Record> writer =
                new GenericFileWriterFactory.Builder(table)
                        .equalityFieldIds(fieldIds)
                        .equalityDeleteRowSchema(keySchema)
                        .build()
                        .newEqualityDeleteWriter(
                                files(table).newOutputFile(table.spec(), null), table.spec(), null);
        try (writer) {
            keys.forEach(writer::write);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDeleteFile();
    }
}

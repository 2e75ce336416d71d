package dev.changeflow.sinks.iceberg;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TableRows#count}: files without deletes count from their manifest record counts, files
 * with equality or position deletes are read with the deletes applied; the count always equals the
 * number of rows {@link TableRows#read} returns, and a scan reads each delete file once for all the
 * data files it applies to.
 */
class TableRowsCountTest {
    private static final Schema SCHEMA =
            new Schema(
                    Types.NestedField.required(1, "id", Types.IntegerType.get()),
                    Types.NestedField.optional(2, "v", Types.StringType.get()));
    private static final TableIdentifier ID = TableIdentifier.of("ns", "t");

    @TempDir Path warehouse;

    private Catalog catalog;
    private Table table;

    @BeforeEach
    void createTable() {
        catalog = CatalogSettings.localHadoop(warehouse).open();
        if (catalog instanceof SupportsNamespaces) {
            ((SupportsNamespaces) catalog).createNamespace(Namespace.of("ns"));
        }
        table =
                catalog.createTable(
                        ID, SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
    }

    @AfterEach
    void closeCatalog() throws Exception {
        if (catalog instanceof Closeable) {
            ((Closeable) catalog).close();
        }
    }

    @Test
    void anEmptyTableHasNoRows() {
        assertThat(TableRows.count(table)).isZero();
    }

    @Test
    void countsFilesWithoutDeletesAndAppliesEqualityAndPositionDeletes() throws Exception {
        DataFile plain = dataFile("plain", 1, 2, 3);
        table.newAppend().appendFile(plain).commit();
        table.refresh();
        assertThat(TableRows.count(table)).isEqualTo(3);

        DataFile withDeletes = dataFile("with-deletes", 10, 11, 12, 13, 14);
        table.newAppend().appendFile(withDeletes).commit();
        // a later equality delete of ids 2 (in the plain file) and 11, applied to both data files;
        // one position-delete file for both: the second file's row 3 (id 13) and the plain file's
        // row 0 (id 1). A scan reads each delete file once and applies it to every data file
        DeleteFile eq = equalityDelete("eq", 2, 11);
        DeleteFile pos = positionDelete("pos", withDeletes, 3, plain, 0);
        table.newRowDelta().addDeletes(eq).addDeletes(pos).commit();
        table.refresh();

        assertThat(TableRows.count(table)).isEqualTo(4);
        assertThat(TableRows.toCsvLines(table))
                .containsExactlyInAnyOrder("3,v3", "10,v10", "12,v12", "14,v14");
        assertThat(TableRows.count(table)).isEqualTo(TableRows.read(table).size());
        // the version before the deletes still holds every row
        long before = table.currentSnapshot().parentId();
        assertThat(TableRows.readSnapshot(table, before)).hasSize(8);
    }

    private Record row(int id) {
        return GenericRecord.create(SCHEMA).copy("id", id, "v", "v" + id);
    }

    private DataFile dataFile(String name, int... ids) throws Exception {
        OutputFile out = table.io().newOutputFile(table.location() + "/data/" + name + ".parquet");
        FileAppender<Record> appender =
                new GenericAppenderFactory(SCHEMA).newAppender(out, FileFormat.PARQUET);
        try (appender) {
            for (int id : ids) {
                appender.add(row(id));
            }
        }
        return DataFiles.builder(table.spec())
                .withInputFile(out.toInputFile())
                .withMetrics(appender.metrics())
                .withFormat(FileFormat.PARQUET)
                .build();
    }

    private EncryptedOutputFile output(String name) {
        return EncryptedFiles.plainAsEncryptedOutput(
                table.io().newOutputFile(table.location() + "/data/" + name + ".parquet"));
    }

    private DeleteFile equalityDelete(String name, int... ids) throws Exception {
        Schema idOnly = SCHEMA.select("id");
        GenericAppenderFactory factory =
                new GenericAppenderFactory(SCHEMA, table.spec(), new int[] {1}, idOnly, null);
        EqualityDeleteWriter<Record> w =
                factory.newEqDeleteWriter(output(name), FileFormat.PARQUET, null);
        try (w) {
            for (int id : ids) {
                w.write(GenericRecord.create(idOnly).copy("id", id));
            }
        }
        return w.toDeleteFile();
    }

    private DeleteFile positionDelete(
            String name, DataFile first, long p1, DataFile second, long p2) throws Exception {
        GenericAppenderFactory factory = new GenericAppenderFactory(SCHEMA, table.spec());
        PositionDeleteWriter<Record> w =
                factory.newPosDeleteWriter(output(name), FileFormat.PARQUET, null);
        // a position-delete file is sorted by file path, then position
        List<Object[]> deletes = new ArrayList<>();
        deletes.add(new Object[] {first.location(), p1});
        deletes.add(new Object[] {second.location(), p2});
        deletes.sort(Comparator.comparing((Object[] d) -> (String) d[0]));
        try (w) {
            for (Object[] d : deletes) {
                PositionDelete<Record> delete = PositionDelete.create();
                w.write(delete.set((String) d[0], (Long) d[1], null));
            }
        }
        return w.toDeleteFile();
    }
}

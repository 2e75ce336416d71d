package dev.changeflow.jobs.maintain;

import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.retention.FlinkCommitters;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A keyed table {@code (id BIGINT key, name STRING)} of format v2 in a Hadoop catalog on disk,
 * written the way changeflow's changelog sink writes (docs/semantics.md F2): inserts as data files,
 * a delete as an equality delete on {@code id} that carries the whole old row, an update ({@code
 * -U/+U}) as such an equality delete plus an insert of the new row in the same row delta; every
 * ingest commit names the changelog writer in its summary. Also position deletes and file removals,
 * as other writers make them.
 */
final class MaintenanceTestTables {
    static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.LongType.get()),
                            Types.NestedField.optional(2, "name", Types.StringType.get())),
                    Set.of(1));

    /** The changelog writer named in the summary of every ingest commit. */
    static final String WRITER = "maintenance-test";

    private final HadoopCatalog catalog;
    private long files;

    MaintenanceTestTables(Path warehouse) {
        catalog = new HadoopCatalog(new Configuration(), warehouse.toUri().toString());
    }

    HadoopCatalog catalog() {
        return catalog;
    }

    /** Creates {@code db.<name>} with equality deletes carrying complete rows (F2). */
    Table create(String name) {
        return catalog.createTable(
                TableIdentifier.of("db", name),
                SCHEMA,
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "2", ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
    }

    /**
     * Creates {@code db.<name>} of format v3 (row lineage: every row has a {@code _row_id}) with
     * equality deletes carrying complete rows (F2); position deletes are not written to it (v3
     * takes deletion vectors).
     */
    Table createV3(String name) {
        return catalog.createTable(
                TableIdentifier.of("db", name),
                SCHEMA,
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "3", ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
    }

    /**
     * Creates {@code db.<name>} with {@code spec} and equality deletes carrying complete rows (F2).
     * Every data and equality-delete file is written into the partition of its first row.
     */
    Table create(String name, PartitionSpec spec) {
        return catalog.createTable(
                TableIdentifier.of("db", name),
                SCHEMA,
                spec,
                Map.of("format-version", "2", ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
    }

    /** The partition of {@code row} in {@code table}'s spec; null when unpartitioned. */
    private static StructLike partitionOf(Table table, Record row) {
        if (table.spec().isUnpartitioned()) {
            return null;
        }
        PartitionKey key = new PartitionKey(table.spec(), table.schema());
        key.partition(row);
        return key;
    }

    /** {@code db.<name>} as a fresh instance (another writer's view). */
    Table load(String name) {
        return catalog.loadTable(TableIdentifier.of("db", name));
    }

    /**
     * The summary stamp of a commit of Iceberg's Flink sink committer: job id, operator id and the
     * checkpoint id the commit holds (F7).
     */
    static Map<String, String> stamp(String job, String operator, long checkpoint) {
        return Map.of(
                FlinkCommitters.JOB_ID,
                job,
                FlinkCommitters.OPERATOR_ID,
                operator,
                FlinkCommitters.MAX_COMMITTED_CHECKPOINT_ID,
                Long.toString(checkpoint));
    }

    static Record row(long id, String name) {
        Record r = GenericRecord.create(SCHEMA);
        r.setField("id", id);
        r.setField("name", name);
        return r;
    }

    private OutputFileFactory fileFactory(Table table) {
        return OutputFileFactory.builderFor(table, 1, ++files).format(FileFormat.PARQUET).build();
    }

    /** A data file of {@code rows}, not committed. */
    DataFile dataFile(Table table, Record... rows) {
        StructLike partition = partitionOf(table, rows[0]);
        DataWriter<Record> writer =
                new GenericFileWriterFactory.Builder(table)
                        .build()
                        .newDataWriter(
                                fileFactory(table).newOutputFile(table.spec(), partition),
                                table.spec(),
                                partition);
        return writeAll(writer, List.of(rows)).toDataFile();
    }

    /** An equality-delete file on {@code id} carrying the complete {@code rows}, not committed. */
    DeleteFile equalityDeletes(Table table, Record... rows) {
        StructLike partition = partitionOf(table, rows[0]);
        EqualityDeleteWriter<Record> writer =
                new GenericFileWriterFactory.Builder(table)
                        .equalityFieldIds(new int[] {1})
                        .equalityDeleteRowSchema(table.schema())
                        .build()
                        .newEqualityDeleteWriter(
                                fileFactory(table).newOutputFile(table.spec(), partition),
                                table.spec(),
                                partition);
        return writeAll(writer, List.of(rows)).toDeleteFile();
    }

    /**
     * A position-delete file deleting position {@code pos} of {@code file} and position {@code
     * otherPos} of the file at {@code otherLocation} (in {@code file}'s partition), not committed:
     * it names two files, so it is partition-scoped.
     */
    DeleteFile positionDeletes(Table table, DataFile file, String otherLocation, long pos) {
        return writeAll(
                        positionDeleteWriter(table, file),
                        List.of(
                                PositionDelete.<Record>create().set(file.location(), pos, null),
                                PositionDelete.<Record>create().set(otherLocation, pos, null)))
                .toDeleteFile();
    }

    /** A position-delete file deleting {@code positions} of {@code file}, not committed. */
    DeleteFile positionDeletes(Table table, DataFile file, long... positions) {
        List<PositionDelete<Record>> deletes = new ArrayList<>();
        for (long pos : positions) {
            deletes.add(PositionDelete.<Record>create().set(file.location(), pos, null));
        }
        return writeAll(positionDeleteWriter(table, file), deletes).toDeleteFile();
    }

    /** A writer of a position-delete file in {@code file}'s partition. */
    private PositionDeleteWriter<Record> positionDeleteWriter(Table table, DataFile file) {
        StructLike partition = table.spec().isUnpartitioned() ? null : file.partition();
        return new GenericFileWriterFactory.Builder(table)
                .build()
                .newPositionDeleteWriter(
                        fileFactory(table).newOutputFile(table.spec(), partition),
                        table.spec(),
                        partition);
    }

    /** Writes {@code items} with {@code writer} and closes it; returns the closed writer. */
    private static <T, W extends FileWriter<T, ?>> W writeAll(W writer, List<T> items) {
        try (writer) {
            writer.write(items);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer;
    }

    /** Commits new rows as one data file, as an ingest commit. */
    void insert(Table table, Record... rows) {
        table.newAppend()
                .appendFile(dataFile(table, rows))
                .set(ChangeFeedOptions.CHANGELOG_WRITER, WRITER)
                .commit();
    }

    /**
     * Commits one ingest row delta: {@code deleted} rows (old images) as an equality delete, and
     * {@code inserted} rows (new images of updated keys, new keys) as a data file.
     */
    void ingest(Table table, List<Record> deleted, List<Record> inserted) {
        var delta = table.newRowDelta().set(ChangeFeedOptions.CHANGELOG_WRITER, WRITER);
        if (!deleted.isEmpty()) {
            delta.addDeletes(equalityDeletes(table, deleted.toArray(new Record[0])));
        }
        if (!inserted.isEmpty()) {
            delta.addRows(dataFile(table, inserted.toArray(new Record[0])));
        }
        delta.commit();
    }

    /** The table's rows at its current snapshot (Iceberg's own scan), as {@code (id, name)}. */
    static List<String> rows(Table table) {
        table.refresh();
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read = IcebergGenerics.read(table).build()) {
            read.forEach(r -> out.add("(" + r.getField("id") + ", " + r.getField("name") + ")"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(null);
        return out;
    }

    /** The changes of versions {@code from..to}, as {@code "<version> <type> (id, name)"}. */
    static List<String> changes(Table table, long from, long to) {
        table.refresh();
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read =
                TableChanges.forTable(table)
                        .startingVersion(from)
                        .endingVersion(to)
                        .build()
                        .read()) {
            read.forEach(
                    r ->
                            out.add(
                                    r.get(3) + " " + r.get(2) + " (" + r.get(0) + ", " + r.get(1)
                                            + ")"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * A compaction's commit as Iceberg's rewrite makes it: {@code replaced} out, {@code compacted}
     * in with the data sequence number of {@code planned}, validated from {@code planned}; {@code
     * table} refreshed after.
     *
     * <p>The manifests are scanned on one thread. Iceberg 1.11's delete-manifest filter drops
     * delete files older than every live data file, but once it has dropped one it skips each
     * manifest it checks afterwards; on its shared worker pool which manifests come after is a
     * race, so the delete files the commit itself drops would differ from run to run. On one thread
     * the manifests are checked newest first, every time.
     */
    static void compact(
            Table table, Snapshot planned, List<DataFile> replaced, DataFile compacted) {
        ExecutorService oneThread = Executors.newSingleThreadExecutor();
        try {
            var rewrite =
                    table.newRewrite()
                            .scanManifestsWith(oneThread)
                            .validateFromSnapshot(planned.snapshotId())
                            .dataSequenceNumber(planned.sequenceNumber());
            replaced.forEach(rewrite::deleteFile);
            rewrite.addFile(compacted).commit();
        } finally {
            oneThread.shutdownNow();
        }
        table.refresh();
    }
}

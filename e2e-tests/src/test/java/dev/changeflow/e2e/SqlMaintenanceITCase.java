package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The maintenance statements of {@code bin/changeflow sql} (docs/semantics.md M1–M3, S6) on a real
 * table: {@code shop.items} (key id) gets (1, a), (2, b), (3, c) in version 1, and in version 2 (4,
 * d) plus an equality delete of id 2 — so (2, b) is deleted but still in a data file. {@code
 * OPTIMIZE} compacts, {@code REORG TABLE ... APPLY (PURGE)} leaves no deleted row in any live file
 * and no older snapshot (exit code 3 while a live consumer needs one), {@code VACUUM ... RETAIN 1
 * HOURS} deletes a file no snapshot references; a table that does not exist and a malformed
 * statement are usage errors (exit code 2).
 */
class SqlMaintenanceITCase {
    private static final TableIdentifier ITEMS = TableIdentifier.of("shop", "items");
    private static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.IntegerType.get()),
                            Types.NestedField.optional(2, "name", Types.StringType.get())),
                    Set.of(1));

    @TempDir Path tmp;
    private Catalog catalog;
    private Table table;

    @BeforeEach
    void writeTwoVersions() {
        catalog = CatalogSettings.localHadoop(tmp.toAbsolutePath()).open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("shop"));
        table =
                catalog.createTable(
                        ITEMS,
                        SCHEMA,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        table.newAppend()
                .appendFile(
                        IcebergWrites.dataFile(
                                table, List.of(row(1, "a"), row(2, "b"), row(3, "c"))))
                .commit();
        Schema keySchema = SCHEMA.select("id");
        Record key = GenericRecord.create(keySchema);
        key.set(0, 2);
        table.newRowDelta()
                .addRows(IcebergWrites.dataFile(table, List.of(row(4, "d"))))
                .addDeletes(
                        IcebergWrites.equalityDeletes(
                                table, keySchema, new int[] {1}, List.of(key)))
                .commit();
        table.refresh();
    }

    private int sql(String... statements) {
        List<String> args = new ArrayList<>(List.of("sql", "--warehouse", tmp.toString()));
        for (String s : statements) {
            args.add("-e");
            args.add(s);
        }
        return Main.execute(args.toArray(new String[0]));
    }

    @Test
    void optimizeCompactsTheTableWithItsDeletesApplied() {
        assertThat(physicalRows()).containsExactlyInAnyOrder("1,a", "2,b", "3,c", "4,d");
        assertThat(sql("OPTIMIZE shop.items")).isZero();
        table.refresh();
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,a", "3,c", "4,d");
        assertThat(liveDataFiles()).hasSize(1);
        assertThat(table.currentSnapshot().operation()).isEqualTo("replace");
    }

    @Test
    void reorgPurgeLeavesNoDeletedRowInAnyLiveFileOnceNoConsumerNeedsOlderVersions() {
        ConsumerRegistry.forTable(table).write("gold", 1, Instant.now());
        assertThat(sql("REORG TABLE shop.items APPLY (PURGE);"))
                .as("a live consumer keeps version 1, which holds (2, b)")
                .isEqualTo(3);
        table.refresh();
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,a", "3,c", "4,d");
        assertThat(ConsumerRegistry.forTable(table).remove("gold")).isTrue();

        assertThat(sql("reorg table LIVE.items apply (purge)", "USE shop")).isEqualTo(2);
        assertThat(sql("USE shop", "reorg table LIVE.items apply (purge)")).isZero();
        table.refresh();
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,a", "3,c", "4,d");
        assertThat(physicalRows()).containsExactlyInAnyOrder("1,a", "3,c", "4,d");
        List<Long> history = new ArrayList<>();
        SnapshotUtil.currentAncestors(table).forEach(s -> history.add(s.snapshotId()));
        assertThat(history).hasSize(1);
    }

    @Test
    void vacuumDeletesFilesNoSnapshotReferences() throws IOException {
        Path data = Path.of(URI.create(table.location())).resolve("data");
        Path orphan = data.resolve("orphan.parquet");
        Files.write(orphan, new byte[] {1, 2, 3});
        Files.setLastModifiedTime(orphan, FileTime.from(Instant.now().minusSeconds(7200)));
        assertThat(sql("VACUUM shop.items")).as("168 hours by default: kept").isZero();
        assertThat(orphan).exists();
        assertThat(sql("VACUUM shop.items RETAIN 1 HOURS")).isZero();
        assertThat(orphan).doesNotExist();
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,a", "3,c", "4,d");
    }

    @Test
    void badStatementsAreUsageErrors() {
        assertThat(sql("OPTIMIZE shop.nope")).isEqualTo(2);
        assertThat(sql("OPTIMIZE shop.items WHERE id > 1")).isEqualTo(2);
        assertThat(sql("REORG TABLE shop.items APPLY (UPGRADE UNIFORM(ICEBERG_COMPAT_VERSION=2))"))
                .isEqualTo(2);
        assertThat(sql("VACUUM shop.items RETAIN 1.5 HOURS")).isEqualTo(2);
        assertThat(TableRows.toCsvLines(table)).containsExactly("1,a", "3,c", "4,d");
        assertThat(physicalRows()).containsExactlyInAnyOrder("1,a", "2,b", "3,c", "4,d");
    }

    private List<DataFile> liveDataFiles() {
        List<DataFile> files = new ArrayList<>();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            tasks.forEach(t -> files.add(t.file()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    /** The rows of every live data file, read directly (deletes not applied). */
    private List<String> physicalRows() {
        List<String> out = new ArrayList<>();
        for (DataFile f : liveDataFiles()) {
            try (CloseableIterable<Record> rows =
                    Parquet.read(table.io().newInputFile(f.location()))
                            .project(SCHEMA)
                            .createReaderFunc(
                                    type -> GenericParquetReaders.buildReader(SCHEMA, type))
                            .build()) {
                rows.forEach(r -> out.add(r.getField("id") + "," + r.getField("name")));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    private static Record row(int id, String name) {
        Record r = GenericRecord.create(SCHEMA);
        r.set(0, id);
        r.set(1, name);
        return r;
    }
}

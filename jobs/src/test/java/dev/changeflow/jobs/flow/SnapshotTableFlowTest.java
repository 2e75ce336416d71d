package dev.changeflow.jobs.flow;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.CdfException;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AUTO CDC FROM SNAPSHOT over an Iceberg table's versions through the Java builder ({@link
 * AutoCdcFlow#fromSnapshotTable}, docs/semantics.md A6 "Iceberg table versions"): example (b) in a
 * bounded job, and the definitions refused in {@code into}.
 */
class SnapshotTableFlowTest {
    @TempDir Path warehouse;

    private static final Schema SCHEMA =
            new Schema(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "color", Types.StringType.get()),
                    Types.NestedField.optional(3, "size", Types.StringType.get()));

    private long files;

    /** Example (b), the source table in the target's namespace (no namespace given). */
    @Test
    void exampleBThroughTheJavaBuilder() throws Exception {
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        Catalog cat = catalog.open();
        Table source = create(cat, TableIdentifier.of("geo", "products_raw"), SCHEMA, 2);
        DataFile first =
                dataFile(source, row(1, "red", "S"), row(2, "blue", "M"), row(4, "gray", "L"));
        source.newAppend().appendFile(first).commit();
        long v1 = source.currentSnapshot().sequenceNumber();
        source.newOverwrite()
                .deleteFile(first)
                .addFile(
                        dataFile(
                                source,
                                row(2, "teal", "M"),
                                row(3, "pink", "S"),
                                row(4, "gray", "XL")))
                .commit();
        long v2 = source.currentSnapshot().sequenceNumber();

        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        AutoCdcFlow flow =
                AutoCdcFlow.fromSnapshotTable(env, "products_raw")
                        .keys("id")
                        .storedAs(ScdType.TYPE_2)
                        .trackHistoryOn("color")
                        .catalog(catalog)
                        .into("geo.products");
        assertThat(flow.spec().sequenceBy()).containsExactly("_snapshot_version");
        env.execute("from snapshot table");
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("geo", "products"))))
                .containsExactlyInAnyOrder(
                        "1,red,S," + v1 + "," + v2,
                        "2,blue,M," + v1 + "," + v2,
                        "2,teal,M," + v2 + ",",
                        "3,pink,S," + v2 + ",",
                        "4,gray,XL," + v1 + ",");
    }

    @Test
    void refusedDefinitions() {
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        Catalog cat = catalog.open();
        create(cat, TableIdentifier.of("raw", "products"), SCHEMA, 2);
        create(cat, TableIdentifier.of("raw", "old"), SCHEMA, 1);
        create(
                cat,
                TableIdentifier.of("raw", "tags"),
                new Schema(
                        Types.NestedField.required(1, "id", Types.LongType.get()),
                        Types.NestedField.optional(
                                2,
                                "tags",
                                Types.MapType.ofOptional(
                                        3, 4, Types.StringType.get(), Types.StringType.get()))),
                2);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);

        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshotTable(env, "raw.old")
                                        .keys("id")
                                        .catalog(catalog)
                                        .into("geo.products"))
                .isInstanceOf(CdfException.class)
                .hasMessageContaining("flow 'products': snapshot table")
                .hasMessageContaining("format version 1");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshotTable(env, "raw.products")
                                        .keys("id")
                                        .schema("id BIGINT, size INT")
                                        .catalog(catalog)
                                        .into("geo.products"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("declared column 'size' is INT")
                .hasMessageContaining("STRING");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshotTable(env, "raw.tags")
                                        .keys("id")
                                        .catalog(catalog)
                                        .into("geo.tags"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("column 'tags'")
                .hasMessageContaining("MAP");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshotTable(env, "raw.products")
                                        .keys("id")
                                        .option("snapshot-versions", "newest")
                                        .catalog(catalog)
                                        .into("geo.products"))
                .hasMessageContaining("snapshot-versions must be all or latest, got 'newest'");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshots(env, warehouse.toString())
                                        .keys("id")
                                        .schema("id BIGINT")
                                        .option("snapshot-versions", "latest")
                                        .catalog(catalog)
                                        .into("geo.products"))
                .hasMessage(
                        "flow 'products': 'snapshot-versions' applies to 'from-snapshot-table'"
                                + " flows only");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshotTable(env, "raw.nope")
                                        .keys("id")
                                        .catalog(catalog)
                                        .into("geo.products"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "SNAPSHOT_TABLE_NOT_FOUND: flow 'products': snapshot table raw.nope does"
                                + " not exist in the catalog; create it or fix"
                                + " 'from-snapshot-table'");
        assertThat(cat.tableExists(TableIdentifier.of("geo", "products"))).isFalse();
    }

    private static Table create(Catalog cat, TableIdentifier id, Schema schema, int format) {
        if (!((SupportsNamespaces) cat).namespaceExists(id.namespace())) {
            ((SupportsNamespaces) cat).createNamespace(id.namespace());
        }
        return cat.createTable(
                id, schema, PartitionSpec.unpartitioned(), Map.of("format-version", "" + format));
    }

    private static Record row(long id, String color, String size) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        r.setField("id", id);
        r.setField("color", color);
        r.setField("size", size);
        return r;
    }

    private DataFile dataFile(Table table, Record... rows) {
        OutputFileFactory out =
                OutputFileFactory.builderFor(table, 1, ++files).format(FileFormat.PARQUET).build();
        DataWriter<Record> writer =
                new GenericFileWriterFactory.Builder(table)
                        .build()
                        .newDataWriter(out.newOutputFile(table.spec(), null), table.spec(), null);
        try (writer) {
            for (Record r : rows) {
                writer.write(r);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return writer.toDataFile();
    }
}

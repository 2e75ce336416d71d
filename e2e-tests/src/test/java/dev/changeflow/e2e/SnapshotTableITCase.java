package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.LocalSnapshotIngest;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AUTO CDC FROM SNAPSHOT over an Iceberg table's versions end to end (docs/semantics.md A6, example
 * (b) and "Iceberg table versions"): commits to a source table {@code raw.products} are the
 * snapshots, read by the launcher ({@link LocalSnapshotIngest}) through a flows file with {@code
 * from-snapshot-table} into an SCD type 2 table with TRACK HISTORY ON (color), whose {@code
 * __START_AT} / {@code __END_AT} are the source's sequence numbers, and an SCD type 1 table whose
 * change feed holds only the changed rows. Also {@code snapshot-versions: latest} and the errors
 * found before a job starts.
 */
@Timeout(180)
class SnapshotTableITCase {
    @TempDir Path tmp;

    private static final TableIdentifier SOURCE = TableIdentifier.of("raw", "products");
    private static final TableIdentifier HISTORY = TableIdentifier.of("geo", "products_history");
    private static final TableIdentifier CURRENT = TableIdentifier.of("geo", "products");

    private static final Schema SCHEMA =
            new Schema(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "color", Types.StringType.get()),
                    Types.NestedField.optional(3, "size", Types.StringType.get()));

    private static String flows(String... extra) {
        List<String> lines =
                new ArrayList<>(
                        List.of(
                                "name: products",
                                "namespace: geo",
                                "checkpoint-interval: 100ms",
                                "parallelism: 2",
                                "flows:"));
        lines.addAll(List.of(extra));
        return String.join("\n", lines);
    }

    private static final String[] EXAMPLE_B_FLOWS = {
        "  - table: products_history",
        "    from-snapshot-table: raw.products",
        "    keys: [id]",
        "    scd-type: 2",
        "    track-history-on: [color]",
        "  - table: products",
        "    from-snapshot-table: raw.products",
        "    keys: [id]"
    };

    /**
     * Example (b): v1 = three rows, v2 = an overwrite of them. Run 1 applies both versions; a third
     * commit (one new key, one untracked change) is the only version run 2 applies; run 3, without
     * a new version, applies nothing.
     */
    @Test
    void exampleBFromTableVersions() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table source = createSource(cat);
        DataFile first =
                IcebergWrites.dataFile(
                        source,
                        List.of(row(1, "red", "S"), row(2, "blue", "M"), row(4, "gray", "L")));
        source.newAppend().appendFile(first).commit();
        long v1 = source.currentSnapshot().sequenceNumber();
        DataFile second =
                IcebergWrites.dataFile(
                        source,
                        List.of(row(2, "teal", "M"), row(3, "pink", "S"), row(4, "gray", "XL")));
        source.newOverwrite().deleteFile(first).addFile(second).commit();
        long v2 = source.currentSnapshot().sequenceNumber();

        String flows = flows(EXAMPLE_B_FLOWS);
        LocalSnapshotIngest.Summary run1 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run1.applied).isEqualTo(4); // v1 and v2 of each flow
        assertThat(rows(cat, HISTORY))
                .containsExactlyInAnyOrder(
                        "1,red,S," + v1 + "," + v2,
                        "2,blue,M," + v1 + "," + v2,
                        "2,teal,M," + v2 + ",",
                        "3,pink,S," + v2 + ",",
                        "4,gray,XL," + v1 + ",");
        assertThat(rows(cat, CURRENT))
                .containsExactlyInAnyOrder("2,teal,M", "3,pink,S", "4,gray,XL");
        long afterRun1 = cat.loadTable(CURRENT).currentSnapshot().sequenceNumber();

        // v3: key 5 new, key 3 changes only its size (untracked), 2 and 4 unchanged
        DataFile third =
                IcebergWrites.dataFile(
                        source,
                        List.of(
                                row(2, "teal", "M"),
                                row(3, "pink", "M"),
                                row(4, "gray", "XL"),
                                row(5, "black", "L")));
        source.newOverwrite().deleteFile(second).addFile(third).commit();
        long v3 = source.currentSnapshot().sequenceNumber();
        LocalSnapshotIngest.Summary run2 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run2.applied).isEqualTo(2); // v3 of each flow only
        assertThat(run2.skipped).isZero();
        assertThat(rows(cat, HISTORY))
                .containsExactlyInAnyOrder(
                        "1,red,S," + v1 + "," + v2,
                        "2,blue,M," + v1 + "," + v2,
                        "2,teal,M," + v2 + ",",
                        "3,pink,M," + v2 + ",",
                        "4,gray,XL," + v1 + ",",
                        "5,black,L," + v3 + ",");
        assertThat(rows(cat, CURRENT))
                .containsExactlyInAnyOrder("2,teal,M", "3,pink,M", "4,gray,XL", "5,black,L");
        // the SCD type 1 change feed of run 2: only the changed rows
        assertThat(
                        ChangeFeedLines.from(
                                cat.loadTable(CURRENT), afterRun1 + 1, "id", "color", "size"))
                .containsExactlyInAnyOrder(
                        "update_preimage 3,pink,S",
                        "update_postimage 3,pink,M",
                        "insert 5,black,L");

        long currentVersion = cat.loadTable(CURRENT).currentSnapshot().sequenceNumber();
        LocalSnapshotIngest.Summary run3 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run3.applied).isZero();
        assertThat(cat.loadTable(CURRENT).currentSnapshot().sequenceNumber())
                .isEqualTo(currentVersion);
    }

    /**
     * {@code snapshot-versions: latest}: each run reads only the source's current version, so the
     * intermediate v2 is never a snapshot; versions are still sequence numbers.
     */
    @Test
    void latestSkipsIntermediateVersions() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table source = createSource(cat);
        DataFile a =
                IcebergWrites.dataFile(source, List.of(row(1, "red", "S"), row(2, "blue", "M")));
        source.newAppend().appendFile(a).commit();
        long v1 = source.currentSnapshot().sequenceNumber();
        DataFile b = IcebergWrites.dataFile(source, List.of(row(1, "green", "S")));
        source.newOverwrite().deleteFile(a).addFile(b).commit(); // v2: never read
        DataFile c =
                IcebergWrites.dataFile(source, List.of(row(1, "red", "S"), row(3, "pink", "S")));
        source.newOverwrite().deleteFile(b).addFile(c).commit();
        long v3 = source.currentSnapshot().sequenceNumber();
        String flows =
                flows(
                        "  - table: products_history",
                        "    from-snapshot-table: raw.products",
                        "    snapshot-versions: latest",
                        "    keys: [id]",
                        "    schema: 'id BIGINT, color STRING'",
                        "    scd-type: 2");
        LocalSnapshotIngest.Summary run1 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run1.applied).isEqualTo(1);
        assertThat(rows(cat, HISTORY))
                .containsExactlyInAnyOrder("1,red," + v3 + ",", "3,pink," + v3 + ",");

        DataFile d =
                IcebergWrites.dataFile(source, List.of(row(1, "red", "S"), row(2, "blue", "M")));
        source.newOverwrite().deleteFile(c).addFile(d).commit(); // v4: never read
        DataFile e = IcebergWrites.dataFile(source, List.of(row(1, "red", "L")));
        source.newOverwrite().deleteFile(d).addFile(e).commit();
        long v5 = source.currentSnapshot().sequenceNumber();
        LocalSnapshotIngest.Summary run2 =
                LocalSnapshotIngest.run(
                        FlowsFile.parse(flows, "flows.yaml"), KeysCasesITCase.quiet(warehouse));
        assertThat(run2.applied).isEqualTo(1);
        assertThat(v1).isLessThan(v3);
        // size is not a declared column: key 1 unchanged; 3 deleted at v5; 2 never seen
        assertThat(rows(cat, HISTORY))
                .containsExactlyInAnyOrder("1,red," + v3 + ",", "3,pink," + v3 + "," + v5);
    }

    /** Errors found before a job starts, naming the flow and the table or column. */
    @Test
    void errorsBeforeTheJobStarts() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table source = createSource(cat);
        source.newAppend()
                .appendFile(IcebergWrites.dataFile(source, List.of(row(1, "red", "S"))))
                .commit();

        String unknownTable =
                flows("  - table: t", "    from-snapshot-table: raw.nope", "    keys: [id]");
        assertThatThrownBy(
                        () ->
                                LocalSnapshotIngest.run(
                                        FlowsFile.parse(unknownTable, "flows.yaml"),
                                        KeysCasesITCase.quiet(warehouse)))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("SNAPSHOT_TABLE_NOT_FOUND")
                .hasMessageContaining("flow 't'")
                .hasMessageContaining("raw.nope");

        String unknownColumn =
                flows(
                        "  - table: t",
                        "    from-snapshot-table: raw.products",
                        "    keys: [id]",
                        "    schema: 'id BIGINT, weight DOUBLE'");
        assertThatThrownBy(
                        () ->
                                LocalSnapshotIngest.run(
                                        FlowsFile.parse(unknownColumn, "flows.yaml"),
                                        KeysCasesITCase.quiet(warehouse)))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("UNKNOWN_COLUMN")
                .hasMessageContaining("flow 't'")
                .hasMessageContaining("'weight'")
                .hasMessageContaining("raw.products");

        String keyNotInSource =
                flows("  - table: t", "    from-snapshot-table: raw.products", "    keys: [sku]");
        assertThatThrownBy(
                        () ->
                                LocalSnapshotIngest.run(
                                        FlowsFile.parse(keyNotInSource, "flows.yaml"),
                                        KeysCasesITCase.quiet(warehouse)))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("KEY_NOT_IN_SOURCE")
                .hasMessageContaining("'sku'")
                .hasMessageContaining("[id, color, size]");
        assertThat(cat.tableExists(TableIdentifier.of("geo", "t"))).isFalse();
    }

    private static Table createSource(Catalog cat) {
        ((SupportsNamespaces) cat).createNamespace(Namespace.of("raw"));
        return cat.createTable(
                SOURCE, SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
    }

    private static Record row(long id, String color, String size) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        r.setField("id", id);
        r.setField("color", color);
        r.setField("size", size);
        return r;
    }

    private static List<String> rows(Catalog cat, TableIdentifier id) {
        return TableRows.toCsvLines(cat.loadTable(id));
    }
}

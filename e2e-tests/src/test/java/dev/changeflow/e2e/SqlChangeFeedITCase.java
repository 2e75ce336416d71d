package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code APPLY CHANGES INTO dim FROM STREAM(silver) ... STORED AS SCD TYPE 2} (docs/semantics.md
 * S7, the pipeline of the practitioner's guide): the change feed of a Silver table written here
 * with Iceberg's API — inserts, an update (equality delete + new row image) and a delete in later
 * versions — builds an SCD type 2 dimension through {@code bin/changeflow run FILE.sql}. The first
 * run reads Silver's current snapshot (its rows tagged with that version); the second continues
 * from the change-feed position saved with the job and applies only the versions after it: an
 * update closes the old version, a {@code delete} closes the row ({@code _change_type = 'delete'}
 * is the flow's delete predicate), the preimage of the update is skipped.
 */
class SqlChangeFeedITCase {
    @TempDir Path tmp;

    private static final TableIdentifier SILVER = TableIdentifier.of("shop", "silver_customers");
    private static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "customer_id", Types.LongType.get()),
                            Types.NestedField.optional(2, "city", Types.StringType.get()),
                            Types.NestedField.optional(3, "updated_at", Types.LongType.get())),
                    Set.of(1));

    private static final String PIPELINE =
            "USE SCHEMA shop;\n"
                    + "CREATE OR REFRESH STREAMING TABLE dim_customer;\n"
                    + "APPLY CHANGES INTO LIVE.dim_customer\n"
                    + "FROM STREAM(LIVE.silver_customers)\n"
                    + "KEYS (customer_id)\n"
                    + "SEQUENCE BY _commit_version\n"
                    + "STORED AS SCD TYPE 2;\n";

    @Test
    void silverChangeFeedBuildsAnScd2DimensionAndASecondRunContinuesFromItsPosition()
            throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table silver =
                catalog.createTable(
                        SILVER,
                        SCHEMA,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        commit(silver, List.of(row(1, "Lisbon", 10), row(2, "Porto", 10)), List.of());
        Path file = tmp.resolve("dim.sql");
        Files.writeString(file, PIPELINE);
        String w = warehouse.toString();

        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        TableIdentifier dim = TableIdentifier.of("shop", "dim_customer");
        // customer_id, city, updated_at, __START_AT, __END_AT
        assertThat(TableRows.toCsvLines(catalog.loadTable(dim)))
                .containsExactlyInAnyOrder("1,Lisbon,10,1,", "2,Porto,10,1,");

        // version 2 updates customer 1; version 3 deletes customer 2 and adds customer 3
        commit(silver, List.of(row(1, "Braga", 20)), List.of(1L));
        commit(silver, List.of(row(3, "Faro", 30)), List.of(2L));

        assertThat(Main.execute("run", "--warehouse", w, file.toString())).isZero();
        assertThat(TableRows.toCsvLines(catalog.loadTable(dim)))
                .containsExactlyInAnyOrder(
                        "1,Lisbon,10,1,2", "1,Braga,20,2,", "2,Porto,10,1,3", "3,Faro,30,3,");
    }

    private static Record row(long id, String city, long updatedAt) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        r.setField("customer_id", id);
        r.setField("city", city);
        r.setField("updated_at", updatedAt);
        return r;
    }

    /** One version: new row images and the keys they replace or delete, as an SCD1 table gets. */
    private static void commit(Table table, List<Record> images, List<Long> deletedKeys) {
        RowDelta delta = table.newRowDelta();
        if (!images.isEmpty()) {
            delta.addRows(IcebergWrites.dataFile(table, images));
        }
        if (!deletedKeys.isEmpty()) {
            Schema keySchema = SCHEMA.select("customer_id");
            List<Record> keys = new ArrayList<>();
            for (long k : deletedKeys) {
                GenericRecord r = GenericRecord.create(keySchema);
                r.setField("customer_id", k);
                keys.add(r);
            }
            delta.addDeletes(IcebergWrites.equalityDeletes(table, keySchema, new int[] {1}, keys));
        }
        delta.commit();
        table.refresh();
    }
}

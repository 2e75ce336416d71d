package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.maintain.TableCompaction;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad input of {@code changeflow maintain}: each kind gives a clear error or says what it did. */
class MaintainCommandTest {
    @TempDir Path warehouse;

    @Test
    void unknownTableIsAUsageErrorNamingIt() {
        assertThat(
                        Main.execute(
                                "maintain",
                                "shop.nope",
                                "--rewrite",
                                "--warehouse",
                                warehouse.toString()))
                .isEqualTo(2);
        MaintainCommand c = command("shop.nope");
        assertThatThrownBy(c::call)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("TABLE_NOT_FOUND: no table shop.nope in ")
                .hasMessageEndingWith(" catalog (check --warehouse)");
    }

    @Test
    void badExpiryOptionIsAUsageError() {
        emptyTable();
        assertThat(
                        Main.execute(
                                "maintain",
                                "shop.items",
                                "--expire",
                                "--older-than",
                                "last week",
                                "--warehouse",
                                warehouse.toString()))
                .isEqualTo(2);
        assertThat(
                        Main.execute(
                                "maintain",
                                "shop.items",
                                "--orphans",
                                "--orphan-min-age",
                                "soon",
                                "--warehouse",
                                warehouse.toString()))
                .isEqualTo(2);
        assertThat(Main.execute("maintain", "--rewrite")).as("no TABLE").isEqualTo(2);
    }

    @Test
    void tableWithoutSnapshotHasNothingToCompact() throws Exception {
        Table t = emptyTable();
        MaintainCommand c = command("shop.items");
        c.rewrite = true;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        c.out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isEqualTo(0);
        assertThat(bytes.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "Rewrite of shop.items: the table has no snapshot yet, nothing to do"
                                + System.lineSeparator());
        assertThatThrownBy(() -> TableCompaction.rewrite(null, t))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("table " + t.name() + " has no snapshot yet: nothing to compact");
    }

    /**
     * Every step on a table without data (as each ingest's quarantine table): the orphan removal
     * finds no data folder and removes nothing, instead of failing on the missing folder.
     */
    @Test
    void everyStepOnATableWithoutDataSucceeds() throws Exception {
        emptyTable();
        MaintainCommand c = command("shop.items");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        c.out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        assertThat(c.call()).isEqualTo(0);
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines())
                .contains("Rewrite of shop.items: the table has no snapshot yet, nothing to do")
                .anyMatch(
                        l ->
                                l.startsWith("Orphan files of ")
                                        && l.endsWith(
                                                "/shop/items/data: 0 removed (0 files -> 0)"));
    }

    private MaintainCommand command(String table) {
        MaintainCommand c = new MaintainCommand();
        c.table = table;
        c.expiryOptions = new CliOptions.Expiry();
        c.expiryOptions.consumerExpiry = "7d";
        c.orphanMinAge = "3d";
        c.local = new CliOptions.Warehouse();
        c.local.warehouse = warehouse;
        return c;
    }

    private Table emptyTable() {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        return cat.createTable(
                TableIdentifier.of("shop", "items"),
                new Schema(
                        Types.NestedField.required(1, "id", Types.IntegerType.get()),
                        Types.NestedField.optional(2, "name", Types.StringType.get())),
                PartitionSpec.unpartitioned(),
                Map.of(TableProperties.FORMAT_VERSION, "2"));
    }
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.changes.SchemaChangeException;
import dev.changeflow.sources.changes.SchemaSampler;

import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The plan follows the existing table (semantics.md A7 items 3, 4): a column the source dropped
 * keeps its place and reads null, a table column wider than the source is read in the table's type,
 * a source column wider than the table widens it (Iceberg promotions, under add-columns), and a
 * change the table cannot follow fails with {@code INCOMPATIBLE_TYPE_CHANGE} naming the column and
 * both types, changing nothing.
 */
class SchemaEvolutionPlannerTest {
    @TempDir Path tmp;

    private static final TableIdentifier ITEMS = TableIdentifier.of("silver", "items");

    private Path capture(String name, String after) throws Exception {
        Path f = tmp.resolve(name);
        Files.write(
                f,
                List.of(
                        "{\"key\":null,\"value\":{\"before\":null,\"after\":"
                                + after
                                + ",\"source\":{\"schema\":\"silver\",\"table\":\"items\",\"lsn\":10},"
                                + "\"op\":\"c\",\"ts_ms\":1},\"topic\":\"srv.silver.items\"}"));
        return f;
    }

    private static IngestPlan declared(String schema, String onSchemaChange) throws Exception {
        return IngestPlanner.plan(
                FlowsFile.parse(
                        "namespace: silver\nflows:\n  - table: items\n    keys: [id]\n"
                                + "    schema: '"
                                + schema
                                + "'\n    on-schema-change: "
                                + onSchemaChange
                                + "\n",
                        "f.yaml"),
                List.of());
    }

    private static String columns(Catalog cat) {
        Schema s = cat.loadTable(ITEMS).schema();
        return s.columns().stream()
                .map(c -> c.name() + " " + c.type())
                .reduce((a, b) -> a + ", " + b)
                .orElse("");
    }

    @Test
    void aColumnDroppedAtTheSourceKeepsItsPlaceUnderTheDefaultPolicy() throws Exception {
        String flows = "namespace: silver\nflows:\n  - table: items\n    keys: [id]\n";
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        IngestPlan first =
                IngestPlanner.plan(
                        FlowsFile.parse(flows, "f.yaml"),
                        List.of(capture("1.jsonl", "{\"id\":1,\"region\":\"a\",\"v\":1}")));
        ClusterIngest.ensureTables(cat, first);
        // a later capture whose records lack region (dropped in the middle of the table)
        IngestPlan later =
                IngestPlanner.plan(
                        FlowsFile.parse(flows, "f.yaml"),
                        List.of(capture("2.jsonl", "{\"id\":2,\"v\":2}")));
        IngestPlan followed = IngestPlanner.withAddedColumns(later, cat);
        assertThat(followed.flows.get(0).decoder.dataType().toString())
                .isEqualTo("ROW<`id` BIGINT, `region` STRING, `v` BIGINT>");
        ClusterIngest.ensureTables(cat, followed); // no TARGET_SCHEMA_MISMATCH, no rebuild
        assertThat(IngestPlanner.withAddedColumns(first, cat)).isSameAs(first);
    }

    @Test
    void aWiderSourceWidensTheTableAndANarrowerOneReadsInTheTableType() throws Exception {
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        IngestPlan narrow =
                declared("id INT, v INT, f FLOAT, d DECIMAL(10, 2), s STRING", "add-columns");
        ClusterIngest.ensureTables(cat, narrow);
        IngestPlan wide =
                declared("id INT, v BIGINT, f DOUBLE, d DECIMAL(12, 2), s STRING", "add-columns");
        IngestPlan widened = IngestPlanner.withAddedColumns(wide, cat);
        assertThat(columns(cat)).isEqualTo("id int, v long, f double, d decimal(12, 2), s string");
        assertThat(widened.flows.get(0).decoder.dataType())
                .isEqualTo(wide.flows.get(0).decoder.dataType());
        ClusterIngest.ensureTables(cat, widened);
        // the narrower definition again (older records): read in the table's wider types
        IngestPlan followed = IngestPlanner.withAddedColumns(narrow, cat);
        assertThat(followed.flows.get(0).decoder.dataType().toString())
                .isEqualTo("ROW<`id` INT, `v` BIGINT, `f` DOUBLE, `d` DECIMAL(12, 2), `s` STRING>");
        ClusterIngest.ensureTables(cat, followed);
    }

    @Test
    void overSavedStateEveryWideningIsMadeAndANarrowingStillFails() throws Exception {
        // the apply operators migrate their stored rows (A7 item 4): the plan widens FLOAT →
        // DOUBLE and DECIMAL across 18 digits too, whether the job resumes or not
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        ClusterIngest.ensureTables(
                cat, declared("id INT, v INT, f FLOAT, d DECIMAL(10, 2)", "add-columns"));
        IngestPlan wider = declared("id INT, v BIGINT, f DOUBLE, d DECIMAL(20, 2)", "add-columns");
        IngestPlan followed = IngestPlanner.withAddedColumns(wider, cat);
        assertThat(columns(cat)).isEqualTo("id int, v long, f double, d decimal(20, 2)");
        assertThat(followed.flows.get(0).decoder.dataType().toString())
                .isEqualTo("ROW<`id` INT, `v` BIGINT, `f` DOUBLE, `d` DECIMAL(20, 2)>");
        ClusterIngest.ensureTables(cat, followed);

        // a source narrower than the table reads in the table's type
        IngestPlan narrower = declared("id INT, v INT, f FLOAT, d DECIMAL(10, 2)", "add-columns");
        assertThat(IngestPlanner.withAddedColumns(narrower, cat).flows.get(0).decoder.dataType())
                .isEqualTo(followed.flows.get(0).decoder.dataType());
        // a scale change is no promotion either way
        assertThatThrownBy(
                        () ->
                                IngestPlanner.withAddedColumns(
                                        declared(
                                                "id INT, v BIGINT, f DOUBLE, d DECIMAL(20, 3)",
                                                "add-columns"),
                                        cat))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(AutoCdcException.Code.INCOMPATIBLE_TYPE_CHANGE))
                .hasMessageStartingWith(
                        "INCOMPATIBLE_TYPE_CHANGE: flow 'items': column 'd' is decimal(20, 2) in"
                                + " table silver.items but decimal(20, 3) at the source, and the"
                                + " table cannot follow: neither type is an Iceberg promotion of"
                                + " the other")
                .hasMessageNotContaining("--from-scratch");
        assertThat(columns(cat)).isEqualTo("id int, v long, f double, d decimal(20, 2)");
    }

    @Test
    void aKeyColumnWidenedOverFloatOrDecimalStillFails() throws Exception {
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        ClusterIngest.ensureTables(cat, declared("id DECIMAL(10, 0), v FLOAT", "add-columns"));
        assertThatThrownBy(
                        () ->
                                IngestPlanner.withAddedColumns(
                                        declared("id DECIMAL(20, 0), v DOUBLE", "add-columns"),
                                        cat))
                .hasMessageContaining(
                        "column 'id' is decimal(10, 0) in table silver.items but decimal(20, 0) at"
                                + " the source, and the table cannot follow: it is a KEYS or"
                                + " SEQUENCE BY column");
        assertThat(columns(cat)).isEqualTo("id decimal(10, 0), v float");
    }

    @Test
    void changesTheTableCannotFollowFailNamingColumnAndTypes() throws Exception {
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        ClusterIngest.ensureTables(cat, declared("id INT, v INT, s STRING", "add-columns"));
        assertThatThrownBy(
                        () ->
                                IngestPlanner.withAddedColumns(
                                        declared("id INT, v STRING, s STRING", "add-columns"), cat))
                .hasMessageStartingWith(
                        "INCOMPATIBLE_TYPE_CHANGE: flow 'items': column 'v' is int in table"
                                + " silver.items but string at the source, and the table cannot"
                                + " follow: neither type is an Iceberg promotion of the other");
        assertThatThrownBy(
                        () ->
                                IngestPlanner.withAddedColumns(
                                        declared("id BIGINT, v INT, s STRING", "add-columns"), cat))
                .hasMessageContaining(
                        "column 'id' is int in table silver.items but long at the source, and the"
                                + " table cannot follow: it is a KEYS or SEQUENCE BY column");
        // a declared schema without add-columns is the user's word: left to A1's check
        IngestPlan declaredOnly = declared("id INT, v BIGINT, s STRING", "quarantine");
        assertThat(IngestPlanner.withAddedColumns(declaredOnly, cat)).isSameAs(declaredOnly);
        assertThat(columns(cat)).isEqualTo("id int, v int, s string");
    }

    private static SchemaChangeException widened(String... columns) {
        List<RowType.RowField> fields = new java.util.ArrayList<>();
        for (String c : columns) {
            String[] p = c.split(" ", 2);
            fields.add(
                    new RowType.RowField(
                            p[0], SchemaSampler.parseColumns("x " + p[1]).getTypeAt(0)));
        }
        return new SchemaChangeException(
                "items", "items", "items.jsonl", null, 5, List.of(), fields);
    }

    @Test
    void aRecordWideningAColumnMidRunWidensTheTableAndTheNextPlanReadsIt() throws Exception {
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        IngestPlan plan = declared("id INT, v INT, f FLOAT, d DECIMAL(10, 2)", "add-columns");
        ClusterIngest.ensureTables(cat, plan);
        assertThat(AddColumns.apply(cat, plan, widened("v BIGINT", "d DECIMAL(12, 2)"), true))
                .containsExactly("silver.items: v INT → BIGINT, d DECIMAL(10, 2) → DECIMAL(12, 2)");
        assertThat(AddColumns.apply(cat, plan, widened("v BIGINT"), true))
                .as("idempotent")
                .isEmpty();
        assertThat(columns(cat)).isEqualTo("id int, v long, f float, d decimal(12, 2)");
        IngestPlan next = IngestPlanner.withAddedColumns(plan, cat);
        assertThat(next.flows.get(0).decoder.dataType().toString())
                .isEqualTo("ROW<`id` INT, `v` BIGINT, `f` FLOAT, `d` DECIMAL(12, 2)>");
        ClusterIngest.ensureTables(cat, next);

        // over saved state too: the apply operators migrate their stored rows (A7 item 4)
        assertThat(AddColumns.apply(cat, plan, widened("f DOUBLE", "d DECIMAL(20, 2)"), true))
                .containsExactly(
                        "silver.items: f FLOAT → DOUBLE, d DECIMAL(12, 2) → DECIMAL(20, 2)");
        assertThat(columns(cat)).isEqualTo("id int, v long, f double, d decimal(20, 2)");
    }

    /**
     * A7 item 3: an option naming a column the source dropped (the sampled records lack it) plans
     * with the column taken from the existing table when the planner sees the catalog; without the
     * catalog, or when the table never had the column, it stays {@code UNKNOWN_COLUMN}.
     */
    @Test
    void anOptionNamingADroppedColumnTakesItFromTheTable() throws Exception {
        String flows =
                "namespace: silver\nflows:\n  - table: items\n    keys: [id]\n"
                        + "    ignore-null-updates: [region]\n"
                        + "    columns: [id, region, v]\n";
        CatalogSettings settings = CatalogSettings.localHadoop(tmp.resolve("wh"));
        Catalog cat = settings.open();
        IngestPlan first =
                IngestPlanner.plan(
                        FlowsFile.parse(flows, "f.yaml"),
                        List.of(capture("1.jsonl", "{\"id\":1,\"region\":\"a\",\"v\":1}")),
                        null,
                        settings);
        ClusterIngest.ensureTables(cat, first);
        List<java.nio.file.Path> dropped = List.of(capture("2.jsonl", "{\"id\":2,\"v\":2}"));
        IngestPlan later =
                IngestPlanner.plan(FlowsFile.parse(flows, "f.yaml"), dropped, null, settings);
        assertThat(later.flows.get(0).decoder.dataType().toString())
                .isEqualTo("ROW<`id` BIGINT, `region` STRING, `v` BIGINT>");
        // the table already has every column of the plan: nothing more to follow
        assertThat(IngestPlanner.withAddedColumns(later, cat)).isSameAs(later);
        ClusterIngest.ensureTables(cat, later);

        assertThatThrownBy(() -> IngestPlanner.plan(FlowsFile.parse(flows, "f.yaml"), dropped))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e -> assertThat(e.code()).isEqualTo(AutoCdcException.Code.UNKNOWN_COLUMN));
        String never = flows.replace("[region]", "[colour]");
        assertThatThrownBy(
                        () ->
                                IngestPlanner.plan(
                                        FlowsFile.parse(never, "f.yaml"), dropped, null, settings))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e -> assertThat(e.code()).isEqualTo(AutoCdcException.Code.UNKNOWN_COLUMN))
                .hasMessageContaining("colour");
    }

    /**
     * A widening records each column's type before its first widening on the table, and the plan
     * hands those types to the AUTO CDC operator for state saved without a row-type record (an
     * earlier release, A7 item 4); a later widening of the same column keeps the first type.
     */
    @Test
    void aWideningRecordsThePreWideningTypesForStateOfEarlierReleases() throws Exception {
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        ClusterIngest.ensureTables(
                cat, declared("id INT, v INT, f FLOAT, d DECIMAL(10, 2)", "add-columns"));
        IngestPlan first =
                IngestPlanner.withAddedColumns(
                        declared("id INT, v BIGINT, f DOUBLE, d DECIMAL(12, 2)", "add-columns"),
                        cat);
        assertThat(first.flows.get(0).spec.unrecordedStateTypes())
                .containsExactlyInAnyOrderEntriesOf(
                        java.util.Map.of("v", "INT", "f", "FLOAT", "d", "DECIMAL(10, 2)"));
        IngestPlan second =
                IngestPlanner.withAddedColumns(
                        declared("id INT, v BIGINT, f DOUBLE, d DECIMAL(20, 2)", "add-columns"),
                        cat);
        assertThat(columns(cat)).isEqualTo("id int, v long, f double, d decimal(20, 2)");
        assertThat(second.flows.get(0).spec.unrecordedStateTypes())
                .containsEntry("d", "DECIMAL(10, 2)");
        assertThat(cat.loadTable(ITEMS).properties())
                .containsEntry("changeflow.pre-widening-type.f", "FLOAT");
        // a table never widened gives the flow none
        assertThat(
                        IngestPlanner.withAddedColumns(
                                        declared("id INT, v BIGINT", "add-columns"),
                                        CatalogSettings.localHadoop(tmp.resolve("wh2")).open())
                                .flows
                                .get(0)
                                .spec
                                .unrecordedStateTypes())
                .isEmpty();
    }
}

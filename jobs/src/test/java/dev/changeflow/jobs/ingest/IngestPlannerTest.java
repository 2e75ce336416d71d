package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.SchemaChangeException;

import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IngestPlannerTest {
    @TempDir Path tmp;

    private Path capture() throws Exception {
        Path f = tmp.resolve("c.jsonl");
        Files.write(
                f,
                List.of(
                        "{\"key\":{\"id\":1},\"value\":{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\",\"n\":2},"
                                + "\"source\":{\"schema\":\"inventory\",\"table\":\"items\",\"lsn\":10},\"op\":\"c\",\"ts_ms\":1},"
                                + "\"topic\":\"srv.inventory.items\"}"));
        return f;
    }

    @Test
    void aFlowsFileWithAnEmptyFlowsListSaysSo() throws Exception {
        IngestConfig cfg = FlowsFile.parse("name: shop\nflows: []\n", "f.yaml");
        assertThatThrownBy(() -> IngestPlanner.plan(cfg, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "no flows: the flows file has an empty 'flows:' list, or no flows file"
                                + " (--flows) or --table/--keys flags were given");
    }

    /**
     * A6: a flows file may declare a from-snapshot flow (resolved like any flow) and SnapshotJob
     * plans it; the change-record planner refuses it, naming where it runs.
     */
    @Test
    void fromSnapshotFlowsArePlannedBySnapshotJobAndRefusedByIngest() throws Exception {
        Path exports = Files.createDirectories(tmp.resolve("exports"));
        IngestConfig cfg =
                FlowsFile.parse(
                        "namespace: geo\nflows:\n  - table: cities\n    keys: [id]\n"
                                + "    from-snapshot: "
                                + exports
                                + "\n    scd-type: 2\n    schema: 'id BIGINT, city STRING'\n",
                        "f.yaml");
        SnapshotJob.Plan plan = SnapshotJob.plan(cfg.flows.get(0), "geo");
        assertThat(plan.target).isEqualTo(TableIdentifier.of("geo", "cities"));
        assertThat(plan.spec.targetType().toString())
                .isEqualTo(
                        "ROW<`id` BIGINT NOT NULL, `city` STRING, `__START_AT` BIGINT NOT NULL,"
                                + " `__END_AT` BIGINT>");
        assertThat(plan.spec.identifierFields()).containsExactly("id", "__START_AT");
        assertThatThrownBy(() -> IngestPlanner.plan(cfg, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "flow 'cities': 'from-snapshot' flows are run by LocalSnapshotIngest (ingest"
                                + " --flows with snapshot flows only) or AutoCdcFlow.fromSnapshots;"
                                + " they do not mix with change-record flows");
    }

    /** M1: a restore drops the state of an in-job compaction that the flow switched off. */
    @Test
    void maintenanceStateOfAFlowThatTurnedItOffIsNamedForTheRestore() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        "flows:\n"
                                + "  - table: items\n    keys: [id]\n"
                                + "  - table: items\n    target: items_kept\n    keys: [id]\n"
                                + "    maintenance: true\n"
                                // compaction only: the graph of the state saved below
                                + "    maintenance-orphans-older-than: 0s\n"
                                + "    maintenance-expire-interval: 0s\n",
                        "f.yaml");
        IngestPlan plan = IngestPlanner.plan(cfg, List.of(capture()));
        java.util.Set<String> restored =
                java.util.Set.of(
                        "auto-cdc-items",
                        "items-committer",
                        "Trigger managermaintenance-items",
                        "Monitor source for maintenance-items_kept");
        assertThat(LocalIngest.maintenanceStateDropped(plan, restored)).containsExactly("items");
        assertThat(
                        LocalIngest.maintenanceStateDropped(
                                plan, java.util.Set.of("auto-cdc-items", "items-committer")))
                .isEmpty();
    }

    /**
     * M1: Iceberg's trigger manager keeps one state entry per task, so a graph whose task set
     * changed (orphan removal or expiry switched on or off) gets other uids, and a restore drops
     * the saved graph's state instead of failing on it.
     */
    @Test
    void maintenanceStateOfAnotherTaskSetIsDroppedAndTheSameTaskSetRestores() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        "flows:\n"
                                + "  - table: items\n    keys: [id]\n    maintenance: true\n"
                                + "  - table: items\n    target: items_r\n    keys: [id]\n"
                                + "    maintenance: true\n"
                                + "    maintenance-orphans-older-than: 0s\n"
                                + "    maintenance-expire-interval: 0s\n",
                        "f.yaml");
        IngestPlan plan = IngestPlanner.plan(cfg, List.of(capture()));
        assertThat(
                        JobMaintenance.uidSuffix(
                                "maintenance-items", plan.flows.get(0).config.maintenance))
                .isEqualTo("maintenance-items@roe");
        assertThat(
                        JobMaintenance.uidSuffix(
                                "maintenance-items_r", plan.flows.get(1).config.maintenance))
                .isEqualTo("maintenance-items_r");
        // state saved before orphan removal and expiry existed (compaction only) for both flows
        java.util.Set<String> compactionOnly =
                java.util.Set.of(
                        "Trigger managermaintenance-items", "Trigger managermaintenance-items_r");
        assertThat(LocalIngest.maintenanceStateDropped(plan, compactionOnly))
                .containsExactly("items");
        // state of the default graph (all tasks) for both flows
        java.util.Set<String> allTasks =
                java.util.Set.of(
                        "Trigger managermaintenance-items@roe",
                        "expiry-maintenance-items@roe",
                        "Trigger managermaintenance-items_r@roe");
        assertThat(LocalIngest.maintenanceStateDropped(plan, allTasks)).containsExactly("items_r");
        // orphan removal only added: another task set
        assertThat(
                        LocalIngest.maintenanceStateDropped(
                                plan, java.util.Set.of("Trigger managermaintenance-items@ro")))
                .containsExactly("items");
    }

    /**
     * S5: a REPLACE USING flow is planned with an append-only decoder (rows, no KEYS) and a
     * ReplaceUsingSpec over the data columns; a sequence that is not a column is refused.
     */
    @Test
    void replaceUsingFlowsArePlannedWithoutKeysAndWithTheirSpec() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        "format: json\nflows:\n  - table: payments\n    replace-using: [booking_id]\n"
                                + "    sequence-by: payment_date\n"
                                + "    schema: 'booking_id STRING, payment_id STRING, payment_date BIGINT'\n",
                        "f.yaml");
        IngestPlan.Flow f = IngestPlanner.plan(cfg, List.of()).flows.get(0);
        assertThat(f.spec).isNull();
        assertThat(f.decoder.appendOnly()).isTrue();
        assertThat(f.replaceUsing.keys()).containsExactly("booking_id");
        assertThat(f.replaceUsing.sequenceBy()).containsExactly("payment_date");
        assertThat(f.replaceUsing.rowType().getFieldNames())
                .containsExactly("booking_id", "payment_id", "payment_date");
        IngestConfig bad =
                FlowsFile.parse(
                        "format: json\nflows:\n  - table: payments\n    replace-using: [booking_id]\n"
                                + "    sequence-by: nope\n"
                                + "    schema: 'booking_id STRING, payment_date BIGINT'\n",
                        "f.yaml");
        assertThatThrownBy(() -> IngestPlanner.plan(bad, List.of()))
                .hasMessageStartingWith("SEQUENCE_NOT_IN_SOURCE")
                .hasMessageContaining("'nope'");
    }

    @Test
    void debeziumDefaultsSequenceToSourceLsnAndNamespaceToTheSchema() throws Exception {
        IngestConfig cfg = FlowsFile.parse("flows:\n  - table: items\n    keys: [id]\n", "f.yaml");
        IngestPlan plan = IngestPlanner.plan(cfg, List.of(capture()));
        IngestPlan.Flow f = plan.flows.get(0);
        assertThat(f.target).isEqualTo(TableIdentifier.of("inventory", "items"));
        assertThat(f.spec.sequenceBy()).containsExactly("_source_lsn");
        assertThat(f.spec.targetType().toString())
                .isEqualTo("ROW<`id` BIGINT NOT NULL, `name` STRING, `n` BIGINT>");
        assertThat(f.decoder.sourceNames()).containsExactly("items");
    }

    @Test
    void debeziumDefaultSequenceFollowsTheSampledConnector() throws Exception {
        Path f = tmp.resolve("mysql.jsonl");
        Files.write(
                f,
                List.of(
                        "{\"key\":{\"id\":1},\"value\":{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\"},"
                                + "\"source\":{\"connector\":\"mysql\",\"db\":\"inventory\",\"table\":\"items\","
                                + "\"file\":\"mysql-bin.000003\",\"pos\":154,\"row\":0},\"op\":\"c\",\"ts_ms\":1},"
                                + "\"topic\":\"srv.inventory.items\"}"));
        // declared schema: the input is still read for the connector (A5)
        IngestConfig cfg =
                FlowsFile.parse(
                        "flows:\n  - table: items\n    keys: [id]\n    scd-type: 2\n"
                                + "    schema: 'id INT, name STRING'\n",
                        "f.yaml");
        IngestPlan.Flow flow = IngestPlanner.plan(cfg, List.of(f)).flows.get(0);
        assertThat(flow.decoder.sequenceBy()).containsExactly("_log_position");
        assertThat(flow.spec.sequenceBy()).containsExactly("_log_position");
        assertThat(flow.spec.targetType().toString())
                .isEqualTo(
                        "ROW<`id` INT NOT NULL, `name` STRING, `__START_AT` STRING NOT NULL, `__END_AT` STRING>");
        // an explicit source member is a sequence-only column of its own
        IngestConfig explicit =
                FlowsFile.parse(
                        "flows:\n  - table: items\n    keys: [id]\n"
                                + "    sequence-by: [source.file, source.pos, source.row]\n",
                        "f.yaml");
        IngestPlan.Flow e = IngestPlanner.plan(explicit, List.of(f)).flows.get(0);
        assertThat(e.spec.sequenceBy())
                .containsExactly("_source_file", "_source_pos", "_source_row");
        assertThat(e.decoder.sequenceOnlyColumns()).containsExactly("_source_row");
    }

    @Test
    void nanosecondTimestampsChooseFormatV3UnlessTheFlowSetsAVersion() throws Exception {
        String flow =
                "flows:\n  - table: items\n    keys: [id]\n    schema: 'id INT, ts TIMESTAMP(9)'\n";
        assertThat(
                        IngestPlanner.plan(FlowsFile.parse(flow, "f.yaml"), List.of(capture()))
                                .flows
                                .get(0)
                                .tableOptions
                                .formatVersion())
                .isEqualTo(3);
        IngestPlan v2 =
                IngestPlanner.plan(
                        FlowsFile.parse(flow + "    format-version: 2\n", "f.yaml"),
                        List.of(capture()));
        assertThat(v2.flows.get(0).tableOptions.formatVersion()).isEqualTo(2);
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        assertThatThrownBy(() -> ClusterIngest.ensureTables(cat, v2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("set 'format-version: 3' for the flow");
        String micros =
                "flows:\n  - table: items\n    keys: [id]\n    schema: 'id INT, ts TIMESTAMP(6)'\n";
        assertThat(
                        IngestPlanner.plan(FlowsFile.parse(micros, "f.yaml"), List.of(capture()))
                                .flows
                                .get(0)
                                .tableOptions
                                .formatVersion())
                .isEqualTo(2);
    }

    @Test
    void aliasesOfEnvelopeFieldsAndColumnsListingMetadata() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        "namespace: silver\nflows:\n  - table: items\n    keys: [id]\n    sequence-by: source.lsn\n"
                                + "    scd-type: 2\n    columns: [id, name, source.lsn]\n    schema: 'id INT, name STRING, n INT'\n",
                        "f.yaml");
        IngestPlan.Flow f = IngestPlanner.plan(cfg, List.of(capture())).flows.get(0);
        assertThat(f.target).isEqualTo(TableIdentifier.of("silver", "items"));
        assertThat(f.spec.targetType().toString())
                .isEqualTo(
                        "ROW<`id` INT NOT NULL, `name` STRING, `_source_lsn` BIGINT, `__START_AT` BIGINT NOT NULL, `__END_AT` BIGINT>");
        assertThat(f.spec.identifierFields()).containsExactly("id", "__START_AT");
    }

    static final String ADD_COLUMNS_FLOWS =
            "namespace: silver\nflows:\n"
                    + "  - table: items\n    keys: [id]\n    columns: [id, name, source.lsn]\n"
                    + "    schema: 'id INT, name STRING'\n    on-schema-change: add-columns\n"
                    + "  - table: items\n    target: items_history\n    scd-type: 2\n    keys: [id]\n"
                    + "    schema: 'id INT, name STRING'\n    on-schema-change: add-columns\n";

    static SchemaChangeException newColumnW() {
        return new SchemaChangeException(
                "items",
                "items",
                "srv.inventory.items",
                0,
                5,
                List.of(new RowType.RowField("w", VarCharType.STRING_TYPE)));
    }

    @Test
    void addedColumnsWidenEveryFlowOfTheSourceAndAnIncludeList() throws Exception {
        IngestPlan plan =
                IngestPlanner.plan(FlowsFile.parse(ADD_COLUMNS_FLOWS, "f.yaml"), List.of());
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        ClusterIngest.ensureTables(cat, plan);
        assertThat(IngestPlanner.withAddedColumns(plan, cat)).isSameAs(plan);

        assertThat(AddColumns.apply(cat, plan, newColumnW(), true))
                .containsExactly("silver.items: + w STRING", "silver.items_history: + w STRING");
        assertThat(AddColumns.apply(cat, plan, newColumnW(), true)).as("idempotent").isEmpty();
        assertThat(cat.loadTable(TableIdentifier.of("silver", "items_history")).schema().columns())
                .extracting(Types.NestedField::name)
                .containsExactly("id", "name", "w", "__START_AT", "__END_AT");

        IngestPlan wider = IngestPlanner.withAddedColumns(plan, cat);
        IngestPlan.Flow current = wider.flows.get(0);
        IngestPlan.Flow history = wider.flows.get(1);
        assertThat(current.decoder.dataType().toString())
                .isEqualTo("ROW<`id` INT, `name` STRING, `w` STRING>");
        assertThat(current.spec.targetType().getFieldNames())
                .containsExactly("id", "name", "w", "_source_lsn");
        assertThat(history.spec.targetType().getFieldNames())
                .containsExactly("id", "name", "w", "__START_AT", "__END_AT");
        assertThat(IngestJob.sameRouting(current.decoder, history.decoder))
                .as("one decoder serves both")
                .isTrue();
        ClusterIngest.ensureTables(cat, wider); // the evolved tables match the wider plan (A1)
    }

    @Test
    void addColumnsRefusesToOutgrowSavedStateRows() throws Exception {
        String flows =
                "namespace: silver\nflows:\n  - table: items\n    keys: [id]\n"
                        + "    schema: 'id INT, a INT, b INT, c INT, d INT, e INT, f INT, g INT'\n    on-schema-change: add-columns\n";
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "f.yaml"), List.of());
        Catalog cat = CatalogSettings.localHadoop(tmp.resolve("wh")).open();
        ClusterIngest.ensureTables(cat, plan);
        assertThatThrownBy(() -> AddColumns.apply(cat, plan, newColumnW(), true))
                .isInstanceOfSatisfying(
                        ChangeRecordException.class,
                        e -> assertThat(e.code()).isEqualTo(QuarantineReason.SCHEMA_CHANGED))
                .hasMessageContaining(
                        "table silver.items would grow from 8 to 9 stored columns with w STRING")
                .hasMessageContaining("--from-scratch");
        assertThat(cat.loadTable(TableIdentifier.of("silver", "items")).schema().findField("w"))
                .isNull();
        // without saved state there is nothing to read back: the column is added
        assertThat(AddColumns.apply(cat, plan, newColumnW(), false))
                .containsExactly("silver.items: + w STRING");
    }

    @Test
    void aTableWithoutRecordsNeedsADeclaredSchema() throws Exception {
        IngestConfig cfg = FlowsFile.parse("flows:\n  - table: orders\n    keys: [id]\n", "f.yaml");
        assertThatThrownBy(() -> IngestPlanner.plan(cfg, List.of(capture())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("flow 'orders': no record of table 'orders' found")
                .hasMessageContaining("declare them with 'schema:");
    }

    @Test
    void plainJsonNeedsASequenceAndAKeyDroppedByColumnsIsRejected() throws Exception {
        IngestConfig json =
                FlowsFile.parse(
                        "format: json\nflows:\n  - table: t\n    keys: [id]\n    schema: 'id INT'\n",
                        "f.yaml");
        assertThatThrownBy(() -> IngestPlanner.plan(json, List.of(capture())))
                .hasMessage("flow 't': 'sequence-by' is required for format json");
        IngestConfig dropped =
                FlowsFile.parse(
                        "flows:\n  - table: items\n    keys: [id]\n    columns: '* EXCEPT (id)'\n",
                        "f.yaml");
        assertThatThrownBy(() -> IngestPlanner.plan(dropped, List.of(capture())))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(AutoCdcException.Code.KEY_DROPPED_BY_COLUMNS));
    }

    @Test
    void aSinglePlainJsonFlowTakesEveryRecord() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        "format: json\nflows:\n  - table: t\n    keys: [id]\n    sequence-by: s\n    schema: 'id INT, s INT'\n",
                        "f.yaml");
        assertThat(IngestPlanner.plan(cfg, List.of(capture())).flows.get(0).decoder.sourceNames())
                .isEmpty();
    }
}

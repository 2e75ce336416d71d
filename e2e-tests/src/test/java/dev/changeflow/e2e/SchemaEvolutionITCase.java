package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.changeflow.e2e.BadInputITCase.ev;
import static dev.changeflow.e2e.BadInputITCase.src;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schema evolution without loss through the local ingest (the {@code bin/changeflow ingest} path,
 * semantics.md A7), over three runs of one job, each ending with a savepoint the next resumes from:
 * a column added in the middle of a file (the records between the savepoint and the first record
 * carrying it are read again and apply with null there), then a column dropped at the source (kept
 * in the table, null from then on, or the stored value where IGNORE NULL UPDATES covers it), with a
 * later run whose sampled records lack the dropped column. Nothing is quarantined.
 */
class SchemaEvolutionITCase {
    @TempDir Path tmp;

    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: schema-evolution",
                    "namespace: shop",
                    "flows:",
                    "  - table: items",
                    "    keys: [id]",
                    "    on-schema-change: add-columns",
                    "  - table: items",
                    "    target: items_keep",
                    "    keys: [id]",
                    "    ignore-null-updates: true",
                    "    on-schema-change: add-columns");

    private static String before(String op, String before, long lsn) {
        return ev(op, "null", src(lsn)).replace("\"before\":null", "\"before\":" + before);
    }

    @Test
    void noRecordIsLostAcrossAColumnAddedMidFileAndAColumnDropped() throws Exception {
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Path warehouse = tmp.resolve("warehouse");
        Files.write(
                input.resolve("1.jsonl"),
                List.of(
                        ev("c", "{\"id\":1,\"region\":\"a\",\"v\":1}", src(100)),
                        ev("c", "{\"id\":2,\"region\":\"b\",\"v\":2}", src(101))));
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(FLOWS, "flows.yaml"), List.of(input));
        LocalIngest.Summary first =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(first.quarantined).isZero();

        // run 2: n appears in the third record; the two before it lack n and follow the savepoint
        Files.write(
                input.resolve("2.jsonl"),
                List.of(
                        ev("u", "{\"id\":2,\"region\":\"b2\",\"v\":20}", src(102)),
                        ev("c", "{\"id\":3,\"region\":\"c\",\"v\":3}", src(103)),
                        ev("c", "{\"id\":4,\"region\":\"d\",\"v\":4,\"n\":40}", src(104)),
                        ev("u", "{\"id\":1,\"region\":\"a\",\"v\":10,\"n\":null}", src(105)),
                        ev("u", "{\"id\":3,\"region\":\"c\",\"v\":30,\"n\":33}", src(106))));
        LocalIngest.Summary second =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns)
                .containsExactly("shop.items: + n BIGINT", "shop.items_keep: + n BIGINT");
        assertThat(second.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().findField("n").type()).isEqualTo(Types.LongType.get());
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,a,10,", "2,b2,20,", "3,c,30,33", "4,d,4,40");

        // run 3: region dropped at the source; planned from a sample that lacks region too
        Files.write(
                input.resolve("3.jsonl"),
                List.of(
                        ev("u", "{\"id\":3,\"v\":31,\"n\":34}", src(107)),
                        ev("c", "{\"id\":5,\"v\":5,\"n\":50}", src(108)),
                        ev("u", "{\"id\":4,\"v\":41,\"n\":null}", src(109)),
                        before("d", "{\"id\":2,\"v\":20,\"n\":null}", 110)));
        IngestPlan afterDrop =
                IngestPlanner.plan(
                        FlowsFile.parse(FLOWS, "flows.yaml"), List.of(input.resolve("3.jsonl")));
        assertThat(afterDrop.flows.get(0).decoder.dataType().getFieldNames())
                .containsExactly("id", "v", "n");
        LocalIngest.Summary third =
                LocalIngest.run(afterDrop, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(third.quarantined).isZero();
        assertThat(third.addedColumns).isEmpty();
        items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().columns())
                .extracting(Types.NestedField::name)
                .containsExactly("id", "region", "v", "n");
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,a,10,", "3,,31,34", "4,,41,", "5,,5,50");
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items_keep"))))
                .containsExactly("1,a,10,", "3,c,31,34", "4,d,41,40", "5,,5,50");
        TableIdentifier quarantine = TableIdentifier.of("shop", "changeflow_quarantine");
        if (cat.tableExists(quarantine)) {
            assertThat(TableRows.read(cat.loadTable(quarantine))).isEmpty();
        }
    }

    @Test
    void aRecordWhoseSchemaWrapperWidensAColumnWidensTheTableAndNothingIsLost() throws Exception {
        String flows =
                String.join(
                        "\n",
                        "name: schema-widening",
                        "namespace: shop",
                        "flows:",
                        "  - table: items",
                        "    keys: [id]",
                        "    schema: 'id INT, region STRING, v INT'",
                        "    on-schema-change: add-columns");
        Path input = tmp.resolve("in");
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan =
                firstRun(
                        flows,
                        input,
                        warehouse,
                        ev("c", "{\"id\":1,\"region\":\"a\",\"v\":1}", src(100)),
                        ev("c", "{\"id\":2,\"region\":\"b\",\"v\":2}", src(101)));

        // the source widened v to BIGINT: the second record's wrapper says int64, its value needs
        // it
        String widenedSchema =
                "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"before\","
                        + "\"optional\":true,\"fields\":[]},{\"type\":\"struct\",\"field\":\"after\","
                        + "\"optional\":true,\"fields\":[{\"type\":\"int32\",\"field\":\"id\"},"
                        + "{\"type\":\"string\",\"field\":\"region\",\"optional\":true},"
                        + "{\"type\":\"int64\",\"field\":\"v\",\"optional\":true}]}]}";
        String wide =
                withSchema(
                        ev("u", "{\"id\":1,\"region\":\"a\",\"v\":3000000000}", src(103)),
                        widenedSchema);
        Files.write(
                input.resolve("2.jsonl"),
                List.of(
                        ev("u", "{\"id\":2,\"region\":\"b\",\"v\":20}", src(102)),
                        wide,
                        ev("c", "{\"id\":3,\"region\":\"c\",\"v\":3}", src(104))));
        LocalIngest.Summary second =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns).containsExactly("shop.items: v INT → BIGINT");
        assertThat(second.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().findField("v").type()).isEqualTo(Types.LongType.get());
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,a,3000000000", "2,b,20", "3,c,3");
    }

    /**
     * The same without a schema wrapper (A7 item 4): a value beyond its INT column, one beyond its
     * DECIMAL(10, 2) column and one its FLOAT column cannot hold each stop the run before they
     * apply; the table widens (BIGINT, DECIMAL(18, 2), DOUBLE) and the run resumes from its last
     * checkpoint, over its saved state (migrated for the FLOAT).
     */
    @Test
    void aValueBeyondItsColumnWithoutWrapperWidensTheTableAndNothingIsLost() throws Exception {
        String flows =
                String.join(
                        "\n",
                        "name: value-widening",
                        "namespace: shop",
                        "flows:",
                        "  - table: items",
                        "    keys: [id]",
                        "    schema: 'id INT, v INT, price DECIMAL(10, 2), f FLOAT'",
                        "    on-schema-change: add-columns");
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Path warehouse = tmp.resolve("warehouse");
        Files.write(
                input.resolve("1.jsonl"),
                List.of(
                        ev("c", "{\"id\":1,\"v\":1,\"price\":1.50,\"f\":0.5}", src(100)),
                        ev("c", "{\"id\":2,\"v\":2,\"price\":2.25,\"f\":0.1}", src(101))));
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of());
        assertThat(
                        LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse))
                                .quarantined)
                .isZero();
        Files.write(
                input.resolve("2.jsonl"),
                List.of(
                        ev("u", "{\"id\":2,\"v\":20,\"price\":2.25}", src(102)),
                        ev("u", "{\"id\":1,\"v\":3000000000,\"price\":1.50,\"f\":0.5}", src(103)),
                        ev("u", "{\"id\":2,\"v\":21,\"price\":123456789012.75}", src(104)),
                        ev("c", "{\"id\":3,\"v\":3,\"price\":0.01}", src(105)),
                        ev("u", "{\"id\":2,\"v\":21,\"f\":0.123456789012}", src(106))));
        LocalIngest.Summary second =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns)
                .containsExactly(
                        "shop.items: v INT → BIGINT",
                        "shop.items: price DECIMAL(10, 2) → DECIMAL(18, 2)",
                        "shop.items: f FLOAT → DOUBLE");
        assertThat(second.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().findField("v").type()).isEqualTo(Types.LongType.get());
        assertThat(items.schema().findField("price").type()).isEqualTo(Types.DecimalType.of(18, 2));
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,3000000000,1.50,0.5", "2,21,,0.123456789012", "3,3,0.01,");
        assertThat(items.schema().findField("f").type()).isEqualTo(Types.DoubleType.get());
    }

    /**
     * FLOAT → DOUBLE and DECIMAL(10, 2) → DECIMAL(20, 2) in the middle of a run, over saved state
     * of an SCD type 1 and an SCD type 2 flow (A7 item 4): the job stops at the widening record,
     * the columns are widened, and the resumed job migrates its stored rows, so a record carrying
     * the stored values changes nothing and the later changes give exact rows.
     */
    @Test
    void aFloatAndADecimalWidenedMidRunOverSavedStateLoseNothing() throws Exception {
        String flows =
                String.join(
                        "\n",
                        "name: schema-widening-stored",
                        "namespace: shop",
                        "flows:",
                        "  - table: items",
                        "    keys: [id]",
                        "    schema: 'id INT, region STRING, f FLOAT, d DECIMAL(10, 2)'",
                        "    on-schema-change: add-columns",
                        "  - table: items",
                        "    target: items_history",
                        "    keys: [id]",
                        "    scd-type: 2",
                        "    schema: 'id INT, region STRING, f FLOAT, d DECIMAL(10, 2)'",
                        "    on-schema-change: add-columns");
        Path input = tmp.resolve("in");
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan =
                firstRun(
                        flows,
                        input,
                        warehouse,
                        ev("c", "{\"id\":1,\"region\":\"a\",\"f\":1.5,\"d\":12.34}", src(100)),
                        ev("c", "{\"id\":2,\"region\":\"b\",\"f\":2.25,\"d\":7.5}", src(101)));

        // the source widened f to float64 and d to DECIMAL(20, 2): the wrapper says so, and the
        // values need it (0.1 is no float; 20 digits)
        String widenedSchema =
                "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"before\","
                        + "\"optional\":true,\"fields\":[]},{\"type\":\"struct\",\"field\":\"after\","
                        + "\"optional\":true,\"fields\":[{\"type\":\"int32\",\"field\":\"id\"},"
                        + "{\"type\":\"string\",\"field\":\"region\",\"optional\":true},"
                        + "{\"type\":\"float64\",\"field\":\"f\",\"optional\":true},"
                        + "{\"type\":\"bytes\",\"field\":\"d\",\"optional\":true,"
                        + "\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":"
                        + "{\"scale\":\"2\",\"connect.decimal.precision\":\"20\"}}]}]}";
        String d =
                java.util.Base64.getEncoder()
                        .encodeToString(
                                new java.math.BigInteger("12345678901234567899").toByteArray());
        String wide =
                withSchema(
                        ev(
                                "u",
                                "{\"id\":1,\"region\":\"a\",\"f\":0.1,\"d\":\"" + d + "\"}",
                                src(103)),
                        widenedSchema);
        Files.write(
                input.resolve("2.jsonl"),
                List.of(
                        // the stored values again: no change, before and after the widening
                        ev("u", "{\"id\":2,\"region\":\"b\",\"f\":2.25,\"d\":7.5}", src(102)),
                        wide,
                        ev("c", "{\"id\":3,\"region\":\"c\",\"f\":3,\"d\":1}", src(104))));
        LocalIngest.Summary second =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns)
                .containsExactly(
                        "shop.items: f FLOAT → DOUBLE, d DECIMAL(10, 2) → DECIMAL(20, 2)",
                        "shop.items_history: f FLOAT → DOUBLE, d DECIMAL(10, 2) → DECIMAL(20, 2)");
        assertThat(second.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().findField("f").type()).isEqualTo(Types.DoubleType.get());
        assertThat(items.schema().findField("d").type()).isEqualTo(Types.DecimalType.of(20, 2));
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,a,0.1,123456789012345678.99", "2,b,2.25,7.50", "3,c,3.0,1.00");
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items_history"))))
                .containsExactly(
                        // the version closed at the widening carries the stored row, exact
                        "1,a,1.5,12.34,100,103",
                        "1,a,0.1,123456789012345678.99,103,",
                        // the update with the stored values opened no version
                        "2,b,2.25,7.50,101,",
                        "3,c,3.0,1.00,104,");
        assertThat(
                        TableRows.read(
                                cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine"))))
                .isEmpty();
    }

    private static final String ITEMS_FLOWS =
            String.join(
                    "\n",
                    "name: items",
                    "namespace: shop",
                    "flows:",
                    "  - table: items",
                    "    keys: [id]",
                    "    on-schema-change: add-columns");

    private static String change(String op, String before, String after, long lsn) {
        return ev(op, after, src(lsn)).replace("\"before\":null", "\"before\":" + before);
    }

    /** ids 1, 2 with (id, name); then id 3 and an update of id 1 with a DOUBLE price. */
    private static List<String> pricesAppear() {
        return List.of(
                ev("c", "{\"id\":1,\"name\":\"apple\"}", src(100)),
                ev("c", "{\"id\":2,\"name\":\"pear\"}", src(200)),
                ev("c", "{\"id\":3,\"name\":\"plum\",\"price\":1.5}", src(300)),
                change(
                        "u",
                        "{\"id\":1,\"name\":\"apple\"}",
                        "{\"id\":1,\"name\":\"apple\",\"price\":2.25}",
                        400));
    }

    /** A second new column, stock, with price; then a delete of id 3. */
    private static List<String> stockAppears() {
        return List.of(
                ev("c", "{\"id\":4,\"name\":\"fig\",\"price\":3,\"stock\":7}", src(500)),
                change(
                        "u",
                        "{\"id\":2,\"name\":\"pear\"}",
                        "{\"id\":2,\"name\":\"pear\",\"price\":0.5,\"stock\":1}",
                        600),
                change("d", "{\"id\":3,\"name\":\"plum\",\"price\":1.5}", "null", 700));
    }

    private static List<String> columns(Catalog cat) {
        return cat.loadTable(TableIdentifier.of("shop", "items")).schema().columns().stream()
                .map(Types.NestedField::name)
                .toList();
    }

    /**
     * A column added by a later run goes after the columns earlier runs added (A7), where the saved
     * state rows have them: the run resumes from its state, and so does the one after it.
     */
    @Test
    void aSecondAddedColumnGoesLastAndLaterRunsResumeFromTheState() throws Exception {
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Path warehouse = tmp.resolve("warehouse");
        Files.write(input.resolve("a1.jsonl"), pricesAppear());
        LocalIngest.Summary first =
                LocalIngest.run(
                        IngestPlanner.plan(
                                FlowsFile.parse(ITEMS_FLOWS, "flows.yaml"), List.of(input)),
                        List.of(input),
                        KeysCasesITCase.quiet(warehouse));
        assertThat(first.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(columns(cat)).containsExactly("id", "name", "price");

        Files.write(input.resolve("a2.jsonl"), stockAppears());
        LocalIngest.Summary second =
                LocalIngest.run(
                        IngestPlanner.plan(
                                FlowsFile.parse(ITEMS_FLOWS, "flows.yaml"), List.of(input)),
                        List.of(input),
                        KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns).containsExactly("shop.items: + stock BIGINT");
        assertThat(second.quarantined).isZero();
        assertThat(columns(cat)).containsExactly("id", "name", "price", "stock");
        Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,apple,2.25,", "2,pear,0.5,1", "4,fig,3.0,7");

        // the state saved by run 2 reads back: an update of a row stored before stock was added
        Files.write(
                input.resolve("a3.jsonl"),
                List.of(
                        change(
                                "u",
                                "{\"id\":1,\"name\":\"apple\",\"price\":2.25}",
                                "{\"id\":1,\"name\":\"apple\",\"price\":2.5,\"stock\":9}",
                                800)));
        LocalIngest.Summary third =
                LocalIngest.run(
                        IngestPlanner.plan(
                                FlowsFile.parse(ITEMS_FLOWS, "flows.yaml"), List.of(input)),
                        List.of(input),
                        KeysCasesITCase.quiet(warehouse));
        assertThat(third.addedColumns).isEmpty();
        assertThat(third.applied).isEqualTo(1);
        items.refresh();
        assertThat(TableRows.toCsvLines(items))
                .containsExactly("1,apple,2.5,9", "2,pear,0.5,1", "4,fig,3.0,7");
    }

    /**
     * {@code --from-scratch} drops the tables and the state once, at the start of the launch: the
     * restarts after each schema change resume, and both new columns stay, in the order they came.
     */
    @Test
    void fromScratchWithTwoSchemaChangesDropsTheTablesOnceAndResumesAfterEachChange()
            throws Exception {
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Path warehouse = tmp.resolve("warehouse");
        Files.write(input.resolve("p1.jsonl"), pricesAppear().subList(0, 2));
        LocalIngest.run(
                IngestPlanner.plan(FlowsFile.parse(ITEMS_FLOWS, "flows.yaml"), List.of(input)),
                List.of(input),
                KeysCasesITCase.quiet(warehouse));

        // both changes in one file: the order files are read in is not fixed, the lines' is
        List<String> changes = new ArrayList<>(pricesAppear().subList(2, 4));
        changes.addAll(stockAppears());
        Files.write(input.resolve("p2.jsonl"), changes);
        LocalIngest.Options o = KeysCasesITCase.quiet(warehouse);
        o.fromScratch = true;
        LocalIngest.Summary s =
                LocalIngest.run(
                        IngestPlanner.plan(
                                FlowsFile.parse(ITEMS_FLOWS, "flows.yaml"),
                                List.of(input.resolve("p1.jsonl"))),
                        List.of(input),
                        o);
        assertThat(s.addedColumns)
                .containsExactly("shop.items: + price DOUBLE", "shop.items: + stock BIGINT");
        assertThat(s.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(columns(cat)).containsExactly("id", "name", "price", "stock");
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items"))))
                .containsExactly("1,apple,2.25,", "2,pear,0.5,1", "4,fig,3.0,7");
    }

    /**
     * Writes {@code lines} as {@code input/1.jsonl} and runs the flows over it once: nothing may be
     * quarantined.
     *
     * @return the plan, for the next runs
     */
    private static IngestPlan firstRun(String flows, Path input, Path warehouse, String... lines)
            throws Exception {
        Files.createDirectories(input);
        Files.write(input.resolve("1.jsonl"), List.of(lines));
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of());
        assertThat(
                        LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse))
                                .quarantined)
                .isZero();
        return plan;
    }

    /**
     * The record {@code line} with its value wrapped as {@code {"schema": ..., "payload": value}}.
     */
    private static String withSchema(String line, String schema) {
        int valueAt = line.indexOf("\"value\":") + "\"value\":".length();
        int topicAt = line.lastIndexOf(",\"topic\":");
        return line.substring(0, valueAt)
                + "{\"schema\":"
                + schema
                + ",\"payload\":"
                + line.substring(valueAt, topicAt)
                + "}"
                + line.substring(topicAt);
    }
}

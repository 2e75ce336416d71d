package dev.changeflow.jobs.flow;

import dev.changeflow.jobs.ingest.LocalMetrics;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link AutoCdcFlow}: the public builder, run on a local environment into a real catalog. */
class AutoCdcFlowTest {
    @TempDir Path warehouse;

    private static String record(String op, Integer id, String name, long lsn) {
        String row = id == null ? "null" : "{\"id\":" + id + ",\"name\":\"" + name + "\"}";
        String before = op.equals("d") ? row : "null";
        String after = op.equals("d") ? "null" : row;
        return "{\"before\":"
                + before
                + ",\"after\":"
                + after
                + ",\"source\":{\"connector\":\"postgresql\",\"schema\":\"shop\",\"table\":\"items\","
                + "\"lsn\":"
                + lsn
                + ",\"txId\":1},\"op\":\""
                + op
                + "\",\"ts_ms\":1}";
    }

    @Test
    void appliesDebeziumRecordsWithPredicatesAndQuarantinesBadOnes() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        DataStream<String> records =
                env.fromData(
                        record("c", 1, "a", 10),
                        record("c", 2, "x", 11),
                        record("u", 1, "b", 12),
                        record("u", 3, "gone", 13),
                        record("d", 2, "x", 14),
                        record("u", 1, "older", 5),
                        "not json");
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        AutoCdcFlow flow =
                AutoCdcFlow.forStream(records)
                        .sourceTable("items")
                        .keys("id")
                        .sequenceBy("source.lsn")
                        .schema("id INT, name STRING")
                        .applyAsDeleteWhen("name = 'gone'")
                        .storedAs(ScdType.TYPE_1)
                        .option("apply-buffer-keys", "0")
                        .catalog(catalog)
                        .into("shop.items");
        assertThat(flow.target()).isEqualTo(TableIdentifier.of("shop", "items"));
        assertThat(flow.spec().applyBufferKeys()).isZero();
        env.execute("auto cdc flow test");

        Catalog cat = catalog.open();
        Table table = cat.loadTable(TableIdentifier.of("shop", "items"));
        List<String> rows = new ArrayList<>();
        for (Record r : TableRows.read(table)) {
            rows.add(r.getField("id") + "," + r.getField("name"));
        }
        // 1: updated by lsn 12, the late lsn 5 ignored; 2: deleted; 3: deleted by the predicate
        assertThat(rows).containsExactly("1,b");
        List<String> reasons = new ArrayList<>();
        for (Record r :
                TableRows.read(cat.loadTable(QuarantineTable.identifier(Namespace.of("shop"))))) {
            reasons.add(String.valueOf(r.getField("reason")));
        }
        assertThat(reasons).containsExactly("MALFORMED_JSON");
    }

    /**
     * REPLACE USING (docs/semantics.md S5) through the builder: plain JSON rows, several per key,
     * out of order, with a tie, a replay, a null key value and a null sequence (quarantined).
     */
    @Test
    void replaceUsingKeepsPerKeyTheRowsOfTheHighestSequence() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        DataStream<String> rows =
                env.fromData(
                        "{\"b\":\"b1\",\"p\":\"p1\",\"s\":2}",
                        "{\"b\":\"b1\",\"p\":\"p2\",\"s\":1}",
                        "{\"b\":\"b1\",\"p\":\"p3\",\"s\":2}",
                        "{\"b\":\"b1\",\"p\":\"p1\",\"s\":2}",
                        "{\"b\":null,\"p\":\"n1\",\"s\":1}",
                        "{\"b\":null,\"p\":\"n2\",\"s\":3}",
                        "{\"b\":\"b2\",\"p\":\"p4\",\"s\":null}");
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        AutoCdcFlow flow =
                AutoCdcFlow.forStream(rows)
                        .format("json")
                        .sourceTable("payments")
                        .replaceUsing("b")
                        .sequenceBy("s")
                        .schema("b STRING, p STRING, s BIGINT")
                        .catalog(catalog)
                        .into("shop.payments");
        assertThat(flow.spec()).isNull();
        env.execute("replace using");

        Catalog cat = catalog.open();
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "payments"))))
                .containsExactly(",n2,3", "b1,p1,2", "b1,p3,2");
        List<String> reasons = new ArrayList<>();
        for (Record r :
                TableRows.read(cat.loadTable(QuarantineTable.identifier(Namespace.of("shop"))))) {
            reasons.add(String.valueOf(r.getField("reason")));
        }
        assertThat(reasons).containsExactly("NULL_SEQUENCE");

        // K8: a second job without the first one's state must not apply rows to the full table
        StreamExecutionEnvironment again = StreamExecutionEnvironment.createLocalEnvironment(1);
        AutoCdcFlow.forStream(again.fromData("{\"b\":\"b1\",\"p\":\"p9\",\"s\":1}"))
                .format("json")
                .sourceTable("payments")
                .replaceUsing("b")
                .sequenceBy("s")
                .schema("b STRING, p STRING, s BIGINT")
                .catalog(catalog)
                .into("shop.payments");
        assertThatThrownBy(() -> again.execute("replace using without state"))
                .rootCause()
                .hasMessageContaining("STATE_MISSING_FOR_EXISTING_TABLE");
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "payments"))))
                .containsExactly(",n2,3", "b1,p1,2", "b1,p3,2");
    }

    /** A Debezium MongoDB change event as a capture line ({@code after} a JSON string or null). */
    private static String mongo(long id, String op, String after, String extra, int ord) {
        return "{\"key\":{\"id\":\""
                + id
                + "\"},\"value\":{\"before\":null,\"after\":"
                + after
                + extra
                + ",\"source\":{\"connector\":\"mongodb\",\"db\":\"inventory\","
                + "\"collection\":\"customers\",\"ord\":"
                + ord
                + "},\"op\":\""
                + op
                + "\",\"ts_ms\":1}}";
    }

    private static String str(String doc) {
        return "\"" + doc.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String updated(String fields, String removed) {
        return ",\"updateDescription\":{\"removedFields\":"
                + removed
                + ",\"updatedFields\":"
                + str(fields)
                + ",\"truncatedArrays\":null}";
    }

    /**
     * MongoDB updates without full documents (A5 "MongoDB partial updates") through the whole flow:
     * the changed fields take their values, removed ones null, the others keep the stored value —
     * SCD type 1 and 2; a partial update of a key without a stored row is quarantined.
     */
    @Test
    void mongoPartialUpdatesKeepTheUntouchedColumnsInScd1AndScd2() throws Exception {
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        String doc =
                "{\"_id\": {\"$numberLong\": \"1004\"}, \"name\": \"Anne\","
                        + " \"balance\": {\"$numberDecimal\": \"12.30\"}, \"ref\": \"r1\"}";
        List<String> lines =
                List.of(
                        mongo(1004, "c", str(doc), "", 1),
                        mongo(
                                1004,
                                "u",
                                "null",
                                updated("{\"name\": \"Anne Marie\"}", "[\"ref\"]"),
                                2),
                        mongo(
                                1004,
                                "u",
                                "null",
                                updated("{\"balance\": {\"$numberDecimal\": \"7.10\"}}", "null"),
                                3),
                        mongo(1006, "u", "null", updated("{\"name\": \"Nobody\"}", "null"), 4));
        // the launcher's metric reporter: its sum of 'quarantined' is the run summary's count
        Configuration conf = new Configuration();
        conf.setString(LocalMetrics.CONFIG_KEY, LocalMetrics.Factory.class.getName());
        LocalMetrics.reset();
        for (ScdType type : List.of(ScdType.TYPE_1, ScdType.TYPE_2)) {
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.createLocalEnvironment(1, conf);
            String target = type == ScdType.TYPE_1 ? "shop.customers" : "shop.customers_history";
            AutoCdcFlow.forStream(env.fromData(lines))
                    .sourceTable("customers")
                    .keys("_id")
                    .sequenceBy("source.ord")
                    .schema("_id BIGINT, name STRING, balance DECIMAL(10, 2), ref STRING")
                    .storedAs(type)
                    .catalog(catalog)
                    .into(target);
            env.execute("mongo partial updates " + type);
        }
        Catalog cat = catalog.open();
        List<String> scd1 = new ArrayList<>();
        for (Record r : TableRows.read(cat.loadTable(TableIdentifier.parse("shop.customers")))) {
            scd1.add(TableRows.toCsvLine(r));
        }
        assertThat(scd1).containsExactly("1004,Anne Marie,7.10,");
        Table history = cat.loadTable(TableIdentifier.parse("shop.customers_history"));
        List<Record> rows = TableRows.read(history);
        TableRows.sortByIdentifierFields(history.schema(), rows);
        List<String> scd2 = new ArrayList<>();
        for (Record r : rows) {
            scd2.add(TableRows.toCsvLine(r));
        }
        assertThat(scd2)
                .containsExactly(
                        "1004,Anne,12.30,r1,1,2",
                        "1004,Anne Marie,12.30,,2,3",
                        "1004,Anne Marie,7.10,,3,");
        List<String> reasons = new ArrayList<>();
        for (Record r :
                TableRows.read(cat.loadTable(QuarantineTable.identifier(Namespace.of("shop"))))) {
            reasons.add(r.getField("reason") + " " + r.getField("flow"));
        }
        assertThat(reasons).hasSize(2).allMatch(r -> r.startsWith("UNAVAILABLE_VALUE "));
        // the AUTO CDC operator's quarantine rows are counted as the summary counts quarantined
        assertThat(LocalMetrics.sum("quarantined")).isEqualTo(2);
        // the partial update of 1006, a key without a stored row, says what is missing (A5)
        List<String> details = new ArrayList<>();
        for (Record r :
                TableRows.read(cat.loadTable(QuarantineTable.identifier(Namespace.of("shop"))))) {
            details.add(r.getField("flow") + ": " + r.getField("detail"));
        }
        assertThat(details)
                .containsExactlyInAnyOrder(
                        "customers: columns [balance, ref] were not in the MongoDB partial update"
                                + " (an update without the full document) and the key has no"
                                + " stored row to keep their values from",
                        "customers_history: columns [balance, ref] were not in the MongoDB partial"
                                + " update (an update without the full document) and the key has"
                                + " no stored row below this record to keep their values from");
    }

    /** S8: the builder's expect(...) becomes the spec's expectations; a bad one fails in into. */
    @Test
    void expectationsOfTheBuilderReachTheSpec() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        AutoCdcFlow flow =
                AutoCdcFlow.forStream(env.fromData("{}"))
                        .sourceTable("items")
                        .keys("id")
                        .schema("id INT, name STRING")
                        .expect("named", "name IS NOT NULL", Expectation.OnViolation.DROP_ROW)
                        .expect("pos", "id > 0", Expectation.OnViolation.KEEP)
                        .catalog(catalog)
                        .into("shop.items");
        assertThat(flow.spec().expectations())
                .containsExactly(
                        new Expectation(
                                "named", "name IS NOT NULL", Expectation.OnViolation.DROP_ROW),
                        new Expectation("pos", "id > 0", Expectation.OnViolation.KEEP));
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(env.fromData("{}"))
                                        .sourceTable("items")
                                        .keys("id")
                                        .schema("id INT, name STRING")
                                        .expect("bad", "nme > 0", Expectation.OnViolation.KEEP)
                                        .catalog(catalog)
                                        .into("shop.items2"))
                .hasMessageStartingWith(
                        "flow 'items2': expectation 'bad' (nme > 0) is not a valid Flink SQL"
                                + " boolean expression over the columns");
    }

    @Test
    void badDefinitionsFailNamingTheOptionAndTheValue() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        DataStream<String> records = env.fromData("{}");
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(records)
                                        .keys("id")
                                        .schema("id INT")
                                        .option("apply-bufer-keys", "1")
                                        .catalog(catalog)
                                        .into("shop.items"))
                .hasMessageStartingWith(
                        "AutoCdcFlow into shop.items: unknown option 'apply-bufer-keys' (known: ");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(records)
                                        .keys("id")
                                        .schema("id INT")
                                        .option("apply-buffer-keys", "-1")
                                        .catalog(catalog)
                                        .into("shop.items"))
                .hasMessage(
                        "AutoCdcFlow into shop.items: apply-buffer-keys must be a whole number of keys"
                                + " per subtask from 0 (no buffering) to 2147483647, got '-1'");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(records)
                                        .keys("id")
                                        .catalog(catalog)
                                        .into("shop.items"))
                .hasMessage(
                        "AutoCdcFlow into shop.items: give schema(\"col TYPE, ...\"): a stream has no"
                                + " sample to infer the columns from");
        assertThatThrownBy(
                        () -> AutoCdcFlow.forStream(records).keys("id").schema("id INT").into("t"))
                .hasMessage("AutoCdcFlow into t: give catalog(CatalogSettings)");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(records)
                                        .keys("id")
                                        .schema("id INT")
                                        .catalog(catalog)
                                        .into("items"))
                .hasMessage("AutoCdcFlow into 'items': give the table as namespace.table");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(records)
                                        .schema("id INT")
                                        .catalog(catalog)
                                        .into("shop.items"))
                .hasMessage(
                        "flow 'items': 'keys' is required (or set 'append-only: true' for a key-less"
                                + " table)");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(records)
                                        .schema("id INT")
                                        .option("replace-where", "id > 1")
                                        .catalog(catalog)
                                        .into("shop.items"))
                .hasMessage(
                        "AutoCdcFlow into 'shop.items': a REPLACE WHERE flow (options"
                                + " 'replace-where', 'query') is built with"
                                + " ReplaceWhereFlow.query(...).where(...)");
    }

    /**
     * AUTO CDC FROM SNAPSHOT (A6) through the builder: a bounded job over two snapshot files gives
     * example (c) of semantics.md A6 as an SCD type 2 table.
     */
    @Test
    void fromSnapshotsAppliesSnapshotFilesInVersionOrder() throws Exception {
        Path folder = java.nio.file.Files.createDirectories(warehouse.resolve("exports"));
        java.nio.file.Files.write(
                folder.resolve("snapshot_2.csv"),
                List.of("id,city", "2,Carmel", "3,Los Angeles", "4,Death Valley"));
        java.nio.file.Files.write(
                folder.resolve("snapshot_1.csv"),
                List.of("id,city", "1,Oaxaca", "2,Monterrey", "3,Tijuana"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        AutoCdcFlow flow =
                AutoCdcFlow.fromSnapshots(env, folder.toString())
                        .keys("id")
                        .schema("id BIGINT, city STRING")
                        .storedAs(ScdType.TYPE_2)
                        .catalog(catalog)
                        .into("geo.cities");
        assertThat(flow.spec().sequenceBy()).containsExactly("_snapshot_version");
        env.execute("from snapshots");
        assertThat(
                        TableRows.toCsvLines(
                                catalog.open().loadTable(TableIdentifier.of("geo", "cities"))))
                .containsExactly(
                        "1,Oaxaca,1,2",
                        "2,Monterrey,1,2",
                        "2,Carmel,2,",
                        "3,Tijuana,1,2",
                        "3,Los Angeles,2,",
                        "4,Death Valley,2,");
    }

    /** AUTO CDC FROM SNAPSHOT (A6): definitions that cannot work fail in {@code into}. */
    @Test
    void fromSnapshotsRefusesChangeRecordOptionsAndUnversionedFiles() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        Path folder = java.nio.file.Files.createDirectories(warehouse.resolve("exports"));
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshots(env, folder.toString())
                                        .keys("id")
                                        .schema("id BIGINT, city STRING")
                                        .option("sequence-by", "city")
                                        .option("apply-as-delete-when", "city IS NULL")
                                        .catalog(catalog)
                                        .into("geo.cities"))
                .hasMessage(
                        "flow 'cities': 'from-snapshot' takes no [sequence-by, apply-as-delete-when]"
                                + " (the snapshot version orders the changes and absent keys are the"
                                + " deletes, docs/semantics.md A6)");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshots(env, folder.toString())
                                        .keys("id")
                                        .catalog(catalog)
                                        .into("geo.cities"))
                .hasMessageStartingWith("flow 'cities': 'from-snapshot' needs 'schema'");
        java.nio.file.Files.writeString(folder.resolve("cities_latest.csv"), "id,city\n");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshots(env, folder.toString())
                                        .keys("id")
                                        .schema("id BIGINT, city STRING")
                                        .catalog(catalog)
                                        .into("geo.cities"))
                .hasMessageStartingWith(
                        "SNAPSHOT_VERSION_NOT_SORTABLE: snapshot file 'cities_latest.csv' has no"
                                + " integer version in its name");
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.forStream(env.fromData("{}"))
                                        .keys("id")
                                        .schema("id INT")
                                        .option("from-snapshot", folder.toString())
                                        .catalog(catalog)
                                        .into("shop.items"))
                .hasMessage(
                        "AutoCdcFlow into shop.items: from-snapshot flows are built with"
                                + " AutoCdcFlow.fromSnapshots");
    }

    /**
     * AUTO CDC FROM SNAPSHOT (A6): a KEYS column outside the declared schema lists the declared
     * columns only (not the internal version column), and a missing folder is
     * SNAPSHOT_FOLDER_NOT_FOUND naming the flow and the folder.
     */
    @Test
    void fromSnapshotsNamesDeclaredColumnsAndAMissingFolder() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        CatalogSettings catalog = CatalogSettings.localHadoop(warehouse);
        Path folder = java.nio.file.Files.createDirectories(warehouse.resolve("exports"));
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshots(env, folder.toString())
                                        .keys("code")
                                        .schema("id BIGINT, city STRING")
                                        .catalog(catalog)
                                        .into("geo.cities"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "KEY_NOT_IN_SOURCE: flow 'cities': KEYS column 'code' is not in the"
                                + " flow's schema [id, city]; name an existing column");
        Path missing = warehouse.resolve("no-such-exports").toAbsolutePath();
        assertThatThrownBy(
                        () ->
                                AutoCdcFlow.fromSnapshots(env, missing.toString())
                                        .keys("id")
                                        .schema("id BIGINT, city STRING")
                                        .catalog(catalog)
                                        .into("geo.cities"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "SNAPSHOT_FOLDER_NOT_FOUND: flow 'cities': snapshot folder "
                                + missing
                                + " does not exist; 'from-snapshot' names the folder that holds"
                                + " the snapshot files (snapshot_1.csv, snapshot_2.csv, ...)");
    }
}

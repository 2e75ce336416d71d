package dev.changeflow.jobs.config;

import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import org.apache.flink.configuration.ConfigOption;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FlowsFileTest {

    @Test
    void readsEveryFlowOption() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        String.join(
                                "\n",
                                "name: shop",
                                "format: json",
                                "namespace: silver",
                                "catalog: {type: rest, uri: 'http://127.0.0.1:8181'}",
                                "checkpoint-interval: 500ms",
                                "parallelism: 3",
                                "flows:",
                                "  - table: orders",
                                "    target: gold.orders_current",
                                "    name: orders-scd2",
                                "    keys: [id, region]",
                                "    sequence-by: STRUCT(ts, seq)",
                                "    scd-type: 2",
                                "    columns: '* EXCEPT (op, ts)'",
                                "    ignore-null-updates: [note]",
                                "    track-history-on: '* EXCEPT (note)'",
                                "    schema: 'id BIGINT, region STRING, ts TIMESTAMP(3), seq INT, op STRING, note STRING'",
                                "    partitioned-by: [region, 'bucket(8, id)']",
                                "    apply-as-delete-when: \"op = 'DELETE'\"",
                                "    tombstone-gc-threshold: 36h",
                                "    on-invalid-record: fail",
                                "    on-schema-change: add-columns",
                                "    format-version: 3",
                                "  - table: audit",
                                "    append-only: true"),
                        "test.yaml");
        assertThat(cfg.name).isEqualTo("shop");
        assertThat(cfg.format).isEqualTo("json");
        assertThat(cfg.namespace).isEqualTo("silver");
        assertThat(cfg.catalog)
                .containsEntry("type", "rest")
                .containsEntry("uri", "http://127.0.0.1:8181");
        assertThat(cfg.checkpointInterval).isEqualTo(Duration.ofMillis(500));
        assertThat(cfg.parallelism).isEqualTo(3);
        FlowConfig f = cfg.flows.get(0);
        assertThat(f.table).isEqualTo("orders");
        assertThat(f.targetNamespace()).isEqualTo("gold");
        assertThat(f.targetName()).isEqualTo("orders_current");
        assertThat(f.flowName()).isEqualTo("orders-scd2");
        assertThat(f.keys).containsExactly("id", "region");
        assertThat(f.sequenceBy).containsExactly("ts", "seq");
        assertThat(f.scdType).isEqualTo(ScdType.TYPE_2);
        assertThat(f.columns).isEqualTo(ColumnSelection.except(List.of("op", "ts")));
        assertThat(f.ignoreNullUpdates).isEqualTo(ColumnSelection.include(List.of("note")));
        assertThat(f.trackHistoryOn).isEqualTo(ColumnSelection.except(List.of("note")));
        assertThat(f.partitionedBy).containsExactly("region", "bucket(8, id)");
        assertThat(f.applyAsDeleteWhen).isEqualTo("op = 'DELETE'");
        assertThat(f.tombstoneGcThreshold).isEqualTo(Duration.ofHours(36));
        assertThat(f.onInvalidRecord).isEqualTo("fail");
        assertThat(f.onSchemaChange).isEqualTo("add-columns");
        assertThat(f.formatVersion).isEqualTo(3);
        FlowConfig audit = cfg.flows.get(1);
        assertThat(audit.appendOnly).isTrue();
        assertThat(audit.flowName()).isEqualTo("audit");
    }

    @Test
    void ignoreNullUpdatesTakesTrueAListOrExcept() throws Exception {
        assertThat(flow("ignore-null-updates: true").ignoreNullUpdates)
                .isEqualTo(ColumnSelection.all());
        assertThat(flow("ignore-null-updates: false").ignoreNullUpdates).isNull();
        assertThat(flow("ignore-null-updates: '* EXCEPT (a)'").ignoreNullUpdates)
                .isEqualTo(ColumnSelection.except(List.of("a")));
        assertThat(flow("ignore-null-updates: 'a, b'").ignoreNullUpdates)
                .isEqualTo(ColumnSelection.include(List.of("a", "b")));
    }

    @Test
    void sequenceTakesOneColumnAListOrStruct() throws Exception {
        assertThat(flow("sequence-by: source.lsn").sequenceBy).containsExactly("source.lsn");
        assertThat(flow("sequence-by: [a, b]").sequenceBy).containsExactly("a", "b");
        assertThat(flow("sequence-by: 'struct(a,b)'").sequenceBy).containsExactly("a", "b");
    }

    /** S2: the read_files arguments of a pipeline file are flows-file options too. */
    @Test
    void readFilesArgumentsAreFlowsFileOptions() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        String.join(
                                "\n",
                                "format: csv",
                                "max-files-per-trigger: 2",
                                "flows:",
                                "  - table: orders",
                                "    keys: [id]",
                                "    sequence-by: seq",
                                "    schema-hints: 'amount DECIMAL(10,2), ts TIMESTAMP_NTZ'",
                                ""),
                        "x.yaml");
        assertThat(cfg.format).isEqualTo("csv");
        assertThat(cfg.maxFilesPerTrigger).isEqualTo(2);
        assertThat(cfg.flows.get(0).schemaHints)
                .isEqualTo("amount DECIMAL(10,2), ts TIMESTAMP_NTZ");
        assertThat(FlowOptions.schemaHintColumns(cfg.flows.get(0).schemaHints).asSummaryString())
                .isEqualTo("ROW<`amount` DECIMAL(10, 2), `ts` TIMESTAMP(6)>");
    }

    /**
     * A misspelt key is named at its place in the file ({@code file:line:column}) with the closest
     * known option; a key close to none lists the known options.
     */
    @Test
    void rejectsUnknownOptionsNamingThem() {
        assertThatThrownBy(() -> flow("sequnce-by: lsn"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "x.yaml:4:5: flow 't': unknown option 'sequnce-by' (did you mean"
                                + " 'sequence-by'?)");
        assertThatThrownBy(() -> flow("sequence-bi: ts"))
                .hasMessage(
                        "x.yaml:4:5: flow 't': unknown option 'sequence-bi' (did you mean"
                                + " 'sequence-by'?)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "name: shop\nflows:\n  - table: t\n    keyz: [id]\n",
                                        "x.yaml"))
                .hasMessage("x.yaml:4:5: flow 't': unknown option 'keyz' (did you mean 'keys'?)");
        assertThatThrownBy(() -> FlowsFile.parse("flws: []", "x.yaml"))
                .hasMessage("x.yaml:1:1: unknown option 'flws' (did you mean 'flows'?)");
        assertThatThrownBy(() -> FlowsFile.parse("name: n\nzzzzzzzz: 1\n", "x.yaml"))
                .hasMessage(
                        "x.yaml:2:1: unknown option 'zzzzzzzz' (known: catalog, checkpoint-interval, checkpoint-timeout, csv-comment, csv-escape, csv-header, csv-null-value, csv-quote, csv-sep, file-readers, flows, format, include-existing-files, kafka, kafka-readers, max-files-per-trigger, max-record-bytes, name, namespace, parallelism)");
    }

    @Test
    void rejectsBadValues() throws Exception {
        assertThatThrownBy(() -> flow("scd-type: 3"))
                .hasMessage("x.yaml: flow 't': scd-type must be 1 or 2, got '3'");
        assertThatThrownBy(() -> flow("on-invalid-record: drop"))
                .hasMessage("flow 't': 'on-invalid-record' must be quarantine or fail, got 'drop'");
        assertThatThrownBy(() -> flow("on-schema-change: ignore"))
                .hasMessage(
                        "flow 't': 'on-schema-change' must be fail, quarantine or add-columns, got 'ignore'");
        assertThatThrownBy(() -> flow("format-version: 1"))
                .hasMessage("flow 't': 'format-version' must be 2 or 3, got 1");
        assertThatThrownBy(() -> flow("tombstone-gc-threshold: soon"))
                .hasMessageContaining("tombstone-gc-threshold: not a duration: 'soon'");
        assertThatThrownBy(() -> flow("append-only: maybe"))
                .hasMessageContaining("append-only must be true or false, got 'maybe'");
        assertThatThrownBy(() -> flow("apply-buffer-keys: -1"))
                .hasMessage(
                        "x.yaml: flow 't': apply-buffer-keys must be a whole"
                                + " number of keys per subtask from 0 (no buffering) to 2147483647, got '-1'");
        assertThatThrownBy(() -> flow("apply-buffer-keys: lots"))
                .hasMessageEndingWith("got 'lots'");
        assertThatThrownBy(() -> flow("apply-buffer-keys: 1.5")).hasMessageEndingWith("got '1.5'");
        assertThatThrownBy(() -> flow("apply-buffer-keys: 3000000000"))
                .hasMessageEndingWith("to 2147483647, got '3000000000'");
        assertThatThrownBy(() -> flow("apply-buffer-keys:"))
                .hasMessageEndingWith("got an empty value");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: h\n    append-only: true\n    apply-buffer-keys: 10\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 'h': 'append-only: true' takes no 'apply-buffer-keys' (an append-only flow keeps no AUTO CDC state to buffer)");
        // S2: include-existing-files is a file-level option of a files input
        assertThat(FlowsFile.parse("include-existing-files: false", "x.yaml").includeExistingFiles)
                .isFalse();
        assertThat(FlowsFile.parse("name: n", "x.yaml").includeExistingFiles).isTrue();
        assertThatThrownBy(() -> FlowsFile.parse("include-existing-files: maybe", "x.yaml"))
                .hasMessage("x.yaml: include-existing-files must be true or false, got 'maybe'");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "include-existing-files: false\n"
                                                + "kafka:\n  bootstrap-servers: h:9092\n"
                                                + "  topics: t\n",
                                        "x.yaml"))
                .hasMessage(
                        "x.yaml: include-existing-files applies to files; a kafka: input chooses"
                                + " where it starts with starting-offsets (latest skips what is"
                                + " already in the topics)");
        assertThatThrownBy(() -> FlowsFile.parse("format: avro", "x.yaml"))
                .hasMessage(
                        "x.yaml: 'format' must be json, debezium-json, csv or parquet, got 'avro'");
        // S1: a select list shapes the rows of an append-only flow, whose columns are its own
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: h\n    keys: [id]\n    sequence-by: s\n"
                                                + "    select: id\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 'h': 'select' and 'select-where' shape the rows of an append-only"
                                + " flow; set 'append-only: true' (docs/semantics.md S1)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: h\n    append-only: true\n"
                                                + "    select-where: id > 1\n"
                                                + "    on-schema-change: add-columns\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 'h': 'on-schema-change: add-columns' adds source columns to the"
                                + " table, but a flow with 'select' or 'select-where' writes the"
                                + " columns of its select list (docs/semantics.md S1)");
        FlowConfig ok =
                FlowsFile.parse(
                                "flows:\n  - table: h\n    append-only: true\n"
                                        + "    select: \"id, upper(n) AS n\"\n"
                                        + "    select-where: id > 1\n",
                                "x.yaml")
                        .flows
                        .get(0);
        assertThat(ok.select).isEqualTo("id, upper(n) AS n");
        assertThat(ok.selectWhere).isEqualTo("id > 1");
    }

    /** S8: expectations as a list of {name, expect, on-violation}; bad shapes are named. */
    @Test
    void expectationsAreAListOfNameExpectAndOnViolation() throws Exception {
        assertThat(
                        flow("expectations:\n"
                                        + "      - {name: pos, expect: 'v > 0'}\n"
                                        + "      - {name: named, expect: 'n IS NOT NULL',"
                                        + " on-violation: drop-row}\n"
                                        + "      - {name: small, expect: 'v < 9', on-violation:"
                                        + " FAIL_UPDATE}")
                                .expectations)
                .containsExactly(
                        new Expectation("pos", "v > 0", Expectation.OnViolation.KEEP),
                        new Expectation("named", "n IS NOT NULL", Expectation.OnViolation.DROP_ROW),
                        new Expectation("small", "v < 9", Expectation.OnViolation.FAIL_UPDATE));
        assertThat(flow("scd-type: 1").expectations).isEmpty();
        assertThatThrownBy(() -> flow("expectations: 'v > 0'"))
                .hasMessageContaining(
                        "'expectations' must be a list of {name: ..., expect: <Flink SQL boolean>,"
                                + " on-violation: keep | drop-row | fail-update}, got 'v > 0'");
        assertThatThrownBy(() -> flow("expectations: [{name: a, check: 'v > 0'}]"))
                .hasMessageContaining(
                        "expectation 1 has the unknown key 'check' (known: name, expect,"
                                + " on-violation)");
        assertThatThrownBy(() -> flow("expectations: [{name: a}]"))
                .hasMessageContaining("expectation 1 needs 'name' and 'expect', got {name=a}");
        assertThatThrownBy(() -> flow("expectations: [{name: a, expect: x, on-violation: warn}]"))
                .hasMessageContaining(
                        "on-violation must be keep, drop-row or fail-update, got 'warn'");
        // an append-only flow checks the rows it appends (S8)
        assertThat(
                        FlowsFile.parse(
                                        "flows:\n  - table: h\n    append-only: true\n"
                                                + "    expectations: [{name: a, expect: 'x > 0',"
                                                + " on-violation: drop-row}]\n",
                                        "x.yaml")
                                .flow("h")
                                .expectations)
                .containsExactly(new Expectation("a", "x > 0", Expectation.OnViolation.DROP_ROW));
    }

    /** M1: in-job compaction options; off by default, production defaults, bad values named. */
    @Test
    void maintenanceOptionsDefaultOffAndAreReadWithTheirTriggers() throws Exception {
        TableMaintenanceOptions off = flow("scd-type: 1").maintenance;
        assertThat(off).isEqualTo(TableMaintenanceOptions.off());
        assertThat(off.enabled()).isFalse();
        assertThat(off.commitCount()).isEqualTo(100);
        assertThat(off.dataFileCount()).isEqualTo(500);
        assertThat(off.deleteFileCount()).isEqualTo(10);
        assertThat(off.interval()).isEqualTo(Duration.ofHours(1));
        assertThat(off.rateLimit()).isEqualTo(Duration.ofMinutes(1));
        assertThat(off.deleteFileThreshold()).isEqualTo(1);
        assertThat(off.lockJdbcUri()).isNull();
        assertThat(off.expireOlderThan()).isEqualTo(Duration.ofDays(1));
        assertThat(off.retainLast()).isZero();
        assertThat(off.expireInterval()).isEqualTo(Duration.ofHours(1));
        assertThat(off.manifestCount()).isEqualTo(50);
        assertThat(off.orphansOlderThan()).isEqualTo(Duration.ofDays(3));
        assertThat(off.orphansInterval()).isEqualTo(Duration.ofDays(1));
        assertThat(off.expiryGraphOn()).isFalse();
        assertThat(off.orphansOn()).isFalse();

        // maintenance: true alone turns expiry, manifest rewrite and orphan removal on too
        TableMaintenanceOptions defaults = flow("maintenance: true").maintenance;
        assertThat(defaults.expiryGraphOn()).isTrue();
        assertThat(defaults.orphansOn()).isTrue();
        assertThat(defaults.expireOlderThan()).isEqualTo(Duration.ofDays(1));
        assertThat(defaults.manifestCount()).isEqualTo(50);

        TableMaintenanceOptions on =
                flow("maintenance: true\n"
                                + "    maintenance-commit-count: 3\n"
                                + "    maintenance-data-file-count: 0\n"
                                + "    maintenance-delete-file-count: 7\n"
                                + "    maintenance-interval: 0\n"
                                + "    maintenance-rate-limit: 500ms\n"
                                + "    maintenance-delete-file-threshold: 4\n"
                                + "    maintenance-lock-jdbc-uri: jdbc:postgresql://db/locks")
                        .maintenance;
        assertThat(on.enabled()).isTrue();
        assertThat(on.commitCount()).isEqualTo(3);
        assertThat(on.dataFileCount()).isZero();
        assertThat(on.deleteFileCount()).isEqualTo(7);
        assertThat(on.interval()).isNull();
        assertThat(on.rateLimit()).isEqualTo(Duration.ofMillis(500));
        assertThat(on.deleteFileThreshold()).isEqualTo(4);
        assertThat(on.lockJdbcUri()).isEqualTo("jdbc:postgresql://db/locks");
        // expiry on by default with maintenance, and the other defaults kept
        assertThat(on.expiryGraphOn()).isTrue();
        assertThat(on.orphansOn()).isTrue();
    }

    /** M2: the in-job expiry, manifest and orphan options; each switchable off with 0. */
    @Test
    void expiryManifestAndOrphanOptionsAreReadAndSwitchOff() throws Exception {
        TableMaintenanceOptions set =
                flow("maintenance: true\n"
                                + "    maintenance-expire-older-than: 2d\n"
                                + "    maintenance-retain-last: 10\n"
                                + "    maintenance-expire-interval: 15min\n"
                                + "    maintenance-manifest-count: 20\n"
                                + "    maintenance-orphans-older-than: 5d\n"
                                + "    maintenance-orphans-interval: 12h")
                        .maintenance;
        assertThat(set.expireOlderThan()).isEqualTo(Duration.ofDays(2));
        assertThat(set.retainLast()).isEqualTo(10);
        assertThat(set.expireInterval()).isEqualTo(Duration.ofMinutes(15));
        assertThat(set.manifestCount()).isEqualTo(20);
        assertThat(set.orphansOlderThan()).isEqualTo(Duration.ofDays(5));
        assertThat(set.orphansInterval()).isEqualTo(Duration.ofHours(12));

        TableMaintenanceOptions noExpiry =
                flow("maintenance: true\n" + "    maintenance-expire-older-than: 0").maintenance;
        assertThat(noExpiry.expireOlderThan()).isNull();
        assertThat(noExpiry.expiryGraphOn()).as("the manifest check still runs").isTrue();
        TableMaintenanceOptions noExpiryGraph =
                flow("maintenance: true\n"
                                + "    maintenance-expire-older-than: 0\n"
                                + "    maintenance-manifest-count: 0")
                        .maintenance;
        assertThat(noExpiryGraph.expiryGraphOn()).isFalse();
        assertThat(
                        flow("maintenance: true\n" + "    maintenance-expire-interval: 0")
                                .maintenance
                                .expiryGraphOn())
                .isFalse();
        assertThat(
                        flow("maintenance: true\n" + "    maintenance-orphans-older-than: 0")
                                .maintenance
                                .orphansOn())
                .isFalse();
        assertThat(
                        flow("maintenance: true\n" + "    maintenance-orphans-interval: 0")
                                .maintenance
                                .orphansOn())
                .isFalse();
        assertThat(
                        flow("maintenance: true\n" + "    maintenance-orphans-older-than: 1h")
                                .maintenance
                                .orphansOlderThan())
                .isEqualTo(Duration.ofHours(1));
    }

    @Test
    void badExpiryManifestAndOrphanValuesAreNamed() {
        assertThatThrownBy(() -> flow("maintenance-expire-older-than: soon"))
                .hasMessageContaining("maintenance-expire-older-than: not a duration: 'soon'");
        assertThatThrownBy(() -> flow("maintenance-retain-last: -1"))
                .hasMessage(
                        "x.yaml: flow 't': maintenance-retain-last must be a whole number of"
                                + " snapshots from 0 (the table's setting) to 2147483647, got"
                                + " '-1'");
        assertThatThrownBy(() -> flow("maintenance-retain-last: all"))
                .hasMessageEndingWith("got 'all'");
        assertThatThrownBy(() -> flow("maintenance-expire-interval: hourly"))
                .hasMessageContaining("maintenance-expire-interval: not a duration: 'hourly'");
        assertThatThrownBy(() -> flow("maintenance-manifest-count: -5"))
                .hasMessage(
                        "x.yaml: flow 't': maintenance-manifest-count must be a whole number of"
                                + " data manifests from 0 (off) to 2147483647, got '-5'");
        assertThatThrownBy(() -> flow("maintenance-orphans-older-than: 30min"))
                .hasMessage(
                        "x.yaml: flow 't': maintenance-orphans-older-than must be 0 (off) or at"
                                + " least 1h (the job's files not committed yet are younger and"
                                + " must stay), got '30min'");
        assertThatThrownBy(() -> flow("maintenance-orphans-older-than: old"))
                .hasMessageContaining("maintenance-orphans-older-than: not a duration: 'old'");
        assertThatThrownBy(() -> flow("maintenance-orphans-interval: daily"))
                .hasMessageContaining("maintenance-orphans-interval: not a duration: 'daily'");
    }

    /**
     * M1: {@code maintenance-*} options without {@code maintenance: true} would have no effect;
     * they are refused, unless the flow turns maintenance off itself (its settings kept for later).
     */
    @Test
    void maintenanceOptionsWithoutTheSwitchAreRefused() throws Exception {
        assertThatThrownBy(() -> flow("maintenance-interval: 10min"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "flow 't': 'maintenance-interval' tunes in-job maintenance, which is off"
                                + " unless turned on (docs/semantics.md M1); set 'maintenance' to"
                                + " true");
        assertThatThrownBy(
                        () ->
                                flow(
                                        "maintenance-orphans-interval: 1h\n"
                                                + "    maintenance-commit-count: 5"))
                .hasMessage(
                        "flow 't': 'maintenance-commit-count', 'maintenance-orphans-interval'"
                                + " tune in-job maintenance, which is off unless turned on"
                                + " (docs/semantics.md M1); set 'maintenance' to true");
        TableMaintenanceOptions off =
                flow("maintenance: false\n" + "    maintenance-commit-count: 5").maintenance;
        assertThat(off.enabled()).isFalse();
        assertThat(off.commitCount()).isEqualTo(5);
    }

    @Test
    void badMaintenanceValuesAreNamed() {
        assertThatThrownBy(() -> flow("maintenance: sometimes"))
                .hasMessageContaining("maintenance must be true or false, got 'sometimes'");
        assertThatThrownBy(() -> flow("maintenance-commit-count: -1"))
                .hasMessage(
                        "x.yaml: flow 't': maintenance-commit-count must be a whole number of"
                                + " commits from 0 (off) to 2147483647, got '-1'");
        assertThatThrownBy(() -> flow("maintenance-data-file-count: many"))
                .hasMessageEndingWith("got 'many'");
        assertThatThrownBy(() -> flow("maintenance-delete-file-count: 1.5"))
                .hasMessageEndingWith("got '1.5'");
        assertThatThrownBy(() -> flow("maintenance-interval: often"))
                .hasMessageContaining("maintenance-interval: not a duration: 'often'");
        assertThatThrownBy(() -> flow("maintenance-rate-limit: 0"))
                .hasMessageContaining(
                        "maintenance-rate-limit must be a duration above zero, got '0'");
        assertThatThrownBy(() -> flow("maintenance-delete-file-threshold: 0"))
                .hasMessageContaining(
                        "maintenance-delete-file-threshold must be a whole number of delete files"
                                + " from 1 to 2147483647, got '0'");
        assertThatThrownBy(() -> flow("maintenance-lock-jdbc-uri: postgresql://db/locks"))
                .hasMessageContaining(
                        "'maintenance-lock-jdbc-uri' must be a JDBC URI (jdbc:...), got"
                                + " 'postgresql://db/locks'");
        assertThatThrownBy(
                        () ->
                                flow(
                                        "maintenance: true\n"
                                                + "    maintenance-commit-count: 0\n"
                                                + "    maintenance-data-file-count: 0\n"
                                                + "    maintenance-delete-file-count: 0\n"
                                                + "    maintenance-interval: 0"))
                .hasMessageContaining("maintenance is on but every trigger is off");
    }

    @Test
    void applyBufferKeysDefaultsToTheOperatorsDefaultAndAcceptsZero() throws Exception {
        assertThat(flow("scd-type: 1").applyBufferKeys).isEqualTo(100_000);
        assertThat(flow("apply-buffer-keys: 0").applyBufferKeys).isZero();
        assertThat(flow("apply-buffer-keys: 5000").applyBufferKeys).isEqualTo(5_000);
        assertThat(flow("apply-buffer-keys: 2147483647").applyBufferKeys)
                .isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void keysAreRequiredUnlessAppendOnly() {
        assertThatThrownBy(() -> FlowsFile.parse("flows:\n  - table: t\n", "x.yaml"))
                .hasMessage(
                        "flow 't': 'keys' is required (or set 'append-only: true' for a key-less table)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: t\n    append-only: true\n    keys: [a]\n",
                                        "x.yaml"))
                .hasMessage("flow 't': 'append-only: true' takes no 'keys' (got [a])");
        assertThatThrownBy(() -> FlowsFile.parse("flows:\n  - keys: [a]\n", "x.yaml"))
                .hasMessage("a flow needs 'table' (the source table name)");
    }

    /** S5: {@code replace-using} lists the key columns and needs {@code sequence-by}. */
    @Test
    void replaceUsingTakesItsColumnsAndSequenceByAndRefusesAutoCdcOptions() throws Exception {
        FlowConfig f =
                FlowsFile.parse(
                                "flows:\n  - table: payments\n    replace-using: [booking_id, region]\n"
                                        + "    sequence-by: payment_date\n",
                                "x.yaml")
                        .flows
                        .get(0);
        assertThat(f.replaceUsing).containsExactly("booking_id", "region");
        assertThat(f.sequenceBy).containsExactly("payment_date");
        assertThat(f.keys).isEmpty();
        assertThat(f.isReplaceUsing()).isTrue();
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: p\n    replace-using: [b]\n", "x.yaml"))
                .hasMessage(
                        "flow 'p': 'replace-using' needs 'sequence-by' (the column that orders the"
                                + " partial snapshots of a key, docs/semantics.md S5)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: p\n    replace-using: [b]\n"
                                                + "    sequence-by: s\n    keys: [b]\n"
                                                + "    scd-type: 2\n    apply-as-delete-when: 'b IS NULL'\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 'p': 'replace-using' takes no [keys, scd-type, apply-as-delete-when]"
                                + " (its key columns are 'replace-using', and every incoming column"
                                + " is stored, docs/semantics.md S5)");
    }

    /**
     * S4: a {@code replace-where} flow takes a target and a query, goes to {@code replaceWheres}
     * (not to the ingest job's flows), and keeps where its predicate and query are written.
     */
    @Test
    void replaceWhereTakesATargetAndAQueryAndKeepsTheirPlaces() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        String.join(
                                "\n",
                                "flows:",
                                "  - table: payments",
                                "    keys: [id]",
                                "  - name: daily_totals",
                                "    target: gold.daily_totals",
                                "    replace-where: \"day >= CURRENT_DATE - INTERVAL '7' DAY\"",
                                "    query: |",
                                "      SELECT day, SUM(amount) AS total",
                                "      FROM changeflow.silver.payments GROUP BY day",
                                "    schema: 'day DATE, total BIGINT'",
                                "    partitioned-by: [day]",
                                "  - target: weekly",
                                "    replace-where: week >= 1",
                                "    query: SELECT 1 AS week"),
                        "x.yaml");
        assertThat(cfg.flows).extracting(f -> f.table).containsExactly("payments");
        assertThat(cfg.replaceWheres).hasSize(2);
        FlowConfig f = cfg.replaceWheres.get(0);
        assertThat(f.isReplaceWhere()).isTrue();
        assertThat(f.flowName()).isEqualTo("daily_totals");
        assertThat(f.target).isEqualTo("gold.daily_totals");
        assertThat(f.replaceWhere).isEqualTo("day >= CURRENT_DATE - INTERVAL '7' DAY");
        assertThat(f.query)
                .isEqualTo(
                        "SELECT day, SUM(amount) AS total\n"
                                + "FROM changeflow.silver.payments GROUP BY day\n");
        assertThat(f.schema).isEqualTo("day DATE, total BIGINT");
        assertThat(f.partitionedBy).containsExactly("day");
        // after the opening quote; a block scalar's first line
        assertThat(f.replaceWherePosition)
                .isEqualTo(new dev.changeflow.jobs.sql.SqlPosition("x.yaml", 6, 21));
        assertThat(f.queryPosition)
                .isEqualTo(new dev.changeflow.jobs.sql.SqlPosition("x.yaml", 8, 7));
        FlowConfig w = cfg.replaceWheres.get(1);
        assertThat(w.flowName()).isEqualTo("weekly");
        assertThat(w.replaceWherePosition)
                .isEqualTo(new dev.changeflow.jobs.sql.SqlPosition("x.yaml", 13, 20));
        assertThat(w.queryPosition)
                .isEqualTo(new dev.changeflow.jobs.sql.SqlPosition("x.yaml", 14, 12));
        assertThat(cfg.replaceWhere("WEEKLY")).isSameAs(w);
        assertThat(cfg.replaceWhere("gold.daily_totals")).isSameAs(f);
    }

    /** S4: the options a REPLACE WHERE flow does not take, and the parts it needs. */
    @Test
    void replaceWhereRefusesTheOptionsOfRecordFlowsAndNeedsItsParts() {
        String head = "flows:\n  - name: d\n    target: gold.d\n    replace-where: 'x > 1'\n";
        assertThatThrownBy(() -> FlowsFile.parse(head, "x.yaml"))
                .hasMessage(
                        "flow 'd': 'replace-where' needs 'query' (a bounded Flink SQL query over"
                                + " the catalog's tables whose columns match the target's by"
                                + " name, docs/semantics.md S4)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        head
                                                + "    query: SELECT 2 AS x\n    table: t\n"
                                                + "    keys: [x]\n    sequence-by: x\n"
                                                + "    from-snapshot: snaps\n"
                                                + "    tombstone-gc-threshold: 1d\n"
                                                + "    maintenance: true\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 'd': 'replace-where' takes no [from-snapshot, keys, maintenance,"
                                + " sequence-by, table, tombstone-gc-threshold] (its query names"
                                + " the tables it reads and every refresh recomputes the slice in"
                                + " one batch job, docs/semantics.md S4; it takes [format-version,"
                                + " name, partitioned-by, query, replace-where, schema, target])");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - name: d\n    replace-where: 'x > 1'\n"
                                                + "    query: SELECT 2 AS x\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 'd': 'replace-where' needs 'target' (the table whose slice it"
                                + " replaces, [namespace.]name)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - table: t\n    keys: [k]\n"
                                                + "    query: SELECT 1 AS k\n",
                                        "x.yaml"))
                .hasMessage(
                        "flow 't': 'query' is the query of a REPLACE WHERE flow; add"
                                + " 'replace-where: <predicate>' (the slice of the target each"
                                + " refresh replaces, docs/semantics.md S4)");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "flows:\n  - target: gold.d\n    replace-where: ''\n"
                                                + "    query: SELECT 2 AS x\n",
                                        "x.yaml"))
                .hasMessageContaining("'replace-where' must not be empty");
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        head
                                                + "    query: SELECT 2 AS x\n"
                                                + "  - target: other.d\n    replace-where: x = 1\n"
                                                + "    query: SELECT 1 AS x\n",
                                        "x.yaml"))
                .hasMessage(
                        "x.yaml: two REPLACE WHERE flows are named 'd' (a flow without 'name' is"
                                + " named after its target): give one a 'name'");
    }

    @Test
    void listsSplitAtTopLevelCommasOnly() throws Exception {
        assertThat(flow("partitioned-by: 'bid, bucket(16, aid)'").partitionedBy)
                .containsExactly("bid", "bucket(16, aid)");
        assertThat(flow("partitioned-by: ['bucket(16, aid)']").partitionedBy)
                .containsExactly("bucket(16, aid)");
    }

    @Test
    void badYamlNamesFileLineAndColumn() {
        assertThatThrownBy(() -> FlowsFile.parse("flows:\n  - table: [t\n", "x.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("x.yaml:2:14: not valid YAML: while parsing a flow sequence");
        assertThatThrownBy(() -> FlowsFile.parse("name: a\nname: b\nflows: []\n", "x.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("x.yaml:2:5: not valid YAML: Duplicate field 'name'");
    }

    @Test
    void theReadmeStatesTheDeclaredDefaults() throws Exception {
        String readme = readme();
        String section =
                readme.substring(
                        readme.indexOf("## Flows file"), readme.indexOf("## Quarantine table"));
        Map<String, String> documented = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^\\| `([a-z-]+)` \\| ([^|]*) \\|").matcher(section);
        while (m.find()) {
            documented.put(m.group(1), m.group(2).trim());
        }
        Map<String, String> declared = new TreeMap<>();
        Map<String, String> inReadme = new TreeMap<>();
        for (ConfigOption<?> o : FlowOptions.SET.options().values()) {
            if (o.hasDefaultValue()) {
                declared.put(o.key(), "`" + defaultText(o.defaultValue()) + "`");
                inReadme.put(o.key(), documented.get(o.key()));
            }
        }
        assertThat(inReadme).isEqualTo(declared);
        for (ConfigOption<?> o : IngestOptions.SET.options().values()) {
            if (o.hasDefaultValue()) {
                String text = section.replaceAll("\\s+", " ");
                assertThat(text)
                        .as("file-level option " + o.key() + " documented with its default")
                        .containsPattern(
                                "`"
                                        + o.key()
                                        + "`[^`]{0,40}\\(default `"
                                        + Pattern.quote(defaultText(o.defaultValue())));
            }
        }
    }

    @Test
    void theReadmeKafkaTableListsTheKafkaOptionsWithTheirDefaults() throws Exception {
        String readme = readme();
        Map<String, String> documented = new TreeMap<>();
        Matcher m =
                Pattern.compile("(?m)^\\| `([a-z-]+)` / `[^`]*` \\| ([^|]*) \\|").matcher(readme);
        while (m.find()) {
            documented.put(m.group(1), m.group(2).trim());
        }
        Set<String> keys = new TreeSet<>(KafkaOptions.SET.keys());
        keys.add("properties");
        assertThat(documented.keySet()).isEqualTo(keys);
        for (ConfigOption<?> o : KafkaOptions.SET.options().values()) {
            if (o.hasDefaultValue()) {
                assertThat(documented.get(o.key()))
                        .isEqualTo("`" + defaultText(o.defaultValue()) + "`");
            }
        }
    }

    /** How the README writes a default: {@code 1}, {@code 2d}, {@code 5s}, {@code 8 MiB}. */
    private static String defaultText(Object value) {
        if (value instanceof ScdType) {
            return value == ScdType.TYPE_1 ? "1" : "2";
        }
        if (value instanceof Duration) {
            Duration d = (Duration) value;
            return d.toSeconds() % 86_400 == 0 ? d.toDays() + "d" : d.toSeconds() + "s";
        }
        if (value instanceof Integer
                && (Integer) value >= 1 << 20
                && (Integer) value % (1 << 20) == 0) {
            return ((Integer) value >> 20) + " MiB";
        }
        return String.valueOf(value);
    }

    @Test
    void theReadmeDocumentsExactlyTheOptionsTheParserAccepts() throws Exception {
        String readme = readme();
        String section =
                readme.substring(
                        readme.indexOf("## Flows file"), readme.indexOf("## Quarantine table"));
        Set<String> table = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `([a-z-]+)` \\|").matcher(section);
        while (m.find()) {
            table.add(m.group(1));
        }
        assertThat(table).isEqualTo(new TreeSet<>(FlowsFile.flowOptionNames()));
        for (String fileOption : FlowsFile.fileOptionNames()) {
            assertThat(
                            section.contains("`" + fileOption + "`")
                                    || section.contains("\n" + fileOption + ":"))
                    .as("file-level option " + fileOption + " documented")
                    .isTrue();
        }
    }

    @Test
    void catalogBlockKeepsRestAndS3PropertiesAndEnvironmentReferencesAsWritten() throws Exception {
        IngestConfig cfg =
                FlowsFile.parse(
                        String.join(
                                "\n",
                                "catalog:",
                                "  type: rest",
                                "  uri: http://iceberg-rest.lakehouse.svc:8181",
                                "  warehouse: s3://lakehouse/warehouse",
                                "  io-impl: org.apache.iceberg.aws.s3.S3FileIO",
                                "  s3.endpoint: http://minio.storage.svc:9000",
                                "  s3.path-style-access: true",
                                "  credential: ${env:ICEBERG_REST_CREDENTIAL}",
                                "flows: []"),
                        "x.yaml");
        assertThat(cfg.catalog)
                .containsExactly(
                        Map.entry("type", "rest"),
                        Map.entry("uri", "http://iceberg-rest.lakehouse.svc:8181"),
                        Map.entry("warehouse", "s3://lakehouse/warehouse"),
                        Map.entry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO"),
                        Map.entry("s3.endpoint", "http://minio.storage.svc:9000"),
                        Map.entry("s3.path-style-access", "true"),
                        Map.entry("credential", "${env:ICEBERG_REST_CREDENTIAL}"));
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "catalog:\n  type: rest\n  header:\n    X-Iceberg-Access-Delegation: vended-credentials\n",
                                        "x.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "x.yaml: catalog: property 'header' must be a single value (Iceberg catalog properties are flat,"
                                + " e.g. 'header.X-Iceberg-Access-Delegation: vended-credentials')");
        assertThatThrownBy(() -> FlowsFile.parse("catalog: rest\n", "x.yaml"))
                .hasMessage(
                        "x.yaml: catalog: a mapping of Iceberg catalog properties, e.g. {type: rest, uri: 'http://...'}");
    }

    @Test
    void aBadCatalogTypeNamesTheFileThePropertyAndTheAcceptedTypes() {
        assertThatThrownBy(() -> FlowsFile.parse("catalog:\n  type: oracle\nflows: []\n", "x.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "x.yaml: catalog: 'type' = 'oracle' is not one of hadoop, rest, jdbc, hive,"
                                + " glue, nessie (or set 'catalog-impl' to a catalog class name).");
    }

    private static FlowConfig flow(String option) throws Exception {
        return FlowsFile.parse(
                        "flows:\n  - table: t\n    keys: [k]\n    " + option + "\n", "x.yaml")
                .flows
                .get(0);
    }

    /** The repository's README.md (found above the module folder). */
    private static String readme() throws IOException {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (!Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        return Files.readString(p.resolve("README.md"));
    }

    @Test
    void fileReadersIsAPositiveCountDefaultingToOneAndForFilesOnly() throws Exception {
        String flows = "flows:\n  - table: a\n    keys: [id]\n";
        assertThat(FlowsFile.parse(flows, "f.yaml").fileReaders).isEqualTo(1);
        assertThat(FlowsFile.parse("file-readers: 2\n" + flows, "f.yaml").fileReaders).isEqualTo(2);
        refusesBadCounts("file-readers", flows, List.of("0", "-3", "many", "2.5"));
        assertThatThrownBy(
                        () ->
                                FlowsFile.parse(
                                        "file-readers: 2\n"
                                                + "kafka:\n  bootstrap-servers: h:9092\n"
                                                + "  topics: t\n"
                                                + flows,
                                        "x.yaml"))
                .hasMessage(
                        "x.yaml: file-readers applies to files; a kafka: input sets its readers"
                                + " with kafka-readers");
    }

    @Test
    void kafkaReadersIsAPositiveCountDefaultingToOne() throws Exception {
        String flows = "flows:\n  - table: a\n    keys: [id]\n";
        assertThat(FlowsFile.parse(flows, "f.yaml").kafkaReaders).isEqualTo(1);
        assertThat(FlowsFile.parse("kafka-readers: 3\n" + flows, "f.yaml").kafkaReaders)
                .isEqualTo(3);
        refusesBadCounts("kafka-readers", flows, List.of("0", "-1", "two", "1.5"));
    }

    /** Each of {@code bad} as the value of subtask count option {@code key} is refused by name. */
    private static void refusesBadCounts(String key, String flows, List<String> bad) {
        for (String b : bad) {
            assertThatThrownBy(() -> FlowsFile.parse(key + ": " + b + "\n" + flows, "f.yaml"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(
                            key
                                    + " must be a whole number of subtasks from 1 to 32767, got '"
                                    + b
                                    + "'");
        }
    }
}

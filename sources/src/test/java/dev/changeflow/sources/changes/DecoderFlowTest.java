package dev.changeflow.sources.changes;

import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DecoderFlowTest {
    private static final RowType DATA =
            SchemaSampler.parseColumns("aid INT, bid INT, abalance INT, filler STRING");

    @Test
    void debeziumSourceTypeAppendsMetadataAndDefaultsSequenceToLsn() {
        DecoderFlow f =
                DecoderFlow.builder("accounts", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                        .keys("aid")
                        .build();
        List<RowType.RowField> expected = new ArrayList<>(DATA.getFields());
        expected.addAll(DebeziumMetadata.FIELDS);
        assertThat(f.sourceType()).isEqualTo(new RowType(expected));
        assertThat(f.sequenceBy()).containsExactly("_source_lsn");
        assertThat(f.metadataColumns()).isEqualTo(DebeziumMetadata.NAMES);
        assertThat(f.onSchemaChange()).isEqualTo(OnSchemaChange.FAIL);
        assertThat(f.onInvalidRecord()).isEqualTo(OnInvalidRecord.QUARANTINE);
        assertThat(f.maxRecordBytes()).isEqualTo(8 * 1024 * 1024);
        assertThat(f.appendOnly()).isFalse();
    }

    @Test
    void sequenceAliasesAreResolvedAndJsonSourceTypeIsTheDataType() {
        DecoderFlow d =
                DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                        .keys("aid")
                        .sequenceBy("source.file", "source.pos")
                        .build();
        assertThat(d.sequenceBy()).containsExactly("_source_file", "_source_pos");
        DecoderFlow j =
                DecoderFlow.builder("j", ChangeRecordFormat.JSON, DATA)
                        .keys("aid")
                        .sequenceBy("bid")
                        .build();
        assertThat(j.sourceType()).isEqualTo(DATA);
        assertThat(j.metadataColumns()).isEmpty();
    }

    @Test
    void rejectsInvalidDefinitions() {
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("flow 'a': KEYS must not be empty (or mark the flow append-only)");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                                        .appendOnly(true)
                                        .keys("aid")
                                        .build())
                .hasMessage("flow 'a': an append-only flow has no KEYS, got [aid]");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                                        .keys("nope")
                                        .build())
                .hasMessage(
                        "flow 'a': key column 'nope' is not a data column; data columns: [aid, bid, abalance, filler]");
        // any member of source is a sequence-only column (A5); other unknown names are refused
        assertThat(
                        DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                                .keys("aid")
                                .sequenceBy("source.xmin")
                                .build()
                                .sequenceOnlyColumns())
                .containsExactly("_source_xmin");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                                        .keys("aid")
                                        .sequenceBy("xmin")
                                        .build())
                .hasMessageStartingWith(
                        "flow 'a': SEQUENCE BY column 'xmin' is not a source column");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder("j", ChangeRecordFormat.JSON, DATA)
                                        .keys("aid")
                                        .build())
                .hasMessage("flow 'j': SEQUENCE BY is required for a keyed plain-JSON flow");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder(
                                                "a",
                                                ChangeRecordFormat.DEBEZIUM_JSON,
                                                SchemaSampler.parseColumns("aid INT, _op STRING"))
                                        .keys("aid")
                                        .build())
                .hasMessage(
                        "flow 'a': data column '_op' clashes with the Debezium metadata column of the same name; rename it");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder(
                                                "a",
                                                ChangeRecordFormat.JSON,
                                                SchemaSampler.parseColumns(
                                                        "aid INT, m MULTISET<INT>"))
                                        .keys("aid")
                                        .sequenceBy("aid")
                                        .build())
                .hasMessage(
                        "flow 'a': column 'm' has type MULTISET<INT>, which the JSON decoder does not produce");
        assertThatThrownBy(
                        () ->
                                DecoderFlow.builder("a", ChangeRecordFormat.JSON, DATA)
                                        .keys("aid")
                                        .sequenceBy("aid")
                                        .maxRecordBytes(0)
                                        .build())
                .hasMessage("flow 'a': max-record-bytes must be > 0, got 0");
    }

    @Test
    void decoderRejectsMixedFormatsAndDuplicateNames() {
        DecoderFlow a =
                DecoderFlow.builder("a", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                        .keys("aid")
                        .sourceNames("t")
                        .build();
        DecoderFlow b =
                DecoderFlow.builder("b", ChangeRecordFormat.DEBEZIUM_JSON, DATA)
                        .keys("aid")
                        .sourceNames("t")
                        .build();
        DecoderFlow j =
                DecoderFlow.builder("j", ChangeRecordFormat.JSON, DATA)
                        .keys("aid")
                        .sequenceBy("bid")
                        .build();
        assertThatThrownBy(() -> new ChangeRecordDecoder(List.of(a, b)))
                .hasMessage("source name 't' is claimed by flows 'a' and 'b'");
        assertThatThrownBy(() -> new ChangeRecordDecoder(List.of(a, j)))
                .hasMessage(
                        "all flows of one decoder must share a format: flow 'j' is json, flow 'a' is debezium-json");
    }

    @Test
    void configNames() {
        assertThat(ChangeRecordFormat.fromConfigName("debezium-json"))
                .isEqualTo(ChangeRecordFormat.DEBEZIUM_JSON);
        assertThat(ChangeRecordFormat.fromConfigName("json")).isEqualTo(ChangeRecordFormat.JSON);
        assertThat(OnSchemaChange.fromConfigName("add-columns"))
                .isEqualTo(OnSchemaChange.ADD_COLUMNS);
        assertThat(OnInvalidRecord.fromConfigName("fail")).isEqualTo(OnInvalidRecord.FAIL);
        assertThatThrownBy(() -> ChangeRecordFormat.fromConfigName("avro"))
                .hasMessage("Unknown change-record format 'avro'; accepted: json, debezium-json");
    }
}

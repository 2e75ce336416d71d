package dev.changeflow.sources.changes;

import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

class DebeziumMetadataTest {

    @Test
    void fieldsInContractOrderAllNullable() {
        assertThat(
                        DebeziumMetadata.FIELDS.stream()
                                .map(f -> f.getName() + " " + f.getType())
                                .collect(Collectors.toList()))
                .containsExactly(
                        "_op STRING",
                        "_ts_ms BIGINT",
                        "_source_lsn BIGINT",
                        "_source_ts_ms BIGINT",
                        "_source_txid BIGINT",
                        "_source_snapshot STRING",
                        "_source_db STRING",
                        "_source_schema STRING",
                        "_source_table STRING",
                        "_source_file STRING",
                        "_source_pos BIGINT",
                        "_unavailable_columns BYTES");
        assertThat(DebeziumMetadata.FIELDS).allMatch(f -> f.getType().isNullable());
        assertThat(DebeziumMetadata.NAMES)
                .containsExactlyElementsOf(
                        DebeziumMetadata.FIELDS.stream()
                                .map(RowType.RowField::getName)
                                .collect(Collectors.toList()));
    }

    @Test
    void resolvesUserSpellings() {
        assertThat(DebeziumMetadata.resolveAlias("source.lsn")).isEqualTo("_source_lsn");
        assertThat(DebeziumMetadata.resolveAlias("ts_ms")).isEqualTo("_ts_ms");
        assertThat(DebeziumMetadata.resolveAlias("op")).isEqualTo("_op");
        assertThat(DebeziumMetadata.resolveAlias("source.ts_ms")).isEqualTo("_source_ts_ms");
        assertThat(DebeziumMetadata.resolveAlias("source.txId")).isEqualTo("_source_txid");
        assertThat(DebeziumMetadata.resolveAlias("source.file")).isEqualTo("_source_file");
        assertThat(DebeziumMetadata.resolveAlias("source.pos")).isEqualTo("_source_pos");
        // other source members are sequence-only columns, their case kept (A5)
        assertThat(DebeziumMetadata.resolveAlias("source.xmin")).isEqualTo("_source_xmin");
        assertThat(DebeziumMetadata.resolveAlias("source.commit_lsn"))
                .isEqualTo("_source_commit_lsn");
        assertThat(DebeziumMetadata.resolveAlias("source.txnNumber"))
                .isEqualTo("_source_txnNumber");
        assertThat(DebeziumMetadata.resolveAlias("log_position")).isEqualTo("_log_position");
        // unknown names pass through unchanged
        assertThat(DebeziumMetadata.resolveAlias("aid")).isEqualTo("aid");
        assertThat(DebeziumMetadata.resolveAlias("_source_lsn")).isEqualTo("_source_lsn");
    }

    @Test
    void defaultSequences() {
        assertThat(DebeziumMetadata.POSTGRES_SEQUENCE).isEqualTo(List.of("_source_lsn"));
        assertThat(DebeziumMetadata.LOG_POSITION_SEQUENCE).isEqualTo(List.of("_log_position"));
        assertThat(DebeziumMetadata.defaultSequence(null)).isEqualTo(List.of("_source_lsn"));
        assertThat(DebeziumMetadata.defaultSequence("postgresql"))
                .isEqualTo(List.of("_source_lsn"));
        for (String c : List.of("mysql", "mariadb", "sqlserver", "oracle", "db2", "mongodb")) {
            assertThat(DebeziumMetadata.defaultSequence(c)).isEqualTo(List.of("_log_position"));
        }
    }
}

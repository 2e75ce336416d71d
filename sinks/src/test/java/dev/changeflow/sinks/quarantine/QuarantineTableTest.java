package dev.changeflow.sinks.quarantine;

import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

class QuarantineTableTest {

    @TempDir Path warehouse;

    @Test
    void ensureCreatesOneAppendOnlyTablePerNamespace() {
        Catalog catalog = CatalogSettings.localHadoop(warehouse).open();
        Namespace ns = Namespace.of("public");

        Table table = QuarantineTable.ensure(catalog, ns);

        assertThat(QuarantineTable.identifier(ns).toString())
                .isEqualTo("public.changeflow_quarantine");
        assertThat(
                        table.schema().columns().stream()
                                .map(f -> f.name() + " " + f.type())
                                .collect(Collectors.toList()))
                .containsExactly(
                        "flow string",
                        "source string",
                        "partition int",
                        "offset long",
                        "raw binary",
                        "reason string",
                        "detail string",
                        "quarantined_at timestamptz");
        assertThat(table.schema().findType("quarantined_at"))
                .isEqualTo(Types.TimestampType.withZone());
        assertThat(table.schema().identifierFieldIds()).isEmpty();
        assertThat(table.spec().isUnpartitioned()).isTrue();
        assertThat(QuarantineTable.ensure(catalog, ns).uuid()).isEqualTo(table.uuid());
    }
}

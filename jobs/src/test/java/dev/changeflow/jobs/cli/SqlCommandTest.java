package dev.changeflow.jobs.cli;

import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SqlCommandTest {
    @Test
    void icebergCatalogPropertiesBecomeChangeflowCatalogOptions() {
        Path warehouse = Path.of("/tmp/wh");
        assertThat(SqlCommand.flinkCatalogOptions(CatalogSettings.localHadoop(warehouse)))
                .isEqualTo(
                        Map.of(
                                "type",
                                "changeflow",
                                "catalog-type",
                                "hadoop",
                                "warehouse",
                                "file:///tmp/wh"));
        assertThat(
                        SqlCommand.flinkCatalogOptions(
                                CatalogSettings.of(
                                        "c",
                                        Map.of("type", "rest", "uri", "http://localhost:8181"))))
                .isEqualTo(
                        Map.of(
                                "type",
                                "changeflow",
                                "catalog-type",
                                "rest",
                                "uri",
                                "http://localhost:8181"));
        assertThat(
                        SqlCommand.flinkCatalogOptions(
                                CatalogSettings.of(
                                        "c", Map.of("type", "jdbc", "uri", "jdbc:sqlite:x.db"))))
                .isEqualTo(
                        Map.of(
                                "type",
                                "changeflow",
                                "catalog-impl",
                                "org.apache.iceberg.jdbc.JdbcCatalog",
                                "uri",
                                "jdbc:sqlite:x.db"));
    }
}

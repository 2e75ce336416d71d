package dev.changeflow.sinks.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

class CatalogSettingsTest {

    @TempDir Path warehouse;

    @Test
    void localHadoopIsAHadoopCatalogInTheFolder() throws Exception {
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse);

        assertThat(settings.name()).isEqualTo("changeflow");
        assertThat(settings.properties())
                .containsEntry("type", "hadoop")
                .containsEntry("warehouse", warehouse.toUri().toString());
        assertThat(settings.catalogImpl()).isEqualTo("org.apache.iceberg.hadoop.HadoopCatalog");
        Catalog catalog = settings.open();
        assertThat(catalog).isInstanceOf(HadoopCatalog.class);
        assertThat(catalog.name()).isEqualTo("changeflow");

        CatalogSettings copy = InstantiationUtil.clone(settings);
        assertThat(copy).isEqualTo(settings);
        assertThat(InstantiationUtil.clone(settings.loader()).loadCatalog()).isInstanceOf(HadoopCatalog.class);
    }

    @Test
    void ofValidatesTypeAndImplAndMasksSecrets() {
        assertThat(CatalogSettings.of("lake", Map.of("type", "jdbc", "uri", "jdbc:sqlite::memory:")).catalogImpl())
                .isEqualTo("org.apache.iceberg.jdbc.JdbcCatalog");
        assertThat(CatalogSettings.of("lake", Map.of("type", "REST", "uri", "http://localhost:8181")).catalogImpl())
                .isEqualTo("org.apache.iceberg.rest.RESTCatalog");
        assertThat(CatalogSettings.of("lake", Map.of("catalog-impl", "com.example.MyCatalog")).catalogImpl())
                .isEqualTo("com.example.MyCatalog");
        assertThat(CatalogSettings.of("lake", Map.of("type", "rest", "credential", "id:secret")).toString())
                .isEqualTo("CatalogSettings{name=lake, properties={credential=******, type=rest}}");

        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "oracle")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("catalog 'lake': unknown type 'oracle'; accepted: hadoop, rest, jdbc, hive, glue, "
                        + "nessie, or set 'catalog-impl' to a catalog class name");
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of()))
                .hasMessageContaining("set 'type'");
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "hadoop", "catalog-impl", "x.Y")))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "hadoop")))
                .hasMessageContaining("a hadoop catalog needs 'warehouse'");
    }

    @Test
    void hadoopPropertiesReachTheConfiguration() {
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse)
                .withHadoopProperties(Map.of("fs.s3a.endpoint", "http://127.0.0.1:9000"));
        assertThat(settings.hadoopConf().get("fs.s3a.endpoint")).isEqualTo("http://127.0.0.1:9000");
    }
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        assertThat(InstantiationUtil.clone(settings.loader()).loadCatalog())
                .isInstanceOf(HadoopCatalog.class);
    }

    @Test
    void ofValidatesTypeAndImplAndMasksSecrets() {
        assertThat(
                        CatalogSettings.of(
                                        "lake",
                                        Map.of("type", "jdbc", "uri", "jdbc:sqlite::memory:"))
                                .catalogImpl())
                .isEqualTo("org.apache.iceberg.jdbc.JdbcCatalog");
        assertThat(
                        CatalogSettings.of(
                                        "lake",
                                        Map.of("type", "REST", "uri", "http://localhost:8181"))
                                .catalogImpl())
                .isEqualTo("org.apache.iceberg.rest.RESTCatalog");
        assertThat(
                        CatalogSettings.of("lake", Map.of("catalog-impl", "com.example.MyCatalog"))
                                .catalogImpl())
                .isEqualTo("com.example.MyCatalog");
        assertThat(
                        CatalogSettings.of(
                                        "lake", Map.of("type", "rest", "credential", "id:secret"))
                                .toString())
                .isEqualTo("CatalogSettings{name=lake, properties={credential=******, type=rest}}");

        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "oracle")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "catalog 'lake': unknown type 'oracle'; accepted: hadoop, rest, jdbc, hive, glue, "
                                + "nessie, or set 'catalog-impl' to a catalog class name");
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of()))
                .hasMessageContaining("set 'type'");
        assertThatThrownBy(
                        () ->
                                CatalogSettings.of(
                                        "lake", Map.of("type", "hadoop", "catalog-impl", "x.Y")))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "hadoop")))
                .hasMessageContaining("a hadoop catalog needs 'warehouse'");
    }

    @Test
    void restAndJdbcCatalogsWithoutUriFailNamingItWhenOpened() {
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "rest")).open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "catalog 'lake': a rest catalog needs 'uri' (the REST catalog's base URL, e.g."
                                + " http://host:8181), e.g. --catalog uri=... or 'uri' in the flows"
                                + " file's catalog block");
        assertThatThrownBy(() -> CatalogSettings.of("lake", Map.of("type", "JDBC")).open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("catalog 'lake': a jdbc catalog needs 'uri' (a JDBC URL");
    }

    @Test
    void hadoopPropertiesReachTheConfiguration() {
        CatalogSettings settings =
                CatalogSettings.localHadoop(warehouse)
                        .withHadoopProperties(Map.of("fs.s3a.endpoint", "http://127.0.0.1:9000"));
        assertThat(settings.hadoopConf().get("fs.s3a.endpoint")).isEqualTo("http://127.0.0.1:9000");
    }

    @Test
    void environmentReferencesResolveWhenTheCatalogIsLoadedAndAreNeverSerialized()
            throws Exception {
        Map<String, String> env = Map.of("REST_ID", "client-1", "REST_SECRET", "s3cr$t\\x");
        assertThat(
                        CatalogSettings.resolve(
                                "lake",
                                Map.of(
                                        "credential",
                                        "${env:REST_ID}:${env:REST_SECRET}",
                                        "uri",
                                        "http://rest:8181"),
                                env::get))
                .containsEntry("credential", "client-1:s3cr$t\\x")
                .containsEntry("uri", "http://rest:8181");
        assertThatThrownBy(
                        () ->
                                CatalogSettings.resolve(
                                        "lake", Map.of("token", "${env:REST_TOKEN}"), env::get))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "catalog 'lake': property 'token' refers to environment variable REST_TOKEN, which is not set;"
                                + " set it (for example from a Kubernetes Secret) or give the value another way");
        assertThatThrownBy(
                        () ->
                                CatalogSettings.of(
                                        "lake",
                                        Map.of(
                                                "type",
                                                "rest",
                                                "token",
                                                "${env:CHANGEFLOW_TEST_SURELY_UNSET}")))
                .hasMessageContaining(
                        "environment variable CHANGEFLOW_TEST_SURELY_UNSET, which is not set");

        // PATH is set wherever tests run; its value must reach the catalog but not the serialized
        // loader
        String path = System.getenv("PATH");
        CatalogSettings settings =
                CatalogSettings.of(
                        "lake",
                        Map.of(
                                "catalog-impl", PropertiesHadoopCatalog.class.getName(),
                                "warehouse", warehouse.toUri().toString(),
                                "changeflow.test-reference", "${env:PATH}"));
        CatalogLoader loader = settings.loader();
        byte[] bytes = InstantiationUtil.serializeObject(loader);
        assertThat(new String(bytes, StandardCharsets.ISO_8859_1))
                .contains("${env:PATH}")
                .doesNotContain(path);
        Catalog catalog =
                InstantiationUtil.<CatalogLoader>deserializeObject(
                                bytes, getClass().getClassLoader())
                        .clone()
                        .loadCatalog();
        assertThat(((PropertiesHadoopCatalog) catalog).catalogProperties())
                .containsEntry("changeflow.test-reference", path);
    }

    /** A Hadoop catalog that shows the properties it was initialized with. */
    public static final class PropertiesHadoopCatalog extends HadoopCatalog {
        public Map<String, String> catalogProperties() {
            return properties();
        }
    }
}

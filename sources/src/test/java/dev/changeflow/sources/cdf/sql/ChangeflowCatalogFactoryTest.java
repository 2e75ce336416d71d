package dev.changeflow.sources.cdf.sql;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code changeflow} catalog type's options (Iceberg's) and its {@code t$changes} names. */
class ChangeflowCatalogFactoryTest {

    @TempDir Path warehouse;

    @Test
    void takesIcebergsCatalogOptions() {
        Map<String, String> hadoop =
                Map.of("catalog-type", "hadoop", "warehouse", warehouse.toUri().toString());
        assertThat(
                        ChangeflowCatalogFactory.catalogLoader("c", hadoop, new Configuration())
                                .loadCatalog())
                .isInstanceOf(HadoopCatalog.class);
        assertThat(
                        ChangeflowCatalogFactory.catalogLoader(
                                        "c",
                                        Map.of(
                                                "catalog-impl",
                                                HadoopCatalog.class.getName(),
                                                "warehouse",
                                                warehouse.toUri().toString()),
                                        new Configuration())
                                .loadCatalog())
                .isInstanceOf(HadoopCatalog.class);
        assertThatThrownBy(
                        () ->
                                ChangeflowCatalogFactory.catalogLoader(
                                        "c",
                                        Map.of("catalog-type", "hadoop", "catalog-impl", "x.Y"),
                                        new Configuration()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "Cannot create catalog c, both catalog-type and catalog-impl are set: catalog-type=hadoop, "
                                + "catalog-impl=x.Y");
        assertThatThrownBy(
                        () ->
                                ChangeflowCatalogFactory.catalogLoader(
                                        "c", Map.of("catalog-type", "jdbc"), new Configuration()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "Unknown catalog-type 'jdbc' of catalog c: use 'hive', 'hadoop' or 'rest', or set catalog-impl.");
        assertThatThrownBy(
                        () ->
                                ChangeflowCatalogFactory.catalogLoader(
                                        "c",
                                        Map.of(
                                                "catalog-type",
                                                "hive",
                                                "hive-conf-dir",
                                                warehouse.toString()),
                                        new Configuration()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "'hive-conf-dir' = '"
                                + warehouse
                                + "' has no hive-site.xml; point it at the folder holding it.");
        assertThat(new ChangeflowCatalogFactory().factoryIdentifier()).isEqualTo("changeflow");
    }

    /**
     * Without changeflow's sinks on the classpath (as in this module's tests) a Hadoop catalog
     * keeps Iceberg's default lock manager; {@code JvmLockManagerWiringTest} (jobs) checks the
     * class the constant names.
     */
    @Test
    void jvmLockOnlyWhenItsClassIsThere() {
        Map<String, String> hadoop = Map.of("catalog-type", "hadoop", "warehouse", "/w");
        assertThat(ChangeflowCatalogFactory.withJvmLock(hadoop)).isEqualTo(hadoop);
        Map<String, String> rest = Map.of("catalog-type", "rest", "uri", "http://x");
        assertThat(ChangeflowCatalogFactory.withJvmLock(rest)).isEqualTo(rest);
    }

    /**
     * Tables created by DDL through the catalog get metadata cleanup (Iceberg's {@code
     * table-default.} property), unless the DDL or the catalog options say otherwise.
     */
    @Test
    void tablesCreatedThroughTheCatalogDeleteOldMetadataFiles() {
        TableEnvironment tEnv = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        String location = "'warehouse'='" + warehouse.toUri() + "'";
        tEnv.executeSql(
                "CREATE CATALOG c WITH ('type'='changeflow', 'catalog-type'='hadoop', "
                        + location
                        + ")");
        tEnv.executeSql("CREATE DATABASE c.db");
        tEnv.executeSql("CREATE TABLE c.db.plain (id INT)");
        tEnv.executeSql(
                "CREATE TABLE c.db.kept (id INT) WITH"
                        + " ('write.metadata.delete-after-commit.enabled' = 'false')");
        tEnv.executeSql(
                "CREATE CATALOG k WITH ('type'='changeflow', 'catalog-type'='hadoop', "
                        + location
                        + ", 'table-default.write.metadata.delete-after-commit.enabled'='false')");
        tEnv.executeSql("CREATE TABLE k.db.chosen (id INT)");

        HadoopCatalog catalog =
                new HadoopCatalog(new Configuration(), warehouse.toUri().toString());
        String key = TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED;
        assertThat(catalog.loadTable(TableIdentifier.of("db", "plain")).properties())
                .containsEntry(key, "true");
        assertThat(catalog.loadTable(TableIdentifier.of("db", "kept")).properties())
                .containsEntry(key, "false");
        assertThat(catalog.loadTable(TableIdentifier.of("db", "chosen")).properties())
                .containsEntry(key, "false");
        Map<String, String> override =
                Map.of("catalog-type", "hadoop", "table-override." + key, "false");
        assertThat(ChangeflowCatalogFactory.withMetadataCleanup(override)).isEqualTo(override);
    }

    @Test
    void changesTableNames() {
        assertThat(ChangeflowCatalog.isChangesTable("t$changes")).isTrue();
        assertThat(ChangeflowCatalog.isChangesTable("$changes")).isFalse();
        assertThat(ChangeflowCatalog.isChangesTable("t$snapshots")).isFalse();
        assertThat(ChangeflowCatalog.basePath(new ObjectPath("db", "t$changes")))
                .isEqualTo(new ObjectPath("db", "t"));
        assertThat(ChangeflowCatalog.basePath(new ObjectPath("db", "t")))
                .isEqualTo(new ObjectPath("db", "t"));
    }
}

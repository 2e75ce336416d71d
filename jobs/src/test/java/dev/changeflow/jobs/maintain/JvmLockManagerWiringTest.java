package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.JvmLockManager;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalogFactory;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.FlinkCatalog;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Flink SQL catalog of Gold jobs ({@code 'type' = 'changeflow'}) on a Hadoop warehouse commits
 * under changeflow's {@link JvmLockManager}, as the ingest's catalogs do (sources names the class
 * by its name, as it does not depend on sinks).
 */
class JvmLockManagerWiringTest {
    @TempDir Path warehouse;

    @Test
    void theSqlCatalogOfAHadoopWarehouseUsesIt() throws Exception {
        assertThat(ChangeflowCatalogFactory.JVM_LOCK_MANAGER)
                .isEqualTo(JvmLockManager.class.getName());
        TableEnvironment tEnv = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        tEnv.executeSql(
                "CREATE CATALOG c WITH ('type' = 'changeflow', 'catalog-type' = 'hadoop',"
                        + " 'cache-enabled' = 'false',"
                        + " 'warehouse' = '"
                        + warehouse.toUri()
                        + "')");
        FlinkCatalog flink = (FlinkCatalog) tEnv.getCatalog("c").orElseThrow();
        Catalog iceberg = flink.catalog();
        assertThat(iceberg).isInstanceOf(HadoopCatalog.class);
        // Iceberg keeps the catalog's lock manager in a private field
        Field lockManager = HadoopCatalog.class.getDeclaredField("lockManager");
        lockManager.setAccessible(true);
        assertThat(lockManager.get(iceberg)).isInstanceOf(JvmLockManager.class);
    }
}

package dev.changeflow.sources.cdf.sql;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.catalog.Catalog;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkCatalogFactory;
import org.apache.iceberg.util.PropertyUtil;

import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code changeflow} catalog type: {@code CREATE CATALOG c WITH ('type'='changeflow',
 * 'catalog-type'='hadoop', 'warehouse'='file:///...')}. It takes exactly the options of Iceberg's
 * {@code iceberg} catalog type ({@code catalog-type} = {@code hive} (default) | {@code hadoop} |
 * {@code rest}, or {@code catalog-impl}; {@code warehouse}, {@code uri}, {@code hive-conf-dir},
 * {@code hadoop-conf-dir}, {@code default-database}, {@code base-namespace}, {@code cache-enabled},
 * {@code cache.expiration-interval-ms}, and any property the Iceberg catalog itself reads) and
 * creates a {@link ChangeflowCatalog}, which serves every Iceberg table as Iceberg does and adds
 * its change feed as {@code <table>$changes}.
 *
 * <p>Registered through {@code META-INF/services/org.apache.flink.table.factories.Factory}.
 *
 * @throws IllegalArgumentException (from {@link #createCatalog}) when both {@code catalog-type} and
 *     {@code catalog-impl} are set, or {@code catalog-type} is not one of the accepted values
 */
@PublicEvolving
public class ChangeflowCatalogFactory extends FlinkCatalogFactory {

    /** The catalog type's identifier, {@value}. */
    public static final String IDENTIFIER = "changeflow";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    protected Catalog createCatalog(
            String name, Map<String, String> properties, Configuration hadoopConf) {
        String defaultDatabase = properties.getOrDefault(DEFAULT_DATABASE, DEFAULT_DATABASE_NAME);
        Namespace baseNamespace =
                properties.containsKey(BASE_NAMESPACE)
                        ? Namespace.of(properties.get(BASE_NAMESPACE).split("\\."))
                        : Namespace.empty();
        boolean cacheEnabled =
                PropertyUtil.propertyAsBoolean(
                        properties,
                        CatalogProperties.CACHE_ENABLED,
                        CatalogProperties.CACHE_ENABLED_DEFAULT);
        long cacheExpirationIntervalMs =
                PropertyUtil.propertyAsLong(
                        properties,
                        CatalogProperties.CACHE_EXPIRATION_INTERVAL_MS,
                        CatalogProperties.CACHE_EXPIRATION_INTERVAL_MS_OFF);
        if (cacheExpirationIntervalMs == 0) {
            throw new IllegalArgumentException(
                    CatalogProperties.CACHE_EXPIRATION_INTERVAL_MS + " is not allowed to be 0.");
        }
        return new ChangeflowCatalog(
                name,
                defaultDatabase,
                baseNamespace,
                catalogLoader(name, properties, hadoopConf),
                properties,
                cacheEnabled,
                cacheExpirationIntervalMs);
    }

    /**
     * The Iceberg catalog loader for these options, chosen as Iceberg's {@code iceberg} catalog
     * type chooses it (Iceberg keeps that choice package-private, so it is restated here).
     */
    static CatalogLoader catalogLoader(
            String name, Map<String, String> properties, Configuration hadoopConf) {
        properties = withMetadataCleanup(withJvmLock(properties));
        String catalogImpl = properties.get(CatalogProperties.CATALOG_IMPL);
        String catalogType = properties.get(ICEBERG_CATALOG_TYPE);
        if (catalogImpl != null) {
            if (catalogType != null) {
                throw new IllegalArgumentException(
                        String.format(
                                "Cannot create catalog %s, both %s and %s are set: %s=%s, %s=%s",
                                name,
                                ICEBERG_CATALOG_TYPE,
                                CatalogProperties.CATALOG_IMPL,
                                ICEBERG_CATALOG_TYPE,
                                catalogType,
                                CatalogProperties.CATALOG_IMPL,
                                catalogImpl));
            }
            return CatalogLoader.custom(name, properties, hadoopConf, catalogImpl);
        }
        String type =
                catalogType == null
                        ? ICEBERG_CATALOG_TYPE_HIVE
                        : catalogType.toLowerCase(Locale.ROOT);
        switch (type) {
            case ICEBERG_CATALOG_TYPE_HIVE:
                return CatalogLoader.hive(name, withConfFiles(hadoopConf, properties), properties);
            case ICEBERG_CATALOG_TYPE_HADOOP:
                return CatalogLoader.hadoop(name, hadoopConf, properties);
            case ICEBERG_CATALOG_TYPE_REST:
                return CatalogLoader.rest(name, hadoopConf, properties);
            default:
                throw new IllegalArgumentException(
                        String.format(
                                "Unknown %s '%s' of catalog %s: use 'hive', 'hadoop' or 'rest', or set %s.",
                                ICEBERG_CATALOG_TYPE,
                                catalogType,
                                name,
                                CatalogProperties.CATALOG_IMPL));
        }
    }

    /**
     * The lock manager changeflow's Hadoop catalogs use (module {@code sinks}: Iceberg's default
     * loses its locks whenever any catalog of the JVM is closed, see that class).
     */
    public static final String JVM_LOCK_MANAGER = "dev.changeflow.sinks.iceberg.JvmLockManager";

    /**
     * {@code properties} with {@code lock-impl} = {@link #JVM_LOCK_MANAGER} for a {@code hadoop}
     * catalog that names no lock manager, when that class is on the classpath (it is in every
     * changeflow job).
     */
    static Map<String, String> withJvmLock(Map<String, String> properties) {
        if (properties.containsKey(CatalogProperties.LOCK_IMPL)
                || properties.containsKey(CatalogProperties.CATALOG_IMPL)
                || !ICEBERG_CATALOG_TYPE_HADOOP.equalsIgnoreCase(
                        properties.get(ICEBERG_CATALOG_TYPE))) {
            return properties;
        }
        try {
            Class.forName(JVM_LOCK_MANAGER, false, ChangeflowCatalogFactory.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return properties;
        }
        Map<String, String> out = new HashMap<>(properties);
        out.put(CatalogProperties.LOCK_IMPL, JVM_LOCK_MANAGER);
        return out;
    }

    /** The catalog option that gives new tables metadata cleanup ({@link #withMetadataCleanup}). */
    static final String METADATA_CLEANUP_DEFAULT =
            CatalogProperties.TABLE_DEFAULT_PREFIX
                    + TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED;

    /**
     * {@code properties} with {@code table-default.write.metadata.delete-after-commit.enabled=true}
     * unless they set that property themselves ({@code table-default.} or {@code table-override.}):
     * a table created through this catalog — a Gold table's {@code CREATE TABLE}, any DDL of {@code
     * bin/changeflow sql} — then deletes the metadata files older than its last {@code
     * write.metadata.previous-versions-max} (100) at each commit, as the tables changeflow's ingest
     * creates do. Without it a table committed every checkpoint keeps every {@code metadata.json},
     * each listing every retained snapshot (about 1.2 KB each; 3.0 GB after 2,000 commits in the
     * maintenance benchmark). Iceberg applies {@code table-default.} properties at creation, under
     * the DDL's own: {@code WITH ('write.metadata.delete-after-commit.enabled' = 'false')} keeps
     * them all. Existing tables are not changed.
     */
    static Map<String, String> withMetadataCleanup(Map<String, String> properties) {
        String override =
                CatalogProperties.TABLE_OVERRIDE_PREFIX
                        + TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED;
        if (properties.containsKey(METADATA_CLEANUP_DEFAULT) || properties.containsKey(override)) {
            return properties;
        }
        Map<String, String> out = new HashMap<>(properties);
        out.put(METADATA_CLEANUP_DEFAULT, "true");
        return out;
    }

    /**
     * Adds {@code hive-conf-dir}/hive-site.xml and {@code hadoop-conf-dir}'s site files, if given.
     */
    private static Configuration withConfFiles(
            Configuration hadoopConf, Map<String, String> properties) {
        Configuration conf = new Configuration(hadoopConf);
        String hiveConfDir = properties.get(HIVE_CONF_DIR);
        if (hiveConfDir == null || hiveConfDir.isEmpty()) {
            URL onClasspath = CatalogLoader.class.getClassLoader().getResource("hive-site.xml");
            if (onClasspath != null) {
                conf.addResource(onClasspath);
            }
        }
        addIfPresent(conf, hiveConfDir, "hive-site.xml", HIVE_CONF_DIR);
        addIfPresent(conf, properties.get(HADOOP_CONF_DIR), "hdfs-site.xml", HADOOP_CONF_DIR);
        addIfPresent(conf, properties.get(HADOOP_CONF_DIR), "core-site.xml", HADOOP_CONF_DIR);
        return conf;
    }

    private static void addIfPresent(Configuration conf, String dir, String file, String option) {
        if (dir == null || dir.isEmpty()) {
            return;
        }
        if (!Files.exists(Paths.get(dir, file))) {
            throw new IllegalArgumentException(
                    String.format(
                            "'%s' = '%s' has no %s; point it at the folder holding it.",
                            option, dir, file));
        }
        conf.addResource(new Path(dir, file));
    }
}

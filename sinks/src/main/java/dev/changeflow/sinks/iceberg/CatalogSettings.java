package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.hadoop.HadoopCatalog;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the streaming tables live: an Iceberg catalog name plus the catalog properties Iceberg
 * itself understands ({@code type} = {@code hadoop} | {@code rest} | {@code jdbc} | {@code hive} |
 * {@code glue} | {@code nessie}, or {@code catalog-impl} = a class name; {@code warehouse}, {@code
 * uri}, {@code io-impl}, credentials, ...; those changeflow reads are declared in {@link
 * CatalogOptions}), and optional Hadoop {@link Configuration} entries.
 *
 * <p>Serializable, so a job can ship it to its tasks; {@link #loader()} gives Iceberg's {@link
 * CatalogLoader} that Iceberg's Flink sink and source use inside tasks, {@link #open()} a catalog
 * for the client side (table creation, validation). The embedded default is {@link
 * #localHadoop(Path)}: a Hadoop catalog in a local folder.
 *
 * <p><b>Secrets from the environment.</b> A property value may refer to environment variables as
 * {@code ${env:NAME}} (anywhere in the value, e.g. {@code credential:
 * ${env:REST_ID}:${env:REST_SECRET}}), so flows files, ConfigMaps and command lines hold no secret.
 * References are resolved by each JVM that opens the catalog (the launcher, every TaskManager) from
 * its own environment, when the catalog is loaded: the resolved values are never serialized into
 * the job. S3 credentials need no property at all: Iceberg's {@code S3FileIO} takes them from the
 * AWS SDK's default chain ({@code AWS_ACCESS_KEY_ID} / {@code AWS_SECRET_ACCESS_KEY}, web identity
 * on Kubernetes, ...).
 */
@PublicEvolving
public final class CatalogSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Catalog name used by {@link #localHadoop(Path)}. */
    public static final String DEFAULT_NAME = "changeflow";

    /** Accepted values of the {@code type} property ({@link CatalogOptions#ACCEPTED_TYPES}). */
    public static final String ACCEPTED_TYPES = CatalogOptions.ACCEPTED_TYPES;

    private static final Pattern ENV_REFERENCE =
            Pattern.compile("\\$\\{env:([A-Za-z_][A-Za-z0-9_]*)}");

    private final String name;
    private final Map<String, String> properties;
    private final Map<String, String> hadoopProperties;

    private CatalogSettings(
            String name, Map<String, String> properties, Map<String, String> hadoopProperties) {
        this.name = name;
        this.properties = Collections.unmodifiableMap(new TreeMap<>(properties));
        this.hadoopProperties = Collections.unmodifiableMap(new TreeMap<>(hadoopProperties));
    }

    /**
     * The embedded default: a Hadoop catalog named {@value #DEFAULT_NAME} whose warehouse is the
     * given local folder (created on first use); each table lives in {@code
     * <warehouse>/<namespace>/<table>}.
     */
    public static CatalogSettings localHadoop(Path warehouse) {
        Objects.requireNonNull(warehouse, "warehouse");
        Map<String, String> props = new TreeMap<>();
        props.put(CatalogUtil.ICEBERG_CATALOG_TYPE, CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP);
        props.put(
                CatalogProperties.WAREHOUSE_LOCATION,
                warehouse.toAbsolutePath().normalize().toUri().toString());
        return new CatalogSettings(DEFAULT_NAME, props, Map.of());
    }

    /**
     * A catalog from Iceberg catalog properties.
     *
     * @throws IllegalArgumentException when neither or both of {@code type} and {@code
     *     catalog-impl} are set, the type is not one of {@value #ACCEPTED_TYPES}, a {@code hadoop}
     *     catalog has no {@code warehouse}, or a value refers ({@code ${env:NAME}}) to an
     *     environment variable that is not set in this JVM
     */
    public static CatalogSettings of(String name, Map<String, String> properties) {
        CatalogSettings settings =
                new CatalogSettings(validateName(name), validate(name, properties), Map.of());
        resolve(name, settings.properties, System::getenv);
        return settings;
    }

    /**
     * The properties with every {@code ${env:NAME}} replaced by {@code env.apply(NAME)}.
     *
     * @throws IllegalArgumentException naming the property and the variable when a referenced
     *     variable is not set (null)
     */
    static Map<String, String> resolve(
            String catalog, Map<String, String> properties, Function<String, String> env) {
        Map<String, String> out = new TreeMap<>();
        properties.forEach(
                (key, value) -> {
                    Matcher m = ENV_REFERENCE.matcher(value);
                    StringBuilder resolved = new StringBuilder();
                    while (m.find()) {
                        String v = env.apply(m.group(1));
                        if (v == null) {
                            throw new IllegalArgumentException(
                                    "catalog '"
                                            + catalog
                                            + "': property '"
                                            + key
                                            + "' refers to environment variable "
                                            + m.group(1)
                                            + ", which is not set; set it (for example from a Kubernetes Secret)"
                                            + " or give the value another way");
                        }
                        m.appendReplacement(resolved, Matcher.quoteReplacement(v));
                    }
                    m.appendTail(resolved);
                    out.put(key, resolved.toString());
                });
        return out;
    }

    /**
     * A copy with these Hadoop {@link Configuration} entries (for example {@code fs.s3a.endpoint})
     * added to the configuration the catalog and its FileIO get.
     */
    public CatalogSettings withHadoopProperties(Map<String, String> entries) {
        Map<String, String> merged = new TreeMap<>(hadoopProperties);
        merged.putAll(entries);
        return new CatalogSettings(name, properties, merged);
    }

    /** The catalog name (used in Iceberg's metrics and table names such as {@code name.db.t}). */
    public String name() {
        return name;
    }

    /** The Iceberg catalog properties, unmodifiable. */
    public Map<String, String> properties() {
        return properties;
    }

    /** Extra Hadoop configuration entries, unmodifiable. */
    public Map<String, String> hadoopProperties() {
        return hadoopProperties;
    }

    /** The Iceberg catalog implementation class this configuration loads. */
    public String catalogImpl() {
        String impl = properties.get(CatalogProperties.CATALOG_IMPL);
        if (impl != null) {
            return impl;
        }
        switch (properties.get(CatalogUtil.ICEBERG_CATALOG_TYPE).toLowerCase(Locale.ROOT)) {
            case CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP:
                return CatalogUtil.ICEBERG_CATALOG_HADOOP;
            case CatalogUtil.ICEBERG_CATALOG_TYPE_REST:
                return CatalogUtil.ICEBERG_CATALOG_REST;
            case CatalogUtil.ICEBERG_CATALOG_TYPE_JDBC:
                return CatalogUtil.ICEBERG_CATALOG_JDBC;
            case CatalogUtil.ICEBERG_CATALOG_TYPE_HIVE:
                return CatalogUtil.ICEBERG_CATALOG_HIVE;
            case CatalogUtil.ICEBERG_CATALOG_TYPE_GLUE:
                return CatalogUtil.ICEBERG_CATALOG_GLUE;
            case CatalogUtil.ICEBERG_CATALOG_TYPE_NESSIE:
                return CatalogUtil.ICEBERG_CATALOG_NESSIE;
            default:
                throw new IllegalStateException("validated in of()");
        }
    }

    /**
     * A fresh Hadoop configuration with {@link #hadoopProperties()} applied and, unless they name
     * another, {@link ForkFreeLocalFileSystem} as the file system of {@code file:} paths.
     */
    public Configuration hadoopConf() {
        Configuration conf = new Configuration();
        if (conf.get(LOCAL_FILE_SYSTEM_IMPL) == null) {
            conf.set(LOCAL_FILE_SYSTEM_IMPL, ForkFreeLocalFileSystem.class.getName());
        }
        hadoopProperties.forEach(conf::set);
        return conf;
    }

    /** The Hadoop property naming the file system class of {@code file:} paths. */
    static final String LOCAL_FILE_SYSTEM_IMPL = "fs.file.impl";

    /**
     * Iceberg's serializable {@link CatalogLoader} for this catalog, as Iceberg's Flink sink and
     * source need it. Each call returns a new loader. When a property refers to the environment
     * ({@code ${env:NAME}}), the loader carries the references and resolves them in {@link
     * CatalogLoader#loadCatalog()}, in the JVM that loads the catalog.
     *
     * @throws IllegalArgumentException from {@code loadCatalog()} when a referenced variable is not
     *     set there
     */
    public CatalogLoader loader() {
        for (String v : properties.values()) {
            if (ENV_REFERENCE.matcher(v).find()) {
                return new EnvResolvingLoader(this);
            }
        }
        return directLoader(properties);
    }

    private CatalogLoader directLoader(Map<String, String> properties) {
        requireUri(name, properties);
        Configuration conf = hadoopConf();
        properties = withJvmLock(properties);
        if (!properties.containsKey(CatalogProperties.CATALOG_IMPL)) {
            String type = properties.get(CatalogUtil.ICEBERG_CATALOG_TYPE).toLowerCase(Locale.ROOT);
            switch (type) {
                case CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP:
                    return CatalogLoader.hadoop(name, conf, properties);
                case CatalogUtil.ICEBERG_CATALOG_TYPE_REST:
                    return CatalogLoader.rest(name, conf, properties);
                case CatalogUtil.ICEBERG_CATALOG_TYPE_HIVE:
                    return CatalogLoader.hive(name, conf, properties);
                default:
                    break;
            }
        }
        Map<String, String> props = new TreeMap<>(properties);
        props.remove(CatalogUtil.ICEBERG_CATALOG_TYPE);
        return CatalogLoader.custom(name, props, conf, catalogImpl());
    }

    /**
     * {@code properties} with {@code lock-impl} = {@link JvmLockManager} when they describe a
     * Hadoop catalog ({@code type: hadoop}, or a {@code catalog-impl} extending {@link
     * HadoopCatalog}) and name no lock manager: Iceberg's default for Hadoop tables loses its locks
     * whenever any catalog of the JVM is closed ({@link JvmLockManager}).
     */
    static Map<String, String> withJvmLock(Map<String, String> properties) {
        if (properties.containsKey(CatalogProperties.LOCK_IMPL) || !isHadoop(properties)) {
            return properties;
        }
        Map<String, String> out = new TreeMap<>(properties);
        out.put(CatalogProperties.LOCK_IMPL, JvmLockManager.class.getName());
        return out;
    }

    private static boolean isHadoop(Map<String, String> properties) {
        String impl = properties.get(CatalogProperties.CATALOG_IMPL);
        if (impl == null) {
            return CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP.equalsIgnoreCase(
                    properties.get(CatalogUtil.ICEBERG_CATALOG_TYPE));
        }
        try {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            return HadoopCatalog.class.isAssignableFrom(
                    Class.forName(
                            impl,
                            false,
                            loader != null ? loader : CatalogSettings.class.getClassLoader()));
        } catch (ClassNotFoundException | LinkageError e) {
            // not loadable here: the catalog's own loading reports it
            return false;
        }
    }

    /** Resolves {@code ${env:NAME}} references when the catalog is loaded, not before. */
    private static final class EnvResolvingLoader implements CatalogLoader {
        private static final long serialVersionUID = 1L;
        private final CatalogSettings settings;

        EnvResolvingLoader(CatalogSettings settings) {
            this.settings = settings;
        }

        @Override
        public Catalog loadCatalog() {
            return settings.directLoader(
                            resolve(settings.name, settings.properties, System::getenv))
                    .loadCatalog();
        }

        @Override
        public CatalogLoader clone() {
            return new EnvResolvingLoader(settings);
        }

        @Override
        public String toString() {
            return "EnvResolvingLoader{" + settings + "}";
        }
    }

    /**
     * Opens the catalog on the client side. The caller closes it when it is {@link
     * java.io.Closeable}.
     */
    public Catalog open() {
        return loader().loadCatalog();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof CatalogSettings)) {
            return false;
        }
        CatalogSettings that = (CatalogSettings) o;
        return name.equals(that.name)
                && properties.equals(that.properties)
                && hadoopProperties.equals(that.hadoopProperties);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, properties, hadoopProperties);
    }

    /** Names and properties; values of secret-looking keys are masked. */
    @Override
    public String toString() {
        return "CatalogSettings{name="
                + name
                + ", properties="
                + masked(properties)
                + (hadoopProperties.isEmpty() ? "" : ", hadoop=" + masked(hadoopProperties))
                + "}";
    }

    private static Map<String, String> masked(Map<String, String> props) {
        Map<String, String> out = new TreeMap<>();
        props.forEach(
                (k, v) -> {
                    String lower = k.toLowerCase(Locale.ROOT);
                    boolean secret =
                            lower.contains("secret")
                                    || lower.contains("password")
                                    || lower.contains("token")
                                    || lower.contains("credential")
                                    || lower.endsWith("key");
                    out.put(k, secret ? "******" : v);
                });
        return out;
    }

    private static String validateName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("catalog name must not be empty");
        }
        return name;
    }

    /** Catalog types that cannot work without {@code uri}, with what the URI points at. */
    private static final Map<String, String> NEEDS_URI =
            Map.of(
                    "rest", "the REST catalog's base URL, e.g. http://host:8181",
                    "jdbc", "a JDBC URL, e.g. jdbc:postgresql://host/db");

    /**
     * Fails before Iceberg does (its REST and JDBC catalogs throw a bare NullPointerException
     * without a URI).
     *
     * @throws IllegalArgumentException naming the catalog, its type and what {@code uri} must be
     */
    static void requireUri(String name, Map<String, String> properties) {
        String type = properties.get(CatalogOptions.TYPE.key());
        String t = type == null ? "" : type.toLowerCase(Locale.ROOT);
        if (NEEDS_URI.containsKey(t) && properties.get(CatalogOptions.URI.key()) == null) {
            throw new IllegalArgumentException(
                    "catalog '"
                            + name
                            + "': a "
                            + t
                            + " catalog needs 'uri' ("
                            + NEEDS_URI.get(t)
                            + "), e.g. --catalog uri=... or 'uri' in the flows file's catalog block");
        }
    }

    private static Map<String, String> validate(String name, Map<String, String> properties) {
        Objects.requireNonNull(properties, "properties");
        String type = properties.get(CatalogOptions.TYPE.key());
        String impl = properties.get(CatalogOptions.CATALOG_IMPL.key());
        if (type != null && impl != null) {
            throw new IllegalArgumentException(
                    "catalog '"
                            + name
                            + "': set either 'type' or 'catalog-impl', not both (type="
                            + type
                            + ", catalog-impl="
                            + impl
                            + ")");
        }
        if (type == null && impl == null) {
            throw new IllegalArgumentException(
                    "catalog '"
                            + name
                            + "': set 'type' (one of "
                            + ACCEPTED_TYPES
                            + ") or 'catalog-impl' (a catalog class name)");
        }
        if (type != null) {
            String t = type.toLowerCase(Locale.ROOT);
            if (!CatalogOptions.isAcceptedType(type)) {
                throw new IllegalArgumentException(
                        "catalog '"
                                + name
                                + "': unknown type '"
                                + type
                                + "'; accepted: "
                                + ACCEPTED_TYPES
                                + ", or set 'catalog-impl' to a catalog class name");
            }
            if (t.equals(CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP)
                    && properties.get(CatalogOptions.WAREHOUSE.key()) == null) {
                throw new IllegalArgumentException(
                        "catalog '"
                                + name
                                + "': a hadoop catalog needs 'warehouse' (a folder or URI)");
            }
        }
        return properties;
    }
}

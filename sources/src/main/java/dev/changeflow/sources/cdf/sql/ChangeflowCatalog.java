package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.cdf.ChangeFeedOptions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.api.config.TableConfigOptions;
import org.apache.flink.table.api.config.TableConfigOptions.ColumnExpansionStrategy;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogDatabase;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotExistException;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.TableNotExistException;
import org.apache.flink.table.factories.Factory;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkCatalog;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Iceberg's {@link FlinkCatalog} plus, for every Iceberg table {@code db.t}, two read-only tables:
 * {@code db.`t$changes`}, the table's change data feed (F1), and {@code db.`t$changelog`}, the same
 * changes as a Flink changelog (G1; columns, options and why it has a name of its own: {@link
 * ChangelogTableSource}).
 *
 * <p>Every table's columns carry their comments: the docs of the Iceberg fields, which Iceberg's
 * catalog leaves out, so that {@code SHOW CREATE TABLE} and {@code DESCRIBE} print them.
 *
 * <p><b>Columns of {@code t$changes}</b>: the table's current columns (same names and types), then
 * {@code _change_type} STRING NOT NULL, {@code _commit_version} BIGINT NOT NULL and {@code
 * _commit_timestamp} TIMESTAMP_LTZ(3) NOT NULL; no primary key (a key changes many times). Its
 * options are the table's, plus {@code 'read-change-feed'='true'}; the range comes from {@code
 * OPTIONS} hints (see {@link ChangeFeedSqlOptions}).
 *
 * <p>Why a separate name rather than an {@code OPTIONS('read-change-feed'='true')} hint on {@code
 * t} alone: Flink fixes a table's columns from the catalog before it applies hints, so a hint
 * cannot add the three metadata columns; {@code $changes} follows Iceberg's {@code t$snapshots} and
 * Paimon's {@code t$audit_log}. A read of {@code t} itself with {@code 'read-change-feed'='true'}
 * fails with {@code INVALID_CDC_OPTIONS} naming {@code t$changes}; every other read or write of
 * {@code t} is served by Iceberg's own table factory.
 *
 * <p><b>{@code SELECT *} of {@code t$changelog}</b> gives {@code t}'s columns only when the session
 * leaves virtual metadata columns out of {@code *}: Flink expands them by default, and only the
 * session option {@code table.column-expansion-strategy} changes that, which a catalog cannot set.
 * {@link #excludeMetadataColumnsFromSelectStar} sets it (changeflow's {@code sql} command does); in
 * a Flink SQL client: {@code SET 'table.column-expansion-strategy' =
 * 'EXCLUDE_DEFAULT_VIRTUAL_METADATA_COLUMNS';}.
 */
@PublicEvolving
public class ChangeflowCatalog extends FlinkCatalog {

    /** Suffix of a change-feed table's name, {@value}. */
    public static final String CHANGES_SUFFIX = "$changes";

    /** Suffix of a changelog table's name, {@value} (G1). */
    public static final String CHANGELOG_SUFFIX = "$changelog";

    /**
     * Prefix of catalog options that are defaults of every {@code t$changelog} read: {@code
     * 'changelog.bounded'='true'} gives each read {@code 'bounded'='true'} unless its {@code
     * OPTIONS} hint sets {@code bounded} itself (hints win, as Flink merges them over a table's
     * options). {@code bin/changeflow gold FILE.sql --bounded} sets it.
     */
    public static final String CHANGELOG_DEFAULTS_PREFIX = "changelog.";

    /**
     * Catalog option: the directory of a {@link SourceVersionLog}. When set, every {@code
     * t$changelog} read records the version it completed at each checkpoint there, and every
     * Iceberg table written through this catalog gets {@code changeflow.source-version.<db.t>} on
     * its commits ({@link SourceVersionStamping}; G2) — for the Silver tables its INSERTs read
     * ({@link #addInsertReads}) when they were given, else for every read of the job. {@code
     * bin/changeflow gold FILE.sql} sets it.
     */
    public static final String SOURCE_VERSION_LOG = "source-version-log";

    /**
     * One {@code t$changelog} read planned through this catalog: the Iceberg table ({@code db.t})
     * and the read's options after defaults and hints.
     */
    public record ChangelogRead(String table, Map<String, String> options) {}

    private final CatalogLoader loader;
    private final Namespace baseNamespace;
    @Nullable private final SourceVersionLog sourceVersionLog;
    private final List<ChangelogRead> changelogReads =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, String> changelogDefaults = new HashMap<>();
    private final Map<String, Set<String>> insertReads = new ConcurrentHashMap<>();
    private final List<ObjectPath> createdTables =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<String> createdDatabases = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** See {@link FlinkCatalog}'s constructor; {@link ChangeflowCatalogFactory} calls it. */
    public ChangeflowCatalog(
            String catalogName,
            String defaultDatabase,
            Namespace baseNamespace,
            CatalogLoader catalogLoader,
            Map<String, String> catalogProps,
            boolean cacheEnabled,
            long cacheExpirationIntervalMs) {
        super(
                catalogName,
                defaultDatabase,
                baseNamespace,
                catalogLoader,
                catalogProps,
                cacheEnabled,
                cacheExpirationIntervalMs);
        this.loader = catalogLoader;
        this.baseNamespace = baseNamespace;
        String log = catalogProps.get(SOURCE_VERSION_LOG);
        this.sourceVersionLog = log == null || log.isBlank() ? null : new SourceVersionLog(log);
        catalogProps.forEach(
                (k, v) -> {
                    if (k.startsWith(CHANGELOG_DEFAULTS_PREFIX)
                            && k.length() > CHANGELOG_DEFAULTS_PREFIX.length()) {
                        changelogDefaults.put(k.substring(CHANGELOG_DEFAULTS_PREFIX.length()), v);
                    }
                });
    }

    /**
     * Makes {@code SELECT *} in the session of {@code config} leave out virtual metadata columns
     * declared without an alias, such as {@code _commit_version} and {@code _commit_timestamp} of
     * {@code t$changelog} (G1), which stay selectable by name: adds {@link
     * ColumnExpansionStrategy#EXCLUDE_DEFAULT_VIRTUAL_METADATA_COLUMNS} to {@link
     * TableConfigOptions#TABLE_COLUMN_EXPANSION_STRATEGY}, keeping strategies already set. It
     * applies to every table of the session (Flink has no per-table setting).
     */
    public static void excludeMetadataColumnsFromSelectStar(TableConfig config) {
        List<ColumnExpansionStrategy> strategies =
                new ArrayList<>(config.get(TableConfigOptions.TABLE_COLUMN_EXPANSION_STRATEGY));
        if (!strategies.contains(
                ColumnExpansionStrategy.EXCLUDE_DEFAULT_VIRTUAL_METADATA_COLUMNS)) {
            strategies.add(ColumnExpansionStrategy.EXCLUDE_DEFAULT_VIRTUAL_METADATA_COLUMNS);
        }
        config.set(TableConfigOptions.TABLE_COLUMN_EXPANSION_STRATEGY, strategies);
    }

    /** True when {@code objectName} names a change-feed table ({@code t$changes}). */
    public static boolean isChangesTable(String objectName) {
        return hasSuffix(objectName, CHANGES_SUFFIX);
    }

    /** True when {@code objectName} names a changelog table ({@code t$changelog}, G1). */
    public static boolean isChangelogTable(String objectName) {
        return hasSuffix(objectName, CHANGELOG_SUFFIX);
    }

    private static boolean hasSuffix(String objectName, String suffix) {
        return objectName.endsWith(suffix) && objectName.length() > suffix.length();
    }

    /**
     * The Iceberg table behind {@code path} ({@code t} for {@code t$changes} and {@code
     * t$changelog}).
     */
    static ObjectPath basePath(ObjectPath path) {
        String name = path.getObjectName();
        for (String suffix : List.of(CHANGES_SUFFIX, CHANGELOG_SUFFIX)) {
            if (hasSuffix(name, suffix)) {
                return new ObjectPath(
                        path.getDatabaseName(), name.substring(0, name.length() - suffix.length()));
            }
        }
        return path;
    }

    @Override
    public CatalogTable getTable(ObjectPath tablePath)
            throws TableNotExistException, CatalogException {
        boolean changelog = isChangelogTable(tablePath.getObjectName());
        if (!changelog && !isChangesTable(tablePath.getObjectName())) {
            return withColumnComments(super.getTable(tablePath), tablePath);
        }
        CatalogTable base;
        try {
            base = withColumnComments(super.getTable(basePath(tablePath)), basePath(tablePath));
        } catch (TableNotExistException e) {
            throw new TableNotExistException(getName(), tablePath, e);
        }
        if (changelog) {
            return changelogTable(tablePath, base);
        }
        Schema.Builder schema =
                Schema.newBuilder().fromColumns(base.getUnresolvedSchema().getColumns());
        Set<String> names = new HashSet<>();
        base.getUnresolvedSchema()
                .getColumns()
                .forEach(c -> names.add(c.getName().toLowerCase(Locale.ROOT)));
        // a table column named like a metadata column is not duplicated here: reading fails with
        // RESERVED_COLUMN_NAME when the statement is planned (F4)
        if (names.stream().noneMatch(ChangeFeedColumns.RESERVED::contains)) {
            schema.column(ChangeFeedColumns.CHANGE_TYPE, DataTypes.STRING().notNull());
            schema.column(ChangeFeedColumns.COMMIT_VERSION, DataTypes.BIGINT().notNull());
            schema.column(ChangeFeedColumns.COMMIT_TIMESTAMP, DataTypes.TIMESTAMP_LTZ(3).notNull());
        }
        Map<String, String> options = new HashMap<>(base.getOptions());
        options.put(ChangeFeedOptions.READ_CHANGE_FEED.key(), "true");
        return CatalogTable.newBuilder()
                .schema(schema.build())
                .comment("Change data feed of " + basePath(tablePath).getFullName())
                .options(options)
                .build();
    }

    /**
     * {@code table} (Iceberg's Flink view of the table at {@code path}) with each top-level
     * column's comment: the doc of the Iceberg field of that name, which Iceberg's catalog leaves
     * out (so {@code SHOW CREATE TABLE} and {@code DESCRIBE} print the {@code COMMENT}s a {@code
     * CREATE STREAMING TABLE} or {@code CREATE TABLE} declared). {@code table} itself when no field
     * has a doc or the table cannot be loaded.
     */
    private CatalogTable withColumnComments(CatalogTable table, ObjectPath path) {
        org.apache.iceberg.Schema iceberg;
        try {
            iceberg = loadIcebergTable(path).schema();
        } catch (RuntimeException e) {
            return table;
        }
        if (iceberg.columns().stream().allMatch(f -> f.doc() == null)) {
            return table;
        }
        Schema unresolved = table.getUnresolvedSchema();
        Schema.Builder schema = Schema.newBuilder();
        for (Schema.UnresolvedColumn c : unresolved.getColumns()) {
            schema.fromColumns(List.of(c));
            org.apache.iceberg.types.Types.NestedField f = iceberg.findField(c.getName());
            if (c.getComment().isEmpty() && f != null && f.doc() != null) {
                schema.withComment(f.doc());
            }
        }
        unresolved
                .getPrimaryKey()
                .ifPresent(
                        key ->
                                schema.primaryKeyNamed(
                                        key.getConstraintName(), key.getColumnNames()));
        unresolved
                .getWatermarkSpecs()
                .forEach(w -> schema.watermark(w.getColumnName(), w.getWatermarkExpression()));
        CatalogTable.Builder copy =
                CatalogTable.newBuilder()
                        .schema(schema.build())
                        .comment(table.getComment())
                        .partitionKeys(table.getPartitionKeys())
                        .options(table.getOptions());
        table.getDistribution().ifPresent(copy::distribution);
        table.getSnapshot().ifPresent(copy::snapshot);
        return copy.build();
    }

    /**
     * {@code t$changelog} (G1): {@code t}'s columns and primary key (its identifier fields, none
     * when it has none), then {@code _commit_version} BIGINT and {@code _commit_timestamp}
     * TIMESTAMP_LTZ(3) as virtual metadata columns; {@code t}'s options, then the catalog's {@link
     * #CHANGELOG_DEFAULTS_PREFIX} defaults.
     */
    private CatalogTable changelogTable(ObjectPath path, CatalogTable base) {
        Schema.Builder schema =
                Schema.newBuilder().fromColumns(base.getUnresolvedSchema().getColumns());
        base.getUnresolvedSchema()
                .getPrimaryKey()
                // a stable constraint name (Iceberg's is a random id): PK_<columns>
                .ifPresent(key -> schema.primaryKey(key.getColumnNames()));
        Set<String> names = new HashSet<>();
        base.getUnresolvedSchema()
                .getColumns()
                .forEach(c -> names.add(c.getName().toLowerCase(Locale.ROOT)));
        // as for t$changes: a clashing table column fails with RESERVED_COLUMN_NAME when planned
        if (names.stream().noneMatch(ChangeFeedColumns.RESERVED::contains)) {
            ChangelogTableSource.METADATA.forEach(
                    (key, type) -> schema.columnByMetadata(key, type, null, true));
        }
        Map<String, String> options = new HashMap<>(base.getOptions());
        options.putAll(changelogDefaults);
        return CatalogTable.newBuilder()
                .schema(schema.build())
                .comment("Changelog of " + basePath(path).getFullName())
                .options(options)
                .build();
    }

    @Override
    public boolean tableExists(ObjectPath tablePath) throws CatalogException {
        return super.tableExists(basePath(tablePath));
    }

    /** Iceberg's {@code CREATE TABLE}; a table it creates is recorded ({@link #createdTables}). */
    @Override
    public void createTable(ObjectPath tablePath, CatalogBaseTable table, boolean ignoreIfExists)
            throws CatalogException, TableAlreadyExistException {
        boolean existed = tableExists(tablePath);
        super.createTable(tablePath, table, ignoreIfExists);
        if (!existed) {
            createdTables.add(tablePath);
        }
    }

    /**
     * Iceberg's {@code CREATE DATABASE}; a database it creates is recorded ({@link
     * #createdDatabases}).
     */
    @Override
    public void createDatabase(String name, CatalogDatabase database, boolean ignoreIfExists)
            throws DatabaseAlreadyExistException, CatalogException {
        boolean existed;
        try {
            existed = databaseExists(name);
        } catch (RuntimeException e) {
            existed = false; // a new warehouse without its folder
        }
        super.createDatabase(name, database, ignoreIfExists);
        if (!existed) {
            createdDatabases.add(name);
        }
    }

    /**
     * The tables this catalog instance created ({@code CREATE TABLE} statements of its session), in
     * creation order. A caller that must leave nothing behind when a later statement fails (a Gold
     * file that fails validation) drops them.
     */
    public List<ObjectPath> createdTables() {
        return List.copyOf(createdTables);
    }

    /** The databases this catalog instance created ({@code CREATE DATABASE}), in order. */
    public List<String> createdDatabases() {
        return List.copyOf(createdDatabases);
    }

    /**
     * The databases (namespaces under the base namespace) the Iceberg catalog has; none for a new
     * warehouse, whose folder may not exist yet (Iceberg's Hadoop catalog then throws {@code
     * NoSuchNamespaceException} for the warehouse itself). The default database is listed (and
     * exists for Flink) only once its namespace exists: a new warehouse has none. Names starting
     * with a dot are not listed: in a local warehouse the folder {@code .changeflow} holds
     * changeflow's saved state (checkpoints, job records, maintenance locks), which Iceberg's
     * Hadoop catalog would list as a namespace.
     */
    @Override
    public List<String> listDatabases() throws CatalogException {
        try {
            return super.listDatabases().stream().filter(n -> !n.startsWith(".")).toList();
        } catch (NoSuchNamespaceException e) {
            if (!baseNamespace.isEmpty()) {
                throw e; // a base namespace the user named that does not exist: Iceberg's error
            }
            return List.of(); // a new warehouse: no namespace yet
        }
    }

    /**
     * The tables of {@code databaseName}: none for the catalog's default database ({@code default}
     * unless {@code default-database} names another) before its namespace exists, so that {@code
     * SHOW TABLES} in a session on a new or empty warehouse is empty rather than an error. Nothing
     * is created by listing (the first {@code CREATE TABLE t} creates the namespace); every other
     * statement that needs the default database still finds it missing.
     *
     * @throws DatabaseNotExistException for any other database the Iceberg catalog does not have
     */
    @Override
    public List<String> listTables(String databaseName)
            throws DatabaseNotExistException, CatalogException {
        try {
            return super.listTables(databaseName);
        } catch (DatabaseNotExistException | NoSuchNamespaceException e) {
            if (isAbsentDefault(databaseName)) {
                return List.of();
            }
            if (e instanceof DatabaseNotExistException notExist) {
                throw notExist;
            }
            throw new DatabaseNotExistException(getName(), databaseName, e);
        }
    }

    /** Whether {@code databaseName} is the default database (its namespace was just not found). */
    private boolean isAbsentDefault(String databaseName) {
        return getDefaultDatabase().equals(databaseName);
    }

    /**
     * Changeflow's table factory: the change feed for {@code t$changes} and {@code t$changelog},
     * Iceberg's otherwise.
     */
    @Override
    public Optional<Factory> getFactory() {
        return Optional.of(new ChangeFeedTableFactory(this));
    }

    /**
     * The options Iceberg's catalog gives the table at {@code path} (its properties plus connector
     * keys).
     */
    Map<String, String> baseOptions(ObjectPath path) {
        try {
            return super.getTable(basePath(path)).getOptions();
        } catch (TableNotExistException e) {
            throw new CatalogException(e.getMessage(), e);
        }
    }

    /** The Iceberg table behind {@code path}, freshly loaded. */
    Table loadIcebergTable(ObjectPath path) {
        return catalog().loadTable(identifier(basePath(path)));
    }

    /** The catalog's {@link #SOURCE_VERSION_LOG}, or null. */
    @Nullable
    public SourceVersionLog sourceVersionLog() {
        return sourceVersionLog;
    }

    /**
     * The {@code t$changelog} reads planned so far (each planning of a statement adds its reads
     * again; callers group by table).
     */
    public List<ChangelogRead> changelogReads() {
        return List.copyOf(changelogReads);
    }

    void planned(ChangelogRead read) {
        changelogReads.add(read);
    }

    /**
     * Records that an INSERT into {@code target} (a table of this catalog) reads the Silver tables
     * {@code silverTables} ({@code db.t}, through {@code t$changelog}): the commits of {@code
     * target}'s sink then carry {@code changeflow.source-version.<db.t>} for these tables only
     * (G2). Several INSERTs into the same target add up (their union). Call it before the sink is
     * created (before the statement set is explained or executed); an empty set means the target's
     * commits record no version. A target never given here records every read of the job (the
     * catalog cannot tell which reads feed which sink: Flink creates the sources when it converts
     * each query and the sinks only when it plans the whole statement set).
     */
    public void addInsertReads(ObjectPath target, Collection<String> silverTables) {
        insertReads.computeIfAbsent(tableName(target), k -> new TreeSet<>()).addAll(silverTables);
    }

    /**
     * The Silver tables ({@code db.t}) the INSERTs into {@code target} read ({@link
     * #addInsertReads}), sorted; null when none were recorded for it.
     */
    @Nullable
    public Set<String> insertReads(ObjectPath target) {
        Set<String> tables = insertReads.get(tableName(target));
        return tables == null ? null : new TreeSet<>(tables);
    }

    /** {@code db.t} of the Iceberg table behind {@code path}. */
    String tableName(ObjectPath path) {
        return identifier(basePath(path)).toString();
    }

    /** A serializable loader of the Iceberg table behind {@code path}, for tasks. */
    TableLoader tableLoader(ObjectPath path) {
        return TableLoader.fromCatalog(loader, identifier(basePath(path)));
    }

    private TableIdentifier identifier(ObjectPath path) {
        String[] levels = new String[baseNamespace.levels().length + 1];
        System.arraycopy(baseNamespace.levels(), 0, levels, 0, baseNamespace.levels().length);
        levels[levels.length - 1] = path.getDatabaseName();
        return TableIdentifier.of(Namespace.of(levels), path.getObjectName());
    }
}

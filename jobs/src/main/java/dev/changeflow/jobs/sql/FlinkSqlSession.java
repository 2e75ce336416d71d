package dev.changeflow.jobs.sql;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalogFactory;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.ExplainDetail;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.catalog.CatalogDescriptor;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.flink.FlinkCatalogFactory;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code bin/changeflow sql} and {@code bin/changeflow gold FILE.sql} share to run Flink SQL:
 * the {@code changeflow} catalog over the warehouse's Iceberg catalog as the session's current
 * catalog, {@code SELECT *} without virtual metadata columns, the built-in aggregate {@code
 * SOURCE_VERSION} ({@link SourceVersionFunction}, G2), and a change-feed error ({@link
 * CdfException}, F3/F4) surfaced with its code rather than wrapped in Flink's exceptions.
 */
@Internal
public final class FlinkSqlSession {
    private FlinkSqlSession() {}

    /**
     * Registers catalog {@code name} of type {@code changeflow} over {@code settings} (plus {@code
     * extraOptions}, e.g. {@link ChangeflowCatalog#CHANGELOG_DEFAULTS_PREFIX} defaults) in {@code
     * tEnv}, makes it current, leaves virtual metadata columns out of {@code SELECT *} ({@link
     * ChangeflowCatalog#excludeMetadataColumnsFromSelectStar}) and registers {@code
     * SOURCE_VERSION(v)} as a temporary system function ({@link SourceVersionFunction}; once per
     * {@code tEnv}).
     */
    public static void open(
            TableEnvironment tEnv,
            CatalogSettings settings,
            String name,
            Map<String, String> extraOptions) {
        ChangeflowCatalog.excludeMetadataColumnsFromSelectStar(tEnv.getConfig());
        Map<String, String> options = flinkCatalogOptions(settings);
        options.putAll(extraOptions);
        try {
            tEnv.createCatalog(name, CatalogDescriptor.of(name, Configuration.fromMap(options)));
        } catch (org.apache.flink.table.api.ValidationException e) {
            // Flink wraps the catalog's own failure (an unreachable REST server, a refused login)
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            throw new IllegalArgumentException(
                    "SOURCE_NOT_FOUND: catalog '"
                            + name
                            + "' cannot be opened"
                            + (settings.properties().containsKey("uri")
                                    ? " at " + settings.properties().get("uri")
                                    : "")
                            + ": "
                            + (root == e
                                    ? e.getMessage()
                                    : root.getClass().getSimpleName() + ": " + root.getMessage())
                            + "; check the catalog properties and that the catalog is up",
                    e);
        }
        tEnv.useCatalog(name);
        if (!Arrays.asList(tEnv.listUserDefinedFunctions())
                .contains(SourceVersionFunction.NAME.toLowerCase(Locale.ROOT))) {
            SourceVersionFunction.register(tEnv);
        }
    }

    /**
     * {@code tEnv.executeSql(statement)}, with a {@link CdfException} anywhere in the cause chain
     * thrown as it is.
     */
    public static TableResult execute(TableEnvironment tEnv, String statement) {
        try {
            return tEnv.executeSql(statement);
        } catch (RuntimeException e) {
            throw unwrapCdf(e);
        }
    }

    /**
     * The changelog mode Flink's EXPLAIN prints for a node, e.g. {@code changelogMode=[I,UB,UA]}.
     */
    private static final Pattern CHANGELOG_MODE = Pattern.compile("changelogMode=\\[([^\\]]*)\\]");

    /**
     * Whether the query of an {@code INSERT} statement emits other rows than inserts (updates or
     * deletes: an aggregate, a join, a changelog read), by the changelog mode Flink's planner gives
     * the sink's input ({@code EXPLAIN CHANGELOG_MODE}).
     *
     * @throws RuntimeException Flink's error when it cannot plan the statement
     */
    public static boolean insertEmitsUpdates(TableEnvironment tEnv, String insert) {
        String plan = tEnv.explainSql(insert, ExplainDetail.CHANGELOG_MODE);
        int physical = plan.indexOf("== Optimized Physical Plan ==");
        String[] lines = plan.substring(Math.max(physical, 0)).split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].startsWith("Sink(") && i + 1 < lines.length) {
                Matcher m = CHANGELOG_MODE.matcher(lines[i + 1]);
                if (m.find()) {
                    for (String kind : m.group(1).split(",")) {
                        if (!kind.strip().equals("I")) {
                            return true;
                        }
                    }
                }
                return false;
            }
        }
        return false;
    }

    /** The first {@link CdfException} in {@code e}'s cause chain, else {@code e}. */
    public static RuntimeException unwrapCdf(RuntimeException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CdfException) {
                return (CdfException) t;
            }
        }
        return e;
    }

    /**
     * The options of a {@code changeflow} Flink catalog over the Iceberg catalog {@code settings}
     * describe: Iceberg's {@code type} becomes {@code catalog-type} (hadoop, rest, hive) or {@code
     * catalog-impl} (jdbc, glue, nessie), as Iceberg's Flink catalog expects.
     *
     * @return a mutable sorted map
     */
    public static Map<String, String> flinkCatalogOptions(CatalogSettings settings) {
        Map<String, String> options = new TreeMap<>(settings.properties());
        String type = options.remove(CatalogUtil.ICEBERG_CATALOG_TYPE);
        if (!options.containsKey(CatalogProperties.CATALOG_IMPL)) {
            String lower = type == null ? "" : type.toLowerCase(Locale.ROOT);
            if (lower.equals(CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP)
                    || lower.equals(CatalogUtil.ICEBERG_CATALOG_TYPE_REST)
                    || lower.equals(CatalogUtil.ICEBERG_CATALOG_TYPE_HIVE)) {
                options.put(FlinkCatalogFactory.ICEBERG_CATALOG_TYPE, lower);
            } else {
                options.put(CatalogProperties.CATALOG_IMPL, settings.catalogImpl());
            }
        }
        options.put("type", ChangeflowCatalogFactory.IDENTIFIER);
        return options;
    }
}

package dev.changeflow.jobs.gold;

import dev.changeflow.jobs.sql.FlinkSqlSession;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkCatalog;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The flag form of {@code bin/changeflow gold} ({@code --source NS.T --upsert-table ...
 * --aggregate-table ...}) compiled to a Gold SQL file, which {@link GoldSql} runs like any {@code
 * gold FILE.sql} (docs/semantics.md G2, G3): the same upsert sinks, recorded Silver versions,
 * rebuild and {@code GOLD_VERSION_MISMATCH} rules. {@code --print-sql} prints the text, so a user
 * can move to a file.
 *
 * <p><b>Compiled text</b> ({@link #toSql}), identifiers back-quoted:
 *
 * <ul>
 *   <li>the in-job maintenance options as {@code SET 'changeflow.maintenance...' = '...'};
 *   <li>with {@code --where}: {@code SET 'table.exec.sink.upsert-materialize' = 'FORCE'}. A Silver
 *       update whose new image fails the filter leaves the filter as a lone {@code -U} (its {@code
 *       +U} is filtered out), and Iceberg's upsert writer ignores {@code -U} rows (it replaces a
 *       key on {@code +U}), so the Gold row would stay; Flink's upsert materializer before the sink
 *       turns a retraction that leaves a key without rows into a {@code -D}. (It keeps the rows per
 *       key in state.)
 *   <li>{@code CREATE DATABASE IF NOT EXISTS} for each Gold namespace;
 *   <li>upsert table: {@code CREATE TABLE IF NOT EXISTS t (<the projection's columns>,
 *       _source_version BIGINT, PRIMARY KEY (<Silver's identifier fields>) NOT ENFORCED)} and
 *       {@code INSERT INTO t SELECT <columns>, _commit_version AS _source_version FROM
 *       ns.`s$changelog` [WHERE <where>]} — the columns (default: every Silver column) must keep
 *       the Silver identifier fields under their names;
 *   <li>aggregate table: {@code CREATE TABLE IF NOT EXISTS t (<group-by>, <aggregates>,
 *       _source_version BIGINT, PRIMARY KEY (<group-by>) NOT ENFORCED)} and {@code INSERT INTO t
 *       SELECT <group-by>, <aggregates>, SOURCE_VERSION(_commit_version) AS _source_version FROM
 *       ns.`s$changelog` WHERE <each group-by column> IS NOT NULL GROUP BY <group-by>}. A {@code
 *       SUM} of an integer expression narrower than BIGINT sums it as BIGINT (Flink's {@code SUM}
 *       of an INT is an INT, which overflows). A group whose rows all left is deleted (Flink's
 *       group aggregation), so there is no {@code _row_count} column; rows with a NULL group value
 *       are left out (a primary key column cannot be NULL).
 * </ul>
 *
 * <p>The column types of the {@code CREATE TABLE}s are what Flink's planner derives for the same
 * projection and aggregation over the Silver table, in a session over the catalog; an existing Gold
 * table keeps its columns ({@code IF NOT EXISTS}), and an INSERT that does not fit it is {@code
 * INVALID_QUERY} when the file is planned.
 */
@PublicEvolving
public final class GoldFlags {
    /** The column the compiled Gold tables get: the Silver version of the last change (G2). */
    public static final String SOURCE_VERSION = "_source_version";

    /**
     * Flink's option that puts a {@code SinkUpsertMaterializer} before a sink with a primary key.
     */
    static final String UPSERT_MATERIALIZE = "table.exec.sink.upsert-materialize";

    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private static final Pattern AGGREGATE =
            Pattern.compile(
                    "\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*\\((.*)\\)\\s*",
                    Pattern.DOTALL);

    private final String name;
    private final TableIdentifier source;
    @Nullable private final Upsert upsert;
    @Nullable private final Aggregate aggregate;
    private final Map<String, String> maintenance;

    /**
     * @param name the job's name ({@code --name}, default {@code gold-<silver table>})
     * @param maintenance the maintenance flow options in flag order ({@code maintenance} → {@code
     *     true}, {@code maintenance-<option>} → value), checked when the compiled file is run
     * @throws GoldException {@code GOLD_DEFINITION_INVALID} when nothing is maintained, both Gold
     *     tables are the same table, or a Gold table is the Silver table
     */
    public GoldFlags(
            String name,
            TableIdentifier source,
            @Nullable Upsert upsert,
            @Nullable Aggregate aggregate,
            Map<String, String> maintenance) {
        this.name = Objects.requireNonNull(name, "name");
        this.source = Objects.requireNonNull(source, "source");
        this.upsert = upsert;
        this.aggregate = aggregate;
        this.maintenance = new LinkedHashMap<>(maintenance);
        if (upsert == null && aggregate == null) {
            throw invalid(
                    "Gold job '"
                            + name
                            + "' maintains nothing: give an upsert table, an aggregate table, or"
                            + " both");
        }
        if (upsert != null && aggregate != null && upsert.target().equals(aggregate.target())) {
            throw invalid(
                    "Gold job '"
                            + name
                            + "': the upsert and the aggregate table are both "
                            + upsert.target());
        }
        for (Object target :
                new Object[] {
                    upsert == null ? null : upsert.target(),
                    aggregate == null ? null : aggregate.target()
                }) {
            if (source.equals(target)) {
                throw invalid(
                        "Gold job '"
                                + name
                                + "': the Gold table "
                                + target
                                + " is the Silver table itself");
            }
        }
    }

    /**
     * A Gold upsert table: the Silver rows projected ({@code columns}, a Flink SQL select list;
     * null: every column) and filtered ({@code where}, a Flink SQL predicate; null: every row).
     */
    public record Upsert(TableIdentifier target, @Nullable String columns, @Nullable String where) {
        public Upsert {
            Objects.requireNonNull(target, "target");
            columns = columns == null || columns.isBlank() ? null : columns;
            where = where == null || where.isBlank() ? null : where;
        }
    }

    /** A Gold aggregate table: GROUP BY Silver columns, aggregate columns. */
    public record Aggregate(
            TableIdentifier target, List<String> groupBy, List<AggregateColumn> aggregates) {
        /**
         * @throws GoldException {@code GOLD_DEFINITION_INVALID} without a group-by column or an
         *     aggregate, or for a group-by entry that is not a column name
         */
        public Aggregate {
            Objects.requireNonNull(target, "target");
            groupBy = groupBy.stream().map(String::strip).toList();
            aggregates = List.copyOf(aggregates);
            if (groupBy.isEmpty() || aggregates.isEmpty()) {
                throw invalid(
                        "the aggregate table "
                                + target
                                + " needs at least one group-by column and one aggregate");
            }
            for (String g : groupBy) {
                if (!NAME.matcher(g).matches()) {
                    throw invalid(
                            "--group-by takes Silver column names, got '"
                                    + g
                                    + "' (group by an expression in a Gold SQL file)");
                }
            }
        }
    }

    /**
     * One aggregate column {@code name = FUNCTION(argument)}: {@code SUM(expr)}, {@code COUNT(*)},
     * {@code COUNT(expr)} — or any other aggregate Flink SQL maintains from a changelog with
     * retractions ({@code MIN}, {@code MAX}, {@code AVG}, ...), since the compiled query is
     * Flink's.
     *
     * @param argument the argument as written; {@code *} for {@code COUNT(*)}
     */
    public record AggregateColumn(String name, String function, String argument) {
        /**
         * Parses {@code name=FN(expr)} (for example {@code balance_total=SUM(abalance)}, {@code
         * n=COUNT(*)}).
         *
         * @throws GoldException {@code GOLD_DEFINITION_INVALID} for any other form
         */
        public static AggregateColumn parse(String text) {
            Matcher m = AGGREGATE.matcher(text);
            if (!m.matches() || m.group(3).isBlank()) {
                throw invalid(
                        "aggregate '"
                                + text
                                + "' is not of the form name=FUNCTION(expr), for example"
                                + " total=SUM(abalance), n=COUNT(*) or top=MAX(abalance)");
            }
            return new AggregateColumn(m.group(1), m.group(2), m.group(3).strip());
        }

        /** The column's SQL: {@code FN(argument)}; an integer SUM argument cast to BIGINT. */
        String sql(boolean castToBigint) {
            return function
                    + "("
                    + (castToBigint ? "CAST((" + argument + ") AS BIGINT)" : argument)
                    + ")";
        }

        @Override
        public String toString() {
            return name + "=" + function + "(" + argument + ")";
        }
    }

    /** The job's name. */
    public String name() {
        return name;
    }

    /** The Silver table whose changelog is read. */
    public TableIdentifier source() {
        return source;
    }

    @Nullable
    public Upsert upsert() {
        return upsert;
    }

    @Nullable
    public Aggregate aggregate() {
        return aggregate;
    }

    /**
     * Compiles the flags to the text of a Gold SQL file (see the class comment), deriving the Gold
     * tables' column types from the Silver table in a session over {@code settings}' catalog.
     *
     * @throws GoldException {@code GOLD_DEFINITION_INVALID}: no such Silver table; an upsert table
     *     over a Silver table without identifier fields or a projection without them; a column,
     *     predicate or aggregate Flink cannot plan over the Silver table (with Flink's message)
     */
    public String toSql(CatalogSettings settings) {
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(
                        StreamExecutionEnvironment.getExecutionEnvironment(),
                        EnvironmentSettings.inStreamingMode());
        FlinkSqlSession.open(tEnv, settings, GoldSql.CATALOG, Map.of());
        try {
            return toSql(tEnv);
        } finally {
            // the planning session's catalog (and the Iceberg catalog it opened: a REST client,
            // a JDBC connection) is not needed once the text is compiled
            tEnv.getCatalog(GoldSql.CATALOG)
                    .ifPresent(org.apache.flink.table.catalog.Catalog::close);
        }
    }

    private String toSql(StreamTableEnvironment tEnv) {
        Catalog iceberg = ((FlinkCatalog) tEnv.getCatalog(GoldSql.CATALOG).orElseThrow()).catalog();
        if (!iceberg.tableExists(source)) {
            throw invalid("--source " + source + ": no such Silver table");
        }
        Schema silver = iceberg.loadTable(source).schema();
        String from = quote(source);
        String changelog =
                quote(source.namespace().toString()) + "." + quote(source.name() + "$changelog");
        StringBuilder sql = new StringBuilder();
        sql.append("-- bin/changeflow gold --source ")
                .append(source)
                .append(" (--name ")
                .append(name)
                .append("), compiled to Gold SQL\n");
        maintenance.forEach(
                (k, v) ->
                        sql.append("SET '")
                                .append(GoldSql.MAINTENANCE_PREFIX)
                                .append(k.replace("'", "''"))
                                .append("' = '")
                                .append(v.replace("'", "''"))
                                .append("';\n"));
        if (upsert != null && upsert.where() != null) {
            // a row whose update fails the filter reaches the sink as a lone -U, which Iceberg's
            // upsert writer ignores: the materializer turns it into a -D of the key
            sql.append("SET '").append(UPSERT_MATERIALIZE).append("' = 'FORCE';\n");
        }
        List<String> namespaces = new ArrayList<>();
        for (Object t :
                new Object[] {
                    upsert == null ? null : upsert.target(),
                    aggregate == null ? null : aggregate.target()
                }) {
            if (t != null) {
                String ns = ((TableIdentifier) t).namespace().toString();
                if (!namespaces.contains(ns)) {
                    namespaces.add(ns);
                    sql.append("CREATE DATABASE IF NOT EXISTS ").append(quote(ns)).append(";\n");
                }
            }
        }
        if (upsert != null) {
            List<String> keys =
                    silver.identifierFieldIds().stream()
                            .map(id -> silver.findField(id).name())
                            .sorted()
                            .toList();
            if (keys.isEmpty()) {
                throw invalid(
                        "--upsert-table "
                                + upsert.target()
                                + ": the Silver table "
                                + source
                                + " has no identifier fields, so its rows have no key to upsert"
                                + " by");
            }
            String select =
                    upsert.columns() != null
                            ? upsert.columns()
                            : silver.columns().stream()
                                    .map(c -> quote(c.name()))
                                    .collect(Collectors.joining(", "));
            ResolvedSchema schema =
                    schemaOf(
                            tEnv,
                            "SELECT "
                                    + endsLine(select)
                                    + " FROM "
                                    + from
                                    + (upsert.where() == null
                                            ? ""
                                            : " WHERE " + endsLine(upsert.where())),
                            "--upsert-table " + upsert.target());
            List<String> names = schema.getColumnNames();
            checkNotReserved(names, "--columns of " + upsert.target());
            checkNotRenamed(names, select, "--columns of " + upsert.target());
            for (String key : keys) {
                if (!names.contains(key)) {
                    throw invalid(
                            "--columns of "
                                    + upsert.target()
                                    + " must keep the Silver identifier fields "
                                    + keys
                                    + " under their names (they are the Gold table's key), got "
                                    + names);
                }
            }
            createTable(sql, upsert.target(), schema, keys);
            sql.append("INSERT INTO ")
                    .append(quote(upsert.target()))
                    .append("\nSELECT ")
                    .append(endsLine(select))
                    .append(", `_commit_version` AS ")
                    .append(quote(SOURCE_VERSION))
                    .append("\nFROM ")
                    .append(changelog);
            if (upsert.where() != null) {
                sql.append(whereClause(upsert.where()));
            }
            sql.append(";\n");
        }
        if (aggregate != null) {
            for (String g : aggregate.groupBy()) {
                if (silver.findField(g) == null) {
                    throw invalid(
                            "--group-by "
                                    + g
                                    + ": the Silver table "
                                    + source
                                    + " has no such column");
                }
            }
            String groups =
                    aggregate.groupBy().stream()
                            .map(GoldFlags::quote)
                            .collect(Collectors.joining(", "));
            // SUM of a narrow integer type: sum as BIGINT
            List<AggregateColumn> aggs = aggregate.aggregates();
            List<String> resultNames = new ArrayList<>(aggregate.groupBy());
            aggs.forEach(a -> resultNames.add(a.name()));
            checkNotReserved(resultNames, "--aggregate-table " + aggregate.target());
            boolean[] cast = new boolean[aggs.size()];
            List<Integer> sums = new ArrayList<>();
            for (int i = 0; i < aggs.size(); i++) {
                if (aggs.get(i).function().equalsIgnoreCase("SUM")) {
                    sums.add(i);
                }
            }
            if (!sums.isEmpty()) {
                ResolvedSchema args =
                        schemaOf(
                                tEnv,
                                "SELECT "
                                        + sums.stream()
                                                .map(i -> "(" + aggs.get(i).argument() + ")")
                                                .collect(Collectors.joining(", "))
                                        + " FROM "
                                        + from,
                                "--aggregate-table " + aggregate.target());
                for (int j = 0; j < sums.size(); j++) {
                    LogicalTypeRoot root =
                            args.getColumns().get(j).getDataType().getLogicalType().getTypeRoot();
                    cast[sums.get(j)] =
                            root == LogicalTypeRoot.TINYINT
                                    || root == LogicalTypeRoot.SMALLINT
                                    || root == LogicalTypeRoot.INTEGER;
                }
            }
            List<String> items = new ArrayList<>();
            for (int i = 0; i < aggs.size(); i++) {
                items.add(aggs.get(i).sql(cast[i]) + " AS " + quote(aggs.get(i).name()));
            }
            String notNull =
                    aggregate.groupBy().stream()
                            .map(g -> quote(g) + " IS NOT NULL")
                            .collect(Collectors.joining(" AND "));
            ResolvedSchema schema =
                    schemaOf(
                            tEnv,
                            "SELECT "
                                    + groups
                                    + ", "
                                    + String.join(", ", items)
                                    + " FROM "
                                    + from
                                    + " GROUP BY "
                                    + groups,
                            "--aggregate-table " + aggregate.target());
            createTable(sql, aggregate.target(), schema, aggregate.groupBy());
            sql.append("INSERT INTO ")
                    .append(quote(aggregate.target()))
                    .append("\nSELECT ")
                    .append(groups)
                    .append(", ")
                    .append(String.join(", ", items))
                    .append(", SOURCE_VERSION(`_commit_version`) AS ")
                    .append(quote(SOURCE_VERSION))
                    .append("\nFROM ")
                    .append(changelog)
                    .append("\nWHERE ")
                    .append(notNull)
                    .append("\nGROUP BY ")
                    .append(groups)
                    .append(";\n");
        }
        return sql.toString();
    }

    /** {@code \nWHERE <predicate>}, the predicate as the flag gives it ({@link #endsLine}). */
    private static String whereClause(String predicate) {
        return "\nWHERE " + endsLine(predicate);
    }

    /**
     * The flag's text, followed by a line break when it holds a {@code --} comment, so that the
     * comment ends there instead of swallowing the rest of the compiled statement.
     */
    private static String endsLine(String flagText) {
        return flagText.contains("--") ? flagText + "\n" : flagText;
    }

    /**
     * Refuses result columns named {@value #SOURCE_VERSION} (the column the compiled query adds) or
     * named twice (case-insensitive, as Flink SQL's would clash).
     *
     * @throws GoldException {@code GOLD_DEFINITION_INVALID} naming the column
     */
    private static void checkNotReserved(List<String> names, String what) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String n : names) {
            String lower = n.toLowerCase(java.util.Locale.ROOT);
            if (lower.equals(SOURCE_VERSION)) {
                throw invalid(
                        what
                                + ": a column named "
                                + SOURCE_VERSION
                                + " is the one changeflow adds (the Silver version of the row or"
                                + " group); name yours otherwise");
            }
            if (!seen.add(lower)) {
                throw invalid(
                        what
                                + ": the column "
                                + n
                                + " is named twice (group-by columns and aggregate names must"
                                + " differ)");
            }
        }
    }

    /**
     * Refuses a select list that gives two columns the same name: Flink (Calcite) keeps the first
     * and numbers the next ({@code amount}, {@code amount0}), so the names it reports are unique. A
     * result name that is another result name followed by digits and that {@code selectText} does
     * not write itself is such a number.
     *
     * @throws GoldException {@code GOLD_DEFINITION_INVALID} naming the duplicate
     */
    private static void checkNotRenamed(List<String> names, String selectText, String what) {
        java.util.Set<String> lower = new java.util.HashSet<>();
        names.forEach(n -> lower.add(n.toLowerCase(java.util.Locale.ROOT)));
        for (String n : names) {
            for (int k = n.length() - 1; k > 0 && Character.isDigit(n.charAt(k)); k--) {
                String first = n.substring(0, k);
                if (lower.contains(first.toLowerCase(java.util.Locale.ROOT))
                        && !Pattern.compile(
                                        "(?i)(?<![A-Za-z0-9_$])"
                                                + Pattern.quote(n)
                                                + "(?![A-Za-z0-9_$])")
                                .matcher(selectText)
                                .find()) {
                    throw invalid(
                            what
                                    + ": the column "
                                    + first
                                    + " is named twice (Flink would call the second one "
                                    + n
                                    + "); give each column its own name (expr AS name)");
                }
            }
        }
    }

    private static void createTable(
            StringBuilder sql, TableIdentifier target, ResolvedSchema schema, List<String> keys) {
        sql.append("CREATE TABLE IF NOT EXISTS ").append(quote(target)).append(" (\n");
        for (Column c : schema.getColumns()) {
            LogicalType type = c.getDataType().getLogicalType().copy(true);
            sql.append("  ")
                    .append(quote(c.getName()))
                    .append(' ')
                    .append(type.asSerializableString())
                    .append(",\n");
        }
        sql.append("  ")
                .append(quote(SOURCE_VERSION))
                .append(" BIGINT,\n  PRIMARY KEY (")
                .append(keys.stream().map(GoldFlags::quote).collect(Collectors.joining(", ")))
                .append(") NOT ENFORCED);\n");
    }

    /** The result columns of {@code query}, or GOLD_DEFINITION_INVALID with Flink's message. */
    private static ResolvedSchema schemaOf(StreamTableEnvironment tEnv, String query, String what) {
        try {
            return tEnv.sqlQuery(query).getResolvedSchema();
        } catch (RuntimeException e) {
            String detail = String.valueOf(e.getMessage()).strip();
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            if (root != e && root.getMessage() != null) {
                detail = detail + " (cause: " + root.getMessage().strip() + ")";
            }
            throw invalid(
                    what
                            + ": Flink cannot plan "
                            + query
                            + ": "
                            + detail.replaceAll("\\s*\n\\s*", " "));
        }
    }

    private static String quote(TableIdentifier id) {
        return quote(id.namespace().toString()) + "." + quote(id.name());
    }

    private static String quote(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    private static GoldException invalid(String message) {
        return new GoldException(GoldException.Code.GOLD_DEFINITION_INVALID, message);
    }
}

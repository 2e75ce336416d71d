package dev.changeflow.jobs.flow;

import dev.changeflow.jobs.sql.FlinkSqlSession;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.sinks.iceberg.SliceReplaceCommit;
import dev.changeflow.sinks.iceberg.SliceReplaceWriter;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTables;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.BuiltInFunctionDefinition;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeCasts;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.WriteResult;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One refresh of a REPLACE WHERE flow (docs/semantics.md S4): runs the flow's bounded query, keeps
 * its rows for which the predicate is TRUE, and replaces the target's rows for which the predicate
 * is TRUE by them, in <b>one</b> Iceberg commit. Rows for which the predicate is FALSE or NULL are
 * never touched. The query and the predicate are Flink SQL, planned and evaluated by Flink in one
 * BATCH job over catalog {@value #CATALOG} (every Iceberg table of the warehouse; the query's
 * unqualified names resolve in the target's namespace).
 *
 * <p><b>What the job computes.</b> For every distinct whole row {@code r} of the target's columns:
 * {@code old(r)}, the copies of {@code r} in the target's slice (the target read at the snapshot
 * current when the refresh starts, {@code WHERE predicate}), and {@code new(r)}, the copies of
 * {@code r} in the query's slice ({@code SELECT <target columns> FROM (query) WHERE predicate};
 * {@code BY NAME}: the query's columns are matched to the target's by name). Only rows with {@code
 * old(r) != new(r)} are written ({@link SliceReplaceWriter}): an equality delete of {@code r} on
 * every column when {@code old(r) > 0}, and {@code new(r)} copies of {@code r}. So the refresh's
 * version holds exactly the rows that changed, and its change feed (F2) shows only them; a refresh
 * that changes nothing commits nothing. The grouping compares nulls as equal, like the equality
 * delete.
 *
 * <p><b>Temporal functions.</b> Flink evaluates {@code CURRENT_DATE}, {@code CURRENT_TIMESTAMP},
 * {@code NOW()}, {@code LOCALTIMESTAMP} and the like once per query in BATCH mode; the delete side
 * and the insert side are one query, so both see the same value. A predicate calling a function
 * that is not deterministic is refused before anything runs ({@code NON_DETERMINISTIC_PREDICATE}):
 * a built-in function whose Flink definition says so ({@code RAND}, {@code RAND_INTEGER}, {@code
 * UUID}, {@code CURRENT_ROW_TIMESTAMP}, {@code CURRENT_WATERMARK}, ...) and {@code PROCTIME()} and
 * {@code UNIX_TIMESTAMP()} without arguments, which Flink evaluates per row.
 *
 * <p><b>Commit.</b> {@link SliceReplaceCommit}: one row delta validated from the snapshot that was
 * read; when another commit added data or delete files to the target meanwhile the refresh fails
 * with {@code REPLACE_CONFLICT} and nothing is committed.
 *
 * <p><b>Errors</b> ({@link SqlException}, at the place the {@link Definition} gives): a predicate
 * naming a column the target lacks ({@code UNKNOWN_COLUMN}), a predicate Flink cannot plan as a
 * boolean or a query Flink cannot plan ({@code INVALID_QUERY}, with Flink's message), a table the
 * query names that does not exist ({@code UNKNOWN_TABLE}), a query column that is no target column
 * or a target column the query lacks ({@code UNKNOWN_COLUMN}), a query column whose type cannot be
 * cast implicitly to the target column's ({@code INVALID_QUERY}), a target with identifier fields
 * or a nested column ({@code INVALID_FLOW}: the rows are identified by all their columns, as for
 * REPLACE USING, S5).
 */
@PublicEvolving
public final class ReplaceWhereRefresh {

    /** The Flink catalog the query and the predicate are planned in. */
    public static final String CATALOG = "changeflow";

    /** Snapshot summary property: the predicate a refresh replaced. */
    public static final String SUMMARY_PREDICATE = "changeflow.replace-where";

    private static final Set<String> PER_ROW_FUNCTIONS = Set.of("PROCTIME", "UNIX_TIMESTAMP");

    private ReplaceWhereRefresh() {}

    /**
     * A REPLACE WHERE flow.
     *
     * @param target the streaming table
     * @param query a bounded Flink SQL query; its columns are matched to the target's by name
     * @param queryPosition where the query starts (errors about it point there)
     * @param predicate a Flink SQL boolean over the target's columns
     * @param predicatePosition where the predicate starts; the predicate's text is laid out from
     *     there (its second line is the file's next line), so a position inside it is exact
     * @param schema the target's columns as a Flink DDL column list ({@code "d DATE, n BIGINT"}),
     *     used to create a missing table and checked against an existing one; null: a missing table
     *     gets the query's columns
     * @param options partitioning and format version of a new table
     */
    public record Definition(
            TableIdentifier target,
            String query,
            SqlPosition queryPosition,
            String predicate,
            SqlPosition predicatePosition,
            @Nullable String schema,
            StreamingTableOptions options) {
        public Definition {
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(query, "query");
            Objects.requireNonNull(predicate, "predicate");
            Objects.requireNonNull(queryPosition, "queryPosition");
            Objects.requireNonNull(predicatePosition, "predicatePosition");
            Objects.requireNonNull(options, "options");
        }
    }

    /**
     * What a refresh did.
     *
     * @param predicate the predicate it replaced (the flow's, or the override)
     * @param readSnapshotId the target's snapshot it read; null when the table had none
     * @param snapshotId the snapshot it committed; null when nothing changed
     * @param insertedRows rows appended (copies of new or re-inserted rows)
     * @param deletedRows distinct rows deleted by equality deletes (each removes every copy)
     */
    public record Result(
            String predicate,
            @Nullable Long readSnapshotId,
            @Nullable Long snapshotId,
            long insertedRows,
            long deletedRows) {}

    /**
     * Checks a definition against the catalog without running anything (a dry run): the query, the
     * predicate (and {@code override} when not null) and the columns, as {@link #refresh} does. A
     * missing target is checked against the declared schema or the query's columns.
     *
     * @throws SqlException see the class comment
     */
    public static void check(
            Definition def,
            dev.changeflow.sinks.iceberg.CatalogSettings settings,
            @Nullable String override,
            @Nullable SqlPosition overridePosition) {
        StreamTableEnvironment tEnv = session(settings, def, 1);
        Catalog catalog = settings.open();
        RowType target =
                catalog.tableExists(def.target())
                        ? SliceReplaceWriter.rowType(catalog.loadTable(def.target()))
                        : newTableType(def, tEnv);
        checkTarget(def, target);
        checkPredicate(def, tEnv, target, def.predicate(), def.predicatePosition());
        if (override != null) {
            checkPredicate(def, tEnv, target, override, overridePosition);
        }
        selectByName(def, tEnv, target);
    }

    /**
     * What {@code bin/changeflow run FILE.sql} checks of a REPLACE WHERE table before anything of
     * the file runs (S4), without the catalog's tables (the target may not exist yet, or be dropped
     * and re-declared by the file; the query may read tables an earlier step writes): each
     * predicate (the table's, and {@code override} when not null) calls no function that is not
     * deterministic, and Flink's parser accepts it. Columns, types and the query are checked at the
     * table's turn (and by {@code --dry-run}, {@link #check}).
     *
     * @throws SqlException {@code NON_DETERMINISTIC_PREDICATE} at the call, or {@code
     *     INVALID_QUERY} at the predicate for a syntax error, with Flink's parser message
     */
    public static void checkPredicates(
            Definition def,
            dev.changeflow.sinks.iceberg.CatalogSettings settings,
            @Nullable String override,
            @Nullable SqlPosition overridePosition) {
        StreamTableEnvironment tEnv = session(settings, def, 1);
        checkPredicate(def, tEnv, null, def.predicate(), def.predicatePosition());
        if (override != null) {
            checkPredicate(def, tEnv, null, override, overridePosition);
        }
    }

    /**
     * Runs one refresh: creates the target when missing, checks the definition, runs the Flink
     * BATCH job and commits.
     *
     * @param override a predicate replacing the flow's for this refresh only (a backfill, {@code
     *     REFRESH STREAMING TABLE t WHERE ...}); null: the flow's
     * @param overridePosition where {@code override} is written
     * @param parallelism the job's parallelism; 0: Flink's default
     * @throws SqlException see the class comment; {@code REPLACE_CONFLICT} when the target changed
     *     during the refresh
     */
    public static Result refresh(
            Definition def,
            dev.changeflow.sinks.iceberg.CatalogSettings settings,
            @Nullable String override,
            @Nullable SqlPosition overridePosition,
            int parallelism)
            throws Exception {
        StreamTableEnvironment tEnv = session(settings, def, parallelism);
        Catalog catalog = settings.open();
        Table table;
        if (catalog.tableExists(def.target())) {
            table = catalog.loadTable(def.target());
            if (def.schema() != null) {
                StreamingTables.ensureTable(
                        catalog, def.target(), declaredType(def), List.of(), def.options());
            }
        } else {
            RowType type = newTableType(def, tEnv);
            checkTarget(def, type);
            table =
                    StreamingTables.ensureTable(
                            catalog, def.target(), type, List.of(), def.options());
        }
        RowType target = SliceReplaceWriter.rowType(table);
        checkTarget(def, target);
        if (!table.schema().identifierFieldIds().isEmpty()) {
            throw new SqlException(
                    Code.INVALID_FLOW,
                    def.queryPosition(),
                    "table "
                            + def.target()
                            + " has identifier fields "
                            + table.schema().identifierFieldNames()
                            + " (an AUTO CDC table); a REPLACE WHERE flow writes a table without"
                            + " them");
        }
        String predicate = override != null ? override : def.predicate();
        SqlPosition predicateAt = override != null ? overridePosition : def.predicatePosition();
        checkPredicate(def, tEnv, target, predicate, predicateAt);
        String select = selectByName(def, tEnv, target);

        table.refresh();
        Snapshot read = table.currentSnapshot();
        Long readId = read == null ? null : read.snapshotId();
        String diff = diffQuery(def.target(), target, select, predicate, readId);
        org.apache.flink.table.api.Table diffTable;
        try {
            diffTable = tEnv.sqlQuery(diff);
        } catch (RuntimeException e) {
            throw new SqlException(
                    Code.INVALID_QUERY,
                    def.queryPosition(),
                    "Flink cannot plan the refresh of " + def.target() + ": " + e.getMessage(),
                    e);
        }
        DataStream<RowData> rows =
                tEnv.toDataStream(
                        diffTable,
                        diffTable
                                .getResolvedSchema()
                                .toPhysicalRowDataType()
                                .bridgedTo(RowData.class));
        List<byte[]> written = new ArrayList<>();
        try (CloseableIterator<byte[]> it =
                rows.transform(
                                "replace-where write " + def.target(),
                                PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO,
                                new SliceReplaceWriter(table))
                        .executeAndCollect("changeflow replace-where " + def.target())) {
            it.forEachRemaining(written::add);
        }
        List<WriteResult> results = SliceReplaceCommit.results(written);
        long inserted = 0;
        long deleted = 0;
        for (WriteResult r : results) {
            for (org.apache.iceberg.DataFile f : r.dataFiles()) {
                inserted += f.recordCount();
            }
            for (org.apache.iceberg.DeleteFile f : r.deleteFiles()) {
                deleted += f.recordCount();
            }
        }
        Map<String, String> summary = new HashMap<>();
        summary.put(SUMMARY_PREDICATE, predicate);
        Snapshot committed;
        try {
            committed = SliceReplaceCommit.commit(table, readId, results, summary);
        } catch (SliceReplaceCommit.ConflictException e) {
            throw new SqlException(Code.REPLACE_CONFLICT, def.queryPosition(), e.getMessage(), e);
        }
        return new Result(
                predicate,
                readId,
                committed == null ? null : committed.snapshotId(),
                inserted,
                deleted);
    }

    // ------------------------------------------------------------------------------- planning

    private static StreamTableEnvironment session(
            dev.changeflow.sinks.iceberg.CatalogSettings settings,
            Definition def,
            int parallelism) {
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        if (parallelism > 0) {
            env.setParallelism(parallelism);
        }
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(env, EnvironmentSettings.inBatchMode());
        FlinkSqlSession.open(tEnv, settings, CATALOG, Map.of());
        StreamingTables.ensureNamespace(settings.open(), def.target().namespace());
        tEnv.useDatabase(def.target().namespace().toString());
        return tEnv;
    }

    private static RowType declaredType(Definition def) {
        LogicalType t;
        try {
            t =
                    LogicalTypeParser.parse(
                            "ROW<" + def.schema() + ">",
                            ReplaceWhereRefresh.class.getClassLoader());
        } catch (RuntimeException e) {
            throw new SqlException(
                    Code.INVALID_FLOW,
                    def.queryPosition(),
                    "the column list of "
                            + def.target()
                            + " is not a Flink DDL column list: "
                            + e.getMessage(),
                    e);
        }
        return (RowType) t;
    }

    /** The type of a table to create: the declared columns, else the query's (all nullable). */
    private static RowType newTableType(Definition def, StreamTableEnvironment tEnv) {
        if (def.schema() != null) {
            return declaredType(def);
        }
        ResolvedSchema q = planQuery(def, tEnv);
        List<RowType.RowField> fields = new ArrayList<>();
        for (Column c : q.getColumns()) {
            if (c.isPhysical()) {
                fields.add(
                        new RowType.RowField(
                                c.getName(), c.getDataType().getLogicalType().copy(true)));
            }
        }
        return new RowType(fields);
    }

    /** Refuses nested columns: every column is an equality-delete field (as REPLACE USING, S5). */
    private static void checkTarget(Definition def, RowType target) {
        for (RowType.RowField f : target.getFields()) {
            LogicalTypeRoot root = f.getType().getTypeRoot();
            if (root == LogicalTypeRoot.ROW
                    || root == LogicalTypeRoot.ARRAY
                    || root == LogicalTypeRoot.MAP
                    || root == LogicalTypeRoot.MULTISET
                    || root == LogicalTypeRoot.STRUCTURED_TYPE
                    || root == LogicalTypeRoot.RAW) {
                throw new SqlException(
                        Code.INVALID_FLOW,
                        def.queryPosition(),
                        "column '"
                                + f.getName()
                                + "' of "
                                + def.target()
                                + " is of the nested type "
                                + f.getType().asSummaryString()
                                + "; a REPLACE WHERE table identifies a row by all its columns"
                                + " (an Iceberg equality delete on every column), which nested"
                                + " types cannot be: flatten it or store it as a STRING");
            }
        }
    }

    private static ResolvedSchema planQuery(Definition def, StreamTableEnvironment tEnv) {
        try {
            return tEnv.sqlQuery(def.query()).getResolvedSchema();
        } catch (RuntimeException e) {
            String msg = String.valueOf(e.getMessage());
            Code code =
                    msg.contains("Object '") && msg.contains("not found")
                            ? Code.UNKNOWN_TABLE
                            : msg.contains("not found in any table")
                                    ? Code.UNKNOWN_COLUMN
                                    : Code.INVALID_QUERY;
            throw new SqlException(
                    code,
                    def.queryPosition(),
                    "the query of the REPLACE WHERE flow into "
                            + def.target()
                            + " cannot be planned by Flink: "
                            + SqlException.flinkMessage(msg),
                    e);
        }
    }

    /**
     * The query's rows as the target's columns in its canonical types: {@code SELECT CAST(q.c AS T)
     * AS c, ... FROM (query) AS q}, columns matched by name (BY NAME).
     */
    private static String selectByName(
            Definition def, StreamTableEnvironment tEnv, RowType target) {
        ResolvedSchema q = planQuery(def, tEnv);
        Map<String, Column> byName = new LinkedHashMap<>();
        for (Column c : q.getColumns()) {
            if (!c.isPhysical()) {
                continue;
            }
            Column previous = byName.put(c.getName().toLowerCase(Locale.ROOT), c);
            if (previous != null) {
                throw new SqlException(
                        Code.INVALID_QUERY,
                        def.queryPosition(),
                        "the query of the REPLACE WHERE flow into "
                                + def.target()
                                + " returns column '"
                                + c.getName()
                                + "' twice (BY NAME matches columns by name)");
            }
        }
        Set<String> targetNames = new TreeSet<>();
        target.getFieldNames().forEach(n -> targetNames.add(n.toLowerCase(Locale.ROOT)));
        for (Column c : byName.values()) {
            if (!targetNames.contains(c.getName().toLowerCase(Locale.ROOT))) {
                throw new SqlException(
                        Code.UNKNOWN_COLUMN,
                        def.queryPosition(),
                        "the query returns column '"
                                + c.getName()
                                + "', which "
                                + def.target()
                                + " does not have (its columns: "
                                + String.join(", ", target.getFieldNames())
                                + "); BY NAME matches the query's columns to the table's by"
                                + " name");
            }
        }
        StringBuilder b = new StringBuilder("SELECT ");
        for (int i = 0; i < target.getFieldCount(); i++) {
            String name = target.getFieldNames().get(i);
            LogicalType type = target.getTypeAt(i);
            Column c = byName.get(name.toLowerCase(Locale.ROOT));
            if (c == null) {
                throw new SqlException(
                        Code.UNKNOWN_COLUMN,
                        def.queryPosition(),
                        "the query does not return column '"
                                + name
                                + "' of "
                                + def.target()
                                + " (BY NAME needs every column of the table; select NULL AS "
                                + name
                                + " for a column the query has no value for)");
            }
            LogicalType from = c.getDataType().getLogicalType();
            if (!LogicalTypeCasts.supportsImplicitCast(from, type.copy(true))) {
                throw new SqlException(
                        Code.INVALID_QUERY,
                        def.queryPosition(),
                        "the query's column '"
                                + c.getName()
                                + "' is "
                                + from.asSummaryString()
                                + ", which does not convert to "
                                + type.asSummaryString()
                                + " of "
                                + def.target()
                                + "."
                                + name
                                + " without loss; CAST it in the query");
            }
            if (i > 0) {
                b.append(", ");
            }
            b.append("CAST(`__q`.")
                    .append(quote(c.getName()))
                    .append(" AS ")
                    .append(type.copy(true).asSerializableString())
                    .append(") AS ")
                    .append(quote(name));
        }
        b.append(" FROM (").append(def.query()).append("\n) AS `__q`");
        return b.toString();
    }

    /**
     * Checks the predicate: no function that is not deterministic, and Flink plans it as a filter
     * of the target; with {@code target} null, only that Flink's parser accepts it.
     */
    private static void checkPredicate(
            Definition def,
            StreamTableEnvironment tEnv,
            @Nullable RowType target,
            String predicate,
            SqlPosition at) {
        checkDeterministic(def.target(), predicate, at);
        String sql = "SELECT * FROM " + quote(def.target().name()) + " WHERE (" + predicate + "\n)";
        try {
            ResolvedSchema s = tEnv.sqlQuery(sql).getResolvedSchema();
            Objects.requireNonNull(s);
        } catch (RuntimeException e) {
            if (target == null && !(e instanceof org.apache.flink.table.api.SqlParserException)) {
                return; // a parse-only check: only a syntax error counts here
            }
            String msg = String.valueOf(e.getMessage());
            Code code =
                    msg.contains("not found in any table")
                            ? Code.UNKNOWN_COLUMN
                            : Code.INVALID_QUERY;
            throw new SqlException(
                    code,
                    at,
                    "the REPLACE WHERE predicate of "
                            + def.target()
                            + (target == null
                                    ? " is not Flink SQL: "
                                    : " is not a boolean Flink can plan over the table's columns ("
                                            + String.join(", ", target.getFieldNames())
                                            + "): ")
                            + SqlException.flinkMessage(msg),
                    e);
        }
    }

    /**
     * Refuses a predicate that calls a function that is not deterministic (S4), from its text alone
     * (no catalog needed): a built-in function Flink marks as not deterministic ({@code RAND},
     * {@code UUID}, ...), {@code PROCTIME()}, or {@code UNIX_TIMESTAMP()} without arguments.
     * Temporal functions ({@code CURRENT_DATE}, {@code NOW()}) pass: a refresh evaluates them once.
     *
     * @param target the table the predicate selects a slice of (named in the message)
     * @param predicate the Flink SQL boolean
     * @param at where the predicate's text starts; it is laid out from there
     * @throws SqlException {@code NON_DETERMINISTIC_PREDICATE} at the first such call
     */
    public static void checkDeterministic(
            TableIdentifier target, String predicate, SqlPosition at) {
        for (Call call : calls(predicate)) {
            if (!deterministic(call)) {
                throw new SqlException(
                        Code.NON_DETERMINISTIC_PREDICATE,
                        positionIn(at, predicate, call.offset()),
                        "the REPLACE WHERE predicate of "
                                + target
                                + " calls "
                                + call.name().toUpperCase(Locale.ROOT)
                                + "(), which is not deterministic: the rows it selects would"
                                + " differ between the delete and the insert side and from one"
                                + " refresh to the next. Temporal functions (CURRENT_DATE,"
                                + " CURRENT_TIMESTAMP, NOW()) are allowed: they are evaluated once"
                                + " per refresh");
            }
        }
    }

    /** The diff query (see the class comment); columns: the target's, old count, new count. */
    static String diffQuery(
            TableIdentifier target,
            RowType type,
            String select,
            String predicate,
            @Nullable Long readSnapshotId) {
        StringBuilder cols = new StringBuilder();
        for (String n : type.getFieldNames()) {
            if (cols.length() > 0) {
                cols.append(", ");
            }
            cols.append(quote(n));
        }
        String hint =
                readSnapshotId == null
                        ? ""
                        : " /*+ OPTIONS('snapshot-id'='" + readSnapshotId + "') */";
        return "SELECT "
                + cols
                + ", `__old`, `__new` FROM (SELECT "
                + cols
                + ", SUM(`__o`) AS `__old`, SUM(`__n`) AS `__new` FROM (\n"
                + "SELECT "
                + cols
                + ", CAST(1 AS BIGINT) AS `__o`, CAST(0 AS BIGINT) AS `__n` FROM "
                + quote(target.name())
                + hint
                + " WHERE ("
                + predicate
                + "\n)\nUNION ALL\nSELECT "
                + cols
                + ", CAST(0 AS BIGINT) AS `__o`, CAST(1 AS BIGINT) AS `__n` FROM (\n"
                + select
                + "\n) AS `__s` WHERE ("
                + predicate
                + "\n)) AS `__u` GROUP BY "
                + cols
                + ") AS `__d` WHERE `__old` <> `__new`";
    }

    private static String quote(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    // ------------------------------------------------------------------ non-deterministic calls

    /** A function call in a predicate: its name and where the name starts in the text. */
    record Call(String name, int offset, boolean noArguments) {}

    /**
     * The function calls of a Flink SQL expression: names followed by {@code (}, outside string
     * literals, quoted identifiers and comments.
     */
    static List<Call> calls(String sql) {
        List<Call> out = new ArrayList<>();
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '`' || c == '"') {
                int j = i + 1;
                while (j < n) {
                    if (sql.charAt(j) == c) {
                        if (j + 1 < n && sql.charAt(j + 1) == c) {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j++;
                }
                i = j + 1;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i;
                while (j < n
                        && (Character.isLetterOrDigit(sql.charAt(j))
                                || sql.charAt(j) == '_'
                                || sql.charAt(j) == '$')) {
                    j++;
                }
                boolean qualified = i > 0 && sql.charAt(i - 1) == '.';
                int k = j;
                while (k < n && Character.isWhitespace(sql.charAt(k))) {
                    k++;
                }
                if (!qualified && k < n && sql.charAt(k) == '(') {
                    int m = k + 1;
                    while (m < n && Character.isWhitespace(sql.charAt(m))) {
                        m++;
                    }
                    out.add(new Call(sql.substring(i, j), i, m < n && sql.charAt(m) == ')'));
                }
                i = j;
            } else {
                i++;
            }
        }
        return out;
    }

    /** Whether Flink evaluates the call to the same value within a query (BATCH mode). */
    static boolean deterministic(Call call) {
        String name = call.name().toUpperCase(Locale.ROOT);
        if (PER_ROW_FUNCTIONS.contains(name)) {
            // PROCTIME() and UNIX_TIMESTAMP() are evaluated per row; UNIX_TIMESTAMP(s[, f]) parses
            return !(name.equals("PROCTIME") || call.noArguments());
        }
        for (BuiltInFunctionDefinition d : BuiltInFunctionDefinitions.getDefinitions()) {
            if (name.equalsIgnoreCase(d.getSqlName()) || name.equalsIgnoreCase(d.getName())) {
                if (!d.isDeterministic()) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The position of {@code offset} in {@code text}, which is laid out from {@code start}. */
    static SqlPosition positionIn(SqlPosition start, String text, int offset) {
        int line = start.line();
        int lineStart = 0;
        for (int i = 0; i < offset && i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        int column = line == start.line() ? start.column() + offset : offset - lineStart + 1;
        return new SqlPosition(start.file(), line, column);
    }
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.AutoCdcException;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeCasts;
import org.apache.flink.table.types.utils.TypeConversions;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The query of an append-only flow (docs/semantics.md S1): {@code SELECT <select> FROM rows [WHERE
 * <where>]} over the flow's source rows (its decoded data columns, or the columns of the table
 * whose change feed it reads, S7), planned and evaluated by Flink SQL — the mechanism of APPLY AS
 * DELETE WHEN and expectations ({@code AutoCdcPredicates}): the rows become a temporary view of a
 * {@link StreamTableEnvironment} on the job's environment, the query's result is converted back to
 * a {@code DataStream<RowData>}. The target's columns are the query's names and types ({@link
 * #outputType()}).
 *
 * <p>The query is per row: a select list or predicate that makes Flink produce updates (an
 * aggregate) is refused when the flow is planned. Every output column must have a name (an
 * expression needs {@code AS name}).
 *
 * <p>With declared columns (the target's column list, {@code CREATE STREAMING TABLE t (a INT NOT
 * NULL COMMENT '...', ...) AS SELECT ...}) the query's columns must be exactly the declared ones by
 * name (in any order), each of a type Flink can cast to the declared one; the output is the
 * declared columns in their order, each {@code CAST} to its type, with the declared nullability and
 * comment (field description), which the Iceberg table takes as required fields and docs. A null in
 * a {@code NOT NULL} column fails the run (Flink's not-null enforcer).
 */
@PublicEvolving
public final class AppendQuery implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Calcite's "From line L, column C to ..." and the parser's "at line L, column C". */
    private static final Pattern POSITION =
            Pattern.compile("(?:From line|at line) (\\d+), column (\\d+)");

    private final String flow;
    private final RowType input;
    private final String select;
    @Nullable private final String where;
    private final RowType output;
    @Nullable private final RowType declared;

    private AppendQuery(
            String flow,
            RowType input,
            String select,
            @Nullable String where,
            RowType output,
            @Nullable RowType declared) {
        this.flow = flow;
        this.input = input;
        this.select = select;
        this.where = where;
        this.output = output;
        this.declared = declared;
    }

    /** {@link #plan(String, RowType, String, String, RowType)} without declared columns. */
    public static AppendQuery plan(
            String flow, RowType input, @Nullable String select, @Nullable String where) {
        return plan(flow, input, select, where, null);
    }

    /**
     * Plans the query of flow {@code flow} over rows of {@code input} (no job is run; the Flink SQL
     * planner starts, about a second).
     *
     * @param select the select list; null for {@code *}
     * @param where the WHERE predicate; null for none
     * @param declared the target's declared columns (descriptions are their comments); null for the
     *     query's own
     * @throws Invalid when Flink cannot plan it, the query is not per row, an output column has no
     *     name, or the query's columns are not the declared ones ({@link Invalid#columnList()});
     *     the message starts {@code flow '<flow>': }
     */
    public static AppendQuery plan(
            String flow,
            RowType input,
            @Nullable String select,
            @Nullable String where,
            @Nullable RowType declared) {
        String list = select == null ? "*" : select;
        // the context's environment (a fresh instance per call, never executed), as
        // AutoCdcPredicates.validate: a local environment is refused inside a test cluster
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<RowData> planned =
                env.fromSequence(0, 0).map(new NeverCalled(), InternalTypeInfo.of(input));
        AppendQuery probe = new AppendQuery(flow, input, list, where, input, null);
        Table table = probe.table(planned);
        RowType output =
                (RowType)
                        table.getResolvedSchema()
                                .toPhysicalRowDataType()
                                .getLogicalType()
                                .copy(true);
        for (String name : output.getFieldNames()) {
            if (name.matches("EXPR\\$\\d+")) {
                throw new Invalid(
                        flow,
                        "the select list ("
                                + list
                                + ") has an expression without a name, which would be column "
                                + name
                                + " of the table: give it one with AS name",
                        Part.SELECT,
                        0,
                        0,
                        false,
                        null);
            }
        }
        if (declared != null) {
            checkDeclared(flow, output, declared);
            table = probe.cast(table, declared);
            output = (RowType) declared.copy(true);
        }
        try {
            // translating checks that the query appends (an aggregate would update its rows)
            probe.tenv.toDataStream(table, bridged(declared == null ? output : nullable(output)));
        } catch (RuntimeException e) {
            String msg = firstLine(e);
            boolean updates = msg.contains("update") || msg.contains("retract");
            throw new Invalid(
                    flow,
                    (updates
                                    ? "the query is not per row (Flink would update its rows:"
                                            + " an aggregate?): "
                                    : "Flink cannot run the query: ")
                            + msg,
                    Part.NONE,
                    0,
                    0,
                    updates,
                    e);
        }
        return new AppendQuery(flow, input, list, where, output, declared);
    }

    /**
     * Checks that the query's columns {@code selected} are the {@code declared} ones by name, each
     * castable to its declared type.
     *
     * @throws Invalid ({@link Invalid#columnList()}) naming every declared column the query lacks,
     *     every query column not declared, and every column whose type cannot be cast
     */
    private static void checkDeclared(String flow, RowType selected, RowType declared) {
        List<String> problems = new ArrayList<>();
        for (RowType.RowField d : declared.getFields()) {
            int i = selected.getFieldIndex(d.getName());
            if (i < 0) {
                problems.add(
                        "declared column "
                                + d.getName()
                                + " "
                                + d.getType().asSummaryString()
                                + " is not a column of the query"
                                + similar(d.getName(), selected.getFieldNames()));
            } else {
                LogicalType have = selected.getTypeAt(i);
                if (!LogicalTypeCasts.supportsExplicitCast(have, d.getType())) {
                    problems.add(
                            "column "
                                    + d.getName()
                                    + " is declared "
                                    + d.getType().asSummaryString()
                                    + " but selected as "
                                    + have.asSummaryString()
                                    + ", which Flink cannot cast to it");
                }
            }
        }
        for (RowType.RowField f : selected.getFields()) {
            if (declared.getFieldIndex(f.getName()) < 0) {
                problems.add(
                        "selected column "
                                + f.getName()
                                + " "
                                + f.getType().asSummaryString()
                                + " is not declared");
            }
        }
        if (!problems.isEmpty()) {
            throw new Invalid(
                    flow,
                    "the declared columns ("
                            + columnsText(declared)
                            + ") do not match the query's ("
                            + columnsText(selected)
                            + "): "
                            + String.join("; ", problems)
                            + ". Declare every column of the select list by its name (AS name"
                            + " names an expression), or leave the column list out",
                    Part.NONE,
                    0,
                    0,
                    false,
                    null,
                    false,
                    true);
        }
    }

    /** {@code " (did you mean x?)"} for a name equal to one of {@code names} but for case. */
    private static String similar(String name, List<String> names) {
        for (String n : names) {
            if (n.equalsIgnoreCase(name)) {
                return " (did you mean " + n + "? names are case-sensitive)";
            }
        }
        return "";
    }

    /** {@code a INT NOT NULL, b STRING}: names and Flink types. */
    private static String columnsText(RowType type) {
        List<String> out = new ArrayList<>();
        for (RowType.RowField f : type.getFields()) {
            out.add(f.getName() + " " + f.getType().asSummaryString());
        }
        return String.join(", ", out);
    }

    /**
     * The query's rows {@code query} cast to the declared columns, in their order: {@code SELECT
     * CAST(`a` AS type) AS `a`, ... FROM} a temporary view of {@code query}.
     */
    private Table cast(Table query, RowType declared) {
        String view = "query_" + flow.replaceAll("[^A-Za-z0-9_]", "_");
        tenv.createTemporaryView(view, query);
        List<String> items = new ArrayList<>();
        for (RowType.RowField d : declared.getFields()) {
            String name = "`" + d.getName().replace("`", "``") + "`";
            items.add(
                    "CAST("
                            + name
                            + " AS "
                            + d.getType().copy(true).asSerializableString()
                            + ") AS "
                            + name);
        }
        return tenv.sqlQuery("SELECT " + String.join(", ", items) + " FROM `" + view + "`");
    }

    /** The rows the query gives: the target table's columns. */
    public RowType outputType() {
        return output;
    }

    /** The row type the query reads. */
    public RowType inputType() {
        return input;
    }

    /** The select list as Flink SQL ({@code *} for every column). */
    public String select() {
        return select;
    }

    /** The WHERE predicate, or null. */
    @Nullable
    public String where() {
        return where;
    }

    /**
     * Adds the query to the job: {@code rows} (typed {@link #inputType()}, inserts) in, rows of
     * {@link #outputType()} out.
     */
    public DataStream<RowData> apply(DataStream<RowData> rows) {
        Table query = table(rows); // sets tenv
        if (declared != null) {
            query = cast(query, declared);
        }
        // NOT NULL columns are checked by NotNullCheck, which names the flow and the column
        DataStream<RowData> out =
                tenv.toDataStream(query, bridged(declared == null ? output : nullable(output)));
        List<Integer> notNull = new ArrayList<>();
        for (int i = 0; declared != null && i < output.getFieldCount(); i++) {
            if (!output.getTypeAt(i).isNullable()) {
                notNull.add(i);
            }
        }
        if (notNull.isEmpty()) {
            return out;
        }
        return out.map(
                        new NotNullCheck(flow, output.getFieldNames(), notNull),
                        InternalTypeInfo.of(output))
                .name("NOT NULL " + flow)
                .setParallelism(out.getParallelism());
    }

    private transient StreamTableEnvironment tenv;

    /** The query over {@code rows} as a Flink table, in a table environment of its own. */
    private Table table(DataStream<RowData> rows) {
        tenv = StreamTableEnvironment.create(rows.getExecutionEnvironment());
        Table in =
                tenv.fromDataStream(
                        rows, Schema.newBuilder().fromRowDataType(bridged(input)).build());
        String view = "rows_" + flow.replaceAll("[^A-Za-z0-9_]", "_");
        tenv.createTemporaryView(view, in);
        String sql = text(view);
        try {
            Table t = tenv.sqlQuery(sql);
            Objects.requireNonNull(t.getResolvedSchema());
            return t;
        } catch (RuntimeException e) {
            String msg = firstLine(e);
            Matcher m = POSITION.matcher(String.valueOf(e.getMessage()));
            int line = 0;
            int column = 0;
            Part part = Part.NONE;
            if (m.find()) {
                line = Integer.parseInt(m.group(1));
                column = Integer.parseInt(m.group(2));
                int selectLines = select.split("\n", -1).length;
                if (line <= selectLines) {
                    part = Part.SELECT;
                    column = line == 1 ? column - "SELECT ".length() : column;
                } else if (where != null && line >= selectLines + 2) {
                    part = Part.WHERE;
                    line = line - selectLines - 1;
                    column = line == 1 ? column - "WHERE ".length() : column;
                }
            }
            boolean unknown = msg.contains("not found in any table");
            throw new Invalid(
                    flow,
                    "the query SELECT "
                            + select.replaceAll("\\s+", " ").trim()
                            + (where == null
                                    ? ""
                                    : " WHERE " + where.replaceAll("\\s+", " ").trim())
                            + " is not valid Flink SQL over the source columns "
                            + input.getFieldNames()
                            + ": "
                            + msg,
                    part,
                    part == Part.NONE ? 0 : line,
                    part == Part.NONE ? 0 : column,
                    false,
                    e,
                    unknown);
        }
    }

    /**
     * The query's text: the select list from line 1, column 8, {@code FROM} on the line after it,
     * the predicate from column 7 of the line after that, so a position Flink reports maps back.
     */
    private String text(String view) {
        return "SELECT "
                + select
                + "\nFROM `"
                + view
                + "`"
                + (where == null ? "" : "\nWHERE " + where + "\n");
    }

    private static DataType bridged(RowType type) {
        return TypeConversions.fromLogicalToDataType(type).bridgedTo(RowData.class);
    }

    private static String firstLine(RuntimeException e) {
        Throwable t = e;
        String msg = String.valueOf(t.getMessage());
        // Flink wraps Calcite's error: the cause names the column and the place
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
            if (t.getMessage() != null && POSITION.matcher(t.getMessage()).find()) {
                msg = t.getMessage();
            }
        }
        // the place in the generated query means nothing to the user: the error gives the file's
        return msg.split("\n")[0].replaceFirst(
                "From line \\d+, column \\d+ to line \\d+, column \\d+: ", "");
    }

    /** Where in the query an error is. */
    public enum Part {
        /** The select list. */
        SELECT,
        /** The WHERE predicate. */
        WHERE,
        /** Not known. */
        NONE
    }

    /**
     * A query the flow cannot run (docs/semantics.md S1): Flink's error, where in the select list
     * or predicate it is (line and column within that text, 1-based; 0 when unknown), whether it
     * names an unknown column, and whether the query is refused because it is not per row.
     */
    public static final class Invalid extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final Part part;
        private final int line;
        private final int column;
        private final boolean notPerRow;
        private final boolean unknownColumn;
        private final boolean columnList;

        Invalid(
                String flow,
                String detail,
                Part part,
                int line,
                int column,
                boolean notPerRow,
                @Nullable Throwable cause) {
            this(flow, detail, part, line, column, notPerRow, cause, false);
        }

        Invalid(
                String flow,
                String detail,
                Part part,
                int line,
                int column,
                boolean notPerRow,
                @Nullable Throwable cause,
                boolean unknownColumn) {
            this(flow, detail, part, line, column, notPerRow, cause, unknownColumn, false);
        }

        Invalid(
                String flow,
                String detail,
                Part part,
                int line,
                int column,
                boolean notPerRow,
                @Nullable Throwable cause,
                boolean unknownColumn,
                boolean columnList) {
            super("flow '" + flow + "': " + detail, cause);
            this.part = part;
            this.line = line;
            this.column = column;
            this.notPerRow = notPerRow;
            this.unknownColumn = unknownColumn;
            this.columnList = columnList;
        }

        /**
         * Whether the query's columns are not the target's declared ones (a name missing on either
         * side, or a type that cannot be cast).
         */
        public boolean columnList() {
            return columnList;
        }

        /** The part of the query the error is in. */
        public Part part() {
            return part;
        }

        /** The line within the part's text (1-based), 0 when unknown. */
        public int line() {
            return line;
        }

        /** The column within the line of the part's text (1-based), 0 when unknown. */
        public int column() {
            return column;
        }

        /** Whether the query is refused because it is not per row (an aggregate). */
        public boolean notPerRow() {
            return notPerRow;
        }

        /** Whether Flink names a column the source rows do not have. */
        public boolean unknownColumn() {
            return unknownColumn;
        }
    }

    /** {@code type} with every top-level field nullable (descriptions kept). */
    private static RowType nullable(RowType type) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (RowType.RowField f : type.getFields()) {
            fields.add(
                    new RowType.RowField(
                            f.getName(), f.getType().copy(true), f.getDescription().orElse(null)));
        }
        return new RowType(type.isNullable(), fields);
    }

    /**
     * Fails the job with {@code NULL_IN_NOT_NULL_COLUMN} (not retried) at a row whose declared
     * {@code NOT NULL} column is NULL (docs/semantics.md S1).
     */
    private static final class NotNullCheck implements MapFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final String flow;
        private final List<String> names;
        private final List<Integer> notNull;

        NotNullCheck(String flow, List<String> names, List<Integer> notNull) {
            this.flow = flow;
            this.names = new ArrayList<>(names);
            this.notNull = new ArrayList<>(notNull);
        }

        @Override
        public RowData map(RowData row) {
            for (int i : notNull) {
                if (row.isNullAt(i)) {
                    throw new AutoCdcException(
                            AutoCdcException.Code.NULL_IN_NOT_NULL_COLUMN,
                            "flow '"
                                    + flow
                                    + "': the query gives NULL for column "
                                    + names.get(i)
                                    + ", which the streaming table declares NOT NULL; the run"
                                    + " stops and nothing of the running checkpoint is committed:"
                                    + " fix the record at its source, filter it out with WHERE,"
                                    + " COALESCE it in the select list, or declare the column"
                                    + " without NOT NULL");
                }
            }
            return row;
        }
    }

    /** The map of {@link #plan}'s planned-only stream (its job is never executed). */
    private static final class NeverCalled implements MapFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;

        @Override
        public RowData map(Long value) {
            throw new IllegalStateException("a query validation stream is never executed");
        }
    }
}

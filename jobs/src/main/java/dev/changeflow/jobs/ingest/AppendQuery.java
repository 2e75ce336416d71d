package dev.changeflow.jobs.ingest;

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
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.TypeConversions;

import javax.annotation.Nullable;

import java.io.Serializable;
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

    private AppendQuery(
            String flow, RowType input, String select, @Nullable String where, RowType output) {
        this.flow = flow;
        this.input = input;
        this.select = select;
        this.where = where;
        this.output = output;
    }

    /**
     * Plans the query of flow {@code flow} over rows of {@code input} (no job is run; the Flink SQL
     * planner starts, about a second).
     *
     * @param select the select list; null for {@code *}
     * @param where the WHERE predicate; null for none
     * @throws Invalid when Flink cannot plan it, the query is not per row, or an output column has
     *     no name; the message starts {@code flow '<flow>': }
     */
    public static AppendQuery plan(
            String flow, RowType input, @Nullable String select, @Nullable String where) {
        String list = select == null ? "*" : select;
        // the context's environment (a fresh instance per call, never executed), as
        // AutoCdcPredicates.validate: a local environment is refused inside a test cluster
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<RowData> planned =
                env.fromSequence(0, 0).map(new NeverCalled(), InternalTypeInfo.of(input));
        AppendQuery probe = new AppendQuery(flow, input, list, where, input);
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
        try {
            // translating checks that the query appends (an aggregate would update its rows)
            probe.tenv.toDataStream(table, bridged(output));
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
        return new AppendQuery(flow, input, list, where, output);
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
        return tenv.toDataStream(query, bridged(output));
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
            super("flow '" + flow + "': " + detail, cause);
            this.part = part;
            this.line = line;
            this.column = column;
            this.notPerRow = notPerRow;
            this.unknownColumn = unknownColumn;
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

    /** The map of {@link #plan}'s planned-only stream (its job is never executed). */
    private static final class NeverCalled implements MapFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;

        @Override
        public RowData map(Long value) {
            throw new IllegalStateException("a query validation stream is never executed");
        }
    }
}

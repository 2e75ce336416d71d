package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import javax.annotation.Nullable;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Evaluates APPLY AS DELETE WHEN / APPLY AS TRUNCATE WHEN and the flow's expectations with Flink
 * SQL before the keyBy (semantics.md A5 "Predicates", S8): {@code SELECT *, (<delete>) IS TRUE AS
 * __changeflow_delete, (<truncate>) IS TRUE AS __changeflow_truncate, (<expectation>) IS FALSE AS
 * __changeflow_violates_0, ... FROM changes}, converted back to a DataStream; the AUTO CDC operator
 * only sees the outcome (row kind DELETE, or a row on the truncate stream). A record whose
 * predicate is NULL is an upsert (SQL's three-valued logic: only TRUE deletes).
 *
 * <p><b>Expectations (S8)</b> are checked on upserts only — a record that is (or APPLY AS DELETE
 * WHEN makes) a delete, a truncate, or a null-key record (quarantined {@code NULL_KEY}) is not
 * checked. A record violates an expectation when its expression is FALSE (NULL passes, as an SQL
 * CHECK constraint). Every violation is counted in the counter {@link Expectation#counterName()} of
 * the metric group {@code flow=<flow>}; then, if any violated expectation is {@code FAIL UPDATE},
 * the job fails with {@link AutoCdcException.Code#EXPECTATION_FAILED} (not retried); otherwise, if
 * any is {@code DROP ROW}, the record goes to the quarantine side output as {@link
 * QuarantineReason#EXPECTATION_VIOLATED} (counted in {@code quarantined}); otherwise it is applied.
 */
@PublicEvolving
public final class AutoCdcPredicates {
    static final String IS_DELETE = AutoCdcSpec.RESERVED_PREFIX + "is_delete";
    static final String DELETE = AutoCdcSpec.RESERVED_PREFIX + "delete";
    static final String TRUNCATE = AutoCdcSpec.RESERVED_PREFIX + "truncate";
    static final String VIOLATES = AutoCdcSpec.RESERVED_PREFIX + "violates_";

    /** The outcome of the predicates: changes, truncates and set-aside records. */
    public static final class Result {
        /** Upserts and deletes ({@code RowKind.DELETE}), typed as the flow's source rows. */
        public final DataStream<RowData> changes;

        /** Records APPLY AS TRUNCATE WHEN matched, or null when the flow has no such predicate. */
        @Nullable public final DataStream<RowData> truncates;

        /**
         * Records with a null key that turned out not to be truncates (NULL_KEY, A2) and upserts
         * that violated a DROP ROW expectation (EXPECTATION_VIOLATED, S8), as {@link
         * QuarantineRecords#ROW_TYPE} rows.
         */
        public final DataStream<RowData> quarantine;

        Result(
                DataStream<RowData> changes,
                @Nullable DataStream<RowData> truncates,
                DataStream<RowData> quarantine) {
            this.changes = changes;
            this.truncates = truncates;
            this.quarantine = quarantine;
        }
    }

    private AutoCdcPredicates() {}

    /**
     * Evaluates the flow's {@link AutoCdcSpec#deleteWhen()}, {@link AutoCdcSpec#truncateWhen()} and
     * {@link AutoCdcSpec#expectations()} over {@code changes} (operator uids {@code
     * flag-deletes-<flow>} and {@code apply-predicates-<flow>}).
     *
     * @param changes upserts and deletes typed {@code InternalTypeInfo.of(spec.sourceType())}
     * @throws IllegalArgumentException when a predicate is not valid Flink SQL over the source
     *     columns, naming the flow, the predicates and the columns; for an expectation, the message
     *     starts {@code flow '<flow>': expectation '<name>' (<expression>)}
     */
    public static Result apply(DataStream<RowData> changes, AutoCdcSpec spec) {
        return apply(changes, Checks.of(spec));
    }

    /**
     * Evaluates the expectations of an append flow (S8) over its rows, the columns of the table it
     * appends to: a row that violates a DROP ROW expectation goes to the quarantine, one that
     * violates a FAIL UPDATE expectation fails the job with {@code EXPECTATION_FAILED}, every
     * violation is counted as for an AUTO CDC flow (operator uids {@code flag-deletes-<flow>} and
     * {@code apply-predicates-<flow>}). An append flow has no KEYS: errors and quarantine rows name
     * the record's values.
     *
     * @param rows insert rows typed {@code InternalTypeInfo.of(type)}
     * @param type the rows' columns, over which the expressions are Flink SQL
     * @return the rows to append ({@link Result#changes}, typed as {@code rows}), no truncates, and
     *     the {@code EXPECTATION_VIOLATED} quarantine rows
     * @throws IllegalArgumentException as {@link #apply(DataStream, AutoCdcSpec)}, for an
     *     expectation that is not a Flink SQL boolean expression over {@code type}
     */
    public static Result expect(
            DataStream<RowData> rows, String flow, RowType type, List<Expectation> expectations) {
        return apply(rows, Checks.append(flow, type, expectations));
    }

    /**
     * Checks, without running a job, that an append flow's expectations are Flink SQL boolean
     * expressions over {@code type}, as {@link #expect} compiles them (for planning: a bad
     * expression fails before any table is written). Nothing for a flow without expectations.
     *
     * @throws IllegalArgumentException as {@link #expect}
     */
    public static void validateExpectations(
            String flow, RowType type, List<Expectation> expectations) {
        if (!expectations.isEmpty()) {
            validate(Checks.append(flow, type, expectations));
        }
    }

    /**
     * What the SQL step and the split evaluate: an AUTO CDC flow's predicates, expectations and
     * KEYS, or an append flow's expectations alone (no KEYS, no predicates).
     */
    private record Checks(
            String name,
            RowType sourceType,
            @Nullable String deleteWhen,
            @Nullable String truncateWhen,
            List<Expectation> expectations,
            int[] keyIndexes,
            List<String> keyNames) {
        static Checks of(AutoCdcSpec spec) {
            return new Checks(
                    spec.name(),
                    spec.sourceType(),
                    spec.deleteWhen(),
                    spec.truncateWhen(),
                    spec.expectations(),
                    spec.keyIndexesInSource(),
                    spec.keys());
        }

        static Checks append(String flow, RowType type, List<Expectation> expectations) {
            return new Checks(
                    flow, type, null, null, List.copyOf(expectations), new int[0], List.of());
        }
    }

    private static Result apply(DataStream<RowData> changes, Checks spec) {
        RowType source = spec.sourceType();
        List<RowType.RowField> withFlag = new ArrayList<>(source.getFields());
        withFlag.add(new RowType.RowField(IS_DELETE, new BooleanType(false)));
        RowType flagged = new RowType(withFlag);
        DataStream<RowData> insertOnly =
                changes.map(new ToInsertOnly(source), InternalTypeInfo.of(flagged))
                        .name("flag deletes " + spec.name())
                        .uid("flag-deletes-" + spec.name());

        StreamTableEnvironment tenv =
                StreamTableEnvironment.create(changes.getExecutionEnvironment());
        DataType flaggedType =
                TypeConversions.fromLogicalToDataType(flagged).bridgedTo(RowData.class);
        Table table =
                tenv.fromDataStream(
                        insertOnly, Schema.newBuilder().fromRowDataType(flaggedType).build());
        String view = "changes_" + spec.name().replaceAll("[^A-Za-z0-9_]", "_");
        tenv.createTemporaryView(view, table);
        String del = spec.deleteWhen() == null ? "FALSE" : "(" + spec.deleteWhen() + ") IS TRUE";
        String trunc =
                spec.truncateWhen() == null ? "FALSE" : "(" + spec.truncateWhen() + ") IS TRUE";
        StringBuilder select = new StringBuilder("SELECT ");
        for (String f : flagged.getFieldNames()) {
            select.append('`').append(f).append("`, ");
        }
        select.append(del).append(" AS `").append(DELETE).append("`, ");
        select.append(trunc).append(" AS `").append(TRUNCATE).append('`');
        for (int i = 0; i < spec.expectations().size(); i++) {
            Expectation e = spec.expectations().get(i);
            String check = "(" + e.expression() + ") IS FALSE";
            try {
                // each expectation on its own first, so an error names the one at fault
                tenv.sqlQuery("SELECT " + check + " FROM `" + view + "`");
            } catch (RuntimeException ex) {
                String msg = String.valueOf(ex.getMessage()).split("\n")[0];
                throw new IllegalArgumentException(
                        "flow '"
                                + spec.name()
                                + "': expectation '"
                                + e.name()
                                + "' ("
                                + e.expression()
                                + ") is not a valid Flink SQL boolean expression over the columns "
                                + source.getFieldNames()
                                + ": "
                                + msg,
                        ex);
            }
            select.append(", ").append(check).append(" AS `").append(VIOLATES + i).append('`');
        }
        select.append(" FROM `").append(view).append('`');
        Table evaluated;
        try {
            evaluated = tenv.sqlQuery(select.toString());
        } catch (RuntimeException e) {
            String msg = String.valueOf(e.getMessage()).split("\n")[0];
            throw new IllegalArgumentException(
                    "flow '"
                            + spec.name()
                            + "': APPLY AS DELETE WHEN "
                            + quote(spec.deleteWhen())
                            + " / APPLY AS TRUNCATE WHEN "
                            + quote(spec.truncateWhen())
                            + " is not a valid Flink SQL predicate over the columns "
                            + source.getFieldNames()
                            + ": "
                            + msg,
                    e);
        }
        List<RowType.RowField> outFields = new ArrayList<>(withFlag);
        outFields.add(new RowType.RowField(DELETE, new BooleanType(false)));
        outFields.add(new RowType.RowField(TRUNCATE, new BooleanType(false)));
        for (int i = 0; i < spec.expectations().size(); i++) {
            outFields.add(new RowType.RowField(VIOLATES + i, new BooleanType(false)));
        }
        RowType outType = new RowType(outFields);
        DataStream<RowData> rows =
                tenv.toDataStream(
                        evaluated,
                        TypeConversions.fromLogicalToDataType(outType).bridgedTo(RowData.class));
        OutputTag<RowData> truncTag =
                new OutputTag<>("truncates-" + spec.name(), InternalTypeInfo.of(source));
        OutputTag<RowData> quarantineTag =
                new OutputTag<>(
                        "null-keys-" + spec.name(),
                        InternalTypeInfo.of(QuarantineRecords.ROW_TYPE));
        SingleOutputStreamOperator<RowData> split =
                rows.process(new Split(spec, truncTag, quarantineTag), InternalTypeInfo.of(source))
                        .name("apply predicates " + spec.name())
                        .uid("apply-predicates-" + spec.name());
        return new Result(
                split,
                spec.truncateWhen() == null ? null : split.getSideOutput(truncTag),
                split.getSideOutput(quarantineTag));
    }

    /**
     * Checks that the flow's predicates are valid Flink SQL over its source columns, as {@link
     * #apply} compiles them, without running a job: a launcher calls it while planning, so a bad
     * predicate fails before any table or state is written (and a dry run reports it too). Takes
     * the Flink SQL planner's start-up (about a second) for a flow with predicates; nothing for one
     * without.
     *
     * @throws IllegalArgumentException as {@link #apply}
     */
    public static void validate(AutoCdcSpec spec) {
        if (!spec.hasPredicates()) {
            return;
        }
        validate(Checks.of(spec));
    }

    private static void validate(Checks spec) {
        // the context's environment (a fresh instance per call, never executed): a local
        // environment is refused inside a test cluster and in application mode
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        // a stream that is only planned, never executed: its element type is all the query needs
        DataStream<RowData> planned =
                env.fromSequence(0, 0)
                        .map(new NeverCalled(), InternalTypeInfo.of(spec.sourceType()));
        apply(planned, spec);
    }

    /** The map of {@link #validate}'s planned-only stream (its job is never executed). */
    private static final class NeverCalled implements MapFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;

        @Override
        public RowData map(Long value) {
            throw new IllegalStateException("a predicate validation stream is never executed");
        }
    }

    private static String quote(@Nullable String s) {
        return s == null ? "(none)" : "'" + s + "'";
    }

    /**
     * Turns DELETE rows into inserts with {@code __changeflow_is_delete = true} (SQL input is
     * insert-only).
     */
    private static final class ToInsertOnly implements MapFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final RowData.FieldGetter[] getters;

        ToInsertOnly(RowType source) {
            getters = getters(source);
        }

        @Override
        public RowData map(RowData in) {
            int arity = getters.length;
            GenericRowData out = new GenericRowData(arity + 1);
            for (int i = 0; i < arity; i++) {
                out.setField(i, getters[i].getFieldOrNull(in));
            }
            out.setField(arity, in.getRowKind() == RowKind.DELETE);
            return out;
        }
    }

    static RowData.FieldGetter[] getters(RowType type) {
        RowData.FieldGetter[] g = new RowData.FieldGetter[type.getFieldCount()];
        for (int i = 0; i < g.length; i++) {
            g[i] = RowData.createFieldGetter(type.getTypeAt(i), i);
        }
        return g;
    }

    private static final class Split extends ProcessFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final RowData.FieldGetter[] getters;
        private final OutputTag<RowData> truncTag;
        private final OutputTag<RowData> quarantineTag;
        private final int[] keys;
        private final List<String> keyNames;
        private final List<String> columnNames;
        private final List<Expectation> expectations;
        private final String flow;
        private transient Counter[] violated;
        private transient Counter quarantined;

        Split(Checks spec, OutputTag<RowData> truncTag, OutputTag<RowData> quarantineTag) {
            this.truncTag = truncTag;
            this.quarantineTag = quarantineTag;
            this.getters = getters(spec.sourceType());
            this.keys = spec.keyIndexes();
            this.keyNames = spec.keyNames();
            this.columnNames = spec.sourceType().getFieldNames();
            this.expectations = spec.expectations();
            this.flow = spec.name();
        }

        @Override
        public void open(OpenContext context) {
            MetricGroup group =
                    getRuntimeContext()
                            .getMetricGroup()
                            .addGroup(SnapshotSequencer.FLOW_GROUP, flow);
            violated = new Counter[expectations.size()];
            for (int i = 0; i < violated.length; i++) {
                violated[i] = group.counter(expectations.get(i).counterName());
            }
            quarantined = getRuntimeContext().getMetricGroup().counter(QuarantineRows.COUNTER);
        }

        @Override
        public void processElement(RowData in, Context ctx, Collector<RowData> out) {
            int n = getters.length;
            GenericRowData row = new GenericRowData(n);
            for (int i = 0; i < n; i++) {
                row.setField(i, getters[i].getFieldOrNull(in));
            }
            if (in.getBoolean(n + 2)) {
                ctx.output(truncTag, row);
                return;
            }
            for (int k = 0; k < keys.length; k++) {
                if (row.isNullAt(keys[k])) {
                    ctx.output(
                            quarantineTag,
                            QuarantineRecords.of(
                                    flow,
                                    "flow " + flow,
                                    null,
                                    -1L,
                                    row.toString().getBytes(StandardCharsets.UTF_8),
                                    QuarantineReason.NULL_KEY,
                                    "key column '"
                                            + keyNames.get(k)
                                            + "' is null and APPLY AS TRUNCATE WHEN did not match",
                                    System.currentTimeMillis()));
                    return;
                }
            }
            if (in.getBoolean(n) || in.getBoolean(n + 1)) {
                row.setRowKind(RowKind.DELETE);
                out.collect(row); // S8: deletes are not checked
                return;
            }
            Expectation fail = null;
            List<Expectation> dropped = null;
            for (int i = 0; i < violated.length; i++) {
                if (!in.getBoolean(n + 3 + i)) {
                    continue;
                }
                violated[i].inc();
                Expectation e = expectations.get(i);
                if (e.onViolation() == Expectation.OnViolation.FAIL_UPDATE && fail == null) {
                    fail = e;
                } else if (e.onViolation() == Expectation.OnViolation.DROP_ROW) {
                    dropped = dropped == null ? new ArrayList<>() : dropped;
                    dropped.add(e);
                }
            }
            if (fail != null) {
                throw new AutoCdcException(
                        AutoCdcException.Code.EXPECTATION_FAILED,
                        "flow '"
                                + flow
                                + "': expectation '"
                                + fail.name()
                                + "' ("
                                + fail.expression()
                                + ") ON VIOLATION FAIL UPDATE failed on the record with "
                                + (keys.length == 0 ? "" : "KEYS " + values(row, keys) + ", ")
                                + "values "
                                + values(row, null)
                                + "; the update stops and nothing of the running checkpoint is"
                                + " committed: fix the record at its source, or relax the"
                                + " expectation (DROP ROW, or no ON VIOLATION) and run again");
            }
            if (dropped != null) {
                quarantined.inc();
                List<String> named = new ArrayList<>();
                for (Expectation e : dropped) {
                    named.add("'" + e.name() + "' (" + e.expression() + ")");
                }
                ctx.output(
                        quarantineTag,
                        QuarantineRecords.of(
                                flow,
                                "flow " + flow,
                                null,
                                -1L,
                                row.toString().getBytes(StandardCharsets.UTF_8),
                                QuarantineReason.EXPECTATION_VIOLATED,
                                "expectation "
                                        + String.join(", ", named)
                                        + " ON VIOLATION DROP ROW violated by the record with "
                                        + (keys.length == 0
                                                ? "values " + values(row, null)
                                                : "KEYS " + values(row, keys)),
                                System.currentTimeMillis()));
                return;
            }
            out.collect(row);
        }

        /** {@code {id=2, name=b}}: the named columns ({@code null}: all) and their values. */
        private String values(GenericRowData row, @Nullable int[] positions) {
            StringBuilder b = new StringBuilder("{");
            int count = positions == null ? row.getArity() : positions.length;
            for (int i = 0; i < count; i++) {
                int p = positions == null ? i : positions[i];
                b.append(i == 0 ? "" : ", ")
                        .append(columnNames.get(p))
                        .append('=')
                        .append(row.getField(p));
            }
            return b.append('}').toString();
        }
    }
}

package dev.changeflow.jobs.gold;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

import java.io.Serializable;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Maintains a Gold aggregate per group from the Silver change feed, exactly per Silver version.
 *
 * <p><b>Input</b> ({@link GoldAggregatePlan#inputType()}): the group-by columns, one argument
 * column per aggregate that has one, {@code _change_type STRING}, {@code _commit_version BIGINT};
 * keyed by the group-by columns (never NULL: rows with a NULL group value are dropped before the
 * keyBy and counted). Event-time watermarks are Silver versions (a watermark of v: every change of
 * versions ≤ v has arrived, design.md "Order — the guarantee").
 *
 * <p><b>Output</b> ({@link GoldAggregatePlan#outputType()}), upsert rows ({@code +U}): group-by
 * columns, aggregates, {@code _source_version BIGINT} = the last Silver version applied to the
 * group.
 *
 * <p><b>Exactness.</b> Changes are accumulated per (group, version) in keyed state and applied when
 * the watermark passes their version (an event-time timer at the version), so an emitted row — and
 * hence a Gold commit — never contains part of a version: a restart without state at {@code
 * _source_version + 1} neither double-counts nor misses a change. {@code insert} and {@code
 * update_postimage} add, {@code delete} and {@code update_preimage} subtract.
 *
 * <p><b>Seeding.</b> The first change of a group without state starts from the group's row in the
 * Gold table ({@code seeds}, read once per subtask), and changes of versions up to that row's
 * {@code _source_version} are skipped (counted in {@code goldChangesAlreadyInGold}): they are in
 * it. A start without state may therefore re-read versions the Gold table already has, exactly once
 * in effect. Groups without a Gold row start from zero; the versions up to the table's own Gold
 * version never reach this function ({@link GoldJob.SkipVersionsInGold}), so a group without a row
 * has no change in them.
 *
 * <p><b>Whole versions per commit.</b> A timer fires for every group when the watermark passes its
 * version, within one watermark; with aligned checkpoints every subtask, and every subtask of the
 * writers behind it, sees the watermark on the same side of a barrier, so every Gold commit holds
 * whole versions and the table's largest {@code _source_version} is a version all of whose changes
 * it contains, at any parallelism of the change feed and of this operator (which runs at
 * parallelism 1 because aggregates are small). See {@link GoldStart}.
 */
final class GoldAggregateFunction extends KeyedProcessFunction<RowData, RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final GoldAggregatePlan plan;
    private final Supplier<Map<RowData, RowData>> seeds;

    private transient ValueState<RowData> current;
    private transient MapState<Long, RowData> pending;
    private transient Map<RowData, RowData> seedRows;
    private transient Counter applied;
    private transient Counter skipped;

    /**
     * @param seeds the Gold table's rows by group key (binary key rows as produced by the keyBy),
     *     read once per subtask at open when the operator starts without state; must be
     *     serializable
     */
    GoldAggregateFunction(
            GoldAggregatePlan plan, SerializableSupplier<Map<RowData, RowData>> seeds) {
        this.plan = plan;
        this.seeds = seeds;
    }

    /** A serializable supplier (the seeds are read in the task, not in the client). */
    interface SerializableSupplier<T> extends Supplier<T>, Serializable {}

    @Override
    public void open(OpenContext ctx) {
        current =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(
                                        "gold-aggregate", InternalTypeInfo.of(plan.stateType())));
        pending =
                getRuntimeContext()
                        .getMapState(
                                new MapStateDescriptor<>(
                                        "gold-aggregate-pending",
                                        Types.LONG,
                                        InternalTypeInfo.of(plan.stateType())));
        applied = getRuntimeContext().getMetricGroup().counter("goldChangesApplied");
        skipped = getRuntimeContext().getMetricGroup().counter("goldChangesAlreadyInGold");
        seedRows = null;
    }

    @Override
    public void processElement(RowData in, Context ctx, Collector<RowData> out) throws Exception {
        long version = in.getLong(plan.versionIndex());
        String type = in.getString(plan.changeTypeIndex()).toString();
        int sign;
        switch (type) {
            case "insert":
            case "update_postimage":
                sign = 1;
                break;
            case "delete":
            case "update_preimage":
                sign = -1;
                break;
            default:
                throw new IllegalStateException(
                        "unknown _change_type '" + type + "' in the change feed (F1)");
        }
        RowData state = current.value();
        if (state == null) {
            RowData seed = seed(ctx.getCurrentKey());
            state =
                    seed == null
                            ? plan.toRow(plan.zero(), -1L)
                            : plan.toRow(plan.fromGoldRow(seed), plan.goldVersion(seed));
            current.update(state);
        }
        if (version <= plan.version(state)) {
            // the group's Gold row already contains this version (a start without state that
            // re-reads versions the Gold table has: the group's own _source_version decides)
            skipped.inc();
            return;
        }
        RowData delta = pending.get(version);
        Object[] acc = delta == null ? plan.zero() : plan.toArray(delta);
        plan.add(acc, in, sign);
        pending.put(version, plan.toRow(acc, version));
        ctx.timerService().registerEventTimeTimer(version);
        applied.inc();
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<RowData> out)
            throws Exception {
        TreeMap<Long, RowData> due = new TreeMap<>();
        Iterator<Map.Entry<Long, RowData>> it = pending.iterator();
        while (it.hasNext()) {
            Map.Entry<Long, RowData> e = it.next();
            if (e.getKey() <= timestamp) {
                due.put(e.getKey(), e.getValue());
            }
        }
        if (due.isEmpty()) {
            return;
        }
        Object[] acc = plan.toArray(current.value());
        long version = -1;
        for (Map.Entry<Long, RowData> e : due.entrySet()) {
            plan.merge(acc, plan.toArray(e.getValue()));
            pending.remove(e.getKey());
            version = e.getKey();
        }
        current.update(plan.toRow(acc, version));
        RowData row = plan.toGoldRow(ctx.getCurrentKey(), acc, version);
        row.setRowKind(RowKind.UPDATE_AFTER);
        out.collect(row);
    }

    private RowData seed(RowData key) {
        if (seedRows == null) {
            seedRows = seeds.get();
        }
        return seedRows.get(key);
    }

    /**
     * The types and arithmetic of one aggregate definition. State rows ({@link #stateType()}):
     * {@code rows BIGINT}, then per aggregate its accumulator (SUM: BIGINT / DOUBLE / DECIMAL(38,
     * s); COUNT(expr): BIGINT), then {@code version BIGINT}.
     */
    static final class GoldAggregatePlan implements Serializable {
        private static final long serialVersionUID = 1L;

        private final RowType inputType;
        private final RowType outputType;
        private final RowType stateType;
        private final int groups;
        private final GoldSpec.AggregateKind[] kinds;

        /** per aggregate: index of its argument in the input, -1 for COUNT(*) */
        private final int[] argIndex;

        /** per aggregate: 0 long, 1 double, 2 decimal */
        private final int[] accKind;

        private final int[] decimalScale;

        /**
         * index of the aggregate whose value is the row count in Gold (COUNT(*)), or -1: then a
         * {@code _row_count} column is added
         */
        private final int rowCountAggregate;

        private final int changeTypeIndex;
        private final int versionIndex;

        GoldAggregatePlan(
                RowType inputType, int groups, List<GoldSpec.AggregateColumn> aggregates) {
            this.inputType = inputType;
            this.groups = groups;
            int n = aggregates.size();
            kinds = new GoldSpec.AggregateKind[n];
            argIndex = new int[n];
            accKind = new int[n];
            decimalScale = new int[n];
            List<RowType.RowField> out = new ArrayList<>();
            List<RowType.RowField> st = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                RowType.RowField f = inputType.getFields().get(g);
                out.add(new RowType.RowField(f.getName(), f.getType().copy(false)));
            }
            st.add(new RowType.RowField("rows", new BigIntType(false)));
            int next = groups;
            int countStar = -1;
            for (int i = 0; i < n; i++) {
                GoldSpec.AggregateColumn a = aggregates.get(i);
                kinds[i] = a.kind;
                argIndex[i] = a.argument == null ? -1 : next++;
                LogicalType accType;
                if (a.kind == GoldSpec.AggregateKind.COUNT) {
                    accType = new BigIntType(false);
                    if (a.argument == null && countStar < 0) {
                        countStar = i;
                    }
                } else {
                    LogicalType argType = inputType.getTypeAt(argIndex[i]);
                    switch (argType.getTypeRoot()) {
                        case TINYINT:
                        case SMALLINT:
                        case INTEGER:
                        case BIGINT:
                            accType = new BigIntType();
                            break;
                        case FLOAT:
                        case DOUBLE:
                            accType = new DoubleType();
                            accKind[i] = 1;
                            break;
                        case DECIMAL:
                            decimalScale[i] = ((DecimalType) argType).getScale();
                            accType = new DecimalType(38, decimalScale[i]);
                            accKind[i] = 2;
                            break;
                        default:
                            throw new GoldException(
                                    GoldException.Code.GOLD_DEFINITION_INVALID,
                                    "aggregate "
                                            + a
                                            + ": SUM needs a numeric argument, got "
                                            + argType);
                    }
                }
                out.add(new RowType.RowField(a.name, accType));
                st.add(new RowType.RowField("acc" + i, accType.copy(true)));
            }
            rowCountAggregate = countStar;
            if (countStar < 0) {
                out.add(new RowType.RowField(GoldSpec.ROW_COUNT, new BigIntType(false)));
            }
            out.add(new RowType.RowField(GoldSpec.SOURCE_VERSION, new BigIntType(false)));
            st.add(new RowType.RowField("version", new BigIntType(false)));
            changeTypeIndex = next;
            versionIndex = next + 1;
            outputType = new RowType(out);
            stateType = new RowType(st);
        }

        RowType inputType() {
            return inputType;
        }

        RowType outputType() {
            return outputType;
        }

        RowType stateType() {
            return stateType;
        }

        int changeTypeIndex() {
            return changeTypeIndex;
        }

        int versionIndex() {
            return versionIndex;
        }

        Object[] zero() {
            Object[] acc = new Object[kinds.length + 1];
            acc[0] = 0L;
            for (int i = 0; i < kinds.length; i++) {
                acc[i + 1] = kinds[i] == GoldSpec.AggregateKind.COUNT ? (Object) 0L : null;
            }
            return acc;
        }

        /** Adds one input row with sign +1/-1. SUM: NULL arguments are skipped. */
        void add(Object[] acc, RowData in, int sign) {
            acc[0] = (Long) acc[0] + sign;
            for (int i = 0; i < kinds.length; i++) {
                if (argIndex[i] < 0) {
                    acc[i + 1] = (Long) acc[i + 1] + sign;
                    continue;
                }
                if (in.isNullAt(argIndex[i])) {
                    continue;
                }
                if (kinds[i] == GoldSpec.AggregateKind.COUNT) {
                    acc[i + 1] = (Long) acc[i + 1] + sign;
                    continue;
                }
                acc[i + 1] = plus(i, acc[i + 1], argument(i, in), sign);
            }
        }

        /** Adds the accumulators of {@code delta} into {@code acc}. */
        void merge(Object[] acc, Object[] delta) {
            acc[0] = (Long) acc[0] + (Long) delta[0];
            for (int i = 0; i < kinds.length; i++) {
                if (kinds[i] == GoldSpec.AggregateKind.COUNT) {
                    acc[i + 1] = (Long) acc[i + 1] + (Long) delta[i + 1];
                } else if (delta[i + 1] != null) {
                    acc[i + 1] = plus(i, acc[i + 1], delta[i + 1], 1);
                }
            }
        }

        private Object argument(int i, RowData in) {
            int idx = argIndex[i];
            switch (inputType.getTypeAt(idx).getTypeRoot()) {
                case TINYINT:
                    return (long) in.getByte(idx);
                case SMALLINT:
                    return (long) in.getShort(idx);
                case INTEGER:
                    return (long) in.getInt(idx);
                case BIGINT:
                    return in.getLong(idx);
                case FLOAT:
                    return (double) in.getFloat(idx);
                case DOUBLE:
                    return in.getDouble(idx);
                default:
                    DecimalType d = (DecimalType) inputType.getTypeAt(idx);
                    return in.getDecimal(idx, d.getPrecision(), d.getScale()).toBigDecimal();
            }
        }

        private Object plus(int i, Object a, Object b, int sign) {
            switch (accKind[i]) {
                case 0:
                    return Math.addExact(
                            a == null ? 0L : (Long) a, Math.multiplyExact((Long) b, (long) sign));
                case 1:
                    return (a == null ? 0.0 : (Double) a) + sign * (Double) b;
                default:
                    BigDecimal x = a == null ? BigDecimal.ZERO : (BigDecimal) a;
                    BigDecimal y = (BigDecimal) b;
                    return sign > 0 ? x.add(y) : x.subtract(y);
            }
        }

        RowData toRow(Object[] acc, long version) {
            GenericRowData r = new GenericRowData(kinds.length + 2);
            r.setField(0, acc[0]);
            for (int i = 0; i < kinds.length; i++) {
                r.setField(i + 1, toInternal(i, acc[i + 1]));
            }
            r.setField(kinds.length + 1, version);
            return r;
        }

        Object[] toArray(RowData state) {
            Object[] acc = new Object[kinds.length + 1];
            acc[0] = state.getLong(0);
            for (int i = 0; i < kinds.length; i++) {
                acc[i + 1] = fromInternal(i, state, i + 1);
            }
            return acc;
        }

        /**
         * The Gold row of a group: group key columns, aggregates, [_row_count], _source_version.
         */
        RowData toGoldRow(RowData key, Object[] acc, long version) {
            int extra = rowCountAggregate < 0 ? 1 : 0;
            GenericRowData r = new GenericRowData(groups + kinds.length + extra + 1);
            RowData.FieldGetter[] getters = keyGetters();
            for (int g = 0; g < groups; g++) {
                r.setField(g, getters[g].getFieldOrNull(key));
            }
            long rows = (Long) acc[0];
            for (int i = 0; i < kinds.length; i++) {
                Object v = acc[i + 1];
                if (kinds[i] == GoldSpec.AggregateKind.SUM && v == null && rows > 0) {
                    v =
                            accKind[i] == 0
                                    ? (Object) 0L
                                    : accKind[i] == 1
                                            ? (Object) 0.0
                                            : BigDecimal.ZERO.setScale(decimalScale[i]);
                }
                if (kinds[i] == GoldSpec.AggregateKind.SUM && rows == 0) {
                    v = null;
                }
                r.setField(groups + i, toInternal(i, v));
            }
            if (extra == 1) {
                r.setField(groups + kinds.length, rows);
            }
            r.setField(groups + kinds.length + extra, version);
            return r;
        }

        /** The last version applied, from a state row. */
        long version(RowData state) {
            return state.getLong(kinds.length + 1);
        }

        /** The {@code _source_version} of a Gold row. */
        long goldVersion(RowData gold) {
            return gold.getLong(outputType.getFieldCount() - 1);
        }

        /**
         * Accumulators from a Gold row (a start without state): the row count from COUNT(*) or
         * {@code _row_count}.
         */
        Object[] fromGoldRow(RowData gold) {
            Object[] acc = new Object[kinds.length + 1];
            acc[0] =
                    gold.getLong(
                            rowCountAggregate >= 0
                                    ? groups + rowCountAggregate
                                    : groups + kinds.length);
            for (int i = 0; i < kinds.length; i++) {
                acc[i + 1] = fromInternal(i, gold, groups + i);
            }
            return acc;
        }

        private Object toInternal(int i, Object v) {
            if (v == null || accKind[i] != 2 || kinds[i] == GoldSpec.AggregateKind.COUNT) {
                return v;
            }
            DecimalData d = DecimalData.fromBigDecimal((BigDecimal) v, 38, decimalScale[i]);
            if (d == null) {
                throw new ArithmeticException(
                        "SUM overflows DECIMAL(38, " + decimalScale[i] + "): " + v);
            }
            return d;
        }

        private Object fromInternal(int i, RowData row, int pos) {
            if (row.isNullAt(pos)) {
                return null;
            }
            if (kinds[i] == GoldSpec.AggregateKind.COUNT || accKind[i] == 0) {
                return row.getLong(pos);
            }
            if (accKind[i] == 1) {
                return row.getDouble(pos);
            }
            return row.getDecimal(pos, 38, decimalScale[i]).toBigDecimal();
        }

        private transient RowData.FieldGetter[] keyGetters;

        private RowData.FieldGetter[] keyGetters() {
            if (keyGetters == null) {
                keyGetters = new RowData.FieldGetter[groups];
                for (int g = 0; g < groups; g++) {
                    keyGetters[g] = RowData.createFieldGetter(outputType.getTypeAt(g), g);
                }
            }
            return keyGetters;
        }

        /** Positions of the group-by columns in the input. */
        int[] groupPositions() {
            int[] p = new int[groups];
            for (int g = 0; g < groups; g++) {
                p[g] = g;
            }
            return p;
        }
    }
}

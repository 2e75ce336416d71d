package dev.changeflow.jobs.gold;

import dev.changeflow.operators.AutoCdcKeySelector;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The Gold aggregate in Flink's keyed operator harness on RocksDB: per-version exactness under
 * out-of-version arrival, update moves between groups, empty groups, seeding from Gold rows, and
 * snapshot → restore of pending changes.
 */
class GoldAggregateFunctionTest {
    // input: bid, abalance (argument of SUM), _change_type, _commit_version
    private static final RowType INPUT =
            RowType.of(
                    new LogicalType[] {
                        new IntType(),
                        new IntType(),
                        new VarCharType(false, VarCharType.MAX_LENGTH),
                        new BigIntType(false)
                    },
                    new String[] {"bid", "__changeflow_arg0", "_change_type", "_commit_version"});

    // the same with two argument columns (SUM(abalance), COUNT(abalance))
    private static final RowType INPUT2 =
            RowType.of(
                    new LogicalType[] {
                        new IntType(),
                        new IntType(),
                        new IntType(),
                        new VarCharType(false, VarCharType.MAX_LENGTH),
                        new BigIntType(false)
                    },
                    new String[] {
                        "bid",
                        "__changeflow_arg0",
                        "__changeflow_arg1",
                        "_change_type",
                        "_commit_version"
                    });

    private static GoldAggregateFunction.GoldAggregatePlan plan(String... aggregates) {
        List<GoldSpec.AggregateColumn> cols = new ArrayList<>();
        for (String a : aggregates) {
            cols.add(GoldSpec.AggregateColumn.parse(a));
        }
        long args = cols.stream().filter(c -> c.argument() != null).count();
        return new GoldAggregateFunction.GoldAggregatePlan(args > 1 ? INPUT2 : INPUT, 1, cols);
    }

    private static RowData change(int bid, Integer balance, String type, long version) {
        return GenericRowData.of(bid, balance, StringData.fromString(type), version);
    }

    private static RowData change2(int bid, Integer balance, String type, long version) {
        return GenericRowData.of(bid, balance, balance, StringData.fromString(type), version);
    }

    private static final class Harness implements AutoCloseable {
        final GoldAggregateFunction.GoldAggregatePlan plan;
        final Map<RowData, RowData> seeds;
        KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h;
        int consumed;

        Harness(
                GoldAggregateFunction.GoldAggregatePlan plan,
                Map<RowData, RowData> seeds,
                OperatorSubtaskState restore)
                throws Exception {
            this.plan = plan;
            this.seeds = seeds;
            AutoCdcKeySelector keys = new AutoCdcKeySelector(plan.inputType(), new int[] {0});
            HashMap<RowData, RowData> copy = new HashMap<>(seeds);
            h =
                    new KeyedOneInputStreamOperatorTestHarness<>(
                            new KeyedProcessOperator<>(new GoldAggregateFunction(plan, () -> copy)),
                            keys,
                            InternalTypeInfo.of(keys.keyType()));
            h.setStateBackend(new EmbeddedRocksDBStateBackend(false));
            if (restore != null) {
                h.initializeState(restore);
            }
            h.open();
        }

        Harness send(RowData... rows) throws Exception {
            for (RowData r : rows) {
                h.processElement(r, 0L);
            }
            return this;
        }

        /**
         * Advances the watermark to {@code version} and returns the Gold rows emitted since the
         * last call.
         */
        List<String> watermark(long version) throws Exception {
            h.processWatermark(new Watermark(version));
            List<String> out = new ArrayList<>();
            List<RowData> all = h.extractOutputValues();
            for (int i = consumed; i < all.size(); i++) {
                out.add(format(all.get(i)));
            }
            consumed = all.size();
            out.sort(null);
            return out;
        }

        String format(RowData r) {
            StringBuilder b = new StringBuilder(r.getRowKind().shortString()).append('(');
            RowType t = plan.outputType();
            for (int i = 0; i < t.getFieldCount(); i++) {
                b.append(i == 0 ? "" : ",")
                        .append(RowData.createFieldGetter(t.getTypeAt(i), i).getFieldOrNull(r));
            }
            return b.append(')').toString();
        }

        @Override
        public void close() throws Exception {
            h.close();
        }
    }

    @Test
    void appliesWholeVersionsOnlyWhenTheirWatermarkPasses() throws Exception {
        try (Harness h =
                new Harness(
                        plan("total=SUM(__changeflow_arg0)", "accounts=COUNT(*)"),
                        Map.of(),
                        null)) {
            h.send(
                    change(1, 10, "insert", 1),
                    change(1, 5, "insert", 1),
                    change(2, 7, "insert", 1));
            // a change of version 2 arrives before the watermark of version 1 (another reader was
            // faster)
            h.send(change(1, 100, "insert", 2));
            assertEquals(List.of("+U(1,15,2,1)", "+U(2,7,1,1)"), h.watermark(1));
            // update moving an account from branch 1 to branch 2 in version 3: preimage - ,
            // postimage +
            h.send(change(1, 5, "update_preimage", 3), change(2, 6, "update_postimage", 3));
            assertEquals(List.of("+U(1,115,3,2)"), h.watermark(2));
            assertEquals(List.of("+U(1,110,2,3)", "+U(2,13,2,3)"), h.watermark(3));
            // nothing pending: no output
            assertEquals(List.of(), h.watermark(4));
        }
    }

    @Test
    void aGroupWithoutRowsStaysWithCountZeroAndNullSum() throws Exception {
        try (Harness h =
                new Harness(
                        plan("total=SUM(__changeflow_arg0)", "accounts=COUNT(*)"),
                        Map.of(),
                        null)) {
            h.send(change(4, 3, "insert", 1));
            assertEquals(List.of("+U(4,3,1,1)"), h.watermark(1));
            h.send(change(4, 3, "delete", 2));
            assertEquals(List.of("+U(4,null,0,2)"), h.watermark(2));
        }
    }

    @Test
    void sumIgnoresNullsAndCountOfAnExpressionCountsNonNulls() throws Exception {
        try (Harness h =
                new Harness(
                        plan("total=SUM(__changeflow_arg0)", "known=COUNT(__changeflow_arg1)"),
                        Map.of(),
                        null)) {
            // no COUNT(*): the table gets _row_count
            assertEquals(
                    List.of("bid", "total", "known", "_row_count", "_source_version"),
                    h.plan.outputType().getFieldNames());
            h.send(
                    change2(1, null, "insert", 1),
                    change2(1, 4, "insert", 1),
                    change2(2, null, "insert", 1));
            assertEquals(List.of("+U(1,4,1,2,1)", "+U(2,0,0,1,1)"), h.watermark(1));
        }
    }

    @Test
    void startsFromTheGoldRowOfAGroupWhenItHasNoState() throws Exception {
        GoldAggregateFunction.GoldAggregatePlan plan =
                plan("total=SUM(__changeflow_arg0)", "accounts=COUNT(*)");
        RowType gold = plan.outputType();
        RowDataSerializer ser = new RowDataSerializer(gold);
        AutoCdcKeySelector goldKeys = new AutoCdcKeySelector(gold, new int[] {0});
        RowData seed = ser.toBinaryRow(GenericRowData.of(1, 1000L, 40L, 75L)).copy();
        try (Harness h = new Harness(plan, Map.of(goldKeys.getKey(seed), seed), null)) {
            // a start without state re-reads version 75, which the group's Gold row already
            // contains: skipped
            h.send(change(1, 999, "insert", 75));
            h.send(
                    change(1, 50, "update_preimage", 76),
                    change(1, 80, "update_postimage", 76),
                    change(9, 1, "insert", 75));
            assertEquals(List.of("+U(1,1030,40,76)", "+U(9,1,1,75)"), h.watermark(76));
        }
    }

    @Test
    void pendingChangesSurviveSnapshotAndRestore() throws Exception {
        GoldAggregateFunction.GoldAggregatePlan plan =
                plan("total=SUM(__changeflow_arg0)", "accounts=COUNT(*)");
        OperatorSubtaskState snapshot;
        try (Harness h = new Harness(plan, Map.of(), null)) {
            h.send(change(1, 10, "insert", 1));
            assertEquals(List.of("+U(1,10,1,1)"), h.watermark(1));
            h.send(change(1, 5, "insert", 2));
            snapshot = h.h.snapshot(1L, 1L);
        }
        try (Harness h = new Harness(plan, Map.of(), snapshot)) {
            h.send(change(1, 1, "insert", 2));
            assertEquals(List.of("+U(1,16,3,2)"), h.watermark(2));
        }
    }

    @Test
    void rejectsAggregatesThatCannotBeMaintainedIncrementally() {
        GoldException e =
                assertThrows(
                        GoldException.class,
                        () -> GoldSpec.AggregateColumn.parse("top=MAX(abalance)"));
        assertEquals(GoldException.Code.GOLD_DEFINITION_INVALID, e.code());
        assertEquals(
                "GOLD_DEFINITION_INVALID: aggregate 'top=MAX(abalance)': MAX cannot be maintained incrementally from deletes"
                        + " and updates; use SUM(expr), COUNT(*) or COUNT(expr) (an average is SUM / COUNT at read time)",
                e.getMessage());
        assertEquals(
                GoldException.Code.GOLD_DEFINITION_INVALID,
                assertThrows(
                                GoldException.class,
                                () -> GoldSpec.AggregateColumn.parse("total SUM(x)"))
                        .code());
        assertEquals(
                GoldException.Code.GOLD_DEFINITION_INVALID,
                assertThrows(
                                GoldException.class,
                                () -> GoldSpec.AggregateColumn.parse("total=SUM(*)"))
                        .code());
        assertEquals("n=COUNT(*)", GoldSpec.AggregateColumn.parse(" n = count( * ) ").toString());
        assertEquals(
                "GOLD_DEFINITION_INVALID: aggregate 's=SUMM(abalance)': unknown aggregate function SUMM; use SUM(expr),"
                        + " COUNT(*) or COUNT(expr)",
                assertThrows(
                                GoldException.class,
                                () -> GoldSpec.AggregateColumn.parse("s=SUMM(abalance)"))
                        .getMessage());
        TableIdentifier silver = TableIdentifier.parse("public.accounts");
        assertEquals(
                "GOLD_DEFINITION_INVALID: Gold job 'g': the Gold table public.accounts is the Silver table itself",
                assertThrows(
                                GoldException.class,
                                () ->
                                        new GoldSpec(
                                                "g",
                                                silver,
                                                new GoldSpec.Upsert(silver, List.of(), null),
                                                null))
                        .getMessage());
    }
}

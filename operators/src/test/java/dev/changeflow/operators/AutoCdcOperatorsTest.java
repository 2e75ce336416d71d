package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.transformations.PartitionTransformation;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.up;
import static dev.changeflow.operators.TestFlows.upd;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@link AutoCdcOperators#apply} topology and its key selector. */
class AutoCdcOperatorsTest {

    private static DataStream<RowData> source(
            StreamExecutionEnvironment env, AutoCdcSpec spec, RowData... rows) {
        return env.fromData(InternalTypeInfo.of(spec.sourceType()), rows);
    }

    @Test
    void buildsKeyedOperatorWithUidNameAndTypes() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        AutoCdcSpec spec = TestFlows.scd2().build();
        SingleOutputStreamOperator<RowData> out =
                AutoCdcOperators.apply(source(env, spec, up(1, "a", 1, 1)), null, spec);
        assertThat(out.getTransformation().getUid()).isEqualTo("auto-cdc-t");
        assertThat(out.getName()).contains("AUTO CDC t");
        assertThat(out.getType()).isEqualTo(InternalTypeInfo.of(spec.targetType()));
        Transformation<?> keyed = out.getTransformation().getInputs().get(0);
        assertThat(keyed).isInstanceOf(PartitionTransformation.class);
        assertThat(keyed.getOutputType()).isEqualTo(InternalTypeInfo.of(spec.sourceType()));

        AutoCdcSpec withTruncates = TestFlows.scd1().truncateEnabled(true).build();
        SingleOutputStreamOperator<RowData> t =
                AutoCdcOperators.apply(
                        source(env, withTruncates, up(1, "a", 1, 1)),
                        source(env, withTruncates, del(0, 5)),
                        withTruncates);
        assertThat(t.getTransformation().getUid()).isEqualTo("auto-cdc-t");
        assertThat(t.getTransformation().getInputs()).hasSize(2);

        assertThatThrownBy(() -> AutoCdcOperators.apply(source(env, spec), source(env, spec), spec))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void keySelectorGivesBinaryRowsIndependentOfRowKindAndRowClass() throws Exception {
        AutoCdcSpec spec = TestFlows.scd1().build();
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        RowData a = keys.getKey(up(7, "a", 1, 1));
        RowData b = keys.getKey(del(7, 9));
        RowData c = keys.getKey(upd(7, "zzz", 2, 3));
        assertThat(a).isInstanceOf(BinaryRowData.class).isEqualTo(b).isEqualTo(c);
        assertThat(a.hashCode()).isEqualTo(b.hashCode()).isEqualTo(c.hashCode());
        assertThat(keys.getKey(up(8, "a", 1, 1))).isNotEqualTo(a);
        assertThat(keys.getProducedType()).isEqualTo(InternalTypeInfo.of(keys.keyType()));
        assertThat(keys.keyType().getFieldNames()).isEqualTo(List.of("id"));
    }

    @Test
    void runsOnALocalEnvironment() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        AutoCdcSpec spec = TestFlows.scd1().build();
        DataStream<RowData> changes =
                source(
                        env,
                        spec,
                        up(1, "a", 1, 1),
                        up(2, "b", 2, 1),
                        upd(1, "a2", 1, 2),
                        del(2, 3),
                        del(3, 1));
        TestFlows.Materialized table = new TestFlows.Materialized(spec);
        try (var it = AutoCdcOperators.apply(changes, null, spec).executeAndCollect()) {
            it.forEachRemaining(r -> table.accept(OperatorHarness.toGeneric(r, spec.targetType())));
        }
        assertThat(table.snapshot()).containsExactly("(1,a2,1)");
    }

    @Test
    void applyFlowEvaluatesTheDeletePredicateBesideTheOperator() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        AutoCdcSpec spec = TestFlows.scd1().deleteWhen("v < 0").build();
        DataStream<RowData> changes =
                source(
                        env,
                        spec,
                        up(1, "a", 1, 1),
                        up(2, "b", 2, 1),
                        upd(1, "a2", -1, 2),
                        upd(2, "b2", null, 3));
        AutoCdcOperators.Applied applied = AutoCdcOperators.applyFlow(changes, null, spec);
        TestFlows.Materialized table = new TestFlows.Materialized(spec);
        try (var it = applied.rows.executeAndCollect()) {
            it.forEachRemaining(r -> table.accept(OperatorHarness.toGeneric(r, spec.targetType())));
        }
        // v < 0 deletes key 1; a NULL predicate (v is null) is an upsert (only TRUE deletes)
        assertThat(table.snapshot()).containsExactly("(2,b2,null)");
    }

    @Test
    void applyRefusesAFlowWithPredicatesInsteadOfIgnoringThem() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        AutoCdcSpec spec = TestFlows.scd1().deleteWhen("v < 0").build();
        DataStream<RowData> one = source(env, spec, up(1, "a", 1, 1));
        assertThatThrownBy(() -> AutoCdcOperators.apply(one, null, spec))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "flow 't' has APPLY AS DELETE / TRUNCATE WHEN: apply it with"
                                + " AutoCdcOperators.applyFlow, which evaluates them");
        AutoCdcSpec plain = TestFlows.scd1().build();
        assertThat(
                        AutoCdcOperators.applyFlow(
                                        source(env, plain, up(1, "a", 1, 1)), null, plain)
                                .quarantine
                                .getType())
                .isEqualTo(InternalTypeInfo.of(QuarantineRecords.ROW_TYPE));
    }
}

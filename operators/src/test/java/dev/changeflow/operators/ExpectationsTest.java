package dev.changeflow.operators;

import dev.changeflow.operators.Expectation.OnViolation;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.up;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Expectations (semantics.md S8) evaluated by {@link AutoCdcPredicates} in {@link
 * AutoCdcOperators#applyFlow}: kept and counted, dropped to the quarantine, or failing the job; a
 * NULL result passes, deletes are not checked, and bad expressions fail when planned.
 */
class ExpectationsTest {
    private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(METRICS.addToConfiguration(new Configuration()))
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        return env;
    }

    private static long counter(JobID job, String name) {
        long sum = 0;
        for (Metric m : METRICS.findMetrics(job, name).values()) {
            sum += ((Counter) m).getCount();
        }
        return sum;
    }

    @Test
    void keptRowsAreAppliedAndCountedDroppedRowsGoToTheQuarantine() throws Exception {
        AutoCdcSpec spec =
                TestFlows.scd1()
                        .expectations(
                                List.of(
                                        new Expectation("v_nonneg", "v >= 0", OnViolation.KEEP),
                                        new Expectation(
                                                "has_name",
                                                "name IS NOT NULL",
                                                OnViolation.DROP_ROW)))
                        .build();
        StreamExecutionEnvironment env = env();
        AutoCdcOperators.Applied applied =
                AutoCdcOperators.applyFlow(
                        env.fromData(
                                InternalTypeInfo.of(spec.sourceType()),
                                up(1, "a", 1, 1),
                                up(2, "b", -1, 1), // violates v_nonneg: kept, counted
                                up(3, null, 5, 1), // violates has_name: dropped
                                up(4, "d", null, 1), // v >= 0 is NULL: passes
                                del(1, 2)), // a delete (name is null) is not checked
                        null,
                        spec);
        CloseableIterator<RowData> rows = applied.rows.collectAsync();
        CloseableIterator<RowData> quarantine = applied.quarantine.collectAsync();
        JobClient job = env.executeAsync("expectations");
        TestFlows.Materialized table = new TestFlows.Materialized(spec);
        rows.forEachRemaining(r -> table.accept(OperatorHarness.toGeneric(r, spec.targetType())));
        List<String> quarantined = new ArrayList<>();
        quarantine.forEachRemaining(
                q -> {
                    RowData g = OperatorHarness.toGeneric(q, QuarantineRecords.ROW_TYPE);
                    quarantined.add(
                            g.getString(0)
                                    + " | "
                                    + g.getString(1)
                                    + " | "
                                    + new String(g.getBinary(4), StandardCharsets.UTF_8)
                                    + " | "
                                    + g.getString(5)
                                    + " | "
                                    + g.getString(6));
                });
        job.getJobExecutionResult().get();

        assertThat(table.snapshot()).containsExactly("(2,b,-1)", "(4,d,null)");
        assertThat(quarantined)
                .containsExactly(
                        "t | flow t | +I(3,null,5,1,u) | EXPECTATION_VIOLATED | expectation"
                                + " 'has_name' (name IS NOT NULL) ON VIOLATION DROP ROW violated by"
                                + " the record with KEYS {id=3}");
        assertThat(counter(job.getJobID(), "expectation_v_nonneg_violated")).isEqualTo(1);
        assertThat(counter(job.getJobID(), "expectation_has_name_violated")).isEqualTo(1);
    }

    /**
     * S8 on an append flow ({@link AutoCdcPredicates#expect}): over the rows appended (no KEYS), a
     * kept violation is appended and counted, a DROP ROW one goes to the quarantine naming the
     * record's values, a NULL result passes; a FAIL UPDATE violation fails the job naming the
     * record; a bad expression fails when validated.
     */
    @Test
    void appendFlowRowsAreCheckedKeptDroppedOrFailed() throws Exception {
        RowType type =
                RowType.of(
                        new LogicalType[] {new IntType(), VarCharType.STRING_TYPE},
                        new String[] {"n", "note"});
        List<Expectation> expectations =
                List.of(
                        new Expectation("positive", "n > 0", OnViolation.KEEP),
                        new Expectation("has_note", "note IS NOT NULL", OnViolation.DROP_ROW));
        StreamExecutionEnvironment env = env();
        AutoCdcPredicates.Result checked =
                AutoCdcPredicates.expect(
                        env.fromData(
                                InternalTypeInfo.of(type),
                                GenericRowData.of(1, StringData.fromString("a")),
                                GenericRowData.of(-2, StringData.fromString("b")), // kept
                                GenericRowData.of(3, null), // dropped
                                GenericRowData.of(null, StringData.fromString("d"))), // NULL
                        "events",
                        type,
                        expectations);
        CloseableIterator<RowData> rows = checked.changes.collectAsync();
        CloseableIterator<RowData> quarantine = checked.quarantine.collectAsync();
        JobClient job = env.executeAsync("append expectations");
        List<String> appended = new ArrayList<>();
        rows.forEachRemaining(r -> appended.add(OperatorHarness.toGeneric(r, type).toString()));
        List<String> quarantined = new ArrayList<>();
        quarantine.forEachRemaining(
                q -> {
                    RowData g = OperatorHarness.toGeneric(q, QuarantineRecords.ROW_TYPE);
                    quarantined.add(
                            g.getString(0) + " | " + g.getString(5) + " | " + g.getString(6));
                });
        job.getJobExecutionResult().get();
        assertThat(appended).containsExactly("+I(1,a)", "+I(-2,b)", "+I(null,d)");
        assertThat(checked.truncates).isNull();
        assertThat(quarantined)
                .containsExactly(
                        "events | EXPECTATION_VIOLATED | expectation 'has_note' (note IS NOT NULL)"
                                + " ON VIOLATION DROP ROW violated by the record with values {n=3,"
                                + " note=null}");
        assertThat(counter(job.getJobID(), "expectation_positive_violated")).isEqualTo(1);
        assertThat(counter(job.getJobID(), "expectation_has_note_violated")).isEqualTo(1);

        StreamExecutionEnvironment failing = env();
        AutoCdcPredicates.Result failed =
                AutoCdcPredicates.expect(
                        failing.fromData(
                                InternalTypeInfo.of(type),
                                GenericRowData.of(5, StringData.fromString("big"))),
                        "events",
                        type,
                        List.of(new Expectation("small", "n < 5", OnViolation.FAIL_UPDATE)));
        assertThatThrownBy(
                        () -> {
                            try (CloseableIterator<RowData> it =
                                    failed.changes.executeAndCollect()) {
                                it.forEachRemaining(r -> {});
                            }
                        })
                .rootCause()
                .isInstanceOf(AutoCdcException.class)
                .hasMessageStartingWith(
                        "EXPECTATION_FAILED: flow 'events': expectation 'small' (n < 5) ON"
                                + " VIOLATION FAIL UPDATE failed on the record with values {n=5,"
                                + " note=big}; the update stops");
        assertThatThrownBy(
                        () ->
                                AutoCdcPredicates.validateExpectations(
                                        "events",
                                        type,
                                        List.of(
                                                new Expectation(
                                                        "typo", "nn > 0", OnViolation.KEEP))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "flow 'events': expectation 'typo' (nn > 0) is not a valid Flink SQL"
                                + " boolean expression over the columns [n, note]: ");
    }

    @Test
    void failUpdateFailsTheJobNamingTheExpectationAndTheRecord() {
        AutoCdcSpec spec =
                TestFlows.scd1()
                        .expectations(
                                List.of(
                                        new Expectation(
                                                "v_small", "v < 100", OnViolation.FAIL_UPDATE)))
                        .build();
        StreamExecutionEnvironment env = env();
        AutoCdcOperators.Applied applied =
                AutoCdcOperators.applyFlow(
                        env.fromData(
                                InternalTypeInfo.of(spec.sourceType()),
                                up(1, "a", 1, 1),
                                up(7, "x", 500, 2)),
                        null,
                        spec);
        assertThatThrownBy(
                        () -> {
                            try (CloseableIterator<RowData> it = applied.rows.executeAndCollect()) {
                                it.forEachRemaining(r -> {});
                            }
                        })
                .rootCause()
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "EXPECTATION_FAILED: flow 't': expectation 'v_small' (v < 100) ON"
                                + " VIOLATION FAIL UPDATE failed on the record with KEYS {id=7},"
                                + " values {id=7, name=x, v=500, _source_lsn=2, _op=u}; the update"
                                + " stops and nothing of the running checkpoint is committed: fix"
                                + " the record at its source, or relax the expectation (DROP ROW,"
                                + " or no ON VIOLATION) and run again");
    }

    @Test
    void anUnknownColumnOrANonBooleanExpressionFailsWhenPlanned() {
        AutoCdcSpec unknown =
                TestFlows.scd1()
                        .expectations(
                                List.of(
                                        new Expectation("ok", "v > 0", OnViolation.KEEP),
                                        new Expectation(
                                                "bad", "no_such_column > 0", OnViolation.KEEP)))
                        .build();
        assertThatThrownBy(() -> AutoCdcPredicates.validate(unknown))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "flow 't': expectation 'bad' (no_such_column > 0) is not a valid Flink SQL"
                                + " boolean expression over the columns [id, name, v, _source_lsn,"
                                + " _op]: ")
                .hasMessageContaining("no_such_column");
        AutoCdcSpec notBoolean =
                TestFlows.scd1()
                        .expectations(List.of(new Expectation("n", "v + 1", OnViolation.KEEP)))
                        .build();
        assertThatThrownBy(() -> AutoCdcPredicates.validate(notBoolean))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "flow 't': expectation 'n' (v + 1) is not a valid Flink SQL boolean"
                                + " expression over the columns");
        AutoCdcSpec fine =
                TestFlows.scd1()
                        .expectations(List.of(new Expectation("ok", "v > 0", OnViolation.DROP_ROW)))
                        .build();
        assertThatCode(() -> AutoCdcPredicates.validate(fine)).doesNotThrowAnyException();
    }

    @Test
    void definitionErrors() {
        assertThatThrownBy(
                        () ->
                                TestFlows.scd1()
                                        .expectations(
                                                List.of(
                                                        new Expectation(
                                                                "a", "v > 0", OnViolation.KEEP),
                                                        new Expectation(
                                                                "A", "v < 9", OnViolation.KEEP)))
                                        .build())
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "DUPLICATE_EXPECTATION: flow 't': two expectations are named 'A'; give"
                                + " each CONSTRAINT its own name (S8)");
        assertThatThrownBy(() -> new Expectation("1x", "v > 0", OnViolation.KEEP))
                .hasMessage(
                        "expectation name '1x' must be letters, digits and '_', not starting with"
                                + " a digit");
        assertThatThrownBy(() -> new Expectation("x", " ", OnViolation.KEEP))
                .hasMessage("expectation 'x' has no expression");
        assertThatThrownBy(() -> OnViolation.fromConfigName("warn"))
                .hasMessage("on-violation must be keep, drop-row or fail-update, got 'warn'");
        assertThat(OnViolation.fromConfigName("DROP ROW")).isEqualTo(OnViolation.DROP_ROW);
        StreamExecutionEnvironment env = env();
        AutoCdcSpec spec =
                TestFlows.scd1()
                        .expectations(List.of(new Expectation("a", "v > 0", OnViolation.KEEP)))
                        .build();
        assertThatThrownBy(
                        () ->
                                AutoCdcOperators.apply(
                                        env.fromData(
                                                InternalTypeInfo.of(spec.sourceType()),
                                                up(1, "a", 1, 1)),
                                        null,
                                        spec))
                .hasMessage(
                        "flow 't' has expectations: apply it with AutoCdcOperators.applyFlow,"
                                + " which evaluates them (S8)");
    }
}

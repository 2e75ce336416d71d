package dev.changeflow.operators;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.scd2;
import static dev.changeflow.operators.TestFlows.up;
import static dev.changeflow.operators.TestFlows.upd;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link AutoCdcApplyOperator} (SCD type 2) in Flink's keyed operator test harness (A4). */
class Scd2OperatorTest {

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void versionsAndHistorySurviveSnapshotRestore(boolean rocksDb) throws Exception {
        try (OperatorHarness h = new OperatorHarness(scd2().build(), rocksDb, false)) {
            h.apply(up(1, "A", 1, 1), upd(1, "C", 3, 5), up(2, "x", 0, 2));
            assertThat(h.take())
                    .containsExactly(
                            "+I(1,A,1,1,null)",
                            "-U(1,A,1,1,null)",
                            "+U(1,A,1,1,5)",
                            "+I(1,C,3,5,null)",
                            "+I(2,x,0,2,null)");
            h.restart();
            h.apply(upd(1, "B", 2, 3), del(2, 4));
            assertThat(h.take())
                    .containsExactly(
                            "-U(1,A,1,1,5)",
                            "+U(1,A,1,1,3)",
                            "+I(1,B,2,3,5)",
                            "-U(2,x,0,2,null)",
                            "+U(2,x,0,2,4)");
            h.restart();
            h.apply(up(2, "late", 9, 3), upd(1, "C", 3, 4));
            assertThat(h.take())
                    .containsExactly(
                            "-U(2,x,0,2,4)",
                            "+U(2,x,0,2,3)",
                            "+I(2,late,9,3,4)",
                            "-D(1,C,3,5,null)",
                            "-U(1,B,2,3,5)",
                            "+U(1,B,2,3,4)",
                            "+I(1,C,3,4,null)");
            assertThat(h.table.snapshot())
                    .containsExactly(
                            "(1,A,1,1,3)",
                            "(1,B,2,3,4)",
                            "(1,C,3,4,null)",
                            "(2,x,0,2,3)",
                            "(2,late,9,3,4)");
        }
    }
}

package dev.changeflow.operators;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.scd1;
import static dev.changeflow.operators.TestFlows.up;
import static dev.changeflow.operators.TestFlows.upd;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AutoCdcApplyOperator} (SCD type 1) and {@link Scd1TruncateFunction} in Flink's keyed
 * operator test harnesses (A3).
 */
class Scd1OperatorTest {

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void appliesAndKeepsRowsAndTombstonesAcrossSnapshotRestore(boolean rocksDb) throws Exception {
        try (OperatorHarness h = new OperatorHarness(scd1().build(), rocksDb, false)) {
            h.apply(up(1, "a", 1, 5), up(2, "b", 2, 5), del(3, 9));
            assertThat(h.take()).containsExactly("+I(1,a,1)", "+I(2,b,2)");
            h.restart();
            h.apply(
                    upd(1, "a2", 1, 6),
                    upd(2, "late", 0, 4),
                    del(2, 7),
                    up(3, "late", 0, 8),
                    up(3, "new", 3, 10));
            assertThat(h.take())
                    .containsExactly("-U(1,a,1)", "+U(1,a2,1)", "-D(2,b,2)", "+I(3,new,3)");
            h.restart();
            h.apply(up(2, "late", 0, 6), del(1, 5), upd(1, "a3", 1, 11));
            assertThat(h.take()).containsExactly("-U(1,a2,1)", "+U(1,a3,1)");
            assertThat(h.table.snapshot()).containsExactly("(1,a3,1)", "(3,new,3)");
        }
    }

    @Test
    void tombstoneIsCollectedAfterTheGcThresholdSoAVeryLateUpsertResurrects() throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(
                        scd1().tombstoneGcThreshold(Duration.ofMinutes(10)).build(), true, false)) {
            h.processingTime(1_000);
            h.apply(up(1, "a", 1, 5), del(1, 8));
            h.processingTime(1_000 + Duration.ofMinutes(10).toMillis() - 1);
            h.restart(); // downtime counts: the TTL clock is processing time
            h.apply(upd(1, "late", 0, 6));
            assertThat(h.take()).containsExactly("+I(1,a,1)", "-D(1,a,1)");
            h.processingTime(1_000 + Duration.ofMinutes(10).toMillis() + 1);
            h.apply(upd(1, "very late", 0, 7));
            assertThat(h.take()).containsExactly("+I(1,very late,0)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void truncateDeletesEveryOlderRowOfTheSubtaskAndSurvivesRestore(boolean rocksDb)
            throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(scd1().truncateEnabled(true).build(), rocksDb, true)) {
            h.apply(up(1, "a", 1, 5), up(2, "b", 2, 20), up(3, "c", 3, 9), del(3, 11));
            h.take();
            h.truncate(del(0, 10));
            assertThat(h.take()).containsExactly("-D(1,a,1)");
            h.restart();
            h.apply(
                    up(4, "late", 4, 9),
                    upd(1, "late", 1, 6),
                    up(5, "at", 5, 10),
                    upd(1, "after", 7, 11));
            assertThat(h.take()).containsExactly("+I(5,at,5)", "+I(1,after,7)");
            assertThat(h.table.snapshot()).containsExactly("(1,after,7)", "(2,b,2)", "(5,at,5)");
        }
    }
}

package dev.changeflow.operators;

import org.apache.flink.table.data.RowData;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.scd1;
import static dev.changeflow.operators.TestFlows.scd2;
import static dev.changeflow.operators.TestFlows.up;
import static dev.changeflow.operators.TestFlows.upd;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AutoCdcApplyOperator} between checkpoints: net changes per row identity at each barrier,
 * early flushes at {@code apply-buffer-keys}, and — randomized — the same target table at every
 * barrier as the per-record changelog of {@link Scd1Logic} / {@link Scd2Logic}, with every
 * retraction matching the table's row exactly ({@link TestFlows.Materialized}).
 */
class AutoCdcApplyOperatorTest {
    private static final long BASE_SEED = Long.getLong("changeflow.seed", System.nanoTime());

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd1EmitsOneNetChangePerKeyAtEachBarrier(boolean rocksDb) throws Exception {
        try (OperatorHarness h = new OperatorHarness(scd1().build(), rocksDb, false).batched()) {
            h.apply(
                    up(1, "a", 1, 5),
                    upd(1, "b", 1, 6),
                    upd(1, "c", 1, 7),
                    up(2, "x", 2, 1),
                    del(3, 4));
            assertThat(h.take()).isEmpty();
            h.barrier();
            assertThat(h.take()).containsExactly("+I(1,c,1)", "+I(2,x,2)");
            // changed and changed back: nothing; the sequence still advanced (a record at 8 is late
            // now)
            h.apply(
                    upd(1, "d", 1, 8),
                    upd(1, "c", 1, 9),
                    upd(2, "y", 2, 2),
                    del(2, 3),
                    up(3, "late", 3, 3));
            h.barrier();
            assertThat(h.take()).containsExactly("-D(2,x,2)");
            h.apply(upd(1, "late", 1, 8), up(2, "back", 2, 5), del(2, 6), up(2, "again", 2, 7));
            h.restart(); // the snapshot flushes first
            assertThat(h.take()).containsExactly("+I(2,again,2)");
            h.apply(del(1, 10), up(1, "new", 9, 11), del(2, 8));
            h.endInput();
            assertThat(h.take()).containsExactly("-U(1,c,1)", "+U(1,new,9)", "-D(2,again,2)");
            assertThat(h.table.snapshot()).containsExactly("(1,new,9)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd2FoldsVersionsOpenedAndClosedBetweenBarriers(boolean rocksDb) throws Exception {
        try (OperatorHarness h = new OperatorHarness(scd2().build(), rocksDb, false).batched()) {
            h.apply(up(1, "A", 1, 1), upd(1, "B", 2, 3), upd(1, "C", 3, 5));
            h.barrier();
            assertThat(h.take())
                    .containsExactly("+I(1,A,1,1,3)", "+I(1,B,2,3,5)", "+I(1,C,3,5,null)");
            // a late record splits a flushed version; a new version opens and closes between
            // barriers
            h.apply(upd(1, "late", 9, 4), upd(1, "D", 4, 7), del(1, 8));
            h.restart();
            assertThat(h.take())
                    .containsExactly(
                            "-U(1,B,2,3,5)",
                            "+U(1,B,2,3,4)",
                            "-U(1,C,3,5,null)",
                            "+U(1,C,3,5,7)",
                            "+I(1,late,9,4,5)",
                            "+I(1,D,4,7,8)");
            assertThat(h.table.snapshot())
                    .containsExactly(
                            "(1,A,1,1,3)",
                            "(1,B,2,3,4)",
                            "(1,late,9,4,5)",
                            "(1,C,3,5,7)",
                            "(1,D,4,7,8)");
        }
    }

    @Test
    void reachingTheKeyLimitFlushesBeforeTheBarrier() throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(scd1().applyBufferKeys(2).build(), true, false).batched()) {
            h.apply(up(1, "a", 1, 1), upd(1, "b", 1, 2));
            assertThat(h.take()).isEmpty();
            h.apply(up(2, "x", 2, 1));
            assertThat(h.take()).containsExactly("+I(1,b,1)", "+I(2,x,2)");
            h.apply(up(3, "y", 3, 1), upd(1, "c", 1, 3));
            assertThat(h.take()).containsExactly("+I(3,y,3)", "-U(1,b,1)", "+U(1,c,1)");
            h.apply(upd(3, "z", 3, 2));
            h.barrier();
            assertThat(h.take()).containsExactly("-U(3,y,3)", "+U(3,z,3)");
        }
    }

    @Test
    void scd2HistoryEntriesBeyondTheirByteLimitFlushEarly() throws Exception {
        // one key: 512 bytes of buffered entries per buffered key allowed (25,600 here); each entry
        // takes ≥ 30 bytes of its chunk
        try (OperatorHarness h =
                new OperatorHarness(scd2().applyBufferKeys(50).build(), true, false).batched()) {
            List<String> expected = new ArrayList<>();
            for (int i = 1; i <= 3_000; i++) {
                h.apply(upd(1, "v" + i, i, i));
                expected.add(
                        "(1,v"
                                + i
                                + ","
                                + i
                                + ","
                                + i
                                + ","
                                + (i == 3_000 ? "null" : Integer.toString(i + 1))
                                + ")");
            }
            assertThat(h.take()).as("flushed before the barrier").isNotEmpty();
            h.barrier();
            h.take();
            assertThat(h.table.snapshot()).hasSize(3_000);
            assertThat(new TreeSet<>(h.table.snapshot())).isEqualTo(new TreeSet<>(expected));
        }
    }

    @Test
    void negativeKeyLimitIsRejected() {
        Assertions.assertThatThrownBy(() -> scd1().applyBufferKeys(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "apply-buffer-keys must be 0 (no buffering) or positive, got -1");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.changeflow.operators.AutoCdcOrderIndependenceTest#flows")
    void tableAtEveryBarrierEqualsThePerRecordChangelog(String name, AutoCdcSpec spec)
            throws Exception {
        for (int set = 0; set < 12; set++) {
            long seed = BASE_SEED + set * 104729L + name.hashCode();
            Random rnd = new Random(seed);
            List<RowData> events = AutoCdcOrderIndependenceTest.events(rnd);
            boolean rocksDb = set == 0;
            List<RowData> applied = new ArrayList<>();
            try (OperatorHarness h = new OperatorHarness(spec, rocksDb, false).batched()) {
                for (RowData r : events) {
                    h.apply(r);
                    applied.add(r);
                    int step = rnd.nextInt(12);
                    if (step <= 2) {
                        if (step == 2) {
                            h.restart();
                        } else {
                            h.barrier();
                        }
                        assertThat(h.table.snapshot())
                                .as(
                                        "%s, seed %d (-Dchangeflow.seed=%d), after %s",
                                        name, seed, BASE_SEED, applied)
                                .isEqualTo(
                                        AutoCdcOrderIndependenceTest.applyWithLogic(spec, applied));
                    }
                }
                h.endInput();
                assertThat(h.table.snapshot())
                        .as(
                                "%s, seed %d (-Dchangeflow.seed=%d), all of %s",
                                name, seed, BASE_SEED, events)
                        .isEqualTo(AutoCdcOrderIndependenceTest.applyWithLogic(spec, events));
            }
        }
    }
}

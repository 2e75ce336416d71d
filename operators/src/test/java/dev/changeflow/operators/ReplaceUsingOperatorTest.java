package dev.changeflow.operators;

import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * REPLACE USING (semantics.md S5) through {@link ReplaceUsingOperator} in Flink's keyed operator
 * harness (heap and RocksDB state): replacement by the highest sequence, late and replayed rows,
 * equal-sequence sets, null keys, restore from a snapshot, a null sequence (quarantine and fail),
 * definition errors, and a randomized test that shuffled arrivals give the table of sorted ones.
 */
class ReplaceUsingOperatorTest {
    private static final long BASE_SEED = Long.getLong("changeflow.seed", System.nanoTime());

    @BeforeAll
    static void printSeed() {
        System.out.println(
                "ReplaceUsingOperatorTest seed = "
                        + BASE_SEED
                        + " (-Dchangeflow.seed="
                        + BASE_SEED
                        + ")");
    }

    /** booking STRING, payment STRING, seq BIGINT, status STRING; REPLACE USING (booking). */
    static final RowType PAYMENTS =
            RowType.of(
                    new LogicalType[] {
                        VarCharType.STRING_TYPE,
                        VarCharType.STRING_TYPE,
                        new BigIntType(),
                        VarCharType.STRING_TYPE
                    },
                    new String[] {"booking", "payment", "seq", "status"});

    static ReplaceUsingSpec payments() {
        return ReplaceUsingSpec.of("payments", PAYMENTS, List.of("booking"), List.of("seq"), false);
    }

    static Object[] r(Object... v) {
        return v;
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void higherSequenceReplacesAllRowsOfTheKey(boolean rocksDb) throws Exception {
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(payments(), rocksDb)) {
            h.send(r("b1", "p1", 1L, "new"), r("b1", "p2", 1L, "new"), r("b2", "p3", 1L, "new"));
            assertThat(h.takeChanges())
                    .containsExactly("+I(b1,p1,1,new)", "+I(b1,p2,1,new)", "+I(b2,p3,1,new)");
            // b1 re-sent at 2 with one payment only: both old rows go, b2 is untouched
            h.send(r("b1", "p1", 2L, "paid"));
            assertThat(h.takeChanges())
                    .containsExactly("-D(b1,p1,1,new)", "-D(b1,p2,1,new)", "+I(b1,p1,2,paid)");
            assertThat(h.table()).containsExactly("(b1,p1,2,paid)", "(b2,p3,1,new)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void lowerSequenceChangesNothing(boolean rocksDb) throws Exception {
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(payments(), rocksDb)) {
            h.send(r("b1", "p1", 5L, "paid"));
            h.takeChanges();
            h.send(r("b1", "p1", 4L, "new"), r("b1", "p9", 3L, "new"));
            assertThat(h.takeChanges()).isEmpty();
            assertThat(h.table()).containsExactly("(b1,p1,5,paid)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void equalSequencesAreAllKeptAndReplaysChangeNothing(boolean rocksDb) throws Exception {
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(payments(), rocksDb)) {
            h.send(r("b1", "p1", 3L, "paid"), r("b1", "p2", 3L, "paid"));
            h.send(r("b1", "p1", 3L, "paid")); // replay of a row the key holds
            h.send(r("b1", "p1", 3L, "refunded")); // same sequence, other values: kept too
            assertThat(h.takeChanges())
                    .containsExactly(
                            "+I(b1,p1,3,paid)", "+I(b1,p2,3,paid)", "+I(b1,p1,3,refunded)");
            assertThat(h.table())
                    .containsExactly("(b1,p1,3,paid)", "(b1,p1,3,refunded)", "(b1,p2,3,paid)");
            // the whole input replayed after a restart: same table, no change
            h.restart();
            h.send(
                    r("b1", "p1", 3L, "paid"),
                    r("b1", "p2", 3L, "paid"),
                    r("b1", "p1", 3L, "refunded"));
            assertThat(h.takeChanges()).isEmpty();
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void nullKeyValuesMatchEachOther(boolean rocksDb) throws Exception {
        RowType type =
                RowType.of(
                        new LogicalType[] {
                            VarCharType.STRING_TYPE,
                            new IntType(),
                            new BigIntType(),
                            VarCharType.STRING_TYPE
                        },
                        new String[] {"k1", "k2", "s", "v"});
        ReplaceUsingSpec spec =
                ReplaceUsingSpec.of("nulls", type, List.of("k1", "k2"), List.of("s"), false);
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(spec, rocksDb)) {
            h.send(
                    r(null, null, 1L, "a"),
                    r(null, 1, 1L, "b"),
                    r("x", null, 1L, "c"),
                    r(null, null, 1L, "d"));
            h.restart();
            h.send(r(null, null, 2L, "e"), r("x", null, 0L, "late"));
            assertThat(h.table())
                    .containsExactly("(null,1,1,b)", "(null,null,2,e)", "(x,null,1,c)");
        }
    }

    @Test
    void rowsOfAKeyAtHigherSequenceAfterRestoreReplaceTheRestoredSet() throws Exception {
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(payments(), true)) {
            h.send(r("b1", "p1", 1L, "new"), r("b1", "p2", 1L, "new"));
            h.restart();
            h.takeChanges();
            h.send(r("b1", "p3", 2L, "new"), r("b1", "p4", 2L, "new"));
            assertThat(h.takeChanges())
                    .containsExactly(
                            "-D(b1,p1,1,new)",
                            "-D(b1,p2,1,new)",
                            "+I(b1,p3,2,new)",
                            "+I(b1,p4,2,new)");
            assertThat(h.table()).containsExactly("(b1,p3,2,new)", "(b1,p4,2,new)");
        }
    }

    @Test
    void nullSequenceIsQuarantinedAndChangesNothing() throws Exception {
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(payments(), false)) {
            h.send(r("b1", "p1", 1L, "new"), r("b1", "p2", null, "bad"));
            assertThat(h.table()).containsExactly("(b1,p1,1,new)");
            assertThat(h.quarantine()).containsExactly("NULL_SEQUENCE +I(b1,p2,null,bad)");
        }
    }

    @Test
    void nullSequenceFailsTheJobUnderOnInvalidRecordFail() throws Exception {
        ReplaceUsingSpec spec =
                ReplaceUsingSpec.of("payments", PAYMENTS, List.of("booking"), List.of("seq"), true);
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(spec, false)) {
            assertThatThrownBy(() -> h.send(r("b1", "p2", null, "bad")))
                    .hasMessageContaining("NULL_SEQUENCE")
                    .hasMessageContaining("'seq'")
                    .hasMessageContaining("(b1,p2,null,bad)");
        }
    }

    @Test
    void definitionErrors() {
        assertThatThrownBy(
                        () -> ReplaceUsingSpec.of("f", PAYMENTS, List.of(), List.of("seq"), false))
                .hasMessageStartingWith("EMPTY_KEYS");
        assertThatThrownBy(
                        () ->
                                ReplaceUsingSpec.of(
                                        "f", PAYMENTS, List.of("nope"), List.of("seq"), false))
                .hasMessageStartingWith("KEY_NOT_IN_SOURCE")
                .hasMessageContaining("'nope'");
        assertThatThrownBy(
                        () ->
                                ReplaceUsingSpec.of(
                                        "f", PAYMENTS, List.of("booking"), List.of(), false))
                .hasMessageStartingWith("EMPTY_SEQUENCE");
        assertThatThrownBy(
                        () ->
                                ReplaceUsingSpec.of(
                                        "f", PAYMENTS, List.of("booking"), List.of("x"), false))
                .hasMessageStartingWith("SEQUENCE_NOT_IN_SOURCE");
        RowType withDouble =
                RowType.of(
                        new LogicalType[] {new IntType(), new DoubleType()},
                        new String[] {"k", "s"});
        assertThatThrownBy(
                        () ->
                                ReplaceUsingSpec.of(
                                        "f", withDouble, List.of("k"), List.of("s"), false))
                .hasMessageStartingWith("SEQUENCE_NOT_ORDERABLE");
        RowType withArray =
                RowType.of(
                        new LogicalType[] {
                            new IntType(), new IntType(), new ArrayType(new IntType())
                        },
                        new String[] {"k", "s", "tags"});
        assertThatThrownBy(
                        () ->
                                ReplaceUsingSpec.of(
                                        "f", withArray, List.of("k"), List.of("s"), false))
                .hasMessageStartingWith("KEY_TYPE_NOT_SUPPORTED")
                .hasMessageContaining("'tags'");
    }

    /**
     * S5's order independence, randomized: rows of a few keys (null included) with few distinct
     * sequences (ties) and replays, applied sorted by sequence, shuffled, and shuffled with
     * restores in between, give the same table; the table equals the expected one computed directly
     * from S5's rule (per key the distinct rows of the highest sequence).
     */
    @Test
    void shuffledArrivalsGiveTheTableOfSortedArrivals() throws Exception {
        for (int set = 0; set < 30; set++) {
            long seed = BASE_SEED + set;
            Random rnd = new Random(seed);
            List<Object[]> rows = new ArrayList<>();
            String[] keys = {"b1", "b2", "b3", null};
            int n = 10 + rnd.nextInt(50);
            for (int i = 0; i < n; i++) {
                if (!rows.isEmpty() && rnd.nextInt(6) == 0) {
                    rows.add(rows.get(rnd.nextInt(rows.size()))); // replay
                    continue;
                }
                rows.add(
                        r(
                                keys[rnd.nextInt(keys.length)],
                                "p" + rnd.nextInt(4),
                                (long) rnd.nextInt(5),
                                rnd.nextBoolean() ? "new" : "paid"));
            }
            List<String> expected = expected(rows);
            List<Object[]> sorted = new ArrayList<>(rows);
            sorted.sort(Comparator.comparingLong(x -> (Long) x[2]));
            assertThat(table(sorted, rnd, false)).as("sorted, seed %s", seed).isEqualTo(expected);
            for (int shuffle = 0; shuffle < 3; shuffle++) {
                List<Object[]> shuffled = new ArrayList<>(rows);
                Collections.shuffle(shuffled, rnd);
                assertThat(table(shuffled, rnd, shuffle == 2))
                        .as("shuffle %s, seed %s", shuffle, seed)
                        .isEqualTo(expected);
            }
        }
    }

    private static List<String> table(List<Object[]> rows, Random rnd, boolean restarts)
            throws Exception {
        try (ReplaceUsingHarness h = new ReplaceUsingHarness(payments(), false)) {
            for (Object[] row : rows) {
                h.send(row);
                if (restarts && rnd.nextInt(8) == 0) {
                    h.restart();
                }
            }
            return h.table();
        }
    }

    /**
     * S5 directly: per key value (null = null) the distinct rows with the key's maximum sequence.
     */
    private static List<String> expected(List<Object[]> rows) {
        java.util.Map<String, Long> max = new java.util.HashMap<>();
        for (Object[] row : rows) {
            max.merge(String.valueOf(row[0]), (Long) row[2], Math::max);
        }
        java.util.TreeSet<String> out = new java.util.TreeSet<>();
        for (Object[] row : rows) {
            if (max.get(String.valueOf(row[0])).equals(row[2])) {
                out.add("(" + row[0] + "," + row[1] + "," + row[2] + "," + row[3] + ")");
            }
        }
        return new ArrayList<>(out);
    }
}

package dev.changeflow.operators;

import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.Hash128;
import dev.changeflow.state.Scd2HistoryChunk;
import dev.changeflow.state.Scd2HistoryEntry;
import dev.changeflow.state.SequenceCodec;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.scd2;
import static dev.changeflow.operators.TestFlows.up;
import static dev.changeflow.operators.TestFlows.upd;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each SCD type 2 rule of semantics.md A2/A4, on {@link Scd2Logic} without Flink. Rows: id, name,
 * v, __START_AT, __END_AT.
 */
class Scd2LogicTest {

    private static TestFlows.Scd2Driver driver() {
        return new TestFlows.Scd2Driver(scd2().build());
    }

    @Test
    void changesOpenAndCloseVersions() {
        TestFlows.Scd2Driver d = driver().apply(up(1, "a", 1, 1), upd(1, "b", 2, 5));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,a,1,1,null)",
                        "-U(1,a,1,1,null)",
                        "+U(1,a,1,1,5)",
                        "+I(1,b,2,5,null)");
        assertThat(d.table.snapshot()).containsExactly("(1,a,1,1,5)", "(1,b,2,5,null)");
    }

    @Test
    void deleteClosesCurrentVersionAndOpensNoneReinsertOpensNewVersionAfterGap() {
        TestFlows.Scd2Driver d = driver().apply(up(1, "a", 1, 1), del(1, 4));
        assertThat(d.take())
                .containsExactly("+I(1,a,1,1,null)", "-U(1,a,1,1,null)", "+U(1,a,1,1,4)");
        d.apply(del(1, 5)); // delete of a deleted key: recorded, nothing emitted
        d.apply(up(1, "a", 1, 7));
        assertThat(d.take()).containsExactly("+I(1,a,1,7,null)");
        assertThat(d.table.snapshot()).containsExactly("(1,a,1,1,4)", "(1,a,1,7,null)");
        assertThat(d.metrics.tombstones).isEqualTo(2);
    }

    @Test
    void lateUpsertSplitsTheVersionItFallsIn() {
        TestFlows.Scd2Driver d = driver().apply(up(1, "A", 1, 1), upd(1, "C", 3, 5));
        d.take();
        d.apply(upd(1, "B", 2, 3));
        assertThat(d.take()).containsExactly("-U(1,A,1,1,5)", "+U(1,A,1,1,3)", "+I(1,B,2,3,5)");
        assertThat(d.table.snapshot())
                .containsExactly("(1,A,1,1,3)", "(1,B,2,3,5)", "(1,C,3,5,null)");
        assertThat(d.metrics.late).isEqualTo(1);
    }

    @Test
    void lateUpsertMergesWithFollowingVersionOfIdenticalTrackedValues() {
        TestFlows.Scd2Driver d = driver().apply(up(1, "A", 1, 1), upd(1, "C", 3, 5));
        d.take();
        d.apply(upd(1, "C", 3, 3));
        assertThat(d.take())
                .containsExactly(
                        "-D(1,C,3,5,null)", "-U(1,A,1,1,5)", "+U(1,A,1,1,3)", "+I(1,C,3,3,null)");
        assertThat(d.table.snapshot()).containsExactly("(1,A,1,1,3)", "(1,C,3,3,null)");
    }

    @Test
    void lateUpsertBeforeFirstVersionAndInsideAGap() {
        TestFlows.Scd2Driver d = driver().apply(up(1, "C", 3, 5), upd(1, "A", 1, 1));
        assertThat(d.take()).containsExactly("+I(1,C,3,5,null)", "+I(1,A,1,1,5)");
        TestFlows.Scd2Driver gap = driver().apply(up(1, "A", 1, 1), del(1, 3), up(1, "C", 3, 7));
        gap.take();
        gap.apply(up(1, "B", 2, 5));
        assertThat(gap.take()).containsExactly("+I(1,B,2,5,7)");
        assertThat(gap.table.snapshot())
                .containsExactly("(1,A,1,1,3)", "(1,B,2,5,7)", "(1,C,3,7,null)");
    }

    @Test
    void lateDeleteInsideAVersionClosesItThereAndDropsNothingElse() {
        TestFlows.Scd2Driver d = driver().apply(up(1, "A", 1, 1), upd(1, "C", 3, 5));
        d.take();
        d.apply(del(1, 3));
        assertThat(d.take()).containsExactly("-U(1,A,1,1,5)", "+U(1,A,1,1,3)");
        assertThat(d.table.snapshot()).containsExactly("(1,A,1,1,3)", "(1,C,3,5,null)");
        d.apply(del(1, 9), del(1, 7)); // late delete after the last version's close
        assertThat(d.take())
                .containsExactly(
                        "-U(1,C,3,5,null)", "+U(1,C,3,5,9)", "-U(1,C,3,5,9)", "+U(1,C,3,5,7)");
    }

    @Test
    void untrackedOnlyChangeUpdatesTheCurrentVersionInPlace() {
        TestFlows.Scd2Driver d =
                new TestFlows.Scd2Driver(
                        scd2().trackHistory(ColumnSelection.include(List.of("name"))).build());
        d.apply(up(1, "a", 1, 1), upd(1, "a", 2, 2), upd(1, "b", 2, 3));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,a,1,1,null)",
                        "-U(1,a,1,1,null)",
                        "+U(1,a,2,1,null)",
                        "-U(1,a,2,1,null)",
                        "+U(1,a,2,1,3)",
                        "+I(1,b,2,3,null)");
        TestFlows.Scd2Driver except =
                new TestFlows.Scd2Driver(
                        scd2().trackHistory(ColumnSelection.except(List.of("v"))).build());
        except.apply(up(1, "a", 1, 1), upd(1, "a", 2, 2));
        assertThat(except.take())
                .containsExactly("+I(1,a,1,1,null)", "-U(1,a,1,1,null)", "+U(1,a,2,1,null)");
    }

    @Test
    void identicalTrackedValuesOpenNoVersion() {
        TestFlows.Scd2Driver d =
                driver().apply(up(1, "a", 1, 1), upd(1, "a", 1, 2), upd(1, "a", 1, 3));
        assertThat(d.take()).containsExactly("+I(1,a,1,1,null)");
        assertThat(d.metrics.noop).isEqualTo(2);
    }

    @Test
    void sequenceColumnsAreNotTrackedTheirChangeUpdatesInPlace() {
        TestFlows.Scd2Driver d =
                new TestFlows.Scd2Driver(
                        scd2().columns(
                                        ColumnSelection.include(
                                                List.of("id", "name", "v", "_source_lsn")))
                                .build());
        d.apply(up(1, "a", 1, 1), upd(1, "a", 1, 2));
        assertThat(d.take())
                .containsExactly("+I(1,a,1,1,1,null)", "-U(1,a,1,1,1,null)", "+U(1,a,1,2,1,null)");
    }

    @Test
    void exactDuplicatesAreIdempotentInAndOutOfOrder() {
        TestFlows.Scd2Driver d =
                driver().apply(
                                up(1, "a", 1, 1),
                                upd(1, "b", 2, 5),
                                upd(1, "b", 2, 5),
                                up(1, "a", 1, 1),
                                del(1, 9),
                                del(1, 9));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,a,1,1,null)",
                        "-U(1,a,1,1,null)",
                        "+U(1,a,1,1,5)",
                        "+I(1,b,2,5,null)",
                        "-U(1,b,2,5,null)",
                        "+U(1,b,2,5,9)");
        assertThat(d.metrics.duplicateSequence).isZero();
        assertThat(d.metrics.noop).isEqualTo(3);
    }

    @Test
    void sameSequenceConflictsAreOrderIndependent() {
        TestFlows.Scd2Driver ab = driver().apply(up(1, "a", 1, 5), up(1, "b", 1, 5));
        TestFlows.Scd2Driver ba = driver().apply(up(1, "b", 1, 5), up(1, "a", 1, 5));
        assertThat(ab.take())
                .containsExactly("+I(1,a,1,5,null)", "-U(1,a,1,5,null)", "+U(1,b,1,5,null)");
        assertThat(ba.take()).containsExactly("+I(1,b,1,5,null)");
        TestFlows.Scd2Driver upFirst =
                driver().apply(up(1, "a", 1, 3), up(1, "b", 2, 5), del(1, 5));
        TestFlows.Scd2Driver delFirst =
                driver().apply(up(1, "a", 1, 3), del(1, 5), up(1, "b", 2, 5));
        assertThat(upFirst.table.snapshot())
                .containsExactly("(1,a,1,3,5)")
                .isEqualTo(delFirst.table.snapshot());
        assertThat(upFirst.metrics.duplicateSequence).isEqualTo(1);
        assertThat(delFirst.metrics.duplicateSequence).isEqualTo(1);
    }

    @Test
    void structSequenceGivesNestedPeriodColumns() {
        RowType source =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            new IntType(),
                            VarCharType.STRING_TYPE,
                            new BigIntType()
                        },
                        new String[] {"id", "v", "file", "pos"});
        AutoCdcSpec spec =
                AutoCdcSpec.builder("s", source)
                        .keys("id")
                        .sequenceBy("file", "pos")
                        .columns(ColumnSelection.include(List.of("id", "v")))
                        .scdType(ScdType.TYPE_2)
                        .build();
        TestFlows.Scd2Driver d = new TestFlows.Scd2Driver(spec);
        d.apply(
                GenericRowData.of(1L, 1, StringData.fromString("b.1"), 5L),
                GenericRowData.of(1L, 2, StringData.fromString("b.2"), 1L));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,1,+I(b.1,5),null)",
                        "-U(1,1,+I(b.1,5),null)",
                        "+U(1,1,+I(b.1,5),+I(b.2,1))",
                        "+I(1,2,+I(b.2,1),null)");
    }

    @Test
    void hotKeyKeepsSmallMapValuesNeverOneGrowingValue() {
        TestFlows.Scd2Driver d = driver();
        for (int i = 1; i <= 10_000; i++) {
            d.apply(upd(1, "n", i, i));
        }
        TestFlows.MemScd2 s = d.keys.get(1L);
        assertThat(s.history).hasSize(10_000); // record by record: one chunk of one entry per flush
        assertThat(s.history.values()).allSatisfy(v -> assertThat(v.length).isLessThan(40));
        assertThat(s.current.length).isLessThan(60);
        assertThat(d.table.rows).hasSize(10_000);
        d.take();
        d.apply(upd(1, "late", 0, 0)); // a late record on the hot key: one recomputation
        assertThat(d.take()).containsExactly("+I(1,late,0,0,1)");
        // the late record read 10,000 values: rewritten as chunks of at most 1,024 entries
        assertThat(s.history).hasSize(10);
        assertThat(s.history.keySet())
                .allSatisfy(k -> assertThat(Scd2HistoryChunk.isChunkKey(k)).isTrue());
        assertThat(s.history.values()).allSatisfy(v -> assertThat(v.length).isLessThan(1_024 * 40));
        d.apply(upd(1, "later", 0, 10_001), upd(1, "late2", 0, -1));
        assertThat(d.take())
                .containsExactly(
                        "-U(1,n,10000,10000,null)",
                        "+U(1,n,10000,10000,10001)",
                        "+I(1,later,0,10001,null)",
                        "+I(1,late2,0,-1,0)");
        assertThat(d.table.rows).hasSize(10_003);
        // 10 chunks + one per flush since: no new rewrite until 16 more values than the chunks need
        assertThat(s.history).hasSize(12);
    }

    @Test
    void ignoreNullUpdatesMergesWithThePreviousRow() {
        TestFlows.Scd2Driver d =
                new TestFlows.Scd2Driver(scd2().ignoreNullUpdates(ColumnSelection.all()).build());
        d.apply(up(1, "a", null, 1), upd(1, null, 2, 2));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,a,null,1,null)",
                        "-U(1,a,null,1,null)",
                        "+U(1,a,null,1,2)",
                        "+I(1,a,2,2,null)");
        d.apply(del(1, 3), up(1, null, 5, 4)); // after a delete the key is new: nulls are stored
        assertThat(d.take())
                .containsExactly("-U(1,a,2,2,null)", "+U(1,a,2,2,3)", "+I(1,null,5,4,null)");
    }

    @Test
    void v1StateOfAnOlderReleaseGivesTheSameChangesAsV2State() {
        // state written in format v1 by earlier builds (v1 head, one v1 entry per record) must
        // apply exactly like the
        // v2 state of the same records: in-order, late, duplicate and same-sequence records after
        // the restore
        AutoCdcSpec spec = scd2().build();
        Random rnd = new Random(20261130L);
        for (int set = 0; set < 200; set++) {
            List<RowData> events = AutoCdcOrderIndependenceTest.events(rnd);
            int restoreAt = rnd.nextInt(events.size());
            Scd2Logic logic = new Scd2Logic(spec, new AutoCdcMetrics.Counting());
            Map<Long, TestFlows.MemScd2> v2 = new HashMap<>();
            for (RowData r : events.subList(0, restoreAt)) {
                logic.apply(
                        r,
                        v2.computeIfAbsent(r.getLong(0), k -> new TestFlows.MemScd2()),
                        row -> {});
            }
            Map<Long, TestFlows.MemScd2> v1 = new HashMap<>();
            v2.forEach((id, store) -> v1.put(id, toV1(store)));
            assertThat(v1.values())
                    .allSatisfy(store -> assertThat(store.current[0]).isEqualTo((byte) 1));
            List<String> fromV2 = new ArrayList<>();
            List<String> fromV1 = new ArrayList<>();
            for (RowData r : events.subList(restoreAt, events.size())) {
                logic.apply(
                        r,
                        v2.computeIfAbsent(r.getLong(0), k -> new TestFlows.MemScd2()),
                        row -> fromV2.add(row.toString()));
                logic.apply(
                        r,
                        v1.computeIfAbsent(r.getLong(0), k -> new TestFlows.MemScd2()),
                        row -> fromV1.add(row.toString()));
            }
            assertThat(fromV1)
                    .as("set %d, restored after %d of %s", set, restoreAt, events)
                    .isEqualTo(fromV2);
        }
    }

    /**
     * The v1 layout of a v2 store whose chunks were written record by record (A2 winner per
     * sequence).
     */
    private static TestFlows.MemScd2 toV1(TestFlows.MemScd2 v2) {
        TestFlows.MemScd2 v1 = new TestFlows.MemScd2();
        byte[] head = v2.current;
        assertThat(head[0]).isEqualTo((byte) 2);
        assertThat(head[2] & 0x80).as("one-byte chunk number").isZero();
        v1.current = new byte[head.length - 1];
        v1.current[0] = 1;
        v1.current[1] = head[1];
        System.arraycopy(head, 3, v1.current, 2, head.length - 3);
        Scd2HistoryChunk.Cursor c = new Scd2HistoryChunk.Cursor();
        ByteWriter w = new ByteWriter();
        for (byte[] chunk : v2.history.values()) {
            c.wrap(chunk);
            while (c.next()) {
                String key = SequenceCodec.toMapKey(chunk, c.sequenceOffset(), c.sequenceLength());
                w.reset();
                if (c.isDelete()) {
                    w.writeBytes(Scd2HistoryEntry.delete());
                } else {
                    Scd2HistoryEntry.writeUpsert(
                            w, chunk, c.hashOffset(), chunk, c.rowOffset(), c.rowLength());
                }
                byte[] entry = w.toByteArray();
                v1.history.merge(key, entry, Scd2LogicTest::v1Winner);
            }
        }
        return v1;
    }

    private static byte[] v1Winner(byte[] a, byte[] b) {
        if (a[1] == Scd2HistoryEntry.DELETE) {
            return a;
        }
        if (b[1] == Scd2HistoryEntry.DELETE) {
            return b;
        }
        int rowOff = 2 + Hash128.BYTES;
        return Arrays.compareUnsigned(a, rowOff, a.length, b, rowOff, b.length) >= 0 ? a : b;
    }
}

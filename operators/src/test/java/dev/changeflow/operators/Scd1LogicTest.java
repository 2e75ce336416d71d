package dev.changeflow.operators;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.changeflow.operators.TestFlows.del;
import static dev.changeflow.operators.TestFlows.scd1;
import static dev.changeflow.operators.TestFlows.up;
import static dev.changeflow.operators.TestFlows.upd;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each SCD type 1 rule of semantics.md A2/A3, on {@link Scd1Logic} without Flink. */
class Scd1LogicTest {

    private static TestFlows.Scd1Driver driver() {
        return new TestFlows.Scd1Driver(scd1().build());
    }

    @Test
    void upsertOfNewKeyEmitsInsert() {
        TestFlows.Scd1Driver d = driver().apply(up(1, "a", 10, 5));
        assertThat(d.take()).containsExactly("+I(1,a,10)");
        assertThat(d.metrics.applied).isEqualTo(1);
    }

    @Test
    void updateEmitsCompletePreviousRowThenNewRow() {
        TestFlows.Scd1Driver d = driver().apply(up(1, "a", 10, 5), upd(1, "b", 11, 6));
        assertThat(d.take()).containsExactly("+I(1,a,10)", "-U(1,a,10)", "+U(1,b,11)");
    }

    @Test
    void noOpUpsertEmitsNothingButAdvancesTheAppliedSequence() {
        TestFlows.Scd1Driver d = driver().apply(up(1, "a", 10, 5), upd(1, "a", 10, 9));
        assertThat(d.take()).containsExactly("+I(1,a,10)");
        assertThat(d.metrics.noop).isEqualTo(1);
        d.apply(upd(1, "late", 0, 7)); // below 9: sorted application would end with (a,10) too
        assertThat(d.take()).isEmpty();
        assertThat(d.metrics.late).isEqualTo(1);
    }

    @Test
    void lateUpsertChangesNothing() {
        TestFlows.Scd1Driver d = driver().apply(up(1, "a", 10, 5), upd(1, "old", 1, 4));
        assertThat(d.take()).containsExactly("+I(1,a,10)");
        assertThat(d.metrics.late).isEqualTo(1);
    }

    @Test
    void exactDuplicateIsAppliedOnce() {
        TestFlows.Scd1Driver d =
                driver().apply(up(1, "a", 10, 5), up(1, "a", 10, 5), del(2, 3), del(2, 3));
        assertThat(d.take()).containsExactly("+I(1,a,10)");
        assertThat(d.metrics.duplicateSequence).isZero();
        assertThat(d.metrics.tombstones).isEqualTo(1);
    }

    @Test
    void sameSequenceDifferentValuesLargerEncodingWinsInEitherOrder() {
        TestFlows.Scd1Driver ab = driver().apply(up(1, "a", 10, 5), up(1, "b", 10, 5));
        TestFlows.Scd1Driver ba = driver().apply(up(1, "b", 10, 5), up(1, "a", 10, 5));
        assertThat(ab.take()).containsExactly("+I(1,a,10)", "-U(1,a,10)", "+U(1,b,10)");
        assertThat(ba.take()).containsExactly("+I(1,b,10)");
        assertThat(ab.metrics.duplicateSequence).isEqualTo(1);
        assertThat(ba.metrics.duplicateSequence).isEqualTo(1);
    }

    @Test
    void sameSequenceDeleteWinsOverUpsertInEitherOrder() {
        TestFlows.Scd1Driver upFirst =
                driver().apply(up(1, "a", 10, 3), upd(1, "b", 11, 5), del(1, 5));
        assertThat(upFirst.take())
                .containsExactly("+I(1,a,10)", "-U(1,a,10)", "+U(1,b,11)", "-D(1,b,11)");
        TestFlows.Scd1Driver delFirst =
                driver().apply(up(1, "a", 10, 3), del(1, 5), upd(1, "b", 11, 5));
        assertThat(delFirst.take()).containsExactly("+I(1,a,10)", "-D(1,a,10)");
        assertThat(upFirst.metrics.duplicateSequence).isEqualTo(1);
        assertThat(delFirst.metrics.duplicateSequence).isEqualTo(1);
    }

    @Test
    void deleteOfLiveKeyEmitsCompleteRowAndLeavesTombstone() {
        TestFlows.Scd1Driver d = driver().apply(up(1, "a", 10, 5), del(1, 6));
        assertThat(d.take()).containsExactly("+I(1,a,10)", "-D(1,a,10)");
        assertThat(d.keys.get(1L).row).isNull();
        assertThat(d.keys.get(1L).tombstone).isNotNull();
        assertThat(d.metrics.tombstones).isEqualTo(1);
    }

    @Test
    void deleteOfUnknownKeyLeavesOnlyATombstone() {
        TestFlows.Scd1Driver d = driver().apply(del(7, 6));
        assertThat(d.take()).isEmpty();
        assertThat(d.keys.get(7L).tombstone).isNotNull();
        d.apply(up(7, "old", 1, 5)); // late upsert below the tombstone
        assertThat(d.take()).isEmpty();
        assertThat(d.metrics.late).isEqualTo(1);
    }

    @Test
    void lateUpsertBelowTombstoneIsIgnoredHigherOneRecreatesTheRow() {
        TestFlows.Scd1Driver d =
                driver().apply(
                                up(1, "a", 10, 5),
                                del(1, 8),
                                upd(1, "late", 1, 7),
                                upd(1, "new", 2, 9));
        assertThat(d.take()).containsExactly("+I(1,a,10)", "-D(1,a,10)", "+I(1,new,2)");
        assertThat(d.keys.get(1L).tombstone)
                .as("tombstone dropped once the row protects the key")
                .isNull();
    }

    @Test
    void lateDeleteIsIgnored() {
        TestFlows.Scd1Driver d = driver().apply(up(1, "a", 10, 5), del(1, 4));
        assertThat(d.take()).containsExactly("+I(1,a,10)");
        assertThat(d.metrics.late).isEqualTo(1);
    }

    @Test
    void truncateDeletesRowsBelowItAndStaysAsTableWideTombstone() {
        TestFlows.Scd1Driver d =
                driver().apply(up(1, "a", 1, 5), up(2, "b", 2, 20), up(3, "c", 3, 10));
        d.take();
        d.truncate(del(0, 10));
        assertThat(d.take()).containsExactly("-D(1,a,1)");
        d.apply(
                up(4, "late", 4, 9),
                upd(1, "late", 1, 6),
                up(5, "at", 5, 10),
                upd(1, "after", 7, 11));
        assertThat(d.take()).containsExactly("+I(5,at,5)", "+I(1,after,7)");
        d.truncate(del(0, 3)); // a lower truncate changes nothing
        assertThat(d.take()).isEmpty();
        assertThat(d.metrics.truncates).isEqualTo(2);
    }

    @Test
    void ignoreNullUpdatesOnAllColumns() {
        TestFlows.Scd1Driver d =
                new TestFlows.Scd1Driver(scd1().ignoreNullUpdates(ColumnSelection.all()).build());
        d.apply(
                up(1, null, 10, 1),
                upd(1, "a", null, 2),
                upd(1, null, null, 3),
                upd(1, null, 11, 4));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,null,10)", // a new key stores the nulls
                        "-U(1,null,10)",
                        "+U(1,a,10)",
                        "-U(1,a,10)",
                        "+U(1,a,11)");
        assertThat(d.metrics.noop).isEqualTo(1);
    }

    @Test
    void ignoreNullUpdatesOnListedColumnsAndExcept() {
        TestFlows.Scd1Driver on =
                new TestFlows.Scd1Driver(
                        scd1().ignoreNullUpdates(ColumnSelection.include(List.of("name"))).build());
        on.apply(up(1, "a", 10, 1), upd(1, null, null, 2));
        assertThat(on.take()).containsExactly("+I(1,a,10)", "-U(1,a,10)", "+U(1,a,null)");
        TestFlows.Scd1Driver except =
                new TestFlows.Scd1Driver(
                        scd1().ignoreNullUpdates(ColumnSelection.except(List.of("name"))).build());
        except.apply(up(1, "a", 10, 1), upd(1, null, null, 2));
        assertThat(except.take()).containsExactly("+I(1,a,10)", "-U(1,a,10)", "+U(1,null,10)");
    }

    @Test
    void ignoreNullUpdatesMergesNestedRowFields() {
        RowType addr =
                RowType.of(
                        new LogicalType[] {VarCharType.STRING_TYPE, VarCharType.STRING_TYPE},
                        new String[] {"city", "zip"});
        RowType source =
                RowType.of(
                        new LogicalType[] {new BigIntType(false), addr, new BigIntType()},
                        new String[] {"id", "addr", "seq"});
        AutoCdcSpec spec =
                AutoCdcSpec.builder("n", source)
                        .keys("id")
                        .sequenceBy("seq")
                        .ignoreNullUpdates(ColumnSelection.all())
                        .build();
        TestFlows.Scd1Driver d = new TestFlows.Scd1Driver(spec);
        d.apply(
                GenericRowData.of(
                        1L,
                        GenericRowData.of(
                                StringData.fromString("Bern"), StringData.fromString("3000")),
                        1L),
                GenericRowData.of(1L, GenericRowData.of(null, StringData.fromString("3001")), 2L),
                GenericRowData.of(1L, null, 3L));
        assertThat(d.take())
                .containsExactly(
                        "+I(1,+I(Bern,3000),1)",
                        "-U(1,+I(Bern,3000),1)",
                        "+U(1,+I(Bern,3001),2)",
                        "-U(1,+I(Bern,3001),2)",
                        "+U(1,+I(Bern,3001),3)");
    }

    @Test
    void ignoreNullUpdatesLateRecordChangesNothing() {
        // A2 exemption: sorted application would give (1,b,10); a late record is ignored instead
        TestFlows.Scd1Driver d =
                new TestFlows.Scd1Driver(scd1().ignoreNullUpdates(ColumnSelection.all()).build());
        d.apply(up(1, "a", null, 1), upd(1, null, 10, 3), upd(1, "b", null, 2));
        assertThat(d.take()).containsExactly("+I(1,a,null)", "-U(1,a,null)", "+U(1,a,10)");
        assertThat(d.metrics.late).isEqualTo(1);
    }

    @Test
    void columnsProjectionIncludeAndExcept() {
        TestFlows.Scd1Driver include =
                new TestFlows.Scd1Driver(
                        scd1().columns(ColumnSelection.include(List.of("id", "v", "_source_lsn")))
                                .build());
        include.apply(up(1, "a", 10, 5));
        assertThat(include.take()).containsExactly("+I(1,10,5)");
        TestFlows.Scd1Driver except =
                new TestFlows.Scd1Driver(
                        scd1().columns(ColumnSelection.except(List.of("name"))).build());
        except.apply(up(1, "a", 10, 5), upd(1, "changed only here", 10, 6));
        assertThat(except.take()).containsExactly("+I(1,10)");
        assertThat(except.metrics.noop).isEqualTo(1);
    }

    @Test
    void structSequenceComparesFieldByField() {
        RowType source =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            new IntType(),
                            VarCharType.STRING_TYPE,
                            new BigIntType()
                        },
                        new String[] {"id", "v", "file", "pos"});
        TestFlows.Scd1Driver d =
                new TestFlows.Scd1Driver(
                        AutoCdcSpec.builder("s", source)
                                .keys("id")
                                .sequenceBy("file", "pos")
                                .build());
        d.apply(
                GenericRowData.of(1L, 1, StringData.fromString("binlog.2"), 5L),
                GenericRowData.of(1L, 2, StringData.fromString("binlog.1"), 900L),
                GenericRowData.of(1L, 3, StringData.fromString("binlog.2"), 6L));
        assertThat(d.take())
                .containsExactly("+I(1,1,binlog.2,5)", "-U(1,1,binlog.2,5)", "+U(1,3,binlog.2,6)");
    }

    @Test
    void nullSequenceFailsLoudly() {
        TestFlows.Scd1Driver d = driver();
        assertThatThrownBy(
                        () ->
                                d.apply(
                                        GenericRowData.ofKind(
                                                RowKind.INSERT, 1L, null, null, null, null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("NULL_SEQUENCE");
    }

    @Test
    void scd2SpecIsRejected() {
        assertThatThrownBy(
                        () ->
                                new Scd1Logic(
                                        TestFlows.scd2().build(), new AutoCdcMetrics.Counting()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

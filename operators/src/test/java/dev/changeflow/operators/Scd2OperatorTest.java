package dev.changeflow.operators;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

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

    /**
     * A multi-column SEQUENCE BY ({@code file}, {@code pos}, as a MySQL binlog position): the
     * period columns are STRUCTs of the sequence, a late record splits a version by struct order
     * across a restart, and (id, __START_AT) stays unique; the target type declares the struct's
     * fields NOT NULL (they are the table's identifier fields, A4).
     */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void structSequenceVersionsSurviveSnapshotRestore(boolean rocksDb) throws Exception {
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
        assertThat(spec.targetType().asSummaryString())
                .isEqualTo(
                        "ROW<`id` BIGINT NOT NULL, `v` INT, `__START_AT` ROW<`file` STRING NOT NULL,"
                                + " `pos` BIGINT NOT NULL> NOT NULL, `__END_AT` ROW<`file` STRING,"
                                + " `pos` BIGINT>>");
        assertThat(spec.identifierFields()).containsExactly("id", "__START_AT");
        try (OperatorHarness h = new OperatorHarness(spec, rocksDb, false)) {
            h.apply(
                    GenericRowData.of(1L, 1, StringData.fromString("b.1"), 5L),
                    GenericRowData.of(1L, 2, StringData.fromString("b.2"), 1L));
            assertThat(h.take())
                    .containsExactly(
                            "+I(1,1,+I(b.1,5),null)",
                            "-U(1,1,+I(b.1,5),null)",
                            "+U(1,1,+I(b.1,5),+I(b.2,1))",
                            "+I(1,2,+I(b.2,1),null)");
            h.restart();
            // late: (b.1, 9) lies between (b.1, 5) and (b.2, 1); by numbers, not text, 9 < 10
            h.apply(
                    GenericRowData.of(1L, 3, StringData.fromString("b.1"), 9L),
                    GenericRowData.of(1L, 4, StringData.fromString("b.1"), 10L));
            assertThat(h.take())
                    .containsExactly(
                            "-U(1,1,+I(b.1,5),+I(b.2,1))",
                            "+U(1,1,+I(b.1,5),+I(b.1,9))",
                            "+I(1,3,+I(b.1,9),+I(b.2,1))",
                            "-U(1,3,+I(b.1,9),+I(b.2,1))",
                            "+U(1,3,+I(b.1,9),+I(b.1,10))",
                            "+I(1,4,+I(b.1,10),+I(b.2,1))");
            assertThat(h.table.snapshot())
                    .containsExactlyInAnyOrder(
                            "(1,1,+I(b.1,5),+I(b.1,9))",
                            "(1,3,+I(b.1,9),+I(b.1,10))",
                            "(1,4,+I(b.1,10),+I(b.2,1))",
                            "(1,2,+I(b.2,1),null)");
        }
    }
}

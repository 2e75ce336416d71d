package dev.changeflow.operators;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A column widened at the source over saved AUTO CDC state (semantics.md A7 item 4): the flow is
 * restored from a snapshot taken with {@code f FLOAT, d DECIMAL(10, 2)} (unscaled longs) and runs
 * with {@code f DOUBLE, d DECIMAL(20, 2)} (unscaled bytes). The stored rows are migrated at the
 * restore, so updates, deletes, no-op detection, IGNORE NULL UPDATES and SCD type 2 history give
 * exact rows: a stored 1.5f reads 1.5, a record carrying the stored values changes nothing. The
 * target table ({@link TestFlows.Materialized}) checks that every retraction carries the row the
 * table holds. Heap and RocksDB backends.
 */
class WideningOperatorTest {
    static RowType source(LogicalType f, LogicalType d) {
        return RowType.of(
                new LogicalType[] {new BigIntType(false), f, d, new BigIntType()},
                new String[] {"id", "f", "d", "_source_lsn"});
    }

    static final RowType NARROW = source(new FloatType(), new DecimalType(10, 2));
    static final RowType WIDE = source(new DoubleType(), new DecimalType(20, 2));

    static AutoCdcSpec.Builder spec(RowType source, ScdType type) {
        return AutoCdcSpec.builder("items", source)
                .metadataColumns(List.of("_source_lsn"))
                .keys("id")
                .sequenceBy("_source_lsn")
                .scdType(type);
    }

    /** An upsert of the narrow flow. */
    static RowData narrow(long id, Float f, String d, long lsn) {
        return GenericRowData.ofKind(RowKind.INSERT, id, f, dec(d, 10), lsn);
    }

    /** An upsert of the widened flow. */
    static RowData wide(long id, Double f, String d, long lsn) {
        return GenericRowData.ofKind(RowKind.INSERT, id, f, dec(d, 20), lsn);
    }

    static RowData delete(long id, long lsn) {
        return GenericRowData.ofKind(RowKind.DELETE, id, null, null, lsn);
    }

    static DecimalData dec(String v, int precision) {
        return v == null ? null : DecimalData.fromBigDecimal(new BigDecimal(v), precision, 2);
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd1RowsStoredNarrowUpdateDeleteAndNoOpExactlyAfterTheWidening(boolean rocksDb)
            throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(NARROW, ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(
                    narrow(1, 1.5f, "12.34", 10),
                    narrow(2, 2.25f, "-7.50", 11),
                    narrow(3, null, "99999999.99", 12));
            assertThat(h.take())
                    .containsExactly(
                            "+I(1,1.5,12.34)", "+I(2,2.25,-7.50)", "+I(3,null,99999999.99)");
            h.restartWith(spec(WIDE, ScdType.TYPE_1).build());
            // the same values, now typed DOUBLE / DECIMAL(20, 2): no change
            h.apply(wide(1, 1.5, "12.34", 13), wide(3, null, "99999999.99", 14));
            assertThat(h.take()).isEmpty();
            h.apply(
                    wide(2, 3.5, "-7.50", 15),
                    delete(3, 16),
                    wide(4, 0.1, "123456789012345678.99", 17),
                    wide(1, 1.5, "12.35", 18));
            assertThat(h.take())
                    .containsExactly(
                            "-U(2,2.25,-7.50)",
                            "+U(2,3.5,-7.50)",
                            "-D(3,null,99999999.99)",
                            "+I(4,0.1,123456789012345678.99)",
                            "-U(1,1.5,12.34)",
                            "+U(1,1.5,12.35)");
            // a late record below the stored sequence is ignored (A3), the stored one compared
            h.apply(wide(2, 9.0, "1.00", 12));
            assertThat(h.take()).isEmpty();
            h.restart(); // the widened type is recorded now: nothing to migrate
            h.apply(wide(2, 3.5, "-7.50", 19));
            assertThat(h.take()).isEmpty();
            assertThat(h.table.snapshot())
                    .containsExactly(
                            "(1,1.5,12.35)", "(2,3.5,-7.50)", "(4,0.1,123456789012345678.99)");
        }
    }

    /**
     * State of a release before the row-type record, restored in the same restart as the widening:
     * the flow carries the table's pre-widening types ({@link AutoCdcSpec#unrecordedStateTypes()},
     * recorded by the widening), so the stored rows are read as FLOAT / DECIMAL(10, 2) and
     * migrated, values exact.
     */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void stateOfAnEarlierReleaseIsReadInThePreWideningTypes(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(NARROW, ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(narrow(1, 1.5f, "12.34", 10), narrow(2, 2.25f, "-7.50", 11));
            assertThat(h.take()).containsExactly("+I(1,1.5,12.34)", "+I(2,2.25,-7.50)");
            h.restartFromEarlierReleaseWith(
                    spec(WIDE, ScdType.TYPE_1)
                            .build()
                            .withUnrecordedStateTypes(
                                    java.util.Map.of("f", "FLOAT", "d", "DECIMAL(10, 2)")));
            h.apply(wide(1, 1.5, "12.34", 13));
            assertThat(h.take()).isEmpty();
            h.apply(wide(2, 3.5, "-7.50", 14));
            assertThat(h.take()).containsExactly("-U(2,2.25,-7.50)", "+U(2,3.5,-7.50)");
            h.restart(); // recorded now: the pre-widening types are not used again
            h.apply(wide(2, 3.5, "-7.50", 15));
            assertThat(h.take()).isEmpty();
            assertThat(h.table.snapshot()).containsExactly("(1,1.5,12.34)", "(2,3.5,-7.50)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd1WithTruncatesMigratesToo(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(
                        spec(NARROW, ScdType.TYPE_1).truncateEnabled(true).build(),
                        rocksDb,
                        true)) {
            h.apply(narrow(1, 1.5f, "12.34", 10), narrow(2, 2.25f, "99999999.99", 11));
            h.take();
            h.restartWith(spec(WIDE, ScdType.TYPE_1).truncateEnabled(true).build());
            h.apply(wide(1, 1.5, "12.34", 12));
            assertThat(h.take()).isEmpty();
            h.apply(wide(3, 4.0, "1.00", 30));
            // the truncate's deletes carry the migrated rows
            h.truncate(delete(0, 20));
            assertThat(h.take())
                    .containsExactlyInAnyOrder(
                            "+I(3,4.0,1.00)", "-D(1,1.5,12.34)", "-D(2,2.25,99999999.99)");
            assertThat(h.table.snapshot()).containsExactly("(3,4.0,1.00)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void ignoreNullUpdatesKeepsTheMigratedValues(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(
                        spec(NARROW, ScdType.TYPE_1)
                                .ignoreNullUpdates(ColumnSelection.include(List.of("f", "d")))
                                .build(),
                        rocksDb,
                        false)) {
            h.apply(narrow(1, 1.5f, "12.34", 10));
            h.restartWith(
                    spec(WIDE, ScdType.TYPE_1)
                            .ignoreNullUpdates(ColumnSelection.include(List.of("f", "d")))
                            .build());
            h.take();
            h.apply(wide(1, null, null, 11)); // merged: the stored values, no change
            assertThat(h.take()).isEmpty();
            h.apply(wide(1, null, "5.00", 12));
            assertThat(h.take()).containsExactly("-U(1,1.5,12.34)", "+U(1,1.5,5.00)");
            assertThat(h.table.snapshot()).containsExactly("(1,1.5,5.00)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd2HistoryStoredNarrowKeepsItsVersionsAfterTheWidening(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(NARROW, ScdType.TYPE_2).build(), rocksDb, false)) {
            h.apply(
                    narrow(1, 1.5f, "1.00", 10),
                    narrow(1, 2.5f, "1.00", 20),
                    narrow(1, 2.5f, "2.00", 30));
            // key 2: a same-sequence replacement (A2: the larger encoded row wins, here 1.00 as
            // an unscaled long; as unscaled bytes 2.00 would be the larger)
            h.apply(narrow(2, 1f, "2.00", 10), narrow(2, 1f, "1.00", 10));
            h.take();
            assertThat(h.table.snapshot())
                    .containsExactly(
                            "(1,1.5,1.00,10,20)",
                            "(1,2.5,1.00,20,30)",
                            "(1,2.5,2.00,30,null)",
                            "(2,1.0,1.00,10,null)");
            h.restartWith(spec(WIDE, ScdType.TYPE_2).build());
            // in order, same values: a no-op
            h.apply(wide(1, 2.5, "2.00", 40));
            assertThat(h.take()).isEmpty();
            // late, inside [10, 20) with its values (read from the migrated history): no change
            h.apply(wide(1, 1.5, "1.00", 15));
            assertThat(h.take()).isEmpty();
            // late, other values: splits [20, 30)
            h.apply(wide(1, 7.0, "1.00", 25));
            assertThat(h.take())
                    .containsExactly(
                            "-U(1,2.5,1.00,20,30)", "+U(1,2.5,1.00,20,25)", "+I(1,7.0,1.00,25,30)");
            h.apply(wide(1, 3.5, "2.00", 50), delete(2, 20));
            assertThat(h.take())
                    .containsExactly(
                            "-U(1,2.5,2.00,30,null)",
                            "+U(1,2.5,2.00,30,50)",
                            "+I(1,3.5,2.00,50,null)",
                            "-U(2,1.0,1.00,10,null)",
                            "+U(2,1.0,1.00,10,20)");
            // key 2's history path: a late record at 5 with the values of the version at 10
            h.apply(wide(2, 1.0, "1.00", 5));
            assertThat(h.take()).containsExactly("-D(2,1.0,1.00,10,20)", "+I(2,1.0,1.00,5,20)");
            assertThat(h.table.snapshot())
                    .containsExactly(
                            "(1,1.5,1.00,10,20)",
                            "(1,2.5,1.00,20,25)",
                            "(1,7.0,1.00,25,30)",
                            "(1,2.5,2.00,30,50)",
                            "(1,3.5,2.00,50,null)",
                            "(2,1.0,1.00,5,20)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void aDecimalScaleChangeFailsTheRestore(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(NARROW, ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(narrow(1, 1.5f, "12.34", 10));
            RowType rescaled = source(new FloatType(), new DecimalType(10, 3));
            assertThatThrownBy(() -> h.restartWith(spec(rescaled, ScdType.TYPE_1).build()))
                    .hasStackTraceContaining(
                            "flow 'items': the saved AUTO CDC state cannot be read with the"
                                    + " flow's columns: column 'd' is DECIMAL(10, 2) in the saved"
                                    + " state's rows and DECIMAL(10, 3) in the flow");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void aNonPromotionFailsTheRestore(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(WIDE, ScdType.TYPE_2).build(), rocksDb, false)) {
            h.apply(wide(1, 1.5, "12.34", 10));
            // DOUBLE → FLOAT narrows; the planner refuses it first (INCOMPATIBLE_TYPE_CHANGE)
            assertThatThrownBy(() -> h.restartWith(spec(NARROW, ScdType.TYPE_2).build()))
                    .hasStackTraceContaining(
                            "column 'f' is DOUBLE in the saved state's rows and FLOAT in the"
                                    + " flow: not a widening the state can follow");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void aTextColumnFailsTheRestore(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(NARROW, ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(narrow(1, 1.5f, "12.34", 10));
            RowType text = source(VarCharType.STRING_TYPE, new DecimalType(20, 2));
            assertThatThrownBy(() -> h.restartWith(spec(text, ScdType.TYPE_1).build()))
                    .hasStackTraceContaining(
                            "column 'f' is FLOAT in the saved state's rows and STRING in the flow");
        }
    }
}

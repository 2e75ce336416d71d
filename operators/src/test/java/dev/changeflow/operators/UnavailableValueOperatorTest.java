package dev.changeflow.operators;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static dev.changeflow.operators.TestFlows.str;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Unavailable values (PostgreSQL TOAST placeholder, semantics.md A3, A4) in the AUTO CDC operators'
 * harnesses: a marked column keeps the stored value (SCD type 1 and 2, across snapshot → restore);
 * a key without a stored row quarantines the record as {@code UNAVAILABLE_VALUE}.
 */
class UnavailableValueOperatorTest {
    /** id BIGINT NOT NULL, body STRING, v INT, then metadata _source_lsn, _unavailable_columns. */
    static final RowType SOURCE =
            RowType.of(
                    new LogicalType[] {
                        new BigIntType(false),
                        VarCharType.STRING_TYPE,
                        new IntType(),
                        new BigIntType(),
                        new VarBinaryType(VarBinaryType.MAX_LENGTH)
                    },
                    new String[] {"id", "body", "v", "_source_lsn", "_unavailable_columns"});

    /** Mask of {@code body} (source column 1). */
    static final byte[] BODY = {2};

    static final String BODY_DETAIL =
            "UNAVAILABLE_VALUE: columns [body] carry the connector's unavailable-value placeholder"
                    + " and the key has no ";

    static AutoCdcSpec.Builder spec(ScdType type) {
        return AutoCdcSpec.builder("docs", SOURCE)
                .metadataColumns(List.of("_source_lsn", "_unavailable_columns"))
                .keys("id")
                .sequenceBy("_source_lsn")
                .scdType(type);
    }

    static RowData up(long id, String body, int v, long lsn, byte[] unavailable) {
        return GenericRowData.ofKind(RowKind.INSERT, id, str(body), v, lsn, unavailable);
    }

    static RowData del(long id, long lsn) {
        return GenericRowData.ofKind(RowKind.DELETE, id, null, null, lsn, null);
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd1KeepsTheStoredValueAndQuarantinesAKeyWithoutRow(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(up(1, null, 5, 10, BODY), up(1, "big", 1, 11, null));
            assertThat(h.take()).containsExactly("+I(1,big,1)");
            h.apply(up(1, null, 2, 12, BODY));
            assertThat(h.take()).containsExactly("-U(1,big,1)", "+U(1,big,2)");
            h.restart();
            // only the unavailable column would change: a no-op, the stored value stays
            h.apply(up(1, null, 2, 13, BODY));
            assertThat(h.take()).isEmpty();
            h.apply(del(1, 14), up(1, null, 3, 15, BODY));
            assertThat(h.take()).containsExactly("-D(1,big,2)");
            assertThat(h.table.snapshot()).isEmpty();
            assertThat(h.quarantined())
                    .containsExactly(
                            BODY_DETAIL
                                    + "stored row to keep their values from | +I(1,null,5,10,[2])",
                            BODY_DETAIL
                                    + "stored row to keep their values from | +I(1,null,3,15,[2])");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd1WithTruncatesQuarantinesThroughItsSideOutputToo(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(
                        spec(ScdType.TYPE_1).truncateEnabled(true).build(), rocksDb, true)) {
            h.apply(up(1, null, 5, 10, BODY), up(1, "big", 1, 11, null), up(1, null, 2, 12, BODY));
            assertThat(h.take()).containsExactly("+I(1,big,1)", "-U(1,big,1)", "+U(1,big,2)");
            assertThat(h.quarantined())
                    .containsExactly(
                            BODY_DETAIL
                                    + "stored row to keep their values from | +I(1,null,5,10,[2])");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void aMarkedColumnOutsideColumnsIsIgnored(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(
                        spec(ScdType.TYPE_1)
                                .columns(ColumnSelection.include(List.of("id", "v")))
                                .build(),
                        rocksDb,
                        false)) {
            h.apply(up(1, null, 5, 10, BODY));
            assertThat(h.take()).containsExactly("+I(1,5)");
            assertThat(h.quarantined()).isEmpty();
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd2TakesTheValueFromTheEntryBelowInSequenceOrder(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(ScdType.TYPE_2).build(), rocksDb, false)) {
            h.apply(up(1, null, 5, 10, BODY), up(1, "big", 1, 11, null));
            assertThat(h.take()).containsExactly("+I(1,big,1,11,null)");
            h.apply(up(1, null, 2, 20, BODY));
            assertThat(h.table.snapshot()).containsExactly("(1,big,1,11,20)", "(1,big,2,20,null)");
            h.restart();
            // late, between 11 and 20: body from the entry at 11
            h.apply(up(1, null, 9, 15, BODY));
            assertThat(h.table.snapshot())
                    .containsExactly("(1,big,1,11,15)", "(1,big,9,15,20)", "(1,big,2,20,null)");
            // late, below every entry: nothing to take the value from
            h.apply(up(1, null, 0, 5, BODY));
            // after a delete: the entry below is the delete
            h.apply(del(1, 30), up(1, null, 3, 31, BODY));
            assertThat(h.table.snapshot())
                    .containsExactly("(1,big,1,11,15)", "(1,big,9,15,20)", "(1,big,2,20,30)");
            assertThat(h.quarantined())
                    .containsExactly(
                            BODY_DETAIL
                                    + "stored row below this record to keep their values from"
                                    + " | +I(1,null,5,10,[2])",
                            BODY_DETAIL
                                    + "stored row below this record to keep their values from"
                                    + " | +I(1,null,0,5,[2])",
                            BODY_DETAIL
                                    + "stored row below this record to keep their values from"
                                    + " | +I(1,null,3,31,[2])");
        }
    }

    /**
     * A MongoDB partial update (A5) marks the columns it did not carry with the partial-update bit
     * (bit 5 here, one past the last source column): a key without a stored row is quarantined
     * saying the columns were not in the update; every quarantined record is counted in {@code
     * quarantined}.
     */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void partialUpdateOfAKeyWithoutRowSaysTheColumnsWereNotInTheUpdate(boolean rocksDb)
            throws Exception {
        byte[] partial = {(byte) (BODY[0] | 1 << 5)};
        assertThat(AutoCdcSpec.isPartialUpdateMask(partial, SOURCE.getFieldCount())).isTrue();
        assertThat(AutoCdcSpec.isPartialUpdateMask(BODY, SOURCE.getFieldCount())).isFalse();
        String detail =
                "UNAVAILABLE_VALUE: columns [body] were not in the MongoDB partial update (an"
                        + " update without the full document) and the key has no ";
        try (OperatorHarness h =
                new OperatorHarness(spec(ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(up(1, null, 5, 10, partial), up(2, null, 6, 11, BODY));
            h.apply(up(1, "big", 1, 12, null), up(1, null, 2, 13, partial));
            assertThat(h.take()).containsExactly("+I(1,big,1)", "-U(1,big,1)", "+U(1,big,2)");
            assertThat(h.quarantined())
                    .containsExactly(
                            detail + "stored row to keep their values from | +I(1,null,5,10,[34])",
                            BODY_DETAIL
                                    + "stored row to keep their values from | +I(2,null,6,11,[2])");
            assertThat(quarantinedCount(h)).isEqualTo(2);
        }
        try (OperatorHarness h =
                new OperatorHarness(spec(ScdType.TYPE_2).build(), rocksDb, false)) {
            h.apply(up(1, null, 5, 10, partial));
            assertThat(h.quarantined())
                    .containsExactly(
                            detail
                                    + "stored row below this record to keep their values from"
                                    + " | +I(1,null,5,10,[34])");
            assertThat(quarantinedCount(h)).isEqualTo(1);
        }
    }

    private static long quarantinedCount(OperatorHarness h) {
        return ((AutoCdcApplyOperator) h.harness().getOperator()).quarantinedRecords();
    }
}

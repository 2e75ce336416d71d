package dev.changeflow.operators;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static dev.changeflow.operators.TestFlows.str;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Changes whose image lacked a column (semantics.md A7 item 1: decoded with null there) in the AUTO
 * CDC operators' harnesses, across snapshot → restore: a change written after the source dropped
 * {@code region} stores null from then on (SCD type 1 and 2), IGNORE NULL UPDATES keeps the stored
 * value instead, and the changes written before {@code n} was added, applied again after a restore
 * (the add-columns restart), give the same rows.
 */
class SchemaEvolutionOperatorTest {
    /** id BIGINT NOT NULL, region STRING, n BIGINT, then metadata _source_lsn. */
    static final RowType SOURCE =
            RowType.of(
                    new LogicalType[] {
                        new BigIntType(false),
                        VarCharType.STRING_TYPE,
                        new BigIntType(),
                        new BigIntType()
                    },
                    new String[] {"id", "region", "n", "_source_lsn"});

    static AutoCdcSpec.Builder spec(ScdType type) {
        return AutoCdcSpec.builder("items", SOURCE)
                .metadataColumns(List.of("_source_lsn"))
                .keys("id")
                .sequenceBy("_source_lsn")
                .scdType(type);
    }

    /** An upsert as the decoder emits it: an absent column is null. */
    static RowData up(long id, String region, Long n, long lsn) {
        return GenericRowData.ofKind(RowKind.INSERT, id, str(region), n, lsn);
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd1ReplaysTheChangesBeforeAnAddedColumnAndNullsADroppedOne(boolean rocksDb)
            throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(ScdType.TYPE_1).build(), rocksDb, false)) {
            h.apply(up(1, "a", null, 10));
            h.barrier(); // the checkpoint the add-columns restart resumes from
            assertThat(h.take()).containsExactly("+I(1,a,null)");
            h.restart();
            // read again after the restart: written before n existed (null), then with n
            h.apply(up(1, "b", null, 11), up(2, "c", null, 12), up(1, "b", 5L, 13));
            assertThat(h.table.snapshot()).containsExactly("(1,b,5)", "(2,c,null)");
            h.restart();
            // region dropped at the source: null from then on
            h.apply(up(1, null, 6L, 14));
            assertThat(h.table.snapshot()).containsExactly("(1,null,6)", "(2,c,null)");
            assertThat(h.quarantined()).isEmpty();
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void ignoreNullUpdatesKeepsTheValueOfADroppedColumn(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(
                        spec(ScdType.TYPE_1)
                                .ignoreNullUpdates(ColumnSelection.include(List.of("region")))
                                .build(),
                        rocksDb,
                        false)) {
            h.apply(up(1, "a", 5L, 10));
            h.restart();
            h.apply(up(1, null, null, 11), up(2, null, 7L, 12));
            // region kept (covered), n set null (not covered); a new key gets null
            assertThat(h.table.snapshot()).containsExactly("(1,a,null)", "(2,null,7)");
        }
    }

    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void scd2HistoryShowsTheColumnAppearingAndTheDrop(boolean rocksDb) throws Exception {
        try (OperatorHarness h =
                new OperatorHarness(spec(ScdType.TYPE_2).build(), rocksDb, false)) {
            h.apply(up(1, "a", null, 10), up(1, "a", 5L, 20));
            h.restart();
            h.apply(up(1, null, 5L, 30));
            // late, written before n existed: lands below the first version with n
            h.apply(up(1, "z", null, 15));
            assertThat(h.table.snapshot())
                    .containsExactlyInAnyOrder(
                            "(1,a,null,10,15)",
                            "(1,z,null,15,20)",
                            "(1,a,5,20,30)",
                            "(1,null,5,30,null)");
        }
    }
}

package dev.changeflow.operators;

import dev.changeflow.operators.AutoCdcException.Code;

import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.changeflow.operators.TestFlows.scd1;
import static dev.changeflow.operators.TestFlows.scd2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every A1 definition rule, each with its own error code and a message naming the clause. */
class AutoCdcSpecValidatorTest {
    static final RowType WIDE =
            RowType.of(
                    new LogicalType[] {
                        new BigIntType(false),
                        new DoubleType(),
                        RowType.of(new IntType()),
                        new MapType(new IntType(), new IntType()),
                        new ArrayType(new IntType()),
                        new BigIntType(),
                        VarCharType.STRING_TYPE,
                        new TimestampType(3)
                    },
                    new String[] {
                        "id", "price", "nested", "tags", "arr", "lsn", "__changeflow_x", "ts"
                    });

    private static void rejects(ThrowingCallable build, Code code, String... fragments) {
        assertThatThrownBy(build)
                .isInstanceOfSatisfying(
                        AutoCdcException.class, e -> assertThat(e.code()).isEqualTo(code))
                .hasMessageContainingAll(fragments);
    }

    private static AutoCdcSpec.Builder wide() {
        return AutoCdcSpec.builder("w", WIDE)
                .keys("id")
                .sequenceBy("lsn")
                .columns(ColumnSelection.except(List.of("__changeflow_x")));
    }

    @Test
    void keysRules() {
        rejects(() -> scd1().keys(List.of()).build(), Code.EMPTY_KEYS, "KEYS");
        rejects(() -> scd1().keys("nope").build(), Code.KEY_NOT_IN_SOURCE, "KEYS", "'nope'");
        rejects(
                () -> wide().keys("price").build(),
                Code.KEY_TYPE_NOT_SUPPORTED,
                "KEYS",
                "'price'",
                "DOUBLE");
        rejects(() -> wide().keys("nested").build(), Code.KEY_TYPE_NOT_SUPPORTED, "'nested'");
        rejects(
                () -> scd1().columns(ColumnSelection.except(List.of("id"))).build(),
                Code.KEY_DROPPED_BY_COLUMNS,
                "COLUMNS",
                "'id'");
        rejects(
                () -> scd1().columns(ColumnSelection.include(List.of("name"))).build(),
                Code.KEY_DROPPED_BY_COLUMNS,
                "'id'");
    }

    @Test
    void sequenceRules() {
        rejects(() -> scd1().sequenceBy(List.of()).build(), Code.EMPTY_SEQUENCE, "SEQUENCE BY");
        rejects(
                () -> scd1().sequenceBy("ts_ms").build(),
                Code.SEQUENCE_NOT_IN_SOURCE,
                "SEQUENCE BY",
                "'ts_ms'");
        rejects(
                () -> wide().sequenceBy("tags").build(),
                Code.SEQUENCE_NOT_ORDERABLE,
                "SEQUENCE BY",
                "'tags'",
                "MAP");
        rejects(() -> wide().sequenceBy("arr").build(), Code.SEQUENCE_NOT_ORDERABLE, "'arr'");
        rejects(() -> wide().sequenceBy("nested").build(), Code.SEQUENCE_NOT_ORDERABLE, "'nested'");
        rejects(
                () -> wide().sequenceBy("lsn", "price").build(),
                Code.SEQUENCE_NOT_ORDERABLE,
                "'price'");
        assertThat(wide().sequenceBy("ts", "lsn").build().sequenceType().asSummaryString())
                .isEqualTo("ROW<`ts` TIMESTAMP(3), `lsn` BIGINT>");
    }

    @Test
    void scdTypeRules() {
        rejects(
                () -> scd2().truncateWhen("_op = 't'").build(),
                Code.TRUNCATE_REQUIRES_SCD1,
                "TRUNCATE",
                "SCD TYPE 1");
        rejects(
                () -> scd2().truncateEnabled(true).build(),
                Code.TRUNCATE_REQUIRES_SCD1,
                "TRUNCATE");
        rejects(
                () -> scd1().trackHistory(ColumnSelection.all()).build(),
                Code.TRACK_HISTORY_REQUIRES_SCD2,
                "TRACK HISTORY",
                "SCD TYPE 2");
    }

    @Test
    void reservedColumnNames() {
        rejects(
                () -> AutoCdcSpec.builder("w", WIDE).keys("id").sequenceBy("lsn").build(),
                Code.RESERVED_COLUMN_NAME,
                "'__changeflow_x'",
                "__changeflow_");
        RowType withStart =
                RowType.of(
                        new LogicalType[] {new BigIntType(false), new BigIntType(), new IntType()},
                        new String[] {"id", "lsn", "__start_at"});
        rejects(
                () ->
                        AutoCdcSpec.builder("s", withStart)
                                .keys("id")
                                .sequenceBy("lsn")
                                .scdType(ScdType.TYPE_2)
                                .build(),
                Code.RESERVED_COLUMN_NAME,
                "'__start_at'");
        assertThat(
                        AutoCdcSpec.builder("s", withStart)
                                .keys("id")
                                .sequenceBy("lsn")
                                .build()
                                .targetType()
                                .getFieldNames())
                .as("SCD1 may keep such a column")
                .contains("__start_at");
    }

    @Test
    void unknownColumnsInColumnLists() {
        rejects(
                () -> scd1().columns(ColumnSelection.include(List.of("id", "nope"))).build(),
                Code.UNKNOWN_COLUMN,
                "COLUMNS",
                "'nope'");
        rejects(
                () -> scd1().columns(ColumnSelection.except(List.of("nope"))).build(),
                Code.UNKNOWN_COLUMN,
                "'nope'");
        rejects(
                () -> scd1().ignoreNullUpdates(ColumnSelection.include(List.of("nope"))).build(),
                Code.UNKNOWN_COLUMN,
                "IGNORE NULL UPDATES",
                "'nope'");
        rejects(
                () -> scd1().ignoreNullUpdates(ColumnSelection.except(List.of("_op"))).build(),
                Code.UNKNOWN_COLUMN,
                "'_op'");
        rejects(
                () -> scd2().trackHistory(ColumnSelection.include(List.of("nope"))).build(),
                Code.UNKNOWN_COLUMN,
                "TRACK HISTORY",
                "'nope'");
    }

    @Test
    void targetTypes() {
        assertThat(scd1().build().targetType().asSummaryString())
                .isEqualTo("ROW<`id` BIGINT NOT NULL, `name` STRING, `v` INT>");
        assertThat(scd2().build().targetType().asSummaryString())
                .isEqualTo(
                        "ROW<`id` BIGINT NOT NULL, `name` STRING, `v` INT, `__START_AT` BIGINT NOT NULL, `__END_AT` BIGINT>");
    }

    @Test
    void existingTargetMustMatch() {
        AutoCdcSpec spec = scd2().build();
        // what an Iceberg round trip gives back: same names, types normalized, nullability relaxed
        RowType ok =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            new VarCharType(VarCharType.MAX_LENGTH),
                            new IntType(),
                            new BigIntType(false),
                            new BigIntType()
                        },
                        new String[] {"__START_AT", "name", "v", "id", "__END_AT"}.clone());
        RowType reordered =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            VarCharType.STRING_TYPE,
                            new IntType(),
                            new BigIntType(false),
                            new BigIntType()
                        },
                        new String[] {"id", "name", "v", "__START_AT", "__END_AT"});
        AutoCdcSpecValidator.validateExistingTarget(spec, reordered);
        AutoCdcSpecValidator.validateExistingTarget(spec, ok);

        RowType wrongPeriod =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            VarCharType.STRING_TYPE,
                            new IntType(),
                            new TimestampType(6),
                            new TimestampType(6)
                        },
                        new String[] {"id", "name", "v", "__START_AT", "__END_AT"});
        rejects(
                () -> AutoCdcSpecValidator.validateExistingTarget(spec, wrongPeriod),
                Code.TARGET_SCHEMA_MISMATCH,
                "'__START_AT'",
                "SEQUENCE BY type",
                "'__END_AT'");
        RowType missingAndExtra =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false), VarCharType.STRING_TYPE, new IntType(false)
                        },
                        new String[] {"id", "name", "other"});
        rejects(
                () -> AutoCdcSpecValidator.validateExistingTarget(scd1().build(), missingAndExtra),
                Code.TARGET_SCHEMA_MISMATCH,
                "'v'",
                "missing",
                "'other'");
        RowType notNull =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            new VarCharType(false, VarCharType.MAX_LENGTH),
                            new IntType()
                        },
                        new String[] {"id", "name", "v"});
        rejects(
                () -> AutoCdcSpecValidator.validateExistingTarget(scd1().build(), notNull),
                Code.TARGET_SCHEMA_MISMATCH,
                "'name'",
                "NOT NULL");
        RowType wrongType =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false), VarCharType.STRING_TYPE, new BigIntType()
                        },
                        new String[] {"id", "name", "v"});
        rejects(
                () -> AutoCdcSpecValidator.validateExistingTarget(scd1().build(), wrongType),
                Code.TARGET_SCHEMA_MISMATCH,
                "'v'",
                "BIGINT",
                "INT");
    }
}

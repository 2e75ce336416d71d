package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.SchemaChangeException;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The restart-loop guard of add-columns launches (A7): a schema change met twice fails. */
class SchemaChangeRepeatsTest {
    private static SchemaChangeException change(long offset, RowType.RowField... columns) {
        return new SchemaChangeException(
                "items", "items", "p2.jsonl", null, offset, List.of(columns));
    }

    private static RowType.RowField price() {
        return new RowType.RowField("price", new DoubleType());
    }

    @Test
    void theSameChangeAtTheSameRecordTwiceFailsNamingTheRecordAndTheChangesMade() {
        SchemaChangeRepeats repeats = new SchemaChangeRepeats();
        repeats.check(change(3, price()), List.of());
        assertThatThrownBy(
                        () ->
                                repeats.check(
                                        change(3, price()), List.of("shop.items: + price DOUBLE")))
                .isInstanceOfSatisfying(
                        ChangeRecordException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuarantineReason.SCHEMA_CHANGED))
                .hasMessageContaining("p2.jsonl")
                .hasMessageContaining("the same schema change came back")
                .hasMessageContaining("evolved: shop.items: + price DOUBLE")
                .hasMessageContaining("stopping instead of looping");
    }

    @Test
    void changesAtOtherRecordsOrWithOtherColumnsAreProgress() {
        SchemaChangeRepeats repeats = new SchemaChangeRepeats();
        repeats.check(change(3, price()), List.of());
        repeats.check(change(5, price()), List.of());
        repeats.check(
                change(3, price(), new RowType.RowField("stock", new BigIntType())), List.of());
    }
}

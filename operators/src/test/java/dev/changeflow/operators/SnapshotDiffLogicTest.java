package dev.changeflow.operators;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.changeflow.operators.SnapshotDiffLogic.Outcome.DUPLICATE;
import static dev.changeflow.operators.SnapshotDiffLogic.Outcome.INSERT;
import static dev.changeflow.operators.SnapshotDiffLogic.Outcome.LATE;
import static dev.changeflow.operators.SnapshotDiffLogic.Outcome.UNCHANGED;
import static dev.changeflow.operators.SnapshotDiffLogic.Outcome.UPDATE;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link SnapshotDiffLogic} without Flink (semantics.md A6). */
class SnapshotDiffLogicTest {
    static RowData row(String city, String note, long version) {
        return GenericRowData.of(
                1L, StringData.fromString(city), StringData.fromString(note), version);
    }

    @Test
    void decidesPerKeyFromVersionAndHash() {
        AutoCdcSpec spec =
                SnapshotOperatorTest.flow(new BigIntType(), "city", "note")
                        .columns(ColumnSelection.except(List.of("note")))
                        .build();
        SnapshotDiffLogic logic = new SnapshotDiffLogic(spec);
        assertThat(logic.apply(null, 1, row("Lyon", "a", 1))).isEqualTo(INSERT);
        byte[] v1 = logic.nextValue();
        assertThat(v1).hasSize(25);
        // the version is no value, and a column the target does not store is no change
        assertThat(logic.apply(v1, 2, row("Lyon", "b", 2))).isEqualTo(UNCHANGED);
        byte[] v2 = logic.nextValue();
        assertThat(logic.apply(v2, 3, row("Porto", "b", 3))).isEqualTo(UPDATE);
        byte[] v3 = logic.nextValue();
        assertThat(logic.apply(v3, 3, row("Porto", "b", 3))).isEqualTo(DUPLICATE);
        assertThat(logic.apply(v3, 2, row("Graz", "b", 2))).isEqualTo(LATE);
        assertThat(SnapshotDiffLogic.absent(v3, 4)).isTrue();
        assertThat(SnapshotDiffLogic.absent(v3, 3)).isFalse();
    }
}

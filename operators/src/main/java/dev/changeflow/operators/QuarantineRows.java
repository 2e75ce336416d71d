package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;

import java.nio.charset.StandardCharsets;

/**
 * Builds the quarantine rows ({@link QuarantineRecords#ROW_TYPE}) of source records the AUTO CDC
 * operator cannot apply (semantics.md A3, A4, A5): {@code flow} = the flow's name, {@code source} =
 * {@code "flow <name>"}, no partition, {@code offset} -1 (the record's position is not known after
 * the keyBy), {@code raw} = the decoded source row as text ({@code +I(1,abc,...)}).
 */
@Internal
final class QuarantineRows {
    private final String flow;
    private final RowData.FieldGetter[] getters;

    QuarantineRows(AutoCdcSpec spec) {
        this.flow = spec.name();
        this.getters = new RowData.FieldGetter[spec.sourceType().getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(spec.sourceType().getTypeAt(i), i);
        }
    }

    RowData row(RowData record, QuarantineReason reason, String detail) {
        GenericRowData copy = new GenericRowData(record.getRowKind(), getters.length);
        for (int i = 0; i < getters.length; i++) {
            copy.setField(i, getters[i].getFieldOrNull(record));
        }
        return QuarantineRecords.of(
                flow,
                "flow " + flow,
                null,
                -1L,
                copy.toString().getBytes(StandardCharsets.UTF_8),
                reason,
                detail,
                System.currentTimeMillis());
    }
}

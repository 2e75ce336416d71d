package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;

import java.nio.charset.StandardCharsets;

/**
 * Builds the quarantine rows ({@link QuarantineRecords#ROW_TYPE}) of source records the AUTO CDC
 * operator cannot apply (semantics.md A3, A4, A5): {@code flow} = the flow's name, {@code source} =
 * {@code "flow <name>"}, no partition, {@code offset} -1, {@code raw} = the decoded source row as
 * text ({@code +I(1,abc,...)}: KEYS, values and the SEQUENCE BY metadata, which find the record in
 * the source), and counts them in the counter {@code quarantined} (the run summary's count).
 *
 * <p>Why not the record's own source, offset and raw JSON: the operator sees the decoded row after
 * the keyBy, which carries neither (the decoder keeps them only until it has decoded the record).
 * Carrying them would add a position and the raw bytes to every record with an unavailable column —
 * on a table with a large TOAST column that is most updates — through the network shuffle, and
 * change every flow's source row type, for a record that is rarely quarantined.
 */
@Internal
final class QuarantineRows {
    /** The counter of quarantined records, as the decoders name theirs. */
    static final String COUNTER = "quarantined";

    private final String flow;
    private final RowData.FieldGetter[] getters;
    private final Counter quarantined;

    /**
     * @param quarantined counts every row built (registered as {@link #COUNTER})
     */
    QuarantineRows(AutoCdcSpec spec, Counter quarantined) {
        this.quarantined = quarantined;
        this.flow = spec.name();
        this.getters = new RowData.FieldGetter[spec.sourceType().getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(spec.sourceType().getTypeAt(i), i);
        }
    }

    /** The quarantine row of {@code record}; counts it. */
    RowData row(RowData record, QuarantineReason reason, String detail) {
        quarantined.inc();
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

package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.RowData;

/**
 * Receives what {@link ChangeRecordDecoder} makes of one record: exactly one call per record,
 * except for skipped tombstones (no call). Rows are fresh objects the receiver may keep.
 */
@PublicEvolving
public interface DecodeOutput {

    /**
     * An upsert ({@code RowKind.INSERT}) or a delete ({@code RowKind.DELETE}) for flow {@code
     * flowIndex}; the row is shaped {@link DecoderFlow#sourceType()} of that flow.
     */
    void upsertOrDelete(int flowIndex, RowData row);

    /**
     * A truncate (Debezium {@code op = t}) of flow {@code flowIndex}: shaped {@link
     * DecoderFlow#sourceType()}, data columns null, only the metadata (and so the sequence) set.
     */
    void truncate(int flowIndex, RowData row);

    /**
     * A quarantined record, shaped {@link
     * dev.changeflow.operators.quarantine.QuarantineRecords#ROW_TYPE}.
     */
    void quarantine(RowData row);
}

package dev.changeflow.operators.quarantine;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;

import javax.annotation.Nullable;

/**
 * The quarantine table's row (semantics.md A5), one table per namespace named {@value #TABLE_NAME}:
 *
 * <pre>
 * flow STRING, source STRING (topic or file), partition INT, offset BIGINT (Kafka offset or line
 * number, 1-based), raw BYTES, reason STRING ({@link QuarantineReason}), detail STRING,
 * quarantined_at TIMESTAMP_LTZ(3)
 * </pre>
 */
@PublicEvolving
public final class QuarantineRecords {
    /** Name of the quarantine table in each namespace. */
    public static final String TABLE_NAME = "changeflow_quarantine";

    /** The quarantine table's row type. */
    public static final RowType ROW_TYPE =
            RowType.of(
                    new LogicalType[] {
                        VarCharType.STRING_TYPE,
                        VarCharType.STRING_TYPE,
                        new IntType(),
                        new BigIntType(),
                        new VarBinaryType(VarBinaryType.MAX_LENGTH),
                        VarCharType.STRING_TYPE,
                        VarCharType.STRING_TYPE,
                        new LocalZonedTimestampType(3)
                    },
                    new String[] {
                        "flow",
                        "source",
                        "partition",
                        "offset",
                        "raw",
                        "reason",
                        "detail",
                        "quarantined_at"
                    });

    private QuarantineRecords() {}

    /**
     * Builds one quarantine row.
     *
     * @param flow the flow's name, or null when no flow could be determined
     * @param source topic or file path
     * @param partition Kafka partition, or null for files
     * @param offset Kafka offset or 1-based line number
     * @param raw the record's bytes as read (may be truncated by the caller for huge records)
     * @param reason the reason code
     * @param detail a human-readable explanation naming the column / value
     * @param quarantinedAtMillis processing time in epoch milliseconds
     */
    public static RowData of(
            @Nullable String flow,
            String source,
            @Nullable Integer partition,
            long offset,
            @Nullable byte[] raw,
            QuarantineReason reason,
            String detail,
            long quarantinedAtMillis) {
        return GenericRowData.of(
                flow == null ? null : StringData.fromString(flow),
                StringData.fromString(source),
                partition,
                offset,
                raw,
                StringData.fromString(reason.name()),
                StringData.fromString(detail),
                TimestampData.fromEpochMillis(quarantinedAtMillis));
    }
}

package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;

/**
 * Entry point that applies a REPLACE USING flow (semantics.md S5) to a stream of rows:
 * keyBy(REPLACE USING columns, nulls matching) → {@link ReplaceUsingOperator} (uid {@code
 * replace-using-<flow>}).
 *
 * <p>Output rows have {@link ReplaceUsingSpec#rowType()} with row kinds {@code +I} (a row the
 * target gains) and {@code -D} (a complete row the target loses); write them with {@code
 * dev.changeflow.sinks.iceberg.StreamingTableSink#replaceUsing}, which identifies rows by all their
 * columns.
 */
@PublicEvolving
public final class ReplaceUsingOperators {
    /** Prefix of the keyed operator's uid; the flow's name follows. */
    public static final String UID_PREFIX = "replace-using-";

    private ReplaceUsingOperators() {}

    /** The outcome of {@link #apply}: the target's changes and the rows set aside. */
    public static final class Applied {
        /** {@code +I}/{@code -D} rows typed {@code InternalTypeInfo.of(spec.rowType())}. */
        public final SingleOutputStreamOperator<RowData> rows;

        /**
         * Rows with a null sequence ({@link
         * dev.changeflow.operators.quarantine.QuarantineRecords#ROW_TYPE}).
         */
        public final DataStream<RowData> quarantine;

        Applied(SingleOutputStreamOperator<RowData> rows, DataStream<RowData> quarantine) {
            this.rows = rows;
            this.quarantine = quarantine;
        }
    }

    /**
     * @param rows incoming rows, typed {@code InternalTypeInfo.of(spec.rowType())}
     */
    public static Applied apply(DataStream<RowData> rows, ReplaceUsingSpec spec) {
        ReplaceUsingKeySelector keys = new ReplaceUsingKeySelector(spec);
        SingleOutputStreamOperator<RowData> out =
                rows.keyBy(keys, InternalTypeInfo.of(keys.keyType()))
                        .transform(
                                "REPLACE USING " + spec.name(),
                                InternalTypeInfo.of(spec.rowType()),
                                new ReplaceUsingOperator(spec))
                        .uid(UID_PREFIX + spec.name());
        return new Applied(out, out.getSideOutput(ReplaceUsingOperator.quarantineTag(spec)));
    }
}

package dev.changeflow.operators;

import dev.changeflow.state.ChangeflowStateBackends;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;

import java.time.Duration;

/**
 * The keyed and broadcast state of the AUTO CDC operators. Values are {@code byte[]} in
 * changeflow's versioned layouts ({@code dev.changeflow.state}, A4), map keys are strings (SCD2
 * chunk numbers, v1 sequences as ISO-8859-1 strings) so they compare by value on the heap and
 * RocksDB backends alike. Names are part of savepoint compatibility: never rename them.
 */
@Internal
public final class AutoCdcStateDescriptors {
    /** SCD1: the key's live row ({@code Scd1RowValue}); no TTL (A3). */
    public static final String SCD1_ROW = "auto-cdc-scd1-row";

    /**
     * SCD1: the key's tombstone ({@code SequenceValue}); TTL {@code tombstone-gc-threshold} (A3).
     */
    public static final String SCD1_TOMBSTONE = "auto-cdc-scd1-tombstone";

    /**
     * SCD1: broadcast state holding the table-wide truncate tombstone under {@link #TRUNCATE_KEY}.
     */
    public static final String TRUNCATE = "auto-cdc-truncate";

    /** The single key of the {@link #TRUNCATE} broadcast map. */
    public static final String TRUNCATE_KEY = "truncate";

    /** SCD2: the key's head ({@code Scd2CurrentValue}). */
    public static final String SCD2_CURRENT = "auto-cdc-scd2-current";

    /**
     * SCD2: the key's history: chunks of entries ({@code Scd2HistoryChunk}) by chunk number and, in
     * format v1 state of earlier builds, single entries ({@code Scd2HistoryEntry}) by sequence.
     */
    public static final String SCD2_HISTORY = "auto-cdc-scd2-history";

    /**
     * Operator (union list) state of the keyed apply operator: the serializable string form ({@link
     * org.apache.flink.table.types.logical.LogicalType#asSerializableString()}) of the row type its
     * keyed state's rows are encoded with, written at every snapshot (one element per subtask, all
     * equal). Absent in state of earlier releases (A7 item 4, {@link StateMigration}).
     */
    public static final String ROW_TYPE = "auto-cdc-row-type";

    private AutoCdcStateDescriptors() {}

    /** The {@link #ROW_TYPE} list state. */
    public static ListStateDescriptor<String> rowType() {
        return new ListStateDescriptor<>(ROW_TYPE, StringSerializer.INSTANCE);
    }

    public static ValueStateDescriptor<byte[]> scd1Row() {
        return new ValueStateDescriptor<>(SCD1_ROW, BytePrimitiveArraySerializer.INSTANCE);
    }

    public static ValueStateDescriptor<byte[]> scd1Tombstone(Duration gcThreshold) {
        ValueStateDescriptor<byte[]> d =
                new ValueStateDescriptor<>(SCD1_TOMBSTONE, BytePrimitiveArraySerializer.INSTANCE);
        d.enableTimeToLive(ChangeflowStateBackends.tombstoneTtl(gcThreshold));
        return d;
    }

    public static MapStateDescriptor<String, byte[]> truncate() {
        return new MapStateDescriptor<>(
                TRUNCATE, StringSerializer.INSTANCE, BytePrimitiveArraySerializer.INSTANCE);
    }

    public static ValueStateDescriptor<byte[]> scd2Current() {
        return new ValueStateDescriptor<>(SCD2_CURRENT, BytePrimitiveArraySerializer.INSTANCE);
    }

    public static MapStateDescriptor<String, byte[]> scd2History() {
        return new MapStateDescriptor<>(
                SCD2_HISTORY, StringSerializer.INSTANCE, BytePrimitiveArraySerializer.INSTANCE);
    }
}

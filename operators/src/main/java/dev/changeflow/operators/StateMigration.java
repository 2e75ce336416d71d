package dev.changeflow.operators;

import dev.changeflow.state.RowMigration;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Brings the keyed state of an {@link AutoCdcApplyOperator} restored from a snapshot to the flow's
 * current row type (semantics.md A7 item 4). The operator records the row type its stored rows are
 * encoded with ({@link AutoCdcStateDescriptors#ROW_TYPE}); when the flow's projected row type
 * changed a column's stored form since (FLOAT → DOUBLE, DECIMAL across 18 digits, {@link
 * RowMigration#changesStoredForm}), every key's values are rewritten eagerly at restore, before the
 * first record: SCD type 1 rows ({@link AutoCdcStateDescriptors#SCD1_ROW}), SCD type 2 heads and
 * history ({@link AutoCdcStateDescriptors#SCD2_CURRENT}, {@link
 * AutoCdcStateDescriptors#SCD2_HISTORY}). Tombstones and truncate tombstones hold sequences only
 * and stay. State without a recorded type (an earlier release) is taken to be of the current type,
 * as before.
 *
 * <p>Cost: one read and one write of every stored value of the subtask, once, at the restore that
 * follows the widening; later restores find the current type recorded and do nothing.
 */
@Internal
final class StateMigration {
    private static final Logger LOG = LoggerFactory.getLogger(StateMigration.class);

    private StateMigration() {}

    /**
     * The {@link AutoCdcStateDescriptors#ROW_TYPE} record of one operator instance: read (and the
     * keyed state migrated) when the operator's state is initialized, written at every snapshot.
     */
    static final class RowTypeRecord {
        private final ListState<String> state;
        private final String current;

        private RowTypeRecord(ListState<String> state, String current) {
            this.state = state;
            this.current = current;
        }

        /**
         * Registers the record and, on a restore, migrates {@code backend}'s rows from the recorded
         * type (see {@link #migrate}).
         *
         * @throws IllegalStateException as {@link #migrate}
         */
        static RowTypeRecord initialize(
                StateInitializationContext context,
                KeyedStateBackend<Object> backend,
                AutoCdcSpec spec,
                ClassLoader classLoader)
                throws Exception {
            ListState<String> state =
                    context.getOperatorStateStore()
                            .getUnionListState(AutoCdcStateDescriptors.rowType());
            if (context.isRestored()) {
                RowType recorded = recorded(state, classLoader);
                if (recorded == null) {
                    recorded = unrecorded(spec, classLoader);
                }
                if (recorded != null) {
                    migrate(backend, spec, recorded);
                }
            }
            return new RowTypeRecord(state, storedRowType(spec).asSerializableString());
        }

        /** Records the current row type in the snapshot being taken. */
        void snapshot() throws Exception {
            state.update(List.of(current));
        }
    }

    /**
     * The row type of state saved without a record (an earlier release): the flow's stored row with
     * the columns of {@link AutoCdcSpec#unrecordedStateTypes()} in their pre-widening types; null
     * when there are none (the state is of the current type).
     *
     * @throws IllegalStateException when a recorded type does not parse
     */
    @Nullable
    static RowType unrecorded(AutoCdcSpec spec, ClassLoader classLoader) {
        Map<String, String> types = spec.unrecordedStateTypes();
        if (types.isEmpty()) {
            return null;
        }
        RowType current = storedRowType(spec);
        List<RowType.RowField> fields = new ArrayList<>();
        boolean any = false;
        for (RowType.RowField f : current.getFields()) {
            String before = types.get(f.getName());
            if (before == null) {
                fields.add(f);
                continue;
            }
            LogicalType t;
            try {
                t = LogicalTypeParser.parse(before, classLoader);
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "cannot read the pre-widening type of column '"
                                + f.getName()
                                + "': "
                                + before,
                        e);
            }
            fields.add(new RowType.RowField(f.getName(), t.copy(f.getType().isNullable())));
            any = true;
        }
        return any ? new RowType(current.isNullable(), fields) : null;
    }

    /** The row type the operator's keyed state encodes rows with: the flow's projected row. */
    static RowType storedRowType(AutoCdcSpec spec) {
        return new ApplyCodecs(spec).rowType;
    }

    /**
     * The recorded row type of a restored operator, or null when none was recorded (state of an
     * earlier release).
     *
     * @throws IllegalStateException when the recorded string does not parse
     */
    @Nullable
    static RowType recorded(ListState<String> state, ClassLoader classLoader) throws Exception {
        Iterable<String> values = state.get();
        if (values == null) {
            return null;
        }
        for (String s : values) {
            try {
                LogicalType t = LogicalTypeParser.parse(s, classLoader);
                return (RowType) t;
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "cannot read the row type recorded in the AUTO CDC state: " + s, e);
            }
        }
        return null;
    }

    /**
     * Rewrites the keyed state of {@code spec}'s operator from rows of {@code recorded} to rows of
     * the current type when their stored forms differ; does nothing otherwise.
     *
     * @return the number of keys whose values were rewritten (0 when no migration was needed)
     * @throws IllegalStateException when the current type is no widening of {@code recorded} that
     *     the state can follow (the planner refuses such a change first, {@code
     *     INCOMPATIBLE_TYPE_CHANGE}), or a stored value is corrupt
     */
    static long migrate(KeyedStateBackend<Object> backend, AutoCdcSpec spec, RowType recorded)
            throws Exception {
        ApplyCodecs codecs = new ApplyCodecs(spec);
        RowType current = codecs.rowType;
        try {
            if (!RowMigration.changesStoredForm(recorded, current)) {
                return 0;
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    "flow '"
                            + spec.name()
                            + "': the saved AUTO CDC state cannot be read with the flow's columns: "
                            + e.getMessage(),
                    e);
        }
        RowMigration m =
                new RowMigration(
                        recorded,
                        current,
                        spec.scdType() == ScdType.TYPE_2 ? codecs.trackedTarget : null);
        long[] keys = {0};
        if (spec.scdType() == ScdType.TYPE_2) {
            backend.applyToAllKeys(
                    VoidNamespace.INSTANCE,
                    VoidNamespaceSerializer.INSTANCE,
                    AutoCdcStateDescriptors.scd2Current(),
                    (key, state) -> {
                        ValueState<byte[]> s = state;
                        byte[] v = s.value();
                        if (v != null) {
                            s.update(m.scd2Head(v));
                            keys[0]++;
                        }
                    });
            backend.applyToAllKeys(
                    VoidNamespace.INSTANCE,
                    VoidNamespaceSerializer.INSTANCE,
                    AutoCdcStateDescriptors.scd2History(),
                    (key, state) -> {
                        MapState<String, byte[]> s = state;
                        Iterable<Map.Entry<String, byte[]>> entries = s.entries();
                        if (entries == null) {
                            return;
                        }
                        List<Map.Entry<String, byte[]>> copy = new ArrayList<>();
                        entries.forEach(e -> copy.add(Map.entry(e.getKey(), e.getValue())));
                        s.putAll(m.scd2History(copy));
                    });
        } else {
            backend.applyToAllKeys(
                    VoidNamespace.INSTANCE,
                    VoidNamespaceSerializer.INSTANCE,
                    AutoCdcStateDescriptors.scd1Row(),
                    (key, state) -> {
                        ValueState<byte[]> s = state;
                        byte[] v = s.value();
                        if (v != null) {
                            s.update(m.scd1Row(v));
                            keys[0]++;
                        }
                    });
        }
        LOG.info(
                "flow '{}': migrated the AUTO CDC state of {} keys from rows {} to {} (A7)",
                spec.name(),
                keys[0],
                recorded.asSummaryString(),
                current.asSummaryString());
        return keys[0];
    }
}

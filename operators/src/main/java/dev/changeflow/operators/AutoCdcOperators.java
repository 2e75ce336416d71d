package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.OutputTag;

import javax.annotation.Nullable;

/**
 * Entry point that applies an AUTO CDC flow to a stream of change records (semantics.md A2-A4).
 *
 * <p>Input rows have {@link AutoCdcSpec#sourceType()}; {@code RowKind.DELETE} means delete, any
 * other kind upsert; null keys / sequences must have been quarantined before (the decoder does; one
 * that gets through fails the job with {@link IllegalStateException}). Truncate records (optional,
 * SCD type 1 only) arrive on their own stream with the same row shape (only the sequence columns
 * are read) and are broadcast to every subtask. Output rows have {@link AutoCdcSpec#targetType()}
 * with row kinds {@code +I} (new key or version), {@code -U}/{@code +U} (complete old row, new row)
 * and {@code -D} (complete old row).
 *
 * <p>The keyed operator has uid {@code "auto-cdc-" + spec.name()} and counters {@code applied},
 * {@code late}, {@code duplicateSequence}, {@code noop}, {@code tombstones}, {@code truncates}. Its
 * state is changeflow's versioned binary state ({@link AutoCdcStateDescriptors}, A4); use the
 * RocksDB backend ({@code dev.changeflow.state.ChangeflowStateBackends}) for real tables.
 */
@PublicEvolving
public final class AutoCdcOperators {
    /** Prefix of the keyed operator's uid; the flow's name follows. */
    public static final String UID_PREFIX = "auto-cdc-";

    private AutoCdcOperators() {}

    /** The outcome of {@link #applyFlow}: the target rows and the records set aside. */
    public static final class Applied {
        /** Target rows typed {@code InternalTypeInfo.of(spec.targetType())}. */
        public final SingleOutputStreamOperator<RowData> rows;

        /**
         * Records the predicates set aside ({@link
         * dev.changeflow.operators.quarantine.QuarantineRecords#ROW_TYPE}), or null when the flow
         * has no APPLY AS ... WHEN.
         */
        @Nullable public final DataStream<RowData> quarantine;

        Applied(
                SingleOutputStreamOperator<RowData> rows,
                @Nullable DataStream<RowData> quarantine) {
            this.rows = rows;
            this.quarantine = quarantine;
        }
    }

    /**
     * The side output of the keyed AUTO CDC operator: quarantine rows ({@link
     * QuarantineRecords#ROW_TYPE}) of records the logic cannot apply — today {@code
     * UNAVAILABLE_VALUE} (A3, A4), with {@code source} = {@code "flow <name>"}, {@code offset} -1
     * and {@code raw} the decoded source row as text.
     */
    public static OutputTag<RowData> quarantineTag(AutoCdcSpec spec) {
        return new OutputTag<>(
                "auto-cdc-quarantine-" + spec.name(),
                InternalTypeInfo.of(QuarantineRecords.ROW_TYPE));
    }

    /**
     * The whole AUTO CDC flow after decoding: APPLY AS DELETE / TRUNCATE WHEN and expectations
     * ({@link AutoCdcPredicates}, Flink SQL, when the spec has them; S8), then keyBy(KEYS) and
     * apply (A2–A5).
     *
     * @param changes upserts and deletes, typed {@code InternalTypeInfo.of(spec.sourceType())}
     * @param truncates truncate records of the source (Debezium {@code op = t}), or null
     * @throws IllegalArgumentException for an invalid predicate or truncates of an SCD type 2 flow
     *     (A1)
     */
    public static Applied applyFlow(
            DataStream<RowData> changes,
            @Nullable DataStream<RowData> truncates,
            AutoCdcSpec spec) {
        DataStream<RowData> predicates = null;
        if (spec.hasPredicates()) {
            AutoCdcPredicates.Result r = AutoCdcPredicates.apply(changes, spec);
            changes = r.changes;
            predicates = r.quarantine;
            if (r.truncates != null) {
                truncates = truncates == null ? r.truncates : truncates.union(r.truncates);
            }
        }
        SingleOutputStreamOperator<RowData> rows = keyedApply(changes, truncates, spec);
        DataStream<RowData> quarantine = rows.getSideOutput(quarantineTag(spec));
        return new Applied(rows, predicates == null ? quarantine : quarantine.union(predicates));
    }

    /**
     * keyBy(KEYS) and apply, for a flow without APPLY AS ... WHEN (use {@link #applyFlow} for one
     * with them). The keyed operator gets uid {@code "auto-cdc-" + spec.name()}.
     *
     * @param changes upserts and deletes, typed {@code InternalTypeInfo.of(spec.sourceType())}
     * @param truncates truncate records, or null when the flow has none
     * @return the target rows, typed {@code InternalTypeInfo.of(spec.targetType())}
     * @throws IllegalArgumentException when truncates are given for an SCD type 2 flow (A1), or
     *     when the spec has APPLY AS DELETE / TRUNCATE WHEN (which this method would not evaluate)
     */
    public static SingleOutputStreamOperator<RowData> apply(
            DataStream<RowData> changes,
            @Nullable DataStream<RowData> truncates,
            AutoCdcSpec spec) {
        if (spec.deleteWhen() != null || spec.truncateWhen() != null) {
            throw new IllegalArgumentException(
                    "flow '"
                            + spec.name()
                            + "' has APPLY AS DELETE / TRUNCATE WHEN: apply it with"
                            + " AutoCdcOperators.applyFlow, which evaluates them");
        }
        if (!spec.expectations().isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + spec.name()
                            + "' has expectations: apply it with AutoCdcOperators.applyFlow,"
                            + " which evaluates them (S8)");
        }
        return keyedApply(changes, truncates, spec);
    }

    /** Prefix of the uid of the snapshot ordering step ({@link SnapshotSequencer}). */
    public static final String SNAPSHOT_SEQUENCER_UID_PREFIX = "snapshot-sequencer-";

    /** Prefix of the uid of the keyed snapshot diff ({@link SnapshotDiffOperator}). */
    public static final String SNAPSHOT_DIFF_UID_PREFIX = "snapshot-diff-";

    /**
     * AUTO CDC FROM SNAPSHOT (semantics.md A6): whole snapshots in, the changes between consecutive
     * snapshots applied as SCD type 1 or 2 with the snapshot version as the sequence.
     *
     * <pre>
     * snapshots ──> order (parallelism 1) ──keyBy(KEYS)──> diff ──> AUTO CDC apply (same subtask)
     * </pre>
     *
     * The ordering step ({@link SnapshotSequencer}, uid {@code snapshot-sequencer-<flow>}) skips
     * snapshots older than the applied one and ends each snapshot with a watermark; the keyed diff
     * ({@link SnapshotDiffOperator}, uid {@code snapshot-diff-<flow>}) turns rows into inserts and
     * updates and, at the watermark, absent keys into deletes; the apply operator (uid {@code
     * auto-cdc-<flow>}, {@link AutoCdcApplyOperator}) runs chained behind it on the same keys, so
     * SCD type 2 {@code __START_AT} / {@code __END_AT} are snapshot versions and TRACK HISTORY
     * works as in A4.
     *
     * @param snapshots snapshot rows and end markers in the order of {@link SnapshotVersions}
     *     (typed {@code InternalTypeInfo.of(spec.sourceType())}); the spec's SEQUENCE BY is the
     *     version column
     * @return the target rows ({@code spec.targetType()}) and the apply operator's quarantine
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} for a version column that
     *     cannot order snapshots
     * @throws IllegalArgumentException when the spec has APPLY AS DELETE / TRUNCATE WHEN or
     *     truncates (a snapshot has neither)
     */
    public static Applied applySnapshots(DataStream<RowData> snapshots, AutoCdcSpec spec) {
        return applySnapshots(snapshots, spec, null);
    }

    /**
     * As {@link #applySnapshots(DataStream, AutoCdcSpec)}, with {@code origin} naming where a
     * version came from (the snapshot file) in the messages of errors and skipped snapshots.
     *
     * @param origin names a version's input (see {@link SnapshotOrigin}), or null for none
     */
    public static Applied applySnapshots(
            DataStream<RowData> snapshots, AutoCdcSpec spec, @Nullable SnapshotOrigin origin) {
        new SnapshotVersions(spec);
        if (!spec.expectations().isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + spec.name()
                            + "' reads snapshots: expectations (CONSTRAINT ... EXPECT) are not"
                            + " supported on AUTO CDC FROM SNAPSHOT yet (S8)");
        }
        if (spec.deleteWhen() != null || spec.truncateEnabled()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + spec.name()
                            + "' reads snapshots: deletes come from the diff, so APPLY AS DELETE /"
                            + " TRUNCATE WHEN and truncates do not apply");
        }
        TypeInformation<RowData> rowType = InternalTypeInfo.of(spec.sourceType());
        SingleOutputStreamOperator<RowData> ordered =
                snapshots
                        .transform(
                                "snapshot order " + spec.name(),
                                rowType,
                                new SnapshotSequencer(spec, origin))
                        .uid(SNAPSHOT_SEQUENCER_UID_PREFIX + spec.name())
                        .setParallelism(1)
                        .setMaxParallelism(1);
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        InternalTypeInfo<RowData> keyType = InternalTypeInfo.of(keys.keyType());
        SingleOutputStreamOperator<RowData> changes =
                ordered.keyBy(keys, keyType)
                        .transform(
                                "snapshot diff " + spec.name(),
                                rowType,
                                new SnapshotDiffOperator(spec, origin))
                        .uid(SNAPSHOT_DIFF_UID_PREFIX + spec.name());
        SingleOutputStreamOperator<RowData> rows =
                DataStreamUtils.reinterpretAsKeyedStream(changes, keys, keyType)
                        .transform(
                                "AUTO CDC " + spec.name(),
                                InternalTypeInfo.of(spec.targetType()),
                                new AutoCdcApplyOperator(spec))
                        .uid(UID_PREFIX + spec.name())
                        .name("AUTO CDC " + spec.name() + " (SCD " + spec.scdType() + ")");
        return new Applied(rows, rows.getSideOutput(quarantineTag(spec)));
    }

    private static SingleOutputStreamOperator<RowData> keyedApply(
            DataStream<RowData> changes,
            @Nullable DataStream<RowData> truncates,
            AutoCdcSpec spec) {
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        KeyedStream<RowData, RowData> keyed =
                changes.keyBy(keys, InternalTypeInfo.of(keys.keyType()));
        TypeInformation<RowData> outType = InternalTypeInfo.of(spec.targetType());
        SingleOutputStreamOperator<RowData> applied;
        if (truncates == null) {
            applied =
                    keyed.transform(
                            "AUTO CDC " + spec.name(), outType, new AutoCdcApplyOperator(spec));
        } else if (spec.scdType() == ScdType.TYPE_2) {
            throw new IllegalArgumentException(
                    "flow '"
                            + spec.name()
                            + "': truncate records require STORED AS SCD TYPE 1 (A1)");
        } else {
            // keyed × broadcast, as BroadcastConnectedStream#process builds it, with the operator
            // that also migrates its rows after a widened column (A7 item 4)
            applied =
                    keyed.connect(truncates.broadcast())
                            .transform(
                                    "AUTO CDC " + spec.name(),
                                    outType,
                                    new Scd1TruncateOperator(spec));
        }
        return applied.uid(UID_PREFIX + spec.name())
                .name("AUTO CDC " + spec.name() + " (SCD " + spec.scdType() + ")");
    }
}

package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

/**
 * What becomes of a record that cannot be applied (semantics.md A5 "Quarantine", A2): a quarantine
 * row, or a {@link ChangeRecordException} that stops the job. Holds the provenance of the record in
 * flight (source, partition, offset, raw bytes), which both carry.
 *
 * <ul>
 *   <li>A record routed to a flow follows the flow's {@link DecoderFlow#onInvalidRecord()}, and for
 *       {@code SCHEMA_CHANGED} its {@link DecoderFlow#onSchemaChange()}.
 *   <li>A record no flow could be determined for (too large, not JSON, malformed, before routing)
 *       belongs to the only flow when there is one, else to flow null, and fails the job if any
 *       flow says {@code fail}.
 *   <li>{@code UNKNOWN_TOPIC} records are always quarantined, with flow null.
 * </ul>
 *
 * Quarantine rows carry {@code raw} as received, cut to its first {@value
 * ChangeRecordDecoder#QUARANTINE_RAW_LIMIT} bytes for {@code RECORD_TOO_LARGE}.
 */
@Internal
final class QuarantinePolicy {
    @Nullable private final String defaultFlowId;
    private final boolean anyFail;

    // ---- the record in flight ----
    @Nullable private byte[] raw;
    private String source;
    @Nullable private Integer partition;
    private long offset;
    private long now;
    private DecodeOutput out;

    QuarantinePolicy(List<DecoderFlow> flows) {
        this.defaultFlowId = flows.size() == 1 ? flows.get(0).flowId() : null;
        boolean fail = false;
        for (DecoderFlow f : flows) {
            fail |= f.onInvalidRecord() == OnInvalidRecord.FAIL;
        }
        this.anyFail = fail;
    }

    /**
     * The flow id that unroutable records are attributed to: the only flow's, or null with several
     * flows.
     */
    @Nullable
    String defaultFlowId() {
        return defaultFlowId;
    }

    /**
     * Starts a record; see {@link ChangeRecordDecoder#decode(byte[], String, Integer, long, long,
     * DecodeOutput)}.
     */
    void begin(
            @Nullable byte[] raw,
            String source,
            @Nullable Integer partition,
            long offset,
            long nowMillis,
            DecodeOutput out) {
        this.raw = raw;
        this.source = source;
        this.partition = partition;
        this.offset = offset;
        this.now = nowMillis;
        this.out = out;
    }

    /**
     * Quarantines the record, or throws when its flow (or, for {@code plan} null, the unroutable
     * policy) says fail.
     *
     * @param plan the flow the record was routed to, or null when none could be determined
     * @throws ChangeRecordException with {@code reason} and {@code detail}, when the policy says
     *     fail
     */
    DecodeOutcome quarantine(@Nullable FlowPlan plan, QuarantineReason reason, String detail) {
        String flowId = plan != null ? plan.flow.flowId() : defaultFlowId;
        boolean fail;
        if (plan != null) {
            fail =
                    reason == QuarantineReason.SCHEMA_CHANGED
                            ? plan.flow.onSchemaChange() == OnSchemaChange.FAIL
                            : plan.flow.onInvalidRecord() == OnInvalidRecord.FAIL;
        } else {
            fail = anyFail;
        }
        if (fail) {
            throw new ChangeRecordException(reason, flowId, source, partition, offset, detail);
        }
        byte[] kept = raw;
        int limit = ChangeRecordDecoder.QUARANTINE_RAW_LIMIT;
        if (raw != null && raw.length > limit && reason == QuarantineReason.RECORD_TOO_LARGE) {
            kept = Arrays.copyOf(raw, limit);
        }
        out.quarantine(
                QuarantineRecords.of(flowId, source, partition, offset, kept, reason, detail, now));
        return DecodeOutcome.QUARANTINED;
    }

    /**
     * The exception that stops the job at the current record of {@code plan}'s flow whatever its
     * policy: for a flow definition that cannot handle its records at all (A5).
     */
    ChangeRecordException fail(FlowPlan plan, QuarantineReason reason, String detail) {
        return new ChangeRecordException(
                reason, plan.flow.flowId(), source, partition, offset, detail);
    }

    /**
     * Called for a null SEQUENCE BY column at {@code s} before it is quarantined {@code
     * NULL_SEQUENCE}: while no record of the flow has had a sequence, throws when the null shows
     * that the sequence cannot order the flow's records ({@link
     * ChangeRecordParser#unusableSequence}, A5), instead of quarantining every record.
     *
     * @throws ChangeRecordException {@code NULL_SEQUENCE}, naming the column, the connector and the
     *     fix
     */
    void checkSequence(FlowPlan plan, ChangeRecordParser record, int s) {
        if (plan.sequenceSeen) {
            return;
        }
        String detail;
        try {
            detail = record.unusableSequence(plan, s);
        } catch (IOException e) {
            return; // the record's source did not parse again: this record's problem
        }
        if (detail != null) {
            throw fail(plan, QuarantineReason.NULL_SEQUENCE, detail);
        }
    }

    /** Quarantines a record no flow claims ({@code UNKNOWN_TOPIC}, flow null); never fails. */
    DecodeOutcome unrouted(String detail) {
        out.quarantine(
                QuarantineRecords.of(
                        null,
                        source,
                        partition,
                        offset,
                        raw,
                        QuarantineReason.UNKNOWN_TOPIC,
                        detail,
                        now));
        return DecodeOutcome.QUARANTINED;
    }

    /**
     * A record with members the flow's columns lack ({@code SCHEMA_CHANGED}): under {@link
     * OnSchemaChange#FAIL} throws {@link ChangeRecordException} with the fix appended to {@code
     * detail}; otherwise quarantines (under {@link OnSchemaChange#ADD_COLUMNS} only members of
     * nested objects come here).
     */
    DecodeOutcome unknownMembers(FlowPlan plan, String detail) {
        if (plan.flow.onSchemaChange() == OnSchemaChange.FAIL) {
            throw new ChangeRecordException(
                    QuarantineReason.SCHEMA_CHANGED,
                    plan.flow.flowId(),
                    source,
                    partition,
                    offset,
                    detail
                            + "; set on-schema-change = quarantine or add-columns, or declare the columns");
        }
        return quarantine(plan, QuarantineReason.SCHEMA_CHANGED, detail);
    }

    /**
     * The exception that stops the job for {@link OnSchemaChange#ADD_COLUMNS} (see {@link
     * SchemaChangeException}).
     */
    SchemaChangeException newColumns(FlowPlan plan, String table, List<RowType.RowField> added) {
        return new SchemaChangeException(
                plan.flow.flowId(), table, source, partition, offset, added);
    }

    /**
     * The exception that stops the job for {@link OnSchemaChange#ADD_COLUMNS} when the schema
     * wrapper widens columns (A7 item 4, see {@link SchemaChangeException#widenedColumns()}).
     */
    SchemaChangeException widenedColumns(
            FlowPlan plan, String table, List<RowType.RowField> widened) {
        return new SchemaChangeException(
                plan.flow.flowId(), table, source, partition, offset, List.of(), widened);
    }

    /** The {@code RECORD_TOO_LARGE} detail. */
    static String tooLarge(int length, int max) {
        return "record of " + length + " bytes exceeds max-record-bytes " + max;
    }
}

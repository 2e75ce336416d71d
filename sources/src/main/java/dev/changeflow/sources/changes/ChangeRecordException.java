package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

import javax.annotation.Nullable;

/**
 * A change record that a flow refuses under {@code on-invalid-record = fail} or {@code
 * on-schema-change = fail} (semantics.md A2, A5). {@link #reason()} is the quarantine reason code
 * the record would otherwise have been quarantined with; the message names the flow, the table, the
 * source (topic or file), the Kafka partition (Kafka only), the offset (Kafka offset or 1-based
 * line) and the column / value.
 *
 * <p>Flink classifies it as a non-recoverable error: the record is read again after any restart, so
 * restarting cannot help and the job fails at once instead of looping through its restart strategy.
 */
@PublicEvolving
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class ChangeRecordException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final QuarantineReason reason;
    @Nullable private final String flowId;
    private final String source;
    @Nullable private final Integer partition;
    private final long offset;

    /** A record of a file (no partition). */
    public ChangeRecordException(
            QuarantineReason reason,
            @Nullable String flowId,
            String source,
            long offset,
            String detail) {
        this(reason, flowId, source, null, offset, detail);
    }

    /**
     * @param partition the Kafka partition, or null for a file line
     * @param offset the Kafka offset, or the 1-based line number
     */
    public ChangeRecordException(
            QuarantineReason reason,
            @Nullable String flowId,
            String source,
            @Nullable Integer partition,
            long offset,
            String detail) {
        super(
                reason
                        + ": "
                        + detail
                        + " (flow "
                        + (flowId == null ? "<unknown>" : "'" + flowId + "'")
                        + ", source "
                        + source
                        + (partition == null ? "" : ", partition " + partition)
                        + ", offset "
                        + offset
                        + ")");
        this.reason = reason;
        this.flowId = flowId;
        this.source = source;
        this.partition = partition;
        this.offset = offset;
    }

    /** The stable error code: the reason code the record would have been quarantined with. */
    public QuarantineReason code() {
        return reason;
    }

    /** Same as {@link #code()}. */
    public QuarantineReason reason() {
        return reason;
    }

    /** The flow the record was routed to, or null when it could not be routed. */
    @Nullable
    public String flowId() {
        return flowId;
    }

    /** Topic or file path. */
    public String source() {
        return source;
    }

    /** The Kafka partition, or null for a file. */
    @Nullable
    public Integer partition() {
        return partition;
    }

    /** Kafka offset or 1-based line number. */
    public long offset() {
        return offset;
    }
}

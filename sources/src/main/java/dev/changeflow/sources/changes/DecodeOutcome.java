package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;

/** What {@link ChangeRecordDecoder} did with one record (for counters). */
@PublicEvolving
public enum DecodeOutcome {
    /** {@link DecodeOutput#upsertOrDelete} was called. */
    CHANGE,
    /** {@link DecodeOutput#truncate} was called. */
    TRUNCATE,
    /** {@link DecodeOutput#quarantine} was called. */
    QUARANTINED,
    /** A tombstone (null value): skipped, nothing was emitted (semantics.md A5, K5). */
    TOMBSTONE_SKIPPED
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.SchemaChangeException;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The schema changes one launch under {@code on-schema-change: add-columns} (semantics.md A7) has
 * evolved its tables for, against a restart loop: a change is the record's position (flow, source,
 * partition, offset) with its new and widened columns. Once the tables were evolved for a change,
 * the restart reads past that record; meeting the same change again means the job made no progress.
 */
final class SchemaChangeRepeats {
    private final Set<String> seen = new HashSet<>();

    /**
     * Records {@code c} as handled.
     *
     * @param evolved the changes made so far in this launch, e.g. {@code shop.items: + w STRING}
     *     (for the message)
     * @throws ChangeRecordException SCHEMA_CHANGED naming the record's position and the changes
     *     made, when {@code c} was handled before in this launch
     */
    void check(SchemaChangeException c, List<String> evolved) {
        String key =
                c.flowId()
                        + "|"
                        + c.source()
                        + "|"
                        + c.partition()
                        + "|"
                        + c.offset()
                        + "|"
                        + SchemaChangeException.describe(c.newColumns())
                        + "|"
                        + SchemaChangeException.describe(c.widenedColumns());
        if (!seen.add(key)) {
            throw new ChangeRecordException(
                    QuarantineReason.SCHEMA_CHANGED,
                    c.flowId(),
                    c.source(),
                    c.partition(),
                    c.offset(),
                    "the same schema change came back after the tables were evolved for it"
                            + " (on-schema-change: add-columns, "
                            + (evolved.isEmpty()
                                    ? "no columns added"
                                    : "evolved: " + String.join("; ", evolved))
                            + "): the job made no progress past this record, stopping instead"
                            + " of looping. Check that the flow's plan takes the table's columns,"
                            + " or use on-schema-change: quarantine");
        }
    }
}

package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A record of a flow with {@code on-schema-change = add-columns} that has top-level data fields the
 * flow's columns lack (semantics.md A5, code {@code SCHEMA_CHANGED}). The decoder stops the job at
 * that record, before any of it is applied, so that the launcher can add the columns to the Iceberg
 * table and resume from the last checkpoint with the wider row type (see the jobs module's {@code
 * LocalIngest}); the record and everything after it are read again by the resumed job.
 *
 * <p>{@link #newColumns()} names each new column with the type it gets, all nullable: the Debezium
 * schema wrapper's type when the record has one, else inferred from the JSON value as in schema
 * inference (integer → BIGINT, fraction → DOUBLE, true/false → BOOLEAN, anything else, including
 * null, objects and arrays → STRING, holding the JSON text).
 */
@PublicEvolving
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class SchemaChangeException extends ChangeRecordException {
    private static final long serialVersionUID = 1L;

    private final String table;
    private final List<RowType.RowField> newColumns;
    private final List<RowType.RowField> widenedColumns;

    /**
     * @param flowId the decoder flow the record was routed to
     * @param table the source table the record names (or its topic)
     * @param newColumns the new top-level columns, nullable, in record order
     */
    public SchemaChangeException(
            String flowId,
            String table,
            String source,
            @Nullable Integer partition,
            long offset,
            List<RowType.RowField> newColumns) {
        this(flowId, table, source, partition, offset, newColumns, List.of());
    }

    /**
     * @param newColumns the new top-level columns, nullable, in record order
     * @param widenedColumns existing columns the record's schema wrapper types wider (A7 item 4),
     *     with the wider type
     */
    public SchemaChangeException(
            String flowId,
            String table,
            String source,
            @Nullable Integer partition,
            long offset,
            List<RowType.RowField> newColumns,
            List<RowType.RowField> widenedColumns) {
        super(
                QuarantineReason.SCHEMA_CHANGED,
                flowId,
                source,
                partition,
                offset,
                "table '"
                        + table
                        + "' has "
                        + (newColumns.isEmpty() ? "" : "new column(s) " + describe(newColumns))
                        + (newColumns.isEmpty() || widenedColumns.isEmpty() ? "" : " and ")
                        + (widenedColumns.isEmpty()
                                ? ""
                                : "widened column(s) " + describe(widenedColumns))
                        + " (on-schema-change = add-columns: the table is evolved and the job resumes)");
        this.table = table;
        this.newColumns = List.copyOf(newColumns);
        this.widenedColumns = List.copyOf(widenedColumns);
    }

    /**
     * Existing columns the record's schema wrapper types wider by an Iceberg promotion, with the
     * wider type, nullable (semantics.md A7 item 4); empty when none.
     */
    public List<RowType.RowField> widenedColumns() {
        return widenedColumns;
    }

    /** The source table the record names (or its topic). */
    public String table() {
        return table;
    }

    /** The new columns with their types (nullable), in the order the record lists them. */
    public List<RowType.RowField> newColumns() {
        return newColumns;
    }

    /** {@code w STRING, n BIGINT}. */
    public static String describe(List<RowType.RowField> columns) {
        return columns.stream()
                .map(f -> f.getName() + " " + f.getType().asSummaryString())
                .collect(Collectors.joining(", "));
    }
}

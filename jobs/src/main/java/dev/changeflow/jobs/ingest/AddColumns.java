package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.changes.OnSchemaChange;
import dev.changeflow.sources.changes.SchemaChangeException;
import dev.changeflow.state.RowCodec;

import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code on-schema-change = add-columns} (semantics.md A5) on the launcher's side: after the job
 * stopped at a record with new columns ({@link SchemaChangeException}), adds those columns to the
 * Iceberg table of every flow reading that source table with Iceberg's {@link UpdateSchema} —
 * nullable, after the last data column (before listed metadata columns and SCD type 2's {@code
 * __START_AT}, {@link StreamingTables#addColumns}), so rows written before read null there. The
 * next run's plan picks them up through {@link IngestPlanner#withAddedColumns} and resumes from the
 * last checkpoint.
 *
 * <p>Columns the record's schema wrapper widens ({@link SchemaChangeException#widenedColumns()}, A7
 * item 4) are widened with {@link StreamingTables#widenColumns} (Iceberg promotions); the next plan
 * reads them in the table's type, and saved AUTO CDC state follows (its rows are rewritten at the
 * restore when the stored encoding changes: FLOAT → DOUBLE, DECIMAL across 18 digits).
 *
 * <p>Saved AUTO CDC state rows stay readable with the wider row type when the stored row's null
 * bitmap keeps its size ({@link RowCodec#canWiden}: the stored row grows within the same multiple
 * of 8 columns); otherwise, when the job has saved state, nothing is changed and a {@link
 * ChangeRecordException} {@code SCHEMA_CHANGED} says to rebuild with {@code --from-scratch}.
 */
final class AddColumns {
    private AddColumns() {}

    /**
     * @param hasState whether the job resumes from saved state (a checkpoint or savepoint)
     * @return one line per evolved table, e.g. {@code shop.items: + w STRING, v INT → BIGINT}
     * @throws ChangeRecordException SCHEMA_CHANGED when saved state rows could not be read after
     *     the change
     */
    static List<String> apply(
            Catalog catalog, IngestPlan plan, SchemaChangeException e, boolean hasState) {
        List<IngestPlan.Flow> affected = new ArrayList<>();
        String sourceTable = null;
        for (IngestPlan.Flow f : plan.flows) {
            if (f.name().equals(e.flowId())) {
                sourceTable = f.config.table;
            }
        }
        for (IngestPlan.Flow f : plan.flows) {
            if (f.config.table.equals(sourceTable)
                    && f.decoder.onSchemaChange() == OnSchemaChange.ADD_COLUMNS) {
                affected.add(f);
            }
        }
        if (affected.isEmpty()) {
            throw e; // not a flow of this plan: nothing sound to do
        }
        for (IngestPlan.Flow f : affected) {
            if (hasState && f.spec != null && !e.newColumns().isEmpty()) {
                int before = f.spec.projection().length;
                int after = before + e.newColumns().size();
                if (!RowCodec.canWiden(before, after)) {
                    throw new ChangeRecordException(
                            QuarantineReason.SCHEMA_CHANGED,
                            e.flowId(),
                            e.source(),
                            e.partition(),
                            e.offset(),
                            "table "
                                    + f.target
                                    + " would grow from "
                                    + before
                                    + " to "
                                    + after
                                    + " stored columns with "
                                    + SchemaChangeException.describe(e.newColumns())
                                    + ": the saved AUTO CDC state holds rows of "
                                    + before
                                    + " columns that cannot be"
                                    + " read past a multiple of 8 columns. Declare the new columns in the flow's"
                                    + " schema and re-run with --from-scratch, or use on-schema-change: quarantine");
                }
            }
        }
        Map<IngestPlan.Flow, Map<String, Type.PrimitiveType>> widen = new LinkedHashMap<>();
        for (IngestPlan.Flow f : affected) {
            widen.put(f, widenings(catalog.loadTable(f.target), e));
        }
        List<String> done = new ArrayList<>();
        for (IngestPlan.Flow f : affected) {
            Table table = catalog.loadTable(f.target);
            List<String> changes = new ArrayList<>();
            for (Map.Entry<String, Type.PrimitiveType> w : widen.get(f).entrySet()) {
                changes.add(
                        w.getKey()
                                + " "
                                + FlinkSchemaUtil.convert(table.schema().findType(w.getKey()))
                                        .asSummaryString()
                                + " → "
                                + FlinkSchemaUtil.convert(w.getValue()).asSummaryString());
            }
            if (!widen.get(f).isEmpty()) {
                StreamingTables.widenColumns(table, widen.get(f));
            }
            List<String> added =
                    StreamingTables.addColumns(table, e.newColumns(), dataColumns(table, f));
            if (!added.isEmpty()) {
                changes.add(0, "+ " + String.join(", ", added));
            }
            if (!changes.isEmpty()) {
                done.add(f.target + ": " + String.join(", ", changes));
            }
        }
        return done;
    }

    /**
     * The data columns {@code table} holds now (A7): the flow's own, then every column of the table
     * that is neither a metadata column of the flow nor SCD type 2's {@code __START_AT} / {@code
     * __END_AT} — so columns an earlier schema change added count as data columns even when {@code
     * f} comes from a plan made before that change, and a new column goes after them, where the
     * next plan (which follows the table's column order) and the saved state rows expect it.
     */
    static List<String> dataColumns(Table table, IngestPlan.Flow f) {
        List<String> data = new ArrayList<>(f.decoder.dataType().getFieldNames());
        Set<String> metadata = f.decoder.metadataColumns();
        for (Types.NestedField c : table.schema().columns()) {
            String n = c.name();
            if (!data.contains(n)
                    && !metadata.contains(n)
                    && !n.equals(AutoCdcSpec.START_AT)
                    && !n.equals(AutoCdcSpec.END_AT)) {
                data.add(n);
            }
        }
        return data;
    }

    /**
     * The columns of {@code e} to widen in {@code table} (A7 item 4): those the table holds in a
     * type the wrapper's type is an Iceberg promotion of; a column the table has in that type or
     * wider already is left alone.
     */
    private static Map<String, Type.PrimitiveType> widenings(Table table, SchemaChangeException e) {
        Map<String, Type.PrimitiveType> out = new LinkedHashMap<>();
        for (RowType.RowField w : e.widenedColumns()) {
            Type have = table.schema().findType(w.getName());
            Type want = FlinkSchemaUtil.convert(w.getType());
            if (have == null
                    || !have.isPrimitiveType()
                    || !want.isPrimitiveType()
                    || have.equals(want)
                    || !TypeUtil.isPromotionAllowed(have, want.asPrimitiveType())) {
                continue;
            }
            out.put(w.getName(), want.asPrimitiveType());
        }
        return out;
    }
}

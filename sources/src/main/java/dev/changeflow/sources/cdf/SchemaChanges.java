package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

import java.util.List;
import java.util.Map;

/**
 * Schema rules of the change feed: a batch read uses the schema of its ending version (F5); a range
 * may span additive schema changes only (F4 {@code INCOMPATIBLE_SCHEMA_CHANGE}); table columns may
 * not use the metadata column names (F4 {@code RESERVED_COLUMN_NAME}).
 *
 * <p>Decision: additive means every column of the earlier schema is still there under the same
 * field id and the same name, with the same type or a type promotion Iceberg allows (int → long,
 * float → double, widened decimal), since Iceberg reads the older files losslessly in the new type.
 * New columns and relaxed nullability are additive; a dropped or renamed column or any other type
 * change is not.
 */
@Internal
final class SchemaChanges {

    private SchemaChanges() {}

    /** The schema of {@code snapshot}, or the table's current schema if it is not recorded. */
    static Schema schemaOf(Table table, Snapshot snapshot) {
        if (snapshot == null || snapshot.schemaId() == null) {
            return table.schema();
        }
        Schema schema = table.schemas().get(snapshot.schemaId());
        return schema != null ? schema : table.schema();
    }

    static void checkReservedColumns(String tableName, Schema schema) {
        for (Types.NestedField column : schema.columns()) {
            if (ChangeFeedColumns.isReserved(column.name())) {
                throw new CdfException(
                        CdfException.ErrorCode.RESERVED_COLUMN_NAME,
                        String.format(
                                "Table %s has a column named '%s', which the change feed uses for its metadata "
                                        + "columns (%s, %s, %s). Rename the column to read the table's change feed.",
                                tableName,
                                column.name(),
                                ChangeFeedColumns.CHANGE_TYPE,
                                ChangeFeedColumns.COMMIT_VERSION,
                                ChangeFeedColumns.COMMIT_TIMESTAMP));
            }
        }
    }

    /** Fails when two consecutive snapshots of the range differ by a non-additive change. */
    static void checkAdditive(Table table, List<Snapshot> snapshots) {
        for (int i = 1; i < snapshots.size(); i++) {
            Schema before = schemaOf(table, snapshots.get(i - 1));
            Schema after = schemaOf(table, snapshots.get(i));
            if (before.schemaId() == after.schemaId()) {
                continue;
            }
            String problem = nonAdditiveChange(before, after);
            if (problem != null) {
                long version = snapshots.get(i).sequenceNumber();
                throw new CdfException(
                        CdfException.ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE,
                        String.format(
                                "The change feed of table %s from version %d to version %d spans a non-additive "
                                        + "schema change at version %d (%s). Read versions %d to %d and "
                                        + "versions %d to %d separately.",
                                table.name(),
                                snapshots.get(0).sequenceNumber(),
                                snapshots.get(snapshots.size() - 1).sequenceNumber(),
                                version,
                                problem,
                                snapshots.get(0).sequenceNumber(),
                                snapshots.get(i - 1).sequenceNumber(),
                                version,
                                snapshots.get(snapshots.size() - 1).sequenceNumber()));
            }
        }
    }

    /** A description of the first non-additive difference, or null when {@code after} only adds. */
    static String nonAdditiveChange(Schema before, Schema after) {
        Map<Integer, Types.NestedField> afterById = TypeUtil.indexById(after.asStruct());
        for (Map.Entry<Integer, Types.NestedField> entry :
                TypeUtil.indexById(before.asStruct()).entrySet()) {
            String name = before.findColumnName(entry.getKey());
            Types.NestedField now = afterById.get(entry.getKey());
            if (now == null) {
                return String.format("column '%s' dropped", name);
            }
            String newName = after.findColumnName(entry.getKey());
            if (!name.equals(newName)) {
                return String.format("column '%s' renamed to '%s'", name, newName);
            }
            Type from = entry.getValue().type();
            Type to = now.type();
            if (from.isPrimitiveType() && to.isPrimitiveType()) {
                if (!from.equals(to) && !TypeUtil.isPromotionAllowed(from, to.asPrimitiveType())) {
                    return String.format("column '%s' changed from %s to %s", name, from, to);
                }
            } else if (from.typeId() != to.typeId()) {
                return String.format("column '%s' changed from %s to %s", name, from, to);
            }
        }
        return null;
    }
}

package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns the removed and added rows of one version into changes (F2): identical removed/added pairs
 * (rows carried over by a rewrite) cancel; a removed and an added row of the same identity become
 * {@code update_preimage} directly followed by {@code update_postimage}; the rest are {@code
 * delete} and {@code insert}.
 *
 * <p><b>Row identity</b> (design.md "Iceberg mapping of the change feed"): the table's identifier
 * fields; else, on a format v3 table, its row lineage ({@code _row_id}, {@link
 * MetadataColumns#ROW_ID}); else none, and the table yields plain {@code delete} + {@code insert}.
 *
 * <ul>
 *   <li><b>Identifier fields</b>: output by identity (ascending, Iceberg's comparators on the
 *       internal representation), per identity the pairs first, then unpaired deletes, then
 *       unpaired inserts.
 *   <li><b>Row lineage</b> ({@link #usesRowLineage}): every row carries its {@code _row_id} as an
 *       extra last field after the data columns (see {@link #lineageSchema}). A removed and an
 *       added row with the same {@code _row_id} pair (an engine that updates a row copies its
 *       {@code _row_id} into the new file); a carry-over cancels only when {@code _row_id} and
 *       values are both equal. Output by {@code _row_id} ascending, per id as above, then the rows
 *       without a {@code _row_id} (files written before the table was upgraded to v3) as without
 *       identity. A writer that does not copy {@code _row_id} gives every row it writes a new one
 *       (inherited from the new file's first row id): such rows are {@code delete} + {@code
 *       insert}, even when a rewrite carried them over unchanged. The streaming feed keys by {@code
 *       _row_id} so that each row's changes stay in version order, so it cannot cancel rows of
 *       different ids.
 *   <li><b>No identity</b>: plain {@code delete} + {@code insert} (carry-overs still cancel on
 *       full-row equality): deletes first, then inserts, each in file order.
 * </ul>
 */
@Internal
final class ChangePairing {

    /** One change: its type and the row in the read schema. */
    static final class Change {
        final ChangeType type;
        final Record row;

        Change(ChangeType type, Record row) {
            this.type = type;
            this.row = row;
        }
    }

    private final Schema schema;
    private final boolean rowLineage;
    private final Set<Integer> identifierIds;
    private final Types.StructType keyType;
    private final int[] keyPositions;
    private final Comparator<StructLike> keyOrder;

    ChangePairing(Schema schema) {
        this(schema, false);
    }

    /**
     * @param schema the data schema (identifier fields)
     * @param rowLineage whether rows carry {@code _row_id} as an extra last field and pair by it
     *     ({@link #usesRowLineage})
     */
    ChangePairing(Schema schema, boolean rowLineage) {
        this.schema = schema;
        this.rowLineage = rowLineage;
        this.identifierIds = schema.identifierFieldIds();
        this.keyType = TypeUtil.select(schema.asStruct(), identifierIds);
        this.keyPositions = new int[keyType.fields().size()];
        for (int i = 0; i < keyPositions.length; i++) {
            keyPositions[i] =
                    schema.columns().indexOf(schema.findField(keyType.fields().get(i).fieldId()));
        }
        this.keyOrder = Comparators.forType(keyType);
    }

    /**
     * Whether the change feed of {@code table} over {@code dataSchema} pairs by row lineage: a
     * format v3 (or later) table without identifier fields whose columns do not clash with {@code
     * _row_id}.
     */
    static boolean usesRowLineage(Table table, Schema dataSchema) {
        return TableUtil.formatVersion(table) >= 3
                && dataSchema.identifierFieldIds().isEmpty()
                && dataSchema.findField(MetadataColumns.ROW_ID.name()) == null
                && dataSchema.findField(MetadataColumns.ROW_ID.fieldId()) == null;
    }

    /**
     * The data columns followed by {@code _row_id}: the rows {@link #pair} takes with row lineage.
     */
    static Schema lineageSchema(Schema dataSchema) {
        List<Types.NestedField> fields = new ArrayList<>(dataSchema.columns());
        fields.add(MetadataColumns.ROW_ID);
        return new Schema(fields);
    }

    /**
     * Pairs the rows of one version.
     *
     * @param removed rows of the data schema (with row lineage: of {@link #lineageSchema})
     * @param added likewise
     * @return the changes; each row is one of the given records (callers keep its data columns)
     */
    List<Change> pair(List<Record> removed, List<Record> added) {
        if (rowLineage) {
            return pairByRowLineage(removed, added);
        }
        if (identifierIds.isEmpty() || containsNegative(keyPositions)) {
            return pairWithoutIdentity(removed, added);
        }
        Map<Record, List<Record>[]> byKey = new HashMap<>();
        for (Record row : removed) {
            groupOf(byKey, row)[0].add(row);
        }
        for (Record row : added) {
            groupOf(byKey, row)[1].add(row);
        }
        List<Map.Entry<Record, List<Record>[]>> groups = new ArrayList<>(byKey.entrySet());
        InternalRecordWrapper left = new InternalRecordWrapper(keyType);
        InternalRecordWrapper right = new InternalRecordWrapper(keyType);
        groups.sort((a, b) -> keyOrder.compare(left.wrap(a.getKey()), right.wrap(b.getKey())));
        List<Change> changes = new ArrayList<>();
        for (Map.Entry<Record, List<Record>[]> group : groups) {
            pairIdentity(group.getValue()[0], group.getValue()[1], changes);
        }
        return changes;
    }

    /** Pairs by {@code _row_id} (the last field); rows without one as without identity. */
    private List<Change> pairByRowLineage(List<Record> removed, List<Record> added) {
        int rowIdPosition = schema.columns().size();
        Map<Long, List<Record>[]> byRowId = new TreeMap<>();
        List<Record> deletesWithoutId = new ArrayList<>();
        List<Record> insertsWithoutId = new ArrayList<>();
        for (Record row : removed) {
            Long rowId = (Long) row.get(rowIdPosition);
            if (rowId == null) {
                deletesWithoutId.add(row);
            } else {
                groupOf(byRowId, rowId)[0].add(row);
            }
        }
        for (Record row : added) {
            Long rowId = (Long) row.get(rowIdPosition);
            if (rowId == null) {
                insertsWithoutId.add(row);
            } else {
                groupOf(byRowId, rowId)[1].add(row);
            }
        }
        List<Change> changes = new ArrayList<>();
        for (List<Record>[] group : byRowId.values()) {
            pairIdentity(group[0], group[1], changes);
        }
        changes.addAll(pairWithoutIdentity(deletesWithoutId, insertsWithoutId));
        return changes;
    }

    /** The changes of one identity: carry-overs cancel, then pairs, unpaired deletes, inserts. */
    private static void pairIdentity(
            List<Record> deletes, List<Record> inserts, List<Change> changes) {
        cancelCarryOvers(deletes, inserts);
        int pairs = Math.min(deletes.size(), inserts.size());
        for (int i = 0; i < pairs; i++) {
            changes.add(new Change(ChangeType.UPDATE_PREIMAGE, deletes.get(i)));
            changes.add(new Change(ChangeType.UPDATE_POSTIMAGE, inserts.get(i)));
        }
        for (int i = pairs; i < deletes.size(); i++) {
            changes.add(new Change(ChangeType.DELETE, deletes.get(i)));
        }
        for (int i = pairs; i < inserts.size(); i++) {
            changes.add(new Change(ChangeType.INSERT, inserts.get(i)));
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Record>[] groupOf(Map<Long, List<Record>[]> byRowId, Long rowId) {
        return byRowId.computeIfAbsent(
                rowId, k -> new List[] {new ArrayList<>(), new ArrayList<>()});
    }

    private List<Change> pairWithoutIdentity(List<Record> removed, List<Record> added) {
        List<Record> deletes = new ArrayList<>(removed);
        List<Record> inserts = new ArrayList<>(added);
        cancelCarryOvers(deletes, inserts);
        List<Change> changes = new ArrayList<>();
        deletes.forEach(r -> changes.add(new Change(ChangeType.DELETE, r)));
        inserts.forEach(r -> changes.add(new Change(ChangeType.INSERT, r)));
        return changes;
    }

    /** Removes identical rows present on both sides, one for one, keeping order otherwise. */
    private static void cancelCarryOvers(List<Record> deletes, List<Record> inserts) {
        if (deletes.isEmpty() || inserts.isEmpty()) {
            return;
        }
        Map<Record, Integer> inserted = new LinkedHashMap<>();
        inserts.forEach(r -> inserted.merge(r, 1, Integer::sum));
        Map<Record, Integer> cancelled = new HashMap<>();
        List<Record> keptDeletes = new ArrayList<>();
        for (Record row : deletes) {
            Integer count = inserted.get(row);
            if (count != null && count > 0) {
                inserted.put(row, count - 1);
                cancelled.merge(row, 1, Integer::sum);
            } else {
                keptDeletes.add(row);
            }
        }
        List<Record> keptInserts = new ArrayList<>();
        for (Record row : inserts) {
            Integer count = cancelled.get(row);
            if (count != null && count > 0) {
                cancelled.put(row, count - 1);
            } else {
                keptInserts.add(row);
            }
        }
        deletes.clear();
        deletes.addAll(keptDeletes);
        inserts.clear();
        inserts.addAll(keptInserts);
    }

    @SuppressWarnings("unchecked")
    private List<Record>[] groupOf(Map<Record, List<Record>[]> byKey, Record row) {
        GenericRecord key = GenericRecord.create(keyType);
        for (int i = 0; i < keyPositions.length; i++) {
            key.set(i, row.get(keyPositions[i]));
        }
        return byKey.computeIfAbsent(key, k -> new List[] {new ArrayList<>(), new ArrayList<>()});
    }

    private static boolean containsNegative(int[] positions) {
        for (int p : positions) {
            if (p < 0) {
                return true;
            }
        }
        return false;
    }
}

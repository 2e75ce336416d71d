package dev.changeflow.sources.cdf;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Turns the removed and added rows of one version into changes (F2): identical removed/added pairs
 * (rows carried over by a rewrite) cancel; a removed and an added row of the same identity become
 * {@code update_preimage} directly followed by {@code update_postimage}; the rest are {@code
 * delete} and {@code insert}.
 *
 * <p>Identity is the table's identifier fields. Output order within a version: by identity
 * (ascending, Iceberg's comparators on the internal representation), and per identity the pairs
 * first, then unpaired deletes, then unpaired inserts. A table without identifier fields yields
 * plain {@code delete} + {@code insert} (carry-overs still cancel on full-row equality): deletes
 * first, then inserts, each in file order.
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
    private final Set<Integer> identifierIds;
    private final Types.StructType keyType;
    private final int[] keyPositions;
    private final Comparator<StructLike> keyOrder;

    ChangePairing(Schema schema) {
        this.schema = schema;
        this.identifierIds = schema.identifierFieldIds();
        this.keyType = TypeUtil.select(schema.asStruct(), identifierIds);
        this.keyPositions = new int[keyType.fields().size()];
        for (int i = 0; i < keyPositions.length; i++) {
            keyPositions[i] = schema.columns().indexOf(schema.findField(keyType.fields().get(i).fieldId()));
        }
        this.keyOrder = Comparators.forType(keyType);
    }

    List<Change> pair(List<Record> removed, List<Record> added) {
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
            List<Record> deletes = group.getValue()[0];
            List<Record> inserts = group.getValue()[1];
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
        return changes;
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

package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.Accessor;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.ContentFileUtil;
import org.apache.iceberg.util.StructLikeSet;
import org.apache.iceberg.util.StructLikeWrapper;
import org.apache.iceberg.util.StructProjection;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Computes the rows one snapshot removed and added (F2, automatic mode), before pairing.
 *
 * <ul>
 *   <li><b>Added rows</b>: the live rows of the snapshot's added data files (position deletes or
 *       deletion vectors committed in the same snapshot applied).
 *   <li><b>Rows removed file by file</b>: for every data file of the parent that the snapshot
 *       removes (copy-on-write rewrite, file drop) or whose position deletes / deletion vector it
 *       changes: the rows live in the parent and not live afterwards, matched by row position
 *       ({@code _pos}). A removed delete file that brings rows back yields them as added rows.
 *   <li><b>Rows removed by equality deletes</b> added in the snapshot: straight from the delete
 *       file when the table has {@code changeflow.eq-deletes-carry-rows=true}, the file holds
 *       complete rows (its column metrics cover every column) and the snapshot is one of {@link
 *       ChangelogLineage#carriedRowsTrusted changeflow's own writer with no other writer before
 *       it}; otherwise by Iceberg's scan of the parent snapshot filtered with an IN-filter on the
 *       equality columns (files planned in batches of {@value #LOOKUP_BATCH_SIZE} keys, so
 *       statistics prune them; each candidate file is then read once with the keys of every batch
 *       that matched it, Parquet bloom filters pruning row groups), which applies the parent's own
 *       deletes, keeping the rows of data files in the delete file's partition whose key the delete
 *       file holds.
 *   <li>{@code replace} snapshots (compaction, delete-file rewrites) change no row: nothing.
 * </ul>
 *
 * <p>Rows come in the read schema (the schema of the range's ending version, F5): columns added
 * later are null. With row lineage ({@link ChangePairing#lineageSchema}) the read schema ends with
 * {@code _row_id}: Iceberg's readers give a row's stored {@code _row_id}, else its file's first row
 * id plus its position (null for files without a first row id, written before an upgrade to v3), so
 * removed rows carry the id they had in the parent's file. Rows taken straight from equality-delete
 * files have no {@code _row_id} (null). Everything one snapshot changes is held in memory.
 *
 * <p>Delete files (the ones applied to the data files read, and the key sets of the equality-delete
 * files looked up) are loaded through a {@link DeleteFileCache}, shared across the versions of one
 * change-feed read when the caller passes its cache: on a never-compacted table every version's
 * reads apply the whole pile of earlier equality deletes, each file of which is then parsed once.
 */
@Internal
final class SnapshotChangeReader {

    static final int LOOKUP_BATCH_SIZE = 1000;

    /** The removed and added rows of one snapshot, in the read schema. */
    static final class SnapshotRows {
        final List<Record> removed;
        final List<Record> added;

        SnapshotRows(List<Record> removed, List<Record> added) {
            this.removed = removed;
            this.added = added;
        }
    }

    private final Table table;
    private final Schema projection;
    private final FileRows files;
    private final boolean eqDeletesCarryRows;

    private final ChangelogLineage lineage;

    /** A reader with a delete-file cache of its own (for one version). */
    SnapshotChangeReader(Table table, Schema projection) {
        this(table, projection, new DeleteFileCache());
    }

    /**
     * A reader loading delete files through {@code deleteCache}: pass the cache of the change-feed
     * read so that the versions it reads share loaded delete files ({@link DeleteFileCache}).
     */
    SnapshotChangeReader(Table table, Schema projection, DeleteFileCache deleteCache) {
        this.table = table;
        this.projection = projection;
        this.files = new FileRows(table.io(), deleteCache);
        this.lineage = new ChangelogLineage(table);
        this.eqDeletesCarryRows =
                Boolean.parseBoolean(
                        table.properties()
                                .getOrDefault(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "false"));
    }

    SnapshotRows read(Snapshot snapshot) {
        return read(snapshot, null, true);
    }

    /**
     * One part of {@link #read(Snapshot)}, so that a version can be read as several splits whose
     * union is the whole version: the rows of the added data files in {@code addedFiles} (all when
     * null), and, when {@code removals} is set, the rows removed from (or restored in) files of the
     * parent and the rows removed by equality deletes.
     */
    SnapshotRows read(Snapshot snapshot, Set<String> addedFiles, boolean removals) {
        List<Record> removed = new ArrayList<>();
        List<Record> added = new ArrayList<>();
        if (DataOperations.REPLACE.equals(snapshot.operation())) {
            return new SnapshotRows(removed, added);
        }
        Snapshot parent = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId());
        Schema schema = SchemaChanges.schemaOf(table, snapshot);
        Schema parentSchema = parent == null ? schema : SchemaChanges.schemaOf(table, parent);

        List<DataFile> addedData = copy(snapshot.addedDataFiles(table.io()));
        List<DataFile> removedData = copy(snapshot.removedDataFiles(table.io()));
        List<DeleteFile> addedDeletes = copy(snapshot.addedDeleteFiles(table.io()));
        List<DeleteFile> removedDeletes = copy(snapshot.removedDeleteFiles(table.io()));

        List<DeleteFile> positionChanges = new ArrayList<>();
        for (DeleteFile file : concat(addedDeletes, removedDeletes)) {
            if (file.content() == FileContent.POSITION_DELETES) {
                positionChanges.add(file);
            }
        }

        Set<String> touched = new LinkedHashSet<>();
        if (removals) {
            removedData.forEach(f -> touched.add(f.location()));
        }
        boolean compareAll = false;
        for (DeleteFile file : removals ? positionChanges : List.<DeleteFile>of()) {
            String referenced = ContentFileUtil.referencedDataFileLocation(file);
            if (referenced == null) {
                compareAll = true;
            } else {
                touched.add(referenced);
            }
        }

        Map<String, FileScanTask> parentTasks =
                parent != null && !touched.isEmpty() || parent != null && compareAll
                        ? plan(parent, Expressions.alwaysTrue())
                        : Map.of();
        Map<String, FileScanTask> snapshotTasks =
                positionChanges.isEmpty() ? null : plan(snapshot, Expressions.alwaysTrue());
        if (compareAll) {
            for (Map.Entry<String, FileScanTask> entry : parentTasks.entrySet()) {
                FileScanTask after = snapshotTasks.get(entry.getKey());
                if (after == null
                        || !positionDeletes(entry.getValue()).equals(positionDeletes(after))) {
                    touched.add(entry.getKey());
                }
            }
        }

        // rows removed (or brought back) file by file, matched by row position
        for (String location : touched) {
            FileScanTask before = parentTasks.get(location);
            if (before == null) {
                continue; // a file added by this snapshot: its live rows are read below
            }
            List<FileRows.PositionedRow> liveBefore =
                    files.liveRows(before, parentSchema, projection, Expressions.alwaysTrue());
            FileScanTask after = snapshotTasks == null ? null : snapshotTasks.get(location);
            List<FileRows.PositionedRow> liveAfter =
                    after == null
                            ? List.of()
                            : files.liveRows(after, schema, projection, Expressions.alwaysTrue());
            Set<Long> positionsAfter = positions(liveAfter);
            for (FileRows.PositionedRow row : liveBefore) {
                if (!positionsAfter.contains(row.pos)) {
                    removed.add(row.row);
                }
            }
            Set<Long> positionsBefore = positions(liveBefore);
            for (FileRows.PositionedRow row : liveAfter) {
                if (!positionsBefore.contains(row.pos)) {
                    added.add(row.row);
                }
            }
        }

        // rows of added data files
        for (DataFile file : addedData) {
            if (addedFiles != null && !addedFiles.contains(file.location())) {
                continue;
            }
            FileScanTask task =
                    snapshotTasks != null
                            ? snapshotTasks.get(file.location())
                            : FileRows.taskWithoutDeletes(
                                    file, schema, table.specs().get(file.specId()));
            if (task != null) {
                files.forEachLiveRow(
                        task,
                        schema,
                        projection,
                        Expressions.alwaysTrue(),
                        row -> added.add(row.row));
            }
        }

        // rows removed by equality deletes
        List<DeleteFile> equalityDeletes = new ArrayList<>();
        for (DeleteFile file : addedDeletes) {
            if (file.content() == FileContent.EQUALITY_DELETES) {
                equalityDeletes.add(file);
            }
        }
        if (removals && parent != null && !equalityDeletes.isEmpty()) {
            if (eqDeletesCarryRows
                    && carriedRowsTrusted(snapshot)
                    && allCarryRows(equalityDeletes, parentSchema)) {
                removed.addAll(carriedRows(equalityDeletes, removed));
            } else {
                lookUpEqualityDeleted(parent, parentSchema, equalityDeletes, touched, removed);
            }
        }
        return new SnapshotRows(removed, added);
    }

    /**
     * Whether the rows carried by the snapshot's equality-delete files are the rows they delete
     * (F2): see {@link ChangelogLineage#carriedRowsTrusted}.
     */
    boolean carriedRowsTrusted(Snapshot snapshot) {
        return lineage.carriedRowsTrusted(snapshot);
    }

    /** Rows of delete files that carry complete rows, minus rows already removed file by file. */
    private List<Record> carriedRows(List<DeleteFile> deleteFiles, List<Record> alreadyRemoved) {
        Map<Record, Integer> already = new HashMap<>();
        alreadyRemoved.forEach(r -> already.merge(r, 1, Integer::sum));
        List<Record> rows = new ArrayList<>();
        for (DeleteFile file : deleteFiles) {
            for (Record row : files.deleteFileRows(file, projection)) {
                Record copy = reshape(row, projection);
                Integer count = already.get(copy);
                if (count != null && count > 0) {
                    already.put(copy, count - 1);
                } else {
                    rows.add(copy);
                }
            }
        }
        return rows;
    }

    private void lookUpEqualityDeleted(
            Snapshot parent,
            Schema parentSchema,
            List<DeleteFile> deleteFiles,
            Set<String> touched,
            List<Record> removed) {
        Map<List<Integer>, List<DeleteFile>> byColumns = new LinkedHashMap<>();
        for (DeleteFile file : deleteFiles) {
            byColumns.computeIfAbsent(file.equalityFieldIds(), k -> new ArrayList<>()).add(file);
        }
        DeleteLoader loader = files.deleteLoader();
        for (Map.Entry<List<Integer>, List<DeleteFile>> group : byColumns.entrySet()) {
            Schema keySchema = TypeUtil.select(parentSchema, new HashSet<>(group.getKey()));
            Types.StructType keyType = keySchema.asStruct();
            Map<DeleteFile, StructLikeSet> keysByFile = new LinkedHashMap<>();
            StructLikeSet allKeys = StructLikeSet.create(keyType);
            for (DeleteFile file : group.getValue()) {
                StructLikeSet keys = loader.loadEqualityDeletes(List.of(file), keySchema);
                keysByFile.put(file, keys);
                allKeys.addAll(keys);
            }
            Schema readSchema = union(projection, keySchema);
            List<StructLike> keys = new ArrayList<>(allKeys);
            // plan per batch (manifest statistics prune files), then read every candidate file once
            // with the keys of all batches that matched it: random keys match every file, and a
            // read per batch would scan the table once per batch
            Map<String, FileScanTask> candidates = new LinkedHashMap<>();
            Map<String, List<StructLike>> keysOfFile = new HashMap<>();
            for (int from = 0; from < keys.size(); from += LOOKUP_BATCH_SIZE) {
                List<StructLike> batch =
                        keys.subList(from, Math.min(keys.size(), from + LOOKUP_BATCH_SIZE));
                for (FileScanTask task : plan(parent, inFilter(keySchema, batch)).values()) {
                    String location = task.file().location();
                    if (touched.contains(location)) {
                        continue; // its removed rows were found by position
                    }
                    candidates.putIfAbsent(location, task);
                    keysOfFile.computeIfAbsent(location, k -> new ArrayList<>()).addAll(batch);
                }
            }
            for (Map.Entry<String, FileScanTask> candidate : candidates.entrySet()) {
                FileScanTask task = candidate.getValue();
                List<StructLikeSet> applicable = new ArrayList<>();
                keysByFile.forEach(
                        (file, fileKeys) -> {
                            if (appliesTo(file, task.file())) {
                                applicable.add(fileKeys);
                            }
                        });
                if (applicable.isEmpty()) {
                    continue;
                }
                List<StructLike> fileKeyList = keysOfFile.get(candidate.getKey());
                StructLikeSet lookedUp = StructLikeSet.create(keyType);
                lookedUp.addAll(fileKeyList);
                InternalRecordWrapper internal = new InternalRecordWrapper(readSchema.asStruct());
                StructProjection keyOf = StructProjection.create(readSchema, keySchema);
                files.forEachLiveRow(
                        task,
                        parentSchema,
                        readSchema,
                        inFilter(keySchema, fileKeyList),
                        row -> {
                            StructLike key = keyOf.wrap(internal.wrap(row.row));
                            if (lookedUp.contains(key) && containsAny(applicable, key)) {
                                removed.add(reshape(row.row, projection));
                            }
                        });
            }
        }
    }

    private static boolean containsAny(List<StructLikeSet> sets, StructLike key) {
        for (StructLikeSet set : sets) {
            if (set.contains(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether an equality delete applies to a data file of the parent (global or same partition).
     */
    private boolean appliesTo(DeleteFile delete, DataFile data) {
        PartitionSpec spec = table.specs().get(delete.specId());
        if (spec.isUnpartitioned()) {
            return true;
        }
        if (delete.specId() != data.specId()) {
            return false;
        }
        StructLikeWrapper a =
                StructLikeWrapper.forType(spec.partitionType()).set(delete.partition());
        StructLikeWrapper b = StructLikeWrapper.forType(spec.partitionType()).set(data.partition());
        return a.equals(b);
    }

    /**
     * {@code a} IN (...) AND {@code b} IN (...) over the primitive fields of the key, nested ones
     * included ({@code __START_AT.file} of an SCD2 table with a STRUCT sequence): a superset of the
     * keys, checked exactly after.
     */
    private static Expression inFilter(Schema keySchema, List<StructLike> keys) {
        Expression filter = Expressions.alwaysTrue();
        for (Types.NestedField leaf : TypeUtil.indexById(keySchema.asStruct()).values()) {
            if (!leaf.type().isPrimitiveType()) {
                continue;
            }
            Accessor<StructLike> accessor = keySchema.accessorForField(leaf.fieldId());
            Set<Object> values = new LinkedHashSet<>();
            boolean hasNull = false;
            for (StructLike key : keys) {
                Object value = accessor.get(key);
                if (value == null) {
                    hasNull = true;
                } else {
                    values.add(value instanceof CharSequence ? value.toString() : value);
                }
            }
            String name = keySchema.findColumnName(leaf.fieldId());
            Expression in =
                    values.isEmpty() ? Expressions.alwaysFalse() : Expressions.in(name, values);
            if (hasNull) {
                in = Expressions.or(in, Expressions.isNull(name));
            }
            filter = Expressions.and(filter, in);
        }
        return filter;
    }

    /** Whether an equality-delete file holds complete rows: its metrics cover every column. */
    private static boolean allCarryRows(List<DeleteFile> deleteFiles, Schema schema) {
        Set<Integer> leafIds = new HashSet<>();
        TypeUtil.indexById(schema.asStruct())
                .forEach(
                        (id, field) -> {
                            if (field.type().isPrimitiveType()) {
                                leafIds.add(id);
                            }
                        });
        for (DeleteFile file : deleteFiles) {
            Map<Integer, Long> counts = file.valueCounts();
            if (counts == null || !counts.keySet().containsAll(leafIds)) {
                return false;
            }
        }
        return true;
    }

    private Map<String, FileScanTask> plan(Snapshot snapshot, Expression filter) {
        Map<String, FileScanTask> tasks = new LinkedHashMap<>();
        try (CloseableIterable<FileScanTask> planned =
                table.newScan().useSnapshot(snapshot.snapshotId()).filter(filter).planFiles()) {
            for (FileScanTask task : planned) {
                tasks.put(task.file().location(), task);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return tasks;
    }

    private static Set<String> positionDeletes(FileScanTask task) {
        Set<String> locations = new HashSet<>();
        for (DeleteFile file : task.deletes()) {
            if (file.content() == FileContent.POSITION_DELETES) {
                locations.add(file.location());
            }
        }
        return locations;
    }

    private static Set<Long> positions(List<FileRows.PositionedRow> rows) {
        Set<Long> positions = new HashSet<>();
        rows.forEach(r -> positions.add(r.pos));
        return positions;
    }

    /** {@code first}'s columns followed by the columns of {@code second} that it lacks. */
    private static Schema union(Schema first, Schema second) {
        List<Types.NestedField> fields = new ArrayList<>(first.columns());
        for (Types.NestedField field : second.columns()) {
            if (first.findField(field.fieldId()) == null) {
                fields.add(field);
            }
        }
        return new Schema(fields);
    }

    /** A copy of the leading fields of {@code row} as a record of {@code schema}. */
    static Record reshape(Record row, Schema schema) {
        GenericRecord out = GenericRecord.create(schema.asStruct());
        for (int i = 0; i < schema.columns().size(); i++) {
            out.set(i, row.get(i));
        }
        return out;
    }

    private static <T> List<T> copy(Iterable<T> files) {
        List<T> list = new ArrayList<>();
        files.forEach(list::add);
        return list;
    }

    private static <T> List<T> concat(List<? extends T> a, List<? extends T> b) {
        List<T> list = new ArrayList<>(a);
        list.addAll(b);
        return list;
    }
}

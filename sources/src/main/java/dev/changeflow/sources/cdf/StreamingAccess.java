package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.flink.data.StructRowData;
import org.apache.iceberg.types.Types;

import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The parts of the batch change computation that the streaming change feed ({@code
 * dev.changeflow.sources.cdf.stream}) reuses: version history, start resolution (F3, F4, F8), the
 * removed/added rows of one part of a version (F2, unpaired), and the pairing of one identity's
 * rows of one version ({@link ChangePairing}).
 *
 * <p>Rows handed out are Flink {@link RowData} of {@link #sourceRowType(Schema, boolean)}: the data
 * columns, then {@code _change_type} STRING, {@code _commit_version} BIGINT, {@code
 * _commit_timestamp} TIMESTAMP_LTZ(3) (F1), and, when the stream pairs by row lineage ({@link
 * #rowLineage}), the row's {@code _row_id} BIGINT (null when unknown) for the pairing operator.
 * Reads fail with {@link CdfException} {@code VERSION_NOT_AVAILABLE} when a file a version needs is
 * gone (K6).
 */
@Internal
public final class StreamingAccess {

    private static final Object WHOLE_ROW = new Object();

    private StreamingAccess() {}

    /** A {@link CdfException} with {@code code} (for the stream's own checks). */
    public static CdfException error(CdfException.ErrorCode code, String message) {
        return new CdfException(code, message);
    }

    /**
     * The table's data schema for the change feed: its current schema; fails with {@code
     * UNSUPPORTED_FORMAT_VERSION} for v1 tables and {@code RESERVED_COLUMN_NAME} (F4).
     */
    public static Schema dataSchema(Table table) {
        TableVersions.of(table);
        SchemaChanges.checkReservedColumns(table.name(), table.schema());
        return table.schema();
    }

    /** The Flink row type of the change feed over {@code dataSchema} (F1). */
    public static RowType rowType(Schema dataSchema) {
        return ChangeFeedColumns.rowType(dataSchema);
    }

    /**
     * The Flink row type of a changelog read over {@code dataSchema} (G1): {@link #rowType(Schema)}
     * without {@code _change_type} (the row kind says it).
     */
    public static RowType changelogRowType(Schema dataSchema) {
        return ChangeFeedColumns.changelogRowType(dataSchema);
    }

    /**
     * Whether the change feed of {@code table} pairs rows by row lineage ({@code _row_id}): a
     * format v3 table without identifier fields (design.md "Row identity"; same rule as the batch
     * feed).
     */
    public static boolean rowLineage(Table table, Schema dataSchema) {
        return ChangePairing.usesRowLineage(table, dataSchema);
    }

    /**
     * The Flink row type the change-feed source emits: {@link #rowType(Schema)}, plus a last
     * nullable {@code _row_id} BIGINT column with {@code rowLineage}.
     */
    public static RowType sourceRowType(Schema dataSchema, boolean rowLineage) {
        RowType rowType = rowType(dataSchema);
        if (!rowLineage) {
            return rowType;
        }
        List<RowType.RowField> fields = new ArrayList<>(rowType.getFields());
        fields.add(new RowType.RowField(MetadataColumns.ROW_ID.name(), new BigIntType(true)));
        return new RowType(false, fields);
    }

    /** Reads the version history of {@code table} once (F8); fails for format v1 tables. */
    public static History history(Table table) {
        return new History(TableVersions.of(table));
    }

    /** One reading of a table's version history (design.md "Version", F8). */
    public static final class History {
        private final TableVersions versions;

        private History(TableVersions versions) {
            this.versions = versions;
        }

        /** The version of {@code main}'s current snapshot; 0 without a snapshot. */
        public long latestVersion() {
            return versions.latestVersion();
        }

        /** The earliest version whose changes can be computed; latest + 1 when there is none. */
        public long earliestAvailableVersion() {
            return versions.earliestAvailableVersion();
        }

        /** Retained ancestors of {@code main} with a version {@code >= from}, oldest first. */
        public List<Snapshot> ancestorsFrom(long from) {
            return versions.between(from, Long.MAX_VALUE);
        }

        /**
         * Whether the snapshot is still an ancestor of {@code main} (false after a rollback past
         * it).
         */
        public boolean isAncestor(long snapshotId) {
            for (Snapshot s : versions.ancestors()) {
                if (s.snapshotId() == snapshotId) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Resolves a streaming start given as a version or a timestamp (exactly one non-null) to the
     * first version to read. A version may be up to latest + 1 (F8, the replay case); beyond that,
     * and for every other rule, the batch errors apply: {@code START_AFTER_LATEST_COMMIT}, {@code
     * VERSION_NOT_AVAILABLE}, {@code INVALID_TIMESTAMP}, {@code TABLE_HISTORY_REWRITTEN} (F3, F4).
     * Their advice names only options of streams ({@code START_AFTER_LATEST_COMMIT}: an earlier
     * start or {@code starting-version} = {@code latest}; a stream has no {@code
     * timestamp-out-of-range.enabled}).
     */
    public static long resolveStart(Table table, Long version, String timestamp) {
        TableVersions versions = TableVersions.of(table);
        long latest = versions.latestVersion();
        if (version != null && version == latest + 1) {
            return version; // never expired: the earliest available version is at most latest + 1
        }
        VersionRange range =
                VersionRange.resolve(versions, version, timestamp, null, null, false, true);
        return range.isEmpty() ? latest + 1 : range.start();
    }

    /**
     * The rows one part of {@code snapshot} removed (as {@code delete}) and added (as {@code
     * insert}), unpaired, tagged with the snapshot's version and commit time: the rows of the added
     * data file {@code addedFile} (none when null) and, with {@code removals}, the removed rows.
     * Rows are of {@link #sourceRowType(Schema, boolean)}. Delete files are loaded through {@code
     * deleteCache}: a reader passes the same cache for every split it reads, so later versions
     * reuse the delete files loaded for earlier ones.
     */
    public static List<RowData> versionRows(
            Table table,
            Schema dataSchema,
            boolean rowLineage,
            Snapshot snapshot,
            String addedFile,
            boolean removals,
            DeleteFileCache deleteCache) {
        try {
            SnapshotChangeReader.SnapshotRows rows =
                    new SnapshotChangeReader(table, readSchema(dataSchema, rowLineage), deleteCache)
                            .read(
                                    snapshot,
                                    addedFile == null ? Set.of() : Set.of(addedFile),
                                    removals);
            List<RowData> out = new ArrayList<>(rows.removed.size() + rows.added.size());
            Schema changeSchema = sourceSchema(dataSchema, rowLineage);
            for (Record row : rows.removed) {
                out.add(toRowData(changeSchema, row, ChangeType.DELETE, snapshot));
            }
            for (Record row : rows.added) {
                out.add(toRowData(changeSchema, row, ChangeType.INSERT, snapshot));
            }
            return out;
        } catch (NotFoundException e) {
            throw missingFile(table, snapshot.sequenceNumber(), e);
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof FileNotFoundException) {
                throw missingFile(table, snapshot.sequenceNumber(), e);
            }
            throw e;
        }
    }

    /**
     * The live rows of one scan task of a snapshot, as {@code insert} rows tagged with {@code
     * version} and {@code commitMillis} (the initial snapshot of a stream, F6), of {@link
     * #sourceRowType(Schema, boolean)}. Delete files are loaded through {@code deleteCache} (the
     * equality deletes of the snapshot apply to many of its tasks).
     */
    public static void forEachSnapshotRow(
            Table table,
            Schema dataSchema,
            boolean rowLineage,
            FileScanTask task,
            long version,
            long commitMillis,
            DeleteFileCache deleteCache,
            Consumer<RowData> consumer) {
        Schema changeSchema = sourceSchema(dataSchema, rowLineage);
        try {
            new FileRows(table.io(), deleteCache)
                    .forEachLiveRow(
                            task,
                            table.schema(),
                            // with _row_id: a row's insert is keyed as its later changes are
                            readSchema(dataSchema, rowLineage),
                            Expressions.alwaysTrue(),
                            row ->
                                    consumer.accept(
                                            toRowData(
                                                    changeSchema,
                                                    row.row,
                                                    ChangeType.INSERT,
                                                    version,
                                                    commitMillis)));
        } catch (NotFoundException e) {
            throw missingFile(table, version, e);
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof FileNotFoundException) {
                throw missingFile(table, version, e);
            }
            throw e;
        }
    }

    /**
     * Pairs the unpaired rows of ONE version (all of one row identity, or of a few identities that
     * share a hash) into changes (F2, {@link ChangePairing}): returns the rows in output order,
     * each with its final change type (see {@link PairedRow}). Rows of different identities never
     * pair; rows are compared on the internal representation of their data columns.
     *
     * @param rows rows of {@link #rowType(Schema)} whose {@code _change_type} is {@code delete}
     *     (removed) or {@code insert} (added)
     */
    public static List<PairedRow> pair(Schema dataSchema, List<RowData> rows) {
        return pair(dataSchema, false, rows);
    }

    /**
     * {@link #pair(Schema, List)} over rows of {@link #sourceRowType(Schema, boolean)}: with {@code
     * rowLineage}, rows pair by their {@code _row_id} (the last column; rows without one as without
     * identity), as in the batch feed.
     */
    public static List<PairedRow> pair(Schema dataSchema, boolean rowLineage, List<RowData> rows) {
        RowDataWrapper wrapper =
                new RowDataWrapper(FlinkSchemaUtil.convert(dataSchema), dataSchema.asStruct());
        int columns = dataSchema.columns().size();
        int[] keyPositions = rowLineage ? null : keyPositions(dataSchema);
        Schema recordSchema = readSchema(dataSchema, rowLineage);
        Map<Record, RowData> origin = new IdentityHashMap<>();
        // group by exact identity first, so that ChangePairing never compares two identities
        Map<Object, List<Record>[]> byIdentity = new LinkedHashMap<>();
        for (RowData row : rows) {
            wrapper.wrap(row);
            GenericRecord record = GenericRecord.create(recordSchema.asStruct());
            for (int i = 0; i < columns; i++) {
                record.set(i, wrapper.get(i, Object.class));
            }
            origin.put(record, row);
            Object identity = WHOLE_ROW;
            if (rowLineage) {
                Long rowId = row.isNullAt(columns + 3) ? null : row.getLong(columns + 3);
                record.set(columns, rowId);
                identity = rowId == null ? WHOLE_ROW : rowId;
            } else if (keyPositions != null) {
                List<Object> values = new ArrayList<>(keyPositions.length);
                for (int p : keyPositions) {
                    values.add(record.get(p));
                }
                identity = values;
            }
            @SuppressWarnings("unchecked")
            List<Record>[] group =
                    byIdentity.computeIfAbsent(
                            identity, k -> new List[] {new ArrayList<>(), new ArrayList<>()});
            boolean removed = ChangeType.DELETE.value().equals(row.getString(columns).toString());
            group[removed ? 0 : 1].add(record);
        }
        ChangePairing pairing = new ChangePairing(dataSchema, rowLineage);
        List<PairedRow> out = new ArrayList<>(rows.size());
        for (List<Record>[] group : byIdentity.values()) {
            for (ChangePairing.Change change : pairing.pair(group[0], group[1])) {
                out.add(new PairedRow(change.type, origin.get(change.row)));
            }
        }
        return out;
    }

    /** A row of the stream and the change type pairing gave it. */
    public static final class PairedRow {
        public final ChangeType type;
        public final RowData row;

        PairedRow(ChangeType type, RowData row) {
            this.type = type;
            this.row = row;
        }
    }

    /** Positions of the identifier fields among the data columns, or null without identity. */
    public static int[] keyPositions(Schema dataSchema) {
        Set<Integer> ids = dataSchema.identifierFieldIds();
        if (ids.isEmpty()) {
            return null;
        }
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < dataSchema.columns().size(); i++) {
            if (ids.contains(dataSchema.columns().get(i).fieldId())) {
                positions.add(i);
            }
        }
        if (positions.size() != ids.size()) {
            return null; // nested identifier fields: identity falls back to the whole row
        }
        return positions.stream().mapToInt(Integer::intValue).toArray();
    }

    private static RowData toRowData(
            Schema changeSchema, Record data, ChangeType type, Snapshot snapshot) {
        return toRowData(
                changeSchema, data, type, snapshot.sequenceNumber(), snapshot.timestampMillis());
    }

    /** The rows read from files: the data columns, then {@code _row_id} with row lineage. */
    private static Schema readSchema(Schema dataSchema, boolean rowLineage) {
        return rowLineage ? ChangePairing.lineageSchema(dataSchema) : dataSchema;
    }

    /** The Iceberg form of {@link #sourceRowType(Schema, boolean)}. */
    private static Schema sourceSchema(Schema dataSchema, boolean rowLineage) {
        Schema changeSchema = ChangeFeedColumns.changeSchema(dataSchema);
        if (!rowLineage) {
            return changeSchema;
        }
        List<Types.NestedField> fields = new ArrayList<>(changeSchema.columns());
        fields.add(MetadataColumns.ROW_ID);
        return new Schema(fields);
    }

    /**
     * @param changeSchema {@link #sourceSchema}: data columns, three metadata columns, optionally
     *     {@code _row_id} (then {@code data} holds it after its data columns)
     */
    private static RowData toRowData(
            Schema changeSchema, Record data, ChangeType type, long version, long commitMillis) {
        GenericRecord record = GenericRecord.create(changeSchema.asStruct());
        boolean rowLineage =
                changeSchema.columns().get(changeSchema.columns().size() - 1).fieldId()
                        == MetadataColumns.ROW_ID.fieldId();
        int columns = changeSchema.columns().size() - (rowLineage ? 4 : 3);
        for (int i = 0; i < columns; i++) {
            record.set(i, data.get(i));
        }
        record.set(columns, type.value());
        record.set(columns + 1, version);
        record.set(
                columns + 2,
                OffsetDateTime.ofInstant(Instant.ofEpochMilli(commitMillis), ZoneOffset.UTC));
        if (rowLineage) {
            record.set(columns + 3, data.get(columns));
        }
        return new StructRowData(changeSchema.asStruct())
                .setStruct(new InternalRecordWrapper(changeSchema.asStruct()).wrap(record));
    }

    private static CdfException missingFile(Table table, long version, Exception cause) {
        return new CdfException(
                CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                String.format(
                        "Version %d of table %s is not available: a file it needs is missing (%s). "
                                + "Read from a later version, or restore the file.",
                        version, table.name(), cause.getMessage()),
                cause);
    }
}

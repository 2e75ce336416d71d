package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.flink.data.StructRowData;
import org.apache.iceberg.io.CloseableIterable;

import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * Batch read of an Iceberg table's change data feed over an inclusive range of versions (F1–F5,
 * F8), computed from the snapshots (automatic mode).
 *
 * <pre>{@code
 * TableChanges changes = TableChanges.forTable(table).startingVersion(5).endingVersion(10).build();
 * try (CloseableIterable<Record> rows = changes.read()) { ... }
 * }</pre>
 *
 * <p><b>Row shape</b> ({@link #schema()}, {@link #rowType()}): the columns of the table's schema at
 * the ending version (F5; columns added later are null in earlier versions), then {@code
 * _change_type} STRING ({@code insert}, {@code update_preimage}, {@code update_postimage}, {@code
 * delete}), {@code _commit_version} BIGINT (the snapshot's sequence number) and {@code
 * _commit_timestamp} TIMESTAMP_LTZ(3) (the commit time), all non-null (F1). As Iceberg {@link
 * Record}s {@code _commit_timestamp} is an {@link OffsetDateTime} in UTC.
 *
 * <p><b>Order</b>: versions ascending; within a version see {@link ChangePairing} (per identity a
 * preimage directly before its postimage). Row identity is the table's identifier fields, else (a
 * format v3 table) its row lineage {@code _row_id}, read from the data files and not part of the
 * output; a table with neither (format v2 without identifier fields) yields plain delete + insert
 * pairs for updates. On v3, rows without a {@code _row_id} (files written before an upgrade to v3)
 * and rows a writer gave a new {@code _row_id} (one that does not keep row lineage, even for rows
 * it carried over unchanged) are plain delete + insert too; see {@link ChangePairing}.
 *
 * <p><b>Errors</b> ({@link CdfException}): {@code build()} fails with {@code INVALID_CDC_OPTIONS},
 * {@code UNSUPPORTED_FORMAT_VERSION}, {@code RESERVED_COLUMN_NAME}, {@code INVALID_TIMESTAMP},
 * {@code INVALID_CDC_RANGE}, {@code START_AFTER_LATEST_COMMIT}, {@code END_AFTER_LATEST_COMMIT},
 * {@code VERSION_NOT_AVAILABLE}, {@code TABLE_HISTORY_REWRITTEN} or {@code
 * INCOMPATIBLE_SCHEMA_CHANGE}; reading fails with {@code VERSION_NOT_AVAILABLE} when a file a
 * version needs is gone (K6) — never a partial result.
 *
 * <p><b>Memory</b>: one version's changes, plus the delete files loaded while reading, kept for the
 * later versions of the range in a {@link DeleteFileCache} of at most {@code
 * delete-file-cache-size} ({@link ChangeFeedOptions#DELETE_FILE_CACHE_SIZE}, default 64 MiB)
 * estimated bytes (see {@link Builder#deleteFileCacheSize}).
 */
@PublicEvolving
public final class TableChanges {

    private final Table table;
    private final VersionRange range;
    private final Schema dataSchema;
    private final Schema schema;
    private final boolean rowLineage;
    private final DeleteFileCache deleteCache;

    private TableChanges(
            Table table, VersionRange range, Schema dataSchema, DeleteFileCache deleteCache) {
        this.table = table;
        this.deleteCache = deleteCache;
        this.range = range;
        this.dataSchema = dataSchema;
        this.rowLineage = ChangePairing.usesRowLineage(table, dataSchema);
        this.schema = ChangeFeedColumns.changeSchema(dataSchema);
    }

    /** The delete-file cache this read loads delete files through (its own or a shared one). */
    DeleteFileCache deleteFileCache() {
        return deleteCache;
    }

    /** Starts a builder over {@code table} (format v2 or v3). */
    public static Builder forTable(Table table) {
        return new Builder(table);
    }

    /** The change-feed schema: the ending version's columns plus the metadata columns. */
    public Schema schema() {
        return schema;
    }

    /** The Flink row type of {@link #readRowData()}. */
    public RowType rowType() {
        return ChangeFeedColumns.rowType(dataSchema);
    }

    /** Versions of {@code main}'s ancestry in the resolved range, ascending (empty if none). */
    public List<Long> versions() {
        List<Long> versions = new ArrayList<>();
        range.snapshots().forEach(s -> versions.add(s.sequenceNumber()));
        return versions;
    }

    /** The changes of the range, version by version (one version is computed at a time). */
    public CloseableIterable<Record> read() {
        List<Snapshot> snapshots = range.snapshots();
        Iterable<Record> rows =
                () ->
                        new Iterator<Record>() {
                            private int next;
                            private Iterator<Record> current = Collections.emptyIterator();

                            @Override
                            public boolean hasNext() {
                                while (!current.hasNext() && next < snapshots.size()) {
                                    current = readVersion(snapshots.get(next++)).iterator();
                                }
                                return current.hasNext();
                            }

                            @Override
                            public Record next() {
                                if (!hasNext()) {
                                    throw new NoSuchElementException();
                                }
                                return current.next();
                            }
                        };
        return CloseableIterable.withNoopClose(rows);
    }

    /** The changes as Flink {@link RowData} of {@link #rowType()}. */
    public CloseableIterable<RowData> readRowData() {
        return CloseableIterable.transform(
                read(),
                record ->
                        new StructRowData(schema.asStruct())
                                .setStruct(
                                        new InternalRecordWrapper(schema.asStruct()).wrap(record)));
    }

    /**
     * The changes of one version of the range as Flink {@link RowData} of {@link #rowType()}, so
     * that a parallel reader can split the range by version. The rows are those {@link
     * #readRowData()} gives for {@code version}.
     *
     * @throws IllegalArgumentException when {@code version} is not one of {@link #versions()}
     * @throws CdfException {@code VERSION_NOT_AVAILABLE} when a file the version needs is gone (K6)
     */
    public CloseableIterable<RowData> readRowData(long version) {
        for (Snapshot snapshot : range.snapshots()) {
            if (snapshot.sequenceNumber() == version) {
                return CloseableIterable.transform(
                        CloseableIterable.withNoopClose(readVersion(snapshot)),
                        record ->
                                new StructRowData(schema.asStruct())
                                        .setStruct(
                                                new InternalRecordWrapper(schema.asStruct())
                                                        .wrap(record)));
            }
        }
        throw new IllegalArgumentException(
                String.format(
                        "Version %d is not in the range %s of table %s",
                        version, versions(), table.name()));
    }

    private List<Record> readVersion(Snapshot snapshot) {
        try {
            Schema readSchema = rowLineage ? ChangePairing.lineageSchema(dataSchema) : dataSchema;
            SnapshotChangeReader.SnapshotRows rows =
                    new SnapshotChangeReader(table, readSchema, deleteCache).read(snapshot);
            OffsetDateTime committed =
                    OffsetDateTime.ofInstant(
                            Instant.ofEpochMilli(snapshot.timestampMillis()), ZoneOffset.UTC);
            List<Record> out = new ArrayList<>();
            for (ChangePairing.Change change :
                    new ChangePairing(dataSchema, rowLineage).pair(rows.removed, rows.added)) {
                GenericRecord record = GenericRecord.create(schema.asStruct());
                int columns = dataSchema.columns().size();
                for (int i = 0; i < columns; i++) {
                    record.set(i, change.row.get(i));
                }
                record.set(columns, change.type.value());
                record.set(columns + 1, snapshot.sequenceNumber());
                record.set(columns + 2, committed);
                out.add(record);
            }
            return out;
        } catch (NotFoundException e) {
            throw missingFile(snapshot, e);
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof FileNotFoundException) {
                throw missingFile(snapshot, e);
            }
            throw e;
        }
    }

    private CdfException missingFile(Snapshot snapshot, Exception cause) {
        return new CdfException(
                CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                String.format(
                        "Version %d of table %s is not available: a file it needs is missing (%s). "
                                + "Read from a later version, or restore the file.",
                        snapshot.sequenceNumber(), table.name(), cause.getMessage()),
                cause);
    }

    /** Builder of {@link TableChanges}; bounds are validated and resolved in {@link #build()}. */
    @PublicEvolving
    public static final class Builder {
        private final Table table;
        private Long startingVersion;
        private String startingTimestamp;
        private Long endingVersion;
        private String endingTimestamp;
        private boolean timestampOutOfRangeEnabled;
        private DeleteFileCache deleteCache;
        private long deleteCacheBytes = DeleteFileCache.DEFAULT_MAX_BYTES;

        private Builder(Table table) {
            this.table = table;
        }

        /** First version to read, inclusive (F3). */
        public Builder startingVersion(long version) {
            this.startingVersion = version;
            return this;
        }

        /** Read from the first commit at or after this time (F3). */
        public Builder startingTimestamp(String timestamp) {
            this.startingTimestamp = timestamp;
            return this;
        }

        /** Last version to read, inclusive; default the latest version (F3). */
        public Builder endingVersion(long version) {
            this.endingVersion = version;
            return this;
        }

        /** Read up to the last commit at or before this time (F3). */
        public Builder endingTimestamp(String timestamp) {
            this.endingTimestamp = timestamp;
            return this;
        }

        /** See {@link ChangeFeedOptions#TIMESTAMP_OUT_OF_RANGE_ENABLED} (F4). */
        public Builder timestampOutOfRangeEnabled(boolean enabled) {
            this.timestampOutOfRangeEnabled = enabled;
            return this;
        }

        /**
         * Bound of this read's own delete-file cache in estimated heap bytes ({@link
         * ChangeFeedOptions#DELETE_FILE_CACHE_SIZE}, default 64 MiB); 0 caches nothing. Ignored
         * when {@link #deleteFileCache} gives a shared cache.
         *
         * @throws IllegalArgumentException when {@code bytes} is negative
         */
        public Builder deleteFileCacheSize(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException(
                        "the delete-file cache size must be at least 0 bytes, got " + bytes);
            }
            this.deleteCacheBytes = bytes;
            return this;
        }

        /**
         * Loads delete files through {@code cache}, so that several {@link TableChanges} reading
         * the same table (concurrent version reads) share loaded delete files; by default each
         * {@link TableChanges} has a cache of its own of {@link #deleteFileCacheSize} bytes. The
         * versions one {@link TableChanges} reads always share its cache.
         */
        @Internal
        public Builder deleteFileCache(DeleteFileCache cache) {
            this.deleteCache = cache;
            return this;
        }

        /**
         * Sets bounds from options keyed as in {@link ChangeFeedOptions}, read by {@link
         * ChangeFeedOptions#resolve(String, Map)}; options of streaming reads are accepted and have
         * no effect here.
         *
         * @throws CdfException {@code INVALID_CDC_OPTIONS} for an unknown key or a value its option
         *     does not accept ({@code starting-version = latest} included: a batch read needs a
         *     version)
         */
        public Builder options(Map<String, String> options) {
            return options(ChangeFeedOptions.resolve(table.name(), options));
        }

        /** As {@link #options(Map)}, with options already resolved. */
        public Builder options(ChangeFeedSettings settings) {
            if (settings.startsAtLatest()) {
                throw options(
                        "'%s' = '%s' for the change feed of table %s is not a version. Versions are "
                                + "integers >= 0 ('latest' is for streaming reads).",
                        ChangeFeedOptions.STARTING_VERSION.key(),
                        settings.asMap().get(ChangeFeedOptions.STARTING_VERSION.key()),
                        table.name());
            }
            settings.getOptional(ChangeFeedOptions.STARTING_VERSION)
                    .ifPresent(this::startingVersion);
            settings.getOptional(ChangeFeedOptions.ENDING_VERSION).ifPresent(this::endingVersion);
            settings.getOptional(ChangeFeedOptions.STARTING_TIMESTAMP)
                    .ifPresent(this::startingTimestamp);
            settings.getOptional(ChangeFeedOptions.ENDING_TIMESTAMP)
                    .ifPresent(this::endingTimestamp);
            settings.getOptional(ChangeFeedOptions.TIMESTAMP_OUT_OF_RANGE_ENABLED)
                    .ifPresent(this::timestampOutOfRangeEnabled);
            settings.getOptional(ChangeFeedOptions.DELETE_FILE_CACHE_SIZE)
                    .ifPresent(size -> deleteFileCacheSize(size.getBytes()));
            return this;
        }

        /** Validates the options and resolves the range against the table's current metadata. */
        public TableChanges build() {
            String name = table.name();
            String startV = ChangeFeedOptions.STARTING_VERSION.key();
            String startT = ChangeFeedOptions.STARTING_TIMESTAMP.key();
            String endV = ChangeFeedOptions.ENDING_VERSION.key();
            String endT = ChangeFeedOptions.ENDING_TIMESTAMP.key();
            if (startingVersion != null && startingTimestamp != null) {
                throw options(
                        "Both '%s' (%d) and '%s' ('%s') are set for the change feed of table %s. Set only one of them.",
                        startV, startingVersion, startT, startingTimestamp, name);
            }
            if (startingVersion == null && startingTimestamp == null) {
                throw options(
                        "Neither '%s' nor '%s' is set for the change feed of table %s. Set one of them.",
                        startV, startT, name);
            }
            if (endingVersion != null && endingTimestamp != null) {
                throw options(
                        "Both '%s' (%d) and '%s' ('%s') are set for the change feed of table %s. Set only one of them.",
                        endV, endingVersion, endT, endingTimestamp, name);
            }
            if (startingVersion != null && startingVersion < 0) {
                throw options(
                        "'%s' = %d for the change feed of table %s is negative. Versions are integers >= 0.",
                        startV, startingVersion, name);
            }
            if (endingVersion != null && endingVersion < 0) {
                throw options(
                        "'%s' = %d for the change feed of table %s is negative. Versions are integers >= 0.",
                        endV, endingVersion, name);
            }
            table.refresh();
            TableVersions versions = TableVersions.of(table);
            SchemaChanges.checkReservedColumns(name, table.schema());
            VersionRange range =
                    VersionRange.resolve(
                            versions,
                            startingVersion,
                            startingTimestamp,
                            endingVersion,
                            endingTimestamp,
                            timestampOutOfRangeEnabled);
            Schema dataSchema =
                    range.isEmpty()
                            ? table.schema()
                            : SchemaChanges.schemaOf(
                                    table, range.snapshots().get(range.snapshots().size() - 1));
            SchemaChanges.checkReservedColumns(name, dataSchema);
            SchemaChanges.checkAdditive(table, range.snapshots());
            return new TableChanges(
                    table,
                    range,
                    dataSchema,
                    deleteCache != null ? deleteCache : new DeleteFileCache(deleteCacheBytes));
        }

        private static CdfException options(String format, Object... args) {
            return new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS, String.format(format, args));
        }
    }
}

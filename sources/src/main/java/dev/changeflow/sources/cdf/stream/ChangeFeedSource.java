package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.ChangeFeedOptions.StartMode;
import dev.changeflow.sources.cdf.ChangeFeedSettings;
import dev.changeflow.sources.cdf.ChangeType;
import dev.changeflow.sources.cdf.DeleteFileCache;
import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.retention.RegistryPositionListener;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumState;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumStateSerializer;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumerator;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedSplitPlanner;
import dev.changeflow.sources.cdf.stream.enumerator.CheckpointVersionListener;
import dev.changeflow.sources.cdf.stream.enumerator.ConsumerPositionListener;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;
import dev.changeflow.sources.cdf.stream.pairing.ChangePairingFunction;
import dev.changeflow.sources.cdf.stream.pairing.RowIdentityKeySelector;
import dev.changeflow.sources.cdf.stream.reader.ChangeFeedSourceReader;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplitSerializer;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Streaming change data feed of an Iceberg table (semantics.md F1, F2, F6; design.md "Iceberg
 * mapping of the change feed"), and its FLIP-27 source. The entry point is {@link #forTable}: its
 * {@link Builder#build} adds this source, whose readers emit unpaired rows and version-completion
 * watermarks, keyed by row identity into the {@link ChangePairingFunction}, which pairs them.
 *
 * <pre>{@code
 * DataStream<RowData> changes =
 *         ChangeFeedSource.forTable(tableLoader).startingVersion(76).build(env);
 * }</pre>
 *
 * <p><b>Rows</b>: the table's columns (its schema when the stream is built), then {@code
 * _change_type} STRING ({@code insert}, {@code update_preimage}, {@code update_postimage}, {@code
 * delete}), {@code _commit_version} BIGINT (snapshot sequence number) and {@code _commit_timestamp}
 * TIMESTAMP_LTZ(3) (commit time, UTC millis), all non-null. Record timestamps and watermarks are
 * versions, not times: watermark {@code v} means every change of versions {@code <= v} has been
 * emitted.
 *
 * <p><b>Pairing</b>: row identity is the table's identifier fields; else, for a format v3 table,
 * its row lineage ({@code _row_id}, read from the data files, not part of the output rows); else
 * none, and updates come as plain {@code delete} + {@code insert} (rows without a {@code _row_id},
 * or given a new one by a rewrite, too). The same rule and the same changes as {@code
 * TableChanges}.
 *
 * <p><b>Order</b>: per row identity (identifier fields, else {@code _row_id}, else the whole row)
 * versions ascending, a preimage directly before its postimage. No order across identities (a
 * single order holds only at parallelism 1).
 *
 * <p><b>Start</b> (F6, F8, G1): one {@link ChangeFeedStart} strategy — no starting bound → the
 * current snapshot as {@code insert} rows tagged with its version, then later changes; {@code
 * latest} → only versions committed after the build; a version {@code N} → from N ({@code N} may be
 * latest + 1); a timestamp → from the first commit at or after it; {@link
 * Builder#snapshotThenChanges snapshot-then-changes} from {@code N} (G1) → the table as of {@code N
 * − 1} as {@code insert} rows tagged with that snapshot's version, then the changes from N. The
 * builder checks it, the enumerator resolves it. A checkpoint or savepoint restore resumes at its
 * position; the start only applies to a start without state.
 *
 * <p><b>Changelog</b> (G1, {@link Builder#changelog}): the same changes as Flink row kinds — the
 * table's columns, {@code _commit_version}, {@code _commit_timestamp}, and {@code +I}/{@code
 * -U}/{@code +U}/{@code -D} for {@code insert}/{@code update_preimage}/{@code
 * update_postimage}/{@code delete} — in the same per-identity order, so a Flink SQL query or a
 * retracting operator can maintain its result from it. {@code start-mode} ({@link
 * Builder#startMode}, default {@code snapshot-then-changes} here) decides whether the table as of
 * the version before the first one read comes first as {@code +I} rows. The table's identifier
 * fields are the changelog's key; a table without them gives full-row retractions (updates as
 * {@code -D} + {@code +I}, or {@code -U}/{@code +U} paired by {@code _row_id} on format v3).
 *
 * <pre>{@code
 * DataStream<RowData> changelog =
 *         ChangeFeedSource.forTable(tableLoader).changelog(true).startingVersion(76).build(env);
 * }</pre>
 *
 * <p>The source alone ({@link Builder#buildSource}) emits rows of {@link #producedRowType()}: the
 * change feed's row type ({@link #rowType()}), plus each row's {@code _row_id} as a last column
 * when the stream pairs by row lineage ({@link #rowLineage()}: a format v3 table without identifier
 * fields), with the version as record timestamp, and watermark {@code v} once every row of versions
 * {@code <= v} was emitted.
 *
 * <p><b>Errors</b> ({@link CdfException}, thrown by {@link Builder#build}): {@code
 * INVALID_CDC_OPTIONS} for contradicting or malformed options; {@code START_AFTER_LATEST_COMMIT} (a
 * version after latest + 1, or a timestamp after the last commit), {@code VERSION_NOT_AVAILABLE},
 * {@code INVALID_TIMESTAMP}, {@code TABLE_HISTORY_REWRITTEN}, {@code UNSUPPORTED_FORMAT_VERSION},
 * {@code RESERVED_COLUMN_NAME}. While running, an expired next version or a missing file fails the
 * job with {@code VERSION_NOT_AVAILABLE}, a rollback past a read version with {@code
 * TABLE_HISTORY_REWRITTEN}.
 */
@PublicEvolving
public final class ChangeFeedSource
        implements Source<RowData, ChangeFeedSplit, ChangeFeedEnumState>,
                ResultTypeQueryable<RowData> {

    private static final long serialVersionUID = 1L;

    private final TableLoader tableLoader;
    private final String tableName;
    private final Schema dataSchema;
    private final RowType rowType;
    private final boolean rowLineage;
    private final ChangeFeedStart start;
    @Nullable private final PlanningPosition startPosition;
    private final long boundVersion;
    private final long monitorIntervalMillis;
    private final long maxFilesPerCycle;
    private final long maxBytesPerCycle;
    private final long deleteCacheBytes;
    @Nullable private final String consumerId;
    private final ConsumerPositionListener consumerListener;
    private final CheckpointVersionListener versionListener;

    ChangeFeedSource(
            TableLoader tableLoader,
            String tableName,
            Schema dataSchema,
            boolean rowLineage,
            ChangeFeedStart start,
            @Nullable PlanningPosition startPosition,
            long boundVersion,
            long monitorIntervalMillis,
            long maxFilesPerCycle,
            long maxBytesPerCycle,
            long deleteCacheBytes,
            @Nullable String consumerId,
            ConsumerPositionListener consumerListener,
            CheckpointVersionListener versionListener) {
        this.tableLoader = tableLoader;
        this.tableName = tableName;
        this.dataSchema = dataSchema;
        this.rowType = StreamingAccess.rowType(dataSchema);
        this.rowLineage = rowLineage;
        this.start = start;
        this.startPosition = startPosition;
        this.boundVersion = boundVersion;
        this.monitorIntervalMillis = monitorIntervalMillis;
        this.maxFilesPerCycle = maxFilesPerCycle;
        this.maxBytesPerCycle = maxBytesPerCycle;
        this.deleteCacheBytes = deleteCacheBytes;
        this.consumerId = consumerId;
        this.consumerListener = consumerListener;
        this.versionListener = versionListener;
    }

    /** Starts a builder over the table {@code tableLoader} loads (format v2 or v3). */
    public static Builder forTable(TableLoader tableLoader) {
        return new Builder(tableLoader);
    }

    /** The change feed's row type (F1). */
    public RowType rowType() {
        return rowType;
    }

    /** The row type of the rows this source emits: {@link #rowType()} [+ {@code _row_id}]. */
    public RowType producedRowType() {
        return StreamingAccess.sourceRowType(dataSchema, rowLineage);
    }

    /**
     * Whether rows carry their {@code _row_id} and pair by it (v3 table without identifier fields).
     */
    public boolean rowLineage() {
        return rowLineage;
    }

    /** The data schema (the table's schema when the stream was built). */
    public Schema dataSchema() {
        return dataSchema;
    }

    /**
     * Where a start without state begins as checked by the builder; null when the start is resolved
     * at job start ({@link ChangeFeedStart#resolvedAtJobStart}).
     */
    @VisibleForTesting
    @Nullable
    PlanningPosition startPosition() {
        return startPosition;
    }

    /** The starting strategy the enumerator resolves on a start without state. */
    @VisibleForTesting
    ChangeFeedStart start() {
        return start;
    }

    @Override
    public Boundedness getBoundedness() {
        return boundVersion == Long.MAX_VALUE
                ? Boundedness.CONTINUOUS_UNBOUNDED
                : Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<RowData, ChangeFeedSplit> createReader(SourceReaderContext readerContext) {
        return new ChangeFeedSourceReader(
                readerContext,
                tableLoader.clone(),
                dataSchema,
                rowLineage,
                new DeleteFileCache(deleteCacheBytes));
    }

    @Override
    public SplitEnumerator<ChangeFeedSplit, ChangeFeedEnumState> createEnumerator(
            SplitEnumeratorContext<ChangeFeedSplit> enumContext) {
        // a start without state: the one place the starting strategy is resolved
        PlanningPosition position;
        TableLoader loader = tableLoader.clone();
        try (loader) {
            loader.open();
            Table table = loader.loadTable();
            table.refresh();
            position = start.resolve(table);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return restoreEnumerator(
                enumContext,
                new ChangeFeedEnumState(position, boundVersion, -1L, List.of(), Map.of()));
    }

    @Override
    public SplitEnumerator<ChangeFeedSplit, ChangeFeedEnumState> restoreEnumerator(
            SplitEnumeratorContext<ChangeFeedSplit> enumContext, ChangeFeedEnumState checkpoint) {
        TableLoader loader = tableLoader.clone();
        loader.open();
        Table table = loader.loadTable();
        return new ChangeFeedEnumerator(
                enumContext,
                new ChangeFeedSplitPlanner(table, maxFilesPerCycle, maxBytesPerCycle),
                tableName,
                monitorIntervalMillis,
                consumerId,
                consumerListener,
                versionListener,
                checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<ChangeFeedSplit> getSplitSerializer() {
        return ChangeFeedSplitSerializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<ChangeFeedEnumState> getEnumeratorCheckpointSerializer() {
        return ChangeFeedEnumStateSerializer.INSTANCE;
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(producedRowType());
    }

    /**
     * Builder of the change-feed topology; options are validated, and the start checked against the
     * table, in {@link #build} / {@link #buildSource}.
     */
    @PublicEvolving
    public static final class Builder {
        private final TableLoader tableLoader;
        private final List<ChangeFeedStart> starts = new ArrayList<>();
        private Duration monitorInterval = ChangeFeedOptions.MONITOR_INTERVAL.defaultValue();
        private long maxFilesPerCycle = ChangeFeedOptions.MAX_FILES_PER_CYCLE.defaultValue();
        private long maxBytesPerCycle = ChangeFeedOptions.MAX_BYTES_PER_CYCLE.defaultValue();
        private long deleteCacheBytes =
                ChangeFeedOptions.DELETE_FILE_CACHE_SIZE.defaultValue().getBytes();
        private boolean bounded = ChangeFeedOptions.BOUNDED.defaultValue();
        private String consumerId;
        private ConsumerPositionListener consumerListener = ConsumerPositionListener.NONE;
        private CheckpointVersionListener versionListener = CheckpointVersionListener.NONE;
        private String uidPrefix = "changeflow-cdf";
        private boolean changelog;
        @Nullable private StartMode startMode;

        private Builder(TableLoader tableLoader) {
            this.tableLoader = tableLoader;
        }

        /**
         * Where the stream starts without state (default {@link ChangeFeedStart#currentSnapshot}).
         * Set one start only: a second one fails {@link #build} with {@code INVALID_CDC_OPTIONS}.
         */
        public Builder starting(ChangeFeedStart start) {
            starts.add(start);
            return this;
        }

        /** First version to read (may be latest + 1, F8): {@link ChangeFeedStart#changesFrom}. */
        public Builder startingVersion(long version) {
            return starting(ChangeFeedStart.changesFrom(version));
        }

        /**
         * Read only versions committed after the stream is built (F6 {@code latest}): {@link
         * ChangeFeedStart#latest}.
         */
        public Builder startingLatest() {
            return starting(ChangeFeedStart.latest());
        }

        /**
         * Emit the table as of version {@code version − 1} as inserts, then the changes from {@code
         * version} (G1): {@link ChangeFeedStart#snapshotThenChanges}.
         */
        public Builder snapshotThenChanges(long version) {
            return starting(ChangeFeedStart.snapshotThenChanges(version));
        }

        /**
         * Read from the first commit at or after this time (F3 format): {@link
         * ChangeFeedStart#timestamp}.
         */
        public Builder startingTimestamp(String timestamp) {
            return starting(ChangeFeedStart.timestamp(timestamp));
        }

        /**
         * Decide the start in the enumerator on a start without state (instead of a starting
         * position): {@link ChangeFeedStart#resolvedAtJobStart}.
         */
        public Builder startResolver(ChangeFeedStart.Resolver resolver) {
            return starting(ChangeFeedStart.resolvedAtJobStart(resolver));
        }

        /**
         * Whether {@link #build} gives a changelog (G1) instead of change rows (F1): each row is
         * the table's columns, then {@code _commit_version} BIGINT and {@code _commit_timestamp}
         * TIMESTAMP_LTZ(3), with the row kind of its change ({@link ChangeType#rowKind()}: {@code
         * insert} → +I, {@code update_preimage} → -U, {@code update_postimage} → +U, {@code delete}
         * → -D) instead of a {@code _change_type} column. Same order, position and options; the
         * start mode defaults to {@link StartMode#SNAPSHOT_THEN_CHANGES}. Default {@code false}.
         */
        public Builder changelog(boolean changelog) {
            this.changelog = changelog;
            return this;
        }

        /**
         * Whether the table as of the version before the first one read comes first, as inserts
         * ({@link ChangeFeedOptions#START_MODE}, G1; {@link ChangeFeedStart#withMode}). Default:
         * {@link StartMode#SNAPSHOT_THEN_CHANGES} for a {@link #changelog changelog}, else the
         * start as given (F6).
         */
        public Builder startMode(StartMode mode) {
            this.startMode = mode;
            return this;
        }

        /** See {@link ChangeFeedOptions#MONITOR_INTERVAL}. */
        public Builder monitorInterval(Duration interval) {
            this.monitorInterval = interval;
            return this;
        }

        /** See {@link ChangeFeedOptions#MAX_FILES_PER_CYCLE}. */
        public Builder maxFilesPerCycle(long files) {
            this.maxFilesPerCycle = files;
            return this;
        }

        /** See {@link ChangeFeedOptions#MAX_BYTES_PER_CYCLE}. */
        public Builder maxBytesPerCycle(long bytes) {
            this.maxBytesPerCycle = bytes;
            return this;
        }

        /**
         * Bound of each reader subtask's delete-file cache in estimated heap bytes, 0 for none. See
         * {@link ChangeFeedOptions#DELETE_FILE_CACHE_SIZE}.
         */
        public Builder deleteFileCacheSize(long bytes) {
            this.deleteCacheBytes = bytes;
            return this;
        }

        /** See {@link ChangeFeedOptions#BOUNDED}. */
        public Builder bounded(boolean bounded) {
            this.bounded = bounded;
            return this;
        }

        /** See {@link ChangeFeedOptions#CONSUMER_ID}. */
        public Builder consumerId(String consumerId) {
            this.consumerId = consumerId;
            return this;
        }

        /** Where the consumer position goes after each checkpoint (F7 registry hook). */
        public Builder consumerPositionListener(ConsumerPositionListener listener) {
            this.consumerListener = listener;
            return this;
        }

        /**
         * Told, at each checkpoint, the version completely emitted as of it (G2: the Silver version
         * a Gold commit records); see {@link CheckpointVersionListener}.
         */
        public Builder checkpointVersionListener(CheckpointVersionListener listener) {
            this.versionListener = listener;
            return this;
        }

        /** Prefix of the operators' uids ({@code <prefix>-source}, {@code <prefix>-pairing}). */
        public Builder uidPrefix(String prefix) {
            this.uidPrefix = prefix;
            return this;
        }

        /**
         * Sets options keyed as in {@link ChangeFeedOptions}, read by {@link
         * ChangeFeedOptions#resolve(String, Map)}; options of batch reads other than the ending
         * bounds are accepted and have no effect here.
         *
         * @throws CdfException {@code INVALID_CDC_OPTIONS} for an unknown key, a value its option
         *     does not accept, or an ending bound (a stream has none)
         */
        public Builder options(Map<String, String> options) {
            return options(ChangeFeedOptions.resolve(String.valueOf(tableLoader), options));
        }

        /** As {@link #options(Map)}, with options already resolved. */
        public Builder options(ChangeFeedSettings settings) {
            for (var ending :
                    List.of(ChangeFeedOptions.ENDING_VERSION, ChangeFeedOptions.ENDING_TIMESTAMP)) {
                if (settings.contains(ending)) {
                    throw invalid(
                            "'%s' is set for the streaming change feed of table %s; a stream has no ending bound. "
                                    + "Use '%s' = 'true' to read up to the latest version and finish, or read "
                                    + "the range in batch.",
                            ending.key(), tableLoader, ChangeFeedOptions.BOUNDED.key());
                }
            }
            if (settings.startsAtLatest()) {
                startingLatest();
            }
            settings.getOptional(ChangeFeedOptions.STARTING_VERSION)
                    .ifPresent(this::startingVersion);
            settings.getOptional(ChangeFeedOptions.STARTING_TIMESTAMP)
                    .ifPresent(this::startingTimestamp);
            settings.getOptional(ChangeFeedOptions.START_MODE).ifPresent(this::startMode);
            settings.getOptional(ChangeFeedOptions.MONITOR_INTERVAL)
                    .ifPresent(this::monitorInterval);
            settings.getOptional(ChangeFeedOptions.MAX_FILES_PER_CYCLE)
                    .ifPresent(this::maxFilesPerCycle);
            settings.getOptional(ChangeFeedOptions.MAX_BYTES_PER_CYCLE)
                    .ifPresent(this::maxBytesPerCycle);
            settings.getOptional(ChangeFeedOptions.DELETE_FILE_CACHE_SIZE)
                    .ifPresent(size -> deleteFileCacheSize(size.getBytes()));
            settings.getOptional(ChangeFeedOptions.BOUNDED).ifPresent(this::bounded);
            settings.getOptional(ChangeFeedOptions.CONSUMER_ID).ifPresent(this::consumerId);
            return this;
        }

        /**
         * Validates the options, checks the start against the table's current metadata and adds the
         * source and the pairing operator to {@code env}.
         *
         * @return the change stream, rows as described on {@link ChangeFeedSource}, or the
         *     changelog ({@link #changelog})
         * @throws CdfException as listed on {@link ChangeFeedSource}
         */
        public DataStream<RowData> build(StreamExecutionEnvironment env) {
            ChangeFeedSource source = buildSource();
            RowType rowType = source.rowType();
            RowType outputType =
                    changelog ? StreamingAccess.changelogRowType(source.dataSchema()) : rowType;
            Schema dataSchema = source.dataSchema();
            boolean rowLineage = source.rowLineage();
            int[] identity = rowLineage ? null : StreamingAccess.keyPositions(dataSchema);
            if (identity == null) {
                identity = new int[dataSchema.columns().size()];
                for (int i = 0; i < identity.length; i++) {
                    identity[i] = i;
                }
            }
            RowIdentityKeySelector keys =
                    rowLineage
                            ? RowIdentityKeySelector.forRowLineage(
                                    source.producedRowType(), rowType.getFieldCount(), identity)
                            : new RowIdentityKeySelector(rowType, identity);
            return env.fromSource(source, WatermarkStrategy.noWatermarks(), uidPrefix + "-source")
                    .uid(uidPrefix + "-source")
                    .keyBy(keys)
                    .process(
                            new ChangePairingFunction(dataSchema, rowType, rowLineage, changelog),
                            InternalTypeInfo.of(outputType))
                    .name(uidPrefix + "-pairing")
                    .uid(uidPrefix + "-pairing");
        }

        /**
         * The source alone (unpaired rows and version watermarks), its start checked.
         *
         * @throws CdfException as listed on {@link ChangeFeedSource}
         */
        public ChangeFeedSource buildSource() {
            if (starts.size() > 1) {
                List<String> described = new ArrayList<>();
                starts.forEach(s -> described.add(s.describe()));
                throw invalid(
                        "More than one starting position is set for the change feed of table %s (%s). Set only "
                                + "one of '%s' (a version or 'latest') and '%s'.",
                        tableLoader,
                        String.join(", ", described),
                        ChangeFeedOptions.STARTING_VERSION.key(),
                        ChangeFeedOptions.STARTING_TIMESTAMP.key());
            }
            ChangeFeedStart start =
                    starts.isEmpty() ? ChangeFeedStart.currentSnapshot() : starts.get(0);
            // G1: a changelog starts with the table's rows unless told otherwise
            StartMode mode =
                    startMode != null
                            ? startMode
                            : changelog ? StartMode.SNAPSHOT_THEN_CHANGES : null;
            if (mode != null) {
                start = start.withMode(mode);
            }
            start.validate(String.valueOf(tableLoader));
            if (monitorInterval.isNegative() || monitorInterval.isZero()) {
                throw invalid(
                        "'%s' = %s must be positive.",
                        ChangeFeedOptions.MONITOR_INTERVAL.key(), monitorInterval);
            }
            if (maxFilesPerCycle <= 0 || maxBytesPerCycle <= 0) {
                throw invalid(
                        "'%s' = %d and '%s' = %d must both be positive.",
                        ChangeFeedOptions.MAX_FILES_PER_CYCLE.key(),
                        maxFilesPerCycle,
                        ChangeFeedOptions.MAX_BYTES_PER_CYCLE.key(),
                        maxBytesPerCycle);
            }
            if (deleteCacheBytes < 0) {
                throw invalid(
                        "'%s' = %d bytes must be at least 0 (0 turns the cache off).",
                        ChangeFeedOptions.DELETE_FILE_CACHE_SIZE.key(), deleteCacheBytes);
            }
            TableLoader loader = tableLoader.clone();
            try (loader) {
                loader.open();
                Table table = loader.loadTable();
                table.refresh();
                Schema dataSchema = StreamingAccess.dataSchema(table);
                long latest = StreamingAccess.history(table).latestVersion();
                PlanningPosition position =
                        start.resolvesAtJobStart() ? null : start.resolve(table);
                return new ChangeFeedSource(
                        tableLoader,
                        table.name(),
                        dataSchema,
                        StreamingAccess.rowLineage(table, dataSchema),
                        start.asOfBuild(position),
                        position,
                        bounded ? latest : Long.MAX_VALUE,
                        monitorInterval.toMillis(),
                        maxFilesPerCycle,
                        maxBytesPerCycle,
                        deleteCacheBytes,
                        consumerId,
                        consumerId != null && consumerListener == ConsumerPositionListener.NONE
                                ? new RegistryPositionListener(tableLoader)
                                : consumerListener,
                        versionListener);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static CdfException invalid(String format, Object... args) {
            return StreamingAccess.error(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS, String.format(format, args));
        }
    }
}

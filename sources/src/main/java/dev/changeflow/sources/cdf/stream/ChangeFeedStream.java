package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.retention.RegistryPositionListener;
import dev.changeflow.sources.cdf.stream.enumerator.ConsumerPositionListener;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;
import dev.changeflow.sources.cdf.stream.pairing.ChangePairingFunction;
import dev.changeflow.sources.cdf.stream.pairing.RowIdentityKeySelector;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.TimeUtils;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.util.SnapshotUtil;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Streaming change data feed of an Iceberg table (semantics.md F1, F2, F6; design.md "Iceberg
 * mapping of the change feed"): a {@link ChangeFeedSource} whose readers emit unpaired rows and
 * version-completion watermarks, keyed by row identity into the {@link ChangePairingFunction}.
 *
 * <pre>{@code
 * DataStream<RowData> changes =
 *         ChangeFeedStream.forTable(tableLoader).startingVersion(76).build(env);
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
 * <p><b>Start</b> (F6, F8): no starting bound → the current snapshot as {@code insert} rows tagged
 * with its version, then later changes; {@code latest} → only versions committed after the build; a
 * version {@code N} → from N ({@code N} may be latest + 1); a timestamp → from the first commit at
 * or after it; {@link Builder#snapshotThenChanges snapshot-then-changes} from {@code N} (G1) → the
 * table as of {@code N − 1} as {@code insert} rows tagged with that snapshot's version, then the
 * changes from N. A checkpoint or savepoint restore resumes at its position; the bounds only apply
 * to a start without state.
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
public final class ChangeFeedStream {

    private ChangeFeedStream() {}

    /**
     * Decides where a stream starts, inside the source's enumerator, when the job starts without
     * state; a job restored from a checkpoint or savepoint never calls it. For jobs whose start
     * depends on what they already wrote (the Silver→Gold job: its Gold tables' {@code
     * _source_version}), so that a start position in the arguments does not stop a restore.
     * Exceptions thrown fail the job's start with that exception.
     */
    @FunctionalInterface
    public interface StartResolver extends Serializable {
        /**
         * @param table the table, refreshed
         * @return where to start (its version is checked as {@code starting-version})
         */
        Start start(Table table);
    }

    /**
     * A start without state, as a {@link StartResolver} gives it: the table's current snapshot as
     * inserts, then its later changes (F6's default); the changes from a version (F6 {@code
     * starting-version}); or the table as of the version before a version as inserts, then the
     * changes from that version (G1's {@code snapshot-then-changes}).
     */
    @PublicEvolving
    public static final class Start implements Serializable {
        private static final long serialVersionUID = 1L;

        @Nullable private final Long version;
        private final boolean snapshotFirst;

        private Start(@Nullable Long version, boolean snapshotFirst) {
            this.version = version;
            this.snapshotFirst = snapshotFirst;
        }

        /**
         * The current snapshot as {@code insert} rows tagged with its version, then the later
         * changes.
         */
        public static Start currentSnapshot() {
            return new Start(null, true);
        }

        /** The changes from {@code version} on (it may be latest + 1, F8). */
        public static Start changesFrom(long version) {
            return new Start(version, false);
        }

        /**
         * The table as of version {@code version − 1} (its newest snapshot at or before it) as
         * {@code insert} rows tagged with that snapshot's version, then the changes from {@code
         * version} on.
         */
        public static Start snapshotThenChanges(long version) {
            return new Start(version, true);
        }

        /** The first version whose changes are read; empty for {@link #currentSnapshot()}. */
        public OptionalLong version() {
            return version == null ? OptionalLong.empty() : OptionalLong.of(version);
        }

        /** Whether the table's rows at a version come first, as inserts. */
        public boolean snapshotFirst() {
            return snapshotFirst;
        }

        /**
         * The planning position of this start on {@code table} (refreshed).
         *
         * @throws CdfException {@code START_AFTER_LATEST_COMMIT}, {@code VERSION_NOT_AVAILABLE} as
         *     for {@code starting-version} (the snapshot before an available version is retained)
         */
        PlanningPosition resolve(Table table) {
            Snapshot current = table.currentSnapshot();
            if (version == null) {
                return current == null
                        ? PlanningPosition.at(StreamingAccess.history(table).latestVersion() + 1)
                        : PlanningPosition.initialSnapshot(
                                current.snapshotId(), current.sequenceNumber());
            }
            long first = StreamingAccess.resolveStart(table, version, null);
            if (!snapshotFirst) {
                return PlanningPosition.at(first);
            }
            // the newest ancestor before the first version read: the parent of an available version
            // is retained (F8), and there is none when the table had no snapshot before it
            for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
                if (s.sequenceNumber() < first) {
                    return PlanningPosition.initialSnapshot(s.snapshotId(), s.sequenceNumber());
                }
            }
            return PlanningPosition.at(first);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Start other
                    && Objects.equals(version, other.version)
                    && snapshotFirst == other.snapshotFirst;
        }

        @Override
        public int hashCode() {
            return Objects.hash(version, snapshotFirst);
        }

        @Override
        public String toString() {
            if (version == null) {
                return "current snapshot, then its changes";
            }
            return snapshotFirst
                    ? "snapshot before version " + version + ", then changes from " + version
                    : "changes from version " + version;
        }
    }

    /** Starts a builder over the table {@code tableLoader} loads (format v2 or v3). */
    public static Builder forTable(TableLoader tableLoader) {
        return new Builder(tableLoader);
    }

    /**
     * Builder of the change-feed topology; options are validated and resolved in {@link #build}.
     */
    @PublicEvolving
    public static final class Builder {
        private final TableLoader tableLoader;
        private Long startingVersion;
        private boolean startingLatest;
        private String startingTimestamp;
        private Duration monitorInterval = ChangeFeedStreamOptions.MONITOR_INTERVAL.defaultValue();
        private long maxFilesPerCycle = ChangeFeedStreamOptions.MAX_FILES_PER_CYCLE.defaultValue();
        private long maxBytesPerCycle = ChangeFeedStreamOptions.MAX_BYTES_PER_CYCLE.defaultValue();
        private boolean bounded;
        private String consumerId;
        private ConsumerPositionListener consumerListener = ConsumerPositionListener.NONE;
        private String uidPrefix = "changeflow-cdf";
        private StartResolver startResolver;
        private Long snapshotThenChanges;

        private Builder(TableLoader tableLoader) {
            this.tableLoader = tableLoader;
        }

        /** First version to read (may be latest + 1, F8). */
        public Builder startingVersion(long version) {
            this.startingVersion = version;
            return this;
        }

        /** Read only versions committed after the stream is built (F6 {@code latest}). */
        public Builder startingLatest() {
            this.startingLatest = true;
            return this;
        }

        /**
         * Emit the table as of version {@code version − 1} as inserts (tagged with the version of
         * its newest snapshot at or before {@code version − 1}), then the changes from {@code
         * version} (G1 {@code snapshot-then-changes}; {@code version} may be latest + 1).
         */
        public Builder snapshotThenChanges(long version) {
            this.snapshotThenChanges = version;
            return this;
        }

        /** Read from the first commit at or after this time (F3 format). */
        public Builder startingTimestamp(String timestamp) {
            this.startingTimestamp = timestamp;
            return this;
        }

        /** See {@link ChangeFeedStreamOptions#MONITOR_INTERVAL}. */
        public Builder monitorInterval(Duration interval) {
            this.monitorInterval = interval;
            return this;
        }

        /** See {@link ChangeFeedStreamOptions#MAX_FILES_PER_CYCLE}. */
        public Builder maxFilesPerCycle(long files) {
            this.maxFilesPerCycle = files;
            return this;
        }

        /** See {@link ChangeFeedStreamOptions#MAX_BYTES_PER_CYCLE}. */
        public Builder maxBytesPerCycle(long bytes) {
            this.maxBytesPerCycle = bytes;
            return this;
        }

        /** See {@link ChangeFeedStreamOptions#BOUNDED}. */
        public Builder bounded(boolean bounded) {
            this.bounded = bounded;
            return this;
        }

        /** See {@link ChangeFeedStreamOptions#CONSUMER_ID}. */
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
         * Decide the start in the enumerator on a start without state (instead of a starting
         * position).
         */
        public Builder startResolver(StartResolver resolver) {
            this.startResolver = resolver;
            return this;
        }

        /** Prefix of the operators' uids ({@code <prefix>-source}, {@code <prefix>-pairing}). */
        public Builder uidPrefix(String prefix) {
            this.uidPrefix = prefix;
            return this;
        }

        /**
         * Sets options keyed as in {@link ChangeFeedOptions} and {@link ChangeFeedStreamOptions}
         * (unknown keys are ignored; ending bounds are rejected in {@link #build}).
         */
        public Builder options(Map<String, String> options) {
            String value = options.get(ChangeFeedOptions.STARTING_VERSION.key());
            if (value != null) {
                if (ChangeFeedStreamOptions.LATEST.equalsIgnoreCase(value.trim())) {
                    startingLatest = true;
                } else {
                    startingVersion =
                            parseLong(
                                    ChangeFeedOptions.STARTING_VERSION.key(),
                                    value,
                                    "a version or 'latest'");
                }
            }
            startingTimestamp =
                    options.getOrDefault(
                            ChangeFeedOptions.STARTING_TIMESTAMP.key(), startingTimestamp);
            for (String ending :
                    new String[] {
                        ChangeFeedOptions.ENDING_VERSION.key(),
                        ChangeFeedOptions.ENDING_TIMESTAMP.key()
                    }) {
                if (options.containsKey(ending)) {
                    throw invalid(
                            "'%s' is set for the streaming change feed of table %s; a stream has no ending bound. "
                                    + "Use '%s' = 'true' to read up to the latest version and finish, or read "
                                    + "the range in batch.",
                            ending, tableLoader, ChangeFeedStreamOptions.BOUNDED.key());
                }
            }
            value = options.get(ChangeFeedStreamOptions.MONITOR_INTERVAL.key());
            if (value != null) {
                try {
                    monitorInterval = TimeUtils.parseDuration(value);
                } catch (IllegalArgumentException e) {
                    throw invalid(
                            "'%s' = '%s' is not a duration (for example '10 s' or '500 ms').",
                            ChangeFeedStreamOptions.MONITOR_INTERVAL.key(), value);
                }
            }
            value = options.get(ChangeFeedStreamOptions.MAX_FILES_PER_CYCLE.key());
            if (value != null) {
                maxFilesPerCycle =
                        parseLong(
                                ChangeFeedStreamOptions.MAX_FILES_PER_CYCLE.key(),
                                value,
                                "a number of files");
            }
            value = options.get(ChangeFeedStreamOptions.MAX_BYTES_PER_CYCLE.key());
            if (value != null) {
                maxBytesPerCycle =
                        parseLong(
                                ChangeFeedStreamOptions.MAX_BYTES_PER_CYCLE.key(),
                                value,
                                "a number of bytes");
            }
            value = options.get(ChangeFeedStreamOptions.BOUNDED.key());
            if (value != null) {
                if (!value.trim().equalsIgnoreCase("true")
                        && !value.trim().equalsIgnoreCase("false")) {
                    throw invalid(
                            "'%s' = '%s' is not 'true' or 'false'.",
                            ChangeFeedStreamOptions.BOUNDED.key(), value);
                }
                bounded = Boolean.parseBoolean(value.trim());
            }
            consumerId =
                    options.getOrDefault(ChangeFeedStreamOptions.CONSUMER_ID.key(), consumerId);
            return this;
        }

        /**
         * Validates the options, resolves the start against the table's current metadata and adds
         * the source and the pairing operator to {@code env}.
         *
         * @return the change stream, rows as described on {@link ChangeFeedStream}
         * @throws CdfException as listed on {@link ChangeFeedStream}
         */
        public DataStream<RowData> build(StreamExecutionEnvironment env) {
            ChangeFeedSource source = buildSource();
            RowType rowType = source.rowType();
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
                            new ChangePairingFunction(dataSchema, rowType, rowLineage),
                            InternalTypeInfo.of(rowType))
                    .name(uidPrefix + "-pairing")
                    .uid(uidPrefix + "-pairing");
        }

        /** The source alone (unpaired rows and version watermarks), start resolved. */
        public ChangeFeedSource buildSource() {
            int starts =
                    (startingVersion != null ? 1 : 0)
                            + (startingLatest ? 1 : 0)
                            + (startingTimestamp != null ? 1 : 0)
                            + (startResolver != null ? 1 : 0)
                            + (snapshotThenChanges != null ? 1 : 0);
            if (starts > 1) {
                throw invalid(
                        "More than one starting position is set for the change feed of table %s (%s). Set only "
                                + "one of '%s' (a version or 'latest') and '%s'.",
                        tableLoader,
                        describeStart(),
                        ChangeFeedOptions.STARTING_VERSION.key(),
                        ChangeFeedOptions.STARTING_TIMESTAMP.key());
            }
            Long first = startingVersion != null ? startingVersion : snapshotThenChanges;
            if (first != null && first < 0) {
                throw invalid(
                        "'%s' = %d for the change feed of table %s is negative. Versions are integers >= 0.",
                        ChangeFeedOptions.STARTING_VERSION.key(), first, tableLoader);
            }
            if (monitorInterval.isNegative() || monitorInterval.isZero()) {
                throw invalid(
                        "'%s' = %s must be positive.",
                        ChangeFeedStreamOptions.MONITOR_INTERVAL.key(), monitorInterval);
            }
            if (maxFilesPerCycle <= 0 || maxBytesPerCycle <= 0) {
                throw invalid(
                        "'%s' = %d and '%s' = %d must both be positive.",
                        ChangeFeedStreamOptions.MAX_FILES_PER_CYCLE.key(),
                        maxFilesPerCycle,
                        ChangeFeedStreamOptions.MAX_BYTES_PER_CYCLE.key(),
                        maxBytesPerCycle);
            }
            Table table;
            TableLoader loader = tableLoader.clone();
            try (loader) {
                loader.open();
                table = loader.loadTable();
                table.refresh();
                Schema dataSchema = StreamingAccess.dataSchema(table);
                long latest = StreamingAccess.history(table).latestVersion();
                PlanningPosition start;
                if (startingLatest) {
                    start = PlanningPosition.at(latest + 1);
                } else if (startingVersion != null || startingTimestamp != null) {
                    start =
                            PlanningPosition.at(
                                    StreamingAccess.resolveStart(
                                            table, startingVersion, startingTimestamp));
                } else if (snapshotThenChanges != null) {
                    start = Start.snapshotThenChanges(snapshotThenChanges).resolve(table);
                } else {
                    start = Start.currentSnapshot().resolve(table);
                }
                return new ChangeFeedSource(
                        tableLoader,
                        table.name(),
                        dataSchema,
                        StreamingAccess.rowLineage(table, dataSchema),
                        start,
                        bounded ? latest : Long.MAX_VALUE,
                        monitorInterval.toMillis(),
                        maxFilesPerCycle,
                        maxBytesPerCycle,
                        consumerId,
                        consumerId != null && consumerListener == ConsumerPositionListener.NONE
                                ? new RegistryPositionListener(tableLoader)
                                : consumerListener,
                        startResolver);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private String describeStart() {
            StringBuilder s = new StringBuilder();
            if (startingVersion != null) {
                s.append("starting-version ").append(startingVersion);
            }
            if (startingLatest) {
                s.append(s.length() > 0 ? ", " : "").append("starting-version latest");
            }
            if (startResolver != null) {
                s.append(s.length() > 0 ? ", " : "").append("a start resolver");
            }
            if (snapshotThenChanges != null) {
                s.append(s.length() > 0 ? ", " : "")
                        .append("snapshot-then-changes from ")
                        .append(snapshotThenChanges);
            }
            if (startingTimestamp != null) {
                s.append(s.length() > 0 ? ", " : "")
                        .append("starting-timestamp '")
                        .append(startingTimestamp)
                        .append('\'');
            }
            return s.toString();
        }

        private long parseLong(String key, String value, String what) {
            try {
                return Long.parseLong(value.trim());
            } catch (NumberFormatException e) {
                throw invalid(
                        "'%s' = '%s' for the change feed of table %s is not %s.",
                        key, value, tableLoader, what);
            }
        }

        private static CdfException invalid(String format, Object... args) {
            return StreamingAccess.error(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS, String.format(format, args));
        }
    }
}

package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.cdf.stream.ChangeFeedSource;
import dev.changeflow.sources.cdf.stream.enumerator.CheckpointVersionListener;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsReadingMetadata;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.utils.ProjectedRowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.flink.TableLoader;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The scan source of {@code t$changelog} (semantics.md G1): the table's change feed as a Flink
 * changelog — {@code insert} → {@code +I}, {@code update_preimage} → {@code -U}, {@code
 * update_postimage} → {@code +U}, {@code delete} → {@code -D} — so that any Flink SQL query over it
 * (aggregates, joins, top-N) maintains its result as the table changes. It is changeflow's
 * streaming change feed ({@link ChangeFeedSource} with {@link ChangeFeedSource.Builder#changelog}):
 * the same enumerator, readers, pairing, checkpointed position, options and order (per row
 * identity, versions ascending, a {@code -U} directly before its {@code +U}).
 *
 * <p><b>Columns</b>: the table's columns; its identifier fields are the primary key (NOT ENFORCED;
 * a table without identifier fields has none, and its updates are full-row retractions); {@code
 * _commit_version} BIGINT and {@code _commit_timestamp} TIMESTAMP_LTZ(3) are virtual metadata
 * columns ({@code METADATA VIRTUAL}, {@link #METADATA}): selectable by name, not required, and left
 * out of {@code SELECT *} in a session that excludes virtual metadata columns from {@code *}
 * ({@link ChangeflowCatalog#excludeMetadataColumnsFromSelectStar}). {@link ChangelogMode#all()}.
 *
 * <p><b>Why a table of its own</b> rather than an option on {@code t$changes}: Flink takes a
 * table's columns and primary key from the catalog before it applies {@code OPTIONS} hints, and a
 * changelog has different ones ({@code _change_type} becomes the row kind; the key is the table's,
 * which {@code t$changes}, where a key occurs many times, cannot declare).
 *
 * <p><b>Options</b> ({@link ChangeFeedSqlOptions#CHANGELOG_OPTIONS}, as hints): the starting
 * position ({@code starting-version} N or {@code latest}, {@code starting-timestamp}), {@code
 * start-mode} ({@code snapshot-then-changes}, the default: the table as of N − 1 as {@code +I} rows
 * first; or {@code changes-only}), {@code monitor-interval}, the rate limits, {@code bounded}
 * (available-now: the read finishes at the version latest when it was planned) and {@code
 * consumer-id}. Reads run in STREAMING mode only (Flink reads only insert-only tables in BATCH
 * mode); use {@code 'bounded'='true'} for a read that finishes.
 *
 * <p><b>Errors</b>: every error of {@link ChangeFeedSource.Builder#buildSource()} ({@link
 * CdfException}), raised when the statement is planned.
 */
@Internal
final class ChangelogTableSource implements ScanTableSource, SupportsReadingMetadata {

    /** The readable metadata columns (key = column name) and their types, in row order. */
    static final Map<String, DataType> METADATA = metadata();

    private final String tableName;
    private final TableLoader tableLoader;
    private final Map<String, String> options;
    private final int physicalColumns;
    private final boolean bounded;
    private final CheckpointVersionListener versionListener;
    private List<String> metadataKeys;
    private RowType producedType;

    private ChangelogTableSource(
            String tableName,
            TableLoader tableLoader,
            Map<String, String> options,
            int physicalColumns,
            boolean bounded,
            CheckpointVersionListener versionListener,
            List<String> metadataKeys,
            RowType producedType) {
        this.tableName = tableName;
        this.tableLoader = tableLoader;
        this.options = options;
        this.physicalColumns = physicalColumns;
        this.bounded = bounded;
        this.versionListener = versionListener;
        this.metadataKeys = metadataKeys;
        this.producedType = producedType;
    }

    /**
     * The changelog read of the table {@code tableLoader} loads, with {@code options} (keys of
     * {@link ChangeFeedSqlOptions#CHANGELOG_OPTIONS}); its start is checked now.
     *
     * @param physicalType the table's columns as the catalog gives them
     * @param versionListener told each checkpoint's completed version (G2 stamping)
     * @throws CdfException any error of {@link ChangeFeedSource.Builder#buildSource()}
     */
    static ChangelogTableSource create(
            String tableName,
            TableLoader tableLoader,
            Map<String, String> options,
            RowType physicalType,
            CheckpointVersionListener versionListener) {
        ChangeFeedSource source =
                ChangeFeedSource.forTable(tableLoader)
                        .options(options)
                        .changelog(true)
                        .buildSource();
        return new ChangelogTableSource(
                tableName,
                tableLoader,
                options,
                physicalType.getFieldCount(),
                source.getBoundedness() == Boundedness.BOUNDED,
                versionListener,
                List.of(),
                physicalType);
    }

    private static Map<String, DataType> metadata() {
        Map<String, DataType> m = new LinkedHashMap<>();
        m.put(ChangeFeedColumns.COMMIT_VERSION, DataTypes.BIGINT().notNull());
        m.put(ChangeFeedColumns.COMMIT_TIMESTAMP, DataTypes.TIMESTAMP_LTZ(3).notNull());
        return m;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        return ChangelogMode.all();
    }

    @Override
    public Map<String, DataType> listReadableMetadata() {
        return METADATA;
    }

    @Override
    public void applyReadableMetadata(List<String> metadataKeys, DataType producedDataType) {
        this.metadataKeys = List.copyOf(metadataKeys);
        this.producedType = (RowType) producedDataType.getLogicalType();
    }

    /**
     * Where each produced column is in a row of the Java changelog (the table's columns, {@code
     * _commit_version}, {@code _commit_timestamp}).
     */
    int[] projection() {
        int[] projection = new int[physicalColumns + metadataKeys.size()];
        for (int i = 0; i < physicalColumns; i++) {
            projection[i] = i;
        }
        List<String> keys = new ArrayList<>(METADATA.keySet());
        for (int i = 0; i < metadataKeys.size(); i++) {
            projection[physicalColumns + i] = physicalColumns + keys.indexOf(metadataKeys.get(i));
        }
        return projection;
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
        return new DataStreamScanProvider() {
            @Override
            public DataStream<RowData> produceDataStream(
                    ProviderContext providerContext, StreamExecutionEnvironment env) {
                String prefix =
                        providerContext
                                .generateUid("changelog")
                                .orElse("changeflow-changelog-" + tableName);
                DataStream<RowData> changelog =
                        ChangeFeedSource.forTable(tableLoader)
                                .options(options)
                                .changelog(true)
                                .checkpointVersionListener(versionListener)
                                .uidPrefix(prefix)
                                .build(env);
                if (metadataKeys.equals(new ArrayList<>(METADATA.keySet()))) {
                    return changelog; // every column, in the Java changelog's order
                }
                return changelog
                        .map(new SelectColumns(projection()), InternalTypeInfo.of(producedType))
                        .name("Columns of " + tableName)
                        .uid(prefix + "-columns");
            }

            @Override
            public boolean isBounded() {
                return bounded;
            }
        };
    }

    /** Keeps the columns a query reads, and the row kind. */
    private static final class SelectColumns implements MapFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final int[] projection;

        SelectColumns(int[] projection) {
            this.projection = projection;
        }

        @Override
        public RowData map(RowData row) {
            return ProjectedRowData.from(projection).replaceRow(row);
        }
    }

    @Override
    public DynamicTableSource copy() {
        return new ChangelogTableSource(
                tableName,
                tableLoader,
                options,
                physicalColumns,
                bounded,
                versionListener,
                metadataKeys,
                producedType);
    }

    @Override
    public String asSummaryString() {
        return "Changelog(" + tableName + (bounded ? ", bounded" : ", streaming") + ")";
    }
}

package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.stream.ChangeFeedSource;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.AsyncDataStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The scan source of {@code t$changes}: rows of the table's columns followed by {@code
 * _change_type}, {@code _commit_version}, {@code _commit_timestamp} (F1), insert-only.
 *
 * <p><b>Bounded reads</b> (an ending bound, or runtime mode BATCH): the range is resolved and
 * checked with {@link TableChanges} when the statement is planned, so every F3/F4 error surfaces
 * then; the job emits the range's versions and {@link ReadVersionsFunction} reads up to {@link
 * #readConcurrency} of them at a time (threads of one task), so a large range streams while at most
 * that many versions are in memory. <b>Order</b>: the rows come out of a single task in the order
 * of {@link TableChanges#readRowData()} — versions ascending, within a version by row identity, a
 * preimage directly before its postimage — so a query that keeps the stream as it is (projections,
 * filters, the collect sink) sees them in that order; one that re-distributes rows (joins, GROUP
 * BY, a sink of higher parallelism) needs {@code ORDER BY _commit_version} like any SQL. A read
 * that finds a file gone fails with {@code VERSION_NOT_AVAILABLE} (K6). Columns are the table's
 * current ones: a column added after the ending version is null, one dropped since is absent.
 *
 * <p><b>Unbounded reads</b> (no ending bound, runtime mode STREAMING) are changeflow's streaming
 * change feed ({@link #unbounded}).
 */
@Internal
final class ChangeFeedTableSource implements ScanTableSource {

    private final String tableName;
    private final TableLoader tableLoader;
    private final Map<String, String> options;
    private final RowType rowType;
    private final List<Long> versions;

    private ChangeFeedTableSource(
            String tableName,
            TableLoader tableLoader,
            Map<String, String> options,
            RowType rowType,
            List<Long> versions) {
        this.tableName = tableName;
        this.tableLoader = tableLoader;
        this.options = options;
        this.rowType = rowType;
        this.versions = versions;
    }

    /**
     * A bounded read of {@code table}'s changes with {@code options} (keys of {@link
     * ChangeFeedOptions}), producing rows of {@code rowType}.
     *
     * @throws CdfException any error of {@link TableChanges.Builder#build()}, or {@code
     *     INCOMPATIBLE_SCHEMA_CHANGE} when a column's type at the ending version differs from its
     *     current type
     */
    static ChangeFeedTableSource bounded(
            String tableName,
            Table table,
            TableLoader tableLoader,
            Map<String, String> options,
            RowType rowType) {
        TableChanges changes = TableChanges.forTable(table).options(options).build();
        checkColumnTypes(tableName, changes.rowType(), rowType);
        return new ChangeFeedTableSource(
                tableName, tableLoader, options, rowType, new ArrayList<>(changes.versions()));
    }

    /**
     * An unbounded (streaming) read: changeflow's streaming change feed ({@link ChangeFeedSource}:
     * FLIP-27 source + pairing operator, version watermarks, checkpointed position) with the
     * options given (starting position, {@code monitor-interval}, rate limits, {@code
     * consumer-id}). The start is resolved now, so its errors surface when the statement is
     * planned.
     *
     * @throws CdfException any error of {@link ChangeFeedSource.Builder#buildSource()}
     */
    static ChangeFeedTableSource unbounded(
            String tableName,
            TableLoader tableLoader,
            Map<String, String> options,
            RowType rowType) {
        ChangeFeedSource.forTable(tableLoader).options(options).buildSource();
        return new ChangeFeedTableSource(tableName, tableLoader, options, rowType, null);
    }

    private static void checkColumnTypes(String tableName, RowType changes, RowType produced) {
        for (RowType.RowField field : produced.getFields()) {
            int index = changes.getFieldNames().indexOf(field.getName());
            if (index < 0) {
                continue;
            }
            LogicalType atEnd = changes.getTypeAt(index);
            if (!atEnd.copy(true).equals(field.getType().copy(true))) {
                throw new CdfException(
                        CdfException.ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE,
                        String.format(
                                "Column '%s' of table %s is %s at the ending version of the range but %s now; "
                                        + "a SQL read gives the current columns. Read this range with the Java "
                                        + "API (TableChanges), or end the range after the type change.",
                                field.getName(), tableName, atEnd, field.getType()));
            }
        }
    }

    /**
     * The versions this bounded read covers, ascending (for tests and plans); null for a streaming
     * read.
     */
    List<Long> versions() {
        return versions;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        return ChangelogMode.insertOnly();
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
        if (versions == null) {
            return new DataStreamScanProvider() {
                @Override
                public DataStream<RowData> produceDataStream(
                        ProviderContext providerContext, StreamExecutionEnvironment env) {
                    String prefix =
                            providerContext
                                    .generateUid("change-feed")
                                    .orElse("changeflow-cdf-" + tableName);
                    return ChangeFeedSource.forTable(tableLoader)
                            .options(options)
                            .uidPrefix(prefix)
                            .build(env);
                }

                @Override
                public boolean isBounded() {
                    return false;
                }
            };
        }
        return new DataStreamScanProvider() {
            @Override
            public DataStream<RowData> produceDataStream(
                    ProviderContext providerContext, StreamExecutionEnvironment env) {
                // Flink's collection source cannot be empty: an empty range emits one NO_VERSION
                List<Long> elements =
                        versions.isEmpty() ? List.of(ReadVersionsFunction.NO_VERSION) : versions;
                DataStream<Long> versionStream =
                        env.fromData(elements, Types.LONG)
                                .name("Change feed versions of " + tableName)
                                .setParallelism(1);
                providerContext
                        .generateUid("change-feed-versions")
                        .ifPresent(versionStream.getTransformation()::setUid);
                // one task emits the versions in order (a forward edge keeps the source's order),
                // its threads read up to `concurrency` of them at a time
                int concurrency = readConcurrency(env.getParallelism(), elements.size());
                SingleOutputStreamOperator<RowData> rows =
                        AsyncDataStream.orderedWait(
                                        versionStream,
                                        new ReadVersionsFunction(
                                                tableLoader, options, rowType, concurrency),
                                        0L, // no timeout: a version takes as long as its files take
                                        TimeUnit.MILLISECONDS,
                                        concurrency)
                                .returns(InternalTypeInfo.of(rowType))
                                .name("Change feed of " + tableName)
                                .setParallelism(1);
                providerContext.generateUid("change-feed-reader").ifPresent(rows::uid);
                return rows;
            }

            @Override
            public boolean isBounded() {
                return true;
            }
        };
    }

    /**
     * Versions a bounded read reads at the same time: the job's default parallelism (what a
     * parallel reader would have had), at most the number of versions, at least 1.
     */
    static int readConcurrency(int parallelism, int versionCount) {
        return Math.max(1, Math.min(parallelism, versionCount));
    }

    @Override
    public DynamicTableSource copy() {
        return new ChangeFeedTableSource(tableName, tableLoader, options, rowType, versions);
    }

    @Override
    public String asSummaryString() {
        return "ChangeFeed("
                + tableName
                + (versions == null ? ", streaming" : ", versions " + describe(versions))
                + ")";
    }

    private static String describe(List<Long> versions) {
        return versions.isEmpty()
                ? "none"
                : versions.get(0) + ".." + versions.get(versions.size() - 1);
    }
}

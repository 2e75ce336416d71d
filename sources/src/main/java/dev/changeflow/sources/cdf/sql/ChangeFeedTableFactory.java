package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.ChangeFeedSettings;
import dev.changeflow.sources.cdf.stream.enumerator.CheckpointVersionListener;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.flink.FlinkDynamicTableFactory;
import org.apache.iceberg.flink.IcebergTableSink;

import java.util.Map;
import java.util.Set;

/**
 * The table factory of a {@link ChangeflowCatalog}: a {@link ChangeFeedTableSource} for {@code
 * t$changes}, a {@link ChangelogTableSource} for {@code t$changelog} (STREAMING mode only: {@code
 * INVALID_CDC_OPTIONS} in BATCH mode), Iceberg's {@link FlinkDynamicTableFactory} for everything
 * else (reads and writes of {@code t}). Errors in the options or the range surface when the
 * statement is planned, as {@link CdfException}s (the root cause of Flink's {@code
 * ValidationException}).
 */
@Internal
final class ChangeFeedTableFactory implements DynamicTableSourceFactory, DynamicTableSinkFactory {

    private final ChangeflowCatalog catalog;
    private final FlinkDynamicTableFactory iceberg;

    ChangeFeedTableFactory(ChangeflowCatalog catalog) {
        this.catalog = catalog;
        this.iceberg = new FlinkDynamicTableFactory(catalog);
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        ObjectPath path = context.getObjectIdentifier().toObjectPath();
        Map<String, String> options = context.getCatalogTable().getOptions();
        String name = context.getObjectIdentifier().asSummaryString();
        if (!ChangeflowCatalog.isChangesTable(path.getObjectName())
                && !ChangeflowCatalog.isChangelogTable(path.getObjectName())) {
            if (ChangeFeedSqlOptions.readsChangeFeed(name, options)) {
                throw new CdfException(
                        CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                        String.format(
                                "'%s' = 'true' on table %s: Flink fixes a table's columns before it applies "
                                        + "options, so the change feed's columns cannot be added here. Read "
                                        + "`%s`.`%s%s` with the same options instead.",
                                ChangeFeedOptions.READ_CHANGE_FEED.key(),
                                name,
                                path.getDatabaseName(),
                                path.getObjectName(),
                                ChangeflowCatalog.CHANGES_SUFFIX));
            }
            return iceberg.createDynamicTableSource(context);
        }
        Set<String> tableOptions = catalog.baseOptions(path).keySet();
        RowType rowType =
                (RowType)
                        context.getCatalogTable()
                                .getResolvedSchema()
                                .toPhysicalRowDataType()
                                .getLogicalType();
        boolean batchMode =
                context.getConfiguration().get(ExecutionOptions.RUNTIME_MODE)
                        == RuntimeExecutionMode.BATCH;
        if (ChangeflowCatalog.isChangelogTable(path.getObjectName())) {
            if (batchMode) {
                throw new CdfException(
                        CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                        String.format(
                                "%s is a changelog (updates and deletes), which Flink reads in STREAMING mode "
                                        + "only, but '%s' is BATCH. Run the statement in STREAMING mode (changeflow sql "
                                        + "--streaming; in a Gold SQL file SET 'execution.runtime-mode' = "
                                        + "'streaming'), with "
                                        + "'%s'='true' for a read that finishes at the latest version.",
                                name,
                                ExecutionOptions.RUNTIME_MODE.key(),
                                ChangeFeedOptions.BOUNDED.key()));
            }
            ChangeFeedSettings settings =
                    ChangeFeedOptions.resolve(
                            name, options, ChangeFeedSqlOptions.CHANGELOG_OPTIONS, tableOptions);
            String table = catalog.tableName(path);
            catalog.planned(new ChangeflowCatalog.ChangelogRead(table, settings.asMap()));
            SourceVersionLog log = catalog.sourceVersionLog();
            return ChangelogTableSource.create(
                    name,
                    catalog.tableLoader(path),
                    settings.asMap(),
                    rowType,
                    log == null ? CheckpointVersionListener.NONE : log.listener(table));
        }
        ChangeFeedSettings settings =
                ChangeFeedSqlOptions.changeFeedOptions(name, options, tableOptions);
        Map<String, String> cdfOptions = settings.asMap();
        boolean bounded = ChangeFeedSqlOptions.hasEndingBound(settings) || batchMode;
        if (!bounded) {
            return ChangeFeedTableSource.unbounded(
                    name, catalog.tableLoader(path), cdfOptions, rowType);
        }
        return ChangeFeedTableSource.bounded(
                name,
                catalog.loadIcebergTable(path),
                catalog.tableLoader(path),
                cdfOptions,
                rowType);
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        String object = context.getObjectIdentifier().getObjectName();
        if (ChangeflowCatalog.isChangesTable(object)
                || ChangeflowCatalog.isChangelogTable(object)) {
            throw new ValidationException(
                    String.format(
                            "Table %s is a change data feed and cannot be written; write the table without %s.",
                            context.getObjectIdentifier().asSummaryString(),
                            ChangeflowCatalog.isChangesTable(object)
                                    ? ChangeflowCatalog.CHANGES_SUFFIX
                                    : ChangeflowCatalog.CHANGELOG_SUFFIX));
        }
        SourceVersionLog log = catalog.sourceVersionLog();
        Map<String, String> writeProps = context.getCatalogTable().getOptions();
        if (log == null || "true".equalsIgnoreCase(writeProps.get("use-dynamic-iceberg-sink"))) {
            return iceberg.createDynamicTableSink(context);
        }
        // as Iceberg's factory does, with commits stamped with the versions of the reads of the
        // INSERTs into this table (G2)
        ObjectPath target = context.getObjectIdentifier().toObjectPath();
        return new IcebergTableSink(
                new SourceVersionStamping(
                        catalog.tableLoader(target), log, catalog.insertReads(target)),
                context.getCatalogTable().getResolvedSchema(),
                context.getConfiguration(),
                writeProps);
    }

    @Override
    public String factoryIdentifier() {
        return ChangeflowCatalogFactory.IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return iceberg.requiredOptions();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return iceberg.optionalOptions();
    }
}

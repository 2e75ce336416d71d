package dev.changeflow.jobs.gold;

import dev.changeflow.operators.AutoCdcKeySelector;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.cdf.ChangeFeedColumns;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.data.StructRowData;
import org.apache.iceberg.io.CloseableIterable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Silver→Gold topology over a Silver change feed: Flink SQL evaluates the projections, filter
 * and aggregate arguments (design.md: expressions are Flink SQL's), changeflow's functions turn
 * changes into Gold upserts, and Iceberg's {@code FlinkSink} commits them in upsert mode, one
 * snapshot per table and checkpoint (exactly once).
 *
 * <p><b>Input</b>: the change feed of the Silver table (semantics.md F1): the Silver columns,
 * {@code _change_type STRING}, {@code _commit_version BIGINT}, {@code _commit_timestamp
 * TIMESTAMP_LTZ(3)}, row kind {@code +I}, per identity in version order with each preimage directly
 * before its postimage, and event-time watermarks that are Silver versions.
 *
 * <p><b>Upsert table</b> (uid {@code <name>-gold-upsert}): {@code insert} / {@code
 * update_postimage} rows passing the filter are upserted, a postimage that fails it and a {@code
 * delete} that passed it delete the key; {@code update_preimage} rows are not needed.
 *
 * <p><b>Aggregate table</b> (uid {@code <name>-gold-aggregate}): see {@link GoldAggregateFunction}.
 *
 * <p><b>Whole versions.</b> Each Gold commit holds all changes of the Silver versions up to some
 * version and none of a later one, at any parallelism, as long as checkpoints are aligned (the
 * runner turns unaligned checkpoints off): the argument is on {@link GoldStart}, which builds on it
 * where a start without state begins. Before each table, {@link SkipVersionsInGold} (uids {@code
 * <name>-gold-upsert-skip}, {@code <name>-gold-aggregate-skip}) drops the versions the table
 * already holds.
 */
public final class GoldJob {
    private static final Logger LOG = LoggerFactory.getLogger(GoldJob.class);

    static final String PASS = "__changeflow_pass";
    static final String CHANGE_TYPE = "__changeflow_change_type";
    static final String ARG = "__changeflow_arg";

    private GoldJob() {}

    /**
     * Adds the Gold operators and sinks for {@code changes} (the Silver change feed), creating the
     * Gold tables when missing.
     *
     * @param silver the Silver table (its identifier fields key the upsert table)
     * @param changeType the row type of {@code changes} (F1)
     * @throws GoldException {@code GOLD_DEFINITION_INVALID} for an invalid projection, filter or
     *     aggregate (the message quotes Flink SQL's reason)
     * @throws dev.changeflow.operators.AutoCdcException {@code TARGET_SCHEMA_MISMATCH} when an
     *     existing Gold table has another shape
     */
    public static void build(
            DataStream<RowData> changes,
            RowType changeType,
            Table silver,
            GoldSpec spec,
            CatalogSettings catalog,
            StreamingTableOptions options) {
        // Gold tables are written in Iceberg's upsert mode: equality deletes hold the key only, so
        // their own change feed must take pre-images from the parent snapshot, not the delete file
        options =
                options.toBuilder()
                        .property(StreamingTables.EQ_DELETES_CARRY_ROWS, "false")
                        .property(TableProperties.UPSERT_ENABLED, "true")
                        .build();
        StreamTableEnvironment tenv =
                StreamTableEnvironment.create(changes.getExecutionEnvironment());
        DataType changeDataType =
                TypeConversions.fromLogicalToDataType(changeType).bridgedTo(RowData.class);
        org.apache.flink.table.api.Table table =
                tenv.fromDataStream(
                        changes,
                        Schema.newBuilder()
                                .fromRowDataType(changeDataType)
                                // passes the change feed's version watermarks through the SQL
                                // operators
                                .watermark(ChangeFeedColumns.COMMIT_TIMESTAMP, "SOURCE_WATERMARK()")
                                .build());
        String view = "silver_changes_" + spec.name().replaceAll("[^A-Za-z0-9_]", "_");
        tenv.createTemporaryView(view, table);
        Catalog icebergCatalog = catalog.open();
        if (spec.upsert() != null) {
            buildUpsert(tenv, view, silver, spec, icebergCatalog, catalog.loader(), options);
        }
        if (spec.aggregate() != null) {
            buildAggregate(tenv, view, spec, icebergCatalog, catalog.loader(), options);
        }
    }

    private static void buildUpsert(
            StreamTableEnvironment tenv,
            String view,
            Table silver,
            GoldSpec spec,
            Catalog catalog,
            CatalogLoader loader,
            StreamingTableOptions options) {
        GoldSpec.Upsert u = spec.upsert();
        List<String> keys = new ArrayList<>(silver.schema().identifierFieldNames());
        if (keys.isEmpty()) {
            throw new GoldException(
                    GoldException.Code.GOLD_DEFINITION_INVALID,
                    "Silver table "
                            + silver.name()
                            + " has no identifier fields; a Gold upsert table needs its row identity");
        }
        String columns;
        if (u.columns().isEmpty()) {
            StringBuilder b = new StringBuilder();
            silver.schema()
                    .columns()
                    .forEach(
                            c ->
                                    b.append(b.length() == 0 ? "" : ", ")
                                            .append('`')
                                            .append(c.name())
                                            .append('`'));
            columns = b.toString();
        } else {
            columns = String.join(", ", u.columns());
        }
        String pass = u.where() == null ? "TRUE" : "(" + u.where() + ") IS TRUE";
        String sql =
                "SELECT "
                        + columns
                        + ", `"
                        + ChangeFeedColumns.COMMIT_VERSION
                        + "` AS `"
                        + GoldSpec.SOURCE_VERSION
                        + "`, "
                        + pass
                        + " AS `"
                        + PASS
                        + "`, `"
                        + ChangeFeedColumns.CHANGE_TYPE
                        + "` AS `"
                        + CHANGE_TYPE
                        + "` FROM `"
                        + view
                        + "`";
        org.apache.flink.table.api.Table evaluated =
                query(
                        tenv,
                        sql,
                        spec,
                        (u.columns().isEmpty()
                                        ? ""
                                        : "--columns '" + String.join(", ", u.columns()) + "' ")
                                + (u.where() == null ? "" : "--where '" + u.where() + "'"));
        RowType evaluatedType = rowType(evaluated);
        List<RowType.RowField> fields = evaluatedType.getFields();
        RowType target = new RowType(fields.subList(0, fields.size() - 2));
        for (String key : keys) {
            int i = target.getFieldNames().indexOf(key);
            if (i < 0) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "the upsert columns "
                                + u.columns()
                                + " of "
                                + u.target()
                                + " must keep the Silver identifier field '"
                                + key
                                + "' under its name (Silver "
                                + silver.name()
                                + " is keyed by "
                                + keys
                                + ")");
            }
        }
        rejectDuplicates(target, u.target());
        StreamingTables.ensureTable(catalog, u.target(), target, keys, options);
        DataStream<RowData> rows =
                tenv.toDataStream(
                        evaluated,
                        TypeConversions.fromLogicalToDataType(evaluatedType)
                                .bridgedTo(RowData.class));
        DataStream<RowData> upserts =
                rows.process(
                                new SkipVersionsInGold(
                                        new GoldVersion(loader, u.target()),
                                        target.getFieldCount() - 1),
                                InternalTypeInfo.of(evaluatedType))
                        .name("gold skip versions in " + u.target())
                        .uid(spec.name() + "-gold-upsert-skip")
                        .process(
                                new UpsertFunction(target.getFieldCount(), target),
                                InternalTypeInfo.of(target))
                        .name("gold upsert " + u.target())
                        .uid(spec.name() + "-gold-upsert");
        StreamingTableSink.upsert(
                upserts, loader, u.target(), keys, options, spec.name() + "-upsert");
    }

    private static void buildAggregate(
            StreamTableEnvironment tenv,
            String view,
            GoldSpec spec,
            Catalog catalog,
            CatalogLoader loader,
            StreamingTableOptions options) {
        GoldSpec.Aggregate a = spec.aggregate();
        StringBuilder sql = new StringBuilder("SELECT ");
        for (String g : a.groupBy()) {
            sql.append('`').append(g).append("`, ");
        }
        for (int i = 0; i < a.aggregates().size(); i++) {
            GoldSpec.AggregateColumn c = a.aggregates().get(i);
            if (c.argument() != null) {
                sql.append('(')
                        .append(c.argument())
                        .append(") AS `")
                        .append(ARG)
                        .append(i)
                        .append("`, ");
            }
        }
        sql.append('`')
                .append(ChangeFeedColumns.CHANGE_TYPE)
                .append("`, `")
                .append(ChangeFeedColumns.COMMIT_VERSION)
                .append("` FROM `")
                .append(view)
                .append('`');
        org.apache.flink.table.api.Table evaluated =
                query(
                        tenv,
                        sql.toString(),
                        spec,
                        "--group-by " + a.groupBy() + " --aggregate " + a.aggregates());
        RowType inputType = rowType(evaluated);
        GoldAggregateFunction.GoldAggregatePlan plan =
                new GoldAggregateFunction.GoldAggregatePlan(
                        inputType, a.groupBy().size(), a.aggregates());
        rejectDuplicates(plan.outputType(), a.target());
        StreamingTables.ensureTable(catalog, a.target(), plan.outputType(), a.groupBy(), options);
        int[] groups = plan.groupPositions();
        AutoCdcKeySelector keys = new AutoCdcKeySelector(inputType, groups);
        DataStream<RowData> rows =
                tenv.toDataStream(
                        evaluated,
                        TypeConversions.fromLogicalToDataType(inputType).bridgedTo(RowData.class));
        DataStream<RowData> aggregated =
                rows.process(
                                new SkipVersionsInGold(
                                        new GoldVersion(loader, a.target()), plan.versionIndex()),
                                InternalTypeInfo.of(inputType))
                        .name("gold skip versions in " + a.target())
                        .uid(spec.name() + "-gold-aggregate-skip")
                        .process(
                                new DropNullGroups(groups, a.groupBy()),
                                InternalTypeInfo.of(inputType))
                        .name("gold null groups " + a.target())
                        .uid(spec.name() + "-gold-null-groups")
                        .setParallelism(1)
                        .keyBy(keys, InternalTypeInfo.of(keys.keyType()))
                        .process(
                                new GoldAggregateFunction(
                                        plan,
                                        new Seeds(loader, a.target(), plan.outputType(), groups)),
                                InternalTypeInfo.of(plan.outputType()))
                        .name("gold aggregate " + a.target())
                        .uid(spec.name() + "-gold-aggregate")
                        // aggregates are small; whole versions per commit hold at any parallelism
                        // (GoldStart)
                        .setParallelism(1);
        StreamingTableSink.upsert(
                aggregated, loader, a.target(), a.groupBy(), options, spec.name() + "-aggregate");
    }

    private static org.apache.flink.table.api.Table query(
            StreamTableEnvironment tenv, String sql, GoldSpec spec, String what) {
        try {
            return tenv.sqlQuery(sql);
        } catch (RuntimeException e) {
            String msg = String.valueOf(e.getMessage()).split("\n")[0];
            // Flink's parser lists every token it expected (hundreds of lines): keep its first line
            // only
            throw new GoldException(
                    GoldException.Code.GOLD_DEFINITION_INVALID,
                    "Gold job '"
                            + spec.name()
                            + "': "
                            + what
                            + " is not valid Flink SQL over the columns of "
                            + spec.source()
                            + " (positions refer to the generated query: "
                            + sql
                            + "): "
                            + msg);
        }
    }

    private static RowType rowType(org.apache.flink.table.api.Table t) {
        return (RowType) t.getResolvedSchema().toPhysicalRowDataType().getLogicalType();
    }

    private static void rejectDuplicates(RowType type, TableIdentifier target) {
        Set<String> seen = new HashSet<>();
        for (String n : type.getFieldNames()) {
            if (!seen.add(n)) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "the columns of "
                                + target
                                + " name '"
                                + n
                                + "' twice: "
                                + type.getFieldNames());
            }
        }
    }

    /**
     * Changes → upserts of the Gold upsert table (row kinds +I/+U/-D; FlinkSink in upsert mode).
     */
    static final class UpsertFunction extends ProcessFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final int arity;
        private final RowType target;
        private transient RowData.FieldGetter[] getters;

        UpsertFunction(int arity, RowType target) {
            this.arity = arity;
            this.target = target;
        }

        @Override
        public void open(OpenContext ctx) {
            getters = new RowData.FieldGetter[arity];
            for (int i = 0; i < arity; i++) {
                getters[i] = RowData.createFieldGetter(target.getTypeAt(i), i);
            }
        }

        @Override
        public void processElement(RowData in, Context ctx, Collector<RowData> out) {
            boolean pass = in.getBoolean(arity);
            String type = in.getString(arity + 1).toString();
            RowKind kind;
            switch (type) {
                case "insert":
                    kind = pass ? RowKind.INSERT : null;
                    break;
                case "update_postimage":
                    // a postimage that fails the filter removes the key (harmless when it was not
                    // there)
                    kind = pass ? RowKind.UPDATE_AFTER : RowKind.DELETE;
                    break;
                case "delete":
                    kind = pass ? RowKind.DELETE : null;
                    break;
                case "update_preimage":
                    kind = null;
                    break;
                default:
                    throw new IllegalStateException(
                            "unknown _change_type '" + type + "' in the change feed (F1)");
            }
            if (kind == null) {
                return;
            }
            GenericRowData row = new GenericRowData(kind, arity);
            for (int i = 0; i < arity; i++) {
                row.setField(i, getters[i].getFieldOrNull(in));
            }
            out.collect(row);
        }
    }

    /**
     * Drops the changes of the Silver versions a Gold table already contains: those up to its Gold
     * version ({@link GoldStart}: every Gold commit holds whole Silver versions, so all changes of
     * versions up to the largest {@code _source_version} are in the table), read when the task
     * opens. A start without state may begin below it (the other Gold table lags, or Silver's rows
     * come first for a Gold table without rows); a restore reads the version again, which then
     * includes this run's commits, all of whose versions precede what the restored job emits.
     * Counted in metric {@code goldChangesAlreadyInGold}.
     */
    static final class SkipVersionsInGold extends ProcessFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final GoldVersion gold;
        private final int versionIndex;
        private transient long skipThrough;
        private transient Counter skipped;

        /**
         * @param versionIndex position of the Silver version ({@code _commit_version}) in the rows
         */
        SkipVersionsInGold(GoldVersion gold, int versionIndex) {
            this.gold = gold;
            this.versionIndex = versionIndex;
        }

        @Override
        public void open(OpenContext ctx) {
            skipThrough = gold.get();
            skipped = getRuntimeContext().getMetricGroup().counter("goldChangesAlreadyInGold");
        }

        @Override
        public void processElement(RowData in, Context ctx, Collector<RowData> out) {
            if (in.getLong(versionIndex) <= skipThrough) {
                skipped.inc();
                return;
            }
            out.collect(in);
        }
    }

    /**
     * The Gold version of a Gold table ({@link GoldStart#goldVersion}), -1 without rows, read in
     * the task.
     */
    static final class GoldVersion implements GoldAggregateFunction.SerializableSupplier<Long> {
        private static final long serialVersionUID = 1L;
        private final CatalogLoader loader;
        private final String table;

        GoldVersion(CatalogLoader loader, TableIdentifier table) {
            this.loader = loader;
            this.table = table.toString();
        }

        @Override
        public Long get() {
            Catalog catalog = loader.loadCatalog();
            try {
                return GoldStart.goldVersion(catalog.loadTable(TableIdentifier.parse(table)))
                        .orElse(-1L);
            } finally {
                if (catalog instanceof Closeable) {
                    try {
                        ((Closeable) catalog).close();
                    } catch (IOException e) {
                        LOG.debug("closing the catalog of {} failed", table, e);
                    }
                }
            }
        }
    }

    /** Drops rows whose group value is NULL (they cannot be an identifier), counting them. */
    static final class DropNullGroups extends ProcessFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final int[] groups;
        private final List<String> names;
        private transient Counter dropped;

        DropNullGroups(int[] groups, List<String> names) {
            this.groups = groups;
            this.names = names;
        }

        @Override
        public void open(OpenContext ctx) {
            dropped = getRuntimeContext().getMetricGroup().counter("goldNullGroupRows");
        }

        @Override
        public void processElement(RowData in, Context ctx, Collector<RowData> out) {
            for (int g : groups) {
                if (in.isNullAt(g)) {
                    if (dropped.getCount() == 0) {
                        LOG.warn(
                                "Gold aggregate: a Silver row has NULL in group-by column {} and is not aggregated"
                                        + " (counted in metric goldNullGroupRows)",
                                names.get(g));
                    }
                    dropped.inc();
                    return;
                }
            }
            out.collect(in);
        }
    }

    /**
     * Reads the Gold aggregate table's rows by group key, in the task (seeds of a start without
     * state).
     */
    static final class Seeds
            implements GoldAggregateFunction.SerializableSupplier<Map<RowData, RowData>> {
        private static final long serialVersionUID = 1L;
        private final CatalogLoader loader;
        private final String table;
        private final RowType goldType;
        private final int[] groups;

        Seeds(CatalogLoader loader, TableIdentifier table, RowType goldType, int[] groups) {
            this.loader = loader;
            this.table = table.toString();
            this.goldType = goldType;
            this.groups = groups;
        }

        @Override
        public Map<RowData, RowData> get() {
            Table gold = loader.loadCatalog().loadTable(TableIdentifier.parse(table));
            Map<RowData, RowData> seeds = new HashMap<>();
            if (gold.currentSnapshot() == null) {
                return seeds;
            }
            AutoCdcKeySelector keys = new AutoCdcKeySelector(goldType, groups);
            RowDataSerializer serializer = new RowDataSerializer(goldType);
            StructRowData view = new StructRowData(gold.schema().asStruct());
            try (CloseableIterable<Record> rows = IcebergGenerics.read(gold).build()) {
                for (Record r : rows) {
                    RowData row = serializer.toBinaryRow(view.setStruct(r)).copy();
                    seeds.put(keys.getKey(row), row);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the Gold aggregate " + table, e);
            }
            LOG.info("Gold aggregate {}: seeded {} groups from the table", table, seeds.size());
            return seeds;
        }
    }
}

package dev.changeflow.e2e.bench;

import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.operators.AutoCdcOperators;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.flink.sink.FlinkSinkBuilder;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataTypes;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The systems the benchmark compares, each writing the replayed rows ({@link
 * BenchFlows#sourceType()}) into its own table and reading the final table back:
 *
 * <ul>
 *   <li>{@code scd1} / {@code scd2}: changeflow's AUTO CDC operator ({@link
 *       AutoCdcOperators#apply}) and {@link StreamingTableSink#write}, the two calls the ingest job
 *       makes after decoding;
 *   <li>{@code paimon}: an Apache Paimon primary-key table ({@code aid}) with {@code sequence.field
 *       = lsn}, {@code bucket = 2}, parquet + zstd, {@code merge-engine = deduplicate}, {@code
 *       changelog-producer = none}, default compaction, written by Paimon's {@link
 *       FlinkSinkBuilder};
 *   <li>{@code iceberg-upsert}: Iceberg's Flink sink in upsert mode on {@code aid}, no ordering
 *       ({@link StreamingTableSink#upsert}): upserts as {@code +I}, deletes as {@code -D};
 *   <li>{@code iceberg-append}: every record appended ({@code aid, bid, abalance, filler, lsn}) to
 *       a table without identifier fields ({@link StreamingTableSink#append}), the write limit.
 * </ul>
 */
enum BenchSystem {
    SCD1("scd1", true),
    SCD2("scd2", true),
    PAIMON("paimon", true),
    ICEBERG_UPSERT("iceberg-upsert", false),
    ICEBERG_APPEND("iceberg-append", false);

    /** Name on the command line and in the table. */
    final String id;

    /** Whether the system orders by sequence (its result must be exact on any delivery order). */
    final boolean sequenced;

    BenchSystem(String id, boolean sequenced) {
        this.id = id;
        this.sequenced = sequenced;
    }

    static BenchSystem of(String id) {
        for (BenchSystem s : values()) {
            if (s.id.equals(id.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException(
                "unknown benchmark system '"
                        + id
                        + "'; accepted: scd1, scd2, paimon, iceberg-upsert, iceberg-append");
    }

    /** What a finished run's final table looks like. */
    static final class TableStats {
        long readNanos;
        long rows;
        long dataFiles;
        long deleteFiles;

        /** SCD1-shaped rows by key, or null for SCD2 / append tables. */
        Map<Integer, String> byKey;

        /** All rows as CSV lines (SCD2), or null. */
        List<String> lines;
    }

    private static final TableIdentifier UPSERT = TableIdentifier.of("bench", "accounts_upsert");
    private static final TableIdentifier APPEND = TableIdentifier.of("bench", "accounts_append");
    private static final Identifier PAIMON_TABLE = Identifier.create("bench", "accounts");

    /**
     * Creates the target table and adds the writer behind {@code rows}. Projections run at the
     * parallelism of {@code rows} (chained to the replay), so each writer's shuffle by key is the
     * only repartitioning and the records of one key keep the replay's order.
     */
    void build(
            DataStream<RowData> rows,
            BenchFlows flows,
            CatalogSettings catalog,
            Path paimonWarehouse)
            throws Exception {
        IngestPlan.Flow scd1 = flows.scd1;
        int[] data = flows.dataIndexes();
        int seq = flows.sequenceIndex();
        RowType dataType = scd1.spec.targetType();
        // the baselines' writers run at the job's parallelism, as changeflow's (behind its keyed
        // operator) and Paimon's
        StreamingTableOptions baseline =
                scd1.tableOptions.toBuilder()
                        .writeParallelism(rows.getExecutionEnvironment().getParallelism())
                        .build();
        switch (this) {
            case SCD1:
            case SCD2:
                {
                    IngestPlan.Flow flow = this == SCD1 ? flows.scd1 : flows.scd2;
                    try (AutoCloseableCatalog c = new AutoCloseableCatalog(catalog.open())) {
                        StreamingTables.ensureTable(
                                c.catalog,
                                flow.target,
                                flow.spec.targetType(),
                                flow.spec.identifierFields(),
                                flow.tableOptions);
                    }
                    DataStream<RowData> out = AutoCdcOperators.apply(rows, null, flow.spec);
                    StreamingTableSink.write(
                            out,
                            catalog.loader(),
                            flow.target,
                            flow.spec.identifierFields(),
                            flow.tableOptions,
                            flow.name());
                    return;
                }
            case ICEBERG_UPSERT:
                {
                    try (AutoCloseableCatalog c = new AutoCloseableCatalog(catalog.open())) {
                        StreamingTables.ensureTable(
                                c.catalog, UPSERT, dataType, scd1.spec.keys(), scd1.tableOptions);
                    }
                    DataStream<RowData> upserts =
                            rows.map(
                                            new Project(flows.sourceType(), data, -1, true),
                                            InternalTypeInfo.of(dataType))
                                    .setParallelism(rows.getParallelism())
                                    .name("project upserts");
                    StreamingTableSink.upsert(
                            upserts,
                            catalog.loader(),
                            UPSERT,
                            scd1.spec.keys(),
                            baseline,
                            "upsert");
                    return;
                }
            case ICEBERG_APPEND:
                {
                    RowType appendType = withLsn(dataType);
                    try (AutoCloseableCatalog c = new AutoCloseableCatalog(catalog.open())) {
                        StreamingTables.ensureTable(
                                c.catalog, APPEND, appendType, List.of(), scd1.tableOptions);
                    }
                    DataStream<RowData> appended =
                            rows.map(
                                            new Project(flows.sourceType(), data, seq, false),
                                            InternalTypeInfo.of(appendType))
                                    .setParallelism(rows.getParallelism())
                                    .name("project appends");
                    StreamingTableSink.append(
                            appended, catalog.loader(), APPEND, baseline, "append");
                    return;
                }
            case PAIMON:
                {
                    org.apache.paimon.table.Table table = createPaimonTable(paimonWarehouse);
                    RowType paimonType = withLsn(dataType);
                    DataStream<RowData> keyed =
                            rows.map(
                                            new Project(flows.sourceType(), data, seq, true),
                                            InternalTypeInfo.of(paimonType))
                                    .setParallelism(rows.getParallelism())
                                    .name("project paimon");
                    new FlinkSinkBuilder(table)
                            .forRowData(keyed)
                            .parallelism(rows.getExecutionEnvironment().getParallelism())
                            .build();
                    return;
                }
            default:
                throw new AssertionError(this);
        }
    }

    /**
     * Reads the final table: row count, files, and the rows for verification (timed: {@code
     * readNanos}).
     */
    TableStats readBack(BenchFlows flows, CatalogSettings catalog, Path paimonWarehouse)
            throws Exception {
        TableStats s = new TableStats();
        if (this == PAIMON) {
            org.apache.paimon.catalog.Catalog cat = paimonCatalog(paimonWarehouse);
            org.apache.paimon.table.Table table = cat.getTable(PAIMON_TABLE);
            long start = System.nanoTime();
            ReadBuilder rb = table.newReadBuilder();
            List<Split> splits = rb.newScan().plan().splits();
            Map<Integer, String> byKey = new HashMap<>();
            try (RecordReader<InternalRow> reader = rb.newRead().createReader(splits)) {
                reader.forEachRemaining(
                        r ->
                                byKey.put(
                                        r.getInt(0),
                                        r.getInt(0)
                                                + ","
                                                + (r.isNullAt(1) ? "" : r.getInt(1))
                                                + ","
                                                + (r.isNullAt(2) ? "" : r.getInt(2))
                                                + ","
                                                + TableRows.formatValue(
                                                        r.isNullAt(3)
                                                                ? null
                                                                : r.getString(3).toString())));
            }
            s.readNanos = System.nanoTime() - start;
            for (Split split : splits) {
                DataSplit d = (DataSplit) split;
                s.dataFiles += d.dataFiles().size();
                s.deleteFiles +=
                        d.deletionFiles()
                                .map(l -> l.stream().filter(x -> x != null).count())
                                .orElse(0L);
            }
            s.rows = byKey.size();
            s.byKey = byKey;
            cat.close();
            return s;
        }
        TableIdentifier id =
                this == SCD1
                        ? flows.scd1.target
                        : this == SCD2
                                ? flows.scd2.target
                                : this == ICEBERG_UPSERT ? UPSERT : APPEND;
        try (AutoCloseableCatalog c = new AutoCloseableCatalog(catalog.open())) {
            Table table = c.catalog.loadTable(id);
            long start = System.nanoTime();
            List<Record> records = TableRows.read(table);
            s.readNanos = System.nanoTime() - start;
            s.rows = records.size();
            Snapshot snap = table.currentSnapshot();
            if (snap != null) {
                s.dataFiles = Long.parseLong(snap.summary().getOrDefault("total-data-files", "0"));
                s.deleteFiles =
                        Long.parseLong(snap.summary().getOrDefault("total-delete-files", "0"));
            }
            if (this == SCD2) {
                s.lines = new ArrayList<>(records.size());
                for (Record r : records) {
                    s.lines.add(TableRows.toCsvLine(r));
                }
            } else if (this != ICEBERG_APPEND) {
                s.byKey = new HashMap<>();
                for (Record r : records) {
                    s.byKey.put((Integer) r.get(0), TableRows.toCsvLine(r));
                }
            }
        }
        return s;
    }

    private static RowType withLsn(RowType dataType) {
        List<RowType.RowField> fields = new ArrayList<>(dataType.getFields());
        fields.add(new RowType.RowField("lsn", new BigIntType()));
        return new RowType(fields);
    }

    private static org.apache.paimon.catalog.Catalog paimonCatalog(Path warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse.toUri().toString());
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    private static org.apache.paimon.table.Table createPaimonTable(Path warehouse)
            throws Exception {
        try (org.apache.paimon.catalog.Catalog cat = paimonCatalog(warehouse)) {
            cat.createDatabase("bench", true);
            Schema schema =
                    Schema.newBuilder()
                            .column("aid", DataTypes.INT().notNull())
                            .column("bid", DataTypes.INT())
                            .column("abalance", DataTypes.INT())
                            .column("filler", DataTypes.STRING())
                            .column("lsn", DataTypes.BIGINT())
                            .primaryKey("aid")
                            .option("bucket", "2")
                            .option("file.format", "parquet")
                            .option("file.compression", "zstd")
                            .option("merge-engine", "deduplicate")
                            .option("sequence.field", "lsn")
                            .option("changelog-producer", "none")
                            .build();
            cat.createTable(PAIMON_TABLE, schema, true);
            return cat.getTable(PAIMON_TABLE);
        }
    }

    /**
     * Projects a source row to {@code aid, bid, abalance, filler} (+ {@code lsn} when {@code seq ≥
     * 0}), keeping a delete as {@code -D} when {@code keepDeletes}, else {@code +I}.
     */
    private static final class Project implements MapFunction<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final RowData.FieldGetter[] data;
        private final RowData.FieldGetter seq;
        private final boolean keepDeletes;

        Project(RowType source, int[] data, int seq, boolean keepDeletes) {
            this.data = new RowData.FieldGetter[data.length];
            for (int i = 0; i < data.length; i++) {
                this.data[i] = RowData.createFieldGetter(source.getTypeAt(data[i]), data[i]);
            }
            this.seq = seq >= 0 ? RowData.createFieldGetter(source.getTypeAt(seq), seq) : null;
            this.keepDeletes = keepDeletes;
        }

        @Override
        public RowData map(RowData in) {
            GenericRowData out =
                    new GenericRowData(
                            keepDeletes && in.getRowKind() == RowKind.DELETE
                                    ? RowKind.DELETE
                                    : RowKind.INSERT,
                            data.length + (seq != null ? 1 : 0));
            for (int i = 0; i < data.length; i++) {
                out.setField(i, data[i].getFieldOrNull(in));
            }
            if (seq != null) {
                out.setField(data.length, seq.getFieldOrNull(in));
            }
            return out;
        }
    }

    /** An Iceberg catalog closed after use (Hadoop catalogs are {@link java.io.Closeable}). */
    private static final class AutoCloseableCatalog implements AutoCloseable {
        final Catalog catalog;

        AutoCloseableCatalog(Catalog catalog) {
            this.catalog = catalog;
        }

        @Override
        public void close() throws Exception {
            if (catalog instanceof AutoCloseable) {
                ((AutoCloseable) catalog).close();
            }
        }
    }
}

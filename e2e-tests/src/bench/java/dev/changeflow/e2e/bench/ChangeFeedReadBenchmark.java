package dev.changeflow.e2e.bench;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Benchmark (not a test) of the change feed's cost (issue: change data feed, item 7): reading the
 * changes of one version that updates 1% of a table's rows, chosen at random, against a full scan
 * of the table — for a changeflow SCD1 table (equality deletes carry the complete rows: pre-images
 * straight from the delete files), and for tables written by Iceberg's own Flink sink in upsert
 * mode (key-only equality deletes: pre-images by a lookup scan of the parent snapshot) with and
 * without Parquet bloom filters on the key.
 *
 * <p>Table: {@code aid INT NOT NULL (key), bid INT, abalance INT, filler STRING(84)}, {@code rows}
 * rows in version 1 (one Flink checkpoint, parallelism 2), {@code rows / 100} random keys updated
 * in version 2. Prints, per table: files, the changes read (must be 2 × updates: preimage +
 * postimage), and the median of 5 timed reads (after one warm-up) of the version-2 changes and of a
 * full scan. Arguments: {@code [rows] [warehouse folder]} (default 1,000,000 and a temp folder).
 * Run: {@code ./mvnw -B -Pbench -pl e2e-tests -am verify -DskipTests
 * -Dbench.class=dev.changeflow.e2e.bench.ChangeFeedReadBenchmark} (README "Benchmarks").
 */
public final class ChangeFeedReadBenchmark {
    private static final RowType ROW =
            RowType.of(
                    new LogicalType[] {
                        new IntType(false),
                        new IntType(),
                        new IntType(),
                        new VarCharType(VarCharType.MAX_LENGTH)
                    },
                    new String[] {"aid", "bid", "abalance", "filler"});
    private static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.IntegerType.get()),
                            Types.NestedField.optional(2, "bid", Types.IntegerType.get()),
                            Types.NestedField.optional(3, "abalance", Types.IntegerType.get()),
                            Types.NestedField.optional(4, "filler", Types.StringType.get())),
                    Set.of(1));
    private static final String FILLER = "x".repeat(84);

    private ChangeFeedReadBenchmark() {}

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        Path warehouse =
                args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("cdf-bench");
        int updates = rows / 100;
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        TableIdentifier changeflow = TableIdentifier.of("bench", "changeflow_scd1");
        TableIdentifier upsertBloom = TableIdentifier.of("bench", "iceberg_upsert_bloom");
        TableIdentifier upsertPlain = TableIdentifier.of("bench", "iceberg_upsert_no_bloom");
        StreamingTables.ensureTable(
                catalog, changeflow, ROW, List.of("aid"), StreamingTableOptions.defaults());
        for (TableIdentifier id : List.of(upsertBloom, upsertPlain)) {
            Map<String, String> props =
                    new HashMap<>(
                            Map.of(
                                    TableProperties.FORMAT_VERSION,
                                    "2",
                                    StreamingTables.MAX_CONTINUOUS_EMPTY_COMMITS,
                                    Integer.toString(Integer.MAX_VALUE)));
            if (id.equals(upsertBloom)) {
                props.put(StreamingTables.BLOOM_FILTER_PREFIX + "aid", "true");
                props.put(StreamingTables.BLOOM_FILTER_NDV_PREFIX + "aid", Integer.toString(rows));
            }
            catalog.buildTable(id, SCHEMA).withProperties(props).create();
        }

        long t0 = System.nanoTime();
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                warehouse.resolve(".checkpoints").toUri().toString());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(500);
        DataStream<Long> batches =
                env.fromSource(
                                new OneBatchPerCheckpointSource(2),
                                WatermarkStrategy.noWatermarks(),
                                "batches")
                        .setParallelism(1);
        DataStream<RowData> changelog =
                batches.flatMap(new Rows(rows, updates, true), InternalTypeInfo.of(ROW))
                        .setParallelism(1);
        DataStream<RowData> upserts =
                batches.flatMap(new Rows(rows, updates, false), InternalTypeInfo.of(ROW))
                        .setParallelism(1);
        StreamingTableSink.write(
                changelog.keyBy(r -> r.getInt(0)).map(r -> r, InternalTypeInfo.of(ROW)),
                settings.loader(),
                changeflow,
                List.of("aid"),
                StreamingTableOptions.defaults(),
                "changeflow");
        for (TableIdentifier id : List.of(upsertBloom, upsertPlain)) {
            FlinkSink.forRowData(upserts)
                    .tableLoader(TableLoader.fromCatalog(settings.loader(), id))
                    .equalityFieldColumns(List.of("aid"))
                    .upsert(true)
                    .uidPrefix(id.name())
                    .append();
        }
        env.execute("change feed read benchmark: write");
        System.out.printf(
                "Wrote %,d rows + %,d updates into 3 tables in %.1f s (%s)%n",
                rows, updates, (System.nanoTime() - t0) / 1e9, warehouse);

        System.out.println();
        System.out.printf(
                "%-26s %6s %8s %12s %14s %14s %8s%n",
                "table", "files", "deletes", "changes(v2)", "changes ms", "full scan ms", "ratio");
        for (TableIdentifier id : List.of(changeflow, upsertBloom, upsertPlain)) {
            Table t = catalog.loadTable(id);
            long v2 = t.currentSnapshot().sequenceNumber();
            long[] files = files(t);
            long[] changeCount = new long[1];
            double changesMs =
                    median(
                            () ->
                                    changeCount[0] =
                                            count(
                                                    TableChanges.forTable(t)
                                                            .startingVersion(v2)
                                                            .endingVersion(v2)
                                                            .build()
                                                            .read()));
            double scanMs = median(() -> count(IcebergGenerics.read(t).build()));
            if (changeCount[0] != 2L * updates) {
                throw new IllegalStateException(
                        id
                                + ": expected "
                                + 2L * updates
                                + " changes in version "
                                + v2
                                + ", read "
                                + changeCount[0]);
            }
            System.out.printf(
                    "%-26s %6d %8d %12d %14.1f %14.1f %7.1f×%n",
                    id.name(),
                    files[0],
                    files[1],
                    changeCount[0],
                    changesMs,
                    scanMs,
                    scanMs / changesMs);
        }
        System.out.printf(
                "%nMachine: %d cores, Java %s; one version updating %,d of %,d rows (1%%).%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                updates,
                rows);
    }

    private static long[] files(Table t) {
        long data = 0;
        long deletes = 0;
        for (ManifestFile m : t.currentSnapshot().allManifests(t.io())) {
            if (m.content() == ManifestContent.DATA) {
                data += m.addedFilesCount() + m.existingFilesCount();
            } else {
                deletes += m.addedFilesCount() + m.existingFilesCount();
            }
        }
        return new long[] {data, deletes};
    }

    private static long count(CloseableIterable<Record> it) throws Exception {
        long n = 0;
        try (it) {
            for (Record ignored : it) {
                n++;
            }
        }
        return n;
    }

    private interface Timed {
        void run() throws Exception;
    }

    private static double median(Timed read) throws Exception {
        read.run();
        double[] ms = new double[5];
        for (int i = 0; i < ms.length; i++) {
            long t = System.nanoTime();
            read.run();
            ms[i] = (System.nanoTime() - t) / 1e6;
        }
        Arrays.sort(ms);
        return ms[ms.length / 2];
    }

    /** Batch 0: every row as an insert; batch 1: {@code updates} random keys, +1 balance. */
    private static final class Rows implements FlatMapFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final int rows;
        private final int updates;
        private final boolean changelog;

        Rows(int rows, int updates, boolean changelog) {
            this.rows = rows;
            this.updates = updates;
            this.changelog = changelog;
        }

        private static GenericRowData row(RowKind kind, int aid, int balance) {
            GenericRowData r =
                    GenericRowData.ofKind(
                            kind, aid, 1 + aid / 100_000, balance, StringData.fromString(FILLER));
            return r;
        }

        @Override
        public void flatMap(Long batch, Collector<RowData> out) {
            if (batch == 0) {
                for (int aid = 1; aid <= rows; aid++) {
                    out.collect(row(RowKind.INSERT, aid, 0));
                }
                return;
            }
            Random random = new Random(42);
            List<Integer> keys = new ArrayList<>();
            Set<Integer> seen = new HashSet<>();
            while (keys.size() < updates) {
                int aid = 1 + random.nextInt(rows);
                if (seen.add(aid)) {
                    keys.add(aid);
                }
            }
            for (int aid : keys) {
                if (changelog) {
                    out.collect(row(RowKind.UPDATE_BEFORE, aid, 0));
                }
                out.collect(row(RowKind.UPDATE_AFTER, aid, 1));
            }
        }
    }
}

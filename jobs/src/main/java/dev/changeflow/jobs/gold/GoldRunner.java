package dev.changeflow.jobs.gold;

import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.cdf.stream.ChangeFeedSource;
import dev.changeflow.sources.cdf.stream.ChangeFeedStart;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * Runs a Silver→Gold job: locally on a MiniCluster up to the Silver version that is the latest at
 * launch (available-now), or on a cluster until it is stopped.
 *
 * <p><b>Local runs keep no Flink state between runs</b>: each run starts where the Gold tables are
 * ({@link GoldStart}: {@code _source_version} + 1, the aggregate seeded from its rows, a Gold table
 * without rows beside one with rows rebuilt from Silver's rows), so a run that was killed at any
 * moment needs nothing but to be run again, and {@code --starting-version} is checked against the
 * Gold tables every time ({@code GOLD_VERSION_MISMATCH}). Within a run, Flink checkpoints (RocksDB,
 * aligned, under {@code <warehouse>/.changeflow/checkpoints/<name>}, deleted when the next run
 * starts) commit the Gold tables, each commit holding whole Silver versions; the last commit
 * happens when the change feed has been read.
 *
 * <p><b>Cluster runs</b> read the change feed until stopped, with Flink's checkpoints, savepoints
 * and HA; the start is resolved only when the job starts without state.
 */
public final class GoldRunner {
    private GoldRunner() {}

    /** Options of a run. */
    public static final class Options {
        public Path warehouse = Path.of("warehouse");
        @Nullable public Long startingVersion;
        public boolean fromScratch;
        public int parallelism = 2;
        public Duration checkpointInterval = Duration.ofSeconds(5);
        public PrintStream out = System.out;
        public StreamingTableOptions tableOptions = StreamingTableOptions.defaults();

        /**
         * In-job maintenance of the Gold tables ({@link JobMaintenance}, docs/semantics.md M1, M2);
         * cluster runs only (a local run ends at Silver's latest version). Off by default.
         */
        public TableMaintenanceOptions maintenance = TableMaintenanceOptions.off();
    }

    /** What a local run did. */
    public static final class Summary {
        /** The start used: empty = the initial snapshot; absent when there was nothing to read. */
        @Nullable public OptionalLong start;

        /**
         * Whether the run read Silver's rows at {@code start − 1} first (a Gold table without
         * rows).
         */
        public boolean snapshotFirst;

        /** Silver's latest version at launch: the run reads up to it. */
        public long silverVersion;

        /** Per Gold table: rows after the run and its largest _source_version (-1: no rows). */
        public final Map<String, long[]> tables = new TreeMap<>();

        public boolean upToDate;
    }

    /**
     * Runs the job locally until the Gold tables contain every Silver version committed before the
     * launch.
     *
     * @throws GoldException GOLD_VERSION_MISMATCH or GOLD_DEFINITION_INVALID
     * @throws IllegalArgumentException when the Silver table does not exist
     * @throws dev.changeflow.sources.cdf.CdfException when the versions needed are not available
     *     (F4)
     * @throws Exception when the Flink job fails
     */
    public static Summary runLocal(GoldSpec spec, CatalogSettings catalog, Options o)
            throws Exception {
        if (o.maintenance.enabled()) {
            throw new IllegalArgumentException(
                    "in-job maintenance of the Gold tables runs with --cluster only: a local run"
                            + " ends at Silver's latest version; maintain them with bin/changeflow"
                            + " maintain");
        }
        Summary summary = new Summary();
        Catalog cat = catalog.open();
        try {
            Table silver = silver(cat, spec);
            for (TableIdentifier t : targets(spec)) {
                // never drop or overwrite a table that a Gold job did not write (a Silver table
                // named by mistake)
                if (cat.tableExists(t)
                        && cat.loadTable(t).schema().findField(GoldSpec.SOURCE_VERSION) == null) {
                    throw new GoldException(
                            GoldException.Code.GOLD_DEFINITION_INVALID,
                            "table "
                                    + t
                                    + " exists and was not written by a Gold job (it has no "
                                    + GoldSpec.SOURCE_VERSION
                                    + " column): name another Gold table; changeflow will not "
                                    + (o.fromScratch ? "drop" : "write")
                                    + " it");
                }
            }
            if (o.fromScratch) {
                // check the start first, as if the Gold tables were new: nothing is dropped for a
                // run that cannot start
                GoldStart.resolve(
                        silver,
                        null,
                        spec.upsert() != null,
                        null,
                        spec.aggregate() != null,
                        o.startingVersion);
                for (TableIdentifier t : targets(spec)) {
                    StreamingTables.dropIfExists(cat, t);
                }
            }
            GoldStart start = startOf(cat, silver, spec, o.startingVersion);
            silver.refresh();
            summary.silverVersion =
                    silver.currentSnapshot() == null
                            ? 0
                            : silver.currentSnapshot().sequenceNumber();
            if (start.startingVersion().isPresent()
                    && start.startingVersion().getAsLong() > summary.silverVersion) {
                summary.upToDate = true;
                registerConsumer(silver, spec, summary.silverVersion + 1);
                o.out.printf(
                        "Gold is up to date: %s has no version after %d.%n",
                        spec.source(), summary.silverVersion);
                describe(cat, spec, summary, o.out);
                return summary;
            }
            summary.start = start.startingVersion();
            summary.snapshotFirst = start.startingVersion().isPresent() && start.snapshotFirst();
            String from;
            if (start.startingVersion().isEmpty()) {
                from = "from its current snapshot (as inserts)";
            } else if (summary.snapshotFirst) {
                from =
                        String.format(
                                "from its rows at version %d (as inserts, for the Gold table without rows), then its"
                                        + " changes from version %d",
                                start.startingVersion().getAsLong() - 1,
                                start.startingVersion().getAsLong());
            } else {
                from = "from version " + start.startingVersion().getAsLong();
            }
            o.out.printf(
                    "Reading the change feed of %s %s up to version %d%n",
                    spec.source(), from, summary.silverVersion);
            Path ckRoot = LocalRunner.checkpointRoot(o.warehouse, null, spec.name());
            LocalRunner.deleteRecursively(ckRoot);
            Configuration conf =
                    LocalRunner.configuration(ckRoot.resolve("checkpoints"), o.checkpointInterval);
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(o.parallelism);
            build(env, spec, catalog, start.feedStart(), true, o.tableOptions);
            env.execute("changeflow gold " + spec.name());
            // not silverVersion + 1: a Gold table whose last versions left no row re-reads them
            // next time
            registerConsumer(silver, spec, nextStart(cat, spec, summary.silverVersion));
            describe(cat, spec, summary, o.out);
        } finally {
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
        }
        return summary;
    }

    /**
     * Runs the job on the cluster that executes this program (application mode, {@code flink run})
     * until it is stopped. Checkpointing, state backend and restarts come from the cluster's
     * configuration, except that checkpoints are always aligned ({@link GoldStart}). Where the
     * change feed starts is decided by the source's enumerator when it starts without state ({@link
     * GoldStartResolver}), never when the job restores a checkpoint or savepoint, so a {@code
     * --starting-version} left in the arguments does not stop a restart.
     */
    public static void runCluster(GoldSpec spec, CatalogSettings catalog, Options o)
            throws Exception {
        Catalog cat = catalog.open();
        try {
            silver(cat, spec);
        } finally {
            closeQuietly(cat);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        buildCluster(env, spec, catalog, o);
        env.execute("changeflow gold " + spec.name());
    }

    /**
     * Adds the cluster form of the job to {@code env}: an unbounded change feed whose start is
     * resolved by the enumerator on a start without state ({@link GoldStartResolver}).
     */
    public static void buildCluster(
            StreamExecutionEnvironment env, GoldSpec spec, CatalogSettings catalog, Options o) {
        TableLoader loader = TableLoader.fromCatalog(catalog.loader(), spec.source());
        ChangeFeedSource.Builder feed =
                ChangeFeedSource.forTable(loader)
                        .uidPrefix(spec.name() + "-cdf")
                        .consumerId(spec.name())
                        .startResolver(
                                new GoldStartResolver(catalog.loader(), spec, o.startingVersion));
        addGold(env, spec, catalog, feed, o.tableOptions);
        for (TableIdentifier t : targets(spec)) {
            JobMaintenance.append(
                    env, catalog, t, o.maintenance, "maintenance-" + spec.name() + "-" + t.name());
        }
    }

    /**
     * Adds change feed → Gold to {@code env}.
     *
     * @param start the Silver version to start at, empty for the initial snapshot
     * @param bounded read up to the latest version at build time, then finish
     */
    public static void build(
            StreamExecutionEnvironment env,
            GoldSpec spec,
            CatalogSettings catalog,
            OptionalLong start,
            boolean bounded,
            StreamingTableOptions tableOptions) {
        build(
                env,
                spec,
                catalog,
                start.isPresent()
                        ? ChangeFeedStart.changesFrom(start.getAsLong())
                        : ChangeFeedStart.currentSnapshot(),
                bounded,
                tableOptions);
    }

    /**
     * Adds change feed → Gold to {@code env}, starting as {@link GoldStart#feedStart()} says.
     *
     * @param bounded read up to the latest version at build time, then finish
     */
    public static void build(
            StreamExecutionEnvironment env,
            GoldSpec spec,
            CatalogSettings catalog,
            ChangeFeedStart start,
            boolean bounded,
            StreamingTableOptions tableOptions) {
        TableLoader loader = TableLoader.fromCatalog(catalog.loader(), spec.source());
        ChangeFeedSource.Builder feed =
                ChangeFeedSource.forTable(loader)
                        .bounded(bounded)
                        .uidPrefix(spec.name() + "-cdf")
                        .starting(start);
        addGold(env, spec, catalog, feed, tableOptions);
    }

    private static void addGold(
            StreamExecutionEnvironment env,
            GoldSpec spec,
            CatalogSettings catalog,
            ChangeFeedSource.Builder feed,
            StreamingTableOptions tableOptions) {
        // a Gold commit holds whole Silver versions only with aligned checkpoints (GoldStart): an
        // unaligned barrier overtakes changes of a version that other channels already delivered
        Configuration aligned = new Configuration();
        aligned.set(CheckpointingOptions.ENABLE_UNALIGNED, false);
        env.configure(aligned);
        ChangeFeedSource source = feed.buildSource();
        DataStream<RowData> changes = feed.build(env);
        Catalog cat = catalog.open();
        try {
            GoldJob.build(
                    changes, source.rowType(), silver(cat, spec), spec, catalog, tableOptions);
        } finally {
            closeQuietly(cat);
        }
    }

    /**
     * Where a start without state begins: {@link GoldStart#resolve} over the job's Gold tables as
     * they are.
     */
    static GoldStart startOf(Catalog cat, Table silver, GoldSpec spec, @Nullable Long requested) {
        return GoldStart.resolve(
                silver,
                existing(cat, spec.upsert() == null ? null : spec.upsert().target()),
                spec.upsert() != null,
                existing(cat, spec.aggregate() == null ? null : spec.aggregate().target()),
                spec.aggregate() != null,
                requested);
    }

    /**
     * Records the job as a change-feed consumer of Silver (semantics.md F7) with the next version
     * it needs, so changeflow's snapshot expiry keeps it readable.
     */
    private static void registerConsumer(Table silver, GoldSpec spec, long nextVersion) {
        ConsumerRegistry.forTable(silver).write(spec.name(), nextVersion, Instant.now());
    }

    /**
     * The first version a next start without state reads when Gold holds every version up to {@code
     * silverVersion}: {@code min(gold versions) + 1} over the tables with rows ({@link GoldStart};
     * a Gold table without rows beside one with rows also reads Silver's rows at its predecessor,
     * which F7 keeps), else {@code silverVersion + 1} (the current snapshot).
     */
    private static long nextStart(Catalog cat, GoldSpec spec, long silverVersion) {
        long next = silverVersion + 1;
        for (TableIdentifier id : targets(spec)) {
            if (cat.tableExists(id)) {
                OptionalLong g = GoldStart.goldVersion(cat.loadTable(id));
                if (g.isPresent()) {
                    next = Math.min(next, g.getAsLong() + 1);
                }
            }
        }
        return next;
    }

    private static Table silver(Catalog cat, GoldSpec spec) {
        try {
            return cat.loadTable(spec.source());
        } catch (NoSuchTableException e) {
            throw new IllegalArgumentException(
                    "Silver table " + spec.source() + " does not exist in the catalog", e);
        }
    }

    @Nullable
    private static Table existing(Catalog cat, @Nullable TableIdentifier id) {
        return id != null && cat.tableExists(id) ? cat.loadTable(id) : null;
    }

    private static List<TableIdentifier> targets(GoldSpec spec) {
        List<TableIdentifier> ids = new ArrayList<>();
        if (spec.upsert() != null) {
            ids.add(spec.upsert().target());
        }
        if (spec.aggregate() != null) {
            ids.add(spec.aggregate().target());
        }
        return ids;
    }

    private static void describe(Catalog cat, GoldSpec spec, Summary summary, PrintStream out) {
        out.println("Gold tables:");
        for (TableIdentifier id : targets(spec)) {
            if (!cat.tableExists(id)) {
                continue;
            }
            Table t = cat.loadTable(id);
            long rows = TableRows.count(t);
            long version = GoldStart.goldVersion(t).orElse(-1L);
            summary.tables.put(id.toString(), new long[] {rows, version});
            out.println(
                    String.format(
                            "  %-40s %,10d rows  _source_version %s",
                            id, rows, version < 0 ? "-" : Long.toString(version)));
        }
    }

    private static void closeQuietly(Catalog cat) {
        if (cat instanceof Closeable) {
            try {
                ((Closeable) cat).close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }
}

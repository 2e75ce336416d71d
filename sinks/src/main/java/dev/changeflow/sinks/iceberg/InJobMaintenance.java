package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.MaintenanceTaskBuilder;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.flink.maintenance.api.TableMaintenance;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Table maintenance inside the job that writes a streaming table (docs/semantics.md M1), on
 * Iceberg's Flink {@link TableMaintenance} API: a monitor source watches the table's commits, a
 * trigger manager starts Iceberg's {@link RewriteDataFiles} task when a trigger of {@link
 * TableMaintenanceOptions} fires, and a {@link JdbcLockFactory} lock (id {@code namespace.name})
 * keeps two jobs from compacting the table at once (the one-off {@code maintain} command takes no
 * lock).
 *
 * <p><b>What a compaction does.</b> Iceberg's planner picks the data files (small ones, and those
 * with at least {@link TableMaintenanceOptions#deleteFileThreshold()} delete files applying); the
 * rewrite reads them with their equality and position deletes applied and commits one {@code
 * replace} snapshot on top of whatever is current then. The new files keep the data sequence number
 * of the snapshot the rewrite planned on ({@code use-starting-sequence-number}, Iceberg's default),
 * so an equality delete the ingest committed while the rewrite ran still removes rows from them
 * (M1); Iceberg drops a delete file once no live data file is older than it. Every commit goes
 * through {@link RewriteCommitGuard}, which refuses one that would drop an equality delete still
 * applying to the rewrite's own new files (an Iceberg pitfall). A rewrite whose commit conflicts (a
 * concurrent commit removed or position-deleted one of its files) fails and is reported in the
 * task's error metric; the ingest is not affected and nothing is overwritten. The {@code replace}
 * snapshot yields no change rows (F2), and it does not break the fast path of the change feed's
 * carried pre-images (F2: snapshots that change no row are skipped).
 *
 * <p><b>Other tasks.</b> {@link #append(StreamExecutionEnvironment, CatalogSettings,
 * TableIdentifier, TableMaintenanceOptions, String, List)} adds further Iceberg tasks to the same
 * {@link TableMaintenance} graph, under the same lock (the {@code jobs} module adds Iceberg's
 * {@code DeleteOrphanFiles} that way). Iceberg's in-job {@code ExpireSnapshots} task is never used:
 * it keeps snapshots by age and count only, so it would expire versions that a registered
 * change-feed consumer still needs (F7) and the newest commit of a Flink committer that an ingest
 * needs to resume; changeflow's in-job expiry ({@code dev.changeflow.jobs.maintain.JobMaintenance})
 * runs {@code ChangeFeedExpiry} in a graph of its own that takes this class's lock ({@link
 * #lockFactory}).
 *
 * <p><b>Graph.</b> Operators get uids ending in {@code <uidSuffix>} (the monitor source, trigger
 * manager, rewrite planner/runner/committer, lock remover), at parallelism 1, in the default slot
 * sharing group. The monitor source is unbounded: a job with maintenance never finishes on its own,
 * it is stopped (with a savepoint) or cancelled.
 *
 * <p><b>Lock.</b> The lock table ({@code flink_maintenance_lock}) is created, if missing, on the
 * client when the graph is built, so the job's tasks never race to create it. A job that dies while
 * a compaction holds the lock releases it when it restores from a checkpoint (Iceberg's recovery
 * lock). A job started without state clears the table's lock (Iceberg's trigger manager takes a
 * held lock for the leftover of a dead job), also when another job's compaction holds it: the two
 * can then compact at once, and Iceberg's commit validation rejects the second {@code replace} of
 * the same files, so nothing is lost or doubled ({@code InJobMaintenanceLockTest}, {@code
 * CompactionRaceTest}).
 */
@PublicEvolving
public final class InJobMaintenance {
    /** Connection properties of the embedded SQLite lock: wait for a busy database file. */
    private static final Map<String, String> SQLITE_PROPERTIES =
            Map.of("jdbc.busy_timeout", "30000");

    private InJobMaintenance() {}

    /**
     * Adds the maintenance graph of {@code table} to {@code env}; does nothing when {@code options}
     * are off.
     *
     * @param uidSuffix stable suffix of the operators' uids, e.g. {@code maintenance-<flow>}
     * @throws IllegalArgumentException when the lock is the embedded default and the catalog's
     *     warehouse is not a local folder (name a JDBC database with the lock URI)
     * @throws UncheckedIOException when the table cannot be loaded or the lock database cannot be
     *     opened to create its table
     */
    public static void append(
            StreamExecutionEnvironment env,
            CatalogSettings catalog,
            TableIdentifier table,
            TableMaintenanceOptions options,
            String uidSuffix) {
        append(env, catalog, table, options, uidSuffix, List.of());
    }

    /**
     * As {@link #append(StreamExecutionEnvironment, CatalogSettings, TableIdentifier,
     * TableMaintenanceOptions, String)}, with {@code moreTasks} added after the compaction, in
     * order, to the same graph and lock (each with its own triggers set by the caller).
     *
     * @param moreTasks further Iceberg maintenance tasks (e.g. {@code DeleteOrphanFiles})
     */
    public static void append(
            StreamExecutionEnvironment env,
            CatalogSettings catalog,
            TableIdentifier table,
            TableMaintenanceOptions options,
            String uidSuffix,
            List<? extends MaintenanceTaskBuilder<?>> moreTasks) {
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(catalog, "catalog");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(options, "options");
        if (!options.enabled()) {
            return;
        }
        TriggerLockFactory lock = lockFactory(catalog, table, options);
        RewriteDataFiles.Builder rewrite =
                RewriteDataFiles.builder()
                        .deleteFileThreshold(options.deleteFileThreshold())
                        .uidSuffix(uidSuffix)
                        .parallelism(1);
        if (options.commitCount() > 0) {
            rewrite.scheduleOnCommitCount(options.commitCount());
        }
        if (options.dataFileCount() > 0) {
            rewrite.scheduleOnDataFileCount(options.dataFileCount());
        }
        if (options.deleteFileCount() > 0) {
            rewrite.scheduleOnEqDeleteFileCount(options.deleteFileCount());
            rewrite.scheduleOnPosDeleteFileCount(options.deleteFileCount());
        }
        if (options.interval() != null) {
            rewrite.scheduleOnInterval(options.interval());
        }
        Duration lockCheck =
                options.rateLimit().compareTo(Duration.ofSeconds(30)) < 0
                        ? options.rateLimit()
                        : Duration.ofSeconds(30);
        try {
            TableMaintenance.Builder builder =
                    TableMaintenance.forTable(
                                    env,
                                    RewriteCommitGuard.guard(
                                            TableLoader.fromCatalog(catalog.loader(), table)),
                                    lock)
                            .uidSuffix(uidSuffix)
                            .rateLimit(options.rateLimit())
                            .lockCheckDelay(lockCheck)
                            .parallelism(1)
                            .add(rewrite);
            for (MaintenanceTaskBuilder<?> task : moreTasks) {
                builder.add(task);
            }
            builder.append();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot add the maintenance of " + table + " to the job", e);
        }
    }

    /**
     * The lock of {@code table}: {@link JdbcLockFactory} on the options' URI, or on the embedded
     * SQLite file of a local warehouse, lock id {@code namespace.name}, wrapped so that losing the
     * race for the lock row counts as a held lock instead of failing the job ({@link
     * RaceTolerantLockFactory}); its lock table is created here if missing. Every graph that
     * maintains the table in a job takes this lock (compaction and orphan removal through {@link
     * TableMaintenance}, changeflow's in-job expiry directly).
     *
     * @throws IllegalArgumentException for the embedded default with a warehouse that is not local
     */
    public static TriggerLockFactory lockFactory(
            CatalogSettings catalog, TableIdentifier table, TableMaintenanceOptions options) {
        String uri = options.lockJdbcUri();
        Map<String, String> props = new HashMap<>();
        if (uri == null) {
            Path warehouse = localWarehouse(catalog);
            if (warehouse == null) {
                throw new IllegalArgumentException(
                        "in-job maintenance of "
                                + table
                                + " needs a lock shared by every job that maintains it: the"
                                + " embedded SQLite lock works only for a local warehouse folder,"
                                + " and the warehouse of catalog '"
                                + catalog.name()
                                + "' is '"
                                + catalog.properties().get(CatalogProperties.WAREHOUSE_LOCATION)
                                + "'; set 'maintenance-lock-jdbc-uri' to a JDBC database"
                                + " (e.g. jdbc:postgresql://host/db)");
            }
            Path file = warehouse.resolve(TableMaintenanceOptions.EMBEDDED_LOCK_FILE);
            try {
                Files.createDirectories(file.getParent());
            } catch (IOException e) {
                throw new UncheckedIOException(
                        "cannot create the folder of the maintenance lock " + file, e);
            }
            uri = "jdbc:sqlite:" + file.toAbsolutePath();
        }
        if (uri.startsWith("jdbc:sqlite:")) {
            props.putAll(SQLITE_PROPERTIES);
        }
        String lockId = table.toString();
        // create the lock table once, here on the client, so no two tasks race to create it
        Map<String, String> init = new HashMap<>(props);
        init.put(JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY, "true");
        JdbcLockFactory creator = new JdbcLockFactory(uri, lockId, init);
        try {
            creator.open();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "cannot open the maintenance lock database " + uri + " for " + table, e);
        }
        try {
            creator.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new RaceTolerantLockFactory(new JdbcLockFactory(uri, lockId, props), lockId);
    }

    /**
     * Whether {@code options} turn maintenance on with the embedded default lock (no {@code
     * maintenance-lock-jdbc-uri}) while the catalog's warehouse is not a local folder — the case
     * {@link #lockFactory} refuses. A job that writes to its tables before its maintenance graph is
     * built (the Gold SQL jobs empty their tables on a start without state) checks this first, so
     * the refusal comes before anything is created or committed.
     */
    public static boolean lacksSharedLock(
            CatalogSettings catalog, TableMaintenanceOptions options) {
        return options.enabled()
                && options.lockJdbcUri() == null
                && localWarehouse(catalog) == null;
    }

    /** The catalog's warehouse as a local folder, or null when it is not one. */
    static Path localWarehouse(CatalogSettings catalog) {
        String w = catalog.properties().get(CatalogProperties.WAREHOUSE_LOCATION);
        if (w == null || w.isBlank()) {
            return null;
        }
        if (w.toLowerCase(Locale.ROOT).startsWith("file:")) {
            return Path.of(URI.create(w));
        }
        if (w.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
            return null;
        }
        return Path.of(w).toAbsolutePath();
    }
}

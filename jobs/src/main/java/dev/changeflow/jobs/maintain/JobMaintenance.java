package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.MaintenanceTaskBuilder;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The one entry point that adds a table's in-job maintenance to a job — the ingest job (change
 * records, change feeds), the snapshot job and the Gold jobs all call {@link #append}
 * (docs/semantics.md M1, M2).
 *
 * <p>With {@link TableMaintenanceOptions#enabled()} it adds:
 *
 * <ul>
 *   <li>Iceberg's Flink {@code TableMaintenance} graph ({@link InJobMaintenance}): compaction
 *       ({@code RewriteDataFiles}) and, when {@link TableMaintenanceOptions#orphansOn()}, Iceberg's
 *       {@code DeleteOrphanFiles} task as {@link OrphanFileRemoval#task} builds it for the one-off
 *       command (data folder only, files older than {@code orphans-older-than}), triggered every
 *       {@code orphans-interval}; both under the table's lock ({@link
 *       InJobMaintenance#lockFactory}), uids ending in {@code <uidSuffix>} and {@code
 *       orphans-<uidSuffix>} (every uid ends in {@code <uidSuffix>}, so a restore that no longer
 *       has them can name them);
 *   <li>when {@link TableMaintenanceOptions#expiryGraphOn()}, changeflow's expiry graph: a
 *       checkpointed tick source (Flink's {@link DataGeneratorSource}, one tick per {@code
 *       expire-interval} through a {@link RateLimiterStrategy}, uid {@code
 *       expiry-ticks-<uidSuffix>}) feeding {@link InJobExpiryFunction} (uid {@code
 *       expiry-<uidSuffix>}), which takes the same lock, runs the consumer-aware {@link
 *       ChangeFeedExpiry} and rewrites the manifests when there are too many, every {@code
 *       expire-interval}; the source ticks every {@code rate-limit} when that is shorter, and a
 *       tick in between only removes the delete files a compaction committed since the previous
 *       tick left dangling ({@link InJobExpiryFunction}, "After a compaction"); all at parallelism
 *       1, its lines discarded after logging.
 * </ul>
 *
 * <p>Iceberg's own in-job {@code ExpireSnapshots} task is not used: it knows neither the
 * change-feed consumers (F7) nor the Flink committer rule (F7, M2), and its builder's hooks are
 * package-private, so the expiry runs in a graph of its own that shares the lock instead.
 *
 * <p>A job with in-job maintenance never finishes by itself (Iceberg's monitor source is
 * unbounded).
 */
@PublicEvolving
public final class JobMaintenance {
    private JobMaintenance() {}

    /**
     * Adds {@code table}'s maintenance to {@code env}; does nothing when {@code options} are off.
     *
     * @param uidSuffix stable base of the operators' uids, e.g. {@code maintenance-<flow>}; the
     *     uids end in {@link #uidSuffix(String, TableMaintenanceOptions)} of it
     * @throws IllegalArgumentException as {@link InJobMaintenance#append} (embedded lock on a
     *     warehouse that is not local)
     * @throws UncheckedIOException when the table cannot be loaded or the lock database opened
     */
    public static void append(
            StreamExecutionEnvironment env,
            CatalogSettings catalog,
            TableIdentifier table,
            TableMaintenanceOptions options,
            String uidSuffix) {
        Objects.requireNonNull(options, "options");
        if (!options.enabled()) {
            return;
        }
        uidSuffix = uidSuffix(uidSuffix, options);
        List<MaintenanceTaskBuilder<?>> more = new ArrayList<>();
        if (options.orphansOn()) {
            more.add(
                    OrphanFileRemoval.task(load(catalog, table), options.orphansOlderThan())
                            .scheduleOnInterval(options.orphansInterval())
                            .uidSuffix("orphans-" + uidSuffix)
                            .parallelism(1));
        }
        InJobMaintenance.append(env, catalog, table, options, uidSuffix, more);
        if (!options.expiryGraphOn()) {
            return;
        }
        Duration interval = options.expireInterval();
        // ticks at least once per rate limit, so the delete files a compaction leaves dangling go
        // soon after it (a tick between full runs only looks for a new compaction)
        Duration tick =
                options.rateLimit().compareTo(interval) < 0 ? options.rateLimit() : interval;
        double perSecond = 1000.0 / tick.toMillis();
        DataGeneratorSource<Long> ticks =
                new DataGeneratorSource<>(
                        index -> index,
                        Long.MAX_VALUE,
                        RateLimiterStrategy.perSecond(perSecond),
                        Types.LONG);
        Duration firstRunDelay =
                tick.compareTo(Duration.ofSeconds(30)) < 0 ? tick : Duration.ofSeconds(30);
        env.fromSource(ticks, WatermarkStrategy.noWatermarks(), "expiry ticks " + table)
                .uid("expiry-ticks-" + uidSuffix)
                .setParallelism(1)
                .process(
                        new InJobExpiryFunction(
                                TableLoader.fromCatalog(catalog.loader(), table),
                                InJobMaintenance.lockFactory(catalog, table, options),
                                options.expireOlderThan(),
                                options.retainLast(),
                                options.manifestCount(),
                                ChangeFeedExpiry.DEFAULT_CONSUMER_EXPIRY,
                                firstRunDelay,
                                tick.equals(interval) ? Duration.ZERO : interval),
                        Types.STRING)
                .uid("expiry-" + uidSuffix)
                .name("expiry " + table)
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .uid("expiry-discard-" + uidSuffix)
                .name("expiry lines " + table)
                .setParallelism(1);
    }

    /**
     * The suffix every operator uid of a table's maintenance graph ends in: {@code base} (e.g.
     * {@code maintenance-<flow>}) when the graph only compacts, else {@code base@<tasks>}, where
     * {@code <tasks>} names the graph's task set: {@code r} (compaction), then {@code o} (orphan
     * removal) and {@code e} (expiry and manifest rewrite) when on — e.g. {@code
     * maintenance-orders@roe}.
     *
     * <p>Why: Iceberg's trigger manager keeps one list entry per task in its state, so a state
     * saved by a graph with other tasks cannot be restored into this one (an index out of bounds,
     * then a restart loop). A graph with another task set has other uids, so a restore leaves the
     * old graph's state unclaimed and the triggers start counting afresh (see {@code LocalIngest},
     * which drops such state with a note; on a cluster, restore with Flink's {@code
     * execution.state-recovery.ignore-unclaimed-state}). A compaction-only graph keeps {@code base}
     * so that state saved before orphan removal and expiry existed restores unchanged.
     *
     * @return null when {@code options} are off (no graph)
     */
    public static String uidSuffix(String base, TableMaintenanceOptions options) {
        if (!options.enabled()) {
            return null;
        }
        String tasks =
                "r" + (options.orphansOn() ? "o" : "") + (options.expiryGraphOn() ? "e" : "");
        return tasks.equals("r") ? base : base + "@" + tasks;
    }

    private static Table load(CatalogSettings settings, TableIdentifier table) {
        Catalog catalog = settings.open();
        try {
            return catalog.loadTable(table);
        } finally {
            if (catalog instanceof Closeable c) {
                try {
                    c.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }
}

package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.operators.SnapshotSequencer;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.snapshots.IcebergSnapshots;
import dev.changeflow.sources.snapshots.SnapshotFileNames;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.Catalog;

import java.io.Closeable;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Runs the AUTO CDC FROM SNAPSHOT flows of a flows file (docs/semantics.md A6) on a local
 * MiniCluster, like {@link LocalIngest} runs change-record flows: RocksDB with incremental
 * checkpoints under {@code <warehouse>/.changeflow/checkpoints/<name>}, resuming from the latest
 * retained checkpoint or savepoint there. It reads every snapshot file up to the newest version in
 * each flow's folder at launch (files read by earlier runs are known to the restored source and not
 * read again) — for a {@code from-snapshot-table} flow, every version of the source table up to its
 * current one at launch, or only that one with {@code snapshot-versions: latest} (a run without a
 * new version applies nothing) — then stops with a savepoint and prints a summary: snapshots
 * applied, snapshots skipped because they were not newer than the applied one (each named by its
 * file), rows per table.
 *
 * <p>Local folders only; a flows file holds either snapshot flows or change-record flows.
 */
public final class LocalSnapshotIngest {
    /** How often the snapshot folders are scanned while the job runs. */
    static final Duration MONITOR_INTERVAL = Duration.ofMillis(200);

    /** What a run did. */
    public static final class Summary {
        /** Snapshots applied by this run. */
        public long applied;

        /** Snapshots skipped by this run: not newer than the applied one (A6). */
        public long skipped;

        /**
         * The snapshots skipped by this run, named: per flow with a skipped snapshot, {@code
         * <flow>: snapshot <version> (file <path>)}, several joined by {@code "; "}.
         */
        public final List<String> skippedNames = new ArrayList<>();

        /** Live rows per table after the run. */
        public final Map<String, Long> rows = new TreeMap<>();

        public boolean nothingToDo;
        public String savepoint;
    }

    private LocalSnapshotIngest() {}

    /** Whether {@code config} holds snapshot flows; mixed with change-record flows is an error. */
    public static boolean isSnapshotConfig(IngestConfig config) {
        long snapshots = config.flows.stream().filter(FlowConfig::isFromSnapshot).count();
        if (snapshots > 0 && snapshots < config.flows.size()) {
            throw new IllegalArgumentException(
                    "a flows file holds either 'from-snapshot' flows or change-record flows; put"
                            + " them into two flows files (two jobs)");
        }
        return snapshots > 0;
    }

    /**
     * Runs every flow of {@code config} (each with {@code from-snapshot}).
     *
     * @throws dev.changeflow.operators.AutoCdcException STATE_MISSING_FOR_EXISTING_TABLE (K8),
     *     TARGET_SCHEMA_MISMATCH (A1), an A6 code of a snapshot that cannot be applied
     * @throws Exception when the job fails (the cause is Flink's)
     */
    public static Summary run(IngestConfig config, LocalIngest.Options o) throws Exception {
        String namespace =
                config.namespace != null ? config.namespace : IngestPlanner.DEFAULT_NAMESPACE;
        String name = config.name == null ? "ingest" : config.name;
        CatalogSettings catalog =
                config.catalog.isEmpty()
                        ? CatalogSettings.localHadoop(o.warehouse.toAbsolutePath())
                        : CatalogSettings.of("changeflow", config.catalog);
        Catalog cat = catalog.open();
        List<SnapshotJob.Plan> plans = new ArrayList<>();
        try {
            for (FlowConfig f : config.flows) {
                f.validate();
                plans.add(SnapshotJob.plan(f, namespace, cat));
            }
        } catch (RuntimeException e) {
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
            throw e;
        }
        LocalCheckpoints checkpoints = new LocalCheckpoints(LocalIngest.stateLocation(name, o));
        Summary summary = new Summary();
        LocalJobState state = checkpoints.lockJobState(name, o.otherNameFix);
        try {
            if (o.fromScratch) {
                for (SnapshotJob.Plan p : plans) {
                    StreamingTables.dropIfExists(cat, p.target);
                }
                checkpoints.delete();
                state.clear();
            }
            List<String> written = new ArrayList<>();
            plans.forEach(p -> written.add(p.target.toString()));
            state.saveTables(written); // S9: found by a DROP TABLE of any file
            Optional<org.apache.flink.core.fs.Path> restore = checkpoints.latest();
            state.checkSnapshotDefinitions(name, plans, restore.isPresent(), o.rebuildFix); // K8
            if (restore.isEmpty()) {
                for (SnapshotJob.Plan p : plans) {
                    if (cat.tableExists(p.target)) {
                        StreamingTables.checkStartWithoutState(
                                cat.loadTable(p.target),
                                p.target.toString(),
                                "no checkpoint or savepoint of '"
                                        + name
                                        + "' exists under "
                                        + checkpoints.display(),
                                LocalIngest.stateOfOtherJob(checkpoints, p.target, o.sameJobFix)
                                        + "Re-run with --from-scratch to recreate the tables, or"
                                        + " restore the checkpoint folder.");
                    }
                }
            }
            Map<String, Long> newest = new LinkedHashMap<>();
            for (SnapshotJob.Plan p : plans) {
                SnapshotJob.ensureTable(cat, p);
                if (p.sourceTable != null) {
                    long version = IcebergSnapshots.newestVersion(cat.loadTable(p.sourceTable));
                    if (version >= 0) {
                        newest.put(p.spec.name(), version);
                    }
                    continue;
                }
                TreeMap<Long, Path> files = SnapshotFileNames.list(Path.of(URI.create(p.folder)));
                if (!files.isEmpty()) {
                    newest.put(p.spec.name(), files.lastKey());
                }
            }
            if (newest.isEmpty()) {
                o.out.println(
                        "Nothing to ingest: no snapshot files in the flows' folders and no version"
                                + " in their snapshot tables.");
                summary.nothingToDo = true;
                return summary;
            }
            o.out.println(
                    "Applying snapshots of "
                            + plans.size()
                            + " flow(s) up to version(s) "
                            + newest
                            + (restore.isPresent()
                                    ? ", resuming from " + StateFiles.display(restore.get())
                                    : ", starting without state"));
            Configuration conf =
                    checkpoints.configuration(
                            config.checkpointInterval,
                            config.checkpointTimeout,
                            restore.orElse(null));
            conf.setString(LocalMetrics.CONFIG_KEY, LocalMetrics.Factory.class.getName());
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(config.parallelism);
            for (SnapshotJob.Plan p : plans) {
                SnapshotJob.build(env, p, catalog, MONITOR_INTERVAL);
            }
            LocalMetrics.reset();
            LocalRunner.execute(
                    env,
                    "changeflow snapshots " + name,
                    job -> summary.savepoint = watch(job, newest, checkpoints));
            summary.applied = LocalMetrics.sum("snapshots");
            summary.skipped = LocalMetrics.sum("skippedSnapshots");
            for (SnapshotJob.Plan p : plans) {
                for (String names :
                        LocalMetrics.texts(SnapshotSequencer.SKIPPED_GAUGE, p.spec.name())) {
                    summary.skippedNames.add(p.spec.name() + ": " + names);
                }
            }
            org.apache.flink.core.fs.Path savepoint = LocalIngest.savepointPath(summary.savepoint);
            state.markCommitted(savepoint);
            checkpoints.cleanUpOlderState(savepoint);
            o.out.printf(
                    "Done: %d snapshot(s) applied, %d skipped (not newer than the applied one, not"
                            + " applied). State saved in %s%n",
                    summary.applied, summary.skipped, summary.savepoint);
            for (String skipped : summary.skippedNames) {
                o.out.println("  skipped " + skipped);
            }
            for (SnapshotJob.Plan p : plans) {
                long rows = TableRows.count(cat.loadTable(p.target));
                summary.rows.put(p.target.toString(), rows);
                o.out.printf("  %-40s %,12d rows%n", p.target, rows);
            }
        } finally {
            state.close();
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
        }
        return summary;
    }

    /**
     * Waits until every flow applied the newest snapshot of its folder at launch, then stops the
     * job with a savepoint.
     *
     * @return the savepoint's path (a URI)
     */
    private static String watch(
            JobClient job, Map<String, Long> newest, LocalCheckpoints checkpoints)
            throws Exception {
        while (true) {
            if (LocalRunner.throwIfFailed(job)) {
                throw new IllegalStateException("the job finished before its snapshots were read");
            }
            boolean done = true;
            for (Map.Entry<String, Long> e : newest.entrySet()) {
                List<Long> applied =
                        LocalMetrics.values(SnapshotSequencer.LAST_APPLIED_GAUGE, e.getKey());
                done &= !applied.isEmpty() && applied.get(0) >= e.getValue();
            }
            if (done) {
                String savepoint =
                        LocalRunner.stopWithSavepoint(
                                job, checkpoints.savepointDir(job.getJobID()));
                LocalRunner.awaitEnd(job);
                return savepoint;
            }
            Thread.sleep(50);
        }
    }
}

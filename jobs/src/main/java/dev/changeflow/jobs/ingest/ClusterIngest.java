package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.changes.SchemaChangeException;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.catalog.Catalog;

import java.io.Closeable;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs an ingest job on the Flink cluster that executes the program (application mode on
 * Kubernetes, or {@code flink run}): creates the tables, builds the same topology as a local run
 * over Kafka, and executes it until it is stopped (with a savepoint, by the operator on upgrade).
 * Checkpointing, the state backend and restarts come from the cluster's Flink configuration ({@code
 * flinkConfiguration} of the FlinkDeployment); a cluster configured without a checkpoint interval
 * gets the job's own ({@code checkpoint-interval} of the flows or pipeline file, default 5 s),
 * since the tables commit on checkpoints. State recovery is Flink's (HA, savepoints), so the local
 * runner's checks on saved state do not apply here. It serves {@code ingest --cluster} (a flows
 * file) and {@code run --cluster FILE.sql} (a pipeline file's tables without SCHEDULE) alike.
 *
 * <p>{@code on-schema-change = add-columns}: the job fails (without restarts) at the first record
 * with new columns; this program then adds them to the tables and ends with the failure. The next
 * start (the Kubernetes operator redeploying a failed job with {@code
 * kubernetes.operator.job.restart.failed: true} and {@code upgradeMode: last-state}, or a manual
 * resubmission from the last checkpoint) plans with the added columns and reads the record again.
 */
public final class ClusterIngest {
    private ClusterIngest() {}

    /**
     * The execution environment of the Flink cluster that runs this program: the context
     * environment of application mode (the Kubernetes operator), of {@code flink run}, or of a test
     * cluster. Outside one ({@code bin/changeflow ... --cluster} as a plain program) Flink would
     * give a local MiniCluster, which would run the unbounded job in this process until it is
     * killed, so that is refused.
     *
     * @param command the command line, as the error names it (e.g. {@code run --cluster FILE.sql})
     * @throws IllegalArgumentException {@code INVALID_OPTION} outside a cluster, naming what runs
     *     the command (the FlinkDeployment of {@code deploy --print}, {@code flink run}) and the
     *     local alternative
     */
    public static StreamExecutionEnvironment clusterEnvironment(String command) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        if (env instanceof LocalStreamEnvironment) {
            throw new IllegalArgumentException(
                    "INVALID_OPTION: "
                            + command
                            + " runs on the Flink cluster that executes this program (the"
                            + " FlinkDeployment of deploy --print runs it in application mode, or"
                            + " flink run), until stopped; here there is none, and a local"
                            + " MiniCluster would run it until this process is killed: run it"
                            + " locally without --cluster (a bounded run up to the input present"
                            + " at launch)");
        }
        return env;
    }

    /**
     * @throws IllegalArgumentException when no Kafka input or no catalog is configured (a cluster
     *     has no local warehouse folder), or outside a cluster ({@link #clusterEnvironment})
     */
    public static void run(IngestPlan plan, KafkaInput kafka) throws Exception {
        run(plan, kafka, "ingest --cluster");
    }

    /**
     * As {@link #run(IngestPlan, KafkaInput)}; errors name {@code command}, the command line that
     * runs it ({@code ingest --cluster}, {@code run --cluster FILE.sql}).
     */
    public static void run(IngestPlan plan, KafkaInput kafka, String command) throws Exception {
        StreamExecutionEnvironment env = clusterEnvironment(command);
        if (plan.config.catalog.isEmpty()) {
            throw new IllegalArgumentException(
                    "--cluster needs an Iceberg catalog (--catalog type=rest --catalog uri=... or the flows file's catalog:)");
        }
        kafka.validate();
        CatalogSettings catalog = CatalogSettings.of("changeflow", plan.config.catalog);
        Catalog cat = catalog.open();
        try {
            plan = IngestPlanner.withAddedColumns(plan, cat);
            ensureTables(cat, plan);
        } finally {
            if (cat instanceof Closeable) {
                ((Closeable) cat).close();
            }
        }
        if (!env.getCheckpointConfig().isCheckpointingEnabled()) {
            // the Iceberg tables commit on checkpoints: without an interval in the cluster's
            // configuration (flink run on a cluster configured without one), the job's own
            env.enableCheckpointing(plan.config.checkpointInterval.toMillis());
        }
        // no end offsets: a cluster job runs until it is stopped
        IngestJob.buildKafka(
                env, plan, catalog, kafka, new KafkaProgressFunction(Map.of(), Map.of()));
        try {
            env.execute("changeflow ingest " + plan.config.name);
        } catch (Exception e) {
            Optional<SchemaChangeException> change =
                    ExceptionUtils.findThrowable(e, SchemaChangeException.class);
            if (change.isPresent()) {
                // add-columns: evolve the tables now; the job still ends failed, and the next start
                // of this program (e.g. the Kubernetes operator restarting a failed job from its
                // last state) plans with the new columns and resumes from the last checkpoint
                Catalog c = catalog.open();
                try {
                    AddColumns.apply(c, plan, change.get(), true);
                } finally {
                    if (c instanceof Closeable) {
                        ((Closeable) c).close();
                    }
                }
            }
            throw e;
        }
    }

    /**
     * Creates (or checks, A1) every target table and the namespace's quarantine table (public for
     * tests that run the topology of {@link IngestJob} on a cluster of their own).
     *
     * @throws dev.changeflow.operators.AutoCdcException TARGET_SCHEMA_MISMATCH when an existing
     *     table does not fit (A1)
     */
    public static void ensureTables(Catalog cat, IngestPlan plan) {
        for (IngestPlan.Flow f : plan.flows) {
            if (f.spec != null) {
                StreamingTables.ensureTable(
                        cat,
                        f.target,
                        f.spec.targetType(),
                        f.spec.identifierFields(),
                        f.tableOptions);
            } else {
                StreamingTables.ensureTable(
                        cat, f.target, f.appendType(), List.of(), f.tableOptions);
            }
        }
        QuarantineTable.ensure(cat, plan.quarantineNamespace);
    }

    /**
     * Checks the partitioning of the existing target table of {@code flow} as {@link #ensureTables}
     * would, writing nothing (a table without a snapshot is left to the run, which gives it the
     * definition's spec). A missing table passes. The table's schema is checked by the run, after
     * the saved state's definitions (a KEYS / SEQUENCE BY / SCD type change is {@code
     * FLOW_CHANGED_FOR_EXISTING_STATE}, whose fix names the full refresh).
     *
     * @throws dev.changeflow.operators.AutoCdcException TARGET_SCHEMA_MISMATCH naming both
     *     partitionings and the fix
     */
    public static void checkExistingPartitioning(Catalog cat, IngestPlan.Flow flow) {
        if (!cat.tableExists(flow.target)) {
            return;
        }
        StreamingTables.checkPartitioning(
                cat.loadTable(flow.target), flow.target, flow.tableOptions.partitionBy(), false);
    }

    /**
     * The schema and partitioning changes a full refresh (docs/semantics.md S1) makes to the
     * existing target table of {@code flow} (empty when the table is missing or matches).
     *
     * @throws dev.changeflow.operators.AutoCdcException TARGET_SCHEMA_MISMATCH naming a change the
     *     full refresh cannot apply in place
     */
    public static List<String> fullRefreshChanges(Catalog cat, IngestPlan.Flow flow) {
        if (!cat.tableExists(flow.target)) {
            return List.of();
        }
        return StreamingTables.fullRefreshChanges(
                cat.loadTable(flow.target),
                flow.target,
                flow.spec != null ? flow.spec.targetType() : flow.appendType(),
                flow.spec != null ? flow.spec.identifierFields() : List.of(),
                flow.tableOptions.partitionBy());
    }

    /**
     * Empties the existing target table of {@code flow} for a full refresh in one commit, with the
     * schema and partitioning changes of {@link #fullRefreshChanges} (S1); returns them.
     */
    public static List<String> emptyForFullRefresh(Catalog cat, IngestPlan.Flow flow) {
        return StreamingTables.emptyForFullRefresh(
                cat.loadTable(flow.target),
                flow.target,
                flow.spec != null ? flow.spec.targetType() : flow.appendType(),
                flow.spec != null ? flow.spec.identifierFields() : List.of(),
                flow.tableOptions.partitionBy());
    }
}

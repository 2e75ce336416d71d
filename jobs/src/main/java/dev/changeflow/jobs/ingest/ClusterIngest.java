package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.changes.SchemaChangeException;
import dev.changeflow.sources.kafka.KafkaInput;

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
 * flinkConfiguration} of the FlinkDeployment); state recovery is Flink's (HA, savepoints), so the
 * local runner's checks on saved state do not apply here.
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
     * @throws IllegalArgumentException when no Kafka input or no catalog is configured (a cluster
     *     has no local warehouse folder)
     */
    public static void run(IngestPlan plan, KafkaInput kafka) throws Exception {
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
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
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

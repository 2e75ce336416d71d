package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.Catalog;

import java.util.List;
import java.util.Map;

/**
 * Runs an ingest job on the Flink cluster that executes the program (application mode on
 * Kubernetes, or {@code flink run}): creates the tables, builds the same topology as a local run
 * over Kafka, and executes it until it is stopped (with a savepoint, by the operator on upgrade).
 * Checkpointing, the state backend and restarts come from the cluster's Flink configuration
 * ({@code flinkConfiguration} of the FlinkDeployment); state recovery is Flink's (HA, savepoints),
 * so the local runner's checks on saved state do not apply here.
 */
public final class ClusterIngest {
    private ClusterIngest() {}

    /**
     * @throws IllegalArgumentException when no Kafka input or no catalog is configured (a cluster has
     *     no local warehouse folder)
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
            ensureTables(cat, plan);
        } finally {
            if (cat instanceof java.io.Closeable) {
                ((java.io.Closeable) cat).close();
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        // no end offsets: a cluster job runs until it is stopped
        IngestJob.buildKafka(env, plan, catalog, kafka, new KafkaProgressFunction(Map.of(), Map.of()));
        env.execute("changeflow ingest " + plan.config.name);
    }

    /**
     * Creates (or checks, A1) every target table and the namespace's quarantine table (public for
     * tests that run the topology of {@link IngestJob} on a cluster of their own).
     *
     * @throws dev.changeflow.operators.AutoCdcException TARGET_SCHEMA_MISMATCH when an existing table does not fit (A1)
     */
    public static void ensureTables(Catalog cat, IngestPlan plan) {
        for (IngestPlan.Flow f : plan.flows) {
            if (f.spec != null) {
                StreamingTables.ensureTable(cat, f.target, f.spec.targetType(), f.spec.identifierFields(), f.tableOptions);
            } else {
                StreamingTables.ensureTable(cat, f.target, f.decoder.dataType(), List.of(), f.tableOptions);
            }
        }
        QuarantineTable.ensure(cat, plan.quarantineNamespace);
    }
}

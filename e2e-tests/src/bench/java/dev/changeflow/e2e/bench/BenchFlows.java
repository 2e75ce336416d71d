package dev.changeflow.e2e.bench;

import dev.changeflow.e2e.SharedData;
import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ScdType;

import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The two AUTO CDC flows the benchmark measures, planned by changeflow's own {@link IngestPlanner}
 * from {@code examples/pgbench-flows.yaml}: {@code pgbench_accounts} keyed by {@code aid},
 * sequenced by {@code source.lsn}, stored as SCD type 1 ({@code bench.pgbench_accounts}) or SCD
 * type 2 ({@code bench.pgbench_accounts_scd2}). The synthetic generator writes records of the same
 * table, so every input is decoded by the same decoder flow and replayed in the same row shape.
 */
final class BenchFlows {
    /** The pgbench table every input is about. */
    static final String TABLE = "pgbench_accounts";

    final IngestPlan.Flow scd1;
    final IngestPlan.Flow scd2;

    private BenchFlows(IngestPlan.Flow scd1, IngestPlan.Flow scd2) {
        this.scd1 = scd1;
        this.scd2 = scd2;
    }

    /**
     * Plans both flows.
     *
     * @param repositoryRoot the clone's root (holds {@code examples/pgbench-flows.yaml})
     * @throws IllegalStateException when the planned sequence column is not a BIGINT (the replay
     *     shifts it per round)
     */
    static BenchFlows plan(Path repositoryRoot) throws IOException {
        IngestConfig cfg =
                FlowsFile.read(repositoryRoot.resolve("examples").resolve("pgbench-flows.yaml"));
        cfg.namespace = "bench";
        cfg.flows.removeIf(f -> !TABLE.equals(f.table));
        FlowConfig accounts = cfg.flow(TABLE);
        FlowConfig scd2 = new FlowConfig();
        scd2.table = TABLE;
        scd2.target = TABLE + "_scd2";
        scd2.keys = accounts.keys;
        scd2.sequenceBy = accounts.sequenceBy;
        scd2.scdType = ScdType.TYPE_2;
        scd2.schema = accounts.schema;
        cfg.flows.add(scd2);
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        BenchFlows flows = new BenchFlows(plan.flows.get(0), plan.flows.get(1));
        AutoCdcSpec spec = flows.scd1.spec;
        if (spec.sequenceIndexesInSource().length != 1
                || spec.sourceType().getTypeAt(spec.sequenceIndexesInSource()[0]).getTypeRoot()
                        != LogicalTypeRoot.BIGINT) {
            throw new IllegalStateException(
                    "the benchmark shifts a single BIGINT sequence per round; flow "
                            + spec.name()
                            + " is sequenced by "
                            + spec.sequenceBy()
                            + " in "
                            + spec.sourceType());
        }
        return flows;
    }

    /** Row shape of every replayed record: the decoder's source type (data columns + metadata). */
    RowType sourceType() {
        return scd1.spec.sourceType();
    }

    /** Index of {@code source.lsn} in {@link #sourceType()}. */
    int sequenceIndex() {
        return scd1.spec.sequenceIndexesInSource()[0];
    }

    /** Index of {@code aid} in {@link #sourceType()}. */
    int keyIndex() {
        return scd1.spec.keyIndexesInSource()[0];
    }

    /**
     * Indexes in {@link #sourceType()} of the data columns {@code aid, bid, abalance, filler}, in
     * order.
     */
    int[] dataIndexes() {
        RowType data = scd1.decoder.dataType();
        int[] idx = new int[data.getFieldCount()];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = sourceType().getFieldIndex(data.getFieldNames().get(i));
        }
        return idx;
    }

    /**
     * {@code ../shared/data/pgbench-s1/<file>} beside the clone; fails naming the path when absent.
     */
    static Path sharedData(Path repositoryRoot, String file) {
        Path p =
                repositoryRoot
                        .resolveSibling("shared")
                        .resolve("data")
                        .resolve("pgbench-s1")
                        .resolve(file);
        if (!Files.exists(p)) {
            throw new IllegalStateException(
                    "the benchmark needs the recorded capture "
                            + p
                            + " (../shared/data/pgbench-s1 beside the clone)");
        }
        return p;
    }

    /** The clone's root ({@link dev.changeflow.e2e.SharedData#repositoryRoot()}). */
    static Path repositoryRoot() {
        return SharedData.repositoryRoot();
    }
}

package dev.changeflow.e2e;

import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * K4: an Iceberg commit that fails after its checkpoint completed makes the job fail over; the
 * restored committer then commits that checkpoint's files together with the next one — and the
 * tables still equal PostgreSQL's, with no duplicate key.
 */
class CommitFailureITCase {
    @TempDir Path tmp;

    @Test
    void checkpointsCommittedTogetherAfterARestartLeaveNoDuplicateKeys() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        Path warehouse = tmp.resolve("warehouse");
        IngestConfig cfg = PgbenchCaptureITCase.config();
        cfg.catalog.put("catalog-impl", FailingCommitCatalog.class.getName());
        cfg.catalog.put("warehouse", warehouse.toAbsolutePath().toString());
        cfg.checkpointInterval = Duration.ofMillis(500);
        IngestPlan plan = IngestPlanner.plan(cfg, List.of(capture));
        FailingCommitCatalog.failNextCommits("pgbench_accounts", 1);
        PgbenchCaptureITCase.run(plan, List.of(capture), warehouse, false);
        assertThat(FailingCommitCatalog.failed()).isEqualTo(1);
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
    }
}

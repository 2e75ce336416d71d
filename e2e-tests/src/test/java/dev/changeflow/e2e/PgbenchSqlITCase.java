package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code changeflow run examples/pgbench.sql} (the pgbench pipeline as streaming-table statements,
 * reading the recorded capture in {@code ../shared/data/pgbench-s1}) in-process: a dry run writes
 * nothing, the run gives tables equal to PostgreSQL's final tables exactly, as the flows file does
 * ({@link PgbenchCaptureITCase}); docs/semantics.md S1, S2.
 */
class PgbenchSqlITCase {
    @TempDir Path tmp;

    @Test
    void pgbenchSqlPipelineEqualsPostgres() throws Exception {
        SharedData.pgbenchCapture();
        Path pipeline = SharedData.repositoryRoot().resolve("examples").resolve("pgbench.sql");
        Path warehouse = tmp.resolve("warehouse");

        String dry =
                run("run", "--dry-run", "--warehouse", warehouse.toString(), pipeline.toString());
        assertThat(dry)
                .contains(
                        "  public.pgbench_accounts <- table pgbench_accounts: AUTO CDC KEYS (aid)"
                                + " SEQUENCE BY source.lsn STORED AS SCD TYPE 1 (aid INT, bid INT,"
                                + " abalance INT, filler STRING)\n")
                .contains(
                        "  public.pgbench_history <- table pgbench_history: append-only (tid INT,"
                                + " bid INT, aid INT, delta INT, mtime TIMESTAMP(6), filler STRING)\n")
                .endsWith("Dry run: no table or state was written.\n");
        assertThat(warehouse).doesNotExist();

        long start = System.nanoTime();
        String out = run("run", "--warehouse", warehouse.toString(), pipeline.toString());
        System.out.printf(
                "changeflow run examples/pgbench.sql took %.1f s%n",
                (System.nanoTime() - start) / 1e9);
        assertThat(out).contains("quarantined 0");
        PgbenchCaptureITCase.assertTablesEqualOracle(warehouse);
        assertThat(
                        TableRows.read(
                                CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                                        .open()
                                        .loadTable(
                                                TableIdentifier.parse(
                                                        "public.changeflow_quarantine"))))
                .isEmpty();
    }

    /** Runs the command line in-process; returns what it printed, after checking exit code 0. */
    private static String run(String... args) {
        PrintStream stdout = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
            code = Main.execute(args);
        } finally {
            System.setOut(stdout);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        assertThat(code).as("exit code of changeflow " + String.join(" ", args)).isZero();
        return out;
    }
}

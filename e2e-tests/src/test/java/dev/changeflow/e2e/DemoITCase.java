package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's main command, {@code changeflow demo}, on a small generated workload: it must ingest
 * the duplicated, shuffled TPC-B events into SCD1/SCD2/append-only tables that equal the
 * generator's truth, and say so; a second run (from scratch) gives the same answer.
 */
class DemoITCase {
    @TempDir Path tmp;

    @Test
    void demoTablesMatchTheGeneratorsTruth() {
        PrintStream stdout = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
            code =
                    Main.execute(
                            "demo",
                            "--warehouse",
                            tmp.resolve("warehouse").toString(),
                            "--accounts",
                            "500",
                            "--transactions",
                            "3000",
                            "--seed",
                            "7");
        } finally {
            System.setOut(stdout);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        assertThat(out)
                .contains("demo.pgbench_accounts            OK")
                .contains("demo.pgbench_branches            OK")
                .contains("demo.pgbench_tellers             OK")
                .contains("demo.pgbench_accounts_scd2       OK")
                .contains("demo.pgbench_history             OK")
                .contains("All tables match.");
        assertThat(code).isZero();
    }
}

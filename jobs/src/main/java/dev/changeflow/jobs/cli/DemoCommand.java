package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.demo.DemoCheck;
import dev.changeflow.jobs.demo.TpcbGenerator;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.operators.ScdType;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow demo}: generates TPC-B-like Debezium change events with imperfect delivery
 * (duplicates, out-of-order, deletes and re-inserts; {@link TpcbGenerator}), ingests them with the
 * same job as {@code ingest} into SCD type 1 tables, an SCD type 2 history of the accounts and an
 * append-only history table under {@code ./warehouse}, and checks every table against the
 * generator's truth. Exit code 0 when all tables match, 1 otherwise.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description =
                "Generate TPC-B-like Debezium events, ingest them into SCD1/SCD2 tables, and check the result.")
public final class DemoCommand implements Callable<Integer> {
    @Mixin CliOptions.Warehouse local;

    @Option(
            names = "--seed",
            defaultValue = "42",
            description = "Generator seed. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(
            names = "--accounts",
            defaultValue = "10000",
            description = "Accounts per branch. Default: ${DEFAULT-VALUE}.")
    int accounts;

    @Option(
            names = "--branches",
            defaultValue = "2",
            description = "Branches. Default: ${DEFAULT-VALUE}.")
    int branches;

    @Option(
            names = "--transactions",
            defaultValue = "20000",
            description = "Transactions. Default: ${DEFAULT-VALUE}.")
    int transactions;

    @Override
    public Integer call() throws Exception {
        Path events =
                local.warehouse
                        .resolve(".changeflow")
                        .resolve("demo")
                        .resolve("tpcb-events.jsonl.gz");
        TpcbGenerator gen = new TpcbGenerator(seed, branches, 10, accounts, transactions);
        gen.write(events);
        System.out.printf(
                "Generated %,d Debezium events (%,d delivered twice, %,d deletes, shuffled in windows of %d) in %s%n",
                gen.events, gen.duplicates, gen.deletes, TpcbGenerator.SHUFFLE_WINDOW, events);

        IngestConfig cfg = new IngestConfig();
        cfg.name = "demo";
        cfg.namespace = "demo";
        cfg.flows.add(flow("pgbench_accounts", null, ScdType.TYPE_1, "aid"));
        cfg.flows.add(flow("pgbench_accounts", "pgbench_accounts_scd2", ScdType.TYPE_2, "aid"));
        cfg.flows.add(flow("pgbench_branches", null, ScdType.TYPE_1, "bid"));
        cfg.flows.add(flow("pgbench_tellers", null, ScdType.TYPE_1, "tid"));
        FlowConfig history = new FlowConfig();
        history.table = "pgbench_history";
        history.appendOnly = true;
        cfg.flows.add(history);

        IngestPlan plan = IngestPlanner.plan(cfg, List.of(events));
        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = local.warehouse;
        o.fromScratch = true;
        LocalIngest.run(plan, List.of(events), o);

        Map<String, List<String>> diffs = new LinkedHashMap<>();
        Catalog cat = LocalIngest.catalog(plan, local.warehouse).open();
        diffs.put(
                "demo.pgbench_accounts",
                DemoCheck.compareKeyed(
                        cat.loadTable(TableIdentifier.of("demo", "pgbench_accounts")),
                        gen.finalRows.get("pgbench_accounts")));
        diffs.put(
                "demo.pgbench_branches",
                DemoCheck.compareKeyed(
                        cat.loadTable(TableIdentifier.of("demo", "pgbench_branches")),
                        gen.finalRows.get("pgbench_branches")));
        diffs.put(
                "demo.pgbench_tellers",
                DemoCheck.compareKeyed(
                        cat.loadTable(TableIdentifier.of("demo", "pgbench_tellers")),
                        gen.finalRows.get("pgbench_tellers")));
        diffs.put(
                "demo.pgbench_accounts_scd2",
                DemoCheck.compareMultiset(
                        cat.loadTable(TableIdentifier.of("demo", "pgbench_accounts_scd2")),
                        gen.accountVersions));
        diffs.put(
                "demo.pgbench_history",
                DemoCheck.compareMultiset(
                        cat.loadTable(TableIdentifier.of("demo", "pgbench_history")), gen.history));
        boolean ok = true;
        System.out.println("Check against the generator's truth:");
        for (Map.Entry<String, List<String>> e : diffs.entrySet()) {
            boolean same = e.getValue().isEmpty();
            ok &= same;
            System.out.printf(
                    "  %-32s %s%n",
                    e.getKey(),
                    same
                            ? "OK"
                            : "DIFFERENT ("
                                    + e.getValue().size()
                                    + ")"
                                    + describeShort(e.getValue()));
        }
        System.out.println(
                ok
                        ? "All tables match. Look at them with: bin/changeflow show demo.pgbench_accounts_scd2"
                        : "Some tables differ from the truth (see above).");
        return ok ? 0 : 1;
    }

    private static String describeShort(List<String> d) {
        StringBuilder b = new StringBuilder();
        d.stream().limit(5).forEach(x -> b.append("\n      ").append(x));
        return b.toString();
    }

    private static FlowConfig flow(String table, String target, ScdType type, String key) {
        FlowConfig f = new FlowConfig();
        f.table = table;
        f.target = target;
        f.scdType = type;
        f.keys = List.of(key);
        return f;
    }
}

package dev.changeflow.e2e;

import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.util.SnapshotUtil;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The shared set-up of the in-job maintenance ITCases ({@link InJobMaintenanceITCase}, {@link
 * InJobExpiryITCase}; docs/semantics.md M1, M2): the recorded pgbench capture's changes of the
 * accounts with aid up to a bound, replayed by {@link PacedCaptureLines} in 10 batches (one per
 * completed checkpoint) into {@code public.pgbench_accounts} from a one-flow flows file, and the
 * readers their checks use.
 */
final class PacedAccountsIngest {
    /** The target table. */
    static final TableIdentifier ACCOUNTS = TableIdentifier.of("public", "pgbench_accounts");

    /** The compaction options both runs with maintenance use: low thresholds, ≤ 1 per 300 ms. */
    static final List<String> COMPACTION_OPTIONS =
            List.of(
                    "    maintenance: true",
                    "    maintenance-commit-count: 2",
                    "    maintenance-data-file-count: 0",
                    "    maintenance-delete-file-count: 2",
                    "    maintenance-interval: 0",
                    "    maintenance-rate-limit: 300ms");

    private static final String ACCOUNTS_TOPIC = "\"topic\":\"pgbench.public.pgbench_accounts\"";
    private static final String KEY_PREFIX = "{\"key\":{\"aid\":";

    private PacedAccountsIngest() {}

    /**
     * A flows file named {@code name} with the one Debezium JSON flow into {@code
     * public.pgbench_accounts} (keys {@code aid}), and {@code options} then {@code moreOptions}
     * (flows-file lines, indented as the flow's entries) added to it.
     */
    static String flows(String name, List<String> options, String... moreOptions) {
        List<String> lines =
                new ArrayList<>(
                        List.of(
                                "name: " + name,
                                "format: debezium-json",
                                "namespace: public",
                                "flows:",
                                "  - table: pgbench_accounts",
                                "    keys: [aid]",
                                "    schema: 'aid INT, bid INT, abalance INT, filler STRING'"));
        lines.addAll(options);
        lines.addAll(List.of(moreOptions));
        return String.join("\n", lines);
    }

    /**
     * Whether a capture line is a change (or tombstone) of an account with aid ≤ {@code maxAid}.
     */
    static PacedCaptureLines.SerializablePredicate accountsUpTo(int maxAid) {
        return line -> {
            if (!line.contains(ACCOUNTS_TOPIC) || !line.startsWith(KEY_PREFIX)) {
                return false;
            }
            int end = line.indexOf('}', KEY_PREFIX.length());
            return Integer.parseInt(line.substring(KEY_PREFIX.length(), end)) <= maxAid;
        };
    }

    /**
     * Batches as line indexes of the capture (see {@link ChangeFeedDifferentialITCase}): the
     * accounts' snapshot, 10,000 pgbench transactions in 4, then the deletes, re-inserts and
     * updates in 5.
     */
    static int[] batchBounds() {
        return new int[] {
            0, 100_011, 110_011, 120_011, 130_011, 140_011, 140_611, 141_061, 141_111, 141_311,
            141_511
        };
    }

    /** PostgreSQL's final accounts with aid ≤ {@code maxAid}, as CSV lines in the file's order. */
    static List<String> finalAccounts(int maxAid) throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : SharedData.finalCsv("pgbench_accounts")) {
            if (Integer.parseInt(line.substring(0, line.indexOf(','))) <= maxAid) {
                out.add(line);
            }
        }
        return out;
    }

    /** Creates the plan's (one) target table and its quarantine table in {@code catalog}. */
    static void createTables(Catalog catalog, IngestPlan plan) {
        IngestPlan.Flow flow = plan.flows.get(0);
        StreamingTables.ensureTable(
                catalog,
                flow.target,
                flow.spec.targetType(),
                flow.spec.identifierFields(),
                flow.tableOptions);
        QuarantineTable.ensure(catalog, plan.quarantineNamespace);
    }

    /** A job configuration: checkpoints under {@code checkpoints}, no restarts. */
    static Configuration jobConfiguration(Path checkpoints) {
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        return conf;
    }

    /** An environment on {@code conf}: parallelism 1, a checkpoint every 100 ms. */
    static StreamExecutionEnvironment environment(Configuration conf) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.enableCheckpointing(100);
        return env;
    }

    /** {@code main}'s snapshots, oldest first (after a refresh); empty without snapshot. */
    static List<Snapshot> ancestry(Table t) {
        t.refresh();
        if (t.currentSnapshot() == null) {
            return List.of();
        }
        List<Snapshot> out = new ArrayList<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(t)) {
            out.add(s);
        }
        Collections.reverse(out);
        return out;
    }

    /** The table's live rows (after a refresh) as CSV lines, sorted by key. */
    static List<String> rows(Table t) {
        t.refresh();
        List<String> out = new ArrayList<>();
        for (Record r : TableRows.read(t)) {
            out.add(TableRows.toCsvLine(r));
        }
        return PgbenchCaptureITCase.sortedByKey(out);
    }
}

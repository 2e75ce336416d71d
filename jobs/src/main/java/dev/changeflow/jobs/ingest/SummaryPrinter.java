package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The lines a local ingest run prints at its end ({@link LocalIngest}): the totals of the run, and
 * per target table (and the quarantine table) its rows, snapshots, AUTO CDC state and location.
 * Tests and the README quote these lines: keep them as they are.
 */
final class SummaryPrinter {
    private SummaryPrinter() {}

    /**
     * {@code Done in 2.1 s: 1,000 records (900/s while running), applied ..., late ..., quarantined
     * .... State saved in <savepoint>}, then {@code expectation <table>.<name>: N violated} per
     * expectation of the plan (S8).
     */
    static void done(LocalIngest.Summary summary, PrintStream out) {
        out.printf(
                "Done in %.1f s: %,d records (%,.0f/s while running), applied %,d, late %,d, quarantined %,d. State saved in %s%n",
                summary.seconds,
                summary.records,
                summary.records / Math.max(summary.runSeconds, 1e-9),
                summary.applied,
                summary.late,
                summary.quarantined,
                summary.savepoint);
        // S8: one line per expectation, after the totals
        summary.expectations.forEach(
                (name, n) -> out.printf("expectation %s: %,d violated%n", name, n));
    }

    /**
     * Prints {@code Tables:} and a line per table of the plan and the quarantine table, and fills
     * {@link LocalIngest.Summary#tables}, {@link LocalIngest.Summary#rows} and {@link
     * LocalIngest.Summary#stateBytes}.
     *
     * @param savepoint the state the tables are at (its AUTO CDC state sizes are printed), null for
     *     none
     * @throws IOException when the savepoint's metadata cannot be read
     */
    static void tables(
            Catalog cat,
            IngestPlan plan,
            LocalIngest.Summary summary,
            PrintStream out,
            @Nullable org.apache.flink.core.fs.Path savepoint)
            throws IOException {
        Map<String, Long> stateBytes =
                savepoint == null ? Map.of() : LocalCheckpoints.stateSizes(savepoint);
        out.println("Tables:");
        List<TableIdentifier> ids = new ArrayList<>();
        plan.flows.forEach(f -> ids.add(f.target));
        ids.add(QuarantineTable.identifier(plan.quarantineNamespace));
        for (TableIdentifier id : ids) {
            Table t = cat.loadTable(id);
            long snapshots = 0;
            for (Snapshot ignored : t.snapshots()) {
                snapshots++;
            }
            long rows = TableRows.count(t);
            String state = "";
            for (IngestPlan.Flow f : plan.flows) {
                Long bytes =
                        f.target.equals(id) && f.spec != null
                                ? stateBytes.get("auto-cdc-" + f.name())
                                : null;
                if (bytes != null) {
                    state = String.format("  state %,d bytes", bytes);
                    summary.stateBytes.put(id.toString(), bytes);
                }
            }
            out.println(
                    String.format(
                            "  %-40s %,10d rows  %4d snapshots%s  %s",
                            id, rows, snapshots, state, t.location()));
            summary.tables.add(id.toString());
            summary.rows.put(id.toString(), rows);
        }
    }
}

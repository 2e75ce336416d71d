package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.flow.ReplaceWhereRefresh;
import dev.changeflow.jobs.sql.SqlPipeline;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.jobs.sql.TableStatements;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import javax.annotation.Nullable;

import java.io.PrintStream;
import java.util.List;

/**
 * One refresh of a REPLACE WHERE table (docs/semantics.md S4) as {@code run FILE.sql} and {@code
 * ingest --flows FILE.yaml} run it: {@link ReplaceWhereRefresh#refresh} (one Flink batch job, at
 * most one Iceberg commit), one line saying what it replaced, and the refresh recorded in the
 * table's properties at its end, also when it fails (S9, {@link TableStatements.RefreshRecord}).
 */
final class ReplaceWhereStep {
    private ReplaceWhereStep() {}

    /**
     * Runs the refresh of {@code table}, or with {@code dryRun} only checks it ({@link
     * ReplaceWhereRefresh#check}: the query, the predicate, the columns) and prints what it would
     * do.
     *
     * <p>Printed: {@code REPLACE WHERE <predicate> into <ns.table>: <d> rows deleted, <i> inserted
     * in snapshot <id>}, or {@code ... (nothing changed, no commit)}; {@code d} counts distinct
     * rows deleted (each an equality delete removing every copy), {@code i} the rows appended.
     *
     * @param where a predicate replacing the table's own for this refresh (a backfill); null: the
     *     table's
     * @param whereAt where {@code where} is written (errors about it point there)
     * @param parallelism the batch job's parallelism; 0: Flink's default
     * @throws dev.changeflow.jobs.sql.SqlException the errors of S4, with their codes
     */
    static void run(
            SqlPipeline.ReplaceWhereTable table,
            CatalogSettings settings,
            @Nullable String where,
            @Nullable SqlPosition whereAt,
            int parallelism,
            boolean dryRun,
            PrintStream out)
            throws Exception {
        ReplaceWhereRefresh.Definition def = table.definition();
        if (dryRun) {
            ReplaceWhereRefresh.check(def, settings, where, whereAt);
            out.println(
                    "Would replace the rows of "
                            + def.target()
                            + " WHERE "
                            + (where != null ? where : def.predicate())
                            + " by the query's rows for it, in one commit (REPLACE WHERE)");
            return;
        }
        // S9: recorded in the table's last-refresh properties, also when it fails; a table the
        // refresh creates counts all its snapshots as written
        TableStatements.RefreshRecord.record(
                settings,
                List.of(def.target()),
                false,
                () -> {
                    ReplaceWhereRefresh.Result r =
                            ReplaceWhereRefresh.refresh(def, settings, where, whereAt, parallelism);
                    out.println(
                            "REPLACE WHERE "
                                    + r.predicate()
                                    + " into "
                                    + def.target()
                                    + ": "
                                    + r.deletedRows()
                                    + " rows deleted, "
                                    + r.insertedRows()
                                    + " inserted"
                                    + (r.snapshotId() == null
                                            ? " (nothing changed, no commit)"
                                            : " in snapshot " + r.snapshotId()));
                    return r.insertedRows();
                });
    }
}

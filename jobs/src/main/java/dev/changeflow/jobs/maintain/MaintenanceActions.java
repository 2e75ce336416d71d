package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.DanglingDeletes;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;

import java.time.Duration;

/**
 * The one-off maintenance actions of one table, as {@code bin/changeflow maintain} and the SQL
 * statements of {@code bin/changeflow sql} ({@code OPTIMIZE}, {@code REORG TABLE ... APPLY
 * (PURGE)}, {@code VACUUM}) run them: each returns the report line(s) it printed nothing of. Flink
 * jobs run on the embedded default (a local MiniCluster at parallelism 1). Rules: docs/semantics.md
 * M1 (compaction), M2 (orphans), M3 and S6 (purge).
 */
@Internal
public final class MaintenanceActions {
    private MaintenanceActions() {}

    /**
     * Compacts {@code table}'s data files with their deletes applied ({@link TableCompaction}, M1),
     * then removes the delete files that apply to no live data file any more ({@link
     * DanglingDeletes}, one {@code replace} commit, or none when nothing dangles). A table of
     * format v3 (row lineage) is compacted with Iceberg's {@code RewriteDataFiles} maintenance
     * task, every data file rewritten ({@link TableCompaction#rewrite(StreamExecutionEnvironment,
     * TableLoader, Table)}).
     *
     * @return the report: files and delete files before and after the rewrite, then the dangling
     *     delete files removed; or that the table has no snapshot yet
     * @throws Exception when the rewrite job fails
     * @throws org.apache.iceberg.exceptions.ValidationException when a concurrent commit conflicts
     *     with the rewrite, or with each attempt at the removal
     * @throws IllegalStateException when the rewrite task of a v3 table failed (nothing changed)
     */
    public static String rewrite(CatalogSettings settings, TableIdentifier id, Table table)
            throws Exception {
        if (table.currentSnapshot() == null) {
            return "Rewrite of " + id + ": the table has no snapshot yet, nothing to do";
        }
        String rewrite =
                TableCompaction.rewrite(null, TableLoader.fromCatalog(settings.loader(), id), table)
                        .describe();
        return rewrite + System.lineSeparator() + DanglingDeletes.remove(table).describe();
    }

    /**
     * Purges deleted rows from storage ({@link TablePurge}, M3): every data file rewritten with its
     * deletes applied, older snapshots expired where no live consumer needs them.
     *
     * @param consumerExpiry consumers silent for longer than this keep nothing (F7), e.g. 7 days
     * @return the result, or null when the table has no snapshot yet (nothing to purge)
     * @throws Exception when the rewrite job fails
     */
    public static TablePurge.Result purge(
            CatalogSettings settings, TableIdentifier id, Table table, Duration consumerExpiry)
            throws Exception {
        if (table.currentSnapshot() == null) {
            return null;
        }
        return TablePurge.run(
                localEnvironment(),
                TableLoader.fromCatalog(settings.loader(), id),
                table,
                consumerExpiry);
    }

    /** The report of a purge of a table without snapshot. */
    public static String nothingToPurge(TableIdentifier id) {
        return "Purge of " + id + ": the table has no snapshot yet, nothing to do";
    }

    /**
     * Deletes the files under {@code table}'s data folder that no snapshot references and that are
     * older than {@code minAge} ({@link OrphanFileRemoval}, M2).
     *
     * @return the report: the files deleted
     * @throws Exception when the removal job fails
     */
    public static String removeOrphans(
            CatalogSettings settings, TableIdentifier id, Table table, Duration minAge)
            throws Exception {
        return OrphanFileRemoval.run(
                        localEnvironment(),
                        TableLoader.fromCatalog(settings.loader(), id),
                        table,
                        minAge)
                .describe();
    }

    private static StreamExecutionEnvironment localEnvironment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        return env;
    }
}

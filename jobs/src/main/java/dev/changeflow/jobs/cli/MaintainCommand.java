package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.maintain.MaintenanceActions;
import dev.changeflow.jobs.maintain.OrphanFileRemoval;
import dev.changeflow.jobs.maintain.TableCompaction;
import dev.changeflow.jobs.maintain.TablePurge;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow maintain TABLE [--rewrite] [--expire]}: one-off maintenance of one table, in
 * this order:
 *
 * <ol>
 *   <li>{@code --rewrite}: compaction of the data files with their deletes applied ({@link
 *       TableCompaction}: Iceberg's Flink rewrite action as a bounded job on a local MiniCluster;
 *       the new files keep the data sequence number of the version read, M1);
 *   <li>{@code --expire}: changeflow's consumer-aware snapshot expiry ({@link ChangeFeedExpiry},
 *       F7, M2) — the same rule and options as {@code changeflow expire};
 *   <li>{@code --orphans}: Iceberg's Flink {@code DeleteOrphanFiles} task run once ({@link
 *       OrphanFileRemoval}): unreferenced files under the data folder older than {@code
 *       --orphan-min-age} (3 days; at least 1 hour) are deleted (M2).
 * </ol>
 *
 * {@code --purge} ({@code REORG TABLE t APPLY (PURGE)}, S6) runs alone: every data file rewritten
 * with its deletes applied, the delete files that no longer apply removed, every older snapshot
 * expired (consumer-aware) — {@link TablePurge}; exit code 3 when a live consumer (or a concurrent
 * commit) keeps older snapshots, so deleted rows may still be in their files.
 *
 * <p>Without a task flag the first three run. Prints the files before and after, the delete files
 * before and after, and the expired versions. Two maintainers must not run on one table at once:
 * the command takes no lock (a concurrent compaction can fail with Iceberg's {@code
 * ValidationException}, never lose a commit, but their expiries can race).
 *
 * @see ExpireCommand
 */
@Command(
        name = "maintain",
        mixinStandardHelpOptions = true,
        description =
                "Compact a table's data files (deletes applied), expire its old snapshots (keeping"
                        + " those its change-feed consumers still need) and delete orphan data"
                        + " files. Do not run two at once on one table.")
public final class MaintainCommand implements Callable<Integer> {

    @Parameters(
            index = "0",
            paramLabel = "TABLE",
            description = "namespace.table, e.g. public.pgbench_accounts")
    String table;

    @Option(
            names = "--rewrite",
            description = "Compact data files, applying equality and position deletes.")
    boolean rewrite;

    @Option(
            names = "--expire",
            description = "Expire old snapshots, keeping what change-feed consumers need (F7).")
    boolean expire;

    @Option(
            names = "--orphans",
            description =
                    "Delete files under the table's data folder that no snapshot references (M2).")
    boolean orphans;

    @Option(
            names = "--purge",
            description =
                    "REORG ... APPLY (PURGE): rewrite every data file with its deletes applied, drop"
                            + " the delete files that no longer apply and expire every older snapshot"
                            + " (consumer-aware), so no retained file holds a deleted row. Exit code 3"
                            + " when a live consumer keeps older snapshots.")
    boolean purge;

    @Option(
            names = "--orphan-min-age",
            paramLabel = "AGE",
            defaultValue = "3d",
            description =
                    "With --orphans: keep files modified less than AGE ago. Default:"
                            + " ${DEFAULT-VALUE}.")
    String orphanMinAge;

    /** With {@code --expire}: as for {@code changeflow expire}. */
    @Mixin CliOptions.Expiry expiryOptions;

    @Mixin CliOptions.Warehouse local;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description = "Iceberg catalog property; replaces the local Hadoop catalog.")
    Map<String, String> catalog;

    PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
        Duration minAge = OptionParsers.duration(orphanMinAge, "--orphan-min-age");
        if (minAge.compareTo(TableMaintenanceOptions.MIN_ORPHANS_OLDER_THAN) < 0) {
            // M2: a younger file may be a running job's output, written but not committed yet
            throw new IllegalArgumentException(
                    "--orphan-min-age must be at least 1h (files younger than that may be a"
                            + " running job's, not committed yet), got '"
                            + orphanMinAge
                            + "'");
        }
        // every option before anything runs: a bad --older-than must not follow a compaction
        expiryOptions.check(Instant.now());
        CatalogSettings settings =
                CliOptions.catalogSettings(local.warehouse, catalog, "changeflow");
        Catalog cat = settings.open();
        TableIdentifier id = TableIdentifier.parse(table);
        if (!cat.tableExists(id)) {
            throw CliErrors.tableNotFound(id, settings.name(), " (check --warehouse)");
        }
        boolean all = !rewrite && !expire && !orphans;
        Table t = cat.loadTable(id);
        if (purge) {
            if (!all) {
                throw new IllegalArgumentException(
                        "--purge runs alone: it rewrites and expires itself (drop --rewrite,"
                                + " --expire, --orphans)");
            }
            TablePurge.Result r =
                    MaintenanceActions.purge(
                            settings, id, t, expiryOptions.consumerExpiryDuration());
            if (r == null) {
                out.println(MaintenanceActions.nothingToPurge(id));
                return 0;
            }
            out.println(r.describe());
            return r.complete() ? 0 : 3;
        }
        if (rewrite || all) {
            out.println(MaintenanceActions.rewrite(settings, id, t));
        }
        if (expire || all) {
            t.refresh();
            out.println(expiryOptions.expiry(t, Instant.now()).execute().describe());
        }
        if (orphans || all) {
            t.refresh();
            out.println(MaintenanceActions.removeOrphans(settings, id, t, minAge));
        }
        return 0;
    }
}

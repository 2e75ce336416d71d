package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.cdf.retention.ExpiryReport;
import dev.changeflow.sources.cdf.sql.TableChangesRewrite;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.actions.Actions;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Differential test of the change feed across table maintenance (issue 17; docs/semantics.md F2,
 * F7, F8, M1, M2): the random commits of {@link ChangeFeedDifferential} interleaved, at random
 * versions of a seeded run (the seed is printed), with
 *
 * <ul>
 *   <li>compactions with the starting sequence number: Iceberg's Flink rewrite action as {@code
 *       TableCompaction} runs it (once per run, at its middle version; not on format v3, which it
 *       refuses: "Flink does not support compaction on row lineage enabled tables"), and
 *       compactions through Iceberg's {@code RewriteFiles} that plan on the current snapshot, let
 *       one random commit land, then commit with the planned snapshot's data sequence number
 *       (Iceberg rejects those the racing commit conflicts with; the table then stays the racing
 *       commit's);
 *   <li>manifest rewrites ({@code rewriteManifests});
 *   <li>consumer-aware expiries ({@link ChangeFeedExpiry}, every snapshot older than the current
 *       one beyond the last), after the registered consumer {@code gold} has moved its next version
 *       forward; at random, and once at three quarters of the run with the consumer three versions
 *       behind the latest.
 * </ul>
 *
 * Then, for every retained version v whose parent is retained, state(v−1) with the changes of v
 * applied equals state(v) — read through {@link TableChanges} and, as the same rows, through SQL's
 * {@code table_changes} — the first expired version fails with {@code VERSION_NOT_AVAILABLE} naming
 * the available range, and no version the consumer still needs was ever expired.
 */
class ChangeFeedMaintenanceDifferentialTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    private static final int VERSIONS = 30;
    private static final String CONSUMER = "gold";

    @TempDir Path warehouse;

    @ParameterizedTest(name = "format v{0}, eq-deletes-carry-rows={1}, seed {2}")
    @CsvSource({"2, true, 21", "2, false, 22", "3, true, 23"})
    void everyRetainedVersionReplaysAcrossCompactionsAndExpiries(
            int formatVersion, boolean carryRows, long seed) throws Exception {
        System.out.println(
                "ChangeFeedMaintenanceDifferentialTest seed " + seed + " at " + Instant.now());
        CdfTestTables tables = new CdfTestTables(warehouse);
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        formatVersion,
                        carryRows
                                ? Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true")
                                : Map.of());
        Random random = new Random(seed);
        ConsumerRegistry consumers = ConsumerRegistry.forTable(table);
        long consumerNext = 1;
        consumers.write(CONSUMER, consumerNext, Instant.now());
        long nextKey = 1;
        table.newAppend()
                .appendFile(
                        tables.dataFile(
                                table, row(nextKey++, "n0", "eu"), row(nextKey++, "n0", "us")))
                .commit();

        List<String> log = new ArrayList<>();
        int expiredVersions = 0;
        int i = 1;
        // Iceberg's Flink rewrite refuses tables with row lineage (v3): there, Iceberg's API only
        boolean flinkRewrite = formatVersion >= 3;
        boolean expiredLate = false;
        while (CdfTestTables.version(table) < VERSIONS) {
            int action = random.nextInt(10);
            boolean forcedExpiry = !expiredLate && CdfTestTables.version(table) >= VERSIONS * 3 / 4;
            if (!flinkRewrite && CdfTestTables.version(table) >= VERSIONS / 2) {
                flinkRewrite = true;
                long planned = CdfTestTables.version(table);
                long started = System.nanoTime();
                Actions.forTable(env(), table)
                        .rewriteDataFiles()
                        .useStartingSequenceNumber(true)
                        .execute();
                log.add(
                        "flink-rewrite@"
                                + planned
                                + "->"
                                + CdfTestTables.version(table)
                                + " ("
                                + (System.nanoTime() - started) / 1_000_000
                                + " ms)");
            } else if (action == 0) {
                long planned = CdfTestTables.version(table);
                RewriteFiles rewrite = planCompaction(tables, table);
                nextKey =
                        ChangeFeedDifferential.randomCommit(
                                tables, table, random, i++, nextKey, formatVersion, carryRows);
                try {
                    rewrite.commit();
                    log.add("rewrite@" + planned + "->" + CdfTestTables.version(table));
                } catch (ValidationException e) {
                    log.add("rewrite@" + planned + " rejected");
                }
            } else if (action == 1) {
                table.rewriteManifests().rewriteIf(m -> true).commit();
                log.add("manifests->" + CdfTestTables.version(table));
            } else if (action == 2 || forcedExpiry) {
                // the consumer moves forward (at random; to three versions before the latest at
                // least in the one expiry made late in every run), then the expiry runs
                long latest = CdfTestTables.version(table);
                consumerNext =
                        consumerNext + random.nextInt((int) Math.max(1, latest + 2 - consumerNext));
                if (forcedExpiry) {
                    expiredLate = true;
                    consumerNext = Math.max(consumerNext, latest - 2);
                }
                consumers.write(CONSUMER, consumerNext, Instant.now());
                List<Long> needed = new ArrayList<>();
                for (Snapshot s : TableVersions.of(table).ancestors()) {
                    if (s.sequenceNumber() >= consumerNext - 1) {
                        needed.add(s.sequenceNumber());
                    }
                }
                ExpiryReport report =
                        ChangeFeedExpiry.forTable(table)
                                .olderThan(
                                        Instant.ofEpochMilli(
                                                table.currentSnapshot().timestampMillis()))
                                .retainLast(1)
                                .execute();
                expiredVersions += report.expiredVersions().size();
                log.add("expire(next " + consumerNext + ")@" + latest + report.expiredVersions());
                List<Long> retained = new ArrayList<>();
                TableVersions.of(table).ancestors().forEach(s -> retained.add(s.sequenceNumber()));
                assertThat(retained).as("versions consumer %s needs", CONSUMER).containsAll(needed);
                assertThat(report.expiredVersions()).doesNotContainAnyElementsOf(needed);
            } else {
                nextKey =
                        ChangeFeedDifferential.randomCommit(
                                tables, table, random, i++, nextKey, formatVersion, carryRows);
            }
        }
        System.out.println("seed " + seed + ": " + log + " at " + Instant.now());
        table.refresh();

        TableVersions versions = TableVersions.of(table);
        List<Snapshot> ancestors = versions.ancestors();
        long latest = versions.latestVersion();
        long start = versions.earliestAvailableVersion();
        List<Snapshot> checked = start == 0 ? ancestors : ancestors.subList(1, ancestors.size());
        List<String> stateBefore =
                start == 0
                        ? new ArrayList<>()
                        : ChangeFeedDifferential.renderAll(
                                CdfTestTables.state(table, ancestors.get(0)));
        assertThat(checked.get(0).sequenceNumber()).isEqualTo(Math.max(1, start));
        TableChanges read = TableChanges.forTable(table).startingVersion(start).build();
        ChangeFeedDifferential.assertEveryVersion(
                table, checked, stateBefore, ChangeFeedDifferential.changesByVersion(read));

        System.out.println("seed " + seed + ": batch checks done at " + Instant.now());
        // the same rows through SQL
        List<String> batch = new ArrayList<>();
        for (Record r : ChangeFeedDifferential.read(read)) {
            batch.add(
                    "+I[" + r.get(0) + ", " + r.get(1) + ", " + r.get(2) + ", " + r.get(3) + ", "
                            + r.get(4) + "]");
        }
        batch.sort(null);
        assertThat(
                        sql(
                                "SELECT id, name, region, _change_type, _commit_version FROM"
                                        + " table_changes('db.t', "
                                        + start
                                        + ", "
                                        + latest
                                        + ")"))
                .isEqualTo(batch);

        System.out.println("seed " + seed + ": SQL read done at " + Instant.now());
        // what the consumer needs was kept; what expired is refused with the available range
        assertThat(start).isLessThanOrEqualTo(Math.max(consumerNext, 1));
        if (start > 0) {
            assertThatThrownBy(
                            () -> TableChanges.forTable(table).startingVersion(start - 1).build())
                    .isInstanceOfSatisfying(
                            CdfException.class,
                            e ->
                                    assertThat(e.code())
                                            .isEqualTo(
                                                    CdfException.ErrorCode.VERSION_NOT_AVAILABLE))
                    .hasMessageContaining("Available versions: " + start + " to " + latest + ".");
        }
        assertThat(log)
                .as("compactions and manifest rewrites committed in the run")
                .anyMatch(a -> a.contains("->"));
        assertThat(expiredVersions).as("versions expired in the run").isPositive();
        assertThat(start).as("the first available version").isPositive();
    }

    /**
     * A compaction of every data file of the current snapshot (rows read with their deletes
     * applied) into one, planned now and committed later with the planned snapshot's data sequence
     * number, as {@code TableCompaction} commits (M1).
     */
    private static RewriteFiles planCompaction(CdfTestTables tables, Table table) {
        table.refresh();
        Snapshot planned = table.currentSnapshot();
        List<DataFile> files = new ArrayList<>();
        List<Record> rows = new ArrayList<>();
        for (FileScanTask task : ChangeFeedDifferential.tasks(table)) {
            files.add(task.file());
            new FileRows(table.io())
                    .forEachLiveRow(
                            task,
                            table.schema(),
                            table.schema(),
                            Expressions.alwaysTrue(),
                            r -> rows.add(r.row));
        }
        RewriteFiles rewrite =
                table.newRewrite()
                        .validateFromSnapshot(planned.snapshotId())
                        .dataSequenceNumber(planned.sequenceNumber());
        files.forEach(rewrite::deleteFile);
        if (!rows.isEmpty()) {
            rewrite.addFile(tables.dataFile(table, rows.toArray(new Record[0])));
        }
        return rewrite;
    }

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        return env;
    }

    /** The rows of a batch SQL query on catalog {@code c} (type changeflow), sorted. */
    private List<String> sql(String query) throws Exception {
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(env(), EnvironmentSettings.inBatchMode());
        tEnv.executeSql(
                "CREATE CATALOG c WITH ('type'='changeflow', 'catalog-type'='hadoop',"
                        + " 'warehouse'='"
                        + warehouse.toUri()
                        + "')");
        tEnv.executeSql("USE CATALOG c");
        List<String> rows = new ArrayList<>();
        try (CloseableIterator<Row> it =
                tEnv.executeSql(TableChangesRewrite.rewrite(query)).collect()) {
            it.forEachRemaining(r -> rows.add(r.toString()));
        }
        rows.sort(null);
        return rows;
    }
}

package dev.changeflow.e2e;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;
import dev.changeflow.sources.cdf.sql.TableChangesRewrite;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The change data feed through Flink SQL: the {@code changeflow} catalog type, {@code t$changes}
 * with {@code OPTIONS} hints (F1, F3, F4, F8), the {@code table_changes(...)} rewrite, bounded
 * reads in STREAMING and BATCH mode and their row order, and Iceberg still serving plain reads and
 * writes.
 *
 * <p>Table {@code db.t} (v2, key {@code id}, written by Iceberg's Flink sink in upsert mode through
 * the same catalog): version 1 inserts (1, a), (2, b); version 2 upserts (2, b2), (3, c); version 3
 * upserts (1, a3). Every error test only plans its statement.
 */
class ChangeFeedSqlITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir static Path warehouse;

    private static HadoopCatalog iceberg;
    private static final DateTimeFormatter MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
    private static final String COLUMNS = "id, name, _change_type, _commit_version";

    @BeforeAll
    static void writeTable() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(true);
        tEnv.executeSql(
                "CREATE TABLE db.t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
                        + "WITH ('format-version'='2', 'write.upsert.enabled'='true')");
        tEnv.executeSql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')").await();
        tEnv.executeSql("INSERT INTO db.t VALUES (2, 'b2'), (3, 'c')").await();
        tEnv.executeSql("INSERT INTO db.t VALUES (1, 'a3')").await();
        iceberg = new HadoopCatalog(new Configuration(), warehouse.toUri().toString());
    }

    /**
     * A table environment on the test's MiniCluster with catalog {@code c} (type changeflow) in
     * use.
     */
    private static StreamTableEnvironment tableEnv(boolean batch) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(
                        env,
                        batch
                                ? EnvironmentSettings.inBatchMode()
                                : EnvironmentSettings.inStreamingMode());
        // SELECT * leaves out t$changelog's virtual metadata columns, as in `changeflow sql`
        ChangeflowCatalog.excludeMetadataColumnsFromSelectStar(tEnv.getConfig());
        tEnv.executeSql(
                "CREATE CATALOG c WITH ('type'='changeflow', 'catalog-type'='hadoop', 'warehouse'='"
                        + warehouse.toUri()
                        + "')");
        tEnv.executeSql("USE CATALOG c");
        tEnv.executeSql("CREATE DATABASE IF NOT EXISTS db");
        return tEnv;
    }

    private static List<String> rows(StreamTableEnvironment tEnv, String sql) throws Exception {
        List<String> rows = rowsInOrder(tEnv, sql);
        rows.sort(null);
        return rows;
    }

    /** The rows of a query in the order the job emits them. */
    private static List<String> rowsInOrder(StreamTableEnvironment tEnv, String sql)
            throws Exception {
        List<String> rows = new ArrayList<>();
        TableResult result = tEnv.executeSql(sql);
        try (CloseableIterator<Row> it = result.collect()) {
            it.forEachRemaining(r -> rows.add(r.toString()));
        }
        return rows;
    }

    private static String changes(String options) {
        return "SELECT " + COLUMNS + " FROM db.`t$changes` /*+ OPTIONS(" + options + ") */";
    }

    private static Snapshot version(Table table, long version) {
        for (Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == version) {
                return s;
            }
        }
        throw new IllegalArgumentException("no version " + version);
    }

    /** The change-feed error a statement fails with when planned. */
    /**
     * The change-feed error a query's job fails with while it runs: from the exception its rows'
     * iterator throws, else from the job's own result (the iterator can lose the race with the
     * job's end and report only that it could not fetch more).
     *
     * @throws AssertionError when the query does not fail, or not with a change-feed error
     */
    private static CdfException jobCdfError(StreamTableEnvironment tEnv, String sql)
            throws Exception {
        TableResult result = tEnv.executeSql(sql);
        Exception failure = null;
        try (CloseableIterator<Row> it = result.collect()) {
            it.forEachRemaining(r -> {});
        } catch (Exception e) {
            failure = e;
        }
        if (failure == null) {
            return fail("no error for " + sql);
        }
        CdfException cdf = cdfIn(failure);
        if (cdf == null && result.getJobClient().isPresent()) {
            try {
                result.getJobClient().get().getJobExecutionResult().get(1, TimeUnit.MINUTES);
            } catch (Exception e) {
                cdf = cdfIn(e);
                failure.addSuppressed(e);
            }
        }
        if (cdf == null) {
            throw new AssertionError("not a change-feed error", failure);
        }
        return cdf;
    }

    private static CdfException cdfIn(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CdfException c) {
                return c;
            }
        }
        return null;
    }

    private static CdfException cdfError(StreamTableEnvironment tEnv, String sql) {
        try {
            tEnv.explainSql(sql);
        } catch (Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof CdfException) {
                    return (CdfException) t;
                }
            }
            throw new AssertionError("not a change-feed error", e);
        }
        return fail("no error for " + sql);
    }

    @Test
    void versionRangeInStreamingMode() throws Exception {
        assertThat(rows(tableEnv(false), changes("'starting-version'='2', 'ending-version'='3'")))
                .containsExactly(
                        "+I[1, a, update_preimage, 3]",
                        "+I[1, a3, update_postimage, 3]",
                        "+I[2, b, update_preimage, 2]",
                        "+I[2, b2, update_postimage, 2]",
                        "+I[3, c, insert, 2]");
    }

    @Test
    void timestampRangeWithCommitTimestamps() throws Exception {
        Table table = iceberg.loadTable(TableIdentifier.of("db", "t"));
        long t1 = version(table, 1).timestampMillis();
        long t2 = version(table, 2).timestampMillis();
        assertThat(
                        rows(
                                tableEnv(false),
                                "SELECT id, name, _change_type, _commit_version, _commit_timestamp FROM db.`t$changes` "
                                        + "/*+ OPTIONS('starting-timestamp'='"
                                        + MILLIS.format(Instant.ofEpochMilli(t1))
                                        + "', 'ending-timestamp'='"
                                        + MILLIS.format(Instant.ofEpochMilli(t2))
                                        + "') */"))
                .containsExactly(
                        "+I[1, a, insert, 1, " + Instant.ofEpochMilli(t1) + "]",
                        "+I[2, b, insert, 1, " + Instant.ofEpochMilli(t1) + "]",
                        "+I[2, b, update_preimage, 2, " + Instant.ofEpochMilli(t2) + "]",
                        "+I[2, b2, update_postimage, 2, " + Instant.ofEpochMilli(t2) + "]",
                        "+I[3, c, insert, 2, " + Instant.ofEpochMilli(t2) + "]");
        // F3: two timestamps between the same pair of commits give an empty result, not an error
        assertThat(
                        rows(
                                tableEnv(false),
                                changes(
                                        "'starting-timestamp'='"
                                                + MILLIS.format(Instant.ofEpochMilli(t1 + 1))
                                                + "', 'ending-timestamp'='"
                                                + MILLIS.format(Instant.ofEpochMilli(t2 - 1))
                                                + "'")))
                .isEmpty();
    }

    /** The first {@code n} rows of an unbounded read (closing the iterator cancels the job). */
    private static List<String> firstRows(StreamTableEnvironment tEnv, String sql, int n)
            throws Exception {
        List<String> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = tEnv.executeSql(sql).collect()) {
            while (rows.size() < n && it.hasNext()) {
                rows.add(it.next().toString());
            }
        }
        rows.sort(null);
        return rows;
    }

    /**
     * design.md: a read is bounded when an ending bound is given or the runtime mode is BATCH; in
     * STREAMING mode without an ending bound it is changeflow's streaming change feed, which
     * follows the table.
     */
    @Test
    void batchModeReadsToTheLatestVersionStreamingModeFollowsTheTable() throws Exception {
        assertThat(rows(tableEnv(true), changes("'starting-version'='3'")))
                .containsExactly("+I[1, a, update_preimage, 3]", "+I[1, a3, update_postimage, 3]");
        assertThat(
                        rows(
                                tableEnv(true),
                                "SELECT count(*) FROM db.`t$changes` /*+ OPTIONS('starting-version'='0') */"))
                .containsExactly("+I[7]");
        assertThat(
                        firstRows(
                                tableEnv(false),
                                changes("'starting-version'='2', 'monitor-interval'='100 ms'"),
                                5))
                .containsExactly(
                        "+I[1, a, update_preimage, 3]",
                        "+I[1, a3, update_postimage, 3]",
                        "+I[2, b, update_preimage, 2]",
                        "+I[2, b2, update_postimage, 2]",
                        "+I[3, c, insert, 2]");
        // the start is resolved when the statement is planned
        CdfException e = cdfError(tableEnv(false), changes("'starting-version'='9'"));
        assertThat(e.code()).isEqualTo(CdfException.ErrorCode.START_AFTER_LATEST_COMMIT);
    }

    @Test
    void tableChangesRewriteRunsThroughSql() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(true);
        assertThat(
                        rows(
                                tEnv,
                                TableChangesRewrite.rewrite(
                                        "SELECT " + COLUMNS + " FROM table_changes('db.t', 2, 2)")))
                .containsExactly(
                        "+I[2, b, update_preimage, 2]",
                        "+I[2, b2, update_postimage, 2]",
                        "+I[3, c, insert, 2]");
        assertThat(
                        rows(
                                tEnv,
                                TableChangesRewrite.rewrite(
                                        "SELECT _change_type, count(*) FROM TABLE_CHANGES('c.db.t', '2000-01-01') GROUP BY _change_type")))
                .containsExactly(
                        "+I[insert, 3]", "+I[update_postimage, 2]", "+I[update_preimage, 2]");
    }

    /**
     * Issue #19: a bounded read emits its versions in ascending order, and within a version the
     * order of {@code TableChanges} (by key, a preimage directly before its postimage), in BATCH
     * and STREAMING mode at parallelism 2, although every version has several data files and the
     * versions are read concurrently.
     */
    @Test
    void boundedReadsEmitVersionsInOrder() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(true);
        tEnv.executeSql(
                "CREATE TABLE db.o (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
                        + "WITH ('format-version'='2', 'write.upsert.enabled'='true')");
        String insert = "INSERT INTO db.o /*+ OPTIONS('write-parallelism'='2') */ VALUES ";
        tEnv.executeSql(insert + "(1, 'a1'), (2, 'a2'), (3, 'a3'), (4, 'a4')").await();
        tEnv.executeSql(insert + "(1, 'b1'), (5, 'b5'), (6, 'b6')").await();
        tEnv.executeSql(insert + "(2, 'c2'), (7, 'c7'), (4, 'a4'), (11, 'c11'), (12, 'c12')")
                .await();
        tEnv.executeSql(insert + "(3, 'd3'), (5, 'd5'), (8, 'd8')").await();
        tEnv.executeSql(insert + "(9, 'e9'), (10, 'e10')").await();
        Table o = iceberg.loadTable(TableIdentifier.of("db", "o"));
        for (long v = 1; v <= 5; v++) {
            assertThat(version(o, v).addedDataFiles(o.io()))
                    .as("data files of version %d", v)
                    .hasSizeGreaterThan(1);
        }
        List<String> expected =
                List.of(
                        "+I[1, a1, insert, 1]",
                        "+I[2, a2, insert, 1]",
                        "+I[3, a3, insert, 1]",
                        "+I[4, a4, insert, 1]",
                        "+I[1, a1, update_preimage, 2]",
                        "+I[1, b1, update_postimage, 2]",
                        "+I[5, b5, insert, 2]",
                        "+I[6, b6, insert, 2]",
                        "+I[2, a2, update_preimage, 3]",
                        "+I[2, c2, update_postimage, 3]",
                        "+I[7, c7, insert, 3]",
                        "+I[11, c11, insert, 3]",
                        "+I[12, c12, insert, 3]",
                        "+I[3, a3, update_preimage, 4]",
                        "+I[3, d3, update_postimage, 4]",
                        "+I[5, b5, update_preimage, 4]",
                        "+I[5, d5, update_postimage, 4]",
                        "+I[8, d8, insert, 4]",
                        "+I[9, e9, insert, 5]",
                        "+I[10, e10, insert, 5]");
        String batch =
                TableChangesRewrite.rewrite(
                        "SELECT " + COLUMNS + " FROM table_changes('db.o', 1, 5)");
        assertThat(rowsInOrder(tEnv, batch)).containsExactlyElementsOf(expected);
        String streaming =
                "SELECT "
                        + COLUMNS
                        + " FROM db.`o$changes` /*+ OPTIONS('starting-version'='1', 'ending-version'='5') */";
        assertThat(rowsInOrder(tableEnv(false), streaming)).containsExactlyElementsOf(expected);
    }

    /**
     * The rows of a query grouped by their first column, each group in the order the job emitted it
     * (a changelog keeps its order per key only).
     */
    private static Map<String, List<String>> perKey(StreamTableEnvironment tEnv, String sql)
            throws Exception {
        Map<String, List<String>> byKey = new TreeMap<>();
        for (String row : rowsInOrder(tEnv, sql)) {
            String key = row.substring(row.indexOf('[') + 1, row.indexOf(','));
            byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(row);
        }
        return byKey;
    }

    /**
     * G1 through SQL: {@code t$changelog} has t's columns and primary key and the two metadata
     * columns; a bounded read from version 2 gives the table as of version 1 as +I, then the
     * changes of 2 and 3 as -U/+U/+I per key in version order ({@code snapshot-then-changes}), or
     * the changes only ({@code changes-only}); metadata columns may be selected by name in any
     * subset, and {@code SELECT *} leaves them out (they are METADATA VIRTUAL).
     */
    @Test
    void changelogReadGivesRowKinds() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(false);
        assertThat(tEnv.from("db.`t$changelog`").getResolvedSchema().toString())
                .isEqualTo(
                        "(\n  `id` BIGINT NOT NULL,\n  `name` STRING,\n"
                                + "  `_commit_version` BIGINT NOT NULL METADATA VIRTUAL,\n"
                                + "  `_commit_timestamp` TIMESTAMP_LTZ(3) NOT NULL METADATA VIRTUAL,\n"
                                + "  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED\n)");
        assertThat(
                        perKey(
                                tEnv,
                                "SELECT id, name, _commit_version FROM db.`t$changelog` "
                                        + "/*+ OPTIONS('starting-version'='2', 'bounded'='true') */"))
                .isEqualTo(
                        Map.of(
                                "1", List.of("+I[1, a, 1]", "-U[1, a, 3]", "+U[1, a3, 3]"),
                                "2", List.of("+I[2, b, 1]", "-U[2, b, 2]", "+U[2, b2, 2]"),
                                "3", List.of("+I[3, c, 2]")));
        Table t = iceberg.loadTable(TableIdentifier.of("db", "t"));
        Instant t2 = Instant.ofEpochMilli(version(t, 2).timestampMillis());
        Instant t3 = Instant.ofEpochMilli(version(t, 3).timestampMillis());
        assertThat(
                        perKey(
                                tEnv,
                                "SELECT * FROM db.`t$changelog` /*+ OPTIONS('starting-version'='2', "
                                        + "'start-mode'='changes-only', 'bounded'='true') */"))
                .isEqualTo(
                        Map.of(
                                "1", List.of("-U[1, a]", "+U[1, a3]"),
                                "2", List.of("-U[2, b]", "+U[2, b2]"),
                                "3", List.of("+I[3, c]")));
        assertThat(
                        perKey(
                                tEnv,
                                "SELECT id, name, _commit_version, _commit_timestamp FROM db.`t$changelog` "
                                        + "/*+ OPTIONS('starting-version'='2', 'start-mode'='changes-only', "
                                        + "'bounded'='true') */"))
                .isEqualTo(
                        Map.of(
                                "1",
                                List.of("-U[1, a, 3, " + t3 + "]", "+U[1, a3, 3, " + t3 + "]"),
                                "2",
                                List.of("-U[2, b, 2, " + t2 + "]", "+U[2, b2, 2, " + t2 + "]"),
                                "3",
                                List.of("+I[3, c, 2, " + t2 + "]")));
        // Flink SQL maintains a query's result from the row kinds: the final rows are t's
        assertThat(
                        ChangelogResults.finalRows(
                                tEnv.executeSql(
                                        "SELECT COUNT(*), MAX(name) FROM db.`t$changelog` "
                                                + "/*+ OPTIONS('starting-version'='2', 'bounded'='true') */")))
                .containsExactly("+I[3, c]");
    }

    /**
     * G1 choices and bad input: a table without identifier fields has a changelog without a primary
     * key; an unknown start mode names the option and the accepted values; an ending bound is not a
     * changelog option; a start after the latest commit advises a changelog option; BATCH mode,
     * which reads only insert-only tables, is refused with the fix; a changelog cannot be written.
     */
    @Test
    void changelogWithoutKeyAndBadInput() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(false);
        tEnv.executeSql(
                "CREATE TABLE db.nokey (id BIGINT, name STRING) WITH ('format-version'='2')");
        tEnv.executeSql("INSERT INTO db.nokey VALUES (1, 'x')").await();
        assertThat(tEnv.from("db.`nokey$changelog`").getResolvedSchema().getPrimaryKey()).isEmpty();
        assertThat(
                        rows(
                                tEnv,
                                "SELECT * FROM db.`nokey$changelog` /*+ OPTIONS('bounded'='true') */"))
                .containsExactly("+I[1, x]");
        assertThat(
                        rows(
                                tEnv,
                                "SELECT id, _commit_version FROM db.`nokey$changelog` "
                                        + "/*+ OPTIONS('bounded'='true') */"))
                .containsExactly("+I[1, 1]");

        assertThat(
                        cdfError(
                                tEnv,
                                "SELECT * FROM db.`t$changelog` /*+ OPTIONS('start-mode'='snapshot') */"))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'start-mode' = 'snapshot' for the change feed of table "
                                + "c.db.t$changelog is not one of 'snapshot-then-changes', 'changes-only'.");
        assertThat(
                        cdfError(
                                tEnv,
                                "SELECT * FROM db.`t$changelog` /*+ OPTIONS('ending-version'='2') */"))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Unknown option 'ending-version' for the change feed of table "
                                + "c.db.t$changelog. Accepted options: 'bounded', 'consumer-id', "
                                + "'delete-file-cache-size', "
                                + "'max-bytes-per-cycle', 'max-files-per-cycle', 'monitor-interval', "
                                + "'start-mode', 'starting-timestamp', 'starting-version'.");
        // the advice names only what t$changelog accepts (no timestamp-out-of-range.enabled)
        assertThat(
                        cdfError(
                                tEnv,
                                "SELECT * FROM db.`t$changelog` /*+ OPTIONS('starting-version'='9') */"))
                .hasMessage(
                        "START_AFTER_LATEST_COMMIT: The starting version 9 of the change feed of table "
                                + "c.db.t is after the latest version 3. Start at version 4 or earlier; "
                                + "'starting-version' = 'latest' starts after the latest commit.");
        assertThat(cdfError(tableEnv(true), "SELECT * FROM db.`t$changelog`"))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: c.db.t$changelog is a changelog (updates and deletes), which "
                                + "Flink reads in STREAMING mode only, but 'execution.runtime-mode' is BATCH. Run "
                                + "the statement in STREAMING mode (changeflow sql --streaming; in a Gold SQL "
                                + "file SET 'execution.runtime-mode' = 'streaming'), with 'bounded'='true' for "
                                + "a read "
                                + "that finishes at the latest version.");
        assertThatThrownBy(
                        () ->
                                tEnv.explainSql(
                                        "INSERT INTO db.`t$changelog` (id, name) VALUES (9, 'x')"))
                .rootCause()
                .hasMessage(
                        "Table c.db.t$changelog is a change data feed and cannot be written; write the table "
                                + "without $changelog.");
    }

    @Test
    void plainReadsAndWritesAreServedByIceberg() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(true);
        assertThat(rows(tEnv, "SELECT * FROM db.t"))
                .containsExactly("+I[1, a3]", "+I[2, b2]", "+I[3, c]");
        assertThat(tEnv.from("db.`t$changes`").getResolvedSchema().toString())
                .isEqualTo(
                        "(\n  `id` BIGINT NOT NULL,\n  `name` STRING,\n  `_change_type` STRING NOT NULL,\n"
                                + "  `_commit_version` BIGINT NOT NULL,\n  `_commit_timestamp` TIMESTAMP_LTZ(3) NOT NULL\n)");
        CdfException hint =
                cdfError(tEnv, "SELECT * FROM db.t /*+ OPTIONS('read-change-feed'='true') */");
        assertThat(hint)
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'read-change-feed' = 'true' on table c.db.t: Flink fixes a table's "
                                + "columns before it applies options, so the change feed's columns cannot be added "
                                + "here. Read `db`.`t$changes` with the same options instead.");
        assertThatThrownBy(
                        () ->
                                tEnv.explainSql(
                                        "INSERT INTO db.`t$changes` VALUES (9, 'x', 'insert', 1, TO_TIMESTAMP_LTZ(0, 3))"))
                .rootCause()
                .hasMessage(
                        "Table c.db.t$changes is a change data feed and cannot be written; write the table without $changes.");
    }

    /** Every option and range error of F3/F4/F8 through SQL, with its code and message. */
    @Test
    void optionAndRangeErrors() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(true);
        String t = "c.db.t";
        assertThat(
                        cdfError(
                                tEnv,
                                changes(
                                        "'starting-version'='1', 'starting-timestamp'='2000-01-01'")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Both 'starting-version' (1) and 'starting-timestamp' ('2000-01-01') "
                                + "are set for the change feed of table %s. Set only one of them.",
                        t);
        assertThat(cdfError(tEnv, changes("'ending-version'='2'")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Neither 'starting-version' nor 'starting-timestamp' is set for the "
                                + "change feed of table %s. Set one of them.",
                        t);
        assertThat(cdfError(tEnv, changes("'starting-versoin'='1', 'ending-version'='2'")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Unknown option 'starting-versoin' for the change feed of table "
                                + "c.db.t$changes. Accepted options: 'consumer-id', 'delete-file-cache-size', "
                                + "'ending-timestamp', 'ending-version', "
                                + "'max-bytes-per-cycle', 'max-files-per-cycle', 'monitor-interval', 'read-change-feed', "
                                + "'starting-timestamp', 'starting-version', 'timestamp-out-of-range.enabled'.");
        assertThat(
                        cdfError(
                                tEnv,
                                changes(
                                        "'starting-version'='1', 'timestamp-out-of-range.enabled'='yes'")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'timestamp-out-of-range.enabled' = 'yes' for the change feed of "
                                + "table c.db.t$changes is not a boolean. Use 'true' or 'false'.");
        assertThat(cdfError(tEnv, changes("'starting-version'='one'")))
                .hasMessage(
                        "INVALID_CDC_OPTIONS: 'starting-version' = 'one' for the change feed of table %s$changes "
                                + "is not a version or 'latest'. Versions are integers >= 0; 'latest' (streaming "
                                + "reads) starts after the latest commit.",
                        t);
        assertThat(cdfError(tEnv, changes("'starting-version'='3', 'ending-version'='2'")))
                .hasMessage(
                        "INVALID_CDC_RANGE: The ending version 2 of the change feed of table %s is before its "
                                + "starting version 3. Give an ending version at or after the starting version.",
                        t);
        assertThat(cdfError(tEnv, changes("'starting-version'='4'")))
                .hasMessage(
                        "START_AFTER_LATEST_COMMIT: The starting version 4 of the change feed of table %s is "
                                + "after the latest version 3. Start at version 3 or earlier, or set "
                                + "'timestamp-out-of-range.enabled' = 'true' to get an empty result.",
                        t);
        assertThat(cdfError(tEnv, changes("'starting-version'='1', 'ending-version'='9'")))
                .hasMessage(
                        "END_AFTER_LATEST_COMMIT: The ending version 9 of the change feed of table %s is after "
                                + "the latest version 3. End at version 3 or earlier, or set "
                                + "'timestamp-out-of-range.enabled' = 'true' to read up to the latest version.",
                        t);
        assertThat(cdfError(tEnv, changes("'starting-timestamp'='yesterday'")).code())
                .isEqualTo(CdfException.ErrorCode.INVALID_TIMESTAMP);
        assertThat(cdfError(tEnv, changes("'starting-timestamp'='2999-01-01'")).code())
                .isEqualTo(CdfException.ErrorCode.START_AFTER_LATEST_COMMIT);
        // F4 tolerance: a start past the end is empty, an end past the end reads to the latest
        // version
        assertThat(
                        rows(
                                tEnv,
                                changes(
                                        "'starting-version'='4', 'timestamp-out-of-range.enabled'='true'")))
                .isEmpty();
        assertThat(
                        rows(
                                tEnv,
                                changes(
                                        "'starting-version'='3', 'ending-version'='9', 'timestamp-out-of-range.enabled'='TRUE'")))
                .containsExactly("+I[1, a, update_preimage, 3]", "+I[1, a3, update_postimage, 3]");
    }

    /**
     * Errors that need other tables: RESERVED_COLUMN_NAME, UNSUPPORTED_FORMAT_VERSION, schema,
     * history, expiry.
     */
    @Test
    void tableErrors() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(true);
        tEnv.executeSql(
                "CREATE TABLE db.reserved (id BIGINT, _commit_version BIGINT) WITH ('format-version'='2')");
        assertThat(
                        cdfError(
                                tEnv,
                                "SELECT * FROM db.`reserved$changes` /*+ OPTIONS('starting-version'='0') */"))
                .hasMessage(
                        "RESERVED_COLUMN_NAME: Table c.db.reserved has a column named '_commit_version', which "
                                + "the change feed uses for its metadata columns (_change_type, _commit_version, "
                                + "_commit_timestamp). Rename the column to read the table's change feed.");

        tEnv.executeSql("CREATE TABLE db.v1 (id BIGINT) WITH ('format-version'='1')");
        assertThat(
                        cdfError(
                                        tEnv,
                                        "SELECT * FROM db.`v1$changes` /*+ OPTIONS('starting-version'='0') */")
                                .code())
                .isEqualTo(CdfException.ErrorCode.UNSUPPORTED_FORMAT_VERSION);

        tEnv.executeSql("CREATE TABLE db.s (id BIGINT, gone STRING) WITH ('format-version'='2')");
        tEnv.executeSql("INSERT INTO db.s VALUES (1, 'x')").await();
        Table s = iceberg.loadTable(TableIdentifier.of("db", "s"));
        s.updateSchema().deleteColumn("gone").commit();
        tEnv.executeSql("INSERT INTO db.s VALUES (2)").await();
        assertThat(
                        cdfError(
                                tEnv,
                                "SELECT * FROM db.`s$changes` /*+ OPTIONS('starting-version'='1') */"))
                .hasMessage(
                        "INCOMPATIBLE_SCHEMA_CHANGE: The change feed of table c.db.s from version 1 to version 2 "
                                + "spans a non-additive schema change at version 2 (column 'gone' dropped). Read versions 1 "
                                + "to 1 and versions 2 to 2 separately.");

        tEnv.executeSql("CREATE TABLE db.h (id BIGINT) WITH ('format-version'='2')");
        for (int i = 1; i <= 3; i++) {
            tEnv.executeSql("INSERT INTO db.h VALUES (" + i + ")").await();
        }
        Table h = iceberg.loadTable(TableIdentifier.of("db", "h"));
        h.manageSnapshots().rollbackTo(version(h, 2).snapshotId()).commit();
        tEnv.executeSql("INSERT INTO db.h VALUES (4)").await();
        assertThat(
                        cdfError(
                                        tEnv,
                                        "SELECT * FROM db.`h$changes` /*+ OPTIONS('starting-version'='1') */")
                                .code())
                .isEqualTo(CdfException.ErrorCode.TABLE_HISTORY_REWRITTEN);

        // K6: a file a version needs is gone when the job reads it: the job fails, never a partial
        // result
        tEnv.executeSql("CREATE TABLE db.k (id BIGINT) WITH ('format-version'='2')");
        tEnv.executeSql("INSERT INTO db.k VALUES (1)").await();
        tEnv.executeSql("INSERT INTO db.k VALUES (2)").await();
        Table k = iceberg.loadTable(TableIdentifier.of("db", "k"));
        String lost = version(k, 2).addedDataFiles(k.io()).iterator().next().location();
        k.io().deleteFile(lost);
        CdfException cdf =
                jobCdfError(
                        tEnv,
                        "SELECT * FROM db.`k$changes` /*+ OPTIONS('starting-version'='1') */");
        assertThat(cdf.code()).isEqualTo(CdfException.ErrorCode.VERSION_NOT_AVAILABLE);
        assertThat(cdf.getMessage())
                .startsWith(
                        "VERSION_NOT_AVAILABLE: Version 2 of table c.db.k is not "
                                + "available: a file it needs is missing (");

        h.refresh();
        h.expireSnapshots().expireOlderThan(version(h, 4).timestampMillis()).retainLast(1).commit();
        assertThat(
                        cdfError(
                                tEnv,
                                "SELECT * FROM db.`h$changes` /*+ OPTIONS('starting-version'='1') */"))
                .hasMessage(
                        "VERSION_NOT_AVAILABLE: Version 1 of table c.db.h is not available: the snapshots it "
                                + "needs have expired. Available versions: none (only version 4 is retained and its parent "
                                + "snapshot has expired). Start at version 5 or later, or retain snapshots longer (register "
                                + "a consumer so that changeflow's snapshot expiry keeps them).");
    }
}

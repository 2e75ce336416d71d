package dev.changeflow.jobs.flow;

import dev.changeflow.jobs.sql.FlinkSqlSession;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.SliceReplaceCommit;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.WriteResult;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ReplaceWhereRefresh} over a Hadoop catalog on disk with real Flink BATCH jobs
 * (docs/semantics.md S4): rows inside the predicate replaced, rows outside untouched (same data
 * files, no change rows), one commit per refresh, the predicate override, an empty query result,
 * duplicates, the change feed of a refresh, and the errors found before anything runs.
 */
class ReplaceWhereRefreshTest {

    private static final TableIdentifier TARGET = TableIdentifier.of("gold", "daily");
    private static final SqlPosition QUERY_AT = new SqlPosition("f.sql", 3, 3);
    private static final SqlPosition PRED_AT = new SqlPosition("f.sql", 2, 22);
    private static final String QUERY = "SELECT d, k, SUM(n) AS total FROM src.ev GROUP BY d, k";

    @TempDir Path warehouse;
    private CatalogSettings settings;

    @BeforeEach
    void sources() throws Exception {
        settings = CatalogSettings.localHadoop(warehouse);
        sql(
                "CREATE DATABASE IF NOT EXISTS src",
                "CREATE TABLE src.ev (d INT, k STRING, n BIGINT)",
                "CREATE TABLE src.nothing (d INT, k STRING, n BIGINT)");
        insert("INSERT INTO src.ev VALUES (1, 'a', 10), (2, 'a', 5), (2, 'b', 7), (3, 'a', 1)");
    }

    private ReplaceWhereRefresh.Definition def(String query, String predicate) {
        return new ReplaceWhereRefresh.Definition(
                TARGET,
                query,
                QUERY_AT,
                predicate,
                PRED_AT,
                "d INT, k STRING, total BIGINT",
                StreamingTableOptions.defaults());
    }

    private ReplaceWhereRefresh.Result refresh(String predicate, String override) throws Exception {
        return ReplaceWhereRefresh.refresh(
                def(QUERY, predicate),
                settings,
                override,
                override == null ? null : new SqlPosition("f.sql", 9, 30),
                1);
    }

    @Test
    void replacesTheSliceInOneCommitAndLeavesOtherRowsAlone() throws Exception {
        // backfill: the override covers every day
        ReplaceWhereRefresh.Result first = refresh("d >= 2", "d >= 1");
        assertThat(first.predicate()).isEqualTo("d >= 1");
        assertThat(first.readSnapshotId()).isNull();
        assertThat(first.insertedRows()).isEqualTo(4);
        assertThat(first.deletedRows()).isZero();
        assertThat(rows()).containsExactly("1,a,10", "2,a,5", "2,b,7", "3,a,1");
        Table t = table();
        long v1 = t.currentSnapshot().sequenceNumber();
        Set<String> filesBefore = dataFiles(t);

        // late data for day 1 (outside the slice) and day 2, a new day 4
        insert("INSERT INTO src.ev VALUES (1, 'a', 100), (2, 'a', 1), (4, 'c', 2)");
        ReplaceWhereRefresh.Result second = refresh("d >= 2", null);
        t.refresh();
        assertThat(second.readSnapshotId()).isEqualTo(first.snapshotId());
        assertThat(second.snapshotId()).isEqualTo(t.currentSnapshot().snapshotId());
        assertThat(t.currentSnapshot().parentId()).isEqualTo(first.snapshotId()); // one commit
        assertThat(t.currentSnapshot().summary())
                .containsEntry(ReplaceWhereRefresh.SUMMARY_PREDICATE, "d >= 2");
        // day 1 keeps 10 though the query now says 110: it is outside the predicate
        assertThat(rows()).containsExactly("1,a,10", "2,a,6", "2,b,7", "3,a,1", "4,c,2");
        assertThat(second.insertedRows()).isEqualTo(2); // (2,a,6), (4,c,2)
        assertThat(second.deletedRows()).isEqualTo(1); // (2,a,5)
        // rows outside the slice and unchanged rows stay in the files they were in
        assertThat(dataFiles(t)).containsAll(filesBefore);
        // the table has no identifier fields: a changed row is a delete and an insert (F2)
        assertThat(changes(t, v1 + 1))
                .containsExactlyInAnyOrder("delete 2,a,5", "insert 2,a,6", "insert 4,c,2");

        // nothing changed: no commit
        long current = t.currentSnapshot().snapshotId();
        ReplaceWhereRefresh.Result third = refresh("d >= 2", null);
        assertThat(third.snapshotId()).isNull();
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(current);
    }

    @Test
    void anEmptyQueryResultDeletesThePredicatesRows() throws Exception {
        refresh("d >= 2", "d >= 1");
        ReplaceWhereRefresh.Result r =
                ReplaceWhereRefresh.refresh(
                        def(
                                "SELECT d, k, SUM(n) AS total FROM src.nothing GROUP BY d, k",
                                "d >= 2"),
                        settings,
                        null,
                        null,
                        1);
        assertThat(rows()).containsExactly("1,a,10");
        assertThat(r.insertedRows()).isZero();
        assertThat(r.deletedRows()).isEqualTo(3);
        Table t = table();
        assertThat(changes(t, t.currentSnapshot().sequenceNumber()))
                .containsExactlyInAnyOrder("delete 2,a,5", "delete 2,b,7", "delete 3,a,1");
    }

    @Test
    void copiesOfARowAreCounted() throws Exception {
        insert("INSERT INTO src.ev VALUES (5, 'd', 1), (5, 'd', 1)");
        String rowsQuery = "SELECT d, k, n AS total FROM src.ev";
        ReplaceWhereRefresh.refresh(def(rowsQuery, "d = 5"), settings, null, null, 1);
        assertThat(rows()).containsExactly("5,d,1", "5,d,1");
        insert("INSERT INTO src.ev VALUES (5, 'd', 1)");
        ReplaceWhereRefresh.Result r =
                ReplaceWhereRefresh.refresh(def(rowsQuery, "d = 5"), settings, null, null, 1);
        assertThat(rows()).containsExactly("5,d,1", "5,d,1", "5,d,1");
        assertThat(r.deletedRows()).isEqualTo(1);
        assertThat(r.insertedRows()).isEqualTo(3);
        Table t = table();
        assertThat(changes(t, t.currentSnapshot().sequenceNumber()))
                .containsExactly("insert 5,d,1");
    }

    @Test
    void temporalFunctionsAreAllowed() throws Exception {
        ReplaceWhereRefresh.Result r =
                refresh("d >= 2 AND CURRENT_DATE > DATE '2000-01-01' AND NOW() IS NOT NULL", null);
        assertThat(r.insertedRows()).isEqualTo(3);
        assertThat(rows()).containsExactly("2,a,5", "2,b,7", "3,a,1");
    }

    @Test
    void aNonDeterministicPredicateIsRefusedAtTheCall() {
        assertThatThrownBy(() -> refresh("d >= 2 AND RAND() < 0.5", null))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.NON_DETERMINISTIC_PREDICATE);
                            assertThat(e.position()).isEqualTo(new SqlPosition("f.sql", 2, 33));
                        })
                .hasMessageContaining("calls RAND()");
        assertThatThrownBy(() -> refresh("d >= 2", "d >= 1 AND\n  uuid() <> ''"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.NON_DETERMINISTIC_PREDICATE);
                            assertThat(e.position()).isEqualTo(new SqlPosition("f.sql", 10, 3));
                        });
        assertThatThrownBy(() -> refresh("UNIX_TIMESTAMP() > 0", null))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.NON_DETERMINISTIC_PREDICATE));
        assertThat(settings.open().tableExists(TARGET)).isTrue();
        assertThat(table().currentSnapshot()).isNull(); // nothing written
    }

    @Test
    void badPredicatesAndQueriesAreRefusedWithCodes() {
        assertThatThrownBy(() -> refresh("dy >= 2", null))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.UNKNOWN_COLUMN);
                            assertThat(e.position()).isEqualTo(PRED_AT);
                        })
                .hasMessageContaining("dy");
        assertThatThrownBy(() -> refresh("d + 1", null))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.INVALID_QUERY));
        // a reserved word as a name: Flink's parser error, shortened, with the fix
        assertThatThrownBy(() -> refresh("day >= DATE '2024-01-01'", null))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.INVALID_QUERY))
                .hasMessageContaining("Encountered \"day\"")
                .hasMessageEndingWith(
                        " ('day' may be a reserved word of Flink SQL: quote the name with"
                                + " backticks, `day`, or rename the column)")
                .hasMessageNotContaining("Was expecting");
        assertThatThrownBy(
                        () ->
                                ReplaceWhereRefresh.refresh(
                                        def(
                                                "SELECT d, k, n AS total, n AS extra FROM src.ev",
                                                "d >= 2"),
                                        settings,
                                        null,
                                        null,
                                        1))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(Code.UNKNOWN_COLUMN);
                            assertThat(e.position()).isEqualTo(QUERY_AT);
                        })
                .hasMessageContaining("'extra'");
        assertThatThrownBy(
                        () ->
                                ReplaceWhereRefresh.refresh(
                                        def("SELECT d, k FROM src.ev", "d >= 2"),
                                        settings,
                                        null,
                                        null,
                                        1))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.UNKNOWN_COLUMN))
                .hasMessageContaining("'total'");
        assertThatThrownBy(
                        () ->
                                ReplaceWhereRefresh.refresh(
                                        def("SELECT * FROM src.nope", "d >= 2"),
                                        settings,
                                        null,
                                        null,
                                        1))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.UNKNOWN_TABLE));
    }

    /**
     * A commit validated from a snapshot the table has moved past fails, and nothing is committed:
     * a row appended by another writer after the refresh's read stays, no file of the refresh is
     * added.
     */
    @Test
    void aCommitAfterAnotherWritersCommitIsAConflict() throws Exception {
        refresh("d >= 2", null);
        Table t = table();
        long read = t.currentSnapshot().snapshotId();
        insert("INSERT INTO gold.daily VALUES (9, 'z', 9)");
        t.refresh();
        long other = t.currentSnapshot().snapshotId();
        DataFile file =
                DataFiles.builder(t.spec())
                        .withPath(warehouse.resolve("never-written.parquet").toString())
                        .withFormat(FileFormat.PARQUET)
                        .withFileSizeInBytes(100)
                        .withRecordCount(1)
                        .build();
        assertThatThrownBy(
                        () ->
                                SliceReplaceCommit.commit(
                                        t,
                                        read,
                                        List.of(WriteResult.builder().addDataFiles(file).build()),
                                        Map.of()))
                .isInstanceOf(SliceReplaceCommit.ConflictException.class)
                .hasMessageContaining("changed after the refresh read it at snapshot " + read)
                .hasMessageContaining("nothing was committed");
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(other);
        assertThat(rows()).containsExactly("2,a,5", "2,b,7", "3,a,1", "9,z,9");
    }

    /** The Java builder: required parts, then a refresh and a backfill through it. */
    @Test
    void theJavaBuilderRefreshesAndBackfills() throws Exception {
        assertThatThrownBy(() -> ReplaceWhereFlow.query(QUERY).catalog(settings).into("gold.daily"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(".where(");
        assertThatThrownBy(() -> ReplaceWhereFlow.query(QUERY).where("d >= 2").into("gold.daily"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(".catalog(");
        assertThatThrownBy(
                        () ->
                                ReplaceWhereFlow.query(QUERY)
                                        .where("d >= 2")
                                        .catalog(settings)
                                        .into("daily"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("namespace.name");
        ReplaceWhereFlow flow =
                ReplaceWhereFlow.query(QUERY)
                        .where("d >= 3")
                        .catalog(settings)
                        .parallelism(1)
                        .into("gold.daily");
        assertThat(flow.refresh().insertedRows()).isEqualTo(1);
        assertThat(rows()).containsExactly("3,a,1"); // a new table with the query's columns
        assertThat(flow.refreshWhere("d = 1").insertedRows()).isEqualTo(1);
        assertThat(rows()).containsExactly("1,a,10", "3,a,1");
        assertThatThrownBy(() -> flow.refreshWhere("d = 1 OR uuid() = ''"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e ->
                                assertThat(e.position())
                                        .isEqualTo(new SqlPosition("override", 1, 10)));
    }

    // ------------------------------------------------------------------------------ helpers

    private Table table() {
        return settings.open().loadTable(TARGET);
    }

    private List<String> rows() {
        Table t = table();
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read = IcebergGenerics.read(t).build()) {
            read.forEach(r -> out.add(r.get(0) + "," + r.get(1) + "," + r.get(2)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        out.sort(null);
        return out;
    }

    private static Set<String> dataFiles(Table t) {
        Set<String> out = new HashSet<>();
        try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                DataFile f = task.file();
                out.add(f.location());
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    private static List<String> changes(Table t, long version) {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> read =
                TableChanges.forTable(t)
                        .startingVersion(version)
                        .endingVersion(version)
                        .build()
                        .read()) {
            read.forEach(r -> out.add(r.get(3) + " " + r.get(0) + "," + r.get(1) + "," + r.get(2)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    private StreamTableEnvironment batch() {
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(env, EnvironmentSettings.inBatchMode());
        FlinkSqlSession.open(tEnv, settings, "changeflow", Map.of());
        return tEnv;
    }

    private void sql(String... statements) {
        StreamTableEnvironment tEnv = batch();
        for (String s : statements) {
            tEnv.executeSql(s);
        }
    }

    private void insert(String statement) throws Exception {
        batch().executeSql(statement).await();
    }
}

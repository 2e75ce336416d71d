package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.cdf.stream.ChangeFeedSource;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The streaming change feed on a MiniCluster (semantics.md F6, design.md "Order and pairing —
 * how"): 2 readers and 2 pairing subtasks, RocksDB, checkpoints. Every stream is compared with the
 * batch feed ({@link TableChanges}) over the same versions, per row identity and in order.
 */
class ChangeFeedStreamTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    /** Set once the injected failure happened (one failure per test run). */
    private static final AtomicBoolean FAILED = new AtomicBoolean();

    @TempDir static Path shared;

    /** The table of {@link #commitManyVersions}, built once for the tests that only read it. */
    private static Table many;

    private static TableLoader manyLoader;

    @TempDir Path tmp;

    private CdfTestTables tables;
    private Table table;
    private TableLoader loader;

    @BeforeAll
    static void buildManyVersions() {
        CdfTestTables sharedTables = new CdfTestTables(shared);
        many =
                sharedTables.create(
                        "many",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        commitManyVersions(sharedTables, many);
        manyLoader = TableLoader.fromHadoopTable(shared.resolve("db/many").toString());
    }

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(tmp.resolve("warehouse"));
        table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true"));
        loader = TableLoader.fromHadoopTable(tmp.resolve("warehouse/db/t").toString());
        FAILED.set(false);
    }

    /** Waits until no job runs any more, so that the temporary directory can be removed. */
    @AfterEach
    void awaitJobsTerminated(@InjectClusterClient ClusterClient<?> client) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!client.listJobs().get().stream().allMatch(j -> j.getJobState().isTerminalState())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("jobs still running: " + client.listJobs().get());
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    /**
     * A table of 25 versions: an append of 8 keys and of 2 more in a second file, 20 versions that
     * update keys 1..4 in turn (key 1 in every fourth version, so one key is updated in many
     * versions) and every fifth delete or re-insert key 8, a position delete, an empty commit and a
     * compaction-only rewrite.
     */
    private static void commitManyVersions(CdfTestTables tables, Table table) {
        Map<Long, Record> live = new TreeMap<>();
        List<Record> first = new ArrayList<>();
        for (long id = 1; id <= 8; id++) {
            first.add(row(id, "n" + id, id % 2 == 0 ? "eu" : "us"));
        }
        DataFile firstFile = tables.dataFile(table, first.toArray(new Record[0]));
        table.newAppend().appendFile(firstFile).commit();
        first.forEach(r -> live.put((Long) r.get(0), r));
        DataFile small = tables.dataFile(table, row(9L, "n9", "eu"), row(10L, "n10", "us"));
        table.newAppend().appendFile(small).commit();
        for (int i = 1; i <= 20; i++) {
            long id = (i - 1) % 4 + 1;
            Record after = row(id, "n" + id + "-v" + i, live.get(id).get(2).toString());
            List<Record> removed = new ArrayList<>(List.of(live.get(id)));
            List<Record> added = new ArrayList<>(List.of(after));
            if (i % 5 == 0) {
                if (live.containsKey(8L)) {
                    removed.add(live.remove(8L));
                } else {
                    Record back = row(8L, "n8", "eu");
                    added.add(back);
                    live.put(8L, back);
                }
            }
            live.put(id, after);
            table.newRowDelta()
                    .addDeletes(
                            tables.equalityDeletes(
                                    table, table.schema(), removed.toArray(new Record[0])))
                    .addRows(tables.dataFile(table, added.toArray(new Record[0])))
                    .commit();
        }
        // key 5 sits at position 4 of the first file and was never updated
        table.newRowDelta().addDeletes(tables.positionDeletes(table, firstFile, 4)).commit();
        live.remove(5L);
        table.newAppend().commit(); // an empty version
        DataFile copy = tables.dataFile(table, row(9L, "n9", "eu"), row(10L, "n10", "us"));
        table.newRewrite().rewriteFiles(Set.of(small), Set.of(copy)).commit();
        table.refresh();
    }

    private StreamExecutionEnvironment env() {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                tmp.resolve("checkpoints").toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(100);
        return env;
    }

    /** {@code "<version> <change type> (<id>, <name>, <region>)"} */
    private static String render(RowData row) {
        return row.getLong(4)
                + " "
                + row.getString(3)
                + " ("
                + row.getLong(0)
                + ", "
                + row.getString(1)
                + ", "
                + row.getString(2)
                + ")";
    }

    /** The batch feed's changes of versions {@code start..end}, grouped by id, in order. */
    private static Map<Long, List<String>> batch(Table table, long start, long end)
            throws Exception {
        Map<Long, List<String>> byId = new TreeMap<>();
        TableChanges changes =
                TableChanges.forTable(table).startingVersion(start).endingVersion(end).build();
        try (CloseableIterable<RowData> rows = changes.readRowData()) {
            for (RowData row : rows) {
                byId.computeIfAbsent(row.getLong(0), k -> new ArrayList<>()).add(render(row));
            }
        }
        return byId;
    }

    private static Map<Long, List<String>> byId(List<String> lines) {
        Map<Long, List<String>> byId = new TreeMap<>();
        for (String line : lines) {
            long id = Long.parseLong(line.substring(line.indexOf('(') + 1, line.indexOf(',')));
            byId.computeIfAbsent(id, k -> new ArrayList<>()).add(line);
        }
        return byId;
    }

    private static List<String> collectAll(DataStream<RowData> stream) throws Exception {
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it =
                stream.map(ChangeFeedStreamTest::render).setParallelism(1).executeAndCollect()) {
            it.forEachRemaining(lines::add);
        }
        return lines;
    }

    private static List<String> collect(DataStream<RowData> stream, int count, Runnable afterStart)
            throws Exception {
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it =
                stream.map(ChangeFeedStreamTest::render).setParallelism(1).executeAndCollect()) {
            afterStart.run();
            while (lines.size() < count && it.hasNext()) {
                lines.add(it.next());
            }
        }
        return lines;
    }

    /**
     * F6 + exactly once: a bounded stream from version 1 (one file admitted per cycle, so the
     * versions trickle in over many checkpoints) fails once in the middle and restarts from its
     * last checkpoint; its changes equal the batch feed's, per identity in the same order (versions
     * ascending, each preimage directly before its postimage), nothing lost or repeated.
     */
    @Test
    void boundedStreamWithARestoreEqualsTheBatchFeedPerIdentity() throws Exception {
        long latest = CdfTestTables.version(many);
        assertThat(latest).isEqualTo(25L);

        DataStream<RowData> stream =
                ChangeFeedSource.forTable(manyLoader)
                        .startingVersion(1)
                        .bounded(true)
                        .maxFilesPerCycle(1)
                        // 300 ms per version: version 12 is planned ~3.6 s after the start, after
                        // the first checkpoints even when the tasks deploy slowly under load (the
                        // planner does not wait for readers: at 50 ms a late reader could find
                        // every version planned and read them all before the first checkpoint
                        // completed, and the injected failure would never fire)
                        .monitorInterval(Duration.ofMillis(300))
                        .build(env());
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it =
                stream.map(new FailOnceAfterCheckpoint(12)).setParallelism(1).executeAndCollect()) {
            it.forEachRemaining(lines::add);
        }

        assertThat(FAILED).isTrue();
        Map<Long, List<String>> expected = batch(many, 1, latest);
        assertThat(byId(lines)).isEqualTo(expected);
        assertThat(expected.get(1L))
                .startsWith(
                        "1 insert (1, n1, us)",
                        "3 update_preimage (1, n1, us)",
                        "3 update_postimage (1, n1-v1, us)",
                        "7 update_preimage (1, n1-v1, us)",
                        "7 update_postimage (1, n1-v5, us)")
                .hasSize(11);
        assertThat(expected.get(8L))
                .containsExactly(
                        "1 insert (8, n8, eu)",
                        "7 delete (8, n8, eu)",
                        "12 insert (8, n8, eu)",
                        "17 delete (8, n8, eu)",
                        "22 insert (8, n8, eu)");
        assertThat(expected.get(5L))
                .containsExactly("1 insert (5, n5, us)", "23 delete (5, n5, us)");
        assertThat(expected.get(9L)).containsExactly("2 insert (9, n9, eu)");
    }

    /** Rows the {@link ListSink} received (one job at a time). */
    private static final List<String> SUNK = Collections.synchronizedList(new ArrayList<>());

    /**
     * F6: a stream stopped with a savepoint in the middle and started again from it (a new job, the
     * enumerator restored from its serialized state) re-emits nothing and loses nothing.
     */
    @Test
    void stopWithSavepointAndRestoreLosesAndRepeatsNothing() throws Exception {
        SUNK.clear();
        StreamExecutionEnvironment first = env();
        ChangeFeedSource.forTable(manyLoader)
                .startingVersion(1)
                .bounded(true)
                .maxFilesPerCycle(1)
                // 25 versions over ~7.5 s: the job is still reading when the loop below sees its
                // first rows and registration, even when its tasks deploy slowly under load
                .monitorInterval(Duration.ofMillis(300))
                .consumerId("savepoint-test")
                .build(first)
                .map(ChangeFeedStreamTest::render)
                .uid("render")
                .sinkTo(new ListSink())
                .uid("list-sink");
        JobClient job = first.executeAsync();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        // F7: while it runs, the consumer registers its position through the table's FileIO after a
        // completed checkpoint (checkpoints every 100 ms)
        ConsumerRegistry registry = ConsumerRegistry.forTable(many);
        while (SUNK.size() < 10 || registry.read("savepoint-test").isEmpty()) {
            assertThat(System.nanoTime())
                    .as("10 rows and a registered consumer within 60 s")
                    .isLessThan(deadline);
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
        assertThat(registry.read("savepoint-test").orElseThrow().nextVersion()).isBetween(1L, 26L);
        String savepoint =
                job.stopWithSavepoint(
                                false,
                                tmp.resolve("savepoints").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get();
        List<String> beforeStop = new ArrayList<>(SUNK);
        SUNK.clear();

        StreamExecutionEnvironment second = env();
        second.configure(new Configuration().set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint));
        ChangeFeedSource.forTable(manyLoader)
                .startingVersion(1)
                .bounded(true)
                .build(second)
                .map(ChangeFeedStreamTest::render)
                .uid("render")
                .sinkTo(new ListSink())
                .uid("list-sink");
        second.execute();

        List<String> all = new ArrayList<>(beforeStop);
        all.addAll(SUNK);
        assertThat(beforeStop.size()).isBetween(10, all.size() - 1);
        assertThat(byId(all)).isEqualTo(batch(many, 1, 25));
    }

    /** Appends every row to {@link #SUNK}. */
    private static final class ListSink implements Sink<String> {
        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String element, Context ctx) {
                    SUNK.add(element);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }

    /**
     * F6: without a starting position the current snapshot comes first as inserts tagged with its
     * version, then the changes committed while the stream runs.
     */
    @Test
    void initialSnapshotAsInsertsThenLaterChanges() throws Exception {
        table.newAppend()
                .appendFile(tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us")))
                .commit();
        table.newAppend().appendFile(tables.dataFile(table, row(3L, "c", "eu"))).commit();

        DataStream<RowData> stream =
                ChangeFeedSource.forTable(loader)
                        .monitorInterval(Duration.ofMillis(50))
                        .build(env());
        List<String> lines =
                collect(
                        stream,
                        6,
                        () ->
                                table.newRowDelta()
                                        .addDeletes(
                                                tables.equalityDeletes(
                                                        table, table.schema(), row(1L, "a", "eu")))
                                        .addRows(
                                                tables.dataFile(
                                                        table,
                                                        row(1L, "a2", "eu"),
                                                        row(4L, "d", "us")))
                                        .commit());

        assertThat(byId(lines))
                .isEqualTo(
                        Map.of(
                                1L,
                                        List.of(
                                                "2 insert (1, a, eu)",
                                                "3 update_preimage (1, a, eu)",
                                                "3 update_postimage (1, a2, eu)"),
                                2L, List.of("2 insert (2, b, us)"),
                                3L, List.of("2 insert (3, c, eu)"),
                                4L, List.of("3 insert (4, d, us)")));
    }

    /**
     * G1: the changelog of versions 2..3 — an update, an insert and a delete — as row kinds, with
     * {@code snapshot-then-changes} (the default: the table as of version 1 as +I first) and with
     * {@code changes-only}, each key's rows in version order.
     */
    @Test
    void changelogWithAndWithoutTheSnapshotBefore() throws Exception {
        table.newAppend()
                .appendFile(
                        tables.dataFile(
                                table, row(1L, "a", "eu"), row(2L, "b", "us"), row(3L, "c", "eu")))
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(1L, "a", "eu")))
                .addRows(tables.dataFile(table, row(1L, "a2", "eu"), row(4L, "d", "us")))
                .commit();
        table.newRowDelta()
                .addDeletes(tables.equalityDeletes(table, table.schema(), row(2L, "b", "us")))
                .commit();

        Map<Long, List<String>> snapshotThenChanges =
                byId(
                        changelog(
                                ChangeFeedSource.forTable(loader)
                                        .changelog(true)
                                        .startingVersion(2)
                                        .bounded(true)
                                        .monitorInterval(Duration.ofMillis(50))
                                        .build(env())));
        Map<Long, List<String>> changesOnly =
                byId(
                        changelog(
                                ChangeFeedSource.forTable(loader)
                                        .changelog(true)
                                        .options(
                                                Map.of(
                                                        "starting-version", "2",
                                                        "start-mode", "changes-only",
                                                        "bounded", "true",
                                                        "monitor-interval", "50 ms"))
                                        .build(env())));

        assertThat(snapshotThenChanges)
                .isEqualTo(
                        Map.of(
                                1L,
                                        List.of(
                                                "+I 1 (1, a, eu)",
                                                "-U 2 (1, a, eu)",
                                                "+U 2 (1, a2, eu)"),
                                2L, List.of("+I 1 (2, b, us)", "-D 3 (2, b, us)"),
                                3L, List.of("+I 1 (3, c, eu)"),
                                4L, List.of("+I 2 (4, d, us)")));
        assertThat(changesOnly)
                .isEqualTo(
                        Map.of(
                                1L, List.of("-U 2 (1, a, eu)", "+U 2 (1, a2, eu)"),
                                2L, List.of("-D 3 (2, b, us)"),
                                4L, List.of("+I 2 (4, d, us)")));
    }

    /**
     * The rows of a bounded changelog stream: {@code "<row kind> <_commit_version> (<columns>)"}.
     */
    private static List<String> changelog(DataStream<RowData> stream) throws Exception {
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it =
                stream.map(
                                row ->
                                        row.getRowKind().shortString()
                                                + " "
                                                + row.getLong(3)
                                                + " ("
                                                + row.getLong(0)
                                                + ", "
                                                + row.getString(1)
                                                + ", "
                                                + row.getString(2)
                                                + ")")
                        .setParallelism(1)
                        .executeAndCollect()) {
            it.forEachRemaining(lines::add);
        }
        return lines;
    }

    /** F6 {@code latest}: only versions committed after the stream was built. */
    @Test
    void latestReadsOnlyLaterCommits() throws Exception {
        table.newAppend().appendFile(tables.dataFile(table, row(1L, "a", "eu"))).commit();

        DataStream<RowData> stream =
                ChangeFeedSource.forTable(loader)
                        .options(Map.of("starting-version", "latest", "monitor-interval", "50 ms"))
                        .build(env());
        List<String> lines =
                collect(
                        stream,
                        2,
                        () ->
                                table.newRowDelta()
                                        .addDeletes(
                                                tables.equalityDeletes(
                                                        table, table.schema(), row(1L, "a", "eu")))
                                        .addRows(tables.dataFile(table, row(2L, "b", "us")))
                                        .commit());

        assertThat(lines).containsExactlyInAnyOrder("2 delete (1, a, eu)", "2 insert (2, b, us)");
    }

    /**
     * F6: an explicit starting version in bounded mode reads exactly that version to the latest at
     * start (the batch feed's range) and finishes; latest + 1 reads nothing and finishes.
     */
    @Test
    void explicitStartingVersionBounded() throws Exception {
        List<String> fromTwenty =
                collectAll(
                        ChangeFeedSource.forTable(manyLoader)
                                .startingVersion(20)
                                .bounded(true)
                                .monitorInterval(Duration.ofMillis(50))
                                .build(env()));
        List<String> afterLatest =
                collectAll(
                        ChangeFeedSource.forTable(manyLoader)
                                .startingVersion(26)
                                .bounded(true)
                                .monitorInterval(Duration.ofMillis(50))
                                .build(env()));

        assertThat(byId(fromTwenty)).isEqualTo(batch(many, 20, 25));
        assertThat(fromTwenty).hasSize(8);
        assertThat(afterLatest).isEmpty();
    }

    /**
     * F2 with row lineage: a v3 table without identifier fields (the versions of {@link
     * TableChangesRowLineageTest#commitLineageVersions}, then a copy-on-write rewrite of file D by
     * a writer that keeps no lineage) streamed with 2 readers and 2 pairing subtasks keyed by
     * {@code _row_id} gives exactly the batch feed's changes, each row's in version order.
     */
    @Test
    void rowLineageStreamEqualsTheBatchFeed() throws Exception {
        Schema s = CdfTestTables.KEYLESS_SCHEMA;
        Table lineage = tables.create("lineage", s, PartitionSpec.unpartitioned(), 3, Map.of());
        TableChangesRowLineageTest.commitLineageVersions(tables, lineage);
        lineage.refresh();
        DataFile d = null;
        for (DataFile added : lineage.currentSnapshot().addedDataFiles(lineage.io())) {
            d = added;
        }
        lineage.newOverwrite()
                .deleteFile(d)
                .addFile(tables.dataFile(lineage, row(s, 5L, "e2", "us"), row(s, 7L, "g2", "eu")))
                .commit();
        TableLoader lineageLoader =
                TableLoader.fromHadoopTable(tmp.resolve("warehouse/db/lineage").toString());

        List<String> lines =
                collectAll(
                        ChangeFeedSource.forTable(lineageLoader)
                                .startingVersion(1)
                                .bounded(true)
                                .maxFilesPerCycle(1)
                                .monitorInterval(Duration.ofMillis(50))
                                .build(env()));

        assertThat(lines)
                .containsExactlyInAnyOrder(
                        "1 insert (1, a, eu)",
                        "1 insert (2, b, us)",
                        "1 insert (3, c, eu)",
                        "1 insert (4, d, us)",
                        "1 insert (5, e, eu)",
                        "2 update_preimage (2, b, us)",
                        "2 update_postimage (2, b2, us)",
                        "2 update_preimage (3, c, eu)",
                        "2 update_postimage (3, c2, us)",
                        "2 delete (4, d, us)",
                        "2 insert (6, f, eu)",
                        "4 delete (1, a, eu)",
                        "4 update_preimage (5, e, eu)",
                        "4 update_postimage (5, e2, us)",
                        "4 insert (7, g, eu)",
                        "5 delete (5, e2, us)",
                        "5 delete (7, g, eu)",
                        "5 insert (5, e2, us)",
                        "5 insert (7, g2, eu)");
        Map<Long, List<String>> batch = batch(lineage, 1, 5);
        assertThat(lines)
                .containsExactlyInAnyOrderElementsOf(
                        batch.values().stream().flatMap(List::stream).toList());
        // per row (_row_id) in version order; ids 1, 2, 3, 4 and 6 each kept one _row_id throughout
        Map<Long, List<String>> byId = byId(lines);
        for (long id : new long[] {1, 2, 3, 4, 6}) {
            assertThat(byId.get(id)).isEqualTo(batch.get(id));
        }
        assertThat(byId.get(5L))
                .containsSubsequence(
                        "1 insert (5, e, eu)",
                        "4 update_preimage (5, e, eu)",
                        "4 update_postimage (5, e2, us)",
                        "5 delete (5, e2, us)");
        assertThat(byId.get(7L)).containsSubsequence("4 insert (7, g, eu)", "5 delete (7, g, eu)");
    }

    /** Fails the job once, at the first row of version >= {@code version} after a checkpoint. */
    private static final class FailOnceAfterCheckpoint extends RichMapFunction<RowData, String>
            implements CheckpointListener {
        private final long version;
        private boolean checkpointed;

        FailOnceAfterCheckpoint(long version) {
            this.version = version;
        }

        @Override
        public String map(RowData row) {
            if (checkpointed && row.getLong(4) >= version && FAILED.compareAndSet(false, true)) {
                throw new IllegalStateException("injected failure at " + render(row));
            }
            return render(row);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            checkpointed = true;
        }
    }
}

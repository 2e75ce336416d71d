package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.cdf.retention.FlinkCommitters;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static dev.changeflow.jobs.maintain.MaintenanceTestTables.stamp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link InJobExpiryFunction} on a real Hadoop table and the embedded SQLite lock (M2, F7): a
 * registered live consumer's versions and the Flink committer's newest commit (and everything after
 * it) are kept, older snapshots expired; the data manifests are rewritten past the threshold into
 * one {@code replace} snapshot without change rows; the lock is honoured and released; a run that
 * fails is reported and does not fail the job.
 */
class InJobExpiryFunctionTest {
    private static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.IntegerType.get()),
                            Types.NestedField.optional(2, "name", Types.StringType.get())),
                    Set.of(1));
    private static final TableIdentifier ID = TableIdentifier.of("db", "t");

    @TempDir Path warehouse;

    private CatalogSettings settings;
    private Table table;
    private TriggerLockFactory locks;
    private int files;

    @BeforeEach
    void createTable() {
        settings = CatalogSettings.localHadoop(warehouse);
        Catalog catalog = settings.open();
        table =
                catalog.createTable(
                        ID, SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
        locks =
                InJobMaintenance.lockFactory(
                        settings, ID, TableMaintenanceOptions.builder().enabled(true).build());
        locks.open();
    }

    @AfterEach
    void closeLocks() throws Exception {
        locks.close();
    }

    @Test
    void keepsWhatTheConsumerAndTheCommitterNeedExpiresTheRestAndRewritesManifests()
            throws Exception {
        append(1, Map.of()); // v1
        append(2, stamp("job-1", "op-a", 1)); // v2
        append(3, Map.of()); // v3
        append(4, stamp("job-1", "op-a", 2)); // v4: the committer's newest commit
        append(5, Map.of()); // v5, e.g. another writer
        append(6, Map.of()); // v6
        Map<Long, Long> ids = snapshotIds();
        // the consumer will read version 3 next: it needs version 2 (the parent) on
        ConsumerRegistry.forTable(table).write("reader", 3, Instant.now());

        try (OneInputStreamOperatorTestHarness<Long, String> h = harness(3, Duration.ZERO)) {
            h.processElement(0L, 0);
            table.refresh();
            assertThat(h.extractOutputValues())
                    .containsExactly(
                            "in-job expiry of "
                                    + table.name()
                                    + ": no dangling delete file; expired 1 snapshot(s) (versions"
                                    + " 1), oldest retained"
                                    + " version 2, kept for consumers from 2, for Flink committers"
                                    + " from 4, 1 file(s) deleted; data manifests rewritten 6 -> 1"
                                    + " (version 7)");
            Snapshot rewrite = table.currentSnapshot();
            assertThat(rewrite.operation()).isEqualTo(DataOperations.REPLACE);
            assertThat(rewrite.sequenceNumber()).isEqualTo(7);
            assertThat(retainedIds())
                    .containsExactly(
                            ids.get(2L),
                            ids.get(3L),
                            ids.get(4L),
                            ids.get(5L),
                            ids.get(6L),
                            rewrite.snapshotId());
            assertThat(rewrite.dataManifests(table.io())).hasSize(1);
            assertThat(rows()).containsExactly("1,r1", "2,r2", "3,r3", "4,r4", "5,r5", "6,r6");
            // the consumer resumes at version 3: exactly its inserts, nothing for the rewrite
            assertThat(changes(3))
                    .containsExactly(
                            "3:3,r3,insert", "4:4,r4,insert", "5:5,r5,insert", "6:6,r6,insert");

            // the consumer read everything: the committer's newest commit still bounds the expiry
            ConsumerRegistry.forTable(table).write("reader", 8, Instant.now());
            h.processElement(1L, 1);
            table.refresh();
            assertThat(h.extractOutputValues().get(1))
                    .isEqualTo(
                            "in-job expiry of "
                                    + table.name()
                                    + ": no dangling delete file; expired 2 snapshot(s) (versions"
                                    + " 2-3), oldest retained"
                                    + " version 4, kept for consumers from 7, for Flink committers"
                                    + " from 4, 2 file(s) deleted; 1 data manifest(s), at most 3:"
                                    + " not rewritten");
            assertThat(retainedIds())
                    .containsExactly(ids.get(4L), ids.get(5L), ids.get(6L), rewrite.snapshotId());
            assertThat(
                            FlinkCommitters.live(table, Instant.now(), Duration.ofDays(7)).stream()
                                    .map(c -> c.newest().snapshotId())
                                    .toList())
                    .as("the committer's restore walk still finds its newest commit")
                    .containsExactly(ids.get(4L));
            assertThat(rows()).containsExactly("1,r1", "2,r2", "3,r3", "4,r4", "5,r5", "6,r6");
            assertThat(changes(5)).containsExactly("5:5,r5,insert", "6:6,r6,insert");
        }
        assertThat(locks.createLock().isHeld()).as("the lock is released").isFalse();
    }

    @Test
    void aHeldLockSkipsTheTickAndStaysHeld() throws Exception {
        append(1, Map.of());
        append(2, Map.of());
        append(3, Map.of());
        List<Long> before = retainedIds();
        try (OneInputStreamOperatorTestHarness<Long, String> h = harness(0, Duration.ZERO)) {
            TriggerLockFactory.Lock lock = locks.createLock();
            assertThat(lock.tryLock()).isTrue(); // a compaction runs
            h.processElement(0L, 0);
            assertThat(lock.isHeld()).as("someone else's lock is not released").isTrue();
            lock.unlock();

            TriggerLockFactory.Lock recovery = locks.createRecoveryLock();
            assertThat(recovery.tryLock()).isTrue(); // a restored TableMaintenance recovers
            h.processElement(1L, 1);
            recovery.unlock();

            String skipped =
                    "in-job expiry of " + table.name() + ": skipped, the maintenance lock is held";
            assertThat(h.extractOutputValues()).containsExactly(skipped, skipped);
            assertThat(retainedIds()).isEqualTo(before);

            h.processElement(2L, 2);
            assertThat(h.extractOutputValues().get(2))
                    .startsWith(
                            "in-job expiry of "
                                    + table.name()
                                    + ": no dangling delete file; expired 2 snapshot(s)"
                                    + " (versions 1-2)");
            assertThat(retainedIds()).containsExactly(before.get(2));
            assertThat(lock.isHeld()).isFalse();
        }
    }

    @Test
    void ticksDuringTheFirstRunDelayAreIgnored() throws Exception {
        append(1, Map.of());
        append(2, Map.of());
        List<Long> before = retainedIds();
        try (OneInputStreamOperatorTestHarness<Long, String> h = harness(1, Duration.ofHours(1))) {
            h.processElement(0L, 0);
            assertThat(h.extractOutputValues()).isEmpty();
        }
        assertThat(retainedIds()).isEqualTo(before);
    }

    @Test
    void aMalformedConsumerFileIsReportedExpiresNothingAndDoesNotFailTheJob() throws Exception {
        append(1, Map.of());
        append(2, Map.of());
        List<Long> before = retainedIds();
        String bad = ConsumerRegistry.forTable(table).location("broken");
        try (PositionOutputStream out = table.io().newOutputFile(bad).createOrOverwrite()) {
            out.write("{not json".getBytes(StandardCharsets.UTF_8));
        }
        try (OneInputStreamOperatorTestHarness<Long, String> h = harness(0, Duration.ZERO)) {
            h.processElement(0L, 0);
            assertThat(h.extractOutputValues()).hasSize(1);
            assertThat(h.extractOutputValues().get(0))
                    .startsWith("in-job expiry of " + table.name() + " failed: ")
                    .contains("broken.json");
        }
        table.refresh();
        assertThat(retainedIds()).isEqualTo(before);
        assertThat(locks.createLock().isHeld()).isFalse();
    }

    /**
     * M1: a tick removes the delete files a compaction left behind that no live data file can see
     * (the scenario of {@code DanglingDeletesTest}: the equality deletes of versions 2 and 3 go;
     * the one of version 5, committed while the compaction ran, still applies), in one {@code
     * replace} version without change rows, rows unchanged.
     */
    @Test
    void removesTheDeleteFilesACompactionLeftDangling() throws Exception {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("compacted");
        DataFile d1 =
                tables.dataFile(
                        t,
                        MaintenanceTestTables.row(1, "a"),
                        MaintenanceTestTables.row(2, "b"),
                        MaintenanceTestTables.row(3, "c"),
                        MaintenanceTestTables.row(4, "d"));
        t.newAppend().appendFile(d1).commit(); // v1
        tables.ingest(t, List.of(MaintenanceTestTables.row(1, "a")), List.of()); // v2
        DataFile d3 = tables.dataFile(t, MaintenanceTestTables.row(2, "B"));
        t.newRowDelta()
                .addDeletes(tables.equalityDeletes(t, MaintenanceTestTables.row(2, "b")))
                .addRows(d3)
                .commit(); // v3
        t.newRowDelta().addDeletes(tables.positionDeletes(t, d1, 2)).commit(); // v4
        Snapshot planned = t.currentSnapshot();
        tables.ingest(t, List.of(MaintenanceTestTables.row(4, "d")), List.of()); // v5, racing
        DataFile compacted =
                tables.dataFile(
                        t, MaintenanceTestTables.row(2, "B"), MaintenanceTestTables.row(4, "d"));
        // v6: the compaction planned on v4 (manifests scanned on one thread: what Iceberg's
        // commit drops itself is then the same every run, see MaintenanceTestTables.compact)
        MaintenanceTestTables.compact(t, planned, List.of(d1, d3), compacted);
        // Iceberg's rewrite commit left the equality deletes of versions 2 and 3 behind
        assertThat(deleteSequenceNumbers(t)).containsExactly(2L, 3L, 5L);
        TableIdentifier id = TableIdentifier.of("db", "compacted");
        try (OneInputStreamOperatorTestHarness<Long, String> h =
                ProcessFunctionTestHarnesses.forProcessFunction(
                        new InJobExpiryFunction(
                                TableLoader.fromCatalog(settings.loader(), id),
                                InJobMaintenance.lockFactory(
                                        settings, id, TableMaintenanceOptions.builder().build()),
                                null,
                                0,
                                0,
                                ChangeFeedExpiry.DEFAULT_CONSUMER_EXPIRY,
                                Duration.ZERO))) {
            h.processElement(0L, 0);
            assertThat(h.extractOutputValues())
                    .containsExactly(
                            "in-job expiry of changeflow.db.compacted: 2 dangling delete file(s)"
                                    + " removed (version 7); expiry off");
        }
        t.refresh();
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(7);
        assertThat(deleteSequenceNumbers(t)).containsExactly(5L);
        assertThat(MaintenanceTestTables.rows(t)).containsExactly("(2, B)");
        assertThat(MaintenanceTestTables.changes(t, 7, 7)).isEmpty();
        assertThat(MaintenanceTestTables.changes(t, 1, 7))
                .containsExactly(
                        "1 insert (1, a)",
                        "1 insert (2, b)",
                        "1 insert (3, c)",
                        "1 insert (4, d)",
                        "2 delete (1, a)",
                        "3 update_preimage (2, b)",
                        "3 update_postimage (2, B)",
                        "4 delete (3, c)",
                        "5 delete (4, d)");
    }

    /**
     * M1, "after a compaction": with full runs an hour apart, a tick finds the compaction Iceberg's
     * {@code RewriteDataFiles} task (configured as the in-job maintenance does) committed since the
     * previous tick and removes the delete files it left dangling, without expiring anything; a
     * tick without a new compaction does nothing, and one that finds the lock held waits for the
     * next.
     *
     * <p>v1 inserts 1..3, v2 deletes 1, v3 updates 2 to B, v4 deletes 3; v5 is the compaction,
     * planned on v4: its file has data sequence number 4, so the equality delete of v4 applies to
     * no live data file any more (an equality delete applies to older sequence numbers only), but
     * Iceberg's commit drops at most the delete files older than every live data file (2 and 3; how
     * many of them is a race among its worker threads), and the tick removes whatever it left.
     */
    @Test
    void aTickAfterACompactionRemovesItsDanglingDeletesBeforeTheNextFullRun() throws Exception {
        MaintenanceTestTables tables = new MaintenanceTestTables(warehouse);
        Table t = tables.create("ticked");
        tables.insert(
                t,
                MaintenanceTestTables.row(1, "a"),
                MaintenanceTestTables.row(2, "b"),
                MaintenanceTestTables.row(3, "c"));
        tables.ingest(t, List.of(MaintenanceTestTables.row(1, "a")), List.of());
        tables.ingest(
                t,
                List.of(MaintenanceTestTables.row(2, "b")),
                List.of(MaintenanceTestTables.row(2, "B")));
        tables.ingest(t, List.of(MaintenanceTestTables.row(3, "c")), List.of());
        TableIdentifier id = TableIdentifier.of("db", "ticked");
        TriggerLockFactory tickedLocks =
                InJobMaintenance.lockFactory(
                        settings, id, TableMaintenanceOptions.builder().build());
        tickedLocks.open();
        try (OneInputStreamOperatorTestHarness<Long, String> h =
                ProcessFunctionTestHarnesses.forProcessFunction(
                        new InJobExpiryFunction(
                                TableLoader.fromCatalog(settings.loader(), id),
                                InJobMaintenance.lockFactory(
                                        settings, id, TableMaintenanceOptions.builder().build()),
                                Duration.ofMillis(1),
                                0,
                                1,
                                ChangeFeedExpiry.DEFAULT_CONSUMER_EXPIRY,
                                Duration.ZERO,
                                Duration.ofHours(1)))) {
            h.processElement(0L, 0);
            assertThat(h.extractOutputValues()).as("no compaction yet").isEmpty();

            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            OrphanFileRemoval.runOnce(
                    env,
                    TableLoader.fromCatalog(settings.loader(), id),
                    t,
                    RewriteDataFiles.builder().deleteFileThreshold(1).scheduleOnCommitCount(1),
                    "in-job compaction task");
            t.refresh();
            assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
            assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(5);
            // Iceberg's commit drops some of the delete files older than every live data file (2,
            // 3): which ones depends on the order its worker threads filter the delete manifests
            // in (see MaintenanceTestTables.compact); never the one of version 4, which is not
            List<Long> left = deleteSequenceNumbers(t);
            assertThat(left).as("left by Iceberg's commit").contains(4L).isSubsetOf(2L, 3L, 4L);
            String line =
                    "in-job maintenance of changeflow.db.ticked after the compaction of version 5: "
                            + left.size()
                            + " dangling delete file(s) removed (version 6)";

            TriggerLockFactory.Lock held = tickedLocks.createLock();
            assertThat(held.tryLock()).isTrue();
            h.processElement(1L, 1);
            assertThat(h.extractOutputValues()).as("lock held: wait").isEmpty();
            t.refresh();
            assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(5);
            held.unlock();

            h.processElement(2L, 2);
            assertThat(h.extractOutputValues()).containsExactly(line);
            t.refresh();
            assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
            assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(6);
            assertThat(deleteSequenceNumbers(t)).isEmpty();

            h.processElement(3L, 3);
            assertThat(h.extractOutputValues()).as("nothing new").containsExactly(line);
        } finally {
            tickedLocks.close();
        }
        t.refresh();
        assertThat(t.currentSnapshot().sequenceNumber()).isEqualTo(6);
        // no full run: nothing expired although every snapshot is older than 1 ms
        assertThat(SnapshotUtil.currentAncestorIds(t)).hasSize(6);
        assertThat(MaintenanceTestTables.rows(t)).containsExactly("(2, B)");
        assertThat(MaintenanceTestTables.changes(t, 5, 6)).isEmpty();
        assertThat(MaintenanceTestTables.changes(t, 1, 6))
                .containsExactly(
                        "1 insert (1, a)",
                        "1 insert (2, b)",
                        "1 insert (3, c)",
                        "2 delete (1, a)",
                        "3 update_preimage (2, b)",
                        "3 update_postimage (2, B)",
                        "4 delete (3, c)");
    }

    /** Data sequence numbers of the live delete files, ascending. */
    private static List<Long> deleteSequenceNumbers(Table t) throws IOException {
        List<Long> out = new ArrayList<>();
        for (ManifestFile m : t.currentSnapshot().deleteManifests(t.io())) {
            try (ManifestReader<DeleteFile> r =
                    ManifestFiles.readDeleteManifest(m, t.io(), t.specs())) {
                for (DeleteFile f : r) {
                    out.add(f.dataSequenceNumber());
                }
            }
        }
        out.sort(null);
        return out;
    }

    private OneInputStreamOperatorTestHarness<Long, String> harness(
            int manifestCount, Duration firstRunDelay) throws Exception {
        return ProcessFunctionTestHarnesses.forProcessFunction(
                new InJobExpiryFunction(
                        TableLoader.fromCatalog(settings.loader(), ID),
                        InJobMaintenance.lockFactory(
                                settings, ID, TableMaintenanceOptions.builder().build()),
                        Duration.ofMillis(1),
                        0,
                        manifestCount,
                        ChangeFeedExpiry.DEFAULT_CONSUMER_EXPIRY,
                        firstRunDelay));
    }

    private void append(int id, Map<String, String> summary) throws Exception {
        Record row = GenericRecord.create(SCHEMA);
        row.setField("id", id);
        row.setField("name", "r" + id);
        DataWriter<Record> writer =
                new GenericFileWriterFactory.Builder(table)
                        .build()
                        .newDataWriter(
                                OutputFileFactory.builderFor(table, 1, ++files)
                                        .format(FileFormat.PARQUET)
                                        .build()
                                        .newOutputFile(),
                                table.spec(),
                                null);
        try (writer) {
            writer.write(row);
        }
        DataFile file = writer.toDataFile();
        AppendFiles append = table.newFastAppend().appendFile(file);
        summary.forEach(append::set);
        append.commit();
        table.refresh();
    }

    /** Snapshot id by version. */
    private Map<Long, Long> snapshotIds() {
        Map<Long, Long> ids = new java.util.TreeMap<>();
        table.snapshots().forEach(s -> ids.put(s.sequenceNumber(), s.snapshotId()));
        return ids;
    }

    /** The ids of every snapshot the table keeps, in version order. */
    private List<Long> retainedIds() {
        table.refresh();
        List<Snapshot> all = new ArrayList<>();
        table.snapshots().forEach(all::add);
        all.sort(java.util.Comparator.comparingLong(Snapshot::sequenceNumber));
        List<Long> out = new ArrayList<>();
        all.forEach(s -> out.add(s.snapshotId()));
        assertThat(out.size())
                .as("every snapshot is on main")
                .isEqualTo(
                        (int)
                                java.util.stream.StreamSupport.stream(
                                                SnapshotUtil.currentAncestors(table).spliterator(),
                                                false)
                                        .count());
        return out;
    }

    private List<String> rows() throws Exception {
        TreeSet<String> out = new TreeSet<>();
        try (CloseableIterable<Record> rows =
                org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
            rows.forEach(r -> out.add(r.getField("id") + "," + r.getField("name")));
        }
        return new ArrayList<>(out);
    }

    /** version:id,name,change type of every change from {@code version} on, in version order. */
    private List<String> changes(long version) throws Exception {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> rows =
                TableChanges.forTable(table).startingVersion(version).build().read()) {
            for (Record r : rows) {
                out.add(
                        r.getField("_commit_version")
                                + ":"
                                + r.getField("id")
                                + ","
                                + r.getField("name")
                                + ","
                                + r.getField("_change_type"));
            }
        }
        out.sort(null);
        return out;
    }
}

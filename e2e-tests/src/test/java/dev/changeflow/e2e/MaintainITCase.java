package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.jobs.maintain.TableCompaction;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code changeflow maintain --rewrite} (M1) on an SCD1 streaming table written by five local
 * ingest runs ({@link LocalIngest}, plain JSON with inserts, updates, deletes and a re-insert),
 * real Hadoop catalog on disk:
 *
 * <ol>
 *   <li>runs 1–2, then {@code maintain TABLE --rewrite} through the command line (compaction in the
 *       middle);
 *   <li>run 3; then the race: a {@link Table} is loaded at version S, run 4 commits an update and a
 *       delete (equality deletes) at S+1, then {@link TableCompaction#rewrite} of the stale table
 *       (planned at S) commits;
 *   <li>run 5.
 * </ol>
 *
 * Checked: (a) the compaction versions yield no change rows (F2); (b) for every version v,
 * state(v−1) with the changes of v applied equals state(v), exact rows; (c) the rows deleted and
 * updated at S+1 are present in the files the late rewrite wrote, yet do not come back, because
 * those files carry the data sequence number of S. {@code maintain --orphans} (Iceberg's Flink
 * {@code DeleteOrphanFiles}, M2) deletes a planted unreferenced data file older than three days and
 * keeps a younger one, every referenced data file (however old) and the consumer registry. Last,
 * {@code maintain --expire} keeps the versions a registered consumer still needs (F7) and the
 * change feed over them reads as before.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MaintainITCase {
    private static final TableIdentifier ITEMS = TableIdentifier.of("shop", "items");

    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: maintain",
                    "format: json",
                    "namespace: shop",
                    "flows:",
                    "  - table: items",
                    "    keys: [id]",
                    "    sequence-by: seq",
                    "    schema: 'id INT, name STRING, op STRING, seq BIGINT'",
                    "    columns: '* EXCEPT (op)'",
                    "    apply-as-delete-when: \"op = 'DELETE'\"");

    /**
     * One MiniCluster for the five ingest runs and the maintenance jobs (saves a start per job).
     */
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir static Path tmp;

    private static Catalog catalog;
    private static long firstCompaction;
    private static long plannedAt;
    private static long raceCompaction;
    private static List<String> lateRewriteFileRows;

    @BeforeAll
    static void writeAndMaintain() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();

        ingest(
                warehouse,
                input,
                1,
                ins(1, "a", 1),
                ins(2, "b", 2),
                ins(3, "c", 3),
                ins(4, "d", 4),
                ins(5, "e", 5),
                ins(6, "f", 6));
        ingest(warehouse, input, 2, ins(1, "a2", 7), del(3, 8), ins(7, "g", 9));
        Table t = catalog.loadTable(ITEMS);
        assertThat(t.currentSnapshot().summary().get("total-data-files")).isNotEqualTo("1");

        // compaction in the middle, through the command line
        assertThat(
                        Main.execute(
                                "maintain",
                                ITEMS.toString(),
                                "--rewrite",
                                "--warehouse",
                                warehouse.toString()))
                .isEqualTo(0);
        t.refresh();
        assertThat(t.currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(t.currentSnapshot().summary().get("total-data-files")).isEqualTo("1");
        firstCompaction = t.currentSnapshot().sequenceNumber();

        ingest(warehouse, input, 3, ins(8, "h", 10), ins(2, "b2", 11), del(5, 12));

        // the race: plan at S, an ingest commits deletes at S+1, then the rewrite commits
        Table stale = catalog.loadTable(ITEMS);
        plannedAt = stale.currentSnapshot().sequenceNumber();
        ingest(warehouse, input, 4, del(2, 13), ins(4, "d2", 14), del(6, 15));
        TableCompaction.Result r = TableCompaction.rewrite(null, stale);
        assertThat(r.plannedVersion).isEqualTo(plannedAt);
        assertThat(r.committedVersion).isNotNull();
        raceCompaction = r.committedVersion;
        Table now = catalog.loadTable(ITEMS);
        Snapshot replace = now.currentSnapshot();
        assertThat(replace.operation()).isEqualTo(DataOperations.REPLACE);
        lateRewriteFileRows = new ArrayList<>();
        for (DataFile f : replace.addedDataFiles(now.io())) {
            assertThat(f.dataSequenceNumber())
                    .as("data sequence number of %s", f.location())
                    .isEqualTo(plannedAt);
            lateRewriteFileRows.addAll(readFile(now, f));
        }

        ingest(warehouse, input, 5, ins(3, "c2", 16), ins(9, "i", 17), ins(8, "h2", 18));
    }

    @Test
    void compactionVersionsYieldNoChanges() {
        Table t = catalog.loadTable(ITEMS);
        for (long v : List.of(firstCompaction, raceCompaction)) {
            assertThat(t.snapshots())
                    .filteredOn(s -> s.sequenceNumber() == v)
                    .extracting(Snapshot::operation)
                    .containsExactly(DataOperations.REPLACE);
            assertThat(changes(t, v)).as("changes of compaction version %d", v).isEmpty();
        }
    }

    @Test
    void everyVersionIsThePreviousStatePlusItsChanges() {
        Table t = catalog.loadTable(ITEMS);
        List<Snapshot> versions = new ArrayList<>();
        SnapshotUtil.currentAncestors(t).forEach(versions::add);
        java.util.Collections.reverse(versions);
        List<String> before = new ArrayList<>();
        int changedVersions = 0;
        for (Snapshot s : versions) {
            long v = s.sequenceNumber();
            List<String> state = new ArrayList<>(before);
            List<String> changes = changes(t, v);
            for (String c : changes) {
                String type = c.substring(0, c.indexOf(' '));
                String row = c.substring(c.indexOf(' ') + 1);
                if (type.equals("insert") || type.equals("update_postimage")) {
                    state.add(row);
                } else {
                    assertThat(state.remove(row)).as("%s at version %d", c, v).isTrue();
                }
            }
            List<String> after = rows(TableRows.readAtVersion(t, v));
            assertThat(state)
                    .as("state at version %d (%s)", v, s.operation())
                    .containsExactlyInAnyOrderElementsOf(after);
            before = after;
            changedVersions += changes.isEmpty() ? 0 : 1;
        }
        assertThat(changedVersions).isEqualTo(5);
        assertThat(before)
                .containsExactlyInAnyOrder(
                        "1,a2,7", "3,c2,16", "4,d2,14", "7,g,9", "8,h2,18", "9,i,17");
    }

    @Test
    void equalityDeleteCommittedDuringARewriteStillApplies() {
        Table t = catalog.loadTable(ITEMS);
        // the late rewrite copied the rows as of S, including those deleted or updated at S+1
        assertThat(lateRewriteFileRows)
                .containsExactlyInAnyOrder(
                        "1,a2,7", "2,b2,11", "4,d,4", "6,f,6", "7,g,9", "8,h,10");
        assertThat(rows(TableRows.readAtVersion(t, raceCompaction)))
                .containsExactlyInAnyOrder("1,a2,7", "4,d2,14", "7,g,9", "8,h,10");
        assertThat(changes(t, plannedAt + 1))
                .containsExactlyInAnyOrder(
                        "delete 2,b2,11",
                        "update_preimage 4,d,4",
                        "update_postimage 4,d2,14",
                        "delete 6,f,6");
    }

    @Test
    void orphanRemovalDeletesOnlyOldUnreferencedDataFiles() throws Exception {
        Table t = catalog.loadTable(ITEMS);
        Path location = Path.of(URI.create(t.location()));
        Path data = location.resolve("data");
        FileTime old = FileTime.from(Instant.now().minus(Duration.ofDays(4)));
        List<Path> referenced;
        try (Stream<Path> files = Files.list(data)) {
            referenced = files.filter(f -> f.toString().endsWith(".parquet")).toList();
        }
        for (Path f : referenced) { // age alone must not make a referenced file an orphan
            Files.setLastModifiedTime(f, old);
        }
        Path oldOrphan = Files.writeString(data.resolve("orphan-old.parquet"), "x");
        Files.setLastModifiedTime(oldOrphan, old);
        Path newOrphan = Files.writeString(data.resolve("orphan-new.parquet"), "x");
        Path consumers = Files.createDirectories(location.resolve("changeflow/consumers"));
        Path consumer = Files.writeString(consumers.resolve("gold.json"), "{}");
        Files.setLastModifiedTime(consumer, old);
        List<String> rowsBefore = rows(TableRows.read(t));

        assertThat(
                        Main.execute(
                                "maintain",
                                ITEMS.toString(),
                                "--orphans",
                                "--warehouse",
                                tmp.resolve("warehouse").toString()))
                .isEqualTo(0);

        assertThat(oldOrphan).doesNotExist();
        assertThat(newOrphan).exists();
        assertThat(consumer).exists();
        assertThat(referenced).isNotEmpty().allMatch(Files::exists);
        t.refresh();
        assertThat(rows(TableRows.read(t))).containsExactlyInAnyOrderElementsOf(rowsBefore);
        Files.delete(newOrphan);
        Files.delete(consumer);
    }

    /**
     * Runs last: it expires snapshots. A consumer that still needs the versions from the late
     * compaction on keeps them (F7); the change feed over them reads exactly as before the expiry.
     */
    @Test
    @Order(Integer.MAX_VALUE - 3)
    void expiryKeepsWhatALiveConsumerNeedsAcrossCompactions() {
        Table t = catalog.loadTable(ITEMS);
        long latest = t.currentSnapshot().sequenceNumber();
        ConsumerRegistry.forTable(t).write("silver-reader", raceCompaction, Instant.now());
        List<String> feed = new ArrayList<>();
        for (long v = raceCompaction; v <= latest; v++) {
            feed.addAll(changes(t, v));
        }
        List<String> rowsBefore = rows(TableRows.read(t));

        assertThat(
                        Main.execute(
                                "maintain",
                                ITEMS.toString(),
                                "--expire",
                                "--older-than",
                                "0s",
                                "--retain-last",
                                "1",
                                "--warehouse",
                                tmp.resolve("warehouse").toString()))
                .isEqualTo(0);

        t.refresh();
        List<Long> kept = new ArrayList<>();
        SnapshotUtil.currentAncestors(t).forEach(s -> kept.add(s.sequenceNumber()));
        assertThat(java.util.Collections.min(kept)).isEqualTo(raceCompaction - 1);
        List<String> feedAfter = new ArrayList<>();
        for (long v = raceCompaction; v <= latest; v++) {
            feedAfter.addAll(changes(t, v));
        }
        assertThat(feedAfter).isEqualTo(feed);
        assertThat(feedAfter)
                .containsExactlyInAnyOrder(
                        "insert 3,c2,16",
                        "insert 9,i,17",
                        "update_preimage 8,h,10",
                        "update_postimage 8,h2,18");
        assertThat(rows(TableRows.read(t))).containsExactlyInAnyOrderElementsOf(rowsBefore);
    }

    /**
     * Runs after the expiry: {@code maintain --purge} (REORG ... APPLY (PURGE), S6). While the
     * consumer registered there still needs older versions the purge says it is not complete (exit
     * 3) and changes no row, and running it again then rewrites nothing and writes no version; once
     * it is gone, every Parquet file left under the table's data folder — data and delete files,
     * read directly, deletes not applied — holds exactly the live rows: no deleted row, no old
     * value of an updated row.
     */
    @Test
    @Order(Integer.MAX_VALUE - 2)
    void purgeLeavesNoDeletedRowInAnyFile() throws Exception {
        Table t = catalog.loadTable(ITEMS);
        List<String> live = rows(TableRows.read(t));
        String warehouse = tmp.resolve("warehouse").toString();
        assertThat(Main.execute("maintain", ITEMS.toString(), "--purge", "--warehouse", warehouse))
                .as("a live consumer keeps older versions")
                .isEqualTo(3);
        t.refresh();
        assertThat(rows(TableRows.read(t))).containsExactlyInAnyOrderElementsOf(live);
        // again while the consumer still holds them: no second rewrite, no new version
        long blockedHead = t.currentSnapshot().snapshotId();
        assertThat(Main.execute("maintain", ITEMS.toString(), "--purge", "--warehouse", warehouse))
                .isEqualTo(3);
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(blockedHead);

        assertThat(ConsumerRegistry.forTable(t).remove("silver-reader")).isTrue();
        assertThat(Main.execute("maintain", ITEMS.toString(), "--purge", "--warehouse", warehouse))
                .isEqualTo(0);
        t.refresh();
        assertThat(rows(TableRows.read(t))).containsExactlyInAnyOrderElementsOf(live);
        List<Snapshot> history = new ArrayList<>();
        SnapshotUtil.currentAncestors(t).forEach(history::add);
        assertThat(history).hasSize(1);
        // the closing commit carries the ingest's committer stamp, so the ingest can resume
        assertThat(history.get(0).summary())
                .containsEntry("changeflow.purge", "true")
                .containsKeys(
                        "flink.job-id", "flink.operator-id", "flink.max-committed-checkpoint-id");
        List<String> physical = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of(URI.create(t.location())).resolve("data"))) {
            for (Path f : files.filter(f -> f.toString().endsWith(".parquet")).toList()) {
                physical.addAll(readPath(t, f.toUri().toString()));
            }
        }
        assertThat(physical)
                .containsExactlyInAnyOrder(
                        "1,a2,7", "3,c2,16", "4,d2,14", "7,g,9", "8,h2,18", "9,i,17")
                .containsExactlyInAnyOrderElementsOf(live);
        // a second purge finds nothing to do and writes no version
        long head = history.get(0).snapshotId();
        assertThat(Main.execute("maintain", ITEMS.toString(), "--purge", "--warehouse", warehouse))
                .isEqualTo(0);
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(head);
    }

    /**
     * Runs after the purge (issue #17): the ingest that wrote the table resumes from its savepoint
     * with new input, and its rows land exactly once — the purge removed none of the files the
     * sink's committer reads on restore, and the committer still recognises its last checkpoint as
     * committed.
     */
    @Test
    @Order(Integer.MAX_VALUE - 1)
    void ingestResumesAfterAPurge() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        ingest(warehouse, tmp.resolve("in"), 6, ins(10, "j", 19), del(7, 20), ins(1, "a3", 21));
        Table t = catalog.loadTable(ITEMS);
        assertThat(rows(TableRows.read(t)))
                .containsExactlyInAnyOrder(
                        "1,a3,21", "3,c2,16", "4,d2,14", "8,h2,18", "9,i,17", "10,j,19");
    }

    /**
     * Runs last: {@code maintain --rewrite}, then {@code --expire --older-than 0s --retain-last 1},
     * then the ingest resumes from its savepoint again (issue #17: the expiry used to take the
     * ingest's last commit, and the resumed ingest failed on the deleted temporary manifest of its
     * last checkpoint).
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void ingestResumesAfterARewriteAndAnExpiryOfAllOlderSnapshots() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        assertThat(Main.execute("maintain", ITEMS.toString(), "--rewrite", "--warehouse", w))
                .isEqualTo(0);
        assertThat(
                        Main.execute(
                                "maintain",
                                ITEMS.toString(),
                                "--expire",
                                "--older-than",
                                "0s",
                                "--retain-last",
                                "1",
                                "--warehouse",
                                w))
                .isEqualTo(0);
        Table t = catalog.loadTable(ITEMS);
        List<Snapshot> history = new ArrayList<>();
        SnapshotUtil.currentAncestors(t).forEach(history::add);
        // the ingest's newest commit stays reachable under the compaction and, when delete files
        // no longer applied after it, the removal of those (DanglingDeletes): its restore walks
        // there
        assertThat(history).hasSizeBetween(2, 3);
        for (Snapshot s : history.subList(0, history.size() - 1)) {
            assertThat(s.operation()).isEqualTo(DataOperations.REPLACE);
        }
        assertThat(history.get(history.size() - 1).summary())
                .containsKeys("flink.job-id", "flink.max-committed-checkpoint-id");
        ingest(warehouse, tmp.resolve("in"), 7, del(3, 22), ins(11, "k", 23), ins(9, "i2", 24));
        t.refresh();
        assertThat(rows(TableRows.read(t)))
                .containsExactlyInAnyOrder(
                        "1,a3,21", "4,d2,14", "8,h2,18", "9,i2,24", "10,j,19", "11,k,23");
    }

    // ---------------------------------------------------------------------------------------------

    private static String ins(int id, String name, long seq) {
        return String.format(
                "{\"id\":%d,\"name\":\"%s\",\"op\":\"UPSERT\",\"seq\":%d}", id, name, seq);
    }

    private static String del(int id, long seq) {
        return String.format("{\"id\":%d,\"op\":\"DELETE\",\"seq\":%d}", id, seq);
    }

    /**
     * One local ingest run over one new file (the previous files were read by earlier runs). It
     * runs on its own local cluster ({@link LocalIngest}); inside a test method the extension's
     * MiniCluster is the context environment, which forbids local environments, so it is unset
     * first (the extension sets it again before the next test).
     */
    private static void ingest(Path warehouse, Path input, int run, String... lines)
            throws Exception {
        TestStreamEnvironment.unsetAsContext();
        Files.write(input.resolve("batch-" + run + ".jsonl"), List.of(lines));
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(FLOWS, "flows.yaml"), List.of(input));
        LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
    }

    /** The changes of one version as {@code <type> id,name,seq}. */
    private static List<String> changes(Table t, long version) {
        List<String> out = new ArrayList<>();
        TableChanges changes =
                TableChanges.forTable(t).startingVersion(version).endingVersion(version).build();
        try (CloseableIterable<Record> rows = changes.read()) {
            for (Record r : rows) {
                out.add(r.getField(ChangeFeedColumns.CHANGE_TYPE) + " " + row(r));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static String row(Record r) {
        return r.getField("id") + "," + r.getField("name") + "," + r.getField("seq");
    }

    private static List<String> rows(List<Record> records) {
        List<String> out = new ArrayList<>();
        records.forEach(r -> out.add(row(r)));
        return out;
    }

    /** The rows physically in one data file, deletes not applied. */
    private static List<String> readFile(Table t, DataFile f) {
        return readPath(t, f.location());
    }

    /** The rows of any Parquet file of the table, read with the table's schema (by field id). */
    private static List<String> readPath(Table t, String location) {
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> rows =
                Parquet.read(t.io().newInputFile(location))
                        .project(t.schema())
                        .createReaderFunc(
                                type -> GenericParquetReaders.buildReader(t.schema(), type))
                        .build()) {
            rows.forEach(r -> out.add(row(r)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}

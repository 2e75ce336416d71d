package dev.changeflow.e2e;

import dev.changeflow.jobs.gold.GoldRunner;
import dev.changeflow.jobs.gold.GoldSpec;
import dev.changeflow.jobs.gold.GoldStart;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local Gold runs ({@link GoldRunner#runLocal}) keep no Flink state between runs: a run killed at
 * any moment is simply run again and starts where its Gold tables are ({@link GoldStart}). Issue
 * #19, "same review for gold": the Gold tables must then equal exactly what an uninterrupted run
 * gives.
 *
 * <p>Silver is written with Iceberg's API in the shape of an SCD1 streaming table: each version
 * inserts, updates and deletes rows of several data files (several change-feed splits, read by two
 * parallel readers) plus one equality-delete file. Two kinds of interruption:
 *
 * <ul>
 *   <li><b>a cancelled run</b>: the job of a running {@code runLocal} is cancelled right after a
 *       Gold table gets a new snapshot (a kill after a Gold commit; no state survives, as after
 *       {@code kill -9}). After every kill the upsert table must equal Silver's projection at one
 *       version (a commit holds whole Silver versions), and after a last run to the end it must
 *       equal the projection of Silver's final rows, {@code _source_version} included;
 *   <li><b>a kill between the two committers</b>: a job with an upsert and an aggregate table
 *       commits both at the end of a run, by two committers; a process killed between them leaves
 *       one table at its previous snapshot. The test produces that state exactly (the lost commit's
 *       table is rolled back to its snapshot before the run, or re-created empty when the lost
 *       commit was its first) and runs again. A table left without rows beside one with rows used
 *       to be taken to be at the other's version, so the rows its lost commit held never came.
 * </ul>
 *
 * <p>And F7: what a run registers as Silver's consumer keeps the versions the next run re-reads.
 */
class GoldKillITCase {
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(8)
                            .build());

    private static final TableIdentifier SILVER = TableIdentifier.of("silver", "accounts");
    private static final TableIdentifier GOLD_ACCOUNTS = TableIdentifier.of("gold", "accounts");
    private static final TableIdentifier GOLD_GROUPS = TableIdentifier.of("gold", "groups");
    private static final Schema SILVER_SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.LongType.get()),
                            Types.NestedField.required(2, "grp", Types.IntegerType.get()),
                            Types.NestedField.required(3, "amount", Types.LongType.get())),
                    Set.of(1));

    /** Rows whose amount is at least this pass the filter of the "later commit" scenarios. */
    private static final long BIG = 1_000_000L;

    @TempDir Path tmp;
    private CatalogSettings settings;
    private Catalog catalog;
    private SilverWriter silver;

    @BeforeEach
    void setUp() {
        settings = CatalogSettings.localHadoop(tmp.resolve("warehouse").toAbsolutePath());
        catalog = settings.open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("silver"));
        Table table =
                catalog.createTable(
                        SILVER,
                        SILVER_SCHEMA,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        silver = new SilverWriter(table, new Random(19));
    }

    @AfterEach
    void tearDown() throws IOException {
        if (catalog instanceof Closeable) {
            ((Closeable) catalog).close();
        }
    }

    private static GoldSpec.Upsert upsert(String where) {
        return new GoldSpec.Upsert(GOLD_ACCOUNTS, List.of("id, grp, amount"), where);
    }

    private static GoldSpec.Aggregate aggregate() {
        return new GoldSpec.Aggregate(
                GOLD_GROUPS,
                List.of("grp"),
                List.of(
                        GoldSpec.AggregateColumn.parse("total=SUM(amount)"),
                        GoldSpec.AggregateColumn.parse("n=COUNT(*)")));
    }

    private GoldRunner.Options options(Duration checkpointInterval) {
        GoldRunner.Options o = new GoldRunner.Options();
        o.warehouse = tmp.resolve("warehouse");
        o.checkpointInterval = checkpointInterval;
        o.parallelism = 2;
        o.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return o;
    }

    /**
     * An upsert-only Gold job killed right after Gold commits, run again each time: every commit
     * holds whole Silver versions, and the last run leaves exactly Silver's projection. The filter
     * makes the upsert table skip some rows and delete rows whose update fails it.
     */
    @Test
    void upsertGoldKilledAfterCommitsIsExact(@InjectClusterClient ClusterClient<?> client)
            throws Exception {
        GoldSpec spec = new GoldSpec("gold-kill", SILVER, upsert("MOD(amount, 3) <> 0"), null);
        silver.versions(3, 600, 4, false);
        // the first run takes the initial snapshot: its rows carry that version
        long initial = silver.latest();
        GoldRunner.runLocal(spec, settings, options(Duration.ofMillis(200)));
        int kills = 0;
        for (int round = 0; round < 5; round++) {
            silver.versions(4, 600, 4, false);
            if (runAndKillAfterCommit(client, spec, 1 + round % 2)) {
                kills++;
            }
            assertHoldsWholeVersions(
                    catalog.loadTable(GOLD_ACCOUNTS),
                    row -> Long.remainderUnsigned(row[2], 3) != 0);
        }
        assertThat(kills).as("runs killed after a Gold commit").isGreaterThanOrEqualTo(3);
        GoldRunner.runLocal(spec, settings, options(Duration.ofMillis(200)));
        assertUpsertExact(row -> Long.remainderUnsigned(row[2], 3) != 0, initial);
    }

    /** The same with an aggregate beside the upsert table: both exact after the kills. */
    @Test
    void upsertAndAggregateGoldKilledAfterCommitsIsExact(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        GoldSpec spec =
                new GoldSpec("gold-kill-2", SILVER, upsert("MOD(amount, 3) <> 0"), aggregate());
        silver.versions(3, 600, 4, false);
        for (int round = 0; round < 4; round++) {
            silver.versions(4, 600, 4, false);
            runAndKillAfterCommit(client, spec, 1 + round % 2);
        }
        GoldRunner.runLocal(spec, settings, options(Duration.ofMillis(200)));
        assertUpsertExact(row -> Long.remainderUnsigned(row[2], 3) != 0, -1);
        assertAggregateExact();
    }

    /** Which table's commit the kill lost. */
    enum Lost {
        UPSERT,
        AGGREGATE
    }

    /**
     * The first run's commits: one table committed, the other's commit lost (the table stays as
     * {@code ensureTable} created it, without a snapshot). The next run must fill it.
     */
    @ParameterizedTest
    @EnumSource(Lost.class)
    void aKillBetweenTheFirstCommitsOfTheTwoTablesLosesNothing(Lost lost) throws Exception {
        GoldSpec spec =
                new GoldSpec("gold-first", SILVER, upsert("MOD(amount, 3) <> 0"), aggregate());
        silver.versions(3, 400, 3, false);
        GoldRunner.runLocal(spec, settings, options(Duration.ofMinutes(10)));
        loseLastRun(lost == Lost.UPSERT ? GOLD_ACCOUNTS : GOLD_GROUPS, null);
        silver.versions(2, 400, 3, false);
        GoldRunner.runLocal(spec, settings, options(Duration.ofMinutes(10)));
        assertUpsertExact(row -> Long.remainderUnsigned(row[2], 3) != 0, -1);
        assertAggregateExact();
    }

    /**
     * A later run's commits: the upsert table's filter matched nothing before the run, the run
     * brings its first rows, and one table's commit is lost. The next run must still bring them.
     */
    @ParameterizedTest
    @EnumSource(Lost.class)
    void aKillBetweenLaterCommitsOfTheTwoTablesLosesNothing(Lost lost) throws Exception {
        GoldSpec spec = new GoldSpec("gold-later", SILVER, upsert("amount >= " + BIG), aggregate());
        silver.versions(3, 400, 3, false);
        GoldRunner.runLocal(spec, settings, options(Duration.ofMinutes(10)));
        assertThat(TableRows.read(catalog.loadTable(GOLD_ACCOUNTS)))
                .as("nothing passes the filter yet")
                .isEmpty();
        TableIdentifier lostTable = lost == Lost.UPSERT ? GOLD_ACCOUNTS : GOLD_GROUPS;
        Snapshot before = catalog.loadTable(lostTable).currentSnapshot();
        silver.versions(1, 400, 3, true);
        silver.versions(1, 400, 3, false);
        GoldRunner.runLocal(spec, settings, options(Duration.ofMinutes(10)));
        assertThat(TableRows.read(catalog.loadTable(GOLD_ACCOUNTS)))
                .as("the big amounts passed")
                .isNotEmpty();
        loseLastRun(lostTable, before);
        silver.versions(1, 400, 3, false);
        GoldRunner.runLocal(spec, settings, options(Duration.ofMinutes(10)));
        assertUpsertExact(row -> row[2] >= BIG, -1);
        assertAggregateExact();
    }

    /**
     * F7: a run registers as Silver's consumer the version the next run starts at, which lags
     * Silver's latest when the last versions left the upsert table no row (they only deleted rows
     * from it or changed rows its filter drops); changeflow's expiry keeps what the next run
     * re-reads, and that run goes on.
     */
    @Test
    void theConsumerRegistrationKeepsWhatTheNextRunReReads() throws Exception {
        GoldSpec spec = new GoldSpec("gold-f7", SILVER, upsert("amount >= " + BIG), null);
        silver.versions(1, 400, 3, false);
        silver.versions(1, 400, 3, true);
        GoldRunner.runLocal(spec, settings, options(Duration.ofSeconds(5)));
        // versions 3 and 4 only take amounts below the filter's bound: Gold's rows stay at version
        // 2
        silver.versions(2, 400, 3, false);
        GoldRunner.runLocal(spec, settings, options(Duration.ofSeconds(5)));
        assertThat(GoldStart.goldVersion(catalog.loadTable(GOLD_ACCOUNTS)).getAsLong())
                .isEqualTo(2L);
        silver.versions(2, 400, 3, false);
        Table s = catalog.loadTable(SILVER);
        ChangeFeedExpiry.forTable(s).olderThan(Instant.now()).retainLast(1).execute();
        GoldRunner.Summary summary =
                GoldRunner.runLocal(spec, settings, options(Duration.ofSeconds(5)));
        assertThat(summary.start).isEqualTo(OptionalLong.of(3L));
        assertUpsertExact(row -> row[2] >= BIG, -1);
    }

    /**
     * Runs {@code runLocal} and cancels its job right after the {@code n}-th new snapshot of a Gold
     * table appears (or lets it finish when it commits fewer times).
     *
     * @return whether the run was killed
     */
    private boolean runAndKillAfterCommit(ClusterClient<?> client, GoldSpec spec, int n)
            throws Exception {
        List<TableIdentifier> gold = new ArrayList<>();
        gold.add(spec.upsert().target());
        if (spec.aggregate() != null) {
            gold.add(spec.aggregate().target());
        }
        Map<TableIdentifier, Long> seen = new HashMap<>();
        gold.forEach(t -> seen.put(t, currentSnapshotId(t)));
        // loaded once, then refreshed on each poll: a refresh of a Hadoop table reads its version
        // hint and re-reads the metadata only after a commit, where a load parses it every time
        // and a 5 ms poll of loads keeps a core of the two busy beside the Gold run
        Map<TableIdentifier, Table> polled = new HashMap<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread run =
                new Thread(
                        () -> {
                            try {
                                GoldRunner.runLocal(
                                        spec, settings, options(Duration.ofMillis(150)));
                            } catch (Throwable t) {
                                failure.set(t);
                            }
                        },
                        "gold-run");
        long t0 = System.nanoTime();
        run.start();
        int commits = 0;
        boolean killed = false;
        long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
        while (run.isAlive() && !killed) {
            for (TableIdentifier t : gold) {
                Long now = currentSnapshotId(t, polled);
                if (now != null && !now.equals(seen.get(t))) {
                    seen.put(t, now);
                    commits++;
                }
            }
            if (commits >= n) {
                for (JobStatusMessage job : client.listJobs().get()) {
                    if (job.getJobState() == JobStatus.RUNNING
                            || job.getJobState() == JobStatus.CREATED
                            || job.getJobState() == JobStatus.INITIALIZING) {
                        client.cancel(job.getJobId()).get();
                        killed = true;
                    }
                }
            }
            assertThat(System.nanoTime()).as("the Gold run ends in time").isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // poll the tables again
        }
        run.join(RUN_TIMEOUT.toMillis());
        assertThat(run.isAlive()).isFalse();
        if (!killed && failure.get() != null) {
            throw new AssertionError("the Gold run failed without being killed", failure.get());
        }
        System.out.printf(
                "GoldKillITCase: run %s after %d new Gold snapshot(s); Gold versions %s in %d ms%n",
                killed ? "killed" : "finished",
                commits,
                goldVersions(gold),
                (System.nanoTime() - t0) / 1_000_000);
        return killed;
    }

    @Nullable
    /**
     * The current snapshot of {@code id} as {@link #currentSnapshotId(TableIdentifier)} gives it,
     * through a table kept in {@code tables} and refreshed (loaded once it exists).
     */
    private Long currentSnapshotId(TableIdentifier id, Map<TableIdentifier, Table> tables) {
        Table table = tables.get(id);
        if (table == null) {
            if (!catalog.tableExists(id)) {
                return null;
            }
            table = catalog.loadTable(id);
            tables.put(id, table);
        } else {
            table.refresh();
        }
        Snapshot s = table.currentSnapshot();
        return s == null ? null : s.snapshotId();
    }

    private Long currentSnapshotId(TableIdentifier id) {
        if (!catalog.tableExists(id)) {
            return null;
        }
        Snapshot s = catalog.loadTable(id).currentSnapshot();
        return s == null ? null : s.snapshotId();
    }

    private Map<TableIdentifier, Long> goldVersions(List<TableIdentifier> gold) {
        Map<TableIdentifier, Long> versions =
                new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
        for (TableIdentifier t : gold) {
            versions.put(
                    t,
                    catalog.tableExists(t)
                            ? GoldStart.goldVersion(catalog.loadTable(t)).orElse(-1L)
                            : -1L);
        }
        return versions;
    }

    /**
     * Puts {@code table} where a process killed after the other Gold table's commit but before this
     * one's leaves it: at {@code before} (its snapshot before the run), or without any snapshot.
     */
    private void loseLastRun(TableIdentifier table, @Nullable Snapshot before) {
        Table t = catalog.loadTable(table);
        if (before != null) {
            t.manageSnapshots().rollbackTo(before.snapshotId()).commit();
            return;
        }
        Schema schema = t.schema();
        PartitionSpec spec = t.spec();
        Map<String, String> properties = new HashMap<>(t.properties());
        catalog.dropTable(table, true);
        catalog.createTable(table, schema, spec, properties);
    }

    /** Interface for a filter over Silver rows {@code {id, grp, amount}}. */
    interface RowFilter {
        boolean test(long[] row);
    }

    /**
     * The upsert table holds Silver's projection at some version at or after its own Gold version:
     * no commit holds part of a version.
     */
    private void assertHoldsWholeVersions(Table gold, RowFilter filter) {
        List<String> actual = goldAccounts(gold, false);
        long goldVersion = GoldStart.goldVersion(gold).orElse(0L);
        Table s = catalog.loadTable(SILVER);
        List<Long> versions = new ArrayList<>();
        for (Snapshot snapshot : SnapshotUtil.currentAncestors(s)) {
            if (snapshot.sequenceNumber() >= goldVersion) {
                versions.add(snapshot.sequenceNumber());
            }
        }
        versions.add(0L);
        // the same candidates, the likeliest first (a run killed right after a commit holds
        // Silver as of its Gold version): each candidate costs a read of Silver at that version
        List<Long> order = new ArrayList<>(versions);
        order.sort(Comparator.comparingLong(v -> Math.abs(v - goldVersion)));
        for (long v : order) {
            if (expectedAccounts(TableRows.readAtVersion(s, v), filter, null).equals(actual)) {
                return;
            }
        }
        throw new AssertionError(
                "the Gold upsert table ("
                        + actual.size()
                        + " rows, _source_version up to "
                        + goldVersion
                        + ") equals Silver's projection at no version in "
                        + versions
                        + ": a commit held part of a version");
    }

    /**
     * The upsert table equals the projection of Silver's final rows; with an {@code initial}
     * version >= 0, each row's {@code _source_version} is what an uninterrupted run that took the
     * initial snapshot at that version gives: the Silver version that last wrote the row, or the
     * initial snapshot's when that is later.
     */
    private void assertUpsertExact(RowFilter filter, long initial) {
        Map<Long, Long> versions = null;
        if (initial >= 0) {
            versions = new HashMap<>();
            for (Map.Entry<Long, Long> e : silver.lastWritten.entrySet()) {
                versions.put(e.getKey(), Math.max(initial, e.getValue()));
            }
        }
        List<String> expected =
                expectedAccounts(TableRows.read(catalog.loadTable(SILVER)), filter, versions);
        List<String> actual = goldAccounts(catalog.loadTable(GOLD_ACCOUNTS), versions != null);
        assertThat(actual).hasSize(expected.size());
        assertThat(actual).containsExactlyElementsOf(expected);
    }

    private void assertAggregateExact() {
        Map<Integer, long[]> groups = new TreeMap<>();
        for (Record r : TableRows.read(catalog.loadTable(SILVER))) {
            long[] g = groups.computeIfAbsent((Integer) r.getField("grp"), k -> new long[2]);
            g[0] += (Long) r.getField("amount");
            g[1]++;
        }
        List<String> expected = new ArrayList<>();
        groups.forEach((grp, g) -> expected.add(grp + "," + g[0] + "," + g[1]));
        List<String> actual = new ArrayList<>();
        for (Record r : TableRows.read(catalog.loadTable(GOLD_GROUPS))) {
            actual.add(r.getField("grp") + "," + r.getField("total") + "," + r.getField("n"));
        }
        actual.sort(null);
        assertThat(actual).containsExactlyElementsOf(expected);
    }

    private static List<String> expectedAccounts(
            List<Record> silverRows, RowFilter filter, @Nullable Map<Long, Long> versions) {
        List<String> rows = new ArrayList<>();
        for (Record r : silverRows) {
            long[] row = {
                (Long) r.getField("id"), (Integer) r.getField("grp"), (Long) r.getField("amount")
            };
            if (filter.test(row)) {
                long id = row[0];
                rows.add(
                        row[0]
                                + ","
                                + row[1]
                                + ","
                                + row[2]
                                + (versions == null ? "" : "@" + versions.get(id)));
            }
        }
        rows.sort(null);
        return rows;
    }

    private static List<String> goldAccounts(Table gold, boolean versions) {
        gold.refresh();
        List<String> rows = new ArrayList<>();
        for (Record r : TableRows.read(gold)) {
            rows.add(
                    r.getField("id")
                            + ","
                            + r.getField("grp")
                            + ","
                            + r.getField("amount")
                            + (versions ? "@" + r.getField(GoldSpec.SOURCE_VERSION) : ""));
        }
        rows.sort(null);
        return rows;
    }

    /**
     * Writes Silver versions the way an SCD1 streaming table gets them: new row images in several
     * data files, the keys they replace or delete in one equality-delete file, one commit. Groups
     * 0..4 keep rows 0..4 forever, so no group empties (an emptied group keeps a Gold row with
     * count 0, which a projection of Silver's final rows would not show); group 5 holds three rows
     * of the first version that no later version touches (its Gold row keeps an old version).
     */
    static final class SilverWriter {
        static final long UNTOUCHED = 1L << 40;
        final Table table;
        final Random random;

        /** id → {grp, amount} of the live rows. */
        final Map<Long, long[]> rows = new HashMap<>();

        /** id → the version that last wrote the row (inserted or updated it). */
        final Map<Long, Long> lastWritten = new HashMap<>();

        private long nextId;

        SilverWriter(Table table, Random random) {
            this.table = table;
            this.random = random;
        }

        /**
         * Commits {@code count} versions of {@code changes} changes each in {@code dataFiles} data
         * files; with {@code big}, updates set amounts of at least {@link #BIG}.
         */
        void versions(int count, int changes, int dataFiles, boolean big) {
            for (int i = 0; i < count; i++) {
                version(changes, dataFiles, big);
            }
        }

        private void version(int changes, int dataFiles, boolean big) {
            List<Record> images = new ArrayList<>();
            if (rows.isEmpty()) {
                // group 5: rows of the first version that no later version touches
                for (long id = UNTOUCHED; id < UNTOUCHED + 3; id++) {
                    rows.put(id, new long[] {5, id - UNTOUCHED + 1});
                    images.add(record(id, 5, id - UNTOUCHED + 1));
                }
            }
            List<Record> deletes = new ArrayList<>();
            Set<Long> touched = new HashSet<>();
            for (int c = 0; c < changes; c++) {
                long id;
                boolean insert = rows.size() < 50 || random.nextInt(10) < 3;
                if (insert) {
                    id = nextId++;
                } else {
                    id = random.nextLong(nextId);
                }
                if (!touched.add(id)) {
                    continue;
                }
                long[] old = rows.get(id);
                if (old != null && id >= 5 && random.nextInt(4) == 0) {
                    rows.remove(id);
                    deletes.add(key(id));
                    continue;
                }
                long amount =
                        big && old != null ? BIG + random.nextInt(1000) : random.nextInt(1000);
                long[] row = {id % 5, amount};
                rows.put(id, row);
                if (old != null) {
                    deletes.add(key(id));
                }
                images.add(record(id, (int) row[0], row[1]));
            }
            RowDelta delta = table.newRowDelta();
            int per = Math.max(1, (images.size() + dataFiles - 1) / dataFiles);
            for (int from = 0; from < images.size(); from += per) {
                delta.addRows(
                        IcebergWrites.dataFile(
                                table, images.subList(from, Math.min(images.size(), from + per))));
            }
            if (!deletes.isEmpty()) {
                delta.addDeletes(
                        IcebergWrites.equalityDeletes(
                                table, SILVER_SCHEMA.select("id"), new int[] {1}, deletes));
            }
            delta.commit();
            table.refresh();
            long version = table.currentSnapshot().sequenceNumber();
            for (Record r : images) {
                lastWritten.put((Long) r.getField("id"), version);
            }
        }

        long latest() {
            table.refresh();
            return table.currentSnapshot() == null ? 0 : table.currentSnapshot().sequenceNumber();
        }

        private static Record record(long id, int grp, long amount) {
            GenericRecord r = GenericRecord.create(SILVER_SCHEMA);
            r.setField("id", id);
            r.setField("grp", grp);
            r.setField("amount", amount);
            return r;
        }

        private static Record key(long id) {
            GenericRecord r = GenericRecord.create(SILVER_SCHEMA.select("id"));
            r.setField("id", id);
            return r;
        }
    }
}

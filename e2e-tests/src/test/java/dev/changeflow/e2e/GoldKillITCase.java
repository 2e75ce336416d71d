package dev.changeflow.e2e;

import dev.changeflow.jobs.gold.GoldFlags;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.messages.FlinkJobTerminatedWithoutCancellationException;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.DataOperations;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A local Gold run of the flag form — compiled to Gold SQL ({@link GoldFlags}) and run by {@link
 * GoldSql#runLocal} — killed in the middle (its job cancelled right after a Gold data commit, no
 * state surviving, as after {@code kill -9}) and run again: the Gold tables must then equal exactly
 * what an uninterrupted run gives (docs/semantics.md G2, G3).
 *
 * <p>Silver is written with Iceberg's API in the shape of an SCD1 streaming table: each version
 * inserts, updates and deletes rows of several data files (several change-feed splits, read by two
 * parallel readers) plus one equality-delete file. The Gold job has an upsert table filtered by
 * {@code MOD(amount, 3) <> 0} (a row whose update fails the filter is deleted) and a per-group
 * {@code SUM}/{@code COUNT(*)} aggregate. After the kill, more Silver versions, and a run from
 * version 1 (replay: the whole history as changes), each Gold table equals the same query over
 * Silver's final rows, {@code _source_version} included: the version that last wrote the row, and
 * the version that last changed the group (an insert, update or delete, {@code SOURCE_VERSION});
 * each records Silver's latest version.
 *
 * <p>What the flag form's own runner needed tests for here (a restart where the Gold tables are,
 * seeded aggregates, a kill between the two tables' committers, the consumer registration) went
 * with it: every SQL run rebuilds its Gold tables ({@code GoldSqlITCase}, {@code
 * GoldSqlClusterITCase} cover the start and replay rules).
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

    /** Rows whose amount is at least this are never written here (kept for the writer's API). */
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

    private static GoldFlags flags() {
        return new GoldFlags(
                "gold-kill",
                SILVER,
                new GoldFlags.Upsert(GOLD_ACCOUNTS, "id, grp, amount", "MOD(amount, 3) <> 0"),
                new GoldFlags.Aggregate(
                        GOLD_GROUPS,
                        List.of("grp"),
                        List.of(
                                GoldFlags.AggregateColumn.parse("total=SUM(amount)"),
                                GoldFlags.AggregateColumn.parse("n=COUNT(*)"))),
                Map.of());
    }

    /** Runs the compiled flags locally to Silver's latest version (as {@code gold --source}). */
    private void runGold(@Nullable Long startingVersion) throws Exception {
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = tmp.resolve("warehouse");
        o.name = "gold-kill";
        o.checkpointInterval = Duration.ofMillis(150);
        o.parallelism = 2;
        o.bounded = true;
        o.startingVersion = startingVersion;
        o.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        GoldSql.runLocal(GoldSql.parse(flags().toSql(settings), "gold-kill.sql"), settings, o);
    }

    @Test
    void aGoldRunKilledAfterACommitThenRunAgainIsExact(@InjectClusterClient ClusterClient<?> client)
            throws Exception {
        silver.versions(3, 600, 4, false);
        // a run that ends before its first data commit can be cancelled is not a kill: again
        boolean killed = false;
        for (int attempt = 0; attempt < 3 && !killed; attempt++) {
            silver.versions(2, 600, 4, false);
            killed = runAndKillAfterDataCommit(client);
        }
        assertThat(killed).as("a run was killed after a Gold data commit").isTrue();
        silver.versions(2, 600, 4, false);
        // replay of the whole history: _source_version is each row's and group's last change
        runGold(1L);
        assertUpsertExact(silver.lastWritten::get);
        assertAggregateExact(silver.lastChanged::get);
        assertRecorded(silver.latest());
    }

    /**
     * Runs the Gold job and cancels it right after a Gold table gets a snapshot that adds data (not
     * the commit that empties it before the rebuild), or lets it finish when none comes.
     *
     * @return whether the run was killed
     */
    private boolean runAndKillAfterDataCommit(ClusterClient<?> client) throws Exception {
        List<TableIdentifier> gold = List.of(GOLD_ACCOUNTS, GOLD_GROUPS);
        Map<TableIdentifier, Long> seen = new HashMap<>();
        Map<TableIdentifier, Table> polled = new HashMap<>();
        for (TableIdentifier t : gold) {
            if (catalog.tableExists(t)) {
                Table table = catalog.loadTable(t);
                polled.put(t, table);
                Snapshot s = table.currentSnapshot();
                seen.put(t, s == null ? null : s.snapshotId());
            }
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread run =
                new Thread(
                        () -> {
                            try {
                                runGold(null);
                            } catch (Throwable t) {
                                failure.set(t);
                            }
                        },
                        "gold-run");
        long t0 = System.nanoTime();
        run.start();
        boolean killed = false;
        long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
        while (run.isAlive() && !killed) {
            boolean dataCommit = false;
            for (TableIdentifier t : gold) {
                // loaded once it exists (the run creates it), then refreshed
                Table table = polled.get(t);
                if (table == null) {
                    if (!catalog.tableExists(t)) {
                        continue;
                    }
                    table = catalog.loadTable(t);
                    polled.put(t, table);
                } else {
                    table.refresh();
                }
                Snapshot s = table.currentSnapshot();
                if (s != null && !Long.valueOf(s.snapshotId()).equals(seen.get(t))) {
                    seen.put(t, s.snapshotId());
                    dataCommit |= !DataOperations.DELETE.equals(s.operation());
                }
            }
            if (dataCommit) {
                for (JobStatusMessage job : client.listJobs().get()) {
                    if (job.getJobState() == JobStatus.RUNNING
                            || job.getJobState() == JobStatus.CREATED
                            || job.getJobState() == JobStatus.INITIALIZING) {
                        try {
                            client.cancel(job.getJobId()).get();
                            killed = true;
                        } catch (ExecutionException e) {
                            // the job ended between the listing and the cancel: not killed, and
                            // the loop goes on as after any run that ended by itself
                            if (!ExceptionUtils.findThrowable(
                                            e, FlinkJobTerminatedWithoutCancellationException.class)
                                    .isPresent()) {
                                throw e;
                            }
                        }
                    }
                }
            }
            assertThat(System.nanoTime()).as("the Gold run ends in time").isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // poll the tables again
        }
        run.join(RUN_TIMEOUT.toMillis());
        assertThat(run.isAlive()).isFalse();
        if (failure.get() != null) {
            throw new AssertionError("the Gold run failed", failure.get());
        }
        System.out.printf(
                "GoldKillITCase: run %s in %d ms%n",
                killed ? "killed" : "finished", (System.nanoTime() - t0) / 1_000_000);
        return killed;
    }

    /** Each Gold table's newest commit records Silver's version {@code latest} (G2). */
    private void assertRecorded(long latest) {
        for (TableIdentifier t : List.of(GOLD_ACCOUNTS, GOLD_GROUPS)) {
            Table gold = catalog.loadTable(t);
            assertThat(gold.currentSnapshot().summary())
                    .as(t.toString())
                    .containsEntry(
                            "changeflow.source-version.silver.accounts", Long.toString(latest));
        }
    }

    /** Interface for the expected {@code _source_version} of a row id or a group. */
    interface Versions {
        long of(long key);
    }

    /**
     * The upsert table equals the filtered projection of Silver's final rows, each with its {@code
     * _source_version}.
     */
    private void assertUpsertExact(Versions versions) {
        List<String> expected = new ArrayList<>();
        for (Record r : TableRows.read(catalog.loadTable(SILVER))) {
            long id = (Long) r.getField("id");
            long amount = (Long) r.getField("amount");
            if (amount % 3 != 0) {
                expected.add(id + "," + r.getField("grp") + "," + amount + "@" + versions.of(id));
            }
        }
        expected.sort(null);
        List<String> actual = new ArrayList<>();
        for (Record r : TableRows.read(catalog.loadTable(GOLD_ACCOUNTS))) {
            actual.add(
                    r.getField("id")
                            + ","
                            + r.getField("grp")
                            + ","
                            + r.getField("amount")
                            + "@"
                            + r.getField(GoldFlags.SOURCE_VERSION));
        }
        actual.sort(null);
        assertThat(actual).hasSize(expected.size());
        assertThat(actual).containsExactlyElementsOf(expected);
    }

    /**
     * The aggregate equals SUM/COUNT per group of Silver's final rows, with each group's version.
     */
    private void assertAggregateExact(Versions versions) {
        Map<Integer, long[]> groups = new TreeMap<>();
        for (Record r : TableRows.read(catalog.loadTable(SILVER))) {
            long[] g = groups.computeIfAbsent((Integer) r.getField("grp"), k -> new long[2]);
            g[0] += (Long) r.getField("amount");
            g[1]++;
        }
        List<String> expected = new ArrayList<>();
        groups.forEach(
                (grp, g) -> expected.add(grp + "," + g[0] + "," + g[1] + "@" + versions.of(grp)));
        List<String> actual = new ArrayList<>();
        for (Record r : TableRows.read(catalog.loadTable(GOLD_GROUPS))) {
            actual.add(
                    r.getField("grp")
                            + ","
                            + r.getField("total")
                            + ","
                            + r.getField("n")
                            + "@"
                            + r.getField(GoldFlags.SOURCE_VERSION));
        }
        actual.sort(null);
        assertThat(actual).containsExactlyElementsOf(expected);
    }

    /**
     * Writes Silver versions the way an SCD1 streaming table gets them: new row images in several
     * data files, the keys they replace or delete in one equality-delete file, one commit. Groups
     * 0..4 keep rows 0..4 forever, so no group empties; group 5 holds three rows of the first
     * version that no later version touches (its Gold row keeps an old version).
     */
    static final class SilverWriter {
        static final long UNTOUCHED = 1L << 40;
        final Table table;
        final Random random;

        /** id → {grp, amount} of the live rows. */
        final Map<Long, long[]> rows = new HashMap<>();

        /** id → the version that last wrote the row (inserted or updated it). */
        final Map<Long, Long> lastWritten = new HashMap<>();

        /** group → the version that last changed one of its rows (insert, update or delete). */
        final Map<Long, Long> lastChanged = new HashMap<>();

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
            List<Long> deletedGroups = new ArrayList<>();
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
                    deletedGroups.add(old[0]);
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
                lastChanged.put((long) (Integer) r.getField("grp"), version);
            }
            for (long grp : deletedGroups) {
                lastChanged.put(grp, version);
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

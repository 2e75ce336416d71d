package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.cdf.DeleteFileCache;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.files.SourceLine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential test of the batch change data feed ({@link TableChanges}, semantics.md F1/F2,
 * design.md "Iceberg mapping of the change feed") over tables written by real streaming writers:
 * the recorded pgbench-s1 capture ({@code ../shared/data/pgbench-s1}) is replayed by a paced source
 * in 32 batches, one completed checkpoint per batch, into
 *
 * <ul>
 *   <li>changeflow's own ingest pipeline ({@link IngestJob#build(DataStream, IngestPlan,
 *       CatalogSettings)}: decode → AUTO CDC on RocksDB → Iceberg {@code FlinkSink} in changelog
 *       mode): {@code public.pgbench_accounts} (SCD1), {@code public.pgbench_accounts_scd2} (SCD2),
 *       {@code public.pgbench_branches} and {@code public.pgbench_tellers} (SCD1) — equality
 *       deletes that carry complete rows, position deletes for keys written twice in one
 *       checkpoint;
 *   <li>Iceberg's own Flink sink in upsert mode ({@code public.accounts_iceberg_upsert}): key-only
 *       equality deletes for every row, so pre-images come from the parent-snapshot lookup.
 * </ul>
 *
 * The batches cover the initial snapshot (inserts only), streamed pgbench updates, deletes (some
 * re-inserted in the same version, some later) and updates after the re-inserts. For every version
 * v ≥ 1 of each table it proves: state(v−1) with the changes of v applied (delete / update_preimage
 * remove one row, insert / update_postimage add one, multiset over complete rows; every removed row
 * must exist in state(v−1)) equals state(v), both states read by Iceberg's own scan; every change
 * carries version v and the snapshot's commit time; every update_preimage is directly followed by
 * the update_postimage of the same identity (and every postimage directly preceded by it); a
 * version whose state changed has a non-empty change set. For the four changeflow tables one
 * full-range read (1..latest) must also equal the per-version reads in order and, applied to an
 * empty table, give the latest state. The ingested tables are also compared with PostgreSQL's final
 * tables, so the versions checked are those of a complete, correct ingest.
 */
class ChangeFeedDifferentialITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir static Path tmp;

    private static final String ACCOUNTS_TOPIC = "\"topic\":\"pgbench.public.pgbench_accounts\"";
    private static final TableIdentifier ACCOUNTS =
            TableIdentifier.of("public", "pgbench_accounts");
    private static final TableIdentifier ACCOUNTS_SCD2 =
            TableIdentifier.of("public", "pgbench_accounts_scd2");
    private static final TableIdentifier BRANCHES =
            TableIdentifier.of("public", "pgbench_branches");
    private static final TableIdentifier TELLERS = TableIdentifier.of("public", "pgbench_tellers");
    private static final TableIdentifier UPSERT =
            TableIdentifier.of("public", "accounts_iceberg_upsert");

    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: cdf-differential",
                    "format: debezium-json",
                    "namespace: public",
                    "flows:",
                    "  - table: pgbench_accounts",
                    "    keys: [aid]",
                    "    scd-type: 1",
                    "    schema: 'aid INT, bid INT, abalance INT, filler STRING'",
                    "  - table: pgbench_accounts",
                    "    target: pgbench_accounts_scd2",
                    "    keys: [aid]",
                    "    scd-type: 2",
                    // record by record: a key changed twice in one checkpoint gives position
                    // deletes
                    "    apply-buffer-keys: 0",
                    "    schema: 'aid INT, bid INT, abalance INT, filler STRING'",
                    "  - table: pgbench_branches",
                    "    keys: [bid]",
                    "    apply-buffer-keys: 0",
                    "    schema: 'bid INT, bbalance INT, filler STRING'",
                    "  - table: pgbench_tellers",
                    "    keys: [tid]",
                    "    apply-buffer-keys: 0",
                    "    schema: 'tid INT, bid INT, tbalance INT, filler STRING'");

    /**
     * Batch bounds as line indexes of the capture (141,511 lines): 0–99,999 snapshot of the
     * accounts, 100,000–100,010 snapshot of branches and tellers, 100,011–140,010 10,000 pgbench
     * transactions (teller, branch, account update + history insert), 140,011–141,010 500 account
     * deletes each followed by a Kafka tombstone, 141,011–141,110 100 re-inserts of deleted
     * accounts, 141,111–141,510 400 account updates.
     */
    private static int[] bounds() {
        List<Integer> b = new ArrayList<>(List.of(0, 50_000, 100_011));
        for (int i = 1; i <= 25; i++) {
            b.add(100_011 + i * 1_600); // 400 transactions each: keys written twice inside
            // one checkpoint
        }
        b.addAll(List.of(140_611, 141_061, 141_111, 141_311, 141_511));
        return b.stream().mapToInt(Integer::intValue).toArray();
    }

    private static final int BATCHES = bounds().length - 1;
    private static final int STREAMED_BATCHES = 25;

    /**
     * Threads reading versions. Reads wait more than they compute: Iceberg's delete loader hands
     * every delete-file load of a data file to its worker pool and polls for completion every 10 ms
     * ({@code Tasks.waitFor}), so a state read of a table with n data files waits about n × 10–20
     * ms.
     */
    private static final int READ_THREADS = 6;

    private static final ExecutorService FULL_RANGE_READS =
            Executors.newFixedThreadPool(
                    5,
                    r -> {
                        Thread t = new Thread(r, "full-range-read");
                        t.setDaemon(true);
                        return t;
                    });

    private static Ingest ingest;

    /** What one run of the job produced. */
    private static final class Ingest {
        final Catalog catalog;
        final double seconds;

        /**
         * The full-range read (1..latest) of every table, started right after the ingest: one read
         * is sequential, version after version, so the reads of all tables run beside the tests.
         */
        final Map<TableIdentifier, Future<List<List<String>>>> fullRange = new HashMap<>();

        Ingest(Catalog catalog, double seconds) {
            this.catalog = catalog;
            this.seconds = seconds;
            for (TableIdentifier id : List.of(ACCOUNTS_SCD2, ACCOUNTS, BRANCHES, TELLERS)) {
                int columns = catalog.loadTable(id).schema().columns().size();
                fullRange.put(
                        id,
                        FULL_RANGE_READS.submit(
                                () ->
                                        changes(
                                                TableChanges.forTable(catalog.loadTable(id))
                                                        .startingVersion(1)
                                                        .build(),
                                                columns)));
            }
        }

        Table table(TableIdentifier id) {
            return catalog.loadTable(id);
        }
    }

    /**
     * Runs the job once for the class (in the first test, where the MiniCluster's environment is
     * set).
     */
    private static synchronized Ingest ingest() throws Exception {
        if (ingest != null) {
            return ingest;
        }
        Path capture = SharedData.pgbenchCapture();
        long t0 = System.nanoTime();
        Path warehouse = tmp.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        IngestPlan plan =
                IngestPlanner.plan(FlowsFile.parse(FLOWS, "flows.yaml"), List.of(capture));
        for (IngestPlan.Flow f : plan.flows) {
            StreamingTables.ensureTable(
                    catalog,
                    f.target,
                    f.spec.targetType(),
                    f.spec.identifierFields(),
                    f.tableOptions);
        }
        QuarantineTable.ensure(catalog, plan.quarantineNamespace);
        Schema upsertSchema =
                new Schema(
                        List.of(
                                Types.NestedField.required(1, "aid", Types.IntegerType.get()),
                                Types.NestedField.optional(2, "bid", Types.IntegerType.get()),
                                Types.NestedField.optional(3, "abalance", Types.IntegerType.get()),
                                Types.NestedField.optional(4, "filler", Types.StringType.get())),
                        Set.of(1));
        catalog.buildTable(UPSERT, upsertSchema)
                .withProperties(
                        Map.of(
                                TableProperties.FORMAT_VERSION,
                                "2",
                                StreamingTables.MAX_CONTINUOUS_EMPTY_COMMITS,
                                Integer.toString(Integer.MAX_VALUE),
                                StreamingTables.BLOOM_FILTER_PREFIX + "aid",
                                "true",
                                StreamingTables.BLOOM_FILTER_NDV_PREFIX + "aid",
                                "100000"))
                .create();

        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                tmp.resolve("checkpoints").toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.enableCheckpointing(100);

        // pgbench_history is not needed here: its lines are not emitted
        DataStream<SourceLine> lines =
                PacedCaptureLines.stream(
                        env,
                        capture,
                        bounds(),
                        line -> !line.contains("\"topic\":\"pgbench.public.pgbench_history\""));
        IngestJob.build(lines, plan, settings);

        RowType accountsType =
                RowType.of(
                        new LogicalType[] {
                            new IntType(false),
                            new IntType(),
                            new IntType(),
                            new VarCharType(VarCharType.MAX_LENGTH)
                        },
                        new String[] {"aid", "bid", "abalance", "filler"});
        DataStream<RowData> upserts =
                lines.flatMap(new AccountUpserts(), InternalTypeInfo.of(accountsType))
                        .uid("account-upserts")
                        .name("account upserts");
        FlinkSink.forRowData(upserts)
                .tableLoader(TableLoader.fromCatalog(settings.loader(), UPSERT))
                .equalityFieldColumns(List.of("aid"))
                .upsert(true)
                .writeParallelism(1)
                .uidPrefix("iceberg-upsert")
                .append();

        env.execute("cdf differential");
        ingest = new Ingest(catalog, (System.nanoTime() - t0) / 1e9);
        System.out.printf("Ingested %d batches in %.1f s%n", BATCHES, ingest.seconds);
        return ingest;
    }

    // ---------------------------------------------------------------------------------------------

    @Test
    void changeflowScd1AccountsEveryVersion() throws Exception {
        Ingest in = ingest();
        Result r = checkEveryVersion(in, ACCOUNTS);
        assertThat(csv(r.latest)).isEqualTo(oracle("pgbench_accounts"));
        assertThat(r.versions).isEqualTo(BATCHES);
        assertThat(r.firstVersionTypes).containsOnlyKeys("insert");
        assertThat(r.firstVersionTypes.get("insert")).isEqualTo(50_000);
        assertThat(r.types.keySet())
                .containsExactlyInAnyOrder(
                        "insert", "update_preimage", "update_postimage", "delete");
        assertThat(r.types.get("delete")).isEqualTo(500 - r.reinsertedInDeleteVersion);
        assertThat(r.reinsertedLater)
                .as("keys deleted in one version and inserted in a later one")
                .isPositive();
        assertThat(r.reinsertedInDeleteVersion)
                .as("keys deleted and re-inserted in one version")
                .isPositive();
        // all but the two snapshot batches and the batch of re-inserts only (+I of keys deleted
        // earlier)
        assertThat(r.versionsWithEqualityDeletes).isEqualTo(BATCHES - 3);
        // buffered between checkpoints (default apply-buffer-keys): one net change per key per
        // version, never a
        // position delete; the record-by-record flows below cover position deletes
        assertThat(r.versionsWithPositionDeletes).as("versions with position deletes").isZero();
    }

    @Test
    void changeflowScd2AccountsEveryVersion() throws Exception {
        Ingest in = ingest();
        Result r = checkEveryVersion(in, ACCOUNTS_SCD2);
        assertThat(r.versions).isEqualTo(BATCHES);
        assertThat(r.firstVersionTypes).containsOnlyKeys("insert");
        assertThat(r.types.keySet())
                .containsExactlyInAnyOrder("insert", "update_preimage", "update_postimage");
        // a delete closes the current version (__END_AT set): an update of that identity, never a
        // removal
        assertThat(r.versionsWithEqualityDeletes).isEqualTo(BATCHES - 3);
        assertThat(r.versionsWithPositionDeletes).isPositive();
        assertThat(
                        r.latest.keySet().stream()
                                .filter(row -> row.get(row.size() - 1).equals("\\N"))
                                .count())
                .as("current versions (__END_AT null)")
                .isEqualTo(oracle("pgbench_accounts").size());
    }

    @Test
    void changeflowScd1BranchesAndTellersEveryVersion() throws Exception {
        Ingest in = ingest();
        for (TableIdentifier id : List.of(BRANCHES, TELLERS)) {
            Result r = checkEveryVersion(in, id);
            assertThat(csv(r.latest)).as(id.toString()).isEqualTo(oracle(id.name()));
            assertThat(r.versions).as(id.toString()).isEqualTo(1 + STREAMED_BATCHES);
            assertThat(r.types.keySet())
                    .as(id.toString())
                    .containsExactlyInAnyOrder("insert", "update_preimage", "update_postimage");
            assertThat(r.versionsWithPositionDeletes).as(id.toString()).isEqualTo(STREAMED_BATCHES);
        }
        assertThat(in.table(QuarantineTable.identifier(Namespace.of("public"))).currentSnapshot())
                .isNull();
    }

    @Test
    void icebergUpsertSinkTableEveryVersion() throws Exception {
        Ingest in = ingest();
        Result r = checkEveryVersion(in, UPSERT);
        assertThat(csv(r.latest)).isEqualTo(oracle("pgbench_accounts"));
        assertThat(r.versions).isEqualTo(BATCHES);
        assertThat(r.firstVersionTypes).containsOnlyKeys("insert");
        assertThat(r.types.keySet())
                .containsExactlyInAnyOrder(
                        "insert", "update_preimage", "update_postimage", "delete");
        assertThat(r.types.get("delete")).isEqualTo(500 - r.reinsertedInDeleteVersion);
        assertThat(r.reinsertedLater).isPositive();
        // upsert mode writes an equality delete for every row, new keys included
        assertThat(r.versionsWithEqualityDeletes).isEqualTo(BATCHES);
        assertThat(r.versionsWithPositionDeletes).isPositive();
    }

    // ---------------------------------------------------------------------------------------------

    /** Findings of {@link #checkEveryVersion}. */
    private static final class Result {
        /**
         * Versions checked, an empty end-of-input commit ({@link EndOfInputCommits#isEmpty}) not
         * counted.
         */
        int versions;

        final Map<String, Integer> types = new TreeMap<>();
        Map<String, Integer> firstVersionTypes = Map.of();
        int versionsWithEqualityDeletes;
        int versionsWithPositionDeletes;

        /** Identities removed by a {@code delete} in one version and inserted in a later one. */
        int reinsertedLater;

        /**
         * Identities deleted and re-inserted with other values in one version (an update there).
         */
        int reinsertedInDeleteVersion;

        /** The latest state, as read by Iceberg's scan. */
        Map<List<String>, Integer> latest = Map.of();
    }

    /**
     * The changes of one version and the table's state at that version, read off the checking
     * thread.
     */
    private static final class VersionData {
        final List<List<String>> changes;
        final Map<List<String>, Integer> state;

        VersionData(List<List<String>> changes, Map<List<String>, Integer> state) {
            this.changes = changes;
            this.state = state;
        }
    }

    /**
     * The differential check of every version of the table's main ancestry (see the class comment).
     * Reading runs on {@value #READ_THREADS} threads (each task with its own {@link Table}
     * instance, all of them sharing one {@link DeleteFileCache}), ahead of the sequential check;
     * the full-range read runs beside them.
     */
    private static Result checkEveryVersion(Ingest in, TableIdentifier id) throws Exception {
        Catalog catalog = in.catalog;
        Table table = catalog.loadTable(id);
        List<Snapshot> snapshots = new ArrayList<>();
        SnapshotUtil.currentAncestors(table).forEach(snapshots::add);
        Collections.reverse(snapshots);
        Schema schema = table.schema();
        int columns = schema.columns().size();
        List<Integer> identity = new ArrayList<>();
        for (int i = 0; i < columns; i++) {
            if (schema.identifierFieldIds().contains(schema.columns().get(i).fieldId())) {
                identity.add(i);
            }
        }
        assertThat(identity).as("identifier fields of " + table.name()).isNotEmpty();

        ExecutorService pool = Executors.newFixedThreadPool(READ_THREADS);
        // the per-version reads share loaded delete files, as the SQL reader's threads do
        DeleteFileCache deleteFiles = new DeleteFileCache();
        try {
            Future<List<List<String>>> fullRange = in.fullRange.get(id);
            List<Future<VersionData>> reads = new ArrayList<>();
            for (Snapshot snapshot : snapshots) {
                long v = snapshot.sequenceNumber();
                long snapshotId = snapshot.snapshotId();
                reads.add(
                        pool.submit(
                                () -> {
                                    Table own = catalog.loadTable(id);
                                    List<List<String>> changes =
                                            changes(
                                                    TableChanges.forTable(own)
                                                            .startingVersion(v)
                                                            .endingVersion(v)
                                                            .deleteFileCache(deleteFiles)
                                                            .build(),
                                                    columns);
                                    return new VersionData(
                                            changes,
                                            multiset(
                                                    TableRows.readSnapshot(own, snapshotId),
                                                    columns));
                                }));
            }
            return check(table, snapshots, reads, fullRange, columns, identity);
        } finally {
            pool.shutdownNow();
        }
    }

    private static Result check(
            Table table,
            List<Snapshot> snapshots,
            List<Future<VersionData>> reads,
            Future<List<List<String>>> fullRange,
            int columns,
            List<Integer> identity)
            throws Exception {
        Result result = new Result();
        Map<List<String>, Integer> before = new HashMap<>();
        List<List<String>> perVersion = new ArrayList<>();
        Map<List<String>, Long> deletedAt = new HashMap<>();
        Set<List<String>> reinsertedLater = new HashSet<>();
        long parentVersion = 0;
        Long parentId = null;
        for (int s = 0; s < snapshots.size(); s++) {
            Snapshot snapshot = snapshots.get(s);
            long v = snapshot.sequenceNumber();
            String at =
                    table.name()
                            + " version "
                            + v
                            + " ("
                            + snapshot.operation()
                            + ", "
                            + snapshot.summary()
                            + ")";
            assertThat(snapshot.parentId()).as(at).isEqualTo(parentId);
            assertThat(v).as(at).isEqualTo(parentVersion + 1);
            assertThat(snapshot.operation()).as(at).isNotEqualTo(DataOperations.REPLACE);
            if (count(snapshot, "added-equality-delete-files") > 0) {
                result.versionsWithEqualityDeletes++;
            }
            if (count(snapshot, "added-position-delete-files") > 0) {
                result.versionsWithPositionDeletes++;
            }

            VersionData data = reads.get(s).get();
            reads.set(s, null);
            List<List<String>> changes = data.changes;
            OffsetDateTime committed =
                    OffsetDateTime.ofInstant(
                            Instant.ofEpochMilli(snapshot.timestampMillis()), ZoneOffset.UTC);
            Map<String, Integer> types = new TreeMap<>();
            for (int i = 0; i < changes.size(); i++) {
                List<String> c = changes.get(i);
                String type = c.get(columns);
                types.merge(type, 1, Integer::sum);
                assertThat(c.get(columns + 1))
                        .as(at + ": _commit_version of " + c)
                        .isEqualTo(Long.toString(v));
                assertThat(c.get(columns + 2))
                        .as(at + ": _commit_timestamp of " + c)
                        .isEqualTo(committed.toString());
                if (type.equals("update_preimage")) {
                    assertThat(i + 1)
                            .as(at + ": preimage " + c + " is the last change")
                            .isLessThan(changes.size());
                    List<String> next = changes.get(i + 1);
                    assertThat(next.get(columns))
                            .as(at + ": change after preimage " + c)
                            .isEqualTo("update_postimage");
                    assertThat(project(next, identity))
                            .as(at + ": identity of the postimage after " + c)
                            .isEqualTo(project(c, identity));
                    if (!c.get(columns - 1).startsWith("reinserted")
                            && next.get(columns - 1).startsWith("reinserted")) {
                        result.reinsertedInDeleteVersion++; // pgbench_accounts: deleted and
                        // re-inserted in this version
                    }
                } else if (type.equals("update_postimage")) {
                    assertThat(i).as(at + ": postimage " + c + " is the first change").isPositive();
                    assertThat(changes.get(i - 1).get(columns))
                            .as(at + ": change before postimage " + c)
                            .isEqualTo("update_preimage");
                } else {
                    assertThat(type).as(at).isIn("insert", "delete");
                }
                List<String> id = project(c, identity);
                if (type.equals("delete")) {
                    deletedAt.put(id, v);
                } else if (type.equals("insert") && deletedAt.containsKey(id)) {
                    reinsertedLater.add(id);
                }
            }
            types.forEach((t, n) -> result.types.merge(t, n, Integer::sum));
            if (result.versions == 0) {
                result.firstVersionTypes = types;
            }

            Map<List<String>, Integer> after = data.state;
            Map<List<String>, Integer> applied = apply(before, changes, columns, at);
            assertSameRows(at + ": state(v-1) + changes(v) vs state(v)", applied, after);
            if (!before.equals(after)) {
                assertThat(changes)
                        .as(at + ": the state changed, the change set must not be empty")
                        .isNotEmpty();
            }
            perVersion.addAll(changes);
            before = after;
            parentId = snapshot.snapshotId();
            parentVersion = v;
            if (EndOfInputCommits.isEmpty(snapshot)) {
                // Iceberg's committer, at the end of the bounded input, commits every checkpoint
                // it has not yet been told is complete one by one, the writer's empty end-of-input
                // flush included, when one of them has delete files: a snapshot without files
                // whose checkpoint id is Long.MAX_VALUE. Whether it appears depends on whether the
                // last checkpoint's completion reached the committer before the end of input.
                assertThat(s)
                        .as(at + ": an empty end-of-input commit is the last snapshot")
                        .isEqualTo(snapshots.size() - 1);
                assertThat(changes).as(at + ": changes of an empty commit").isEmpty();
                continue;
            }
            result.versions++;
        }

        result.reinsertedLater = reinsertedLater.size();
        result.latest = before;
        System.out.printf(
                "%s: %d versions checked, changes %s%n",
                table.name(), result.versions, result.types);
        if (fullRange == null) {
            return result;
        }
        List<List<String>> full = fullRange.get();
        assertThat(full.size())
                .as(table.name() + ": rows of the full-range read")
                .isEqualTo(perVersion.size());
        assertThat(full)
                .as(table.name() + ": the full-range read equals the per-version reads")
                .isEqualTo(perVersion);
        assertSameRows(
                table.name() + ": empty + changes(1.." + parentVersion + ") vs state(latest)",
                apply(Map.of(), full, columns, table.name()),
                before);
        return result;
    }

    /** Change rows rendered as strings: the table's columns, then type, version, timestamp. */
    static List<List<String>> changes(TableChanges changes, int columns) throws IOException {
        List<List<String>> out = new ArrayList<>();
        try (CloseableIterable<Record> rows = changes.read()) {
            for (Record r : rows) {
                List<String> row = render(r, columns);
                row.add((String) r.getField("_change_type"));
                row.add(Objects.toString(r.getField("_commit_version")));
                row.add(Objects.toString(r.getField("_commit_timestamp")));
                out.add(row);
            }
        }
        return out;
    }

    private static List<String> render(Record r, int columns) {
        List<String> row = new ArrayList<>(columns + 3);
        for (int i = 0; i < columns; i++) {
            Object v = r.get(i);
            row.add(
                    v == null
                            ? "\\N"
                            : v.toString()); // same rendering on both sides of every comparison
        }
        return row;
    }

    static Map<List<String>, Integer> multiset(List<Record> rows, int columns) {
        Map<List<String>, Integer> out = new HashMap<>();
        for (Record r : rows) {
            out.merge(render(r, columns), 1, Integer::sum);
        }
        return out;
    }

    /** {@code state} with {@code changes} applied; a removal of a row the state lacks fails. */
    static Map<List<String>, Integer> apply(
            Map<List<String>, Integer> state, List<List<String>> changes, int columns, String at) {
        Map<List<String>, Integer> out = new HashMap<>(state);
        List<List<String>> missing = new ArrayList<>();
        for (List<String> c : changes) {
            List<String> row = c.subList(0, columns);
            String type = c.get(columns);
            if (type.equals("insert") || type.equals("update_postimage")) {
                out.merge(new ArrayList<>(row), 1, Integer::sum);
            } else {
                Integer n = out.get(row);
                if (n == null) {
                    missing.add(c);
                } else if (n == 1) {
                    out.remove(row);
                } else {
                    out.put(new ArrayList<>(row), n - 1);
                }
            }
        }
        assertThat(missing)
                .as(at + ": changes removing rows that the previous state does not hold")
                .isEmpty();
        return out;
    }

    static void assertSameRows(
            String what, Map<List<String>, Integer> actual, Map<List<String>, Integer> expected) {
        if (actual.equals(expected)) {
            return;
        }
        List<String> diff = new ArrayList<>();
        Set<List<String>> rows = new HashSet<>(actual.keySet());
        rows.addAll(expected.keySet());
        for (List<String> row : rows) {
            int a = actual.getOrDefault(row, 0);
            int e = expected.getOrDefault(row, 0);
            if (a != e) {
                diff.add(row + ": " + a + " after applying the changes, " + e + " in the table");
            }
        }
        Collections.sort(diff);
        throw new AssertionError(
                what
                        + ": "
                        + diff.size()
                        + " rows differ, e.g.\n  "
                        + String.join("\n  ", diff.subList(0, Math.min(20, diff.size()))));
    }

    private static List<String> project(List<String> row, List<Integer> positions) {
        List<String> out = new ArrayList<>();
        positions.forEach(p -> out.add(row.get(p)));
        return out;
    }

    private static long count(Snapshot snapshot, String summaryKey) {
        return Long.parseLong(snapshot.summary().getOrDefault(summaryKey, "0"));
    }

    /** A state as PostgreSQL-style CSV lines (nulls empty), ordered by the first (key) column. */
    private static List<String> csv(Map<List<String>, Integer> state) {
        List<String> out = new ArrayList<>();
        state.forEach(
                (row, n) -> {
                    List<String> values = new ArrayList<>();
                    row.forEach(v -> values.add(v.equals("\\N") ? "" : TableRows.formatValue(v)));
                    for (int i = 0; i < n; i++) {
                        out.add(String.join(",", values));
                    }
                });
        return PgbenchCaptureITCase.sortedByKey(out);
    }

    private static List<String> oracle(String table) {
        try {
            return PgbenchCaptureITCase.sortedByKey(SharedData.finalCsv(table));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The account changes of the capture as upserts for Iceberg's upsert sink, in capture order:
     * {@code r}/{@code c}/{@code u} → the {@code after} row ({@code INSERT} / {@code
     * UPDATE_AFTER}), {@code d} → {@code DELETE} of the {@code before} row's key; Kafka tombstones
     * are skipped.
     */
    private static final class AccountUpserts extends RichFlatMapFunction<SourceLine, RowData> {
        private static final long serialVersionUID = 1L;
        private transient ObjectMapper json;

        @Override
        public void open(OpenContext context) {
            json = new ObjectMapper();
        }

        @Override
        public void flatMap(SourceLine line, Collector<RowData> out) throws IOException {
            if (line.marker()
                    || !new String(line.bytes, StandardCharsets.UTF_8).contains(ACCOUNTS_TOPIC)) {
                return;
            }
            JsonNode value = json.readTree(line.bytes).path("value");
            if (value.isNull() || value.isMissingNode()) {
                return;
            }
            String op = value.path("op").asText();
            JsonNode image = op.equals("d") ? value.path("before") : value.path("after");
            GenericRowData row =
                    GenericRowData.of(
                            image.path("aid").asInt(),
                            intOrNull(image.path("bid")),
                            intOrNull(image.path("abalance")),
                            image.path("filler").isNull() || image.path("filler").isMissingNode()
                                    ? null
                                    : StringData.fromString(image.path("filler").asText()));
            row.setRowKind(
                    op.equals("d")
                            ? RowKind.DELETE
                            : op.equals("u") ? RowKind.UPDATE_AFTER : RowKind.INSERT);
            out.collect(row);
        }

        private static Integer intOrNull(JsonNode n) {
            return n.isNull() || n.isMissingNode() ? null : n.asInt();
        }
    }
}

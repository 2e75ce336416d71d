package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.e2e.postgres.DebeziumToKafka;
import dev.changeflow.e2e.postgres.LocalPostgres;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.PGConnection;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A live source end to end: a real PostgreSQL ({@link LocalPostgres}) with the pgbench schema, the
 * Debezium embedded engine (PostgreSQL connector, {@code pgoutput}, JSON with schemas) writing one
 * topic per table to the embedded Kafka broker ({@link DebeziumToKafka}), and changeflow's Kafka
 * ingest ({@link LocalIngest#runKafka}, the flows of {@code examples/pgbench-flows.yaml}: SCD type
 * 1 by primary key, sequenced by {@code source.lsn}; history append-only) running while {@code
 * pgbench} runs a workload of TPC-B transactions, deletes, upserts and multi-row transactions that
 * delete and re-insert a key. After the workload, one transaction inserts a marker row into each
 * table; once every marker is in Iceberg, each Iceberg table must equal {@code SELECT *} of its
 * PostgreSQL table exactly (as {@code COPY ... CSV} prints it; history as a multiset), every record
 * Debezium wrote must have been ingested exactly once (none quarantined), and the history table
 * must have received an Iceberg commit while pgbench was still running (the ingest was live, not a
 * batch afterwards).
 *
 * <p>Why a marker per table: each topic has one partition, so a table's marker in Iceberg proves
 * every earlier event of that table is there; a single marker table would prove nothing about the
 * other topics, which Flink reads independently.
 *
 * <p>Needs PostgreSQL's server binaries (skipped with a message without them; a failure under
 * {@code CI=true}).
 */
class LivePostgresITCase {
    @RegisterExtension
    @Order(1)
    static final LocalPostgres PG = new LocalPostgres();

    @RegisterExtension
    @Order(2)
    static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    private static final String DB = "pgbench";
    private static final String PREFIX = "pgbench";
    private static final List<String> TABLES =
            List.of("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history");
    private static final int BRANCHES = 2;
    private static final int TELLERS = 20;
    private static final int ACCOUNTS = 10_000;

    /** Key of every marker row: outside the workload's key ranges. */
    private static final int MARKER = 1_000_000;

    private static final int WORKLOAD_SECONDS = 20;
    private static final Duration INGEST_IDLE = Duration.ofSeconds(6);
    private static final Duration DEADLINE = Duration.ofMinutes(6);

    @TempDir Path tmp;

    @Test
    void workloadOnLivePostgresThroughDebeziumAndKafkaEqualsSelectStar() throws Exception {
        long t0 = System.nanoTime();
        PG.createDatabase(DB);
        createPgbenchSchema();
        List<String> topics =
                TABLES.stream().map(LivePostgresITCase::topic).collect(Collectors.toList());
        KAFKA.createTopics(1, topics);

        Path warehouse = tmp.resolve("warehouse");
        IngestConfig cfg = PgbenchCaptureITCase.config();
        cfg.checkpointInterval = Duration.ofSeconds(2);
        IngestPlan plan = IngestPlanner.plan(cfg, List.of());
        KafkaInput kafka = new KafkaInput();
        kafka.bootstrapServers = KAFKA.bootstrapServers();
        kafka.topics = topics;
        kafka.groupId = "it-live-pg";
        kafka.startingOffsets = StartingOffsets.earliest();

        ExecutorService ingestThread = Executors.newSingleThreadExecutor();
        AtomicBoolean testEnded = new AtomicBoolean();
        CompletableFuture<Long> markersInserted = new CompletableFuture<>();
        Process pgbench = null;
        try (DebeziumToKafka debezium =
                DebeziumToKafka.start(PG, DB, "public\\.pgbench_.*", PREFIX, KAFKA, Map.of())) {
            debezium.awaitSent(
                    "initial snapshot",
                    Duration.ofMinutes(1),
                    sent ->
                            sent.getOrDefault(topic("pgbench_accounts"), 0L) >= ACCOUNTS
                                    && sent.getOrDefault(topic("pgbench_branches"), 0L) >= BRANCHES
                                    && sent.getOrDefault(topic("pgbench_tellers"), 0L) >= TELLERS);
            System.out.printf(
                    "PostgreSQL + schema + Kafka + Debezium snapshot (%,d events) in %.1f s%n",
                    debezium.sentTotal(), seconds(t0));

            // changeflow ingests in the background; the workload starts once the snapshot is
            // committed to Iceberg, so it runs while changeflow ingests; the markers follow it
            Future<Totals> ingestion =
                    ingestThread.submit(
                            () ->
                                    ingestUntilMarkers(
                                            plan, kafka, warehouse, markersInserted, testEnded));
            awaitFirstCommit(warehouse, ingestion);
            long workloadStart = System.currentTimeMillis();
            pgbench = startWorkload();
            pgbench.onExit()
                    .thenRun(
                            () -> {
                                try {
                                    insertMarkers();
                                    markersInserted.complete(System.currentTimeMillis());
                                } catch (RuntimeException e) {
                                    markersInserted.completeExceptionally(e);
                                }
                            });
            Totals totals = ingestion.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            long markersAt = markersInserted.get();
            String pgbenchOut =
                    Files.readString(tmp.resolve("pgbench.out"), StandardCharsets.UTF_8);
            System.out.print(pgbenchOut);
            assertThat(pgbench.exitValue())
                    .as("pgbench exit code; output:%n%s", pgbenchOut)
                    .isZero();

            Map<String, Long> sent = debezium.sent();
            System.out.printf(
                    "Debezium wrote %s; changeflow ingested %,d records in %d run(s), %.1f s of job time (%,.0f events/s)%n",
                    sent,
                    totals.records,
                    totals.runs,
                    totals.jobSeconds,
                    totals.records / totals.jobSeconds);
            assertThat(totals.quarantined).isZero();
            assertThat(totals.records)
                    .as("every record Debezium wrote, ingested exactly once")
                    .isEqualTo(debezium.sentTotal());
            assertThat(sent.get(topic("pgbench_history")))
                    .as("history events: the workload ran")
                    .isGreaterThan(100L);

            for (String t : TABLES) {
                List<String> expected = selectStar(t);
                List<String> actual = PgbenchCaptureITCase.rows(warehouse, "public." + t);
                if (t.equals("pgbench_history")) {
                    assertThat(PgbenchCaptureITCase.sorted(actual))
                            .as(t)
                            .isEqualTo(PgbenchCaptureITCase.sorted(expected));
                } else {
                    assertThat(actual).as(t).isEqualTo(PgbenchCaptureITCase.sortedByKey(expected));
                }
                System.out.printf("  %-18s %,7d rows equal SELECT *%n", t, expected.size());
            }
            Table history =
                    CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                            .open()
                            .loadTable(TableIdentifier.of("public", "pgbench_history"));
            long commitsDuringWorkload = 0;
            for (Snapshot s : history.snapshots()) {
                if (s.timestampMillis() > workloadStart && s.timestampMillis() < markersAt) {
                    commitsDuringWorkload++;
                }
            }
            assertThat(commitsDuringWorkload)
                    .as("Iceberg commits of pgbench_history while pgbench ran")
                    .isPositive();
            System.out.printf(
                    "Live PostgreSQL test: %.1f s in all; %d history commit(s) while pgbench ran%n",
                    seconds(t0), commitsDuringWorkload);
        } finally {
            // a failed test must not leave the ingest looping until its deadline
            testEnded.set(true);
            ingestThread.shutdown();
            if (pgbench != null) {
                pgbench.destroy();
            }
        }
    }

    /**
     * Runs the local launcher over Kafka again and again — each run stops once the input was idle
     * for {@link #INGEST_IDLE} (with a savepoint), the next resumes from it — until the markers
     * were inserted and every one is in Iceberg.
     *
     * @throws IllegalStateException after {@link #DEADLINE}, or once the test ended
     */
    private static Totals ingestUntilMarkers(
            IngestPlan plan,
            KafkaInput kafka,
            Path warehouse,
            CompletableFuture<Long> markersInserted,
            AtomicBoolean testEnded)
            throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        Totals totals = new Totals();
        while (!(markersInserted.isDone() && markersInIceberg(warehouse))) {
            if (System.nanoTime() > deadline || testEnded.get()) {
                throw new IllegalStateException(
                        "the markers did not reach Iceberg within "
                                + DEADLINE
                                + (testEnded.get() ? " (the test ended)" : ""));
            }
            LocalIngest.Summary s = KafkaPgbenchITCase.run(plan, kafka, warehouse, INGEST_IDLE);
            totals.records += s.records;
            totals.quarantined += s.quarantined;
            totals.jobSeconds += s.runSeconds;
            totals.runs++;
        }
        return totals;
    }

    /** What the ingest runs did, summed. */
    private static final class Totals {
        long records;
        long quarantined;
        double jobSeconds;
        int runs;
    }

    /**
     * Waits until {@code pgbench_accounts} has its first Iceberg snapshot (the initial snapshot's
     * rows).
     *
     * @throws IllegalStateException when the ingest ended first, or after three minutes (a busy CI
     *     machine runs two test classes at once)
     */
    private static void awaitFirstCommit(Path warehouse, Future<Totals> ingestion)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        TableIdentifier accounts = TableIdentifier.of("public", "pgbench_accounts");
        while (true) {
            if (ingestion.isDone()) {
                ingestion.get();
                throw new IllegalStateException("the ingest ended before its first commit");
            }
            Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
            if (catalog.tableExists(accounts)
                    && catalog.loadTable(accounts).currentSnapshot() != null) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "no Iceberg commit of " + accounts + " within three minutes");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    private static String topic(String table) {
        return PREFIX + ".public." + table;
    }

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    /**
     * pgbench's own tables ({@code pgbench -i -I dtp}: drop, create, primary keys) filled the way
     * {@code pgbench -i} fills them, at a smaller size (a scale factor cannot go below 1 = 100,000
     * accounts), with {@code REPLICA IDENTITY FULL} for full before images.
     */
    private void createPgbenchSchema() throws Exception {
        runPgbench(List.of("-i", "-I", "dtp"), tmp.resolve("pgbench-init.out"));
        try (Connection c = PG.connect(DB);
                Statement s = c.createStatement()) {
            s.execute(
                    "INSERT INTO pgbench_branches (bid, bbalance) SELECT b, 0 FROM generate_series(1, "
                            + BRANCHES
                            + ") b");
            s.execute(
                    "INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT t, (t - 1) / "
                            + (TELLERS / BRANCHES)
                            + " + 1, 0 FROM generate_series(1, "
                            + TELLERS
                            + ") t");
            s.execute(
                    "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT a, (a - 1) / "
                            + (ACCOUNTS / BRANCHES)
                            + " + 1, 0, '' FROM generate_series(1, "
                            + ACCOUNTS
                            + ") a");
            for (String t : TABLES) {
                s.execute("ALTER TABLE " + t + " REPLICA IDENTITY FULL");
            }
        }
    }

    /**
     * pgbench with 4 clients for {@link #WORKLOAD_SECONDS} s at a bounded rate, mixing TPC-B
     * transactions (update account, teller, branch; insert history), single deletes, upserts and
     * transactions that update 10 accounts twice and delete and re-insert another.
     */
    private Process startWorkload() throws Exception {
        Path scripts = Files.createDirectories(tmp.resolve("scripts"));
        Files.writeString(
                scripts.resolve("tpcb.sql"),
                String.join(
                        "\n",
                        "\\set aid random(1, :accounts)",
                        "\\set bid random(1, :branches)",
                        "\\set tid random(1, :tellers)",
                        "\\set delta random(-5000, 5000)",
                        "BEGIN;",
                        "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
                        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
                        "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;",
                        "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;",
                        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
                        "END;",
                        ""));
        Files.writeString(
                scripts.resolve("delete.sql"),
                String.join(
                        "\n",
                        "\\set aid random(1, :accounts)",
                        "DELETE FROM pgbench_accounts WHERE aid = :aid;",
                        ""));
        Files.writeString(
                scripts.resolve("upsert.sql"),
                String.join(
                        "\n",
                        "\\set aid random(1, :accounts)",
                        "\\set delta random(-5000, 5000)",
                        "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (:aid, 1, :delta, 'inserted')"
                                + " ON CONFLICT (aid) DO UPDATE SET abalance = pgbench_accounts.abalance + :delta, filler = 'upserted';",
                        ""));
        Files.writeString(
                scripts.resolve("multi.sql"),
                String.join(
                        "\n",
                        "\\set from random(1, :accounts - 11)",
                        "BEGIN;",
                        "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid BETWEEN :from AND :from + 9;",
                        "UPDATE pgbench_accounts SET abalance = abalance * 2, filler = 'twice' WHERE aid BETWEEN :from AND :from + 9;",
                        "DELETE FROM pgbench_accounts WHERE aid = :from + 10;",
                        "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (:from + 10, 2, 7, 'same transaction')"
                                + " ON CONFLICT (aid) DO NOTHING;",
                        "END;",
                        ""));
        return startPgbench(
                List.of(
                        "-n",
                        "-c",
                        "4",
                        "-j",
                        "2",
                        "-T",
                        String.valueOf(WORKLOAD_SECONDS),
                        "-R",
                        "100",
                        "--random-seed=20261130",
                        "--max-tries=100",
                        "-D",
                        "accounts=" + ACCOUNTS,
                        "-D",
                        "branches=" + BRANCHES,
                        "-D",
                        "tellers=" + TELLERS,
                        "-f",
                        scripts.resolve("tpcb.sql") + "@6",
                        "-f",
                        scripts.resolve("delete.sql") + "@1",
                        "-f",
                        scripts.resolve("upsert.sql") + "@2",
                        "-f",
                        scripts.resolve("multi.sql") + "@1"),
                tmp.resolve("pgbench.out"));
    }

    private void runPgbench(List<String> args, Path out) throws Exception {
        Process p = startPgbench(args, out);
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("pgbench %s finished", args).isTrue();
        assertThat(p.exitValue()).as("pgbench %s: %s", args, Files.readString(out)).isZero();
    }

    private Process startPgbench(List<String> args, Path out) throws Exception {
        List<String> cmd =
                new ArrayList<>(
                        Arrays.asList(
                                PG.tool("pgbench"),
                                "-h",
                                "127.0.0.1",
                                "-p",
                                String.valueOf(PG.port()),
                                "-U",
                                PG.user()));
        cmd.addAll(args);
        cmd.add(DB);
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
    }

    /**
     * One row whose first column is {@link #MARKER} in each table, in one transaction after the
     * workload.
     */
    private static void insertMarkers() {
        try (Connection c = PG.connect(DB);
                Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("INSERT INTO pgbench_accounts VALUES (" + MARKER + ", 1, 0, 'marker')");
            s.execute("INSERT INTO pgbench_branches VALUES (" + MARKER + ", 0, 'marker')");
            s.execute("INSERT INTO pgbench_tellers VALUES (" + MARKER + ", 1, 0, 'marker')");
            s.execute(
                    "INSERT INTO pgbench_history VALUES ("
                            + MARKER
                            + ", "
                            + MARKER
                            + ", "
                            + MARKER
                            + ", 0, CURRENT_TIMESTAMP, 'marker')");
            c.commit();
        } catch (Exception e) {
            throw new IllegalStateException("cannot insert the markers", e);
        }
    }

    /**
     * Whether every table's marker row (first column = {@link #MARKER}) is in its Iceberg table;
     * false before the tables exist.
     */
    private static boolean markersInIceberg(Path warehouse) {
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        for (String t : TABLES) {
            TableIdentifier id = TableIdentifier.of("public", t);
            if (!catalog.tableExists(id)) {
                return false;
            }
            Table table = catalog.loadTable(id);
            String key = table.schema().columns().get(0).name();
            if (TableRows.read(table, Expressions.equal(key, MARKER)).stream()
                    .noneMatch(r -> Integer.valueOf(MARKER).equals(r.get(0)))) {
                return false;
            }
        }
        return true;
    }

    /** {@code SELECT *} of a table as {@code COPY ... CSV} prints it, one line per row. */
    private static List<String> selectStar(String table) throws Exception {
        try (Connection c = PG.connect(DB)) {
            StringWriter w = new StringWriter();
            c.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyOut("COPY (SELECT * FROM " + table + ") TO STDOUT WITH (FORMAT csv)", w);
            return w.toString().lines().collect(Collectors.toList());
        }
    }
}

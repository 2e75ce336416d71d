package dev.changeflow.e2e.bench;

import dev.changeflow.e2e.IcebergWrites;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.sql.SourceVersionLog;

import org.apache.flink.core.execution.JobClient;
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

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Gold latency benchmark (issue #16 item 4; not a test): the delay from a Silver commit to the
 * first Gold commit that reflects it, for a Gold SQL job ({@link GoldSql#runLocal}, the path of
 * {@code bin/changeflow gold FILE.sql}) that aggregates a Silver table's changelog per branch.
 *
 * <p>Silver is {@code silver.accounts (aid BIGINT, bid BIGINT, abalance BIGINT)}, identifier field
 * {@code aid}, format v2, {@code accounts} rows over 10 branches at version 1. While the Gold job
 * runs, a writer makes {@code commits} Silver commits every {@code pace-ms} ms, each replacing the
 * rows of {@code changed} random accounts: an equality delete on {@code aid} and their new images.
 * With {@code deletes=rows} (the default) the delete file holds the accounts' whole old rows, the
 * table has {@code changeflow.eq-deletes-carry-rows=true} and every commit names a changelog writer
 * ({@code changeflow.changelog-writer}), as changeflow's SCD1 sink writes a streaming table: the
 * change feed takes pre-images straight from the delete files (semantics.md F2). With {@code
 * deletes=keys} the delete file holds only the keys, as Iceberg's upsert sink writes them: the
 * change feed looks pre-images up in the parent snapshot's data files, to which the whole pile of
 * earlier equality deletes applies (the table is never compacted here). Gold is {@code
 * gold.branch_stats (bid, total, accounts)}, primary key {@code bid}: {@code SELECT bid,
 * SUM(abalance), COUNT(*) FROM silver.`accounts$changelog` GROUP BY bid}.
 *
 * <p>Latency of Silver version v: the commit time (ms) of the first Gold snapshot whose {@code
 * changeflow.source-version.silver.accounts} (the Silver version the Gold commit is complete up to,
 * docs/semantics.md G2) is ≥ v, minus v's commit time. Prints p50, p90, p99 and max (ms) per
 * setting: the changelog read's {@code monitor-interval} (default 10 s, and 1 s) × the job's
 * checkpoint interval (5 s default, and 1 s). Then Gold throughput: a bounded run of the same file
 * from version 1 over all the commits, in changelog rows per second (each update is a {@code -U}
 * and a {@code +U}). Every run's final Gold table is checked against the aggregate of Silver's
 * final rows.
 *
 * <p>Arguments {@code key=value}, all optional: {@code commits=200}, {@code pace-ms=500}, {@code
 * changed=20}, {@code accounts=10000}, {@code deletes=rows} ({@code rows} or {@code keys}), {@code
 * settings=10s/5s,1s/5s,1s/1s} (monitor interval / checkpoint interval), {@code
 * dir=e2e-tests/target/bench-gold-latency}. Run: {@code ./mvnw -B -q -Pbench -pl e2e-tests -am
 * verify -DskipTests -Dbench.class=dev.changeflow.e2e.bench.GoldLatencyBenchmark
 * -Dbench.args="commits=200"}.
 */
public final class GoldLatencyBenchmark {
    private static final int BRANCHES = 10;
    private static final TableIdentifier SILVER = TableIdentifier.of("silver", "accounts");
    private static final TableIdentifier GOLD = TableIdentifier.of("gold", "branch_stats");
    private static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.LongType.get()),
                            Types.NestedField.optional(2, "bid", Types.LongType.get()),
                            Types.NestedField.optional(3, "abalance", Types.LongType.get())),
                    java.util.Set.of(1));

    private GoldLatencyBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            for (String kv : arg.split("\\s+")) {
                if (!kv.isBlank()) {
                    String[] p = kv.split("=", 2);
                    a.put(p[0], p.length > 1 ? p[1] : "");
                }
            }
        }
        int commits = Integer.parseInt(a.getOrDefault("commits", "200"));
        long pace = Long.parseLong(a.getOrDefault("pace-ms", "500"));
        int changed = Integer.parseInt(a.getOrDefault("changed", "20"));
        int accounts = Integer.parseInt(a.getOrDefault("accounts", "10000"));
        String settings = a.getOrDefault("settings", "10s/5s,1s/5s,1s/1s");
        String deletes = a.getOrDefault("deletes", "rows");
        if (!deletes.equals("rows") && !deletes.equals("keys")) {
            throw new IllegalArgumentException(
                    "deletes="
                            + deletes
                            + " is not a delete mode; use deletes=rows or deletes=keys");
        }
        boolean wholeRows = deletes.equals("rows");
        Path dir = Path.of(a.getOrDefault("dir", "e2e-tests/target/bench-gold-latency"));
        System.out.printf(
                "Gold latency: %d Silver commits every %d ms, %d of %d accounts changed per commit,"
                        + " equality deletes of %s, %d cores, load average %.2f%n",
                commits,
                pace,
                changed,
                accounts,
                wholeRows ? "whole rows (changeflow's SCD1 sink)" : "keys (Iceberg's upsert sink)",
                Runtime.getRuntime().availableProcessors(),
                java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        .getSystemLoadAverage());
        System.out.printf(
                "%-22s %8s %8s %8s %8s %8s %10s%n",
                "monitor/checkpoint", "p50 ms", "p90 ms", "p99 ms", "max ms", "commits", "result");
        Path last = null;
        for (String setting : settings.split(",")) {
            String[] s = setting.split("/");
            Path run = dir.resolve(setting.replace('/', '-'));
            last = run;
            latencyRun(run, s[0], parseDuration(s[1]), commits, pace, changed, accounts, wholeRows);
        }
        throughputRun(last);
    }

    private static void latencyRun(
            Path dir,
            String monitorInterval,
            Duration checkpointInterval,
            int commits,
            long pace,
            int changed,
            int accounts,
            boolean wholeRows)
            throws Exception {
        LocalRunner.deleteRecursively(dir);
        Path warehouse = dir.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("silver"));
        Table silver =
                catalog.createTable(
                        SILVER,
                        SCHEMA,
                        PartitionSpec.unpartitioned(),
                        wholeRows
                                ? Map.of(
                                        TableProperties.FORMAT_VERSION,
                                        "2",
                                        ChangeFeedOptions.EQ_DELETES_CARRY_ROWS,
                                        "true")
                                : Map.of(TableProperties.FORMAT_VERSION, "2"));
        Map<Long, long[]> rows = new TreeMap<>();
        Random random = new Random(42);
        for (long aid = 1; aid <= accounts; aid++) {
            rows.put(aid, new long[] {aid % BRANCHES, random.nextInt(100_000)});
        }
        commit(silver, new ArrayList<>(rows.keySet()), rows, null, wholeRows);

        Path file = dir.resolve("gold.sql");
        Files.writeString(file, goldSql(monitorInterval, false));
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.checkpointInterval = checkpointInterval;
        o.out = new PrintStream(java.io.OutputStream.nullOutputStream());
        AtomicReference<JobClient> job = new AtomicReference<>();
        o.onStart = job::set;
        CompletableFuture<Void> gold =
                CompletableFuture.runAsync(
                        () -> {
                            try {
                                GoldSql.runLocal(
                                        GoldSql.read(file),
                                        CatalogSettings.localHadoop(warehouse.toAbsolutePath()),
                                        o);
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        });
        // the first Gold commit reflects Silver's version 1
        long first = awaitGoldVersion(catalog, 1, gold);
        if (first < 0) {
            return;
        }

        Map<Long, Long> silverCommitMs = new TreeMap<>();
        for (int c = 0; c < commits; c++) {
            long start = System.currentTimeMillis();
            List<Long> keys = new ArrayList<>();
            while (keys.size() < changed) {
                long aid = 1 + random.nextInt(accounts);
                if (!keys.contains(aid)) {
                    keys.add(aid);
                }
            }
            Map<Long, long[]> before = new HashMap<>();
            for (long aid : keys) {
                before.put(aid, rows.get(aid).clone());
                rows.get(aid)[1] = random.nextInt(100_000);
            }
            Snapshot s = commit(silver, keys, rows, before, wholeRows);
            silverCommitMs.put(s.sequenceNumber(), s.timestampMillis());
            long rest = pace - (System.currentTimeMillis() - start);
            if (rest > 0) {
                Thread.sleep(rest);
            }
        }
        long lastVersion = silver.currentSnapshot().sequenceNumber();
        awaitGoldVersion(catalog, lastVersion, gold);
        job.get().cancel().get();
        gold.join();

        Table goldTable = catalog.loadTable(GOLD);
        TreeMap<Long, Long> goldCommitMsByVersion = new TreeMap<>();
        for (Snapshot g : goldTable.snapshots()) {
            String v = g.summary().get(SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.accounts");
            if (v != null) {
                goldCommitMsByVersion.merge(Long.parseLong(v), g.timestampMillis(), Math::min);
            }
        }
        List<Long> latencies = new ArrayList<>();
        for (Map.Entry<Long, Long> e : silverCommitMs.entrySet()) {
            Long reflected = null;
            for (Map.Entry<Long, Long> g : goldCommitMsByVersion.tailMap(e.getKey()).entrySet()) {
                reflected = reflected == null ? g.getValue() : Math.min(reflected, g.getValue());
            }
            latencies.add(reflected - e.getValue());
        }
        Collections.sort(latencies);
        String result = exact(catalog, rows) ? "exact" : "WRONG";
        System.out.printf(
                "%-22s %8d %8d %8d %8d %8d %10s%n",
                monitorInterval + " / " + checkpointInterval.toMillis() / 1000 + "s",
                percentile(latencies, 50),
                percentile(latencies, 90),
                percentile(latencies, 99),
                latencies.get(latencies.size() - 1),
                latencies.size(),
                result);
    }

    /**
     * A bounded run from version 1 over the last latency run's Silver: changelog rows per second.
     */
    private static void throughputRun(Path dir) throws Exception {
        Path warehouse = dir.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table silver = catalog.loadTable(SILVER);
        long changelogRows = 0;
        for (Snapshot s : silver.snapshots()) {
            // version 1: one +I per row; later versions: -U and +U per changed account
            long added = Long.parseLong(s.summary().getOrDefault("added-records", "0"));
            changelogRows += s.sequenceNumber() == 1 ? added : 2 * added;
        }
        Path file = dir.resolve("gold-bounded.sql");
        Files.writeString(file, goldSql(null, true));
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.bounded = true;
        o.startingVersion = 1L;
        o.name = "gold-bounded";
        o.out = new PrintStream(java.io.OutputStream.nullOutputStream());
        long start = System.nanoTime();
        GoldSql.runLocal(
                GoldSql.read(file), CatalogSettings.localHadoop(warehouse.toAbsolutePath()), o);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(
                "Gold throughput (bounded, from version 1, %d Silver versions): %,d changelog rows"
                        + " in %.1f s = %,.0f rows/s (wall, start-up included)%n",
                silver.currentSnapshot().sequenceNumber(),
                changelogRows,
                seconds,
                changelogRows / seconds);
    }

    private static String goldSql(String monitorInterval, boolean bounded) {
        String hint =
                monitorInterval == null
                        ? ""
                        : " /*+ OPTIONS('monitor-interval'='" + monitorInterval + "') */";
        return "CREATE DATABASE IF NOT EXISTS gold;\n"
                + "CREATE TABLE IF NOT EXISTS gold.branch_stats (bid BIGINT, total BIGINT,"
                + " accounts BIGINT, PRIMARY KEY (bid) NOT ENFORCED);\n"
                + "INSERT INTO gold.branch_stats SELECT bid, SUM(abalance), COUNT(*) FROM"
                + " silver.`accounts$changelog`"
                + hint
                + " GROUP BY bid;\n";
    }

    /** Waits until Gold records Silver version {@code version}; -1 if the Gold job ended first. */
    private static long awaitGoldVersion(
            Catalog catalog, long version, CompletableFuture<Void> gold) throws Exception {
        while (true) {
            if (gold.isDone()) {
                gold.join();
                return -1;
            }
            if (catalog.tableExists(GOLD)) {
                Table g = catalog.loadTable(GOLD);
                for (Snapshot s : g.snapshots()) {
                    String v =
                            s.summary()
                                    .get(
                                            SourceVersionLog.SOURCE_VERSION_PREFIX
                                                    + "silver.accounts");
                    if (v != null && Long.parseLong(v) >= version) {
                        return s.timestampMillis();
                    }
                }
            }
            Thread.sleep(50);
        }
    }

    /**
     * One Silver version: {@code keys}' rows, replacing their earlier images {@code before} (none
     * when null) by an equality delete on {@code aid} holding the whole old rows ({@code
     * wholeRows}, with the changelog writer named in the commit) or only their keys.
     */
    private static Snapshot commit(
            Table table,
            List<Long> keys,
            Map<Long, long[]> rows,
            Map<Long, long[]> before,
            boolean wholeRows) {
        List<Record> images = new ArrayList<>();
        List<Record> deleted = new ArrayList<>();
        Schema deleteSchema = wholeRows ? SCHEMA : SCHEMA.select("aid");
        for (long aid : keys) {
            images.add(image(SCHEMA, aid, rows.get(aid)));
            if (before != null) {
                deleted.add(image(deleteSchema, aid, before.get(aid)));
            }
        }
        RowDelta delta = table.newRowDelta().addRows(IcebergWrites.dataFile(table, images));
        if (before != null) {
            delta.addDeletes(
                    IcebergWrites.equalityDeletes(table, deleteSchema, new int[] {1}, deleted));
        }
        if (wholeRows) {
            delta.set(ChangeFeedOptions.CHANGELOG_WRITER, "gold-latency-benchmark");
        }
        delta.commit();
        table.refresh();
        return table.currentSnapshot();
    }

    /** The row of account {@code aid} ({@code bid}, {@code abalance}) in {@code schema}. */
    private static Record image(Schema schema, long aid, long[] values) {
        GenericRecord r = GenericRecord.create(schema);
        r.setField("aid", aid);
        if (schema.findField("bid") != null) {
            r.setField("bid", values[0]);
            r.setField("abalance", values[1]);
        }
        return r;
    }

    private static boolean exact(Catalog catalog, Map<Long, long[]> rows) {
        Map<Long, long[]> expected = new TreeMap<>();
        for (long[] r : rows.values()) {
            long[] e = expected.computeIfAbsent(r[0], b -> new long[2]);
            e[0] += r[1];
            e[1]++;
        }
        List<String> lines = new ArrayList<>();
        expected.forEach((bid, e) -> lines.add(bid + "," + e[0] + "," + e[1]));
        List<String> actual = new ArrayList<>(TableRows.toCsvLines(catalog.loadTable(GOLD)));
        Collections.sort(actual);
        Collections.sort(lines);
        return actual.equals(lines);
    }

    private static long percentile(List<Long> sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static Duration parseDuration(String s) {
        return Duration.ofMillis(
                s.endsWith("ms")
                        ? Long.parseLong(s.substring(0, s.length() - 2))
                        : Long.parseLong(s.substring(0, s.length() - 1)) * 1000);
    }
}

package dev.changeflow.e2e.bench;

import dev.changeflow.e2e.SharedData;
import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.changes.ChangeRecordDecoder;
import dev.changeflow.sources.changes.DecodeOutput;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.config.ExecutionConfigOptions;
import org.apache.flink.table.api.config.ExecutionConfigOptions.UpsertMaterialize;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * End-to-end benchmark (issue #18 item 1; not a test): the recorded pgbench capture ({@code
 * ../shared/data/pgbench-s1}, 141,511 Debezium records over four tables) repeated R times with
 * {@code source.lsn} shifted by {@value #LSN_SHIFT} per round, from gzip files and from an embedded
 * Kafka broker (KRaft, one topic per table, {@value #PARTITIONS} partitions), through
 *
 * <ul>
 *   <li>{@code changeflow}: the real {@code ingest} path ({@link LocalIngest}: planning, the job on
 *       a local MiniCluster, stop with savepoint) with {@code examples/pgbench-flows.yaml};
 *   <li>{@code paimon}: Flink SQL, the {@code debezium-json} format into Apache Paimon primary-key
 *       tables ({@code bucket = 2}; over Kafka with {@code sequence.field} = {@code source.lsn}
 *       from the format's {@code value.source.properties} metadata; from files, which give no
 *       metadata, in arrival order — exact here because every round of a key ends with the same
 *       event);
 *   <li>{@code iceberg-upsert}: Flink SQL, {@code debezium-json} into Iceberg v2 tables with a
 *       primary key and {@code write.upsert.enabled} (arrival order; no sequence).
 * </ul>
 *
 * Every system gets the same local settings (parallelism 2, RocksDB incremental checkpoints every 5
 * s); runs are interleaved (system by system, input by input) and every result is read back and
 * compared with PostgreSQL's final tables ({@code pgbench_history}: the final CSV R times, as a
 * multiset). Prints per run: events, wall seconds from the call to the finished job, events/s, CPU
 * seconds of this JVM during the run, cores used, CPU seconds per million events, and the result
 * ({@code exact} or the number of wrong tables); for changeflow, a breakdown: read + gunzip of the
 * files (one thread), decode (changeflow's decoder, one thread), start-up (planning, catalog, job
 * submission: wall minus the job's run time) and the job itself.
 *
 * <p>Before the measured runs every system runs once per input on {@code warmup} rounds (default 1,
 * 0 = none; not in the summary), so that the first measured system does not pay alone for the JIT
 * compilation of the code all of them share. Per run it also prints the CPU seconds by stage
 * ({@link ThreadCpuStages}: the task threads of each operator chain, the split fetcher that reads
 * the files, the driver thread, JIT compiler, GC and RocksDB background threads).
 *
 * <p>Arguments ({@code -Dbench.args="..."}), {@code key=value}, all optional: {@code
 * rounds=1,20,50}, {@code runs=1}, {@code warmup=1}, {@code
 * systems=changeflow,paimon,iceberg-upsert}, {@code inputs=files,kafka}, {@code readers=1}
 * (changeflow's {@code file-readers} and {@code kafka-readers}; a list such as {@code 1,2} runs
 * changeflow once per value, {@code changeflow-r2} for 2), {@code dir=<folder>} (default {@code
 * e2e-tests/target/bench-e2e}). Run: {@code ./mvnw -B -Pbench -pl e2e-tests -am verify -DskipTests
 * -Dbench.class=dev.changeflow.e2e.bench.EndToEndBenchmark -Dbench.args="rounds=20"}.
 */
public final class EndToEndBenchmark {
    /** Added to {@code source.lsn} per round: more than the capture's LSN range. */
    static final long LSN_SHIFT = 10_000_000_000L;

    static final int PARTITIONS = 2;

    static final String[] TABLES = {
        "pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"
    };

    static final Map<String, String> COLUMNS =
            Map.of(
                    "pgbench_accounts", "aid INT, bid INT, abalance INT, filler STRING",
                    "pgbench_branches", "bid INT, bbalance INT, filler STRING",
                    "pgbench_tellers", "tid INT, bid INT, tbalance INT, filler STRING",
                    "pgbench_history",
                            "tid INT, bid INT, aid INT, delta INT, mtime BIGINT, filler STRING");

    /**
     * The column of {@code pgbench_history} holding Debezium's {@code MicroTimestamp} (µs since the
     * epoch): Flink's JSON format cannot read a number as TIMESTAMP, so the peers keep it as BIGINT
     * and the verification turns it into the timestamp changeflow writes.
     */
    static final int MTIME = 4;

    static final Map<String, String> KEYS =
            Map.of("pgbench_accounts", "aid", "pgbench_branches", "bid", "pgbench_tellers", "tid");

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One capture record: topic, raw key bytes (or null), value tree (null = tombstone). */
    private record CaptureRecord(String topic, byte[] key, ObjectNode value, long lsn) {
        String table() {
            return topic.substring(topic.lastIndexOf('.') + 1);
        }
    }

    /** One measured run. */
    private static final class Result {
        String system;
        String input;
        int rounds;
        long events;
        double wallSeconds;
        double cpuSeconds;
        double startupSeconds = Double.NaN;
        int wrongTables;
        String detail = "";
        String stages = "";
        String tasks = "";
    }

    private final Path dir;
    private final List<CaptureRecord> capture;
    private final IngestConfig flows;
    private final List<Result> results = new ArrayList<>();
    private boolean warmingUp;
    private EmbeddedKafka kafka;

    private EndToEndBenchmark(Path dir, List<CaptureRecord> capture, IngestConfig flows) {
        this.dir = dir;
        this.capture = capture;
        this.flows = flows;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        a.put("rounds", "1,20,50");
        a.put("runs", "1");
        a.put("warmup", "1");
        a.put("systems", "changeflow,paimon,iceberg-upsert");
        a.put("inputs", "files,kafka");
        a.put("readers", "1");
        a.put("dir", SharedData.repositoryRoot().resolve("e2e-tests/target/bench-e2e").toString());
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 0 || !a.containsKey(arg.substring(0, eq))) {
                throw new IllegalArgumentException(
                        "argument '" + arg + "': expected key=value with key one of " + a.keySet());
            }
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        List<String> systems = List.of(a.get("systems").split(","));
        for (String s : systems) {
            if (!List.of("changeflow", "paimon", "iceberg-upsert").contains(s)) {
                throw new IllegalArgumentException(
                        "system '" + s + "': accepted changeflow, paimon, iceberg-upsert");
            }
        }
        if (systems.contains("changeflow")) {
            // one changeflow system per reader count, in place
            List<String> expanded = new ArrayList<>();
            for (String s : systems) {
                if (!s.equals("changeflow")) {
                    expanded.add(s);
                    continue;
                }
                for (String n : a.get("readers").split(",")) {
                    int readers = Integer.parseInt(n.trim());
                    expanded.add(readers == 1 ? "changeflow" : "changeflow-r" + readers);
                }
            }
            systems = expanded;
        }
        List<String> inputs = List.of(a.get("inputs").split(","));
        for (String s : inputs) {
            if (!List.of("files", "kafka").contains(s)) {
                throw new IllegalArgumentException("input '" + s + "': accepted files, kafka");
            }
        }
        int runs = Integer.parseInt(a.get("runs"));
        Path capturePath =
                SharedData.repositoryRoot()
                        .resolveSibling("shared")
                        .resolve("data/pgbench-s1/capture-pgbench-s1.jsonl.gz");
        if (!Files.exists(capturePath)) {
            throw new IllegalStateException(
                    "the benchmark needs the recorded capture " + capturePath);
        }
        EndToEndBenchmark bench =
                new EndToEndBenchmark(
                        Path.of(a.get("dir")).toAbsolutePath(),
                        readCapture(capturePath),
                        FlowsFile.read(
                                SharedData.repositoryRoot()
                                        .resolve("examples")
                                        .resolve("pgbench-flows.yaml")));
        System.out.printf(
                Locale.ROOT,
                "changeflow end-to-end benchmark: %d cores, %s %s, capture %,d records%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                bench.capture.size());
        try {
            if (inputs.contains("kafka")) {
                bench.kafka = new EmbeddedKafka().start();
            }
            int warmup = Integer.parseInt(a.get("warmup"));
            if (warmup > 0) {
                // every system once on a small input first, so that no system's measured run
                // pays for compiling the code all of them share (Flink's runtime, Parquet)
                bench.warmingUp = true;
                bench.measure(warmup, 1, systems, inputs);
                bench.warmingUp = false;
            }
            for (String r : a.get("rounds").split(",")) {
                bench.measure(Integer.parseInt(r.trim()), runs, systems, inputs);
            }
        } finally {
            if (bench.kafka != null) {
                bench.kafka.close();
            }
        }
        bench.print();
        boolean wrong =
                bench.results.stream()
                        .anyMatch(r -> r.wrongTables > 0 && !r.system.equals("iceberg-upsert"));
        System.exit(wrong ? 1 : 0);
    }

    private void measure(int rounds, int runs, List<String> systems, List<String> inputs)
            throws Exception {
        Path base = dir.resolve("R" + rounds);
        deleteTree(base);
        Path cfFiles = base.resolve("changeflow-files");
        Path sqlFiles = base.resolve("sql-files");
        long t = System.nanoTime();
        writeFiles(rounds, cfFiles, sqlFiles);
        System.out.printf(
                Locale.ROOT,
                "R=%d: wrote %,d events to %d gzip files (+ per-table files for Flink SQL) in %.1f s%n",
                rounds,
                (long) rounds * capture.size(),
                rounds,
                (System.nanoTime() - t) / 1e9);
        String topicPrefix = "r" + rounds + ".";
        if (inputs.contains("kafka")) {
            t = System.nanoTime();
            produce(rounds, topicPrefix);
            System.out.printf(
                    Locale.ROOT,
                    "R=%d: produced %,d events to %d topics (%d partitions) in %.1f s%n",
                    rounds,
                    (long) rounds * capture.size(),
                    TABLES.length,
                    PARTITIONS,
                    (System.nanoTime() - t) / 1e9);
        }
        if (!warmingUp
                && systems.stream().anyMatch(EndToEndBenchmark::isChangeflow)
                && inputs.contains("files")) {
            stages(rounds, cfFiles);
        }
        for (int run = 1; run <= runs; run++) {
            for (String input : inputs) {
                for (String system : systems) {
                    Path warehouse = base.resolve("wh-" + system + "-" + input + "-" + run);
                    Result r = new Result();
                    r.system = system;
                    r.input = input;
                    r.rounds = rounds;
                    r.events = (long) rounds * capture.size();
                    String group = "bench-" + system + "-" + rounds + "-" + run;
                    long cpu0 = processCpuNanos();
                    long w0 = System.nanoTime();
                    ThreadCpuStages threads = new ThreadCpuStages("Source: ");
                    if (isChangeflow(system)) {
                        runChangeflow(
                                r, warehouse, input, cfFiles, topicPrefix, group, readers(system));
                    } else {
                        runSql(
                                system.equals("paimon"),
                                warehouse,
                                input,
                                sqlFiles,
                                topicPrefix,
                                group);
                    }
                    r.wallSeconds = (System.nanoTime() - w0) / 1e9;
                    r.cpuSeconds = (processCpuNanos() - cpu0) / 1e9;
                    r.stages =
                            ThreadCpuStages.format(
                                    threads.stop(EndToEndBenchmark::stageOf), r.events);
                    verify(r, system, warehouse, rounds);
                    if (!warmingUp) {
                        results.add(r);
                    } else if (r.wrongTables > 0 && !system.equals("iceberg-upsert")) {
                        throw new IllegalStateException("warm-up run not exact: " + line(r));
                    }
                    System.out.print(warmingUp ? "warm-up: " : "");
                    System.out.println(line(r));
                    System.out.println("  cpu by stage: " + r.stages);
                    System.out.println("  source threads: " + threads.states());
                    if (isChangeflow(system)) {
                        System.out.println("  " + r.tasks.strip());
                    }
                    deleteTree(warehouse);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------ inputs

    private static List<CaptureRecord> readCapture(Path gz) throws IOException {
        List<CaptureRecord> out = new ArrayList<>(150_000);
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(
                                new GZIPInputStream(Files.newInputStream(gz), 1 << 16),
                                StandardCharsets.UTF_8))) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                JsonNode n = JSON.readTree(l);
                JsonNode key = n.get("key");
                JsonNode value = n.get("value");
                ObjectNode v = value == null || value.isNull() ? null : (ObjectNode) value;
                out.add(
                        new CaptureRecord(
                                n.get("topic").asText(),
                                key == null || key.isNull() ? null : JSON.writeValueAsBytes(key),
                                v,
                                v == null ? 0 : v.path("source").path("lsn").asLong()));
            }
        }
        return out;
    }

    /** The value of a record in round {@code round} (0-based): its LSN shifted, as JSON bytes. */
    private static byte[] shiftedValue(CaptureRecord c, int round) throws IOException {
        ObjectNode source = (ObjectNode) c.value.get("source");
        source.put("lsn", c.lsn + round * LSN_SHIFT);
        try {
            return JSON.writeValueAsBytes(c.value);
        } finally {
            source.put("lsn", c.lsn);
        }
    }

    private void writeFiles(int rounds, Path cfFiles, Path sqlFiles) throws IOException {
        Files.createDirectories(cfFiles);
        for (String t : TABLES) {
            Files.createDirectories(sqlFiles.resolve(t));
        }
        for (int round = 0; round < rounds; round++) {
            String name = String.format(Locale.ROOT, "round-%05d", round + 1);
            Map<String, BufferedWriter> perTable = new LinkedHashMap<>();
            try (BufferedWriter cf = gzipWriter(cfFiles.resolve(name + ".jsonl.gz"))) {
                for (String t : TABLES) {
                    perTable.put(
                            t,
                            Files.newBufferedWriter(
                                    sqlFiles.resolve(t).resolve(name + ".json"),
                                    StandardCharsets.UTF_8));
                }
                for (CaptureRecord c : capture) {
                    String value =
                            c.value == null
                                    ? "null"
                                    : new String(shiftedValue(c, round), StandardCharsets.UTF_8);
                    cf.write("{\"key\":");
                    cf.write(c.key == null ? "null" : new String(c.key, StandardCharsets.UTF_8));
                    cf.write(",\"value\":");
                    cf.write(value);
                    cf.write(",\"topic\":\"");
                    cf.write(c.topic);
                    cf.write("\"}\n");
                    if (c.value != null) {
                        BufferedWriter w = perTable.get(c.table());
                        w.write(value);
                        w.write('\n');
                    }
                }
            } finally {
                for (BufferedWriter w : perTable.values()) {
                    w.close();
                }
            }
        }
    }

    private static BufferedWriter gzipWriter(Path file) throws IOException {
        return new BufferedWriter(
                new OutputStreamWriter(
                        new GZIPOutputStream(Files.newOutputStream(file), 1 << 16),
                        StandardCharsets.UTF_8));
    }

    private void produce(int rounds, String topicPrefix) throws Exception {
        List<String> topics = new ArrayList<>();
        for (String t : TABLES) {
            topics.add(topicPrefix + "pgbench.public." + t);
        }
        kafka.createTopics(PARTITIONS, topics);
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "5");
        p.put("batch.size", String.valueOf(256 * 1024));
        // the broker shares this JVM: a long pause must not expire batches (an expired batch
        // resets the idempotent producer's sequence, and the broker then refuses what follows)
        p.put("request.timeout.ms", "600000");
        p.put("delivery.timeout.ms", "1800000");
        java.util.concurrent.atomic.AtomicLong failed =
                new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicReference<Exception> first =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(
                        p,
                        new org.apache.kafka.common.serialization.ByteArraySerializer(),
                        new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            for (int round = 0; round < rounds; round++) {
                for (CaptureRecord c : capture) {
                    producer.send(
                            new ProducerRecord<>(
                                    topicPrefix + c.topic,
                                    c.key,
                                    c.value == null ? null : shiftedValue(c, round)),
                            (metadata, e) -> {
                                if (e != null) {
                                    failed.incrementAndGet();
                                    first.compareAndSet(null, e);
                                }
                            });
                }
            }
            producer.flush();
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(
                    "the embedded broker refused "
                            + failed.get()
                            + " of the benchmark's records; the Kafka runs would not be comparable",
                    first.get());
        }
    }

    // ------------------------------------------------------------------------------ systems

    /** Whether a system name is changeflow's ({@code changeflow}, {@code changeflow-r<n>}). */
    private static boolean isChangeflow(String system) {
        return system.equals("changeflow") || system.startsWith("changeflow-r");
    }

    /** The reader count of a changeflow system name. */
    private static int readers(String system) {
        return system.equals("changeflow")
                ? 1
                : Integer.parseInt(system.substring("changeflow-r".length()));
    }

    private void runChangeflow(
            Result r,
            Path warehouse,
            String input,
            Path files,
            String topicPrefix,
            String group,
            int readers)
            throws Exception {
        flows.fileReaders = readers;
        flows.kafkaReaders = readers;
        IngestPlan plan = IngestPlanner.plan(flows, List.of());
        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = warehouse;
        o.fromScratch = true;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        o.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        LocalIngest.Summary s;
        if (input.equals("files")) {
            List<Path> paths;
            try (Stream<Path> list = Files.list(files)) {
                paths = list.sorted().toList();
            }
            s = LocalIngest.run(plan, paths, o);
        } else {
            KafkaInput k = new KafkaInput();
            k.bootstrapServers = kafka.bootstrapServers();
            k.topics = new ArrayList<>();
            for (String t : TABLES) {
                k.topics.add(topicPrefix + "pgbench.public." + t);
            }
            k.groupId = group;
            k.startingOffsets = StartingOffsets.earliest();
            s = LocalIngest.runKafka(plan, k, null, o);
        }
        if (s.records != r.events || s.quarantined != 0) {
            System.out.print(buf.toString(StandardCharsets.UTF_8));
            throw new IllegalStateException(
                    "changeflow read "
                            + s.records
                            + " records ("
                            + s.quarantined
                            + " quarantined), expected "
                            + r.events);
        }
        r.startupSeconds = s.seconds - s.runSeconds;
        // where the task threads' time went (Flink's accumulated task metrics, ms)
        Map<String, Long> busy =
                dev.changeflow.jobs.ingest.LocalMetrics.byTask("accumulateBusyTimeMs");
        Map<String, Long> idle =
                dev.changeflow.jobs.ingest.LocalMetrics.byTask("accumulateIdleTimeMs");
        Map<String, Long> back =
                dev.changeflow.jobs.ingest.LocalMetrics.byTask("accumulateBackPressuredTimeMs");
        StringBuilder b = new StringBuilder();
        for (String task : busy.keySet()) {
            if (!task.startsWith("Source:")
                    && !task.startsWith("AUTO CDC pgbench_accounts")
                    && !task.startsWith("pgbench_accounts")) {
                continue;
            }
            b.append(
                    String.format(
                            Locale.ROOT,
                            "%n  task %.50s: busy %.1f s, idle %.1f s, back-pressured %.1f s (all subtasks)",
                            task,
                            busy.get(task) / 1e3,
                            idle.getOrDefault(task, 0L) / 1e3,
                            back.getOrDefault(task, 0L) / 1e3));
        }
        r.tasks = b.toString();
    }

    private void runSql(
            boolean paimon,
            Path warehouse,
            String input,
            Path files,
            String topicPrefix,
            String group)
            throws Exception {
        StreamTableEnvironment env = sqlEnvironment(warehouse);
        String catalog = paimon ? "p" : "ice";
        if (paimon) {
            env.executeSql(
                    "CREATE CATALOG p WITH ('type' = 'paimon', 'warehouse' = '"
                            + warehouse.resolve("paimon").toUri()
                            + "')");
        } else {
            env.executeSql(
                    "CREATE CATALOG ice WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop',"
                            + " 'warehouse' = '"
                            + warehouse.resolve("iceberg").toUri()
                            + "')");
        }
        env.executeSql("CREATE DATABASE IF NOT EXISTS " + catalog + ".bench");
        boolean kafkaInput = input.equals("kafka");
        StatementSet inserts = env.createStatementSet();
        for (String t : TABLES) {
            String cols = COLUMNS.get(t);
            String key = KEYS.get(t);
            String src = "default_catalog.default_database.src_" + t;
            if (kafkaInput) {
                env.executeSql(
                        "CREATE TABLE "
                                + src
                                + " ("
                                + cols
                                + ", props MAP<STRING, STRING> METADATA FROM"
                                + " 'value.source.properties' VIRTUAL) WITH ('connector' = 'kafka',"
                                + " 'topic' = '"
                                + topicPrefix
                                + "pgbench.public."
                                + t
                                + "', 'properties.bootstrap.servers' = '"
                                + kafka.bootstrapServers()
                                + "', 'properties.group.id' = '"
                                + group
                                + "', 'scan.startup.mode' = 'earliest-offset',"
                                + " 'scan.bounded.mode' = 'latest-offset', 'format' ="
                                + " 'debezium-json')");
            } else {
                env.executeSql(
                        "CREATE TABLE "
                                + src
                                + " ("
                                + cols
                                + ") WITH ('connector' = 'filesystem', 'path' = '"
                                + files.resolve(t).toUri()
                                + "', 'format' = 'debezium-json')");
            }
            boolean sequence = paimon && kafkaInput && key != null;
            String target = catalog + ".bench." + t;
            StringBuilder ddl = new StringBuilder("CREATE TABLE ").append(target).append(" (");
            ddl.append(cols);
            if (sequence) {
                ddl.append(", lsn BIGINT");
            }
            if (key != null) {
                ddl.append(", PRIMARY KEY (").append(key).append(") NOT ENFORCED");
            }
            ddl.append(") WITH (");
            if (paimon) {
                ddl.append(key != null ? "'bucket' = '2'" : "'bucket' = '-1'");
                if (sequence) {
                    ddl.append(", 'sequence.field' = 'lsn'");
                }
            } else {
                ddl.append("'format-version' = '2'");
                if (key != null) {
                    ddl.append(", 'write.upsert.enabled' = 'true'");
                }
            }
            ddl.append(")");
            env.executeSql(ddl.toString());
            String select = columnNames(cols) + (sequence ? ", CAST(props['lsn'] AS BIGINT)" : "");
            inserts.addInsertSql("INSERT INTO " + target + " SELECT " + select + " FROM " + src);
        }
        TableResult result = inserts.execute();
        result.await();
    }

    private static StreamTableEnvironment sqlEnvironment(Path warehouse) {
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(5));
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                warehouse.resolve("checkpoints").toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        StreamTableEnvironment env =
                StreamTableEnvironment.create(
                        see, EnvironmentSettings.newInstance().inStreamingMode().build());
        // Paimon refuses Flink's upsert materializer (it merges by key itself); Iceberg's upsert
        // sink does not need it either: both peers run without it
        env.getConfig()
                .set(
                        ExecutionConfigOptions.TABLE_EXEC_SINK_UPSERT_MATERIALIZE,
                        UpsertMaterialize.NONE);
        return env;
    }

    private static String columnNames(String cols) {
        List<String> names = new ArrayList<>();
        for (String c : cols.split(",")) {
            names.add(c.trim().split(" ")[0]);
        }
        return String.join(", ", names);
    }

    // ------------------------------------------------------------------------------ verify

    private void verify(Result r, String system, Path warehouse, int rounds) throws Exception {
        List<String> wrong = new ArrayList<>();
        for (String t : TABLES) {
            List<String> actual =
                    system.equals("paimon")
                            ? paimonRows(warehouse, t)
                            : icebergRows(
                                    warehouse.resolve(isChangeflow(system) ? "" : "iceberg"),
                                    isChangeflow(system) ? "public." + t : "bench." + t);
            List<String> expected = new ArrayList<>();
            List<String> oracle = SharedData.finalCsv(t);
            for (int i = 0; i < (KEYS.containsKey(t) ? 1 : rounds); i++) {
                expected.addAll(oracle);
            }
            actual.sort(null);
            expected.sort(null);
            if (!actual.equals(expected)) {
                wrong.add(t + " (" + actual.size() + " rows, expected " + expected.size() + ")");
            }
        }
        r.wrongTables = wrong.size();
        r.detail = String.join("; ", wrong);
    }

    private static List<String> icebergRows(Path warehouse, String table) {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table t = cat.loadTable(TableIdentifier.parse(table));
        List<String> out = new ArrayList<>();
        for (Record rec : TableRows.read(t)) {
            if (table.endsWith("pgbench_history") && rec.get(MTIME) instanceof Long micros) {
                rec.set(MTIME, microsToTimestamp(micros));
            }
            out.add(TableRows.toCsvLine(rec));
        }
        return out;
    }

    private static List<String> paimonRows(Path warehouse, String table) throws Exception {
        TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        env.executeSql(
                "CREATE CATALOG p WITH ('type' = 'paimon', 'warehouse' = '"
                        + warehouse.resolve("paimon").toUri()
                        + "')");
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it =
                env.executeSql(
                                "SELECT "
                                        + columnNames(COLUMNS.get(table))
                                        + " FROM p.bench."
                                        + table)
                        .collect()) {
            while (it.hasNext()) {
                Row row = it.next();
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < row.getArity(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    Object v = row.getField(i);
                    if (v instanceof Long micros && i == MTIME && table.equals("pgbench_history")) {
                        v = microsToTimestamp(micros);
                    }
                    sb.append(TableRows.formatValue(v));
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    private static LocalDateTime microsToTimestamp(long micros) {
        return LocalDateTime.ofEpochSecond(
                Math.floorDiv(micros, 1_000_000L),
                (int) Math.floorMod(micros, 1_000_000L) * 1000,
                ZoneOffset.UTC);
    }

    // ------------------------------------------------------------------------------ stages

    /** Single-thread costs of the first stages on the same files: read + gunzip, decode. */
    private void stages(int rounds, Path files) throws IOException {
        IngestPlan plan = IngestPlanner.plan(flows, List.of());
        List<Path> paths;
        try (Stream<Path> list = Files.list(files)) {
            paths = list.sorted().toList();
        }
        long t0 = System.nanoTime();
        List<byte[]> lines = new ArrayList<>();
        for (Path p : paths) {
            try (BufferedReader r =
                    new BufferedReader(
                            new InputStreamReader(
                                    new GZIPInputStream(Files.newInputStream(p), 1 << 16),
                                    StandardCharsets.UTF_8))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    lines.add(l.getBytes(StandardCharsets.UTF_8));
                }
            }
        }
        double read = (System.nanoTime() - t0) / 1e9;
        ChangeRecordDecoder decoder =
                new ChangeRecordDecoder(plan.flows.stream().map(f -> f.decoder).toList());
        long[] rows = new long[1];
        DecodeOutput out =
                new DecodeOutput() {
                    @Override
                    public void upsertOrDelete(int flowIndex, RowData row) {
                        rows[0]++;
                    }

                    @Override
                    public void truncate(int flowIndex, RowData row) {
                        rows[0]++;
                    }

                    @Override
                    public void quarantine(RowData row) {
                        throw new IllegalStateException("quarantined: " + row);
                    }
                };
        long t1 = System.nanoTime();
        long n = 0;
        for (byte[] l : lines) {
            decoder.decode(l, "bench", null, ++n, 0L, out);
        }
        double decode = (System.nanoTime() - t1) / 1e9;
        System.out.printf(
                Locale.ROOT,
                "R=%d stages (one thread): read + gunzip %,d lines %.2f s (%,.0f/s); decode → %,d"
                        + " rows %.2f s (%,.0f records/s)%n",
                rounds,
                lines.size(),
                read,
                lines.size() / read,
                rows[0],
                decode,
                lines.size() / decode);
    }

    // ------------------------------------------------------------------------------ output

    private static String line(Result r) {
        double rate = r.events / r.wallSeconds;
        return String.format(
                Locale.ROOT,
                "%-15s %-6s R=%-3d %,11d events %8.1f s %,10.0f ev/s %8.1f cpu-s %5.2f cores"
                        + " %6.1f cpu-s/M %s %s",
                r.system,
                r.input,
                r.rounds,
                r.events,
                r.wallSeconds,
                rate,
                r.cpuSeconds,
                r.cpuSeconds / r.wallSeconds,
                r.cpuSeconds / (r.events / 1e6),
                Double.isNaN(r.startupSeconds)
                        ? ""
                        : String.format(Locale.ROOT, "start-up %.1f s", r.startupSeconds),
                r.wrongTables == 0 ? "exact" : "WRONG: " + r.detail);
    }

    private void print() {
        System.out.println();
        System.out.println("summary (events/s from the call to the finished job, all verified):");
        for (Result r : results) {
            System.out.println(line(r));
        }
        System.out.println();
        System.out.println(
                "CPU seconds by stage (per million events), from the threads' CPU time:");
        for (Result r : results) {
            System.out.printf(
                    Locale.ROOT, "%-15s %-6s R=%-3d %s%n", r.system, r.input, r.rounds, r.stages);
        }
    }

    /**
     * The stage of a thread by its name: Flink names a task thread after its chain ({@code "Source:
     * change files -> file progress -> decode change records (1/2)#0"}), so the first operator of
     * the chain names the stage.
     */
    static String stageOf(String thread) {
        if (thread == null) {
            return "other";
        }
        if (thread.startsWith("Source Data Fetcher")) {
            return "read (split fetcher)";
        }
        if (thread.startsWith("Source:")) {
            return "source chain (decode, serialize, keyBy)";
        }
        if (thread.startsWith("AUTO CDC")) {
            return "AUTO CDC (deserialize, apply, state)";
        }
        if (thread.startsWith("project ")) {
            return "append flows";
        }
        if (thread.contains("Writer") || thread.contains("Sink: Writer")) {
            return "write";
        }
        if (thread.contains("Committer") || thread.contains("Sink: Committer")) {
            return "commit";
        }
        if (thread.startsWith("AsyncOperations") || thread.contains("snapshot")) {
            return "checkpoint (async part)";
        }
        if (thread.equals("main")) {
            return "driver (plan, submit, await)";
        }
        if (thread.contains("kafka")
                || thread.contains("Kafka")
                || thread.contains("quorum")
                || thread.contains("broker")
                || thread.contains("raft")) {
            return "embedded kafka broker";
        }
        if (thread.contains("pekko")
                || thread.contains("flink")
                || thread.contains("jobmanager")
                || thread.contains("Flink")
                || thread.contains("mini-cluster")) {
            return "flink runtime";
        }
        int cut = thread.indexOf(" (");
        String name = cut > 0 ? thread.substring(0, cut) : thread;
        return "task " + (name.length() > 60 ? name.substring(0, 60) + "..." : name);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path x : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.delete(x);
            }
        }
    }
}

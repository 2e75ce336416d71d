package dev.changeflow.e2e;

import dev.changeflow.e2e.s3.InProcessRestCatalog;
import dev.changeflow.e2e.s3.InProcessS3;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.ClusterIngest;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalMetrics;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.sun.management.OperatingSystemMXBean;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Object storage and a REST catalog end to end, without Docker: the recorded pgbench capture
 * ({@code ../shared/data/pgbench-s1}) is ingested by the cluster code path ({@link IngestJob} with
 * the tables created by {@link ClusterIngest#ensureTables}) into Iceberg tables served by an
 * Iceberg REST catalog ({@link InProcessRestCatalog}) whose warehouse is an S3 bucket ({@link
 * InProcessS3}, Iceberg's {@code S3FileIO}). Flink runs with the {@code flinkConfiguration} of
 * {@code deploy/k8s/base/ingest-flinkdeployment.yaml} (RocksDB, incremental checkpoints and
 * savepoints on {@code s3://lakehouse/flink/...}; Kubernetes HA left out) through Flink's S3 file
 * system plugin ({@code flink-s3-fs-hadoop}, loaded from a plugins folder as in the image). The
 * catalog comes from a flows file's {@code catalog:} block holding no credentials: S3 credentials
 * reach Iceberg through the AWS SDK's default chain (here Java system properties; on Kubernetes the
 * environment).
 *
 * <p>The first half of the capture is read, the job is stopped with a savepoint on S3, the second
 * half arrives, and a new job resumes from that savepoint: every table read back through the REST
 * catalog must equal PostgreSQL's final table exactly, and each half must have been read exactly
 * once.
 *
 * <p>The same in-process S3 also serves the local launcher's {@code read_files('s3://...')} (issue
 * #13): JSON objects under a glob are ingested by {@code changeflow run FILE.sql}, each once across
 * runs.
 */
class S3RestCatalogITCase {
    private static final String BUCKET = "lakehouse";
    private static final String[] KEYED = {
        "pgbench_accounts", "pgbench_branches", "pgbench_tellers"
    };
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    private static InProcessS3 s3;
    private static final Map<String, String> SAVED_PROPERTIES = new HashMap<>();

    @TempDir Path tmp;

    @BeforeAll
    static void startS3() throws Exception {
        s3 = InProcessS3.start(BUCKET);
        Map<String, String> props = new HashMap<>(InProcessS3.awsSdkSystemProperties());
        // the AWS SDK's default credential and region chain: no secret in any catalog property
        props.put("aws.accessKeyId", InProcessS3.ACCESS_KEY);
        props.put("aws.secretAccessKey", InProcessS3.SECRET_KEY);
        props.put("aws.region", InProcessS3.REGION);
        // Flink's S3 plugin is built on the AWS SDK 1.x, which announces its end of support on
        // stderr
        props.put("aws.java.v1.disableDeprecationAnnouncement", "true");
        props.forEach((k, v) -> SAVED_PROPERTIES.put(k, System.setProperty(k, v)));
    }

    @AfterAll
    static void stopS3() throws Exception {
        SAVED_PROPERTIES.forEach(
                (k, v) -> {
                    if (v == null) {
                        System.clearProperty(k);
                    } else {
                        System.setProperty(k, v);
                    }
                });
        FileSystem.initialize(new Configuration(), null);
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void pgbenchCaptureThroughRestCatalogOnS3ResumesFromSavepointOnS3() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        List<String> lines = SharedData.readLines(capture);
        int half = lines.size() / 2;
        Path input = tmp.resolve("input");
        PgbenchCaptureITCase.write(input.resolve("part-1.jsonl.gz"), lines.subList(0, half));

        Map<String, String> backend = new HashMap<>();
        backend.put(CatalogProperties.WAREHOUSE_LOCATION, "s3://" + BUCKET + "/warehouse");
        backend.put(CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.aws.s3.S3FileIO");
        backend.put("s3.endpoint", s3.endpoint());
        backend.put("s3.path-style-access", "true");
        try (InProcessRestCatalog rest = InProcessRestCatalog.start(tmp, backend)) {
            String flows =
                    Files.readString(
                                    SharedData.repositoryRoot()
                                            .resolve("examples")
                                            .resolve("pgbench-flows.yaml"))
                            + "catalog:\n"
                            + "  type: rest\n"
                            + "  uri: "
                            + rest.uri()
                            + "\n"
                            + "  io-impl: org.apache.iceberg.aws.s3.S3FileIO\n"
                            + "  s3.endpoint: "
                            + s3.endpoint()
                            + "\n"
                            + "  s3.path-style-access: true\n";
            IngestConfig cfg = FlowsFile.parse(flows, "flows.yaml");
            cfg.parallelism = 2;
            IngestPlan plan = IngestPlanner.plan(cfg, List.of(input));
            CatalogSettings catalog = CatalogSettings.of("changeflow", cfg.catalog);
            Catalog cat = catalog.open();
            try {
                ClusterIngest.ensureTables(cat, plan);
            } finally {
                ((Closeable) cat).close();
            }

            Configuration conf = clusterConfiguration();
            FileSystem.initialize(
                    conf,
                    new DefaultPluginManager(
                            new DirectoryBasedPluginFinder(pluginsDir()).findPlugins(),
                            CoreOptions.getPluginParentFirstLoaderPatterns(conf)));

            long t0 = System.nanoTime();
            String savepoint = runUntilRead(plan, catalog, input, conf, half, true);
            assertThat(savepoint)
                    .startsWith(
                            "s3://" + BUCKET + "/flink/savepoints/changeflow-ingest/savepoint-");
            assertThat(s3.keys(savepoint.substring(("s3://" + BUCKET + "/").length()) + "/"))
                    .anyMatch(k -> k.endsWith("/_metadata"));
            System.out.printf(
                    "S3RestCatalogITCase: first half (%,d records) in %.1f s, test JVM CPU %.1f s so far%n",
                    half, (System.nanoTime() - t0) / 1e9, cpuSeconds());
            assertThat(rows(catalog, "public.pgbench_accounts")).hasSize(half);

            long t1 = System.nanoTime();
            PgbenchCaptureITCase.write(
                    input.resolve("part-2.jsonl.gz"), lines.subList(half, lines.size()));
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
            String second = runUntilRead(plan, catalog, input, conf, lines.size() - half, false);
            assertThat(second)
                    .startsWith(
                            "s3://" + BUCKET + "/flink/savepoints/changeflow-ingest/savepoint-");
            System.out.printf(
                    "S3RestCatalogITCase: second half (%,d records) resumed from %s in %.1f s, test JVM CPU %.1f s so far%n",
                    lines.size() - half, savepoint, (System.nanoTime() - t1) / 1e9, cpuSeconds());

            for (String t : KEYED) {
                assertThat(rows(catalog, "public." + t))
                        .as(t)
                        .isEqualTo(PgbenchCaptureITCase.sortedByKey(SharedData.finalCsv(t)));
            }
            assertThat(PgbenchCaptureITCase.sorted(rows(catalog, "public.pgbench_history")))
                    .as("pgbench_history")
                    .isEqualTo(PgbenchCaptureITCase.sorted(SharedData.finalCsv("pgbench_history")));
            Catalog reader = catalog.open();
            try {
                Table accounts = reader.loadTable(TableIdentifier.parse("public.pgbench_accounts"));
                assertThat(accounts.location()).startsWith("s3://" + BUCKET + "/warehouse/");
                assertThat(s3.keys("warehouse/public/pgbench_accounts/data/")).isNotEmpty();
                assertThat(s3.keys("warehouse/public/pgbench_accounts/metadata/"))
                        .anyMatch(k -> k.endsWith(".metadata.json"));
            } finally {
                ((Closeable) reader).close();
            }
        }
    }

    /**
     * Runs the ingest job until the decoder has read {@code records} lines and, when asked, a
     * checkpoint has completed on S3, then stops it with a savepoint in the configured savepoint
     * directory and checks that exactly {@code records} lines were read.
     */
    private static String runUntilRead(
            IngestPlan plan,
            CatalogSettings catalog,
            Path input,
            Configuration conf,
            long records,
            boolean awaitCheckpointOnS3)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(plan.config.parallelism);
        IngestJob.build(env, plan, catalog, List.of(input), Duration.ofMillis(200), null);
        LocalMetrics.reset();
        JobClient job = env.executeAsync("changeflow ingest " + plan.config.name);
        try {
            await(
                    "the decoder to read " + records + " records",
                    job,
                    () -> LocalMetrics.sum("recordsIn") >= records);
            if (awaitCheckpointOnS3) {
                Pattern checkpoint =
                        Pattern.compile(
                                "flink/checkpoints/changeflow-ingest/"
                                        + job.getJobID()
                                        + "/chk-\\d+/_metadata");
                await(
                        "a completed checkpoint on S3",
                        job,
                        () ->
                                s3.keys("flink/checkpoints/changeflow-ingest/").stream()
                                        .anyMatch(k -> checkpoint.matcher(k).matches()));
            }
            await("all tasks running", job, () -> job.getJobStatus().join() == JobStatus.RUNNING);
            // null: the savepoint directory of the configuration
            // (execution.checkpointing.savepoint-dir)
            String savepoint =
                    job.stopWithSavepoint(false, null, SavepointFormatType.CANONICAL)
                            .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            job.getJobExecutionResult().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertThat(LocalMetrics.sum("recordsIn"))
                    .as("records read by this run")
                    .isEqualTo(records);
            assertThat(LocalMetrics.sum("quarantined")).as("quarantined").isZero();
            return savepoint;
        } catch (Exception | Error e) {
            if (!job.getJobExecutionResult().isDone()) {
                job.cancel().get(1, TimeUnit.MINUTES);
            }
            throw e;
        }
    }

    /**
     * Polls {@code condition} every 50 ms until it holds; fails on the job's failure or after
     * {@link #TIMEOUT}.
     */
    /**
     * S2 (issue #13): {@code changeflow run FILE.sql} whose {@code read_files} path is on S3: the
     * local launcher lists, samples and reads {@code s3://} objects through Flink's S3 plugin (from
     * the plugins folder, as {@code bin/changeflow} finds it), configured by the file's {@code SET
     * s3.*} statements. The glob selects the visible matching objects; a second run after an object
     * was added reads only that object; a third reads nothing.
     */
    @Test
    void readFilesOfAnS3GlobReadsEachMatchingObjectOnceAcrossRuns() throws Exception {
        s3.put(
                "cdc/2024/1.json",
                "{\"id\":1,\"status\":\"a\",\"seq\":1}\n{\"id\":2,\"status\":\"x\",\"seq\":2}\n");
        // not matched by the glob, and hidden: never read
        s3.put("cdc/2024/notes.txt", "not a record\n");
        s3.put("cdc/_tmp/9.json", "{\"id\":9,\"status\":\"hidden\",\"seq\":9}\n");
        Path sql = tmp.resolve("shop.sql");
        Files.writeString(
                sql,
                "SET 's3.endpoint' = '"
                        + s3.endpoint()
                        + "';\n"
                        + "SET 's3.path.style.access' = 'true';\n"
                        + "SET 's3.access-key' = '"
                        + InProcessS3.ACCESS_KEY
                        + "';\n"
                        + "SET 's3.secret-key' = '"
                        + InProcessS3.SECRET_KEY
                        + "';\n"
                        + "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE orders (id INT, status STRING, seq"
                        + " BIGINT)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('s3://"
                        + BUCKET
                        + "/cdc/*/*.json', format => 'json')\n"
                        + "  KEYS (id) SEQUENCE BY seq;\n");
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();

        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains("Ingesting 1 file(s) into 1 table(s), starting without state");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse))).containsExactly("1,a,1", "2,x,2");

        // an object added since: only it is read
        s3.put(
                "cdc/2025/2.json",
                "{\"id\":1,\"status\":\"b\",\"seq\":3}\n{\"id\":3,\"status\":\"y\",\"seq\":4}\n");
        out = new java.io.ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains("Ingesting 1 file(s) into 1 table(s), resuming from");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");

        // nothing new: nothing read again
        out = new java.io.ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains(
                        "Nothing new to ingest: all 2 input file(s) were read by an earlier run.");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");
    }

    private static Table ordersTable(Path warehouse) {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        return cat.loadTable(TableIdentifier.of("shop", "orders"));
    }

    /** Runs the command line in-process, copying what it printed to {@code out}. */
    private static int run(java.io.ByteArrayOutputStream out, String... args) {
        return dev.changeflow.jobs.CapturedOutput.stdoutEchoed(
                out, () -> dev.changeflow.jobs.cli.Main.execute(args));
    }

    private static void await(String what, JobClient job, BooleanSupplier condition)
            throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (job.getJobExecutionResult().isDone()) {
                job.getJobExecutionResult().get();
                throw new AssertionError("the job ended while waiting for " + what);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + TIMEOUT + " waiting for " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /**
     * The FlinkDeployment's {@code flinkConfiguration} (deploy/k8s/base), less Kubernetes HA, with
     * a short checkpoint interval, a fixed-delay restart strategy, the in-JVM metric reporter, and
     * the S3 endpoint and keys for Flink's S3 file system (on Kubernetes these come from the
     * environment).
     */
    private static Configuration clusterConfiguration() throws Exception {
        JsonNode deployment =
                new ObjectMapper(new YAMLFactory())
                        .readTree(
                                SharedData.repositoryRoot()
                                        .resolve("deploy/k8s/base/ingest-flinkdeployment.yaml")
                                        .toFile());
        Map<String, String> entries = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        deployment.path("spec").path("flinkConfiguration").fields();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getKey().startsWith("high-availability")) {
                entries.put(e.getKey(), e.getValue().asText());
            }
        }
        assertThat(entries)
                .containsEntry("state.backend.type", "rocksdb")
                .containsEntry(
                        "execution.checkpointing.dir",
                        "s3://" + BUCKET + "/flink/checkpoints/changeflow-ingest")
                .containsEntry(
                        "execution.checkpointing.savepoint-dir",
                        "s3://" + BUCKET + "/flink/savepoints/changeflow-ingest");
        Configuration conf = Configuration.fromMap(entries);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(1));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        conf.setString(LocalMetrics.CONFIG_KEY, LocalMetrics.Factory.class.getName());
        // the test JVM runs other classes' jobs first (Failsafe reuses it): see LocalRunner
        conf.set(CoreOptions.CHECK_LEAKED_CLASSLOADER, false);
        conf.setString("taskmanager.memory.managed.fraction", "0.2");
        conf.setString("s3.endpoint", s3.endpoint());
        conf.setString("s3.path.style.access", "true");
        conf.setString("s3.access-key", InProcessS3.ACCESS_KEY);
        conf.setString("s3.secret-key", InProcessS3.SECRET_KEY);
        return conf;
    }

    /** CPU time of this JVM, seconds (wall time says little on a shared machine). */
    private static double cpuSeconds() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                        .getProcessCpuTime()
                / 1e9;
    }

    /** The plugins folder the build fills with flink-s3-fs-hadoop (e2e-tests/pom.xml). */
    private static Path pluginsDir() {
        String dir = System.getProperty("changeflow.flink-plugins-dir");
        assertThat(dir)
                .as(
                        "system property changeflow.flink-plugins-dir (set by Failsafe; run with mvn verify)")
                .isNotBlank();
        assertThat(Path.of(dir).resolve("s3-fs-hadoop")).as("the S3 plugin folder").isDirectory();
        return Path.of(dir);
    }

    /**
     * The table's rows read through the REST catalog (S3FileIO), formatted like PostgreSQL's CSV,
     * ordered by key.
     */
    private static List<String> rows(CatalogSettings catalog, String table) throws Exception {
        Catalog cat = catalog.open();
        try {
            List<String> out = new ArrayList<>();
            for (Record r : TableRows.read(cat.loadTable(TableIdentifier.parse(table)))) {
                out.add(TableRows.toCsvLine(r));
            }
            return PgbenchCaptureITCase.sortedByKey(out);
        } finally {
            ((Closeable) cat).close();
        }
    }
}

package dev.changeflow.jobs.deploy;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.cli.RunCommand;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlPipeline;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Offline checks of {@code deploy --print FILE.sql} for a file with streaming tables without
 * SCHEDULE (docs/semantics.md S3): the continuous FlinkDeployment validates against the Flink
 * Kubernetes Operator's CRD schema closed to unknown fields with Flink 2.1 configuration keys
 * ({@link K8sManifestsTest#problems}), the ConfigMap, claim and CronJob of the scheduled table
 * against the Kubernetes models ({@link CronJobManifestsTest#problem}); the job's arguments parse
 * with the launcher's own parser into {@code run --cluster <the mounted file>}, and the mounted
 * file's continuous job is the unscheduled table over its {@code read_kafka} subscription. What a
 * continuous job cannot run is refused at its source, and {@code run --cluster} outside a cluster
 * checks the file, then refuses instead of running a MiniCluster forever.
 */
class PipelineDeploymentManifestsTest {
    @TempDir Path dir;

    /** One table from Kafka without schedule (continuous), one from files refreshed every hour. */
    private static final String SHOP =
            "SET catalog.type = 'rest';\n"
                    + "SET catalog.uri = 'http://iceberg-rest.lakehouse.svc:8181';\n"
                    + "USE SCHEMA shop;\n"
                    + "CREATE OR REFRESH STREAMING TABLE orders (id INT, amount INT)\n"
                    + "  FLOW AUTO CDC FROM STREAM read_kafka(\n"
                    + "    bootstrapServers => 'kafka-bootstrap.kafka.svc:9092',\n"
                    + "    subscribe => 'server1.public.orders',\n"
                    + "    startingOffsets => 'earliest')\n"
                    + "  KEYS (id);\n"
                    + "CREATE OR REFRESH STREAMING TABLE target\n"
                    + "  SCHEDULE EVERY 1 hour\n"
                    + "  FLOW AUTO CDC FROM STREAM read_files('/data/users', format =>"
                    + " 'debezium-json', table => 'users')\n"
                    + "  KEYS (userId) SEQUENCE BY sequenceNum STORED AS SCD TYPE 1;\n";

    @BeforeAll
    static void schema() throws Exception {
        K8sManifestsTest.load();
    }

    private Path file(String name, String text) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, text);
        return f;
    }

    private static String print(String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        assertThat(CapturedOutput.stdout(buf, () -> Main.execute(args))).isZero();
        return buf.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void unscheduledKafkaTableRunsInAValidFlinkDeploymentBesideTheCronJob() throws Exception {
        Path f = file("shop.sql", SHOP);
        List<JsonNode> docs =
                K8sManifestsTest.documents(
                        print(
                                "deploy",
                                "--print",
                                f.toString(),
                                "--namespace",
                                "data",
                                "--image",
                                "registry.example.com/changeflow:0.1.0",
                                "--state-dir",
                                "s3://lake/flink/",
                                "--flink-conf",
                                "execution.checkpointing.interval=1min"));
        assertThat(docs)
                .extracting(
                        d ->
                                d.path("kind").asText()
                                        + " "
                                        + d.path("metadata").path("name").asText())
                // --state-dir on an object store: the CronJob keeps its state there too, no claim
                .containsExactly(
                        "ConfigMap shop-pipeline", "FlinkDeployment shop", "CronJob shop-target");
        for (JsonNode d : docs) {
            assertThat(d.path("metadata").path("namespace").asText()).isEqualTo("data");
            if (d.path("kind").asText().equals("FlinkDeployment")) {
                assertThat(K8sManifestsTest.problems(d)).isEmpty();
            } else {
                assertThat(CronJobManifestsTest.problem(d))
                        .as(d.path("metadata").path("name").asText())
                        .isNull();
            }
        }
        String mounted = docs.get(0).path("data").path("shop.sql").asText();
        assertThat(mounted).isEqualTo(SHOP);

        JsonNode spec = docs.get(1).path("spec");
        assertThat(spec.path("image").asText()).isEqualTo("registry.example.com/changeflow:0.1.0");
        assertThat(spec.path("job").path("upgradeMode").asText()).isEqualTo("savepoint");
        assertThat(spec.path("job").path("parallelism").asInt()).isEqualTo(2);
        JsonNode conf = spec.path("flinkConfiguration");
        assertThat(conf.path("execution.checkpointing.dir").asText())
                .isEqualTo("s3://lake/flink/checkpoints/shop");
        assertThat(conf.path("execution.checkpointing.savepoint-dir").asText())
                .isEqualTo("s3://lake/flink/savepoints/shop");
        assertThat(conf.path("high-availability.storageDir").asText())
                .isEqualTo("s3://lake/flink/ha/shop");
        assertThat(conf.path("execution.checkpointing.interval").asText()).isEqualTo("1min");
        List<String> args = new ArrayList<>();
        spec.path("job").path("args").forEach(a -> args.add(a.asText()));
        assertThat(args).containsExactly("run", "--cluster", "/opt/changeflow/pipeline/shop.sql");
        CommandLine.ParseResult parsed =
                new CommandLine(new Main()).parseArgs(args.toArray(new String[0]));
        CommandLine.ParseResult run = parsed.subcommand();
        assertThat(run.commandSpec().userObject()).isInstanceOf(RunCommand.class);
        assertThat(run.hasMatchedOption("--cluster")).isTrue();
        Path arg = run.matchedPositional(0).getValue();
        // the file argument is where the pods see the ConfigMap's shop.sql
        JsonNode pod = spec.path("podTemplate").path("spec");
        JsonNode mount = pod.path("containers").get(0).path("volumeMounts").get(0);
        JsonNode volume = pod.path("volumes").get(0);
        assertThat(volume.path("name").asText()).isEqualTo(mount.path("name").asText());
        assertThat(volume.path("configMap").path("name").asText()).isEqualTo("shop-pipeline");
        assertThat(Path.of(mount.path("mountPath").asText()).resolve("shop.sql")).isEqualTo(arg);
        assertThat(
                        pod.path("containers")
                                .get(0)
                                .path("envFrom")
                                .get(0)
                                .path("secretRef")
                                .path("name")
                                .asText())
                .isEqualTo("shop-secrets");
        // the mounted file's continuous job: orders over its read_kafka subscription
        SqlPipeline continuous =
                SqlPipeline.compile(mounted, arg.toString(), arg.getParent(), "shop").continuous();
        assertThat(continuous.tables()).containsExactly("orders");
        assertThat(continuous.config().name).isEqualTo("shop");
        assertThat(continuous.config().kafka.bootstrapServers)
                .isEqualTo("kafka-bootstrap.kafka.svc:9092");
        assertThat(continuous.config().kafka.topics).containsExactly("server1.public.orders");
        assertThat(continuous.config().catalog)
                .containsEntry("type", "rest")
                .containsEntry("uri", "http://iceberg-rest.lakehouse.svc:8181");
        // the scheduled table stays its CronJob's, its state under the same --state-dir
        List<String> cron = new ArrayList<>();
        docs.get(2)
                .path("spec")
                .path("jobTemplate")
                .path("spec")
                .path("template")
                .path("spec")
                .path("containers")
                .get(0)
                .path("args")
                .forEach(a -> cron.add(a.asText()));
        assertThat(cron)
                .containsExactly(
                        "run",
                        "/opt/changeflow/pipeline/shop.sql",
                        "--refresh",
                        "target",
                        "--state-dir",
                        "s3://lake/flink/");
    }

    @Test
    void aFileWithoutScheduledTablesIsAConfigMapAndAFlinkDeployment() throws Exception {
        Path f =
                file(
                        "orders.sql",
                        SHOP.substring(
                                0, SHOP.indexOf("CREATE OR REFRESH STREAMING TABLE target")));
        List<JsonNode> docs =
                K8sManifestsTest.documents(
                        print("deploy", "--print", f.toString(), "--state-dir", "s3://lake/flink"));
        assertThat(docs)
                .extracting(
                        d ->
                                d.path("kind").asText()
                                        + " "
                                        + d.path("metadata").path("name").asText())
                .containsExactly("ConfigMap orders-pipeline", "FlinkDeployment orders");
        assertThat(K8sManifestsTest.problems(docs.get(1))).isEmpty();
        assertThat(CronJobManifestsTest.problem(docs.get(0))).isNull();
    }

    /**
     * The file's {@code SET checkpoint-interval} and {@code SET parallelism} reach the
     * FlinkDeployment; {@code --parallelism} given on the command line wins over the file's.
     */
    @Test
    void theFilesCheckpointIntervalAndParallelismReachTheFlinkDeployment() throws Exception {
        Path f =
                file(
                        "tuned.sql",
                        "SET checkpoint-interval = '10s';\nSET parallelism = 3;\n"
                                + SHOP.substring(
                                        0,
                                        SHOP.indexOf("CREATE OR REFRESH STREAMING TABLE target")));
        JsonNode d =
                K8sManifestsTest.documents(
                                print("deploy", "--print", f.toString(), "--state-dir", "s3://l/f"))
                        .get(1);
        assertThat(d.path("spec").path("job").path("parallelism").asInt()).isEqualTo(3);
        assertThat(
                        d.path("spec")
                                .path("flinkConfiguration")
                                .path("execution.checkpointing.interval")
                                .asText())
                .isEqualTo("10 s");
        JsonNode flagged =
                K8sManifestsTest.documents(
                                print(
                                        "deploy",
                                        "--print",
                                        f.toString(),
                                        "--state-dir",
                                        "s3://l/f",
                                        "--parallelism",
                                        "4"))
                        .get(1);
        assertThat(flagged.path("spec").path("job").path("parallelism").asInt()).isEqualTo(4);
        assertThat(K8sManifestsTest.problems(d)).isEmpty();
    }

    @Test
    void whatAContinuousJobCannotReadIsRefusedAtItsSource() throws Exception {
        String filesUnscheduled = SHOP.replace("  SCHEDULE EVERY 1 hour\n", "");
        Path files = file("files.sql", filesUnscheduled);
        assertThatThrownBy(
                        () ->
                                DeployCommandAccess.renderPipeline(
                                        files, "--state-dir", "s3://lake/flink"))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        files
                                + ":11:29: INVALID_SCHEDULE: streaming table target has no"
                                + " SCHEDULE, so it would run in the continuous FlinkDeployment,"
                                + " which reads Kafka only, and its flow reads files (read_files"
                                + " '/data/users'): give it a SCHEDULE EVERY ... or SCHEDULE CRON"
                                + " ... clause (a CronJob then refreshes it), or read its records"
                                + " from Kafka with STREAM read_kafka(...)");
        Path feed =
                file(
                        "feed.sql",
                        SHOP
                                + "CREATE OR REFRESH STREAMING TABLE orders_history\n"
                                + "  FLOW AUTO CDC FROM STREAM(orders) KEYS (id)"
                                + " SEQUENCE BY _commit_version STORED AS SCD TYPE 2;\n");
        assertThatThrownBy(
                        () ->
                                DeployCommandAccess.renderPipeline(
                                        feed, "--state-dir", "s3://lake/flink"))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        feed
                                + ":15:29: INVALID_SCHEDULE: streaming table orders_history has no"
                                + " SCHEDULE, so it would run in the continuous FlinkDeployment,"
                                + " which reads Kafka only, and its flow reads the change feed of"
                                + " orders (STREAM): give it a SCHEDULE EVERY ... or SCHEDULE CRON"
                                + " ... clause (a CronJob then refreshes it), or read its records"
                                + " from Kafka with STREAM read_kafka(...)");
        Path noCatalog = file("local.sql", SHOP.substring(SHOP.indexOf("USE SCHEMA")));
        assertThatThrownBy(
                        () ->
                                DeployCommandAccess.renderPipeline(
                                        noCatalog, "--state-dir", "s3://lake/flink"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        noCatalog
                                + ": INVALID_OPTION: the continuous job (FlinkDeployment) writes"
                                + " the tables to the file's Iceberg catalog, and the file names"
                                + " none: add SET catalog.type = 'rest'; SET catalog.uri = '...';"
                                + " (a pod has no shared local warehouse)");
        Path shop = file("shop.sql", SHOP);
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(shop))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        shop
                                + ": INVALID_OPTION: streaming table(s) orders have no SCHEDULE and"
                                + " run in a FlinkDeployment until stopped: give --state-dir (e.g."
                                + " s3://bucket/flink: its checkpoints, savepoints and HA data go"
                                + " below it)");
        assertThatThrownBy(
                        () ->
                                DeployCommandAccess.renderPipeline(
                                        shop, "--state-dir", "s3://lake/flink", "--name", "7shop"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "INVALID_OPTION: FlinkDeployment name '7shop' (from --name or the"
                                + " pipeline's name) must be a DNS label that starts with a letter,"
                                + " of at most 45 characters: choose another --name");
        CapturedOutput.MainRun kafkaFlags =
                CapturedOutput.main(
                        "deploy",
                        "--print",
                        shop.toString(),
                        "--state-dir",
                        "s3://lake/flink",
                        "--kafka-bootstrap",
                        "kafka:9092");
        assertThat(kafkaFlags.code()).isEqualTo(2);
        assertThat(kafkaFlags.stderr())
                .isEqualTo(
                        "error: INVALID_OPTION: --kafka-bootstrap, --topics, --topic-pattern,"
                                + " --group-id and --catalog go with --flows: a pipeline file names"
                                + " its Kafka input (read_kafka) and its catalog (SET"
                                + " catalog.<property>) itself"
                                + System.lineSeparator());
    }

    @Test
    void runClusterOutsideAClusterChecksTheFileThenRefuses() throws Exception {
        Path shop = file("shop.sql", SHOP);
        CapturedOutput.MainRun outside = CapturedOutput.main("run", "--cluster", shop.toString());
        assertThat(outside.code()).isEqualTo(2);
        assertThat(outside.stderr())
                .isEqualTo(
                        "error: INVALID_OPTION: run --cluster "
                                + shop
                                + " runs on the Flink cluster that executes this program (the"
                                + " FlinkDeployment of deploy --print runs it in application mode,"
                                + " or flink run), until stopped; here there is none, and a local"
                                + " MiniCluster would run it until this process is killed: run it"
                                + " locally without --cluster (a bounded run up to the input"
                                + " present at launch)"
                                + System.lineSeparator());
        // the file is checked first: a table the continuous job cannot read is named
        Path files = file("files.sql", SHOP.replace("  SCHEDULE EVERY 1 hour\n", ""));
        CapturedOutput.MainRun refused = CapturedOutput.main("run", "--cluster", files.toString());
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.stderr())
                .startsWith(
                        "error: "
                                + files
                                + ":11:29: INVALID_SCHEDULE: streaming table target has no"
                                + " SCHEDULE");
        Path noCatalog = file("local.sql", SHOP.substring(SHOP.indexOf("USE SCHEMA")));
        CapturedOutput.MainRun local =
                CapturedOutput.main("run", "--cluster", noCatalog.toString());
        assertThat(local.code()).isEqualTo(2);
        assertThat(local.stderr())
                .isEqualTo(
                        "error: "
                                + noCatalog
                                + ": INVALID_OPTION: the continuous job (run --cluster "
                                + noCatalog
                                + ") writes the tables to the file's Iceberg catalog, and the file"
                                + " names none: add SET catalog.type = 'rest'; SET catalog.uri ="
                                + " '...'; (a pod has no shared local warehouse)"
                                + System.lineSeparator());
        Path scheduled =
                file(
                        "scheduled.sql",
                        SHOP.replace(
                                "CREATE OR REFRESH STREAMING TABLE orders (id INT, amount INT)\n",
                                "CREATE OR REFRESH STREAMING TABLE orders (id INT, amount INT)\n"
                                        + "  SCHEDULE EVERY 2 HOURS\n"));
        CapturedOutput.MainRun none = CapturedOutput.main("run", "--cluster", scheduled.toString());
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.stderr())
                .isEqualTo(
                        "error: "
                                + scheduled
                                + ":4:1: INVALID_SCHEDULE: every streaming table of the file has a"
                                + " SCHEDULE, so run --cluster "
                                + scheduled
                                + " has nothing to run: their CronJobs (deploy --print "
                                + scheduled
                                + ") refresh them, or run "
                                + scheduled
                                + " --refresh t"
                                + System.lineSeparator());
        CapturedOutput.MainRun flags =
                CapturedOutput.main(
                        "run",
                        "--cluster",
                        shop.toString(),
                        "--warehouse",
                        dir.resolve("w").toString(),
                        "--refresh",
                        "orders");
        assertThat(flags.code()).isEqualTo(2);
        assertThat(flags.stderr())
                .isEqualTo(
                        "error: INVALID_OPTION: --refresh, --warehouse are options of a local run:"
                                + " --cluster runs the tables without SCHEDULE until stopped, with"
                                + " the cluster's state (savepoints) and the file's catalog"
                                + System.lineSeparator());
    }
}

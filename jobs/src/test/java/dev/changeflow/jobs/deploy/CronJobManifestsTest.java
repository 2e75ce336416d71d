package dev.changeflow.jobs.deploy;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.cli.RunCommand;
import dev.changeflow.jobs.sql.SqlException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1CronJob;
import io.kubernetes.client.openapi.models.V1PersistentVolumeClaim;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Offline checks of {@code deploy --print FILE.sql} (docs/semantics.md S3): every rendered object
 * validates against the Kubernetes API's own models — {@code batch/v1} CronJob, v1
 * PersistentVolumeClaim and ConfigMap of the official Kubernetes Java client, generated from the
 * Kubernetes OpenAPI spec, whose {@code validateJsonElement} refuses unknown fields, missing
 * required fields and wrong types — and the pod's arguments parse with the launcher's own parser
 * into {@code run FILE.sql --refresh table}.
 */
class CronJobManifestsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir Path dir;

    /** The seed's standalone streaming tables with schedules, paths and names adapted. */
    private static final String SALES =
            "SET catalog.type = 'rest';\n"
                    + "SET catalog.uri = 'http://iceberg-rest.lakehouse.svc:8181';\n"
                    + "CREATE OR REFRESH STREAMING TABLE sales\n"
                    + "  SCHEDULE EVERY 1 hour\n"
                    + "  AS SELECT * FROM STREAM read_files(\"/data/sales\", format =>"
                    + " \"debezium-json\");\n"
                    + "CREATE OR REFRESH STREAMING TABLE target\n"
                    + "  SCHEDULE CRON '0 30 2 ? * MON-FRI' AT TIME ZONE 'Europe/Berlin'\n"
                    + "  FLOW AUTO CDC FROM STREAM read_files('/data/users', format =>"
                    + " 'debezium-json', table => 'users')\n"
                    + "  KEYS (userId) SEQUENCE BY sequenceNum STORED AS SCD TYPE 1;\n";

    static List<JsonNode> documents(String yaml) throws Exception {
        return K8sManifestsTest.documents(yaml);
    }

    /** Validates one object with the Kubernetes model of its kind; returns the problem or null. */
    static String problem(JsonNode o) throws Exception {
        var json = JsonParser.parseString(JSON.writeValueAsString(o));
        try {
            switch (o.path("kind").asText()) {
                case "CronJob":
                    assertThat(o.path("apiVersion").asText()).isEqualTo("batch/v1");
                    V1CronJob.validateJsonElement(json);
                    break;
                case "PersistentVolumeClaim":
                    V1PersistentVolumeClaim.validateJsonElement(json);
                    break;
                case "ConfigMap":
                    V1ConfigMap.validateJsonElement(json);
                    break;
                default:
                    return "unexpected kind " + o.path("kind").asText();
            }
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        return null;
    }

    private String print(String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        try {
            System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
            assertThat(Main.execute(args)).isZero();
        } finally {
            System.setOut(stdout);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    private Path file(String name, String text) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, text);
        return f;
    }

    @Test
    void scheduledTablesBecomeValidCronJobsWhoseArgumentsParse() throws Exception {
        Path f = file("sales.sql", SALES);
        List<JsonNode> docs =
                documents(
                        print(
                                "deploy",
                                "--print",
                                f.toString(),
                                "--namespace",
                                "data",
                                "--image",
                                "registry.example.com/changeflow:0.1.0"));
        assertThat(docs)
                .extracting(
                        d ->
                                d.path("kind").asText()
                                        + " "
                                        + d.path("metadata").path("name").asText())
                .containsExactly(
                        "ConfigMap sales-pipeline",
                        "PersistentVolumeClaim sales-sales-state",
                        "CronJob sales-sales",
                        "PersistentVolumeClaim sales-target-state",
                        "CronJob sales-target");
        for (JsonNode d : docs) {
            assertThat(problem(d)).as(d.path("metadata").path("name").asText()).isNull();
            assertThat(d.path("metadata").path("namespace").asText()).isEqualTo("data");
        }
        assertThat(docs.get(0).path("data").path("sales.sql").asText()).isEqualTo(SALES);
        JsonNode hourly = docs.get(2).path("spec");
        assertThat(hourly.path("schedule").asText()).isEqualTo("0 * * * *");
        assertThat(hourly.path("timeZone").asText()).isEqualTo("Etc/UTC");
        assertThat(hourly.path("concurrencyPolicy").asText()).isEqualTo("Forbid");
        JsonNode weekdays = docs.get(4).path("spec");
        assertThat(weekdays.path("schedule").asText()).isEqualTo("30 2 * * MON-FRI");
        assertThat(weekdays.path("timeZone").asText()).isEqualTo("Europe/Berlin");
        assertThat(weekdays.path("concurrencyPolicy").asText()).isEqualTo("Forbid");
        JsonNode pod = weekdays.path("jobTemplate").path("spec").path("template").path("spec");
        assertThat(pod.path("restartPolicy").asText()).isEqualTo("Never");
        JsonNode container = pod.path("containers").get(0);
        assertThat(container.path("image").asText())
                .isEqualTo("registry.example.com/changeflow:0.1.0");
        List<String> command = new ArrayList<>();
        container.path("command").forEach(a -> command.add(a.asText()));
        assertThat(command.get(0)).isEqualTo("java");
        assertThat(command.subList(command.size() - 3, command.size()))
                .containsExactly(
                        "-cp",
                        "/opt/flink/usrlib/changeflow.jar:/opt/flink/lib/*",
                        Main.class.getName());
        List<String> args = new ArrayList<>();
        container.path("args").forEach(a -> args.add(a.asText()));
        assertThat(args)
                .containsExactly(
                        "run",
                        "/opt/changeflow/pipeline/sales.sql",
                        "--refresh",
                        "target",
                        "--warehouse",
                        "/var/lib/changeflow/warehouse");
        CommandLine.ParseResult parsed =
                new CommandLine(new Main()).parseArgs(args.toArray(new String[0]));
        assertThat(parsed.subcommand().commandSpec().userObject()).isInstanceOf(RunCommand.class);
        assertThat(parsed.subcommand().matchedOption("--refresh").<List<String>>getValue())
                .containsExactly("target");
        assertThat(pod.path("volumes").get(0).path("configMap").path("name").asText())
                .isEqualTo("sales-pipeline");
        assertThat(
                        pod.path("volumes")
                                .get(1)
                                .path("persistentVolumeClaim")
                                .path("claimName")
                                .asText())
                .isEqualTo("sales-target-state");
    }

    /**
     * S3 (issue #13 item 3): with {@code --state-dir s3://...} the CronJobs keep their state on the
     * object store: no PersistentVolumeClaim, no state volume, the pod's arguments pass the URI
     * ({@code run FILE.sql --refresh t --state-dir URI}) and the plugins folder of the image is
     * named; credentials still come from the Secret only.
     */
    @Test
    void withAnObjectStoreStateDirTheCronJobsHaveNoClaimAndPassTheUri() throws Exception {
        Path f = file("sales.sql", SALES);
        List<JsonNode> docs =
                documents(
                        print(
                                "deploy",
                                "--print",
                                f.toString(),
                                "--state-dir",
                                "s3://lakehouse/changeflow/state"));
        assertThat(docs)
                .extracting(
                        d ->
                                d.path("kind").asText()
                                        + " "
                                        + d.path("metadata").path("name").asText())
                .containsExactly(
                        "ConfigMap sales-pipeline", "CronJob sales-sales", "CronJob sales-target");
        for (JsonNode d : docs) {
            assertThat(problem(d)).as(d.path("metadata").path("name").asText()).isNull();
        }
        JsonNode spec = docs.get(2).path("spec");
        assertThat(spec.path("concurrencyPolicy").asText()).isEqualTo("Forbid");
        JsonNode pod = spec.path("jobTemplate").path("spec").path("template").path("spec");
        JsonNode container = pod.path("containers").get(0);
        List<String> args = new ArrayList<>();
        container.path("args").forEach(a -> args.add(a.asText()));
        assertThat(args)
                .containsExactly(
                        "run",
                        "/opt/changeflow/pipeline/sales.sql",
                        "--refresh",
                        "target",
                        "--state-dir",
                        "s3://lakehouse/changeflow/state");
        CommandLine.ParseResult parsed =
                new CommandLine(new Main()).parseArgs(args.toArray(new String[0]));
        assertThat(parsed.subcommand().matchedOption("--state-dir").<String>getValue())
                .isEqualTo("s3://lakehouse/changeflow/state");
        assertThat(JSON.writeValueAsString(container.path("env")))
                .isEqualTo("[{\"name\":\"FLINK_PLUGINS_DIR\",\"value\":\"/opt/flink/plugins\"}]");
        assertThat(JSON.writeValueAsString(container.path("envFrom")))
                .isEqualTo("[{\"secretRef\":{\"name\":\"sales-secrets\",\"optional\":true}}]");
        assertThat(JSON.writeValueAsString(container.path("volumeMounts")))
                .isEqualTo("[{\"name\":\"pipeline\",\"mountPath\":\"/opt/changeflow/pipeline\"}]");
        assertThat(JSON.writeValueAsString(pod.path("volumes")))
                .isEqualTo("[{\"name\":\"pipeline\",\"configMap\":{\"name\":\"sales-pipeline\"}}]");

        // a pod's own disk does not outlive it
        for (String bad : List.of("/var/lib/changeflow", "file:///state", "s3:///no-bucket")) {
            assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(f, "--state-dir", bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "INVALID_OPTION: --state-dir '"
                                    + bad
                                    + "': a CronJob's pod keeps nothing on its own disk between"
                                    + " runs; give an object-store URI with a bucket (e.g."
                                    + " s3://lakehouse/changeflow/state), or leave --state-dir out"
                                    + " for a PersistentVolumeClaim per table");
        }
    }

    @Test
    void aTypoOrAMissingFieldFailsTheCheck() throws Exception {
        JsonNode cj =
                documents(print("deploy", "--print", file("sales.sql", SALES).toString())).get(2);
        assertThat(problem(cj)).isNull();
        ObjectNode typo = cj.deepCopy();
        ((ObjectNode) typo.path("spec")).put("concurrencyPolicyy", "Forbid");
        assertThat(problem(typo)).contains("concurrencyPolicyy");
        ObjectNode deep = cj.deepCopy();
        ((ObjectNode)
                        deep.path("spec")
                                .path("jobTemplate")
                                .path("spec")
                                .path("template")
                                .path("spec")
                                .path("containers")
                                .get(0))
                .put("imag", "x");
        assertThat(problem(deep)).contains("imag");
        ObjectNode missing = cj.deepCopy();
        ((ObjectNode) missing.path("spec")).remove("schedule");
        assertThat(problem(missing)).contains("schedule");
    }

    @Test
    void whatCannotBeDeployedIsRefusedNamingIt() throws Exception {
        Path fiveHours = file("five.sql", SALES.replace("EVERY 1 hour", "EVERY 5 HOURS"));
        assertThatThrownBy(
                        () -> {
                            DeployCommandAccess.renderPipeline(fiveHours);
                        })
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        fiveHours
                                + ":4:3: INVALID_SCHEDULE: SCHEDULE EVERY 5 HOURS has no Kubernetes"
                                + " cron expression: a CronJob fires at fixed times of the day, so"
                                + " EVERY converts only for 1, 2, 3, 4, 6, 8, 12 or 24 hours, 1 or"
                                + " 7 days and 1 week; write the times with SCHEDULE CRON"
                                + " '<quartz>' instead (e.g. CRON '0 0 0 */2 * ?' for every second"
                                + " day of the month)");
        Path unscheduled = file("partly.sql", SALES.replace("  SCHEDULE EVERY 1 hour\n", ""));
        // an unscheduled table runs in the continuous FlinkDeployment, which reads Kafka only
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(unscheduled))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        unscheduled
                                + ":4:27: INVALID_SCHEDULE: streaming table sales has no SCHEDULE,"
                                + " so it would run in the continuous FlinkDeployment, which reads"
                                + " Kafka only, and its flow reads files (read_files"
                                + " '/data/sales'): give it a SCHEDULE EVERY ... or SCHEDULE CRON"
                                + " ... clause (a CronJob then refreshes it), or read its records"
                                + " from Kafka with STREAM read_kafka(...)");
        Path noCatalog = file("local.sql", SALES.substring(SALES.indexOf("CREATE")));
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(noCatalog))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        noCatalog
                                + ": INVALID_OPTION: a scheduled refresh writes the tables to the file's Iceberg"
                                + " catalog, and the file names none: add SET catalog.type ="
                                + " 'rest'; SET catalog.uri = '...'; (a pod has no shared local"
                                + " warehouse)");
        Path shared = file("shared.sql", SALES.replace("'/data/users'", "\"/data/sales\""));
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(shared))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--refresh sales: read_files path /data/sales also feeds streaming table"
                                + " target, which is not refreshed; refresh them together"
                                + " (--refresh ...,target) or give each table a path of its own");
        // a relative read_files path points, in the pod, into a folder that does not exist
        Path relative = file("relative.sql", SALES.replace("\"/data/sales\"", "\"data/sales\""));
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(relative))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        relative
                                + ":5:27: INVALID_OPTION: read_files path 'data/sales' is relative"
                                + " to the .sql file's folder, which the CronJob's pod does not"
                                + " have (it gets the file alone, from a ConfigMap): give an"
                                + " absolute path on a volume the pod mounts (e.g. '/data/sales')"
                                + " or an object-store URI (e.g. 's3://bucket/data/sales')");
        // so does the relative folder of a scheduled AUTO CDC FROM SNAPSHOT table (A6)
        Path snapshots =
                file(
                        "snapshots.sql",
                        SALES
                                + "CREATE OR REFRESH STREAMING TABLE cities (id BIGINT NOT NULL,"
                                + " city STRING)\n"
                                + "  SCHEDULE EVERY 1 DAY\n"
                                + "  FLOW AUTO CDC FROM SNAPSHOT read_files('snaps', format => 'csv')\n"
                                + "  KEYS (id);\n");
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(snapshots))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        snapshots
                                + ":12:31: INVALID_OPTION: FROM SNAPSHOT folder 'snaps' of streaming"
                                + " table cities is relative to the .sql file's folder, which the"
                                + " CronJob's pod does not have (it gets the file alone, from a"
                                + " ConfigMap): give an absolute path on a volume the pod mounts"
                                + " (e.g. '/snaps')");
        Path ok = file("ok.sql", SALES);
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(ok, "--name", "n".repeat(47)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "INVALID_OPTION: CronJob name '"
                                + "n".repeat(47)
                                + "-sales' (from --name and table sales) must be a DNS label of at"
                                + " most 52 characters: choose a shorter --name");
        assertThat(Main.execute("deploy", "--print", fiveHours.toString())).isEqualTo(2);
        assertThat(
                        Main.execute(
                                "deploy",
                                "--print",
                                fiveHours.toString(),
                                "--flows",
                                fiveHours.toString()))
                .isEqualTo(2);
    }

    /**
     * Values Kubernetes would refuse on {@code kubectl apply} are refused by {@code deploy} with
     * the option named, and so are two tables whose object names would be the same and a file name
     * that cannot be a ConfigMap key; nothing is printed (exit code 2).
     */
    @Test
    void valuesKubernetesWouldRefuseAreRefusedFirst() throws Exception {
        Path ok = file("ok.sql", SALES);
        String[][] cases = {
            {"--parallelism", "0", "--parallelism must be at least 1, got 0"},
            {
                "--state-size",
                "lots",
                "--state-size 'lots' is not a Kubernetes storage quantity: give a size above zero"
                        + " such as 10Gi, 500Mi or 1Ti"
            },
            {
                "--state-size",
                "0Gi",
                "--state-size '0Gi' is not a Kubernetes storage quantity: give a size above zero"
                        + " such as 10Gi, 500Mi or 1Ti"
            },
            {
                "--namespace",
                "Bad_NS",
                "--namespace 'Bad_NS' is not a Kubernetes namespace name: lower-case letters,"
                        + " digits and '-', starting and ending with a letter or digit, at most 63"
                        + " characters"
            },
            {
                "--image",
                "",
                "--image '' is not a container image reference: give one without spaces, e.g."
                        + " registry.example.com/changeflow:0.1.0"
            },
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(ok, c[0], c[1]))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("INVALID_OPTION: " + c[2]);
            assertThat(Main.execute("deploy", "--print", ok.toString(), c[0], c[1])).isEqualTo(2);
        }
        assertThat(print("deploy", "--print", ok.toString(), "--state-size", "1.5Ti"))
                .contains("storage: 1.5Ti");

        Path twins =
                file(
                        "twins.sql",
                        SALES.replace("TABLE sales\n", "TABLE sales_eu\n")
                                .replace("TABLE target\n", "TABLE sales__eu\n"));
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(twins))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "INVALID_OPTION: tables sales_eu and sales__eu would both be CronJob"
                                + " 'twins-sales-eu' (an object name keeps lower-case letters and"
                                + " digits, other characters become '-'): rename one of them");

        Path odd = file("odd!.sql", SALES);
        assertThatThrownBy(() -> DeployCommandAccess.renderPipeline(odd, "--name", "shop"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "INVALID_OPTION: file name 'odd!.sql' cannot be a ConfigMap key (the pod"
                                + " reads the file under that name): rename the file with letters,"
                                + " digits, '-', '_' and '.' only");
    }
}

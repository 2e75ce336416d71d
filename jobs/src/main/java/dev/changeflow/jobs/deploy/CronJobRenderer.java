package dev.changeflow.jobs.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Renders the Kubernetes objects that refresh the scheduled streaming tables of a pipeline file
 * (docs/semantics.md S3): a ConfigMap {@code <name>-pipeline} holding the file, and per scheduled
 * table a {@code batch/v1} {@code CronJob} {@code <name>-<table>} with {@code concurrencyPolicy:
 * Forbid} (a refresh never overlaps the previous one) and {@code timeZone}. Its pod runs the
 * bounded refresh of that table ({@code run FILE.sql --refresh table}), from the saved state up to
 * the input present when it starts, ending with a savepoint. The tables themselves go to the
 * Iceberg catalog the file names ({@code SET catalog.<property>}). Secrets are referenced ({@code
 * envFrom} the Secret {@code <name>-secrets}), never rendered.
 *
 * <p>Where the saved state lives:
 *
 * <ul>
 *   <li>with {@link Settings#stateDir} (an object-store URI, {@code deploy --print FILE.sql
 *       --state-dir s3://bucket/prefix}): on the object store — the pod runs {@code run FILE.sql
 *       --refresh table --state-dir <uri>}, Flink's S3 file system plugin of the image found
 *       through {@code FLINK_PLUGINS_DIR=/opt/flink/plugins}, and there is no claim. The object
 *       store has no lock file: {@code concurrencyPolicy: Forbid} is what keeps one refresh per
 *       table at a time;
 *   <li>without it: on a PersistentVolumeClaim {@code <name>-<table>-state} per table, mounted at
 *       {@value #STATE_DIR}; the pod runs {@code run FILE.sql --refresh table --warehouse
 *       /var/lib/changeflow/warehouse}.
 * </ul>
 */
public final class CronJobRenderer {
    private static final ObjectMapper YAML =
            new ObjectMapper(
                    new YAMLFactory()
                            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    /** Where the ConfigMap with the pipeline file is mounted in the pod. */
    public static final String PIPELINE_DIR = "/opt/changeflow/pipeline";

    /** Where the state claim is mounted; the warehouse folder (checkpoints) is below it. */
    public static final String STATE_DIR = "/var/lib/changeflow";

    /** The JVM flags Flink needs on Java 17 (as {@code bin/changeflow} passes them). */
    static final List<String> JVM_FLAGS =
            List.of(
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
                    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED");

    /**
     * One scheduled table.
     *
     * @param table the table's name as declared
     * @param cron its five-field Kubernetes cron expression ({@code KubernetesCron})
     * @param timeZone the CronJob's {@code timeZone}, an IANA id
     */
    public record Scheduled(String table, String cron, String timeZone) {}

    /** What to render. */
    public static final class Settings {
        /** Name prefix of every object (DNS label). */
        public String name = "changeflow";

        /** Kubernetes namespace of every object; null leaves it to {@code kubectl}. */
        public String namespace;

        /** The image built from {@code deploy/k8s/Dockerfile}. */
        public String image = "changeflow:0.1.0";

        /** The pipeline file's name (e.g. {@code sales.sql}) and text. */
        public String fileName;

        /** The pipeline file's text (the ConfigMap's entry). */
        public String fileText;

        /** The scheduled tables, in file order. */
        public List<Scheduled> tables = new ArrayList<>();

        /** Memory request and limit of the refresh pod (Kubernetes quantity). */
        public String memory = "4096Mi";

        /** CPU request of the refresh pod (Kubernetes quantity). */
        public String cpu = "2";

        /** Size of each table's state claim. */
        public String stateSize = "10Gi";

        /** Storage class of the state claims; null for the cluster's default. */
        public String storageClass;

        /**
         * An object-store URI ({@code s3://bucket/prefix}) for the saved state of every table's
         * refresh instead of a claim per table; null renders the claims.
         */
        public String stateDir;
    }

    /** Where Flink's file-system plugins are in the image ({@code deploy/k8s/Dockerfile}). */
    public static final String PLUGINS_DIR = "/opt/flink/plugins";

    private CronJobRenderer() {}

    /**
     * @return YAML documents: the ConfigMap, then per table its PersistentVolumeClaim (not with
     *     {@link Settings#stateDir}) and CronJob
     * @throws IllegalArgumentException when there is no scheduled table or an object name would not
     *     be a DNS label of at most 52 characters (the CronJob limit; {@code INVALID_OPTION})
     */
    public static String render(Settings s) throws IOException {
        if (s.tables.isEmpty()) {
            throw new IllegalArgumentException("no scheduled table to render a CronJob for");
        }
        return configMap(s) + cronJobs(s);
    }

    /**
     * The ConfigMap {@code <name>-pipeline} holding the pipeline file (entry {@link
     * Settings#fileName}), which the CronJobs and the continuous FlinkDeployment mount at {@link
     * #PIPELINE_DIR}.
     *
     * @return one YAML document (no leading {@code ---})
     * @throws IllegalArgumentException when the file name cannot be a ConfigMap key ({@code
     *     INVALID_OPTION})
     */
    public static String configMap(Settings s) throws IOException {
        if (!s.fileName.matches("[-._a-zA-Z0-9]+")) {
            throw new IllegalArgumentException(
                    "INVALID_OPTION: file name '"
                            + s.fileName
                            + "' cannot be a ConfigMap key (the pod reads the file under that"
                            + " name): rename the file with letters, digits, '-', '_' and '.'"
                            + " only");
        }
        ObjectNode cm = object("v1", "ConfigMap", configMapName(s), s.namespace);
        cm.putObject("data").put(s.fileName, s.fileText);
        return YAML.writeValueAsString(cm);
    }

    /** The name of the ConfigMap of {@link #configMap}. */
    public static String configMapName(Settings s) {
        return s.name + "-pipeline";
    }

    /**
     * Per scheduled table its PersistentVolumeClaim and CronJob, each document preceded by {@code
     * ---}; empty without scheduled tables.
     *
     * @throws IllegalArgumentException when an object name would not be a DNS label of at most 52
     *     characters (the CronJob limit), or two tables would get the same object name ({@code
     *     INVALID_OPTION})
     */
    public static String cronJobs(Settings s) throws IOException {
        StringBuilder out = new StringBuilder();
        Map<String, String> tableOfJob = new HashMap<>();
        for (Scheduled t : s.tables) {
            String job = s.name + "-" + label(t.table());
            String other = tableOfJob.putIfAbsent(job, t.table());
            if (other != null) {
                throw new IllegalArgumentException(
                        "INVALID_OPTION: tables "
                                + other
                                + " and "
                                + t.table()
                                + " would both be CronJob '"
                                + job
                                + "' (an object name keeps lower-case letters and digits, other"
                                + " characters become '-'): rename one of them");
            }
            if (job.length() > 52 || !job.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")) {
                throw new IllegalArgumentException(
                        "INVALID_OPTION: CronJob name '"
                                + job
                                + "' (from --name and table "
                                + t.table()
                                + ") must be a DNS label of at most 52 characters: choose a shorter"
                                + " --name");
            }
            if (s.stateDir == null) {
                out.append("---\n").append(YAML.writeValueAsString(claim(s, job)));
            }
            out.append("---\n").append(YAML.writeValueAsString(cronJob(s, t, job)));
        }
        return out.toString();
    }

    /** The pod's arguments to the launcher's main class. */
    public static List<String> args(Settings s, Scheduled t) {
        // the saved state: on the object store of --state-dir, else under the claim's warehouse
        return List.of(
                "run",
                PIPELINE_DIR + "/" + s.fileName,
                "--refresh",
                t.table(),
                s.stateDir != null ? "--state-dir" : "--warehouse",
                s.stateDir != null ? s.stateDir : STATE_DIR + "/warehouse");
    }

    private static ObjectNode claim(Settings s, String job) {
        ObjectNode pvc = object("v1", "PersistentVolumeClaim", job + "-state", s.namespace);
        ObjectNode spec = pvc.putObject("spec");
        spec.putArray("accessModes").add("ReadWriteOnce");
        if (s.storageClass != null) {
            spec.put("storageClassName", s.storageClass);
        }
        spec.putObject("resources").putObject("requests").put("storage", s.stateSize);
        return pvc;
    }

    private static ObjectNode cronJob(Settings s, Scheduled t, String job) {
        ObjectNode cj = object("batch/v1", "CronJob", job, s.namespace);
        ObjectNode spec = cj.putObject("spec");
        spec.put("schedule", t.cron());
        spec.put("timeZone", t.timeZone());
        spec.put("concurrencyPolicy", "Forbid");
        spec.put("successfulJobsHistoryLimit", 3);
        spec.put("failedJobsHistoryLimit", 3);
        ObjectNode jobSpec = spec.putObject("jobTemplate").putObject("spec");
        // a failed refresh is not retried at once: the next scheduled run resumes from the state
        jobSpec.put("backoffLimit", 0);
        ObjectNode pod = jobSpec.putObject("template").putObject("spec");
        pod.put("restartPolicy", "Never");
        ObjectNode c = pod.putArray("containers").addObject();
        c.put("name", "refresh");
        c.put("image", s.image);
        ArrayNode command = c.putArray("command");
        command.add("java");
        JVM_FLAGS.forEach(command::add);
        command.add("-cp");
        command.add("/opt/flink/usrlib/changeflow.jar:/opt/flink/lib/*");
        command.add("dev.changeflow.jobs.cli.Main");
        ArrayNode args = c.putArray("args");
        args(s, t).forEach(args::add);
        c.putArray("envFrom")
                .addObject()
                .putObject("secretRef")
                .put("name", s.name + "-secrets")
                .put("optional", true);
        // bin/changeflow sets it; the image's java alone does not: object-store state and
        // read_files paths (s3://, gs://, abfss://) need the image's file-system plugins
        c.putArray("env").addObject().put("name", "FLINK_PLUGINS_DIR").put("value", PLUGINS_DIR);
        ObjectNode res = c.putObject("resources");
        Map<String, String> amounts = new LinkedHashMap<>();
        amounts.put("memory", s.memory);
        amounts.put("cpu", s.cpu);
        ObjectNode requests = res.putObject("requests");
        ObjectNode limits = res.putObject("limits");
        amounts.forEach(requests::put);
        limits.put("memory", s.memory);
        ArrayNode mounts = c.putArray("volumeMounts");
        mounts.addObject().put("name", "pipeline").put("mountPath", PIPELINE_DIR);
        if (s.stateDir == null) {
            mounts.addObject().put("name", "state").put("mountPath", STATE_DIR);
        }
        ArrayNode volumes = pod.putArray("volumes");
        volumes.addObject()
                .put("name", "pipeline")
                .putObject("configMap")
                .put("name", configMapName(s));
        if (s.stateDir == null) {
            volumes.addObject()
                    .put("name", "state")
                    .putObject("persistentVolumeClaim")
                    .put("claimName", job + "-state");
        }
        return cj;
    }

    private static ObjectNode object(String apiVersion, String kind, String name, String ns) {
        ObjectNode o = YAML.createObjectNode();
        o.put("apiVersion", apiVersion);
        o.put("kind", kind);
        ObjectNode meta = o.putObject("metadata");
        meta.put("name", name);
        if (ns != null) {
            meta.put("namespace", ns);
        }
        meta.putObject("labels").put("app.kubernetes.io/part-of", "changeflow");
        return o;
    }

    /** A table name as part of an object name: lower case, other characters as '-'. */
    public static String label(String table) {
        return table.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    }
}

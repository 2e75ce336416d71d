package dev.changeflow.jobs.deploy;

import dev.changeflow.jobs.config.IngestOptions;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import org.apache.flink.util.TimeUtils;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders the Kubernetes objects that run an ingest job on the Flink Kubernetes Operator (≥ 1.13):
 * a ConfigMap holding the flows file and a {@code FlinkDeployment} in application mode running
 * {@code ingest --cluster} over Kafka, with RocksDB incremental checkpoints, savepoints and HA
 * storage under one state directory, Kubernetes HA and {@code upgradeMode: savepoint} — the same
 * shape as {@code deploy/k8s/base}. Secrets are referenced ({@code envFrom} the Secret {@code
 * <name>-secrets}), never rendered.
 *
 * <p>For a pipeline file ({@link #renderPipeline}, docs/semantics.md S3) the same FlinkDeployment
 * runs {@code run --cluster FILE.sql} on the file of the pipeline's ConfigMap: the streaming tables
 * without SCHEDULE over the file's {@code read_kafka} subscription, until stopped.
 */
public final class FlinkDeploymentRenderer {
    /** The longest FlinkDeployment name the Flink Kubernetes Operator accepts. */
    public static final int MAX_NAME_LENGTH = 45;

    private static final ObjectMapper YAML =
            new ObjectMapper(
                    new YAMLFactory()
                            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    /** What to render. */
    public static final class Settings {
        /** Deployment name (DNS label), also the job name. */
        public String name = "changeflow-ingest";

        public String namespace;
        public String image = "changeflow:0.1.0";

        /** Flows file text, mounted at {@code /opt/changeflow/flows/flows.yaml}. */
        public String flowsYaml;

        /** Root of checkpoints, savepoints and HA data, e.g. {@code s3://bucket/flink}. */
        public String stateDir;

        public String kafkaBootstrap;
        public List<String> topics = new ArrayList<>();
        public String topicPattern;
        public String groupId;
        public Map<String, String> catalog = new LinkedHashMap<>();
        public int parallelism = 2;
        public String checkpointInterval = "30s";

        /**
         * Rendered as {@code execution.checkpointing.timeout} ({@link
         * IngestOptions#CHECKPOINT_TIMEOUT}, default 2 min; the flows file's {@code
         * checkpoint-timeout}).
         */
        public Duration checkpointTimeout = IngestOptions.CHECKPOINT_TIMEOUT.defaultValue();

        public String jobManagerMemory = "2048m";
        public String taskManagerMemory = "4096m";
        public double taskManagerCpu = 2;

        /** Extra Flink configuration entries (override the defaults). */
        public Map<String, String> flinkConfiguration = new LinkedHashMap<>();
    }

    private FlinkDeploymentRenderer() {}

    /**
     * @return YAML with two documents (ConfigMap, FlinkDeployment)
     * @throws IllegalArgumentException when a required setting (state dir, Kafka bootstrap and
     *     topics, catalog) is missing
     */
    public static String render(Settings s) throws IOException {
        require(
                s.stateDir,
                "--state-dir (e.g. s3://bucket/flink: checkpoints, savepoints and HA data go below it)");
        require(s.kafkaBootstrap, "--kafka-bootstrap");
        if (s.topics.isEmpty() && s.topicPattern == null) {
            throw new IllegalArgumentException("give --topics or --topic-pattern");
        }
        if (s.catalog.isEmpty()) {
            throw new IllegalArgumentException(
                    "give the Iceberg catalog with --catalog type=rest --catalog uri=... (a cluster has no local warehouse)");
        }
        require(s.flowsYaml, "--flows");
        ObjectNode cm = YAML.createObjectNode();
        cm.put("apiVersion", "v1");
        cm.put("kind", "ConfigMap");
        ObjectNode cmMeta = cm.putObject("metadata");
        cmMeta.put("name", s.name + "-flows");
        if (s.namespace != null) {
            cmMeta.put("namespace", s.namespace);
        }
        cm.putObject("data").put("flows.yaml", s.flowsYaml);
        ObjectNode d = deployment(s, args(s), "flows", s.name + "-flows", "/opt/changeflow/flows");
        return YAML.writeValueAsString(cm) + "---\n" + YAML.writeValueAsString(d);
    }

    /**
     * The FlinkDeployment alone that runs a pipeline file's streaming tables without SCHEDULE until
     * stopped (docs/semantics.md S3): its job runs {@code run --cluster <mountPath>/<fileName>} on
     * the file of the ConfigMap {@code configMap} (the one {@link CronJobRenderer} renders for the
     * scheduled tables), mounted at {@code mountPath}. Kafka and the Iceberg catalog come from the
     * file ({@code read_kafka}, {@code SET catalog.*}), so {@link Settings#flowsYaml}, the Kafka
     * settings and {@link Settings#catalog} are not used; otherwise the object is the one {@link
     * #render} renders.
     *
     * @return one YAML document (no leading {@code ---})
     * @throws IllegalArgumentException when the state dir is missing, or {@code INVALID_OPTION}
     *     when the name is not a DNS-1035 label of at most {@value #MAX_NAME_LENGTH} characters
     *     (the operator's limit)
     */
    public static String renderPipeline(
            Settings s, String configMap, String mountPath, String fileName) throws IOException {
        require(
                s.stateDir,
                "--state-dir (e.g. s3://bucket/flink: the continuous job's checkpoints, savepoints"
                        + " and HA data go below it)");
        if (s.name.length() > MAX_NAME_LENGTH || !s.name.matches("[a-z]([-a-z0-9]*[a-z0-9])?")) {
            throw new IllegalArgumentException(
                    "INVALID_OPTION: FlinkDeployment name '"
                            + s.name
                            + "' (from --name or the pipeline's name) must be a DNS label that"
                            + " starts with a letter, of at most "
                            + MAX_NAME_LENGTH
                            + " characters: choose another --name");
        }
        List<String> args = List.of("run", "--cluster", mountPath + "/" + fileName);
        return YAML.writeValueAsString(deployment(s, args, "pipeline", configMap, mountPath));
    }

    /**
     * The FlinkDeployment of {@code s} whose job runs {@code args}, with the ConfigMap {@code
     * configMap} mounted at {@code mountPath} as volume {@code volume}.
     */
    private static ObjectNode deployment(
            Settings s, List<String> jobArgs, String volume, String configMap, String mountPath) {
        String root =
                s.stateDir.endsWith("/")
                        ? s.stateDir.substring(0, s.stateDir.length() - 1)
                        : s.stateDir;
        ObjectNode d = YAML.createObjectNode();
        d.put("apiVersion", "flink.apache.org/v1beta1");
        d.put("kind", "FlinkDeployment");
        ObjectNode meta = d.putObject("metadata");
        meta.put("name", s.name);
        if (s.namespace != null) {
            meta.put("namespace", s.namespace);
        }
        ObjectNode spec = d.putObject("spec");
        spec.put("image", s.image);
        spec.put("flinkVersion", "v2_1");
        spec.put("serviceAccount", "flink");
        ObjectNode conf = spec.putObject("flinkConfiguration");
        Map<String, String> c = new LinkedHashMap<>();
        c.put("state.backend.type", "rocksdb");
        c.put("execution.checkpointing.incremental", "true");
        c.put("execution.checkpointing.interval", s.checkpointInterval);
        c.put(
                "execution.checkpointing.timeout",
                TimeUtils.formatWithHighestUnit(s.checkpointTimeout));
        c.put("execution.checkpointing.dir", root + "/checkpoints/" + s.name);
        c.put("execution.checkpointing.savepoint-dir", root + "/savepoints/" + s.name);
        c.put(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        c.put("high-availability.type", "kubernetes");
        c.put("high-availability.storageDir", root + "/ha/" + s.name);
        c.put("taskmanager.numberOfTaskSlots", "2");
        c.putAll(s.flinkConfiguration);
        c.forEach(conf::put);

        ObjectNode container =
                spec.putObject("podTemplate").putObject("spec").putArray("containers").addObject();
        container.put("name", "flink-main-container");
        container
                .putArray("envFrom")
                .addObject()
                .putObject("secretRef")
                .put("name", s.name + "-secrets")
                .put("optional", true);
        container
                .putArray("volumeMounts")
                .addObject()
                .put("name", volume)
                .put("mountPath", mountPath);
        ObjectNode vol =
                ((ObjectNode) spec.path("podTemplate").path("spec"))
                        .putArray("volumes")
                        .addObject();
        vol.put("name", volume);
        vol.putObject("configMap").put("name", configMap);

        ObjectNode jm = spec.putObject("jobManager");
        jm.put("replicas", 1);
        jm.putObject("resource").put("memory", s.jobManagerMemory).put("cpu", 1);
        spec.putObject("taskManager")
                .putObject("resource")
                .put("memory", s.taskManagerMemory)
                .put("cpu", s.taskManagerCpu);

        ObjectNode job = spec.putObject("job");
        job.put("jarURI", "local:///opt/flink/usrlib/changeflow.jar");
        job.put("entryClass", "dev.changeflow.jobs.cli.Main");
        ArrayNode args = job.putArray("args");
        for (String a : jobArgs) {
            args.add(a);
        }
        job.put("parallelism", s.parallelism);
        job.put("upgradeMode", "savepoint");
        job.put("state", "running");
        return d;
    }

    /**
     * The job arguments: {@code ingest --cluster --flows ... --kafka-bootstrap ... --catalog k=v
     * ...}.
     */
    static List<String> args(Settings s) {
        List<String> a =
                new ArrayList<>(
                        List.of(
                                "ingest",
                                "--cluster",
                                "--flows",
                                "/opt/changeflow/flows/flows.yaml",
                                "--kafka-bootstrap",
                                s.kafkaBootstrap));
        if (s.topicPattern != null) {
            a.add("--topic-pattern");
            a.add(s.topicPattern);
        } else {
            a.add("--topics");
            a.add(String.join(",", s.topics));
        }
        if (s.groupId != null) {
            a.add("--group-id");
            a.add(s.groupId);
        }
        s.catalog.forEach(
                (k, v) -> {
                    a.add("--catalog");
                    a.add(k + "=" + v);
                });
        return a;
    }

    private static void require(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("missing " + what);
        }
    }
}

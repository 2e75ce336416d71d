package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.config.KafkaOptions;
import dev.changeflow.jobs.deploy.CronJobRenderer;
import dev.changeflow.jobs.deploy.FlinkDeploymentRenderer;
import dev.changeflow.jobs.sql.KubernetesCron;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlPipeline;
import dev.changeflow.jobs.sql.SqlStatement.Schedule;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sources.kafka.KafkaInput;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow deploy --print}: renders the ConfigMap and {@code FlinkDeployment} that run a
 * flows file's ingest job over Kafka on the Flink Kubernetes Operator, so nobody hand-writes YAML.
 * Pipe it to {@code kubectl apply -f -}.
 *
 * <p>{@code changeflow deploy --print FILE.sql} renders, for the scheduled streaming tables of a
 * pipeline file, a {@code batch/v1} CronJob each ({@link CronJobRenderer}, docs/semantics.md S3)
 * whose pod runs {@code run FILE.sql --refresh table}. The file must name its Iceberg catalog
 * ({@code SET catalog.<property>}); a table without a schedule is refused: the continuous
 * FlinkDeployment reads Kafka ({@code --flows}), which a pipeline file cannot name yet. Errors of
 * the file are {@code SqlException}s; a schedule with no Kubernetes cron expression fails with
 * {@code INVALID_SCHEDULE} at its clause.
 */
@Command(
        name = "deploy",
        mixinStandardHelpOptions = true,
        description =
                "Render the Kubernetes objects (Flink Kubernetes Operator) that run an ingest job.")
public final class DeployCommand implements Callable<Integer> {
    @Option(
            names = "--print",
            required = true,
            description = "Print the objects as YAML (the only mode: apply them with kubectl).")
    boolean print;

    @Parameters(
            index = "0",
            arity = "0..1",
            paramLabel = "FILE.sql",
            description =
                    "A pipeline file: a CronJob per scheduled streaming table (instead of --flows).")
    Path pipeline;

    @Option(
            names = "--flows",
            paramLabel = "FILE",
            description = "Flows file (mounted into the job).")
    Path flows;

    @Option(
            names = "--name",
            paramLabel = "NAME",
            description =
                    "Deployment name (prefix of the CronJobs of a FILE.sql). Default:"
                            + " changeflow-ingest, or the pipeline's name.")
    String name;

    @Option(names = "--namespace", paramLabel = "NS", description = "Kubernetes namespace.")
    String namespace;

    @Option(
            names = "--image",
            paramLabel = "IMAGE",
            defaultValue = "changeflow:0.1.0",
            description = "Image built from deploy/k8s/Dockerfile. Default: ${DEFAULT-VALUE}.")
    String image;

    @Option(
            names = "--state-dir",
            paramLabel = "URI",
            description =
                    "Root of checkpoints, savepoints and HA data, e.g. s3://bucket/flink (with"
                            + " --flows); with FILE.sql, where the CronJobs keep their saved state"
                            + " (an object-store URI, e.g. s3://bucket/changeflow/state) instead of"
                            + " a PersistentVolumeClaim per table.")
    String stateDir;

    @Option(
            names = "--kafka-bootstrap",
            paramLabel = "HOST:PORT",
            description = "Kafka bootstrap servers (with --flows).")
    String kafkaBootstrap;

    @Option(names = "--topics", split = ",", paramLabel = "TOPICS", description = "Topics (a,b).")
    List<String> topics;

    @Option(
            names = "--topic-pattern",
            paramLabel = "REGEX",
            description = "Topic pattern (instead of --topics).")
    String topicPattern;

    @Option(names = "--group-id", paramLabel = "G", description = "Kafka consumer group.")
    String groupId;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description = "Iceberg catalog property (type, uri, warehouse, ...) (with --flows).")
    Map<String, String> catalog;

    @Option(
            names = "--parallelism",
            defaultValue = "2",
            description = "Job parallelism. Default: ${DEFAULT-VALUE}.")
    int parallelism;

    @Option(
            names = "--flink-conf",
            paramLabel = "KEY=VALUE",
            description = "Extra Flink configuration entry.")
    Map<String, String> flinkConf;

    @Option(
            names = "--state-size",
            paramLabel = "SIZE",
            defaultValue = "10Gi",
            description =
                    "Size of each scheduled table's state claim (FILE.sql). Default: ${DEFAULT-VALUE}.")
    String stateSize;

    @Override
    public Integer call() throws Exception {
        if (pipeline != null) {
            if (flows != null) {
                throw new IllegalArgumentException("give FILE.sql or --flows, not both");
            }
            System.out.print(renderPipeline());
            return 0;
        }
        if (flows == null) {
            throw new IllegalArgumentException("give a pipeline FILE.sql or --flows FILE");
        }
        if (!Files.isRegularFile(flows)) {
            throw CliErrors.fileNotFound("flows file", flows, "");
        }
        for (String[] required :
                new String[][] {{stateDir, "--state-dir"}, {kafkaBootstrap, "--kafka-bootstrap"}}) {
            if (required[0] == null) {
                throw new IllegalArgumentException("missing " + required[1] + " (with --flows)");
            }
        }
        if (catalog == null) {
            throw new IllegalArgumentException(
                    "missing --catalog (with --flows): give the Iceberg catalog with --catalog"
                            + " type=rest --catalog uri=...");
        }
        String text = Files.readString(flows);
        IngestConfig parsed;
        try {
            parsed = FlowsFile.parse(text, flows.toString()); // fail here, not in the cluster
        } catch (IllegalArgumentException e) {
            throw CliErrors.coded(e, flows.toString());
        }
        if (!parsed.replaceWheres.isEmpty()) {
            // S4: refreshed by local batch jobs; ingest --cluster refuses them
            throw new IllegalArgumentException(
                    flows
                            + ": REPLACE WHERE flows ("
                            + parsed.replaceWheres.get(0).flowName()
                            + (parsed.replaceWheres.size() > 1 ? ", ..." : "")
                            + ") are refreshed by batch jobs (ingest --flows), not by the"
                            + " FlinkDeployment that runs the flows of change records until"
                            + " stopped: put them into a flows file of their own");
        }
        List<OptionLayer> kafka = new ArrayList<>();
        kafka.add(
                OptionLayer.single(
                        OptionSource.FLAG,
                        "--kafka-bootstrap",
                        KafkaOptions.BOOTSTRAP_SERVERS.key(),
                        kafkaBootstrap));
        if (topics != null) {
            kafka.add(
                    OptionLayer.single(
                            OptionSource.FLAG, "--topics", KafkaOptions.TOPICS.key(), topics));
        }
        if (topicPattern != null) {
            kafka.add(
                    OptionLayer.single(
                            OptionSource.FLAG,
                            "--topic-pattern",
                            KafkaOptions.TOPIC_PATTERN.key(),
                            topicPattern));
        }
        if (groupId != null) {
            kafka.add(
                    OptionLayer.single(
                            OptionSource.FLAG, "--group-id", KafkaOptions.GROUP_ID.key(), groupId));
        }
        KafkaInput input = new KafkaInput();
        try {
            KafkaOptions.apply(OptionsResolver.resolve(KafkaOptions.SET, kafka), input);
            input.validate();
        } catch (IllegalArgumentException e) {
            throw CliErrors.coded(e, null);
        }
        FlinkDeploymentRenderer.Settings s = new FlinkDeploymentRenderer.Settings();
        s.name = name != null ? name : "changeflow-ingest";
        s.namespace = namespace;
        s.image = image;
        s.flowsYaml = text;
        s.stateDir = stateDir;
        s.kafkaBootstrap = kafkaBootstrap;
        if (topics != null) {
            s.topics = topics;
        }
        s.topicPattern = topicPattern;
        s.groupId = groupId;
        s.catalog.putAll(CatalogOptions.fromFlags("--catalog", catalog));
        s.parallelism = parallelism;
        s.checkpointTimeout = parsed.checkpointTimeout;
        if (flinkConf != null) {
            s.flinkConfiguration.putAll(flinkConf);
        }
        System.out.print(FlinkDeploymentRenderer.render(s));
        return 0;
    }

    /** The CronJobs of the scheduled tables of {@link #pipeline}. */
    public String renderPipeline() throws Exception {
        if (!Files.isRegularFile(pipeline)) {
            throw CliErrors.fileNotFound("pipeline file", pipeline, "");
        }
        SqlPipeline p = SqlPipeline.read(pipeline);
        for (String w : p.warnings()) {
            System.err.println("warning: " + w);
        }
        List<String> unscheduled = new ArrayList<>(p.tables());
        unscheduled.removeAll(p.schedules().keySet());
        if (!unscheduled.isEmpty()) {
            throw new IllegalArgumentException(
                    pipeline
                            + ": INVALID_SCHEDULE: streaming table(s) "
                            + String.join(", ", unscheduled)
                            + " have no SCHEDULE: a continuous FlinkDeployment reads Kafka (deploy"
                            + " --print --flows ...), which a pipeline file cannot name yet; give"
                            + " them a SCHEDULE EVERY ... or SCHEDULE CRON ... clause");
        }
        if (p.config().catalog.isEmpty()) {
            throw new IllegalArgumentException(
                    pipeline
                            + ": INVALID_OPTION: a scheduled refresh writes the tables to the file's Iceberg"
                            + " catalog, and the file names none: add SET catalog.type = 'rest';"
                            + " SET catalog.uri = '...'; (a pod has no shared local warehouse)");
        }
        for (SqlPipeline.Input in : p.inputs()) {
            if (in.relative()) {
                // S3: the pod has the file (from a ConfigMap), not the folder next to it
                throw new SqlException(
                        SqlException.Code.INVALID_OPTION,
                        in.position(),
                        "read_files path '"
                                + in.written()
                                + "' is relative to the .sql file's folder, which the CronJob's"
                                + " pod does not have (it gets the file alone, from a ConfigMap):"
                                + " give an absolute path on a volume the pod mounts (e.g. '/"
                                + in.written()
                                + "') or an object-store URI (e.g. 's3://bucket/"
                                + in.written()
                                + "')");
            }
        }
        CronJobRenderer.Settings s = new CronJobRenderer.Settings();
        s.name = name != null ? name : CronJobRenderer.label(p.config().name);
        s.namespace = namespace;
        s.image = image;
        s.fileName = pipeline.getFileName().toString();
        s.fileText = Files.readString(pipeline);
        s.stateSize = stateSize;
        if (stateDir != null) {
            java.net.URI uri;
            try {
                uri = java.net.URI.create(stateDir);
            } catch (IllegalArgumentException e) {
                throw CliErrors.invalidOption(
                        "--state-dir '" + stateDir + "' is not a valid URI: " + e.getMessage());
            }
            if (uri.getScheme() == null
                    || uri.getScheme().equals("file")
                    || uri.getAuthority() == null) {
                // a pod's own disk is gone when it ends: the state would be lost after each run
                throw CliErrors.invalidOption(
                        "--state-dir '"
                                + stateDir
                                + "': a CronJob's pod keeps nothing on its own disk between runs;"
                                + " give an object-store URI with a bucket (e.g."
                                + " s3://lakehouse/changeflow/state), or leave --state-dir out for"
                                + " a PersistentVolumeClaim per table");
            }
            s.stateDir = stateDir;
        }
        for (Map.Entry<String, Schedule> e : p.schedules().entrySet()) {
            // what the pod will run: fail here, not in the cluster
            p.refreshOnly(List.of(e.getKey()));
            String cron;
            try {
                cron = KubernetesCron.of(e.getValue());
            } catch (IllegalArgumentException ex) {
                throw new SqlException(
                        SqlException.Code.INVALID_SCHEDULE,
                        e.getValue().position(),
                        ex.getMessage());
            }
            String zone = e.getValue().timeZone();
            s.tables.add(
                    new CronJobRenderer.Scheduled(
                            e.getKey(), cron, zone != null ? zone : "Etc/UTC"));
        }
        return CronJobRenderer.render(s);
    }
}

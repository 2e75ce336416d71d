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

import org.apache.flink.util.TimeUtils;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

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
 * <p>{@code changeflow deploy --print FILE.sql} renders a pipeline file's objects
 * (docs/semantics.md S3) in one multi-document YAML: a ConfigMap {@code <name>-pipeline} holding
 * the file; when it has streaming tables without SCHEDULE, a FlinkDeployment {@code <name>} whose
 * job runs {@code run --cluster FILE.sql} on the mounted file — those tables' flows over the file's
 * {@code read_kafka} subscription until stopped ({@link FlinkDeploymentRenderer#renderPipeline},
 * needs {@code --state-dir}); and for each scheduled table a state claim and a {@code batch/v1}
 * CronJob ({@link CronJobRenderer}) whose pod runs {@code run FILE.sql --refresh table}. The file
 * must name its Iceberg catalog ({@code SET catalog.<property>}). A table without schedule whose
 * flow reads {@code read_files} or {@code STREAM(table)}, or is a bounded refresh (REPLACE WHERE,
 * FROM SNAPSHOT), is refused with {@code INVALID_SCHEDULE} at its source ({@link
 * SqlPipeline#continuous}). Errors of the file are {@code SqlException}s; a schedule with no
 * Kubernetes cron expression fails with {@code INVALID_SCHEDULE} at its clause.
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
                    "A pipeline file: a FlinkDeployment running its tables without SCHEDULE"
                            + " until stopped, and a CronJob per scheduled table (instead of"
                            + " --flows).")
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
                    "Deployment name (with FILE.sql also the prefix of its ConfigMap and"
                            + " CronJobs). Default: changeflow-ingest, or the pipeline's name.")
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
                            + " --flows, or a FILE.sql with tables without SCHEDULE); with FILE.sql"
                            + " also where the CronJobs keep their saved state (an object-store URI)"
                            + " instead of a PersistentVolumeClaim per table.")
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
            description =
                    "Job parallelism. Default: the file's parallelism when it sets one, else"
                            + " ${DEFAULT-VALUE}.")
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

    @Spec CommandSpec spec;

    /**
     * The job's parallelism and checkpoint interval in {@code d}: {@code --parallelism} when given,
     * else the file's {@code parallelism} when it sets one, else {@code --parallelism}'s default;
     * the file's {@code checkpoint-interval} when it sets one ({@code --flink-conf
     * execution.checkpointing.interval=...} still wins, applied after).
     */
    private void jobSettings(IngestConfig file, FlinkDeploymentRenderer.Settings d) {
        boolean flag =
                spec != null
                        && spec.commandLine().getParseResult() != null
                        && spec.commandLine().getParseResult().hasMatchedOption("--parallelism");
        d.parallelism = !flag && file.parallelismSet ? file.parallelism : parallelism;
        if (file.checkpointIntervalSet) {
            d.checkpointInterval = TimeUtils.formatWithHighestUnit(file.checkpointInterval);
        }
    }

    /** A Kubernetes resource quantity as a claim's size takes it (binary or decimal suffix). */
    private static final java.util.regex.Pattern QUANTITY =
            java.util.regex.Pattern.compile("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");

    /**
     * Refuses values Kubernetes would refuse when the objects are applied, so the error comes here
     * with the option's name ({@code INVALID_OPTION}).
     *
     * @throws IllegalArgumentException naming the option, the value and what it takes
     */
    void checkKubernetesValues() {
        if (parallelism < 1) {
            throw CliErrors.invalidOption("--parallelism must be at least 1, got " + parallelism);
        }
        if (namespace != null
                && (namespace.length() > 63
                        || !namespace.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"))) {
            throw CliErrors.invalidOption(
                    "--namespace '"
                            + namespace
                            + "' is not a Kubernetes namespace name: lower-case letters, digits"
                            + " and '-', starting and ending with a letter or digit, at most 63"
                            + " characters");
        }
        if (image == null || image.isBlank() || image.chars().anyMatch(Character::isWhitespace)) {
            throw CliErrors.invalidOption(
                    "--image '"
                            + image
                            + "' is not a container image reference: give one without spaces,"
                            + " e.g. registry.example.com/changeflow:0.1.0");
        }
        if (!QUANTITY.matcher(stateSize).matches() || stateSize.matches("[0.]+[A-Za-z]*")) {
            throw CliErrors.invalidOption(
                    "--state-size '"
                            + stateSize
                            + "' is not a Kubernetes storage quantity: give a size above zero"
                            + " such as 10Gi, 500Mi or 1Ti");
        }
    }

    @Override
    public Integer call() throws Exception {
        if (pipeline != null) {
            if (flows != null) {
                throw new IllegalArgumentException("give FILE.sql or --flows, not both");
            }
            if (kafkaBootstrap != null
                    || topics != null
                    || topicPattern != null
                    || groupId != null
                    || catalog != null) {
                // S3: never silently ignored
                throw CliErrors.invalidOption(
                        "--kafka-bootstrap, --topics, --topic-pattern, --group-id and --catalog"
                                + " go with --flows: a pipeline file names its Kafka input"
                                + " (read_kafka) and its catalog (SET catalog.<property>) itself");
            }
            System.out.print(renderPipeline());
            return 0;
        }
        if (flows == null) {
            throw new IllegalArgumentException("give a pipeline FILE.sql or --flows FILE");
        }
        checkKubernetesValues(); // FILE.sql: renderPipeline checks them
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
        jobSettings(parsed, s);
        s.checkpointTimeout = parsed.checkpointTimeout;
        if (flinkConf != null) {
            s.flinkConfiguration.putAll(flinkConf);
        }
        System.out.print(FlinkDeploymentRenderer.render(s));
        return 0;
    }

    /**
     * The objects of {@link #pipeline} (docs/semantics.md S3), one multi-document YAML: the
     * ConfigMap holding the file; when the file has streaming tables without SCHEDULE, the
     * FlinkDeployment that runs them until stopped ({@code run --cluster FILE.sql}, {@link
     * SqlPipeline#continuous}); per scheduled table its state claim and CronJob.
     *
     * @throws SqlException an error of the file; {@code INVALID_SCHEDULE} at the source of a table
     *     without schedule that the continuous job cannot read ({@code read_files}, {@code
     *     STREAM(table)}, a bounded refresh), or at a schedule with no Kubernetes cron expression
     * @throws IllegalArgumentException {@code INVALID_OPTION} when the file names no catalog, when
     *     a relative {@code read_files} path would not exist in a pod, when {@code --state-dir} is
     *     missing for a continuous job, or when an object name is no DNS label
     */
    public String renderPipeline() throws Exception {
        checkKubernetesValues();
        if (!Files.isRegularFile(pipeline)) {
            throw CliErrors.fileNotFound("pipeline file", pipeline, "");
        }
        SqlPipeline p = SqlPipeline.read(pipeline);
        for (String w : p.warnings()) {
            System.err.println("warning: " + w);
        }
        SqlPipeline continuous = p.continuous();
        p.requireCatalog(
                pipeline.toString(),
                continuous == null
                        ? "a scheduled refresh"
                        : "the continuous job (FlinkDeployment)");
        if (continuous != null && stateDir == null) {
            throw new IllegalArgumentException(
                    pipeline
                            + ": INVALID_OPTION: streaming table(s) "
                            + String.join(", ", continuous.tables())
                            + " have no SCHEDULE and run in a FlinkDeployment until stopped: give"
                            + " --state-dir (e.g. s3://bucket/flink: its checkpoints, savepoints"
                            + " and HA data go below it)");
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
        for (SqlPipeline.SnapshotTable t : p.snapshotTables()) {
            if (t.relativeFolder()
                    && p.schedules().keySet().stream()
                            .anyMatch(k -> k.equalsIgnoreCase(t.name()))) {
                // A6 + S3: the snapshot files are read from a local folder, in the pod
                throw new SqlException(
                        SqlException.Code.INVALID_OPTION,
                        t.sourcePosition(),
                        "FROM SNAPSHOT folder '"
                                + t.folderAsWritten()
                                + "' of streaming table "
                                + t.name()
                                + " is relative to the .sql file's folder, which the CronJob's pod"
                                + " does not have (it gets the file alone, from a ConfigMap): give"
                                + " an absolute path on a volume the pod mounts (e.g. '/"
                                + t.folderAsWritten()
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
        StringBuilder out = new StringBuilder(CronJobRenderer.configMap(s));
        if (continuous != null) {
            FlinkDeploymentRenderer.Settings d = new FlinkDeploymentRenderer.Settings();
            d.name = s.name;
            d.namespace = namespace;
            d.image = image;
            d.stateDir = stateDir;
            jobSettings(p.config(), d);
            d.checkpointTimeout = p.config().checkpointTimeout;
            if (flinkConf != null) {
                d.flinkConfiguration.putAll(flinkConf);
            }
            out.append("---\n")
                    .append(
                            FlinkDeploymentRenderer.renderPipeline(
                                    d,
                                    CronJobRenderer.configMapName(s),
                                    CronJobRenderer.PIPELINE_DIR,
                                    s.fileName));
        }
        return out.append(CronJobRenderer.cronJobs(s)).toString();
    }
}

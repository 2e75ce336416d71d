package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.config.KafkaOptions;
import dev.changeflow.jobs.deploy.FlinkDeploymentRenderer;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sources.kafka.KafkaInput;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

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

    @Option(
            names = "--flows",
            required = true,
            paramLabel = "FILE",
            description = "Flows file (mounted into the job).")
    Path flows;

    @Option(
            names = "--name",
            paramLabel = "NAME",
            defaultValue = "changeflow-ingest",
            description = "Deployment name. Default: ${DEFAULT-VALUE}.")
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
            required = true,
            paramLabel = "URI",
            description = "Root of checkpoints, savepoints and HA data, e.g. s3://bucket/flink.")
    String stateDir;

    @Option(
            names = "--kafka-bootstrap",
            required = true,
            paramLabel = "HOST:PORT",
            description = "Kafka bootstrap servers.")
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
            required = true,
            paramLabel = "KEY=VALUE",
            description = "Iceberg catalog property (type, uri, warehouse, ...).")
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

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(flows)) {
            throw new IllegalArgumentException("flows file not found: " + flows);
        }
        String text = Files.readString(flows);
        IngestConfig parsed =
                FlowsFile.parse(text, flows.toString()); // fail here, not in the cluster
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
        KafkaOptions.apply(OptionsResolver.resolve(KafkaOptions.SET, kafka), input);
        input.validate();
        FlinkDeploymentRenderer.Settings s = new FlinkDeploymentRenderer.Settings();
        s.name = name;
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
}

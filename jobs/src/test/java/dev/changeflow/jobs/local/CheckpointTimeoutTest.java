package dev.changeflow.jobs.local;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.deploy.FlinkDeploymentRenderer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The ingest option {@code checkpoint-timeout}: it reaches the local job's Flink configuration and
 * the rendered FlinkDeployment; a bad value fails naming the option.
 */
class CheckpointTimeoutTest {
    @TempDir Path dir;

    @Test
    void theFlowsFileValueReachesTheLocalConfiguration() throws Exception {
        IngestConfig cfg = FlowsFile.parse("checkpoint-timeout: 90s\nflows: []\n", "x.yaml");
        assertThat(cfg.checkpointTimeout).isEqualTo(Duration.ofSeconds(90));
        Configuration conf =
                LocalRunner.configuration(dir, cfg.checkpointInterval, cfg.checkpointTimeout);
        assertThat(conf.get(CheckpointingOptions.CHECKPOINTING_TIMEOUT))
                .isEqualTo(Duration.ofSeconds(90));
    }

    @Test
    void theDefaultIsTwoMinutesNotFlinksTen() throws Exception {
        IngestConfig cfg = FlowsFile.parse("flows: []\n", "x.yaml");
        assertThat(cfg.checkpointTimeout).isEqualTo(Duration.ofMinutes(2));
        assertThat(
                        LocalRunner.configuration(dir, Duration.ofSeconds(5))
                                .get(CheckpointingOptions.CHECKPOINTING_TIMEOUT))
                .isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void aBadValueFailsNamingTheOptionTheValueAndWhatIsAllowed() {
        assertThatThrownBy(() -> FlowsFile.parse("checkpoint-timeout: soon\n", "x.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "x.yaml: 'checkpoint-timeout' = 'soon' is not a duration of at least 1s"
                                + " (e.g. 2min, 90s).");
        assertThatThrownBy(() -> FlowsFile.parse("checkpoint-timeout: 500ms\n", "x.yaml"))
                .hasMessage(
                        "x.yaml: 'checkpoint-timeout' = '500ms' is not a duration of at least 1s"
                                + " (e.g. 2min, 90s).");
    }

    @Test
    void theRenderedFlinkDeploymentCarriesTheTimeout() throws Exception {
        FlinkDeploymentRenderer.Settings s = settings();
        assertThat(timeoutOf(FlinkDeploymentRenderer.render(s))).isEqualTo("2 min");
        s.checkpointTimeout = Duration.ofSeconds(90);
        assertThat(timeoutOf(FlinkDeploymentRenderer.render(s))).isEqualTo("90 s");
    }

    private static FlinkDeploymentRenderer.Settings settings() {
        FlinkDeploymentRenderer.Settings s = new FlinkDeploymentRenderer.Settings();
        s.flowsYaml = "flows: []\n";
        s.stateDir = "s3://lake/flink";
        s.kafkaBootstrap = "kafka:9092";
        s.topics = List.of("t");
        s.catalog.put("type", "rest");
        return s;
    }

    private static String timeoutOf(String yaml) throws Exception {
        ObjectMapper m = new ObjectMapper(new YAMLFactory());
        JsonNode deployment = null;
        for (JsonNode d : m.readerFor(JsonNode.class).<JsonNode>readValues(yaml).readAll()) {
            if ("FlinkDeployment".equals(d.path("kind").asText())) {
                deployment = d;
            }
        }
        assertThat(deployment).isNotNull();
        return deployment
                .path("spec")
                .path("flinkConfiguration")
                .path("execution.checkpointing.timeout")
                .asText();
    }
}

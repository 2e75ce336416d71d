package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue #18 ("typed serializers on every edge"): in the ingest job of SCD1, SCD2 and append-only
 * flows, no record that changeflow's own operators exchange goes through Kryo — every edge has a
 * typed serializer ({@code SourceLine} as a POJO, rows as {@code RowData}). The one generic type
 * left is Iceberg's own: its writer hands {@code FlinkWriteResult} (one per subtask and checkpoint,
 * not per record) to its committer.
 */
class IngestGraphTypesTest {
    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: types",
                    "format: debezium-json",
                    "namespace: shop",
                    "flows:",
                    "  - table: items",
                    "    keys: [id]",
                    "    schema: 'id INT, name STRING, price DECIMAL(10, 2)'",
                    "  - table: items",
                    "    target: items_history",
                    "    keys: [id]",
                    "    scd-type: 2",
                    "    schema: 'id INT, name STRING, price DECIMAL(10, 2)'",
                    "  - table: events",
                    "    append-only: true",
                    "    schema: 'id BIGINT, what STRING'");

    @TempDir Path warehouse;

    @Test
    void onlyIcebergsWriteResultsGoThroughKryo() throws Exception {
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(FLOWS, "flows.yaml"), List.of());
        ClusterIngest.ensureTables(catalog, plan);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        IngestJob.build(env, plan, settings, List.of(warehouse), null, null);
        StreamGraph graph = env.getStreamGraph();

        Set<String> kryo = new TreeSet<>();
        int typed = 0;
        for (StreamNode node : graph.getStreamNodes()) {
            TypeSerializer<?> out = node.getTypeSerializerOut();
            if (out instanceof KryoSerializer<?>) {
                kryo.add(node.getOperatorName());
            } else if (out != null) {
                typed++;
            }
        }
        // Iceberg's writers emit FlinkWriteResult (generic) to their committers: one per table
        assertThat(kryo)
                .containsExactly(
                        "events-IcebergStreamWriter",
                        "items-IcebergStreamWriter",
                        "items_history-IcebergStreamWriter",
                        "quarantine-IcebergStreamWriter");
        assertThat(typed).as("typed operator outputs").isGreaterThan(10);
    }
}

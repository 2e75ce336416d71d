package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.files.SourceLine;
import dev.changeflow.sources.kafka.KafkaChangeRecord;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HandedOverTypeInfo}: records are handed to the next chained operator as they are (issue
 * #18), and the wire format and serializer snapshot are the wrapped POJO serializer's.
 */
class HandedOverTypeInfoTest {
    private static <T> TypeSerializer<T> serializer(Class<T> type) {
        return HandedOverTypeInfo.of(type).createSerializer(new SerializerConfigImpl());
    }

    private static <T> T roundTrip(TypeSerializer<T> s, T record) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(256);
        s.serialize(record, out);
        return s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    }

    @Test
    void aCopyIsTheRecordItselfAndTheWireFormatKeepsEveryField() throws Exception {
        TypeSerializer<SourceLine> s = serializer(SourceLine.class);
        SourceLine data =
                SourceLine.data(
                        "file:/in/a.jsonl", 7, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
        SourceLine damage =
                SourceLine.damage(
                        "file:/in/b.jsonl.gz",
                        3,
                        QuarantineReason.DAMAGED_FILE,
                        "CRC32 mismatch",
                        new byte[] {1, 2});
        SourceLine end = SourceLine.endOfFile("file:/in/a.jsonl", 9);
        SourceLine csv = SourceLine.data("file:/in/c.csv", 2, new byte[] {'x'});
        csv.malformed = "line 2 is not a CSV record: unclosed quote";
        csv.textCells = true;
        for (SourceLine l : List.of(data, damage, end, csv)) {
            assertThat(s.copy(l)).isSameAs(l);
            assertThat(s.copy(l, new SourceLine())).isSameAs(l);
            SourceLine back = roundTrip(s, l);
            assertThat(back).isNotSameAs(l).isEqualTo(l);
            assertThat(back.textCells).isEqualTo(l.textCells);
        }

        TypeSerializer<KafkaChangeRecord> k = serializer(KafkaChangeRecord.class);
        KafkaChangeRecord r = new KafkaChangeRecord();
        r.topic = "pg.public.t";
        r.partition = 1;
        r.offset = 42;
        r.timestamp = 1_700_000_000_000L;
        r.key = new byte[] {'k'};
        r.value = null; // a tombstone
        assertThat(k.copy(r)).isSameAs(r);
        KafkaChangeRecord back = roundTrip(k, r);
        assertThat(back)
                .extracting(x -> x.topic, x -> x.partition, x -> x.offset, x -> x.timestamp)
                .containsExactly("pg.public.t", 1, 42L, 1_700_000_000_000L);
        assertThat(back.key).containsExactly('k');
        assertThat(back.value).isNull();
    }

    @Test
    void itsSnapshotRestoresTheSameSerializerAndIsCompatibleAsIs() throws Exception {
        TypeSerializer<SourceLine> s = serializer(SourceLine.class);
        DataOutputSerializer out = new DataOutputSerializer(256);
        TypeSerializerSnapshot.writeVersionedSnapshot(out, s.snapshotConfiguration());
        TypeSerializerSnapshot<SourceLine> read =
                TypeSerializerSnapshot.readVersionedSnapshot(
                        new DataInputDeserializer(out.getCopyOfBuffer()),
                        getClass().getClassLoader());
        assertThat(read.restoreSerializer()).isEqualTo(s);
        assertThat(s.snapshotConfiguration().resolveSchemaCompatibility(read).isCompatibleAsIs())
                .isTrue();
        assertThat(s.duplicate()).isEqualTo(s);
    }

    @Test
    void theFileIngestHandsLinesFromTheReaderToTheDecoderWithoutCopies(@TempDir Path warehouse)
            throws Exception {
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        IngestPlan plan =
                IngestPlanner.plan(
                        FlowsFile.parse(
                                String.join(
                                        "\n",
                                        "name: handed",
                                        "format: debezium-json",
                                        "namespace: shop",
                                        "flows:",
                                        "  - table: items",
                                        "    keys: [id]",
                                        "    schema: 'id INT, name STRING'"),
                                "flows.yaml"),
                        List.of());
        ClusterIngest.ensureTables(catalog, plan);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        IngestJob.build(env, plan, settings, List.of(warehouse), null, null);
        StreamGraph graph = env.getStreamGraph();
        Map<String, String> out = new TreeMap<>();
        for (StreamNode node : graph.getStreamNodes()) {
            if (node.getOperatorName().contains("change files")
                    || node.getOperatorName().equals("file progress")) {
                out.put(
                        node.getOperatorName(),
                        node.getTypeSerializerOut().getClass().getSimpleName());
            }
        }
        assertThat(out)
                .containsExactly(
                        Map.entry("Source: change files", "Serializer"),
                        Map.entry("file progress", "Serializer"));
        for (StreamNode node : graph.getStreamNodes()) {
            if (out.containsKey(node.getOperatorName())) {
                assertThat(node.getTypeSerializerOut())
                        .isInstanceOf(HandedOverTypeInfo.Serializer.class);
            }
        }
    }
}

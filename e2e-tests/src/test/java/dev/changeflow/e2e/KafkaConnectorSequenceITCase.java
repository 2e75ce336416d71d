package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.KafkaSampler;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default sequence per Debezium connector with Kafka input (semantics.md A5 "Default sequence
 * per connector"), on the embedded broker: the launcher samples the first record of each subscribed
 * partition ({@link KafkaSampler}) before planning, so a MySQL capture without {@code sequence-by}
 * is ordered by its binlog position ({@code log_position}: file number, pos, row) — the rows of one
 * multi-row binlog event, arriving out of order, apply exactly; with empty topics (or a {@code
 * latest} start) the default stays {@code source.lsn}.
 */
class KafkaConnectorSequenceITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    @TempDir Path tmp;

    private static final String FLOWS =
            String.join(
                    "\n",
                    "name: %s",
                    "namespace: shop",
                    "checkpoint-interval: 1s",
                    "flows:",
                    "  - table: customers",
                    "    keys: [id]",
                    "    schema: 'id INT, name STRING'");

    /** A Debezium MySQL change event (2.x/3.x envelope), binlog {@code file}, {@code pos}, row. */
    private static String mysql(String op, int id, String name, String file, long pos, int row) {
        return "{\"before\":null,\"after\":{\"id\":"
                + id
                + ",\"name\":\""
                + name
                + "\"},\"source\":{\"version\":\"2.7.3.Final\",\"connector\":\"mysql\","
                + "\"name\":\"server1\",\"ts_ms\":1700000000000,\"snapshot\":\"false\","
                + "\"db\":\"inventory\",\"sequence\":null,\"table\":\"customers\","
                + "\"server_id\":223344,\"gtid\":null,\"file\":\""
                + file
                + "\",\"pos\":"
                + pos
                + ",\"row\":"
                + row
                + ",\"thread\":7,\"query\":null},\"op\":\""
                + op
                + "\",\"ts_ms\":1700000000100,\"transaction\":null}";
    }

    private static ProducerRecord<byte[], byte[]> rec(String topic, int id, String value) {
        return new ProducerRecord<>(
                topic,
                0,
                ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    private static void produce(List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
            for (ProducerRecord<byte[], byte[]> r : records) {
                producer.send(r).get();
            }
        }
    }

    private static KafkaInput input(String topic, StartingOffsets start) {
        KafkaInput kafka = new KafkaInput();
        kafka.bootstrapServers = KAFKA.bootstrapServers();
        kafka.topics = List.of(topic);
        kafka.startingOffsets = start;
        return kafka;
    }

    /** Plans as the launcher does: sample the topics' first records, then plan. */
    private static IngestPlan plan(String name, KafkaInput kafka) throws Exception {
        IngestConfig cfg = FlowsFile.parse(String.format(FLOWS, name), "flows.yaml");
        List<SchemaSampler.KafkaSample> sample =
                KafkaSampler.firstRecords(kafka, "changeflow-" + name, Duration.ofSeconds(60));
        return IngestPlanner.plan(cfg, List.of(), sample);
    }

    @Test
    void mysqlCaptureOnKafkaIsOrderedByItsBinlogPosition() throws Exception {
        String topic = "server1.inventory.customers";
        KAFKA.createTopics(1, List.of(topic));
        String f3 = "mysql-bin.000003";
        produce(
                List.of(
                        // one binlog event at pos 400 with three rows, arriving out of row order:
                        // an INSERT ... ON DUPLICATE KEY UPDATE that inserts id 1 (row 0) and
                        // updates it (row 1), and inserts id 2 (row 2)
                        rec(topic, 1, mysql("u", 1, "b", f3, 400, 1)),
                        rec(topic, 1, mysql("c", 1, "a", f3, 400, 0)),
                        rec(topic, 2, mysql("c", 2, "x", f3, 400, 2)),
                        // the next binlog file (pos restarts) beats a later pos of the earlier one
                        rec(topic, 2, mysql("u", 2, "y", "mysql-bin.000004", 4, 0)),
                        rec(topic, 2, mysql("u", 2, "z", f3, 900, 0))));
        KafkaInput kafka = input(topic, StartingOffsets.earliest());
        IngestPlan plan = plan("kafka-mysql", kafka);
        assertThat(plan.flows.get(0).decoder.sequenceBy()).containsExactly("_log_position");

        Path warehouse = tmp.resolve("wh");
        LocalIngest.Summary s = KafkaBadInputITCase.run(plan, kafka, warehouse);
        assertThat(s.records).isEqualTo(5);
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "customers"))))
                .containsExactly("1,b", "2,y");
        assertThat(
                        TableRows.toCsvLines(
                                cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine"))))
                .isEmpty();
    }

    @Test
    void emptyTopicsOrALatestStartKeepSourceLsn() throws Exception {
        String empty = "server2.inventory.customers";
        String full = "server3.inventory.customers";
        KAFKA.createTopics(1, List.of(empty, full));
        produce(List.of(rec(full, 1, mysql("c", 1, "a", "mysql-bin.000001", 4, 0))));

        KafkaInput none = input(empty, StartingOffsets.earliest());
        assertThat(KafkaSampler.firstRecords(none, "g", Duration.ofSeconds(60))).isEmpty();
        assertThat(plan("kafka-empty", none).flows.get(0).decoder.sequenceBy())
                .containsExactly("_source_lsn");

        KafkaInput latest = input(full, StartingOffsets.latest());
        assertThat(plan("kafka-latest", latest).flows.get(0).decoder.sequenceBy())
                .containsExactly("_source_lsn");

        KafkaInput earliest = input(full, StartingOffsets.earliest());
        List<SchemaSampler.KafkaSample> first =
                KafkaSampler.firstRecords(earliest, "g", Duration.ofSeconds(60));
        assertThat(first).extracting(SchemaSampler.KafkaSample::topic).containsExactly(full);
        assertThat(plan("kafka-full", earliest).flows.get(0).decoder.sequenceBy())
                .containsExactly("_log_position");
    }
}

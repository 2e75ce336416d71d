package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-partition starting offsets ({@code starting-offsets: {"topic":{"0":2}}}, Spark's form) on the
 * embedded broker, through {@code bin/changeflow ingest}: a named partition starts at its offset,
 * an unnamed one at its earliest; an offset outside a partition's records or a partition the input
 * does not subscribe to is refused before anything runs (exit 2) and no table is written.
 */
class KafkaStartingOffsetsITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    @TempDir Path tmp;

    private static final String TOPIC = "pg.shop.customers";

    private static String change(int id, String name, long lsn) {
        return "{\"before\":null,\"after\":{\"id\":"
                + id
                + ",\"name\":\""
                + name
                + "\"},\"source\":{\"connector\":\"postgresql\",\"schema\":\"shop\","
                + "\"table\":\"customers\",\"lsn\":"
                + lsn
                + "},\"op\":\"c\",\"ts_ms\":1700000000000}";
    }

    private static ProducerRecord<byte[], byte[]> rec(int partition, int id, String name) {
        return new ProducerRecord<>(
                TOPIC,
                partition,
                ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8),
                change(id, name, 100L * id).getBytes(StandardCharsets.UTF_8));
    }

    private CapturedOutput.MainRun ingest(Path warehouse, String startingOffsets) throws Exception {
        Path flows = tmp.resolve("flows.yaml");
        Files.writeString(
                flows,
                String.join(
                        "\n",
                        "name: offsets",
                        "namespace: shop",
                        "checkpoint-interval: 1s",
                        "kafka:",
                        "  bootstrap-servers: " + KAFKA.bootstrapServers(),
                        "  topics: [" + TOPIC + "]",
                        "  starting-offsets: '" + startingOffsets + "'",
                        "flows:",
                        "  - table: customers",
                        "    keys: [id]",
                        "    schema: 'id INT, name STRING'",
                        ""));
        return CapturedOutput.main(
                "ingest", "--warehouse", warehouse.toString(), "--flows", flows.toString());
    }

    @Test
    void aNamedPartitionStartsAtItsOffsetAndTheOthersAtTheirEarliest() throws Exception {
        KAFKA.createTopics(2, java.util.List.of(TOPIC));
        try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
            producer.send(rec(0, 1, "a")).get();
            producer.send(rec(0, 2, "b")).get();
            producer.send(rec(0, 3, "c")).get();
            producer.send(rec(1, 4, "d")).get();
            producer.send(rec(1, 5, "e")).get();
        }

        // an offset past the end of partition 0 (3 records): refused, nothing written
        Path refused = tmp.resolve("refused");
        CapturedOutput.MainRun past = ingest(refused, "{\"" + TOPIC + "\":{\"0\":4}}");
        assertThat(past.code()).as(past.stderr()).isEqualTo(2);
        assertThat(past.stderr())
                .contains(
                        "starting-offsets: partition 0 of topic '"
                                + TOPIC
                                + "' starts at offset 4, outside its records [0, 3] (earliest"
                                + " offset, end)");
        // a partition the topic does not have
        CapturedOutput.MainRun unknown = ingest(refused, "{\"" + TOPIC + "\":{\"2\":0}}");
        assertThat(unknown.code()).as(unknown.stderr()).isEqualTo(2);
        assertThat(unknown.stderr())
                .contains(
                        "starting-offsets names partitions the input does not subscribe to: "
                                + TOPIC
                                + "-2 (subscribed: "
                                + TOPIC
                                + "-0, "
                                + TOPIC
                                + "-1)");
        assertThat(refused.resolve("shop/customers")).doesNotExist();

        // partition 0 from offset 2 (id 3 only), partition 1 not named: from its earliest
        Path warehouse = tmp.resolve("wh");
        CapturedOutput.MainRun run = ingest(warehouse, "{\"" + TOPIC + "\":{\"0\":2}}");
        assertThat(run.code()).as(run.stderr()).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "customers"))))
                .containsExactly("3,c", "4,d", "5,e");
    }
}

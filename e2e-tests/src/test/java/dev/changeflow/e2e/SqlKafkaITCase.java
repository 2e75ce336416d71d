package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.cli.Main;
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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code STREAM read_kafka(bootstrapServers => ..., subscribe => ..., startingOffsets => ...)} as
 * the source of an AUTO CDC flow (README "Streaming tables in SQL"), on the embedded KRaft broker:
 * {@code bin/changeflow run FILE.sql} reads the topic up to the end offsets seen at launch, as
 * {@code ingest} does with the flows file's {@code kafka:} block, and applies the Debezium records
 * (insert, update, delete) to the table.
 */
class SqlKafkaITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    @TempDir Path tmp;

    /** A Debezium PostgreSQL change event of table public.customers at WAL position {@code lsn}. */
    static ProducerRecord<byte[], byte[]> event(
            String topic, String op, int id, String before, String after, long lsn) {
        String value =
                "{\"before\":"
                        + before
                        + ",\"after\":"
                        + after
                        + ",\"source\":{\"connector\":\"postgresql\",\"name\":\"server1\","
                        + "\"schema\":\"public\",\"table\":\"customers\",\"lsn\":"
                        + lsn
                        + "},\"op\":\""
                        + op
                        + "\",\"ts_ms\":1700000000000}";
        return new ProducerRecord<>(
                topic,
                0,
                ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readKafkaFeedsAnAutoCdcFlow() throws Exception {
        String topic = "server1.public.customers";
        KAFKA.createTopics(1, List.of(topic));
        try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
            for (ProducerRecord<byte[], byte[]> r :
                    List.of(
                            event(topic, "c", 1, "null", "{\"id\":1,\"name\":\"a\"}", 10),
                            event(topic, "c", 2, "null", "{\"id\":2,\"name\":\"b\"}", 20),
                            event(topic, "u", 1, "null", "{\"id\":1,\"name\":\"a2\"}", 30),
                            event(topic, "d", 2, "{\"id\":2,\"name\":\"b\"}", "null", 40),
                            event(topic, "c", 3, "null", "{\"id\":3,\"name\":\"c\"}", 50))) {
                producer.send(r).get();
            }
        }
        Path file = tmp.resolve("customers.sql");
        Files.writeString(
                file,
                "SET checkpoint-interval = 1s;\n"
                        + "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE customers (id INT, name STRING)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_kafka(\n"
                        + "    bootstrapServers => '"
                        + KAFKA.bootstrapServers()
                        + "',\n"
                        + "    subscribe => '"
                        + topic
                        + "',\n"
                        + "    startingOffsets => 'earliest')\n"
                        + "  KEYS (id);\n");
        Path warehouse = tmp.resolve("warehouse");
        assertThat(Main.execute("run", "--warehouse", warehouse.toString(), file.toString()))
                .isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "customers"))))
                .containsExactlyInAnyOrder("1,a2", "3,c");
        assertThat(
                        TableRows.toCsvLines(
                                cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine"))))
                .isEmpty();
    }
}

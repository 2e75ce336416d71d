package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code run --cluster FILE.sql} — the job of the FlinkDeployment that {@code deploy --print
 * FILE.sql} renders for the streaming tables without SCHEDULE (docs/semantics.md S3) — with a
 * MiniCluster as "the cluster" (the context environment, as application mode gives it) over the
 * embedded KRaft broker: the launcher's own entry point ({@link Main}) runs the file's unscheduled
 * {@code read_kafka} table until stopped, applying the Debezium records (insert, update, delete) to
 * the table; the file's scheduled table is left to its CronJob. Once the table holds the final rows
 * the job is cancelled; the table is exact, the quarantine empty, the job was named after the
 * pipeline ({@code changeflow ingest shop}), and the scheduled table was never created.
 */
class SqlKafkaClusterITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir Path tmp;

    @Test
    void runClusterAppliesTheUnscheduledKafkaTableUntilStopped(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        long t0 = System.nanoTime();
        String topic = "server1.public.customers";
        KAFKA.createTopics(1, List.of(topic));
        try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
            for (ProducerRecord<byte[], byte[]> r :
                    List.of(
                            SqlKafkaITCase.event(
                                    topic, "c", 1, "null", "{\"id\":1,\"name\":\"a\"}", 10),
                            SqlKafkaITCase.event(
                                    topic, "c", 2, "null", "{\"id\":2,\"name\":\"b\"}", 20),
                            SqlKafkaITCase.event(
                                    topic, "u", 1, "null", "{\"id\":1,\"name\":\"a2\"}", 30),
                            SqlKafkaITCase.event(
                                    topic, "d", 2, "{\"id\":2,\"name\":\"b\"}", "null", 40),
                            SqlKafkaITCase.event(
                                    topic, "c", 3, "null", "{\"id\":3,\"name\":\"c\"}", 50))) {
                producer.send(r).get();
            }
        }
        Path warehouse = tmp.resolve("warehouse").toAbsolutePath();
        Path file = tmp.resolve("shop.sql");
        Files.writeString(
                file,
                "SET checkpoint-interval = 300ms;\n"
                        + "SET catalog.type = 'hadoop';\n"
                        + "SET catalog.warehouse = '"
                        + warehouse
                        + "';\n"
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
                        + "  KEYS (id);\n"
                        + "CREATE OR REFRESH STREAMING TABLE audit\n"
                        + "  SCHEDULE EVERY 1 hour\n"
                        + "  AS SELECT * FROM STREAM read_files('"
                        + tmp.resolve("audit").toAbsolutePath()
                        + "', format => 'debezium-json');\n");
        AtomicInteger exit = new AtomicInteger(-1);
        Thread run =
                new Thread(
                        () -> exit.set(Main.execute("run", "--cluster", file.toString())),
                        "run-cluster");
        run.start();
        Catalog cat = CatalogSettings.localHadoop(warehouse).open();
        TableIdentifier customers = TableIdentifier.of("shop", "customers");
        List<String> expected = List.of("1,a2", "3,c");
        List<String> jobNames = new ArrayList<>();
        try {
            Await.until(
                    "shop.customers to hold the final rows",
                    TIMEOUT,
                    () -> expected.equals(rows(cat, customers)) || !run.isAlive(),
                    () -> "rows " + rows(cat, customers) + ", exit code " + exit.get());
            assertThat(run.isAlive()).as("run --cluster runs until stopped").isTrue();
        } finally {
            for (JobStatusMessage job : client.listJobs().get()) {
                if (!job.getJobState().isGloballyTerminalState()) {
                    jobNames.add(job.getJobName());
                    client.cancel(job.getJobId()).get();
                }
            }
            run.join(TIMEOUT.toMillis());
        }
        assertThat(run.isAlive()).isFalse();
        // cancelled: the job ends, and the program with it, as a failed run (exit code 1)
        assertThat(exit.get()).isEqualTo(1);
        assertThat(jobNames).containsExactly("changeflow ingest shop");
        assertThat(rows(cat, customers)).isEqualTo(expected);
        assertThat(
                        TableRows.toCsvLines(
                                cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine"))))
                .isEmpty();
        // the scheduled table is its CronJob's: the continuous job neither creates nor writes it
        assertThat(cat.tableExists(TableIdentifier.of("shop", "audit"))).isFalse();
        System.out.printf(
                "SqlKafkaClusterITCase: run --cluster applied and cancelled in %.1f s%n",
                (System.nanoTime() - t0) / 1e9);
    }

    /** The table's rows as sorted CSV lines; empty while it does not exist yet. */
    private static List<String> rows(Catalog cat, TableIdentifier id) {
        if (!cat.tableExists(id)) {
            return List.of();
        }
        List<String> rows = new ArrayList<>(TableRows.toCsvLines(cat.loadTable(id)));
        rows.sort(null);
        return rows;
    }
}

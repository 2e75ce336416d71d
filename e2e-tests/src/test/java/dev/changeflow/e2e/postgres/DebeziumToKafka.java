package dev.changeflow.e2e.postgres;

import dev.changeflow.e2e.kafka.EmbeddedKafka;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.JsonByteArray;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * The Debezium embedded engine (PostgreSQL connector, {@code pgoutput}) writing to Kafka as Kafka
 * Connect would: each change event goes to the topic Debezium names ({@code
 * <topic.prefix>.<schema>.<table>}), keyed and valued by Kafka Connect's {@code JsonConverter} with
 * schemas ({@code {"schema": ..., "payload": ...}}, Debezium's default), a delete followed by its
 * tombstone (null value). Events are sent in Debezium's order by one idempotent producer ({@code
 * acks=all}) and a batch is marked processed only after the producer flushed it, so each topic
 * partition holds the events in commit order. Offsets stay in memory: each instance starts with the
 * connector's initial snapshot (its replication slot and publication are created on start).
 *
 * <p>A send or connector error stops the engine; {@link #failure()} and the {@code await} methods
 * report it.
 */
public final class DebeziumToKafka implements AutoCloseable {
    private final ExecutorService executor =
            Executors.newSingleThreadExecutor(
                    r -> {
                        Thread t = new Thread(r, "debezium-engine");
                        t.setDaemon(true);
                        return t;
                    });
    private final KafkaProducer<byte[], byte[]> producer;
    private final DebeziumEngine<ChangeEvent<byte[], byte[]>> engine;
    private final Map<String, AtomicLong> sent = new ConcurrentHashMap<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean stopped;

    private DebeziumToKafka(Properties config, EmbeddedKafka kafka) {
        producer = kafka.producer();
        engine =
                DebeziumEngine.create(JsonByteArray.class)
                        .using(config)
                        .notifying(this::handleBatch)
                        .using(
                                (success, message, error) -> {
                                    if (!success) {
                                        failure.compareAndSet(
                                                null,
                                                error != null
                                                        ? error
                                                        : new IllegalStateException(message));
                                    }
                                    stopped = true;
                                })
                        .build();
        executor.execute(engine);
    }

    /**
     * Starts capturing a PostgreSQL database to {@code kafka}: initial snapshot, then streaming.
     *
     * @param tables Debezium's {@code table.include.list} (regexes over {@code schema.table})
     * @param topicPrefix Debezium's {@code topic.prefix} (the "server name")
     * @param extra further connector properties (override the defaults set here)
     */
    public static DebeziumToKafka start(
            LocalPostgres pg,
            String database,
            String tables,
            String topicPrefix,
            EmbeddedKafka kafka,
            Map<String, String> extra) {
        Properties p = new Properties();
        p.setProperty("name", "changeflow-" + topicPrefix);
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty(
                "offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        p.setProperty("offset.flush.interval.ms", "1000");
        p.setProperty("database.hostname", "127.0.0.1");
        p.setProperty("database.port", String.valueOf(pg.port()));
        p.setProperty("database.user", pg.user());
        p.setProperty("database.password", "");
        p.setProperty("database.dbname", database);
        p.setProperty("topic.prefix", topicPrefix);
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", "changeflow_" + topicPrefix);
        p.setProperty("publication.name", "changeflow_" + topicPrefix);
        p.setProperty("publication.autocreate.mode", "filtered");
        p.setProperty("table.include.list", tables);
        p.setProperty("snapshot.mode", "initial");
        p.setProperty("tombstones.on.delete", "true");
        p.setProperty("poll.interval.ms", "100");
        p.putAll(extra);
        return new DebeziumToKafka(p, kafka);
    }

    private void handleBatch(
            List<ChangeEvent<byte[], byte[]>> events,
            DebeziumEngine.RecordCommitter<ChangeEvent<byte[], byte[]>> committer)
            throws InterruptedException {
        for (ChangeEvent<byte[], byte[]> e : events) {
            producer.send(
                    new ProducerRecord<>(e.destination(), e.key(), e.value()),
                    (md, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        }
                    });
        }
        producer.flush();
        Throwable f = failure.get();
        if (f != null) {
            throw new IllegalStateException("cannot write Debezium's events to Kafka", f);
        }
        for (ChangeEvent<byte[], byte[]> e : events) {
            sent.computeIfAbsent(e.destination(), t -> new AtomicLong()).incrementAndGet();
            committer.markProcessed(e);
        }
        committer.markBatchFinished();
    }

    /** Events written to Kafka per topic so far (tombstones included). */
    public Map<String, Long> sent() {
        Map<String, Long> out = new TreeMap<>();
        sent.forEach((t, n) -> out.put(t, n.get()));
        return out;
    }

    /** Events written to Kafka so far, all topics (tombstones included). */
    public long sentTotal() {
        return sent.values().stream().mapToLong(AtomicLong::get).sum();
    }

    /** The error that stopped the engine, or null. */
    public Throwable failure() {
        return failure.get();
    }

    /**
     * Waits until {@code condition} holds for {@link #sent()}.
     *
     * @throws IllegalStateException when the engine failed or stopped first, or after {@code
     *     timeout}
     */
    public void awaitSent(
            String description, Duration timeout, Predicate<Map<String, Long>> condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.test(sent())) {
            if (failure.get() != null) {
                throw new IllegalStateException(
                        "Debezium failed before " + description, failure.get());
            }
            if (stopped) {
                throw new IllegalStateException("Debezium stopped before " + description);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "no "
                                + description
                                + " within "
                                + timeout.toSeconds()
                                + " s; sent "
                                + sent());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /** Stops the engine (its replication slot stays), waits for it, and closes the producer. */
    @Override
    public void close() throws Exception {
        try {
            engine.close();
            executor.shutdown();
            if (!executor.awaitTermination(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the Debezium engine did not stop within 60 s");
            }
        } finally {
            producer.close(Duration.ofSeconds(30));
        }
    }
}

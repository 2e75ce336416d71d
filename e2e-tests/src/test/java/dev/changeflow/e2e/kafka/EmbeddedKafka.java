package dev.changeflow.e2e.kafka;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A real Apache Kafka broker in the test JVM: one combined broker + controller node in KRaft mode
 * ({@code kafka_2.13}, the same version as the clients), both listeners on {@code 127.0.0.1} with
 * free ports, log directories in a temporary folder removed on close. Kafka's {@link Exit}
 * procedures are replaced while it runs, so a broker error throws instead of ending the JVM.
 *
 * <p>Use as a JUnit 5 extension, started once per test class:
 *
 * <pre>{@code
 * @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();
 * ... KAFKA.bootstrapServers() ... KAFKA.createTopic("t", 2) ... KAFKA.producer() ...
 * }</pre>
 *
 * or as an {@link AutoCloseable} ({@link #start()} / {@link #close()}). Ready in about 3 s, with
 * the group coordinator up ({@code __consumer_offsets} created). Topics are not created
 * automatically; internal topics use replication factor 1 and one partition.
 */
public final class EmbeddedKafka implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    private Path dir;
    private KafkaRaftServer server;
    private int brokerPort;
    private Properties config;

    /**
     * Starts the broker (formats fresh storage first) and waits until it answers. @throws
     * IllegalStateException when it cannot start
     */
    public EmbeddedKafka start() {
        if (server != null) {
            return this;
        }
        Exit.setExitProcedure(
                (code, message) -> {
                    throw new IllegalStateException("Kafka called exit(" + code + "): " + message);
                });
        Exit.setHaltProcedure(
                (code, message) -> {
                    throw new IllegalStateException("Kafka called halt(" + code + "): " + message);
                });
        try {
            dir = Files.createTempDirectory("changeflow-kafka-");
            IllegalStateException last = null;
            for (int attempt = 0; attempt < 5 && server == null; attempt++) {
                try {
                    startOnce();
                } catch (RuntimeException e) {
                    // a port taken between choosing and binding it: try other ports
                    last = new IllegalStateException("embedded Kafka did not start", e);
                    stopQuietly();
                }
            }
            if (server == null) {
                throw last;
            }
            awaitReady();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void startOnce() throws IOException {
        brokerPort = freePort();
        int controllerPort = freePort();
        Path logs = Files.createTempDirectory(dir, "logs-");
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        p.put(
                "listeners",
                "PLAINTEXT://127.0.0.1:"
                        + brokerPort
                        + ",CONTROLLER://127.0.0.1:"
                        + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("log.dirs", logs.toString());
        p.put("num.partitions", "1");
        p.put("auto.create.topics.enable", "false");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("log.flush.interval.messages", "9223372036854775807");
        Path props = dir.resolve("server-" + brokerPort + ".properties");
        try (var out = Files.newBufferedWriter(props)) {
            p.store(out, "changeflow embedded Kafka");
        }
        ByteArrayOutputStream formatOut = new ByteArrayOutputStream();
        int rc =
                StorageTool.execute(
                        new String[] {
                            "format",
                            "-t",
                            Uuid.randomUuid().toString(),
                            "-c",
                            props.toString(),
                            "--ignore-formatted"
                        },
                        new PrintStream(formatOut, true, StandardCharsets.UTF_8));
        if (rc != 0) {
            throw new IllegalStateException(
                    "kafka-storage format failed ("
                            + rc
                            + "): "
                            + formatOut.toString(StandardCharsets.UTF_8));
        }
        config = p;
        KafkaRaftServer s = new KafkaRaftServer(new KafkaConfig(p, false), Time.SYSTEM);
        server = s;
        s.startup();
    }

    /**
     * Stops the broker and starts it again on the same ports with the same logs (topics, records
     * and committed offsets survive), as a broker restart in production; waits until it answers.
     * The bind is retried for up to 60 s: the old listener's port can linger in TIME_WAIT.
     *
     * @throws IllegalStateException when it does not come back within 60 s
     */
    public void restart() {
        if (server == null) {
            throw new IllegalStateException("the embedded Kafka broker is not running");
        }
        stopQuietly();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server == null) {
            try {
                KafkaRaftServer s =
                        new KafkaRaftServer(new KafkaConfig(config, false), Time.SYSTEM);
                server = s;
                s.startup();
            } catch (RuntimeException e) {
                stopQuietly();
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "embedded Kafka did not restart on port " + brokerPort + " within 60 s",
                            e);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
        awaitReady();
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Admin admin = admin()) {
            while (true) {
                try {
                    admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                    // finding a group coordinator creates __consumer_offsets now, so the first
                    // offset commit of a test does not fail with COORDINATOR_NOT_AVAILABLE
                    admin.listConsumerGroupOffsets("embedded-kafka-warm-up")
                            .partitionsToOffsetAndMetadata()
                            .get(30, TimeUnit.SECONDS);
                    return;
                } catch (Exception e) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                "embedded Kafka did not answer within 60 s", e);
                    }
                }
            }
        }
    }

    /** {@code 127.0.0.1:<port>}. */
    public String bootstrapServers() {
        if (server == null) {
            throw new IllegalStateException("the embedded Kafka broker is not running");
        }
        return "127.0.0.1:" + brokerPort;
    }

    /** A new admin client on this broker (close it). */
    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return Admin.create(p);
    }

    /** A new idempotent producer of byte keys and values ({@code acks=all}; close it). */
    public KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(256 * 1024));
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * Creates topics with {@code partitions} partitions each (replication factor 1) and waits until
     * the broker leads every partition ({@link #served}): the controller answers the creation
     * before the broker has applied it, and an idempotent producer that sends in between gets
     * "invalid metadata" errors, after which the broker refused every later batch with {@code
     * OutOfOrderSequenceException} (seen in the end-to-end benchmark at R = 50).
     *
     * @throws IllegalStateException when the topics cannot be created or are not served within 60 s
     */
    public void createTopics(int partitions, List<String> topics) {
        try (Admin admin = admin()) {
            admin.createTopics(
                            topics.stream()
                                    .map(t -> new NewTopic(t, partitions, (short) 1))
                                    .collect(Collectors.toList()))
                    .all()
                    .get(60, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!served(admin, topics, partitions)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topics not served after 60 s: " + topics);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot create topics " + topics, e);
        }
    }

    /**
     * Whether the broker leads every partition of the topics: a ListOffsets request, which only a
     * partition's leader answers (describing the topics is not enough: the broker's metadata names
     * the leader before its replica manager has become it, and a produce request in between gets
     * NOT_LEADER_OR_FOLLOWER).
     */
    private static boolean served(Admin admin, List<String> topics, int partitions) {
        Map<TopicPartition, OffsetSpec> all = new HashMap<>();
        for (String t : topics) {
            for (int p = 0; p < partitions; p++) {
                all.put(new TopicPartition(t, p), OffsetSpec.latest());
            }
        }
        try {
            admin.listOffsets(all).all().get(10, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            // not led by the broker yet
            return false;
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    /** Stops the broker, deletes its folder and restores Kafka's exit procedures. */
    @Override
    public void close() {
        stopQuietly();
        Exit.resetExitProcedure();
        Exit.resetHaltProcedure();
        if (dir != null) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            dir = null;
        }
    }

    private void stopQuietly() {
        if (server != null) {
            try {
                server.shutdown();
                server.awaitShutdown();
            } catch (RuntimeException ignored) {
                // a broker that failed half-way through startup
            }
            server = null;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }
}

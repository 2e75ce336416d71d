package dev.changeflow.jobs.ingest;

import dev.changeflow.sources.kafka.KafkaInput;

import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The launcher of a Kafka run refuses bootstrap servers it cannot reach with {@code
 * SOURCE_NOT_FOUND} (README "Exit codes": bad input), naming the servers, the topics, the consumer
 * group the job would use and how long it waited (issue #13), instead of a raw {@code
 * IllegalStateException} naming {@code group null}.
 */
class KafkaOffsetsTest {

    private static KafkaInput input(String bootstrap) {
        KafkaInput k = new KafkaInput();
        k.bootstrapServers = bootstrap;
        k.topics = List.of("pg.public.orders");
        return k.validate();
    }

    @Test
    void noBrokerAnsweringIsSourceNotFoundNamingServersGroupAndTheWait() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        KafkaInput k = input("127.0.0.1:" + port);
        long start = System.nanoTime();
        assertThatThrownBy(() -> KafkaOffsets.fetch(k, "changeflow-orders", Duration.ofSeconds(2)))
                .isInstanceOf(KafkaUnreachableException.class)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "SOURCE_NOT_FOUND: kafka: no broker of bootstrap servers 127.0.0.1:"
                                + port
                                + " answered within 2 s (topics [pg.public.orders], consumer group"
                                + " changeflow-orders): check the bootstrap servers and that the"
                                + " brokers run");
        // bounded: the 2 s wait, not Kafka's default minute
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void bootstrapServersThatDoNotResolveAreSourceNotFoundAtOnce() {
        KafkaInput k = input("no-such-broker.invalid:9092");
        assertThatThrownBy(() -> KafkaOffsets.fetch(k, "changeflow-ingest", Duration.ofSeconds(2)))
                .isInstanceOf(KafkaUnreachableException.class)
                .hasMessage(
                        "SOURCE_NOT_FOUND: kafka: bootstrap servers no-such-broker.invalid:9092"
                                + " cannot be resolved (No resolvable bootstrap urls given in"
                                + " bootstrap.servers) (topics [pg.public.orders], consumer group"
                                + " changeflow-ingest): check the bootstrap servers");
    }
}

package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.changes.ChangeRecordException;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bad input over Kafka (semantics.md A5), end to end on the embedded broker: every reason code a
 * Kafka record can produce lands in {@code shop.changeflow_quarantine} with its topic, partition,
 * offset and exact bytes while the job keeps running and the good records around it apply; {@code
 * on-invalid-record = fail} stops the job naming reason, topic, partition and offset; {@code
 * on-schema-change = add-columns} evolves the tables and carries on, resuming its AUTO CDC state.
 */
class KafkaBadInputITCase {
    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();

    @TempDir Path tmp;

    static String flows(String name, String onInvalid, String onSchemaChange) {
        return String.join(
                "\n",
                "name: " + name,
                "namespace: shop",
                "checkpoint-interval: 1s",
                "max-record-bytes: 4096",
                // two readers: the bad records of the partitions land in both
                "kafka-readers: 2",
                "flows:",
                "  - table: items",
                "    keys: [id]",
                "    schema: 'id INT, region STRING, v INT'",
                "    on-schema-change: " + onSchemaChange,
                "    on-invalid-record: " + onInvalid);
    }

    static String ev(String op, String after, String source) {
        return "{\"before\":null,\"after\":"
                + after
                + ",\"source\":"
                + source
                + ",\"op\":\""
                + op
                + "\",\"ts_ms\":1}";
    }

    static String src(long lsn) {
        return "{\"connector\":\"postgresql\",\"schema\":\"shop\",\"table\":\"items\",\"lsn\":"
                + lsn
                + "}";
    }

    static String row(int id, String region, int v) {
        return "{\"id\":" + id + ",\"region\":\"" + region + "\",\"v\":" + v + "}";
    }

    static byte[] key(int id) {
        return ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
    }

    static ProducerRecord<byte[], byte[]> rec(
            String topic, @Nullable byte[] key, @Nullable String value) {
        return new ProducerRecord<>(
                topic, 0, key, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everyKindOfBadRecordIsQuarantinedWithTopicPartitionOffsetAndTheGoodOnesApply()
            throws Exception {
        String items = "bad.shop.items";
        String other = "bad.shop.other";
        KAFKA.createTopics(1, List.of(items, other));
        char[] big = new char[5000];
        Arrays.fill(big, 'x');
        List<ProducerRecord<byte[], byte[]>> records =
                List.of(
                        rec(items, key(10), ev("c", row(10, "a", 1), src(100))), // 0 good
                        rec(items, null, "plain text, not json"), // 1 NOT_JSON
                        rec(
                                items,
                                null,
                                "{\"before\":null,\"after\":{\"id\":1"), // 2 MALFORMED_JSON
                        rec(
                                items,
                                key(2),
                                ev(
                                        "c",
                                        "{\"id\":2,\"region\":\"a\",\"v\":\"abc\"}",
                                        src(101))), // 3 TYPE_MISMATCH
                        rec(
                                items,
                                null,
                                ev(
                                        "c",
                                        "{\"region\":\"a\",\"v\":3}",
                                        src(102))), // 4 MISSING_COLUMN
                        rec(
                                items,
                                null,
                                ev(
                                        "c",
                                        "{\"id\":null,\"region\":\"a\",\"v\":4}",
                                        src(103))), // 5 NULL_KEY
                        rec(
                                items,
                                key(5),
                                ev(
                                        "c",
                                        row(5, "a", 5),
                                        "{\"schema\":\"shop\",\"table\":\"items\"}")), // 6
                        // NULL_SEQUENCE
                        rec(items, key(6), ev("x", row(6, "a", 6), src(104))), // 7 UNKNOWN_OP
                        rec(items, key(7), ev("c", "null", src(105))), // 8 UNKNOWN_OP (null after)
                        rec(
                                items,
                                key(8),
                                ev(
                                        "c",
                                        "{\"id\":8,\"region\":\"a\",\"v\":8,\"w\":1}",
                                        src(106))), // 9 SCHEMA_CHANGED
                        rec(items, null, ev("t", "null", src(107))), // 10 TRUNCATE_NOT_ENABLED
                        rec(
                                items,
                                key(9),
                                ev(
                                        "c",
                                        "{\"id\":9,\"region\":\"" + new String(big) + "\",\"v\":9}",
                                        src(108))), // 11 RECORD_TOO_LARGE
                        rec(items, key(10), null), // 12 tombstone: skipped
                        rec(
                                items,
                                null,
                                "{\"before\":null,\"after\":null,\"source\":"
                                        + src(109)
                                        + ",\"op\":\"d\"}"), // 13 NULL_KEY (no before, no key)
                        rec(items, key(11), ev("c", row(11, "b", 2), src(110))), // 14 good
                        rec(items, key(10), ev("u", row(10, "c", 3), src(111))), // 15 good update
                        rec(items, key(12), ev("c", row(12, "d", 4), src(112))), // 16 good
                        rec(
                                items,
                                key(12),
                                "{\"before\":null,\"after\":null,\"source\":"
                                        + src(113)
                                        + ",\"op\":\"d\"}"), // 17 delete by record key
                        rec(
                                other,
                                null,
                                "{\"before\":null,\"after\":{\"id\":7},\"source\":{\"schema\":\"shop\",\"table\":\"other\",\"lsn\":1},\"op\":\"c\"}")); // UNKNOWN_TOPIC
        produce(records);

        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan =
                IngestPlanner.plan(
                        FlowsFile.parse(
                                flows("kafka-bad", "quarantine", "quarantine"), "flows.yaml"),
                        List.of());
        KafkaInput kafka = input("bad\\.shop\\..*", "it-kafka-bad");
        LocalIngest.Summary summary = run(plan, kafka, warehouse);

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        List<String> quarantine = new ArrayList<>();
        for (Record r :
                TableRows.read(
                        cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            String source = r.getField("source").toString();
            long offset = (Long) r.getField("offset");
            String reason = r.getField("reason").toString();
            assertThat(r.getField("detail").toString()).as("detail of " + reason).isNotBlank();
            assertThat(r.getField("quarantined_at")).isNotNull();
            ProducerRecord<byte[], byte[]> produced =
                    records.stream()
                            .filter(p -> p.topic().equals(source))
                            .collect(Collectors.toList())
                            .get((int) offset);
            assertThat(bytes((ByteBuffer) r.getField("raw")))
                    .as("raw of " + source + "@" + offset)
                    .isEqualTo(produced.value());
            quarantine.add(
                    source
                            + ":"
                            + r.getField("partition")
                            + ":"
                            + offset
                            + ":"
                            + reason
                            + ":"
                            + r.getField("flow"));
        }
        assertThat(quarantine)
                .containsExactlyInAnyOrder(
                        items + ":0:1:NOT_JSON:items",
                        items + ":0:2:MALFORMED_JSON:items",
                        items + ":0:3:TYPE_MISMATCH:items",
                        items + ":0:4:MISSING_COLUMN:items",
                        items + ":0:5:NULL_KEY:items",
                        items + ":0:6:NULL_SEQUENCE:items",
                        items + ":0:7:UNKNOWN_OP:items",
                        items + ":0:8:UNKNOWN_OP:items",
                        items + ":0:9:SCHEMA_CHANGED:items",
                        items + ":0:10:TRUNCATE_NOT_ENABLED:items",
                        items + ":0:11:RECORD_TOO_LARGE:items",
                        items + ":0:13:NULL_KEY:items",
                        other + ":0:0:UNKNOWN_TOPIC:null");
        assertThat(summary.records).isEqualTo(records.size());
        assertThat(summary.quarantined).isEqualTo(13);
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items"))))
                .containsExactly("10,c,3", "11,b,2");
    }

    @Test
    void onInvalidRecordFailStopsTheJobNamingReasonTopicPartitionAndOffset() throws Exception {
        String items = "fail.shop.items";
        KAFKA.createTopics(1, List.of(items));
        produce(
                List.of(
                        rec(items, key(1), ev("c", row(1, "a", 1), src(100))),
                        rec(items, null, "plain text, not json")));
        IngestPlan plan =
                IngestPlanner.plan(
                        FlowsFile.parse(flows("kafka-fail", "fail", "fail"), "flows.yaml"),
                        List.of());
        KafkaInput kafka = input(null, "it-kafka-fail");
        kafka.topics = List.of(items);
        assertThatThrownBy(() -> run(plan, kafka, tmp.resolve("warehouse")))
                .satisfies(
                        e -> {
                            Optional<ChangeRecordException> c =
                                    ExceptionUtils.findThrowable(e, ChangeRecordException.class);
                            assertThat(c)
                                    .as("a ChangeRecordException in %s", e.toString())
                                    .isPresent();
                            assertThat(c.get().code()).isEqualTo(QuarantineReason.NOT_JSON);
                            assertThat(c.get().source()).isEqualTo(items);
                            assertThat(c.get().partition()).isEqualTo(0);
                            assertThat(c.get().offset()).isEqualTo(1L);
                            assertThat(c.get())
                                    .hasMessage(
                                            "NOT_JSON: record does not start like JSON: first byte 0x70 'p'"
                                                    + " (flow 'items', source fail.shop.items, partition 0, offset 1)");
                        });
    }

    @Test
    void addColumnsEvolvesTheTablesAndResumesWithTheWiderRows() throws Exception {
        String items = "evolve.shop.items";
        KAFKA.createTopics(1, List.of(items));
        String flows =
                String.join(
                        "\n",
                        "name: kafka-evolve",
                        "namespace: shop",
                        "checkpoint-interval: 1s",
                        "flows:",
                        "  - table: items",
                        "    keys: [id]",
                        "    schema: 'id INT, region STRING, v INT'",
                        "    on-schema-change: add-columns",
                        "  - table: items",
                        "    target: items_history",
                        "    scd-type: 2",
                        "    keys: [id]",
                        "    schema: 'id INT, region STRING, v INT'",
                        "    on-schema-change: add-columns");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of());
        KafkaInput kafka = input(null, "it-kafka-evolve");
        kafka.topics = List.of(items);
        Path warehouse = tmp.resolve("warehouse");

        produce(
                List.of(
                        rec(items, key(1), ev("c", row(1, "a", 1), src(100))),
                        rec(items, key(2), ev("c", row(2, "b", 2), src(101)))));
        LocalIngest.Summary first = run(plan, kafka, warehouse);
        assertThat(first.addedColumns).isEmpty();

        // a new column w: the job stops at offset 2, the tables get w, and the run resumes from
        // the first run's savepoint, whose state rows have no w
        produce(
                List.of(
                        rec(
                                items,
                                key(3),
                                ev(
                                        "c",
                                        "{\"id\":3,\"region\":\"c\",\"v\":3,\"w\":\"x\"}",
                                        src(102))),
                        rec(
                                items,
                                key(2),
                                ev(
                                        "u",
                                        "{\"id\":2,\"region\":\"b\",\"v\":20,\"w\":\"y\"}",
                                        src(103))),
                        // Debezium writes every column of the after image from now on, nulls
                        // included
                        rec(
                                items,
                                key(1),
                                ev(
                                        "u",
                                        "{\"id\":1,\"region\":\"a\",\"v\":10,\"w\":null}",
                                        src(104)))));
        LocalIngest.Summary second = run(plan, kafka, warehouse);
        assertThat(second.addedColumns)
                .containsExactly("shop.items: + w STRING", "shop.items_history: + w STRING");
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(
                        TableRows.read(
                                cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine"))))
                .isEmpty();
        assertThat(second.records).isEqualTo(3);
        assertThat(second.quarantined).isZero();
        Table current = cat.loadTable(TableIdentifier.of("shop", "items"));
        Table history = cat.loadTable(TableIdentifier.of("shop", "items_history"));
        assertThat(current.schema().columns().stream().map(Types.NestedField::name))
                .containsExactly("id", "region", "v", "w");
        assertThat(current.schema().findField("w").isOptional()).isTrue();
        assertThat(current.schema().findField("w").type()).isEqualTo(Types.StringType.get());
        assertThat(history.schema().columns().stream().map(Types.NestedField::name))
                .containsExactly("id", "region", "v", "w", "__START_AT", "__END_AT");
        assertThat(TableRows.toCsvLines(current)).containsExactly("1,a,10,", "2,b,20,y", "3,c,3,x");
        assertThat(TableRows.toCsvLines(history))
                .containsExactly(
                        "1,a,1,,100,104",
                        "1,a,10,,104,",
                        "2,b,2,,101,103",
                        "2,b,20,y,103,",
                        "3,c,3,x,102,");

        // the next run plans with w from the start: no stop
        produce(
                List.of(
                        rec(
                                items,
                                key(4),
                                ev(
                                        "c",
                                        "{\"id\":4,\"region\":\"d\",\"v\":4,\"w\":\"z\"}",
                                        src(105)))));
        LocalIngest.Summary third = run(plan, kafka, warehouse);
        assertThat(third.addedColumns).isEmpty();
        assertThat(third.records).isEqualTo(1);
        current.refresh();
        assertThat(TableRows.toCsvLines(current))
                .containsExactly("1,a,10,", "2,b,20,y", "3,c,3,x", "4,d,4,z");
    }

    static KafkaInput input(@Nullable String pattern, String group) {
        KafkaInput kafka = new KafkaInput();
        kafka.bootstrapServers = KAFKA.bootstrapServers();
        kafka.topicPattern = pattern;
        kafka.groupId = group;
        kafka.startingOffsets = StartingOffsets.earliest();
        return kafka;
    }

    static void produce(List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
            for (ProducerRecord<byte[], byte[]> r : records) {
                producer.send(r).get();
            }
        }
    }

    static LocalIngest.Summary run(IngestPlan plan, KafkaInput kafka, Path warehouse)
            throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        LocalIngest.Options o = KeysCasesITCase.quiet(warehouse);
        o.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        try {
            return LocalIngest.runKafka(plan, kafka, null, o);
        } finally {
            System.out.print(buf.toString(StandardCharsets.UTF_8));
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}

package dev.changeflow.sources.kafka;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Turns every Kafka record into one {@link KafkaChangeRecord} without looking at its bytes
 * (decoding and its errors belong to {@link KafkaDecodeFunction}). Tombstones are passed on too, so
 * they are counted; the decoder skips them. Never throws.
 */
@Internal
public final class KafkaChangeRecordDeserializationSchema
        implements KafkaRecordDeserializationSchema<KafkaChangeRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(
            ConsumerRecord<byte[], byte[]> record, Collector<KafkaChangeRecord> out) {
        out.collect(
                new KafkaChangeRecord(
                        record.topic(),
                        record.partition(),
                        record.offset(),
                        record.timestamp(),
                        record.key(),
                        record.value()));
    }

    @Override
    public TypeInformation<KafkaChangeRecord> getProducedType() {
        return TypeInformation.of(KafkaChangeRecord.class);
    }
}

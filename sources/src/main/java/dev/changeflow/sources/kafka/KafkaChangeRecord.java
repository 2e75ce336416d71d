package dev.changeflow.sources.kafka;

import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.util.Arrays;
import java.util.Objects;

/**
 * One Kafka record as read by {@link KafkaChangeSource} (a Flink POJO): where it came from and its
 * raw key and value bytes. A tombstone has {@code value == null}; a record without a key has {@code
 * key == null}. Decoding happens later, in {@link KafkaDecodeFunction}, so a bad record never fails
 * the reader and its quarantine row can name topic, partition and offset.
 */
@PublicEvolving
public final class KafkaChangeRecord {
    /** The record's topic. */
    public String topic;

    /** The record's partition. */
    public int partition;

    /** The record's offset in its partition. */
    public long offset;

    /** The record's Kafka timestamp, epoch ms (-1 when the broker gave none). */
    public long timestamp;

    /** The key's bytes, or null. */
    @Nullable public byte[] key;

    /** The value's bytes; null for a tombstone. */
    @Nullable public byte[] value;

    /** For Flink's POJO serializer. */
    public KafkaChangeRecord() {}

    public KafkaChangeRecord(
            String topic,
            int partition,
            long offset,
            long timestamp,
            @Nullable byte[] key,
            @Nullable byte[] value) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.timestamp = timestamp;
        this.key = key;
        this.value = value;
    }

    public String getTopic() {
        return topic;
    }

    public void setTopic(String topic) {
        this.topic = topic;
    }

    public int getPartition() {
        return partition;
    }

    public void setPartition(int partition) {
        this.partition = partition;
    }

    public long getOffset() {
        return offset;
    }

    public void setOffset(long offset) {
        this.offset = offset;
    }

    public long getTimestamp() {
        return timestamp;
    }

    public void setTimestamp(long timestamp) {
        this.timestamp = timestamp;
    }

    @Nullable
    public byte[] getKey() {
        return key;
    }

    public void setKey(@Nullable byte[] key) {
        this.key = key;
    }

    @Nullable
    public byte[] getValue() {
        return value;
    }

    public void setValue(@Nullable byte[] value) {
        this.value = value;
    }

    /** Whether this is a tombstone (null value). */
    public boolean tombstone() {
        return value == null;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KafkaChangeRecord)) {
            return false;
        }
        KafkaChangeRecord r = (KafkaChangeRecord) o;
        return partition == r.partition
                && offset == r.offset
                && timestamp == r.timestamp
                && Objects.equals(topic, r.topic)
                && Arrays.equals(key, r.key)
                && Arrays.equals(value, r.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, offset);
    }

    @Override
    public String toString() {
        return topic
                + "-"
                + partition
                + "@"
                + offset
                + (value == null ? " (tombstone)" : " (" + value.length + " bytes)");
    }
}

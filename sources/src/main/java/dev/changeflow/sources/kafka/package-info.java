/**
 * The Kafka input: {@link dev.changeflow.sources.kafka.KafkaChangeSource} (Flink's KafkaSource of
 * raw {@link dev.changeflow.sources.kafka.KafkaChangeRecord}s, configured by {@link
 * dev.changeflow.sources.kafka.KafkaInput}) and {@link
 * dev.changeflow.sources.kafka.KafkaDecodeFunction}, which decodes key and value into the same side
 * outputs as the file input.
 */
package dev.changeflow.sources.kafka;

/**
 * Change-record decoding (semantics.md A5): plain JSON lines and Debezium JSON, decoded by
 * changeflow's own streaming Jackson decoder ({@link
 * dev.changeflow.sources.changes.ChangeRecordDecoder}) into Flink {@link
 * org.apache.flink.table.data.RowData}, with malformed records routed to the quarantine table
 * ({@link dev.changeflow.operators.quarantine.QuarantineRecords}); schema sampling and inference
 * ({@link dev.changeflow.sources.changes.SchemaSampler}).
 *
 * <p>The decoder's stages, one class each: {@code RecordForm} (capture line, schema wrapper, the
 * record itself), one parser per format over {@code ChangeRecordParser} ({@code
 * DebeziumJsonRecordParser}, {@code JsonRecordParser}), {@code FlowRouter} (which flow a record
 * belongs to; also used by the sampler), {@code RowAssembler} (rows and their checks) and {@code
 * QuarantinePolicy} (quarantine or fail).
 */
package dev.changeflow.sources.changes;

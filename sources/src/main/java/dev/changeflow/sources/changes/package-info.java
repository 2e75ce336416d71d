/**
 * Change-record decoding (semantics.md A5): plain JSON lines and Debezium JSON, decoded by
 * changeflow's own streaming Jackson decoder ({@link dev.changeflow.sources.changes.ChangeRecordDecoder})
 * into Flink {@link org.apache.flink.table.data.RowData}, with malformed records routed to the
 * quarantine table ({@link dev.changeflow.operators.quarantine.QuarantineRecords}); schema sampling
 * and inference ({@link dev.changeflow.sources.changes.SchemaSampler}).
 */
package dev.changeflow.sources.changes;

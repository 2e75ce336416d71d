/**
 * Iceberg streaming tables: catalog settings, table creation and validation ({@link
 * dev.changeflow.sinks.iceberg.StreamingTables}), exactly-once changelog and append writes through
 * Iceberg's own Flink sink ({@link dev.changeflow.sinks.iceberg.StreamingTableSink}), and a reader
 * of live rows for the {@code show} command and tests ({@link
 * dev.changeflow.sinks.iceberg.TableRows}).
 */
package dev.changeflow.sinks.iceberg;

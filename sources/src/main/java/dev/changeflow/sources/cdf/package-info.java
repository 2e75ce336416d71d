/**
 * The change data feed over Iceberg tables (semantics.md F1–F8, design.md "Iceberg mapping of the
 * change feed").
 *
 * <p>This package holds the batch planner: {@link dev.changeflow.sources.cdf.TableChanges} reads a
 * version or timestamp range of any format v2/v3 Iceberg table as row-level changes, computed per
 * snapshot from the snapshot's added and removed data and delete files (automatic mode).
 */
package dev.changeflow.sources.cdf;

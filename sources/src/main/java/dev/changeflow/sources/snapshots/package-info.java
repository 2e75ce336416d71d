/**
 * Snapshot sources of AUTO CDC FROM SNAPSHOT (semantics.md A6), each emitting snapshot rows and end
 * markers ({@code dev.changeflow.operators.SnapshotVersions}) in version order: a folder of
 * snapshot files, one file per version ({@link dev.changeflow.sources.snapshots.SnapshotFiles}),
 * and the versions of an Iceberg table, one snapshot per sequence number ({@link
 * dev.changeflow.sources.snapshots.IcebergSnapshots}).
 */
package dev.changeflow.sources.snapshots;

/**
 * Snapshot sources of AUTO CDC FROM SNAPSHOT (semantics.md A6): a folder of snapshot files, one
 * file per version, read in version order as snapshot rows and end markers ({@code
 * dev.changeflow.operators.SnapshotVersions}).
 */
package dev.changeflow.sources.snapshots;

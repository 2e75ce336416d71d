/**
 * Retention of the change feed (semantics.md F7): the registry of change-feed consumers kept beside
 * a table's data, the throttled position updates a streaming reader makes after checkpoints, and
 * changeflow's snapshot expiry that keeps what live consumers still need.
 */
package dev.changeflow.sources.cdf.retention;

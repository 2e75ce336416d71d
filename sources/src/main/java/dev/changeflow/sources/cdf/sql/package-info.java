/**
 * Flink SQL over the change data feed: the {@code changeflow} catalog type (Iceberg's catalog plus
 * a {@code <table>$changes} table per Iceberg table), its bounded scan source and the {@code
 * table_changes(...)} rewrite (design.md "Interfaces", semantics.md F1–F5).
 */
package dev.changeflow.sources.cdf.sql;

/** The per-namespace quarantine table of records that could not be applied (semantics.md A5). */
package dev.changeflow.sinks.quarantine;

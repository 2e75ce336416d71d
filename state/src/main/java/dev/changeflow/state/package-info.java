/**
 * changeflow's per-key AUTO CDC state model (semantics.md A3, A4): the versioned binary layouts of
 * the keyed-state values ({@link dev.changeflow.state.Scd1RowValue}, {@link
 * dev.changeflow.state.SequenceValue}, {@link dev.changeflow.state.Scd2CurrentValue}, {@link
 * dev.changeflow.state.Scd2HistoryChunk}, and the v1 {@link dev.changeflow.state.Scd2HistoryEntry}
 * still read from older state), the row and sequence codecs they are built from, and the state
 * backend / TTL settings. Every value starts with its format version ({@link
 * dev.changeflow.state.StateFormat}); no Kryo or POJO serialization is used.
 */
package dev.changeflow.state;

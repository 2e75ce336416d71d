package dev.changeflow.operators;

import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.Hash128;
import dev.changeflow.state.Scd2CurrentValue;
import dev.changeflow.state.Scd2HistoryEntry;
import dev.changeflow.state.SequenceCodec;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one change record does to one key of an SCD type 2 streaming table (semantics.md A2, A4),
 * as plain logic over a small {@link State} interface.
 *
 * <p><b>Model.</b> The key's history is a set of entries keyed by sequence: one per applied
 * upsert (its projected row and the 128-bit hash of its tracked columns) and one per delete. The
 * target's versions are what applying the entries in sequence order gives: an upsert whose
 * tracked values differ from the open version's (or with no open version) opens a version at its
 * sequence and closes the open one there; an upsert with the same tracked values updates the open
 * version in place ({@code __START_AT} stays, the row becomes the upsert's row; identical rows emit
 * nothing); a delete closes the open version at its sequence and opens none (gaps allowed). A
 * version's row is the row of its last upsert; {@code __START_AT}/{@code __END_AT} are the
 * sequence values, typed as the sequence.
 *
 * <p><b>Order independence (A2).</b> Because every applied record stays an entry, the versions are a
 * function of the set of records, whatever order they arrive in: a late upsert inside a version
 * splits it (A[1,5) C[5,∞) + B@3 → A[1,3) B[3,5) C[5,∞)), and consecutive versions with identical
 * tracked values merge exactly as sorted application would; a late delete inside a version closes
 * it there and drops nothing else. In-order records (sequence above the key's highest) are applied
 * from the {@link Scd2CurrentValue} head alone; a late record, or a same-sequence replacement,
 * reads the key's entries, recomputes the versions and emits the difference ({@code -D} removed
 * versions, {@code -U}/{@code +U} changed ones, {@code +I} new ones).
 *
 * <p>Decision: entries are kept for every applied record, including no-op upserts (identical
 * values), because a later late record can turn such an upsert into a version boundary. History
 * state therefore grows with the number of applied records per key (not only versions); exact
 * duplicates (K7) add nothing. Entries are separate map values, never one growing list.
 *
 * <p>Decision: same key, same sequence (A2): a delete wins over an upsert; between upserts the
 * larger byte-wise encoding of the projected row wins; {@code duplicateSequence} counts it.
 *
 * <p>Decision: the SEQUENCE BY columns are not tracked (their change is {@code __START_AT}); an
 * upsert that changes only them (or only untracked columns) updates the open version in place.
 *
 * <p>Decision: IGNORE NULL UPDATES merges a record with the row of the entry just below it in
 * sequence order at the time it is applied; entries above a late record are not re-merged (such
 * flows are exempt from order independence, A2).
 *
 * <p>Not thread-safe; one instance per operator subtask.
 */
@Internal
public final class Scd2Logic {

    /** The keyed state of the current key (values are {@code dev.changeflow.state} layouts). */
    public interface State {
        /** The {@link Scd2CurrentValue} head of the key, or null for a never-seen key. */
        @Nullable
        byte[] current();

        void setCurrent(byte[] value);

        /** Adds or replaces the {@link Scd2HistoryEntry} at {@code sequenceKey} ({@link SequenceCodec#toMapKey}). */
        void putEntry(String sequenceKey, byte[] value);

        /** All history entries of the key, in any order. */
        Iterable<Map.Entry<String, byte[]>> entries();
    }

    private final ApplyCodecs codecs;
    private final AutoCdcMetrics metrics;
    private final int arity;
    private final ByteWriter seq = new ByteWriter(32);
    private final ByteWriter row = new ByteWriter();
    private final ByteWriter hash = new ByteWriter(Hash128.BYTES);
    private final ByteWriter value = new ByteWriter();
    private final Scd2CurrentValue head = new Scd2CurrentValue();

    public Scd2Logic(AutoCdcSpec spec, AutoCdcMetrics metrics) {
        if (spec.scdType() != ScdType.TYPE_2) {
            throw new IllegalArgumentException("Scd2Logic needs an SCD TYPE 2 flow, got " + spec);
        }
        this.codecs = new ApplyCodecs(spec);
        this.metrics = metrics;
        this.arity = codecs.projection.length;
    }

    /** Applies one change record (upsert, or delete for {@code RowKind.DELETE}) to the current key. */
    public void apply(RowData record, State state, ChangeOutput out) {
        boolean delete = record.getRowKind() == RowKind.DELETE;
        seq.reset();
        codecs.encodeSequence(record, seq);
        byte[] current = state.current();
        int cmp = 1;
        if (current != null) {
            head.wrap(current);
            cmp = Arrays.compareUnsigned(
                    seq.buffer(), 0, seq.size(),
                    current, head.maxOffset(), head.maxOffset() + head.maxLength());
        }
        if (cmp > 0) {
            applyInOrder(record, delete, current != null && head.live(), state, out);
            return;
        }
        if (cmp == 0 && !codecs.ignoreNulls()) {
            // the key's last entry is at this sequence: settle the common duplicate cases from the head
            if (!head.live()) {
                if (delete) {
                    metrics.noop();
                } else {
                    metrics.duplicateSequence(); // a delete wins over an upsert (A2)
                }
                return;
            }
            if (!delete) {
                buildUpsert(record, null);
                int rowCmp = Arrays.compareUnsigned(
                        row.buffer(), 0, row.size(), current, head.rowOffset(), current.length);
                if (rowCmp == 0) {
                    metrics.noop(); // exact duplicate (K7)
                    return;
                }
                if (rowCmp < 0) {
                    metrics.duplicateSequence();
                    return;
                }
            }
        }
        if (cmp < 0) {
            metrics.late();
        }
        applyFromHistory(record, delete, seq.toByteArray(), state, out);
    }

    // ---------------------------------------------------------------------------------- in order

    private void applyInOrder(RowData record, boolean delete, boolean live, State state, ChangeOutput out) {
        String key = SequenceCodec.toMapKey(seq.buffer(), 0, seq.size());
        byte[] current = live ? head.bytes() : null;
        if (delete) {
            if (live) {
                GenericRowData previous = decodeCurrentRow(current);
                Object start = codecs.sequenceCodec.decode(current, head.startOffset(), head.startLength());
                out.emit(versionRow(RowKind.UPDATE_BEFORE, previous, start, null));
                out.emit(versionRow(RowKind.UPDATE_AFTER, previous, start, decodeSeq()));
            }
            state.putEntry(key, Scd2HistoryEntry.delete());
            value.reset();
            Scd2CurrentValue.writeDeleted(value, seq.buffer(), 0, seq.size());
            state.setCurrent(value.toByteArray());
            metrics.applied();
            metrics.tombstone();
            return;
        }
        GenericRowData previous = live && codecs.ignoreNulls() ? decodeCurrentRow(current) : null;
        buildUpsert(record, previous);
        state.putEntry(key, upsertEntry());
        if (!live) {
            out.emit(versionRow(RowKind.INSERT, newRow(), decodeSeq(), null));
            writeLiveHead(seq.buffer(), 0, seq.size(), state);
            metrics.applied();
            return;
        }
        boolean sameTracked = Arrays.equals(
                hash.buffer(), 0, Hash128.BYTES, current, head.hashOffset(), head.hashOffset() + Hash128.BYTES);
        Object start = codecs.sequenceCodec.decode(current, head.startOffset(), head.startLength());
        if (sameTracked) {
            boolean sameRow = Arrays.equals(
                    row.buffer(), 0, row.size(), current, head.rowOffset(), current.length);
            if (sameRow) {
                metrics.noop();
            } else {
                previous = previous != null ? previous : decodeCurrentRow(current);
                out.emit(versionRow(RowKind.UPDATE_BEFORE, previous, start, null));
                out.emit(versionRow(RowKind.UPDATE_AFTER, newRow(), start, null));
                metrics.applied();
            }
            byte[] startBytes = Arrays.copyOfRange(current, head.startOffset(), head.startOffset() + head.startLength());
            writeLiveHead(startBytes, 0, startBytes.length, state);
            return;
        }
        Object at = decodeSeq();
        previous = previous != null ? previous : decodeCurrentRow(current);
        out.emit(versionRow(RowKind.UPDATE_BEFORE, previous, start, null));
        out.emit(versionRow(RowKind.UPDATE_AFTER, previous, start, at));
        out.emit(versionRow(RowKind.INSERT, newRow(), decodeSeq(), null));
        writeLiveHead(seq.buffer(), 0, seq.size(), state);
        metrics.applied();
    }

    private void writeLiveHead(byte[] start, int off, int len, State state) {
        value.reset();
        Scd2CurrentValue.writeLive(
                value, seq.buffer(), 0, seq.size(), start, off, len, hash.buffer(), 0, row.buffer(), 0, row.size());
        state.setCurrent(value.toByteArray());
    }

    // ---------------------------------------------------------------------------- from history

    /** One history entry in sequence order. */
    private static final class Entry {
        final byte[] seq;
        final byte[] value;
        final boolean delete;

        Entry(byte[] seq, byte[] value) {
            this.seq = seq;
            this.value = value;
            this.delete = value[1] == Scd2HistoryEntry.DELETE;
        }

        boolean sameTracked(Entry o) {
            return Arrays.equals(value, 2, 2 + Hash128.BYTES, o.value, 2, 2 + Hash128.BYTES);
        }

        int rowOffset() {
            return 2 + Hash128.BYTES;
        }
    }

    /** A derived version: entries [start .. last] of the sorted list, closed by entry {@code end} (-1: open). */
    private static final class Version {
        final int start;
        int last;
        int end = -1;

        Version(int start) {
            this.start = start;
            this.last = start;
        }
    }

    private void applyFromHistory(RowData record, boolean delete, byte[] sequence, State state, ChangeOutput out) {
        Scd2HistoryEntry check = new Scd2HistoryEntry();
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : state.entries()) {
            check.wrap(e.getValue()); // version check of every stored entry
            entries.add(new Entry(SequenceCodec.fromMapKey(e.getKey()), e.getValue()));
        }
        entries.sort((a, b) -> Arrays.compareUnsigned(a.seq, b.seq));
        int idx = search(entries, sequence);
        Entry existing = idx >= 0 ? entries.get(idx) : null;
        int insertAt = idx >= 0 ? idx : -idx - 1;
        Entry incoming;
        if (delete) {
            incoming = new Entry(sequence, Scd2HistoryEntry.delete());
        } else {
            GenericRowData below = null;
            if (codecs.ignoreNulls() && insertAt > 0 && !entries.get(insertAt - 1).delete) {
                Entry p = entries.get(insertAt - 1);
                below = codecs.decodeRow(p.value, p.rowOffset(), p.value.length - p.rowOffset());
            }
            buildUpsert(record, below);
            incoming = new Entry(sequence, upsertEntry());
        }
        if (existing != null) {
            if (Arrays.equals(existing.value, incoming.value)) {
                metrics.noop(); // exact duplicate (K7)
                return;
            }
            metrics.duplicateSequence();
            if (existing.delete) {
                return; // a delete wins (A2)
            }
            if (!incoming.delete
                    && Arrays.compareUnsigned(
                                    incoming.value, incoming.rowOffset(), incoming.value.length,
                                    existing.value, existing.rowOffset(), existing.value.length)
                            <= 0) {
                return; // the larger projected row wins (A2)
            }
        }
        List<Version> before = versions(entries);
        List<Entry> updated = new ArrayList<>(entries);
        if (existing != null) {
            updated.set(idx, incoming);
        } else {
            updated.add(insertAt, incoming);
        }
        List<Version> after = versions(updated);
        emitDifference(entries, before, updated, after, out);
        state.putEntry(SequenceCodec.toMapKey(sequence, 0, sequence.length), incoming.value);
        writeHead(updated, after, state);
        metrics.applied();
        if (delete) {
            metrics.tombstone();
        }
    }

    private static int search(List<Entry> entries, byte[] sequence) {
        int lo = 0;
        int hi = entries.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = Arrays.compareUnsigned(entries.get(mid).seq, sequence);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }

    private static List<Version> versions(List<Entry> entries) {
        List<Version> out = new ArrayList<>();
        Version open = null;
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (e.delete) {
                if (open != null) {
                    open.end = i;
                    out.add(open);
                    open = null;
                }
            } else if (open != null && entries.get(open.last).sameTracked(e)) {
                open.last = i;
            } else {
                if (open != null) {
                    open.end = i;
                    out.add(open);
                }
                open = new Version(i);
            }
        }
        if (open != null) {
            out.add(open);
        }
        return out;
    }

    private void emitDifference(
            List<Entry> oldEntries, List<Version> oldVersions, List<Entry> newEntries, List<Version> newVersions,
            ChangeOutput out) {
        Map<String, Version> oldByStart = new HashMap<>();
        for (Version v : oldVersions) {
            oldByStart.put(startKey(oldEntries, v), v);
        }
        Map<String, Version> newByStart = new HashMap<>();
        for (Version v : newVersions) {
            newByStart.put(startKey(newEntries, v), v);
        }
        for (Version v : oldVersions) {
            if (!newByStart.containsKey(startKey(oldEntries, v))) {
                out.emit(image(RowKind.DELETE, oldEntries, v));
            }
        }
        List<RowData> inserts = new ArrayList<>();
        for (Version v : newVersions) {
            Version o = oldByStart.get(startKey(newEntries, v));
            if (o == null) {
                inserts.add(image(RowKind.INSERT, newEntries, v));
            } else if (!sameImage(oldEntries, o, newEntries, v)) {
                out.emit(image(RowKind.UPDATE_BEFORE, oldEntries, o));
                out.emit(image(RowKind.UPDATE_AFTER, newEntries, v));
            }
        }
        for (RowData r : inserts) {
            out.emit(r);
        }
    }

    private static String startKey(List<Entry> entries, Version v) {
        byte[] s = entries.get(v.start).seq;
        return SequenceCodec.toMapKey(s, 0, s.length);
    }

    private static boolean sameImage(List<Entry> oe, Version o, List<Entry> ne, Version n) {
        if ((o.end < 0) != (n.end < 0)) {
            return false;
        }
        if (o.end >= 0 && !Arrays.equals(oe.get(o.end).seq, ne.get(n.end).seq)) {
            return false;
        }
        Entry a = oe.get(o.last);
        Entry b = ne.get(n.last);
        return Arrays.equals(a.value, a.rowOffset(), a.value.length, b.value, b.rowOffset(), b.value.length);
    }

    private RowData image(RowKind kind, List<Entry> entries, Version v) {
        Entry last = entries.get(v.last);
        GenericRowData r = codecs.decodeRow(last.value, last.rowOffset(), last.value.length - last.rowOffset());
        byte[] start = entries.get(v.start).seq;
        Object end = null;
        if (v.end >= 0) {
            end = codecs.sequenceCodec.decode(entries.get(v.end).seq);
        }
        return versionRow(kind, r, codecs.sequenceCodec.decode(start), end);
    }

    private void writeHead(List<Entry> entries, List<Version> versions, State state) {
        Entry last = entries.get(entries.size() - 1);
        value.reset();
        if (last.delete) {
            Scd2CurrentValue.writeDeleted(value, last.seq, 0, last.seq.length);
        } else {
            Version open = versions.get(versions.size() - 1);
            byte[] start = entries.get(open.start).seq;
            Scd2CurrentValue.writeLive(
                    value,
                    last.seq, 0, last.seq.length,
                    start, 0, start.length,
                    last.value, 2,
                    last.value, last.rowOffset(), last.value.length - last.rowOffset());
        }
        state.setCurrent(value.toByteArray());
    }

    // ---------------------------------------------------------------------------------- helpers

    /** Fills {@link #row} and {@link #hash} for an upsert, merged with {@code below} under IGNORE NULL UPDATES. */
    private void buildUpsert(RowData record, @Nullable GenericRowData below) {
        row.reset();
        hash.reset();
        if (codecs.ignoreNulls() && below != null) {
            codecs.encodeRow(record, row);
            GenericRowData merged = codecs.decodeRow(row.buffer(), 0, row.size());
            codecs.mergeIgnoredNulls(merged, below);
            row.reset();
            codecs.rowCodec.encode(merged, row);
            codecs.hashTracked(merged, false, hash);
        } else {
            codecs.encodeRow(record, row);
            codecs.hashTracked(record, true, hash);
        }
    }

    private byte[] upsertEntry() {
        value.reset();
        Scd2HistoryEntry.writeUpsert(value, hash.buffer(), 0, row.buffer(), 0, row.size());
        return value.toByteArray();
    }

    private GenericRowData decodeCurrentRow(byte[] current) {
        return codecs.decodeRow(current, head.rowOffset(), head.rowLength());
    }

    private GenericRowData newRow() {
        return codecs.decodeRow(row.buffer(), 0, row.size());
    }

    private Object decodeSeq() {
        return codecs.sequenceCodec.decode(seq.buffer(), 0, seq.size());
    }

    private RowData versionRow(RowKind kind, RowData projected, Object start, @Nullable Object end) {
        GenericRowData r = new GenericRowData(kind, arity + 2);
        for (int i = 0; i < arity; i++) {
            r.setField(i, ((GenericRowData) projected).getField(i));
        }
        r.setField(arity, start);
        r.setField(arity + 1, end);
        return r;
    }
}

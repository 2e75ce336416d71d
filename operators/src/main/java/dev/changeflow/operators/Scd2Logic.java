package dev.changeflow.operators;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.Hash128;
import dev.changeflow.state.Scd2CurrentValue;
import dev.changeflow.state.Scd2HistoryChunk;
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
 * What change records do to one key of an SCD type 2 streaming table (semantics.md A2, A4), as
 * plain logic over a small {@link Store} interface: {@link #apply} takes one record into the key's
 * {@link KeyChanges}, {@link #flush} writes them to the store and emits the net changes of the
 * target rows since the previous flush. {@link #apply(RowData, Store, ChangeOutput)} does both for
 * one record (record-by-record output).
 *
 * <p><b>Model.</b> The key's history is a set of entries keyed by sequence: one per applied upsert
 * (its projected row and the 128-bit hash of its tracked columns) and one per delete. The target's
 * versions are what applying the entries in sequence order gives: an upsert whose tracked values
 * differ from the open version's (or with no open version) opens a version at its sequence and
 * closes the open one there; an upsert with the same tracked values updates the open version in
 * place ({@code __START_AT} stays, the row becomes the upsert's row; identical rows change
 * nothing); a delete closes the open version at its sequence and opens none (gaps allowed). A
 * version's row is the row of its last upsert; {@code __START_AT}/{@code __END_AT} are the sequence
 * values, typed as the sequence.
 *
 * <p><b>Order independence (A2).</b> Because every applied record stays an entry, the versions are
 * a function of the set of records, whatever order they arrive in: a late upsert inside a version
 * splits it (A[1,5) C[5,∞) + B@3 → A[1,3) B[3,5) C[5,∞)), and consecutive versions with identical
 * tracked values merge exactly as sorted application would; a late delete inside a version closes
 * it there and drops nothing else.
 *
 * <p><b>Two paths.</b> In-order records (sequence above the key's highest) are applied from the
 * {@link Scd2CurrentValue} head alone and appended to the key's pending {@link Scd2HistoryChunk};
 * the flush derives the net changes by folding the pending entries over the open version of the
 * last flush — no row is decoded per record. A late record, or a same-sequence replacement, loads
 * the key's stored history (every chunk, and v1 {@link Scd2HistoryEntry} values of state restored
 * from an older release); from then until the flush the key's records are applied to the sorted
 * entry list, and the flush emits the difference between the versions of the stored entries and of
 * the current ones ({@code -D} removed versions, {@code -U}/{@code +U} changed ones, {@code +I} new
 * ones).
 *
 * <p><b>Unavailable values (A4).</b> A column an upsert marks unavailable ({@link
 * AutoCdcSpec#UNAVAILABLE_COLUMNS}, the connector's placeholder for an unchanged PostgreSQL TOAST
 * value) takes its value from the entry just below the upsert in sequence order, like IGNORE NULL
 * UPDATES; when there is none, or it is a delete, the upsert goes to {@link
 * ChangeOutput#quarantine} with {@code UNAVAILABLE_VALUE} and adds no entry.
 *
 * <p><b>Net changes</b> per target row identity (KEYS, {@code __START_AT}) between two flushes:
 * nothing, {@code +I} new row, {@code -D} complete old row, or {@code -U} complete old row directly
 * followed by {@code +U} new row; the open version of the last flush first, then the others in
 * {@code __START_AT} order (in-order path) or removed, changed, new (history path).
 *
 * <p>Decision: entries are kept for every applied record, including no-op upserts (identical
 * values), because a later late record can turn such an upsert into a version boundary. History
 * state therefore grows with the number of applied records per key (not only versions); exact
 * duplicates (K7) add nothing. A no-op upsert costs its sequence and one byte in its chunk.
 *
 * <p>Decision: same key, same sequence (A2): a delete wins over an upsert; between upserts the
 * larger byte-wise encoding of the projected row wins; {@code duplicateSequence} counts it. The
 * winner is stored in a newer chunk than the loser; reading the history applies the same rule.
 *
 * <p>Decision: the SEQUENCE BY columns are not tracked (their change is {@code __START_AT}); an
 * upsert that changes only them (or only untracked columns) updates the open version in place.
 *
 * <p>Decision: IGNORE NULL UPDATES merges a record with the row of the entry just below it in
 * sequence order at the time it is applied; entries above a late record are not re-merged (such
 * flows are exempt from order independence, A2).
 *
 * <p>Decision: a key holds one chunk per flush that applied records to it; when a late record reads
 * a history held in more than {@value #MAX_STORED_VALUES} values beyond the chunks of {@value
 * #REWRITE_CHUNK_ENTRIES} entries it needs, the flush rewrites it as such chunks (a read then costs
 * a bounded number of state values; a rewrite happens at most once per {@value #MAX_STORED_VALUES}
 * flushes of the key).
 *
 * <p>Not thread-safe; one instance per operator subtask.
 */
@Internal
public final class Scd2Logic {

    /**
     * The stored state of the current key (the state backend's keyed state, or memory in tests).
     */
    public interface Store {
        /** The {@link Scd2CurrentValue} head of the key, or null for a never-seen key. */
        @Nullable
        byte[] head();

        void setHead(byte[] value);

        /**
         * Every stored history value of the key with its map key, in any order: {@link
         * Scd2HistoryChunk} values (keys {@link Scd2HistoryChunk#isChunkKey}) and v1 {@link
         * Scd2HistoryEntry} values (keys {@link SequenceCodec#toMapKey} of their sequence).
         */
        Iterable<Map.Entry<String, byte[]>> history();

        void putHistory(String mapKey, byte[] value);

        void clearHistory();
    }

    /**
     * Stored history values of a key, beyond the chunks its entries need, above which a history
     * read leads to a rewrite.
     */
    static final int MAX_STORED_VALUES = 16;

    /** Entries per chunk when a key's history is rewritten. */
    static final int REWRITE_CHUNK_ENTRIES = 1024;

    /**
     * Estimated heap bytes of one entry in the history path (object, sequence array, list slot).
     */
    private static final int ENTRY_OVERHEAD_BYTES = 80;

    /**
     * What one key accumulated since the last flush: the head then and now, and the history entries
     * applied (a pending chunk in the in-order path, the key's whole sorted history in the history
     * path). Created empty per key; {@link Scd2Logic} loads it on first use.
     */
    public static final class KeyChanges {
        private boolean loaded;

        /** The head at the last flush (the versions the target holds), or null for a new key. */
        @Nullable private byte[] headAtFlush;

        /** The head now (its chunk number is set at the flush). */
        @Nullable private byte[] head;

        private int nextChunk;
        private boolean dirty;

        /**
         * In-order path: a chunk of the entries applied since the flush, or null before the first.
         */
        @Nullable private ByteWriter pending;

        /** Offsets in {@link #pending} of the last upsert entry's hash and row, -1 when none. */
        private int lastHash = -1;

        private int lastRow;
        private int lastRowLength;

        /**
         * History path: the stored entries (sorted, A2-resolved) and the current ones; null in the
         * in-order path.
         */
        @Nullable private List<Entry> stored;

        @Nullable private List<Entry> entries;
        private int storedValues;
        private long storedBytes;

        /**
         * Estimated heap bytes held (pending chunk or loaded history), for the operator's memory
         * bound.
         */
        public long heapBytes() {
            long b = pending == null ? 0 : pending.buffer().length;
            if (entries != null) {
                b += storedBytes + (long) (entries.size() + stored.size()) * ENTRY_OVERHEAD_BYTES;
            }
            return b;
        }
    }

    private final ApplyCodecs codecs;
    private final AutoCdcMetrics metrics;
    private final int arity;
    private final ByteWriter seq = new ByteWriter(32);
    private final ByteWriter row = new ByteWriter();
    private final ByteWriter hash = new ByteWriter(Hash128.BYTES);
    private final ByteWriter value = new ByteWriter();
    private final Scd2CurrentValue head = new Scd2CurrentValue();
    private final Scd2CurrentValue before = new Scd2CurrentValue();
    private final Scd2HistoryChunk.Cursor cursor = new Scd2HistoryChunk.Cursor();
    private final Scd2HistoryEntry check = new Scd2HistoryEntry();
    private final OpenVersion fold = new OpenVersion();

    /** The record being applied: its unavailable projected columns, or null (the common case). */
    @Nullable private boolean[] unavailable;

    /** The record being applied: where an upsert that cannot be applied goes. */
    private ChangeOutput quarantine;

    public Scd2Logic(AutoCdcSpec spec, AutoCdcMetrics metrics) {
        if (spec.scdType() != ScdType.TYPE_2) {
            throw new IllegalArgumentException("Scd2Logic needs an SCD TYPE 2 flow, got " + spec);
        }
        this.codecs = new ApplyCodecs(spec);
        this.metrics = metrics;
        this.arity = codecs.projection.length;
    }

    /**
     * Applies one change record (upsert, or delete for {@code RowKind.DELETE}) and flushes at once:
     * {@code out} receives the record's changes of the target.
     */
    public void apply(RowData record, Store store, ChangeOutput out) {
        KeyChanges k = new KeyChanges();
        apply(record, k, store, out);
        flush(k, store, out);
    }

    /**
     * Applies one change record to the key's changes since the last flush; reads {@code store}
     * (head on first use, history for a late record), never writes it.
     *
     * @throws IllegalStateException when the stored state is corrupt or of an unknown version
     */
    public void apply(RowData record, KeyChanges k, Store store) {
        apply(
                record,
                k,
                store,
                row -> {
                    throw new IllegalStateException("no output");
                });
    }

    /**
     * As {@link #apply(RowData, KeyChanges, Store)}; an upsert with unavailable values and no entry
     * below it to take them from goes to {@code quarantine} ({@link ChangeOutput#quarantine}, A4).
     */
    public void apply(RowData record, KeyChanges k, Store store, ChangeOutput quarantine) {
        if (!k.loaded) {
            k.headAtFlush = store.head();
            k.head = k.headAtFlush;
            k.nextChunk = k.head == null ? 0 : head.wrap(k.head).nextChunk();
            k.loaded = true;
        }
        boolean delete = record.getRowKind() == RowKind.DELETE;
        this.unavailable = delete ? null : codecs.unavailable(record);
        this.quarantine = quarantine;
        seq.reset();
        codecs.encodeSequence(record, seq);
        if (k.entries != null) {
            applyToHistory(record, delete, seq.toByteArray(), k);
            return;
        }
        byte[] current = k.head;
        int cmp = 1;
        if (current != null) {
            head.wrap(current);
            cmp =
                    Arrays.compareUnsigned(
                            seq.buffer(),
                            0,
                            seq.size(),
                            current,
                            head.maxOffset(),
                            head.maxOffset() + head.maxLength());
        }
        if (cmp > 0) {
            applyInOrder(record, delete, current != null && head.live(), k);
            return;
        }
        if (cmp == 0 && !codecs.ignoreNulls() && unavailable == null) {
            // the key's last entry is at this sequence: settle the common duplicate cases from the
            // head
            if (!head.live()) {
                if (delete) {
                    metrics.noop();
                } else {
                    metrics.duplicateSequence(); // a delete wins over an upsert (A2)
                }
                return;
            }
            if (!delete) {
                buildUpsert(record, null, null);
                int rowCmp =
                        Arrays.compareUnsigned(
                                row.buffer(),
                                0,
                                row.size(),
                                current,
                                head.rowOffset(),
                                current.length);
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
        byte[] sequence = seq.toByteArray();
        loadHistory(k, store);
        applyToHistory(record, delete, sequence, k);
    }

    /**
     * Writes the key's changes to {@code store} (head, and the entries applied since the last flush
     * as one chunk) and emits the net changes of its target rows since the last flush. {@code k}
     * must not be used afterwards.
     */
    public void flush(KeyChanges k, Store store, ChangeOutput out) {
        if (!k.dirty) {
            return;
        }
        if (k.entries == null) {
            emitFolded(k, out);
            if (k.pending != null) {
                store.putHistory(Scd2HistoryChunk.mapKey(k.nextChunk++), k.pending.toByteArray());
            }
        } else {
            emitDifference(k.stored, versions(k.stored), k.entries, versions(k.entries), out);
            writeHistory(k, store);
        }
        store.setHead(withNextChunk(k.head, k.nextChunk));
    }

    // ---------------------------------------------------------------------------------- in order

    private void applyInOrder(RowData record, boolean delete, boolean live, KeyChanges k) {
        if (unavailable != null && !live) {
            quarantineUnavailable(record);
            return;
        }
        if (k.pending == null) {
            k.pending = new ByteWriter(64);
            Scd2HistoryChunk.start(k.pending);
        }
        k.dirty = true;
        if (delete) {
            Scd2HistoryChunk.appendDelete(k.pending, seq.buffer(), 0, seq.size());
            value.reset();
            Scd2CurrentValue.writeDeleted(value, k.nextChunk + 1, seq.buffer(), 0, seq.size());
            k.head = value.toByteArray();
            metrics.applied();
            metrics.tombstone();
            return;
        }
        byte[] current = k.head;
        GenericRowData previous =
                live && (codecs.ignoreNulls() || unavailable != null)
                        ? codecs.decodeRow(current, head.rowOffset(), head.rowLength())
                        : null;
        buildUpsert(record, previous, unavailable);
        appendUpsert(k);
        if (!live) {
            writeLiveHead(k, seq.buffer(), 0, seq.size());
            metrics.applied();
            return;
        }
        boolean sameTracked =
                Arrays.equals(
                        hash.buffer(),
                        0,
                        Hash128.BYTES,
                        current,
                        head.hashOffset(),
                        head.hashOffset() + Hash128.BYTES);
        if (sameTracked) {
            boolean sameRow =
                    Arrays.equals(
                            row.buffer(), 0, row.size(), current, head.rowOffset(), current.length);
            if (sameRow) {
                metrics.noop();
            } else {
                metrics.applied();
            }
            writeLiveHead(k, current, head.startOffset(), head.startLength());
            return;
        }
        writeLiveHead(k, seq.buffer(), 0, seq.size());
        metrics.applied();
    }

    /**
     * Appends the upsert in {@link #seq}/{@link #hash}/{@link #row} to the pending chunk (SAME when
     * it repeats the last upsert).
     */
    private void appendUpsert(KeyChanges k) {
        ByteWriter p = k.pending;
        if (k.lastHash >= 0
                && k.lastRowLength == row.size()
                && Arrays.equals(
                        p.buffer(),
                        k.lastHash,
                        k.lastHash + Hash128.BYTES,
                        hash.buffer(),
                        0,
                        Hash128.BYTES)
                && Arrays.equals(
                        p.buffer(),
                        k.lastRow,
                        k.lastRow + k.lastRowLength,
                        row.buffer(),
                        0,
                        row.size())) {
            Scd2HistoryChunk.appendSame(p, seq.buffer(), 0, seq.size());
            return;
        }
        k.lastHash =
                Scd2HistoryChunk.appendUpsert(
                        p,
                        seq.buffer(),
                        0,
                        seq.size(),
                        hash.buffer(),
                        0,
                        row.buffer(),
                        0,
                        row.size());
        k.lastRow = p.size() - row.size();
        k.lastRowLength = row.size();
    }

    /**
     * The head of a live key whose last record is the upsert in {@link #seq}/{@link #hash}/{@link
     * #row}; in-order heads carry the number after the pending chunk (the flush writes that chunk
     * as is).
     */
    private void writeLiveHead(KeyChanges k, byte[] start, int off, int len) {
        value.reset();
        Scd2CurrentValue.writeLive(
                value,
                k.nextChunk + 1,
                seq.buffer(),
                0,
                seq.size(),
                start,
                off,
                len,
                hash.buffer(),
                0,
                row.buffer(),
                0,
                row.size());
        k.head = value.toByteArray();
    }

    /**
     * In-order path: the net changes of the pending entries applied over the open version of the
     * last flush, in one pass over the chunk (rows decoded only for emitted versions).
     */
    private void emitFolded(KeyChanges k, ChangeOutput out) {
        OpenVersion v = fold;
        v.open = false;
        byte[] old = k.headAtFlush;
        if (old != null && before.wrap(old).live()) {
            v.open = v.old = true;
            v.startBuf = old;
            v.startOff = before.startOffset();
            v.startLen = before.startLength();
            v.buf = old;
            v.hashOff = before.hashOffset();
            v.rowOff = before.rowOffset();
            v.rowLen = before.rowLength();
        }
        if (k.pending == null) {
            return;
        }
        byte[] p = k.pending.buffer();
        cursor.wrap(p, 1, k.pending.size() - 1);
        while (cursor.next()) {
            if (v.open
                    && !cursor.isDelete()
                    && Arrays.equals(
                            v.buf,
                            v.hashOff,
                            v.hashOff + Hash128.BYTES,
                            p,
                            cursor.hashOffset(),
                            cursor.hashOffset() + Hash128.BYTES)) {
                v.takeRow(
                        p, cursor); // same tracked values: the open version takes the row in place
                continue;
            }
            if (v.open) {
                emitVersion(
                        v, p, cursor.sequenceOffset(), cursor.sequenceLength(), out); // closed here
                v.open = false;
            }
            if (!cursor.isDelete()) {
                v.open = true;
                v.old = false;
                v.startBuf = p;
                v.startOff = cursor.sequenceOffset();
                v.startLen = cursor.sequenceLength();
                v.takeRow(p, cursor);
            }
        }
        if (v.open) {
            emitVersion(v, null, 0, 0, out);
        }
    }

    /**
     * The open version during {@link #emitFolded}: its start sequence, tracked hash and row as
     * slices.
     */
    private static final class OpenVersion {
        boolean open;

        /** The open version of the last flush (its start is older than every pending entry). */
        boolean old;

        byte[] startBuf;
        int startOff;
        int startLen;
        byte[] buf;
        int hashOff;
        int rowOff;
        int rowLen;

        void takeRow(byte[] p, Scd2HistoryChunk.Cursor c) {
            buf = p;
            hashOff = c.hashOffset();
            rowOff = c.rowOffset();
            rowLen = c.rowLength();
        }
    }

    /**
     * Emits one version of the fold, closed at the given sequence (null: open): {@code +I} when
     * new, else {@code -U}/{@code +U} against the last flush's open version unless unchanged.
     */
    private void emitVersion(
            OpenVersion v, @Nullable byte[] endBuf, int endOff, int endLen, ChangeOutput out) {
        Object start = codecs.sequenceCodec.decode(v.startBuf, v.startOff, v.startLen);
        Object end = endBuf == null ? null : codecs.sequenceCodec.decode(endBuf, endOff, endLen);
        GenericRowData now = codecs.decodeRow(v.buf, v.rowOff, v.rowLen);
        if (!v.old) {
            out.emit(versionRow(RowKind.INSERT, now, start, end));
            return;
        }
        // `before` still wraps the head of the last flush
        byte[] old = before.bytes();
        if (end == null
                && Arrays.equals(
                        old,
                        before.rowOffset(),
                        old.length,
                        v.buf,
                        v.rowOff,
                        v.rowOff + v.rowLen)) {
            return;
        }
        GenericRowData was = codecs.decodeRow(old, before.rowOffset(), before.rowLength());
        if (end == null && was.equals(now)) {
            return;
        }
        out.emit(versionRow(RowKind.UPDATE_BEFORE, was, start, null));
        out.emit(versionRow(RowKind.UPDATE_AFTER, now, start, end));
    }

    // ---------------------------------------------------------------------------- from history

    /** One history entry in sequence order; an upsert's hash and row are slices of {@code buf}. */
    private static final class Entry {
        final byte[] seq;
        final boolean delete;
        final byte[] buf;
        final int hashOff;
        final int rowOff;
        final int rowLen;

        /** Applied since the last flush (not yet stored). */
        boolean fresh;

        Entry(byte[] seq, boolean delete, byte[] buf, int hashOff, int rowOff, int rowLen) {
            this.seq = seq;
            this.delete = delete;
            this.buf = buf;
            this.hashOff = hashOff;
            this.rowOff = rowOff;
            this.rowLen = rowLen;
        }

        static Entry delete(byte[] seq) {
            return new Entry(seq, true, null, -1, -1, 0);
        }

        boolean sameTracked(Entry o) {
            return Arrays.equals(
                    buf,
                    hashOff,
                    hashOff + Hash128.BYTES,
                    o.buf,
                    o.hashOff,
                    o.hashOff + Hash128.BYTES);
        }

        int compareRow(Entry o) {
            return Arrays.compareUnsigned(
                    buf, rowOff, rowOff + rowLen, o.buf, o.rowOff, o.rowOff + o.rowLen);
        }

        boolean sameValue(Entry o) {
            return delete == o.delete && (delete || (sameTracked(o) && compareRow(o) == 0));
        }

        /** The A2 winner of two entries with the same sequence: a delete, else the larger row. */
        static Entry winner(Entry a, Entry b) {
            if (a.delete) {
                return a;
            }
            if (b.delete) {
                return b;
            }
            return a.compareRow(b) >= 0 ? a : b;
        }
    }

    /**
     * A derived version: entries [start .. last] of the sorted list, closed by entry {@code end}
     * (-1: open).
     */
    private static final class Version {
        final int start;
        int last;
        int end = -1;

        Version(int start) {
            this.start = start;
            this.last = start;
        }
    }

    /** Switches the key to the history path: its stored entries, then the pending in-order ones. */
    private void loadHistory(KeyChanges k, Store store) {
        List<Entry> all = new ArrayList<>();
        int values = 0;
        long bytes = 0;
        for (Map.Entry<String, byte[]> e : store.history()) {
            values++;
            byte[] v = e.getValue();
            bytes += v.length;
            if (Scd2HistoryChunk.isChunkKey(e.getKey())) {
                readChunk(v, 1, v.length - 1, all, false);
            } else {
                check.wrap(v); // version check of every v1 entry
                byte[] s = SequenceCodec.fromMapKey(e.getKey());
                all.add(
                        check.isDelete()
                                ? Entry.delete(s)
                                : new Entry(
                                        s,
                                        false,
                                        v,
                                        check.hashOffset(),
                                        check.rowOffset(),
                                        check.rowLength()));
            }
        }
        all.sort((a, b) -> Arrays.compareUnsigned(a.seq, b.seq));
        List<Entry> stored = new ArrayList<>(all.size());
        for (Entry e : all) {
            int last = stored.size() - 1;
            if (last >= 0 && Arrays.equals(stored.get(last).seq, e.seq)) {
                stored.set(
                        last,
                        Entry.winner(
                                stored.get(last), e)); // a later same-sequence replacement (A2)
            } else {
                stored.add(e);
            }
        }
        List<Entry> entries = new ArrayList<>(stored.size() + 4);
        entries.addAll(stored);
        if (k.pending != null) {
            byte[] p = k.pending.toByteArray(); // above every stored entry: applied in order
            bytes += p.length;
            readChunk(p, 1, p.length - 1, entries, true);
        }
        k.stored = stored;
        k.entries = entries;
        k.storedValues = values;
        k.storedBytes = bytes;
        k.pending = null;
        k.lastHash = -1;
    }

    private void readChunk(byte[] v, int off, int len, List<Entry> into, boolean fresh) {
        cursor.wrap(v, off, len);
        while (cursor.next()) {
            byte[] s =
                    Arrays.copyOfRange(
                            v,
                            cursor.sequenceOffset(),
                            cursor.sequenceOffset() + cursor.sequenceLength());
            Entry e =
                    cursor.isDelete()
                            ? Entry.delete(s)
                            : new Entry(
                                    s,
                                    false,
                                    v,
                                    cursor.hashOffset(),
                                    cursor.rowOffset(),
                                    cursor.rowLength());
            e.fresh = fresh;
            into.add(e);
        }
    }

    private void applyToHistory(RowData record, boolean delete, byte[] sequence, KeyChanges k) {
        List<Entry> entries = k.entries;
        if (!entries.isEmpty()
                && Arrays.compareUnsigned(sequence, entries.get(entries.size() - 1).seq) < 0) {
            metrics.late();
        }
        int idx = search(entries, sequence);
        Entry existing = idx >= 0 ? entries.get(idx) : null;
        int insertAt = idx >= 0 ? idx : -idx - 1;
        Entry incoming;
        if (delete) {
            incoming = Entry.delete(sequence);
        } else {
            GenericRowData below = null;
            if ((codecs.ignoreNulls() || unavailable != null)
                    && insertAt > 0
                    && !entries.get(insertAt - 1).delete) {
                Entry p = entries.get(insertAt - 1);
                below = codecs.decodeRow(p.buf, p.rowOff, p.rowLen);
            }
            if (unavailable != null && below == null) {
                quarantineUnavailable(record);
                return;
            }
            buildUpsert(record, below, unavailable);
            byte[] b = new byte[Hash128.BYTES + row.size()];
            System.arraycopy(hash.buffer(), 0, b, 0, Hash128.BYTES);
            System.arraycopy(row.buffer(), 0, b, Hash128.BYTES, row.size());
            incoming = new Entry(sequence, false, b, 0, Hash128.BYTES, row.size());
        }
        if (existing != null) {
            if (existing.sameValue(incoming)) {
                metrics.noop(); // exact duplicate (K7)
                return;
            }
            metrics.duplicateSequence();
            if (existing.delete) {
                return; // a delete wins (A2)
            }
            if (!incoming.delete && incoming.compareRow(existing) <= 0) {
                return; // the larger projected row wins (A2)
            }
            entries.set(idx, incoming);
        } else {
            entries.add(insertAt, incoming);
        }
        incoming.fresh = true;
        k.head = headOf(entries, k.nextChunk);
        k.dirty = true;
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
            List<Entry> oldEntries,
            List<Version> oldVersions,
            List<Entry> newEntries,
            List<Version> newVersions,
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
        return oe.get(o.last).compareRow(ne.get(n.last)) == 0;
    }

    private RowData image(RowKind kind, List<Entry> entries, Version v) {
        Entry last = entries.get(v.last);
        GenericRowData r = codecs.decodeRow(last.buf, last.rowOff, last.rowLen);
        byte[] start = entries.get(v.start).seq;
        Object end = null;
        if (v.end >= 0) {
            end = codecs.sequenceCodec.decode(entries.get(v.end).seq);
        }
        return versionRow(kind, r, codecs.sequenceCodec.decode(start), end);
    }

    /** The head of a key with these (sorted, non-empty) entries. */
    private byte[] headOf(List<Entry> entries, int nextChunk) {
        Entry last = entries.get(entries.size() - 1);
        value.reset();
        if (last.delete) {
            Scd2CurrentValue.writeDeleted(value, nextChunk, last.seq, 0, last.seq.length);
        } else {
            int start = entries.size() - 1;
            while (start > 0
                    && !entries.get(start - 1).delete
                    && entries.get(start - 1).sameTracked(entries.get(start))) {
                start--;
            }
            byte[] s = entries.get(start).seq;
            Scd2CurrentValue.writeLive(
                    value,
                    nextChunk,
                    last.seq,
                    0,
                    last.seq.length,
                    s,
                    0,
                    s.length,
                    last.buf,
                    last.hashOff,
                    last.buf,
                    last.rowOff,
                    last.rowLen);
        }
        return value.toByteArray();
    }

    /**
     * History path: the fresh entries as one new chunk, or the whole history rewritten when it has
     * too many values.
     */
    private void writeHistory(KeyChanges k, Store store) {
        List<Entry> entries = k.entries;
        if (k.storedValues > MAX_STORED_VALUES + k.stored.size() / REWRITE_CHUNK_ENTRIES) {
            store.clearHistory();
            for (int from = 0; from < entries.size(); from += REWRITE_CHUNK_ENTRIES) {
                List<Entry> part =
                        entries.subList(
                                from, Math.min(entries.size(), from + REWRITE_CHUNK_ENTRIES));
                store.putHistory(Scd2HistoryChunk.mapKey(k.nextChunk++), chunk(part, false));
            }
            return;
        }
        byte[] fresh = chunk(entries, true);
        if (fresh != null) {
            store.putHistory(Scd2HistoryChunk.mapKey(k.nextChunk++), fresh);
        }
    }

    /**
     * A chunk of the given entries (only the fresh ones when {@code freshOnly}), or null when there
     * are none.
     */
    @Nullable
    private byte[] chunk(List<Entry> entries, boolean freshOnly) {
        value.reset();
        Scd2HistoryChunk.start(value);
        Entry lastUpsert = null;
        boolean any = false;
        for (Entry e : entries) {
            if (freshOnly && !e.fresh) {
                continue;
            }
            any = true;
            if (e.delete) {
                Scd2HistoryChunk.appendDelete(value, e.seq, 0, e.seq.length);
            } else if (lastUpsert != null && e.sameValue(lastUpsert)) {
                Scd2HistoryChunk.appendSame(value, e.seq, 0, e.seq.length);
            } else {
                Scd2HistoryChunk.appendUpsert(
                        value, e.seq, 0, e.seq.length, e.buf, e.hashOff, e.buf, e.rowOff, e.rowLen);
                lastUpsert = e;
            }
        }
        return any ? value.toByteArray() : null;
    }

    /** {@code current} with its next chunk number set to {@code nextChunk}. */
    private byte[] withNextChunk(byte[] current, int nextChunk) {
        head.wrap(current);
        if (head.nextChunk() == nextChunk) {
            return current;
        }
        value.reset();
        if (!head.live()) {
            Scd2CurrentValue.writeDeleted(
                    value, nextChunk, current, head.maxOffset(), head.maxLength());
        } else {
            Scd2CurrentValue.writeLive(
                    value,
                    nextChunk,
                    current,
                    head.maxOffset(),
                    head.maxLength(),
                    current,
                    head.startOffset(),
                    head.startLength(),
                    current,
                    head.hashOffset(),
                    current,
                    head.rowOffset(),
                    head.rowLength());
        }
        return value.toByteArray();
    }

    // ---------------------------------------------------------------------------------- helpers

    private void quarantineUnavailable(RowData record) {
        quarantine.quarantine(
                record,
                QuarantineReason.UNAVAILABLE_VALUE,
                codecs.unavailableText(record, unavailable)
                        + " and the key has no stored row below this record to keep their values"
                        + " from");
    }

    /**
     * Fills {@link #row} and {@link #hash} for an upsert, merged with {@code below} under IGNORE
     * NULL UPDATES and for its {@code unavailableColumns} (below must then be non-null).
     */
    private void buildUpsert(
            RowData record,
            @Nullable GenericRowData below,
            @Nullable boolean[] unavailableColumns) {
        row.reset();
        hash.reset();
        if (below != null && (codecs.ignoreNulls() || unavailableColumns != null)) {
            codecs.encodeRow(record, row);
            GenericRowData merged = codecs.decodeRow(row.buffer(), 0, row.size());
            if (unavailableColumns != null) {
                codecs.mergeUnavailable(merged, below, unavailableColumns);
            }
            if (codecs.ignoreNulls()) {
                codecs.mergeIgnoredNulls(merged, below);
            }
            row.reset();
            codecs.rowCodec.encode(merged, row);
            codecs.hashTracked(merged, false, hash);
        } else {
            codecs.encodeRow(record, row);
            codecs.hashTracked(record, true, hash);
        }
    }

    private RowData versionRow(
            RowKind kind, RowData projected, Object start, @Nullable Object end) {
        GenericRowData r = new GenericRowData(kind, arity + 2);
        for (int i = 0; i < arity; i++) {
            r.setField(i, ((GenericRowData) projected).getField(i));
        }
        r.setField(arity, start);
        r.setField(arity + 1, end);
        return r;
    }
}

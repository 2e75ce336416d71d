package dev.changeflow.state;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Rewrites AUTO CDC state values whose rows were encoded ({@link RowCodec}) for an older row type
 * into the encoding of the current one, after a column was widened at the source (semantics.md A7
 * item 4): FLOAT → DOUBLE and DECIMAL(p, s) → DECIMAL(p', s) crossing 18 digits change a row's
 * stored form (so does a TIMESTAMP precision crossing 3, which Iceberg's microsecond timestamps do
 * not show); INT → BIGINT and DECIMAL within one form do not (they never need this class).
 *
 * <p>What a migration keeps: every value's layout and format version byte ({@link Scd1RowValue},
 * {@link Scd2CurrentValue}, {@link Scd2HistoryChunk}, {@link Scd2HistoryEntry}), sequences, flags
 * and chunk numbers; only the embedded rows (and, SCD type 2, tracked-values hashes) change. Values
 * are exact: a FLOAT becomes the DOUBLE {@code (double) f} (every float is a double), a DECIMAL
 * keeps its unscaled value and scale at the wider precision, an INT becomes the same BIGINT. Rows
 * written before a column was appended (A7 item 2) decode with null there and are written at the
 * current width.
 *
 * <p>SCD type 2 hashes: a stored hash equal to the hash of the decoded row's tracked columns under
 * the old type is replaced by the hash of the converted row under the current type (what the
 * current flow computes for the same values, so a record carrying them is a no-op); any other
 * stored hash (written before a tracked column was appended) is kept. Conversion is injective, so
 * which stored entries have equal hashes is unchanged and the versions derived from the history are
 * those the table holds.
 *
 * <p>SCD type 2 same-sequence entries (A2): readers keep the delete, else the larger byte-wise row;
 * the new encoding may order two rows differently (DECIMAL's unscaled long vs bytes), so every
 * upsert entry of a sequence that has several is rewritten with the converted row and hash of the
 * one the old encoding made the winner ({@link #scd2History}): the reader then keeps the same row
 * whichever it picks.
 *
 * <p>Not thread-safe (reused buffers).
 */
@Internal
public final class RowMigration {
    private final RowType from;
    private final RowType to;
    private final RowCodec fromCodec;
    private final RowCodec toCodec;
    @Nullable private final int[] tracked;

    /** The tracked positions the old type has (columns appended since were not hashed). */
    @Nullable private final int[] fromTrackedPositions;

    @Nullable private final RowCodec fromTracked;
    @Nullable private final RowCodec toTracked;
    private final UnaryOperator<Object>[] conversions;
    private final ByteWriter buffer = new ByteWriter();
    private final ByteWriter hash = new ByteWriter(Hash128.BYTES);
    private final Scd1RowValue scd1 = new Scd1RowValue();
    private final Scd2CurrentValue head = new Scd2CurrentValue();
    private final Scd2HistoryEntry v1Entry = new Scd2HistoryEntry();
    private final Scd2HistoryChunk.Cursor cursor = new Scd2HistoryChunk.Cursor();

    /**
     * @param from the row type the stored rows were encoded with (the last snapshot's)
     * @param to the current row type; {@link #check} must accept the pair
     * @param tracked SCD type 2: positions of the tracked columns in {@code to} (their hash is part
     *     of stored values; those below {@code from}'s arity were hashed under {@code from}); null
     *     for SCD type 1
     * @throws IllegalArgumentException when {@code to} is not a supported evolution of {@code from}
     */
    @SuppressWarnings("unchecked")
    public RowMigration(RowType from, RowType to, @Nullable int[] tracked) {
        check(from, to);
        this.from = from;
        this.to = to;
        this.fromCodec = new RowCodec(from);
        this.toCodec = new RowCodec(to);
        this.tracked = tracked;
        this.fromTrackedPositions =
                tracked == null
                        ? null
                        : Arrays.stream(tracked).filter(p -> p < from.getFieldCount()).toArray();
        this.fromTracked =
                tracked == null ? null : new RowCodec(project(from, fromTrackedPositions));
        this.toTracked = tracked == null ? null : new RowCodec(project(to, tracked));
        this.conversions = new UnaryOperator[from.getFieldCount()];
        for (int i = 0; i < conversions.length; i++) {
            conversions[i] =
                    conversion(from.getTypeAt(i), to.getTypeAt(i), from.getFieldNames().get(i));
        }
    }

    /** The row type the stored rows were encoded with. */
    public RowType from() {
        return from;
    }

    /** The row type the migrated rows are encoded with. */
    public RowType to() {
        return to;
    }

    /**
     * Whether rows stored for {@code from} must be rewritten to be read as {@code to}: some
     * column's stored form ({@link RowCodec}) changed — FLOAT to DOUBLE, a DECIMAL of at most 18
     * digits (unscaled long) to one of more (unscaled bytes) or back, a TIMESTAMP's precision
     * across 3 (nano-of-millisecond stored or not). INT → BIGINT, a DECIMAL widened within one
     * form, string lengths and columns appended after the stored ones (A7 item 2) read as they are.
     *
     * @throws IllegalArgumentException when {@code to} is not a supported evolution of {@code from}
     *     ({@link #check})
     */
    public static boolean changesStoredForm(RowType from, RowType to) {
        check(from, to);
        for (int i = 0; i < from.getFieldCount(); i++) {
            if (!storedForm(from.getTypeAt(i)).equals(storedForm(to.getTypeAt(i)))) {
                return true;
            }
        }
        return false;
    }

    /** What decides the bytes {@link RowCodec} writes for a value of {@code t}. */
    private static String storedForm(LogicalType t) {
        switch (t.getTypeRoot()) {
            case BOOLEAN:
            case TINYINT:
            case FLOAT:
            case DOUBLE:
                return t.getTypeRoot().name();
            case SMALLINT:
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
            case INTERVAL_YEAR_MONTH:
            case BIGINT:
            case INTERVAL_DAY_TIME:
                return "zigzag"; // int and long varints of one value are the same bytes
            case DECIMAL:
                return DecimalData.isCompact(((DecimalType) t).getPrecision())
                        ? "unscaled long"
                        : "unscaled bytes";
            case CHAR:
            case VARCHAR:
            case BINARY:
            case VARBINARY:
                return "length-prefixed";
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return LogicalTypeChecks.getPrecision(t) > 3 ? "millis+nanos" : "millis";
            default:
                StringBuilder b = new StringBuilder(t.getTypeRoot().name()).append('(');
                for (LogicalType c : t.getChildren()) {
                    b.append(storedForm(c)).append(',');
                }
                return b.append(')').toString();
        }
    }

    /**
     * Whether values of {@code a} are values of {@code b} as they are: the same type apart from
     * nullability, string and binary lengths, timestamp precision and nested field names.
     */
    private static boolean sameKind(LogicalType a, LogicalType b) {
        LogicalTypeRoot ra = a.getTypeRoot();
        LogicalTypeRoot rb = b.getTypeRoot();
        if (ra.getFamilies().contains(LogicalTypeFamily.CHARACTER_STRING)) {
            return rb.getFamilies().contains(LogicalTypeFamily.CHARACTER_STRING);
        }
        if (ra.getFamilies().contains(LogicalTypeFamily.BINARY_STRING)) {
            return rb.getFamilies().contains(LogicalTypeFamily.BINARY_STRING);
        }
        if (ra != rb) {
            return false;
        }
        switch (ra) {
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return true;
            case ROW:
            case ARRAY:
            case MULTISET:
            case MAP:
                List<LogicalType> ca = a.getChildren();
                List<LogicalType> cb = b.getChildren();
                if (ca.size() != cb.size()) {
                    return false;
                }
                for (int i = 0; i < ca.size(); i++) {
                    if (!sameKind(ca.get(i), cb.get(i))) {
                        return false;
                    }
                }
                return true;
            default:
                return a.copy(true).equals(b.copy(true));
        }
    }

    /**
     * Checks that {@code to} evolves {@code from} the ways A7 allows over saved state: the same
     * column names in the same order, possibly followed by more columns, each column of the same
     * type (nullability, string and binary lengths, timestamp precision and nested field names
     * aside) or widened by INT → BIGINT, FLOAT → DOUBLE or DECIMAL(p, s) → DECIMAL(p', s) with p' ≥
     * p.
     *
     * @throws IllegalArgumentException naming the first column that breaks this
     */
    public static void check(RowType from, RowType to) {
        if (to.getFieldCount() < from.getFieldCount()) {
            throw new IllegalArgumentException(
                    "the saved state's rows have "
                            + from.getFieldCount()
                            + " columns, the flow "
                            + to.getFieldCount()
                            + " (state rows "
                            + from.asSummaryString()
                            + ")");
        }
        for (int i = 0; i < from.getFieldCount(); i++) {
            String name = from.getFieldNames().get(i);
            if (!name.equals(to.getFieldNames().get(i))) {
                throw new IllegalArgumentException(
                        "column "
                                + (i + 1)
                                + " of the saved state's rows is '"
                                + name
                                + "', the flow's is '"
                                + to.getFieldNames().get(i)
                                + "'");
            }
            conversion(from.getTypeAt(i), to.getTypeAt(i), name);
        }
    }

    /** The conversion of a non-null value of {@code a} to {@code b}; null when none is needed. */
    @Nullable
    private static UnaryOperator<Object> conversion(LogicalType a, LogicalType b, String name) {
        if (sameKind(a, b)) {
            return null;
        }
        LogicalTypeRoot ra = a.getTypeRoot();
        LogicalTypeRoot rb = b.getTypeRoot();
        if (ra == LogicalTypeRoot.INTEGER && rb == LogicalTypeRoot.BIGINT) {
            return v -> (long) (Integer) v;
        }
        if (ra == LogicalTypeRoot.FLOAT && rb == LogicalTypeRoot.DOUBLE) {
            return v -> (double) (Float) v;
        }
        if (a instanceof DecimalType && b instanceof DecimalType) {
            DecimalType da = (DecimalType) a;
            DecimalType db = (DecimalType) b;
            if (da.getScale() == db.getScale() && db.getPrecision() >= da.getPrecision()) {
                int p = db.getPrecision();
                int s = db.getScale();
                return v -> {
                    DecimalData d =
                            DecimalData.fromBigDecimal(((DecimalData) v).toBigDecimal(), p, s);
                    if (d == null) {
                        throw new IllegalStateException(
                                v + " does not fit DECIMAL(" + p + ", " + s + ")");
                    }
                    return d;
                };
            }
        }
        throw new IllegalArgumentException(
                "column '"
                        + name
                        + "' is "
                        + a.asSummaryString()
                        + " in the saved state's rows and "
                        + b.asSummaryString()
                        + " in the flow: not a widening the state can follow (INT → BIGINT, FLOAT →"
                        + " DOUBLE, DECIMAL precision up at the same scale)");
    }

    private static RowType project(RowType type, int[] positions) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : positions) {
            fields.add(type.getFields().get(p));
        }
        return new RowType(fields);
    }

    /** The row of {@code bytes[off, off + len)} (old encoding), converted to the current type. */
    GenericRowData convert(byte[] bytes, int off, int len) {
        return convert(fromCodec.decode(bytes, off, len));
    }

    private GenericRowData convert(GenericRowData old) {
        GenericRowData row = new GenericRowData(old.getRowKind(), to.getFieldCount());
        for (int i = 0; i < old.getArity(); i++) {
            Object v = old.getField(i);
            row.setField(i, v == null || conversions[i] == null ? v : conversions[i].apply(v));
        }
        return row;
    }

    /**
     * The row of {@code bytes[off, off + len)} encoded for the current type.
     *
     * @throws IllegalStateException when the bytes are not a row of the old type
     */
    public byte[] row(byte[] bytes, int off, int len) {
        return toCodec.encode(convert(bytes, off, len));
    }

    /**
     * The upsert of stored hash {@code bytes[hashOff, +16)} and row {@code bytes[rowOff, +rowLen)}
     * as the current type stores it: 16 hash bytes followed by the row.
     */
    private byte[] hashAndRow(byte[] bytes, int hashOff, int rowOff, int rowLen) {
        GenericRowData old = fromCodec.decode(bytes, rowOff, rowLen);
        GenericRowData now = convert(old);
        buffer.reset();
        toCodec.encode(now, buffer);
        byte[] out = new byte[Hash128.BYTES + buffer.size()];
        System.arraycopy(buffer.buffer(), 0, out, Hash128.BYTES, buffer.size());
        System.arraycopy(bytes, hashOff, out, 0, Hash128.BYTES);
        if (tracked != null && sameOldHash(bytes, hashOff, old)) {
            buffer.reset();
            toTracked.encode(now, tracked, buffer);
            hash.reset();
            Hash128.hash(buffer.buffer(), 0, buffer.size(), hash);
            System.arraycopy(hash.buffer(), 0, out, 0, Hash128.BYTES);
        }
        return out;
    }

    private boolean sameOldHash(byte[] bytes, int hashOff, RowData old) {
        buffer.reset();
        fromTracked.encode(old, fromTrackedPositions, buffer);
        hash.reset();
        Hash128.hash(buffer.buffer(), 0, buffer.size(), hash);
        return Arrays.equals(
                hash.buffer(), 0, Hash128.BYTES, bytes, hashOff, hashOff + Hash128.BYTES);
    }

    /**
     * An SCD type 1 row value ({@link Scd1RowValue}) with its row in the current encoding.
     *
     * @throws IllegalStateException for a corrupt value or a newer format version
     */
    public byte[] scd1Row(byte[] value) {
        scd1.wrap(value);
        byte[] row = row(value, scd1.rowOffset(), scd1.rowLength());
        ByteWriter out = new ByteWriter(scd1.rowOffset() + row.length);
        out.writeBytes(value, 0, scd1.rowOffset());
        out.writeBytes(row, 0, row.length);
        return out.toByteArray();
    }

    /**
     * An SCD type 2 head ({@link Scd2CurrentValue}, v1 or v2) with its open version's hash and row
     * as the current type stores them; a deleted key's head is returned as it is.
     *
     * @throws IllegalStateException for a corrupt value or a newer format version
     */
    public byte[] scd2Head(byte[] value) {
        head.wrap(value);
        if (!head.live()) {
            return value;
        }
        byte[] hr = hashAndRow(value, head.hashOffset(), head.rowOffset(), head.rowLength());
        ByteWriter out = new ByteWriter(head.hashOffset() + hr.length);
        out.writeBytes(value, 0, head.hashOffset());
        out.writeBytes(hr, 0, hr.length);
        return out.toByteArray();
    }

    /**
     * Every history value of one SCD type 2 key (map key → {@link Scd2HistoryChunk} or v1 {@link
     * Scd2HistoryEntry} value) with its rows and hashes as the current type stores them, under the
     * same map keys. Upsert entries sharing a sequence all get the converted content of the one the
     * old encoding ranks first (A2); a SAME entry whose upsert was rewritten so becomes an UPSERT.
     *
     * @throws IllegalStateException for a corrupt value or a newer format version
     */
    public Map<String, byte[]> scd2History(Iterable<Map.Entry<String, byte[]>> values) {
        Map<String, byte[]> in = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> e : values) {
            in.put(e.getKey(), e.getValue());
        }
        // pass 1: the A2 winner, under the old encoding, of every sequence with several upserts
        Map<String, Candidate> bySequence = new HashMap<>();
        for (Map.Entry<String, byte[]> e : in.entrySet()) {
            byte[] v = e.getValue();
            if (Scd2HistoryChunk.isChunkKey(e.getKey())) {
                cursor.wrap(v);
                while (cursor.next()) {
                    if (!cursor.isDelete()) {
                        String seq =
                                SequenceCodec.toMapKey(
                                        v, cursor.sequenceOffset(), cursor.sequenceLength());
                        candidate(
                                bySequence,
                                seq,
                                v,
                                cursor.hashOffset(),
                                cursor.rowOffset(),
                                cursor.rowLength());
                    }
                }
            } else {
                v1Entry.wrap(v);
                if (!v1Entry.isDelete()) {
                    candidate(
                            bySequence,
                            e.getKey(),
                            v,
                            v1Entry.hashOffset(),
                            v1Entry.rowOffset(),
                            v1Entry.rowLength());
                }
            }
        }
        Map<String, byte[]> winners = new HashMap<>();
        for (Map.Entry<String, Candidate> s : bySequence.entrySet()) {
            Candidate c = s.getValue();
            if (c.upserts > 1) {
                winners.put(s.getKey(), hashAndRow(c.value, c.hashOff, c.rowOff, c.rowLen));
            }
        }
        // pass 2: rewrite
        Map<String, byte[]> out = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> e : in.entrySet()) {
            byte[] v = e.getValue();
            if (Scd2HistoryChunk.isChunkKey(e.getKey())) {
                out.put(e.getKey(), chunk(v, winners));
            } else {
                v1Entry.wrap(v);
                if (v1Entry.isDelete()) {
                    out.put(e.getKey(), v);
                    continue;
                }
                byte[] hr = winners.get(e.getKey());
                if (hr == null) {
                    hr =
                            hashAndRow(
                                    v,
                                    v1Entry.hashOffset(),
                                    v1Entry.rowOffset(),
                                    v1Entry.rowLength());
                }
                ByteWriter w = new ByteWriter(v1Entry.hashOffset() + hr.length);
                w.writeBytes(v, 0, v1Entry.hashOffset());
                w.writeBytes(hr, 0, hr.length);
                out.put(e.getKey(), w.toByteArray());
            }
        }
        return out;
    }

    private byte[] chunk(byte[] v, Map<String, byte[]> winners) {
        ByteWriter w = new ByteWriter(v.length + 16);
        Scd2HistoryChunk.start(w);
        cursor.wrap(v);
        byte[] original = null; // the converted content of the last UPSERT entry read
        byte[] written = null; // the content of the last UPSERT entry written
        int lastHashOff = -1;
        while (cursor.next()) {
            int so = cursor.sequenceOffset();
            int sl = cursor.sequenceLength();
            if (cursor.isDelete()) {
                Scd2HistoryChunk.appendDelete(w, v, so, sl);
                continue;
            }
            if (cursor.hashOffset() != lastHashOff) { // an UPSERT entry (a SAME keeps the offsets)
                lastHashOff = cursor.hashOffset();
                original =
                        hashAndRow(v, cursor.hashOffset(), cursor.rowOffset(), cursor.rowLength());
                byte[] content = winners.getOrDefault(SequenceCodec.toMapKey(v, so, sl), original);
                appendUpsert(w, v, so, sl, content);
                written = content;
                continue;
            }
            byte[] content = winners.getOrDefault(SequenceCodec.toMapKey(v, so, sl), original);
            if (Arrays.equals(content, written)) {
                Scd2HistoryChunk.appendSame(w, v, so, sl);
            } else {
                appendUpsert(w, v, so, sl, content);
                written = content;
            }
        }
        return w.toByteArray();
    }

    private static void appendUpsert(ByteWriter w, byte[] v, int so, int sl, byte[] content) {
        Scd2HistoryChunk.appendUpsert(
                w, v, so, sl, content, 0, content, Hash128.BYTES, content.length - Hash128.BYTES);
    }

    /** An upsert entry of a sequence: the A2 winner so far and how many upserts share it. */
    private static final class Candidate {
        byte[] value;
        int hashOff;
        int rowOff;
        int rowLen;
        int upserts;
    }

    private static void candidate(
            Map<String, Candidate> bySequence,
            String seq,
            byte[] v,
            int hashOff,
            int rowOff,
            int rowLen) {
        Candidate c = bySequence.computeIfAbsent(seq, k -> new Candidate());
        c.upserts++;
        if (c.value != null
                && Arrays.compareUnsigned(
                                c.value, c.rowOff, c.rowOff + c.rowLen, v, rowOff, rowOff + rowLen)
                        >= 0) {
            return;
        }
        c.value = v;
        c.hashOff = hashOff;
        c.rowOff = rowOff;
        c.rowLen = rowLen;
    }
}

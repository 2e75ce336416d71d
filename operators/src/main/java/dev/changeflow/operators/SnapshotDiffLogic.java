package dev.changeflow.operators;

import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.Hash128;
import dev.changeflow.state.RowCodec;
import dev.changeflow.state.SnapshotKeyValue;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * What one row of snapshot v does to its key (semantics.md A6), as plain logic over the key's
 * stored {@link SnapshotKeyValue} (last seen version, 128-bit hash of the values then):
 *
 * <ul>
 *   <li>no stored value: {@link Outcome#INSERT};
 *   <li>stored version &lt; v, other hash: {@link Outcome#UPDATE}; same hash: {@link
 *       Outcome#UNCHANGED} (nothing is emitted, only the version is stored);
 *   <li>stored version = v: {@link Outcome#DUPLICATE} (the key twice in one snapshot, {@code
 *       DUPLICATE_KEY_VIOLATION});
 *   <li>stored version &gt; v: {@link Outcome#LATE} (a row of an older snapshot; ignored).
 * </ul>
 *
 * After the end of snapshot v every stored key whose version is &lt; v was absent from it: a delete
 * at v ({@link #absent}).
 *
 * <p>The hash covers the projected target columns (COLUMNS) except the version column, encoded by
 * changeflow's row codec: a change in a column the target does not store is no change.
 *
 * <p>Not thread-safe (reused buffers); one instance per operator subtask.
 */
@Internal
public final class SnapshotDiffLogic {
    /** What a snapshot row does to its key. */
    public enum Outcome {
        INSERT,
        UPDATE,
        UNCHANGED,
        DUPLICATE,
        LATE
    }

    private final int[] compared;
    private final RowCodec codec;
    private final ByteWriter row = new ByteWriter();
    private final ByteWriter hash = new ByteWriter(Hash128.BYTES);
    @Nullable private byte[] next;

    public SnapshotDiffLogic(AutoCdcSpec spec) {
        String version = spec.sequenceBy().get(0);
        List<Integer> positions = new ArrayList<>();
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : spec.projection()) {
            RowType.RowField f = spec.sourceType().getFields().get(p);
            if (!f.getName().equals(version)) {
                positions.add(p);
                fields.add(f);
            }
        }
        this.compared = positions.stream().mapToInt(Integer::intValue).toArray();
        this.codec = new RowCodec(new RowType(fields));
    }

    /**
     * Decides what {@code record} of snapshot {@code version} does to a key whose stored value is
     * {@code stored}; after {@code INSERT}, {@code UPDATE} and {@code UNCHANGED}, {@link
     * #nextValue()} is the value to store.
     */
    public Outcome apply(@Nullable byte[] stored, long version, RowData record) {
        next = null;
        if (stored != null) {
            long seen = SnapshotKeyValue.version(stored);
            if (seen == version) {
                return Outcome.DUPLICATE;
            }
            if (seen > version) {
                return Outcome.LATE;
            }
        }
        row.reset();
        codec.encode(record, compared, row);
        hash.reset();
        Hash128.hash(row.buffer(), 0, row.size(), hash);
        next = SnapshotKeyValue.encode(version, hash.buffer(), 0);
        if (stored == null) {
            return Outcome.INSERT;
        }
        return SnapshotKeyValue.sameHash(stored, hash.buffer(), 0)
                ? Outcome.UNCHANGED
                : Outcome.UPDATE;
    }

    /** The value to store after the last {@link #apply}. */
    public byte[] nextValue() {
        if (next == null) {
            throw new IllegalStateException("no value to store after a duplicate or late row");
        }
        return next;
    }

    /** Whether a key stored as {@code stored} was absent from snapshot {@code ended}. */
    public static boolean absent(byte[] stored, long ended) {
        return SnapshotKeyValue.version(stored) < ended;
    }
}

package dev.changeflow.operators;

import dev.changeflow.state.ByteWriter;
import dev.changeflow.state.Hash128;
import dev.changeflow.state.RowCodec;
import dev.changeflow.state.SequenceCodec;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * The codecs and column positions an AUTO CDC flow needs per record, derived once from its {@link
 * AutoCdcSpec}: sequence encoding (A2), projected target row encoding (COLUMNS), tracked-column
 * hash (TRACK HISTORY, SCD2), the IGNORE NULL UPDATES merge (A3) and the merge of unavailable
 * values (A3, A4).
 *
 * <p>Decision (A4): the SEQUENCE BY columns are never tracked in SCD2, even under the default TRACK
 * HISTORY ON *: their change is represented by {@code __START_AT}.
 */
@Internal
public final class ApplyCodecs {
    final AutoCdcSpec spec;
    final int[] sequencePositions;
    final int[] projection;
    final RowType rowType;
    final RowCodec rowCodec;
    final SequenceCodec sequenceCodec;
    final int[] trackedSource;
    final int[] trackedTarget;
    final RowCodec trackedCodec;

    /**
     * Per projected column: covered by IGNORE NULL UPDATES; null when the flow has no such clause.
     */
    final boolean[] ignoreNullCovered;

    /** Source position of {@link AutoCdcSpec#UNAVAILABLE_COLUMNS}, or -1. */
    final int unavailableIndex;

    /** Arity of the source type: the partial-update bit's position in the unavailable mask. */
    private final int sourceArity;

    private final RowData.FieldGetter[] getters;
    private final ByteWriter trackedBuffer = new ByteWriter();

    public ApplyCodecs(AutoCdcSpec spec) {
        this.spec = spec;
        this.sequencePositions = spec.sequenceIndexesInSource();
        this.projection = spec.projection();
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : projection) {
            fields.add(spec.sourceType().getFields().get(p));
        }
        this.rowType = new RowType(fields);
        this.rowCodec = new RowCodec(rowType);
        this.sequenceCodec = new SequenceCodec(spec.sequenceType());
        List<Integer> tSrc = new ArrayList<>();
        List<Integer> tTgt = new ArrayList<>();
        List<RowType.RowField> tFields = new ArrayList<>();
        for (int i = 0; i < projection.length; i++) {
            String name = rowType.getFieldNames().get(i);
            if (spec.scdType() == ScdType.TYPE_2
                    && !spec.sequenceBy().contains(name)
                    && spec.trackHistory().selects(name)) {
                tSrc.add(projection[i]);
                tTgt.add(i);
                tFields.add(fields.get(i));
            }
        }
        this.trackedSource = tSrc.stream().mapToInt(Integer::intValue).toArray();
        this.trackedTarget = tTgt.stream().mapToInt(Integer::intValue).toArray();
        this.trackedCodec = new RowCodec(new RowType(tFields));
        ColumnSelection inu = spec.ignoreNullUpdates();
        if (inu == null) {
            this.ignoreNullCovered = null;
        } else {
            this.ignoreNullCovered = new boolean[projection.length];
            for (int i = 0; i < projection.length; i++) {
                ignoreNullCovered[i] = inu.selects(rowType.getFieldNames().get(i));
            }
        }
        this.unavailableIndex = spec.unavailableColumnsIndex();
        this.sourceArity = spec.sourceType().getFieldCount();
        this.getters = new RowData.FieldGetter[projection.length];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(rowType.getTypeAt(i), i);
        }
    }

    boolean ignoreNulls() {
        return ignoreNullCovered != null;
    }

    /**
     * The projected columns a source record marks unavailable (A3/A4: the connector's placeholder
     * instead of the value), or null when none is (the common case, read as one null check).
     *
     * @return per target column position: unavailable; null when no projected column is
     */
    @Nullable
    boolean[] unavailable(RowData source) {
        if (unavailableIndex < 0 || source.isNullAt(unavailableIndex)) {
            return null;
        }
        byte[] mask = source.getBinary(unavailableIndex);
        boolean[] marked = null;
        for (int i = 0; i < projection.length; i++) {
            int p = projection[i];
            if (p / 8 < mask.length && (mask[p / 8] & (1 << (p % 8))) != 0) {
                if (marked == null) {
                    marked = new boolean[projection.length];
                }
                marked[i] = true;
            }
        }
        return marked;
    }

    /**
     * The start of an {@code UNAVAILABLE_VALUE} detail for {@code source} whose {@code marked}
     * columns have no value: {@code columns [a, b] carry the connector's unavailable-value
     * placeholder} (A3/A4), or for a partial update ({@link AutoCdcSpec#isPartialUpdateMask})
     * {@code columns [a, b] were not in the MongoDB partial update} (A5); the caller adds why the
     * value cannot be kept.
     */
    String unavailableText(RowData source, boolean[] marked) {
        boolean partial =
                AutoCdcSpec.isPartialUpdateMask(source.getBinary(unavailableIndex), sourceArity);
        return "columns "
                + names(marked)
                + (partial
                        ? " were not in the MongoDB partial update (an update without the full"
                                + " document)"
                        : " carry the connector's unavailable-value placeholder");
    }

    /** The names of the marked target columns, for a quarantine detail. */
    String names(boolean[] marked) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < marked.length; i++) {
            if (marked[i]) {
                names.add(rowType.getFieldNames().get(i));
            }
        }
        return names.toString();
    }

    /** Takes every {@code marked} column of {@code fresh} from {@code stored} (A3/A4). */
    void mergeUnavailable(GenericRowData fresh, RowData stored, boolean[] marked) {
        for (int i = 0; i < marked.length; i++) {
            if (marked[i]) {
                fresh.setField(i, getters[i].getFieldOrNull(stored));
            }
        }
    }

    /** Appends the memcomparable sequence of a source record. */
    void encodeSequence(RowData source, ByteWriter out) {
        sequenceCodec.encode(source, sequencePositions, out);
    }

    /** Appends the projected target row (without SCD2 period columns) of a source record. */
    void encodeRow(RowData source, ByteWriter out) {
        rowCodec.encode(source, projection, out);
    }

    /**
     * Appends the 128-bit hash of the tracked columns of a projected row (positions in the target).
     */
    void hashTracked(RowData projected, boolean isSource, ByteWriter out) {
        trackedBuffer.reset();
        trackedCodec.encode(projected, isSource ? trackedSource : trackedTarget, trackedBuffer);
        Hash128.hash(trackedBuffer.buffer(), 0, trackedBuffer.size(), out);
    }

    GenericRowData decodeRow(byte[] bytes, int off, int len) {
        return rowCodec.decode(bytes, off, len);
    }

    /**
     * IGNORE NULL UPDATES (A3): for every covered column that is null in {@code fresh}, takes the
     * value stored in {@code stored}; a non-null nested ROW is merged field by field the same way.
     */
    void mergeIgnoredNulls(GenericRowData fresh, RowData stored) {
        for (int i = 0; i < getters.length; i++) {
            if (!ignoreNullCovered[i] || stored.isNullAt(i)) {
                continue;
            }
            if (fresh.isNullAt(i)) {
                fresh.setField(i, getters[i].getFieldOrNull(stored));
            } else if (rowType.getTypeAt(i) instanceof RowType) {
                RowType nested = (RowType) rowType.getTypeAt(i);
                mergeNested(
                        (GenericRowData) fresh.getField(i),
                        stored.getRow(i, nested.getFieldCount()),
                        nested);
            }
        }
    }

    private static void mergeNested(GenericRowData fresh, RowData stored, RowType type) {
        for (int i = 0; i < type.getFieldCount(); i++) {
            if (stored.isNullAt(i)) {
                continue;
            }
            LogicalType t = type.getTypeAt(i);
            if (fresh.isNullAt(i)) {
                fresh.setField(i, RowData.createFieldGetter(t, i).getFieldOrNull(stored));
            } else if (t instanceof RowType) {
                RowType nested = (RowType) t;
                mergeNested(
                        (GenericRowData) fresh.getField(i),
                        stored.getRow(i, nested.getFieldCount()),
                        nested);
            }
        }
    }
}

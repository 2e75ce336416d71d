package dev.changeflow.operators;

import dev.changeflow.state.SequenceCodec;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The definition of one REPLACE USING flow (semantics.md S5): {@code REPLACE USING (keys) SEQUENCE
 * BY sequence BY NAME}. Rows in and rows out have the same shape, {@link #rowType()} (the target
 * table's columns, matched by name); there is no primary key, so a key value may have many rows and
 * key columns may be null (a null matches another null).
 *
 * <p>Every column must be of a primitive type (not ROW, ARRAY, MAP or MULTISET): the Iceberg write
 * identifies a target row by all of its columns ({@code StreamingTableSink.replaceUsing}).
 *
 * <p>Instances are immutable; {@link #of} validates and throws {@link AutoCdcException} with the A1
 * code of the first violated rule ({@code EMPTY_KEYS}, {@code KEY_NOT_IN_SOURCE}, {@code
 * EMPTY_SEQUENCE}, {@code SEQUENCE_NOT_IN_SOURCE}, {@code SEQUENCE_NOT_ORDERABLE}, {@code
 * KEY_TYPE_NOT_SUPPORTED} for a non-primitive column).
 */
@PublicEvolving
public final class ReplaceUsingSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String name;
    private final RowType rowType;
    private final List<String> keys;
    private final List<String> sequenceBy;
    private final boolean failOnInvalid;
    private final int[] keyIndexes;
    private final int[] sequenceIndexes;

    private ReplaceUsingSpec(
            String name,
            RowType rowType,
            List<String> keys,
            List<String> sequenceBy,
            boolean failOnInvalid) {
        this.name = name;
        this.rowType = rowType;
        this.keys = List.copyOf(keys);
        this.sequenceBy = List.copyOf(sequenceBy);
        this.failOnInvalid = failOnInvalid;
        this.keyIndexes = indexes(keys, AutoCdcException.Code.KEY_NOT_IN_SOURCE, "REPLACE USING");
        this.sequenceIndexes =
                indexes(sequenceBy, AutoCdcException.Code.SEQUENCE_NOT_IN_SOURCE, "SEQUENCE BY");
    }

    /**
     * A validated definition.
     *
     * @param name the flow's name (operator uid {@code replace-using-<name>}, quarantine rows)
     * @param rowType the rows' (and the target's) columns
     * @param keys the REPLACE USING columns (not empty; nullable columns allowed)
     * @param sequenceBy the SEQUENCE BY columns (not empty; several compare in order, like {@code
     *     STRUCT(a, b)})
     * @param failOnInvalid a row with a null sequence fails the job ({@code on-invalid-record:
     *     fail}) instead of going to the quarantine
     * @throws AutoCdcException as the class comment lists
     */
    public static ReplaceUsingSpec of(
            String name,
            RowType rowType,
            List<String> keys,
            List<String> sequenceBy,
            boolean failOnInvalid) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(rowType, "rowType");
        if (keys == null || keys.isEmpty()) {
            throw new AutoCdcException(
                    AutoCdcException.Code.EMPTY_KEYS,
                    "flow '" + name + "': REPLACE USING needs at least one key column");
        }
        if (sequenceBy == null || sequenceBy.isEmpty()) {
            throw new AutoCdcException(
                    AutoCdcException.Code.EMPTY_SEQUENCE,
                    "flow '"
                            + name
                            + "': REPLACE USING needs SEQUENCE BY (the column that orders the"
                            + " partial snapshots of a key)");
        }
        ReplaceUsingSpec spec =
                new ReplaceUsingSpec(name, rowType, keys, sequenceBy, failOnInvalid);
        for (int i : spec.sequenceIndexes) {
            LogicalType t = rowType.getTypeAt(i);
            if (!SequenceCodec.isOrderable(t)) {
                throw new AutoCdcException(
                        AutoCdcException.Code.SEQUENCE_NOT_ORDERABLE,
                        "flow '"
                                + name
                                + "': SEQUENCE BY column '"
                                + rowType.getFieldNames().get(i)
                                + "' has type "
                                + t.asSummaryString()
                                + ", which cannot be ordered (A1)");
            }
        }
        for (int i = 0; i < rowType.getFieldCount(); i++) {
            switch (rowType.getTypeAt(i).getTypeRoot()) {
                case ROW:
                case ARRAY:
                case MAP:
                case MULTISET:
                case STRUCTURED_TYPE:
                case RAW:
                    throw new AutoCdcException(
                            AutoCdcException.Code.KEY_TYPE_NOT_SUPPORTED,
                            "flow '"
                                    + name
                                    + "': REPLACE USING identifies a target row by all its"
                                    + " columns, and column '"
                                    + rowType.getFieldNames().get(i)
                                    + "' has the non-primitive type "
                                    + rowType.getTypeAt(i).asSummaryString()
                                    + "; select primitive columns only (semantics.md S5)");
                default:
            }
        }
        return spec;
    }

    private int[] indexes(List<String> columns, AutoCdcException.Code code, String clause) {
        int[] out = new int[columns.size()];
        List<String> names = rowType.getFieldNames();
        for (int i = 0; i < out.length; i++) {
            out[i] = names.indexOf(columns.get(i));
            if (out[i] < 0) {
                throw new AutoCdcException(
                        code,
                        "flow '"
                                + name
                                + "': "
                                + clause
                                + " column '"
                                + columns.get(i)
                                + "' is not a column of "
                                + names);
            }
        }
        return out;
    }

    /** The flow's name. */
    public String name() {
        return name;
    }

    /** The columns of the incoming rows and of the target table. */
    public RowType rowType() {
        return rowType;
    }

    /** The REPLACE USING columns. */
    public List<String> keys() {
        return keys;
    }

    /** The SEQUENCE BY columns. */
    public List<String> sequenceBy() {
        return sequenceBy;
    }

    /** Whether a null sequence fails the job (else the row is quarantined). */
    public boolean failOnInvalid() {
        return failOnInvalid;
    }

    /** Positions of the key columns in {@link #rowType()}. */
    public int[] keyIndexes() {
        return keyIndexes.clone();
    }

    /** Positions of the sequence columns in {@link #rowType()}. */
    public int[] sequenceIndexes() {
        return sequenceIndexes.clone();
    }

    /** The sequence type: the single column's type, or a ROW of the sequence columns. */
    public LogicalType sequenceType() {
        if (sequenceIndexes.length == 1) {
            return rowType.getTypeAt(sequenceIndexes[0]);
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (int i : sequenceIndexes) {
            fields.add(rowType.getFields().get(i));
        }
        return new RowType(fields);
    }

    @Override
    public String toString() {
        return "ReplaceUsingSpec{"
                + name
                + ", keys="
                + keys
                + ", sequenceBy="
                + sequenceBy
                + ", columns="
                + rowType.getFieldNames()
                + "}";
    }
}

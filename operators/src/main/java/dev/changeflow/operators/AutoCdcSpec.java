package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The definition of one AUTO CDC flow (semantics.md A1): which source columns are KEYS and SEQUENCE
 * BY, how the target is stored (SCD type 1 or 2), COLUMNS, IGNORE NULL UPDATES, TRACK HISTORY and
 * the delete / truncate predicates.
 *
 * <p><b>Source rows</b> have the shape {@link #sourceType()}: the data columns followed by metadata
 * columns (for Debezium: {@code _op}, {@code _source_lsn}, ...; see {@link #metadataColumns()}). A
 * source row with {@code RowKind.DELETE} is a delete of its key; every other row kind is an upsert.
 * Truncate records travel on their own broadcast stream with the same row shape.
 *
 * <p><b>Target rows</b> have the shape {@link #targetType()}: the projected columns (COLUMNS;
 * metadata columns only when COLUMNS lists them by name), key columns NOT NULL; SCD type 2 appends
 * {@code __START_AT} (NOT NULL) and {@code __END_AT} (nullable), typed exactly as the sequence (a
 * single column's type, or a ROW of the sequence columns for {@code STRUCT(...)}).
 *
 * <p>Instances are immutable; {@link Builder#build()} validates the definition and throws {@link
 * AutoCdcException} with the A1 error code of the first violated rule.
 */
@PublicEvolving
public final class AutoCdcSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    /** SCD type 2 column holding the sequence at which a version starts (inclusive). */
    public static final String START_AT = "__START_AT";

    /**
     * SCD type 2 column holding the sequence at which a version ends (exclusive); null = current.
     */
    public static final String END_AT = "__END_AT";

    /** Prefix reserved for changeflow's internal columns (A1). */
    public static final String RESERVED_PREFIX = "__changeflow_";

    /**
     * Name of the optional source column (BYTES, nullable) in which a decoder marks the data
     * columns whose value the connector did not send (TOAST placeholder, A3/A4 unavailable values):
     * bit {@code i % 8} of byte {@code i / 8} set = source column {@code i} unavailable (its value
     * is null). Null when every value was sent. A source type without this column has no
     * unavailable values. Bit {@code n} (n = the source type's arity, one past the last column) set
     * means the marked columns were absent from a partial update (MongoDB, A5 "MongoDB partial
     * updates") rather than carrying the connector's placeholder ({@link #isPartialUpdateMask},
     * {@link #markPartialUpdate}); it only changes the wording of {@code UNAVAILABLE_VALUE}.
     */
    public static final String UNAVAILABLE_COLUMNS = "_unavailable_columns";

    /**
     * Whether an {@link #UNAVAILABLE_COLUMNS} mask of a source row with {@code sourceArity} columns
     * comes from a partial update (bit {@code sourceArity} set).
     */
    public static boolean isPartialUpdateMask(byte[] mask, int sourceArity) {
        return sourceArity / 8 < mask.length
                && (mask[sourceArity / 8] & (1 << (sourceArity % 8))) != 0;
    }

    /**
     * {@code mask}, grown if needed, with the partial-update bit {@code sourceArity} set (see
     * {@link #UNAVAILABLE_COLUMNS}).
     */
    public static byte[] markPartialUpdate(byte[] mask, int sourceArity) {
        byte[] out =
                mask.length > sourceArity / 8
                        ? mask
                        : java.util.Arrays.copyOf(mask, sourceArity / 8 + 1);
        out[sourceArity / 8] |= (byte) (1 << (sourceArity % 8));
        return out;
    }

    /** Default time a tombstone is kept (A3 Decision: 2 days of processing time). */
    public static final Duration DEFAULT_TOMBSTONE_GC_THRESHOLD = Duration.ofDays(2);

    /**
     * Default of {@code apply-buffer-keys}: keys the keyed operator holds in memory per subtask
     * between checkpoints ({@link AutoCdcApplyOperator}).
     */
    public static final int DEFAULT_APPLY_BUFFER_KEYS = 100_000;

    private final String name;
    private final RowType sourceType;
    private final Set<String> metadataColumns;
    private final List<String> keys;
    private final List<String> sequenceBy;
    private final ScdType scdType;
    private final ColumnSelection columns;
    @Nullable private final ColumnSelection ignoreNullUpdates;
    private final ColumnSelection trackHistory;
    @Nullable private final String deleteWhen;
    @Nullable private final String truncateWhen;
    private final List<Expectation> expectations;
    private final boolean truncateEnabled;
    private final Duration tombstoneGcThreshold;
    private final int applyBufferKeys;
    private final RowType targetType;

    /** Column → serializable Flink type of state without a row-type record; see accessor. */
    private final Map<String, String> unrecordedStateTypes;

    /** {@code o} with {@code unrecordedStateTypes}. */
    private AutoCdcSpec(AutoCdcSpec o, Map<String, String> unrecordedStateTypes) {
        this.name = o.name;
        this.sourceType = o.sourceType;
        this.metadataColumns = o.metadataColumns;
        this.keys = o.keys;
        this.sequenceBy = o.sequenceBy;
        this.scdType = o.scdType;
        this.columns = o.columns;
        this.ignoreNullUpdates = o.ignoreNullUpdates;
        this.trackHistory = o.trackHistory;
        this.deleteWhen = o.deleteWhen;
        this.truncateWhen = o.truncateWhen;
        this.expectations = o.expectations;
        this.truncateEnabled = o.truncateEnabled;
        this.tombstoneGcThreshold = o.tombstoneGcThreshold;
        this.applyBufferKeys = o.applyBufferKeys;
        this.targetType = o.targetType;
        this.unrecordedStateTypes = Map.copyOf(unrecordedStateTypes);
    }

    private AutoCdcSpec(Builder b, RowType targetType) {
        this.unrecordedStateTypes = Map.of();
        this.name = b.name;
        this.sourceType = b.sourceType;
        this.metadataColumns = Set.copyOf(b.metadataColumns);
        this.keys = List.copyOf(b.keys);
        this.sequenceBy = List.copyOf(b.sequenceBy);
        this.scdType = b.scdType;
        this.columns = b.columns;
        this.ignoreNullUpdates = b.ignoreNullUpdates;
        this.trackHistory = b.trackHistory();
        this.deleteWhen = b.deleteWhen;
        this.truncateWhen = b.truncateWhen;
        this.expectations = List.copyOf(b.expectations);
        this.truncateEnabled = b.truncateEnabled || b.truncateWhen != null;
        this.tombstoneGcThreshold = b.tombstoneGcThreshold;
        this.applyBufferKeys = b.applyBufferKeys;
        this.targetType = targetType;
    }

    /**
     * The types, per target column, that keyed state saved without a row-type record (by a release
     * before it, semantics.md A7 item 4) holds its rows in, where they differ from this flow's: the
     * types the table's columns had before this release first widened them (table property {@code
     * changeflow.pre-widening-type.<column>}, serializable Flink SQL type strings). Empty when no
     * column was widened. Not part of the definition ({@link #equals}).
     */
    public Map<String, String> unrecordedStateTypes() {
        return unrecordedStateTypes;
    }

    /** This flow with {@link #unrecordedStateTypes()} {@code types}. */
    public AutoCdcSpec withUnrecordedStateTypes(Map<String, String> types) {
        return types.equals(unrecordedStateTypes) ? this : new AutoCdcSpec(this, types);
    }

    public static Builder builder(String name, RowType sourceType) {
        return new Builder(name, sourceType);
    }

    /** The flow's name (also its id in uids, metrics and the quarantine table). */
    public String name() {
        return name;
    }

    public RowType sourceType() {
        return sourceType;
    }

    /** Source columns that come from the record envelope, not the row (stored only if listed). */
    public Set<String> metadataColumns() {
        return metadataColumns;
    }

    public List<String> keys() {
        return keys;
    }

    public List<String> sequenceBy() {
        return sequenceBy;
    }

    public ScdType scdType() {
        return scdType;
    }

    public ColumnSelection columns() {
        return columns;
    }

    /**
     * Position of {@link #UNAVAILABLE_COLUMNS} in {@link #sourceType()}, or -1 when the source has
     * no such column.
     */
    public int unavailableColumnsIndex() {
        return sourceType.getFieldNames().indexOf(UNAVAILABLE_COLUMNS);
    }

    /** The IGNORE NULL UPDATES clause, or null when the flow does not ignore null updates. */
    @Nullable
    public ColumnSelection ignoreNullUpdates() {
        return ignoreNullUpdates;
    }

    public ColumnSelection trackHistory() {
        return trackHistory;
    }

    /** APPLY AS DELETE WHEN predicate (Flink SQL over source columns), or null. */
    @Nullable
    public String deleteWhen() {
        return deleteWhen;
    }

    /** APPLY AS TRUNCATE WHEN predicate (Flink SQL over source columns), or null. */
    @Nullable
    public String truncateWhen() {
        return truncateWhen;
    }

    /**
     * The data-quality expectations (semantics.md S8), in declaration order; empty for none.
     * Evaluated by {@link AutoCdcPredicates} on upserts before the apply.
     */
    public List<Expectation> expectations() {
        return expectations;
    }

    /**
     * Whether the flow has APPLY AS DELETE / TRUNCATE WHEN or expectations, which {@link
     * AutoCdcPredicates} evaluates with Flink SQL before the keyed apply.
     */
    public boolean hasPredicates() {
        return deleteWhen != null || truncateWhen != null || !expectations.isEmpty();
    }

    /** Whether truncate records are applied (a predicate, or a source with native truncates). */
    public boolean truncateEnabled() {
        return truncateEnabled;
    }

    public Duration tombstoneGcThreshold() {
        return tombstoneGcThreshold;
    }

    /**
     * Keys per subtask whose state and net changes the keyed operator holds in memory until the
     * next checkpoint barrier; reaching it flushes earlier. 0 = no buffering: every record reads
     * and writes the state backend and its changes are emitted at once. See {@link
     * AutoCdcApplyOperator}.
     */
    public int applyBufferKeys() {
        return applyBufferKeys;
    }

    /** The streaming table's row type (see the class comment). */
    public RowType targetType() {
        return targetType;
    }

    /** Positions of the KEYS in {@link #sourceType()}. */
    public int[] keyIndexesInSource() {
        return indexes(sourceType, keys);
    }

    /** Positions of the SEQUENCE BY columns in {@link #sourceType()}. */
    public int[] sequenceIndexesInSource() {
        return indexes(sourceType, sequenceBy);
    }

    /** Positions of the KEYS in {@link #targetType()}. */
    public int[] keyIndexesInTarget() {
        return indexes(targetType, keys);
    }

    /**
     * For each projected target column (without {@code __START_AT}/{@code __END_AT}), its source
     * position.
     */
    public int[] projection() {
        List<String> names = projectedColumns(sourceType, metadataColumns, columns);
        return indexes(sourceType, names);
    }

    /**
     * The Iceberg identifier fields of the target: KEYS, plus {@code __START_AT} for SCD type 2.
     */
    public List<String> identifierFields() {
        List<String> ids = new ArrayList<>(keys);
        if (scdType == ScdType.TYPE_2) {
            ids.add(START_AT);
        }
        return ids;
    }

    /** The logical type of the sequence: the single column's type or a ROW of the columns. */
    public LogicalType sequenceType() {
        return sequenceType(sourceType, sequenceBy);
    }

    static LogicalType sequenceType(RowType source, List<String> sequenceBy) {
        if (sequenceBy.size() == 1) {
            return source.getTypeAt(source.getFieldIndex(sequenceBy.get(0)));
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (String s : sequenceBy) {
            fields.add(new RowType.RowField(s, source.getTypeAt(source.getFieldIndex(s))));
        }
        return new RowType(fields);
    }

    static List<String> projectedColumns(
            RowType source, Collection<String> metadata, ColumnSelection columns) {
        List<String> out = new ArrayList<>();
        for (String f : source.getFieldNames()) {
            boolean meta = metadata.contains(f);
            boolean selected =
                    meta
                            ? columns.mode() == ColumnSelection.Mode.INCLUDE
                                    && columns.columns().contains(f)
                            : columns.selects(f);
            if (selected) {
                out.add(f);
            }
        }
        return out;
    }

    static int[] indexes(RowType type, List<String> names) {
        int[] idx = new int[names.size()];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = type.getFieldIndex(names.get(i));
        }
        return idx;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AutoCdcSpec)) {
            return false;
        }
        AutoCdcSpec s = (AutoCdcSpec) o;
        return name.equals(s.name)
                && sourceType.equals(s.sourceType)
                && metadataColumns.equals(s.metadataColumns)
                && keys.equals(s.keys)
                && sequenceBy.equals(s.sequenceBy)
                && scdType == s.scdType
                && columns.equals(s.columns)
                && Objects.equals(ignoreNullUpdates, s.ignoreNullUpdates)
                && trackHistory.equals(s.trackHistory)
                && Objects.equals(deleteWhen, s.deleteWhen)
                && Objects.equals(truncateWhen, s.truncateWhen)
                && expectations.equals(s.expectations)
                && truncateEnabled == s.truncateEnabled
                && tombstoneGcThreshold.equals(s.tombstoneGcThreshold)
                && applyBufferKeys == s.applyBufferKeys;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, sourceType, keys, sequenceBy, scdType);
    }

    @Override
    public String toString() {
        return "AUTO CDC flow '"
                + name
                + "' KEYS ("
                + String.join(", ", keys)
                + ") SEQUENCE BY "
                + (sequenceBy.size() == 1
                        ? sequenceBy.get(0)
                        : "STRUCT(" + String.join(", ", sequenceBy) + ")")
                + " COLUMNS "
                + columns
                + " STORED AS SCD "
                + scdType;
    }

    /** Builder of {@link AutoCdcSpec}; {@link #build()} validates (A1). */
    @PublicEvolving
    public static final class Builder {
        private final String name;
        private final RowType sourceType;
        private final Set<String> metadataColumns = new LinkedHashSet<>();
        private List<String> keys = List.of();
        private List<String> sequenceBy = List.of();
        private ScdType scdType = ScdType.TYPE_1;
        private ColumnSelection columns = ColumnSelection.all();
        @Nullable private ColumnSelection ignoreNullUpdates;
        @Nullable private ColumnSelection trackHistory;
        @Nullable private String deleteWhen;
        @Nullable private String truncateWhen;
        private List<Expectation> expectations = List.of();
        private boolean truncateEnabled;
        private Duration tombstoneGcThreshold = DEFAULT_TOMBSTONE_GC_THRESHOLD;
        private int applyBufferKeys = DEFAULT_APPLY_BUFFER_KEYS;

        private Builder(String name, RowType sourceType) {
            this.name = Objects.requireNonNull(name, "name");
            this.sourceType = Objects.requireNonNull(sourceType, "sourceType");
        }

        public Builder metadataColumns(Collection<String> names) {
            metadataColumns.addAll(names);
            return this;
        }

        public Builder keys(List<String> keys) {
            this.keys = List.copyOf(keys);
            return this;
        }

        public Builder keys(String... keys) {
            return keys(List.of(keys));
        }

        /**
         * One column, or several for {@code SEQUENCE BY STRUCT(a, b)} (compared field by field).
         */
        public Builder sequenceBy(List<String> columns) {
            this.sequenceBy = List.copyOf(columns);
            return this;
        }

        public Builder sequenceBy(String... columns) {
            return sequenceBy(List.of(columns));
        }

        public Builder scdType(ScdType scdType) {
            this.scdType = Objects.requireNonNull(scdType);
            return this;
        }

        public Builder columns(ColumnSelection columns) {
            this.columns = Objects.requireNonNull(columns);
            return this;
        }

        /** IGNORE NULL UPDATES (all columns: {@link ColumnSelection#all()}); null turns it off. */
        public Builder ignoreNullUpdates(@Nullable ColumnSelection columns) {
            this.ignoreNullUpdates = columns;
            return this;
        }

        public Builder trackHistory(@Nullable ColumnSelection columns) {
            this.trackHistory = columns;
            return this;
        }

        public Builder deleteWhen(@Nullable String predicate) {
            this.deleteWhen = predicate;
            return this;
        }

        public Builder truncateWhen(@Nullable String predicate) {
            this.truncateWhen = predicate;
            return this;
        }

        /**
         * The data-quality expectations (semantics.md S8), replacing earlier ones; names must be
         * distinct ({@link #build()} checks).
         */
        public Builder expectations(List<Expectation> expectations) {
            this.expectations = List.copyOf(expectations);
            return this;
        }

        /** Enables truncate records that the source decodes natively (Debezium {@code op = t}). */
        public Builder truncateEnabled(boolean enabled) {
            this.truncateEnabled = enabled;
            return this;
        }

        public Builder tombstoneGcThreshold(Duration threshold) {
            this.tombstoneGcThreshold = Objects.requireNonNull(threshold);
            return this;
        }

        /**
         * See {@link AutoCdcSpec#applyBufferKeys()}.
         *
         * @throws IllegalArgumentException when negative
         */
        public Builder applyBufferKeys(int keys) {
            if (keys < 0) {
                throw new IllegalArgumentException(
                        "apply-buffer-keys must be 0 (no buffering) or positive, got " + keys);
            }
            this.applyBufferKeys = keys;
            return this;
        }

        /**
         * Validates the definition (A1) and derives the target row type.
         *
         * @throws AutoCdcException with the error code of the first violated rule
         */
        public AutoCdcSpec build() {
            AutoCdcSpecValidator.validate(this);
            RowType target = AutoCdcSpecValidator.targetType(this);
            return new AutoCdcSpec(this, target);
        }

        // accessors for the validator
        String name() {
            return name;
        }

        RowType sourceType() {
            return sourceType;
        }

        Set<String> metadataColumns() {
            return metadataColumns;
        }

        List<String> keys() {
            return keys;
        }

        List<String> sequenceBy() {
            return sequenceBy;
        }

        ScdType scdType() {
            return scdType;
        }

        ColumnSelection columns() {
            return columns;
        }

        @Nullable
        ColumnSelection ignoreNullUpdates() {
            return ignoreNullUpdates;
        }

        @Nullable
        ColumnSelection trackHistoryOrNull() {
            return trackHistory;
        }

        ColumnSelection trackHistory() {
            return trackHistory == null ? ColumnSelection.all() : trackHistory;
        }

        @Nullable
        String truncateWhen() {
            return truncateWhen;
        }

        boolean truncateEnabled() {
            return truncateEnabled;
        }

        List<Expectation> expectations() {
            return expectations;
        }
    }
}

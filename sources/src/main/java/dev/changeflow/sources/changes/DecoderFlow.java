package dev.changeflow.sources.changes;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Per-flow routing and typing for {@link ChangeRecordDecoder} (semantics.md A5).
 *
 * <p><b>Routing.</b> A record belongs to this flow when one of {@link #sourceNames()} equals the
 * record's full topic, its Debezium {@code source.schema + "." + source.table}, its {@code
 * source.table}, or the last dot-separated segment of its topic (in that order of precedence; the
 * topic is the Kafka topic or the capture line's {@code topic} field). A flow with no source names
 * is a catch-all: it takes every record no other flow claims.
 *
 * <p><b>Row shape.</b> {@link #sourceType()} = {@link #dataType()} followed, for {@link
 * ChangeRecordFormat#DEBEZIUM_JSON}, by {@link DebeziumMetadata#FIELDS}; for {@link
 * ChangeRecordFormat#JSON} it is {@link #dataType()}.
 *
 * <p><b>Keys and sequence.</b> KEYS are data columns; SEQUENCE BY names columns of {@link
 * #sourceType()} (metadata columns allowed; user spellings such as {@code source.lsn} are resolved
 * with {@link DebeziumMetadata#resolveAlias}). A Debezium flow's SEQUENCE BY may also name
 * sequence-only columns — {@code log_position} and any {@code source.<member>} — which are appended
 * to {@link #sourceType()} after the metadata columns ({@link #sequenceOnlyColumns()}). A keyed
 * Debezium flow without SEQUENCE BY defaults to {@link DebeziumMetadata#defaultSequence} of the
 * {@link Builder#connector} its records come from: {@code _source_lsn} for PostgreSQL or an unknown
 * connector, {@code _log_position} for the others (A5). A keyed plain-JSON flow must name its
 * sequence.
 *
 * <p><b>Append-only flows</b> have no KEYS (for example {@code pgbench_history}, whose record key
 * is null): Debezium {@code c} and {@code r} records are emitted as inserts; Decision: {@code u}
 * and {@code d} cannot be applied without a key and are quarantined with {@code UNKNOWN_OP} (detail
 * "... on append-only flow"); {@code t} follows {@link #truncateEnabled()} like any flow. Plain
 * JSON records are all inserts.
 *
 * <p>Instances are immutable and serializable; build them with {@link #builder}.
 */
@PublicEvolving
public final class DecoderFlow implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Default {@link #maxRecordBytes()}: 8 MiB. */
    public static final int DEFAULT_MAX_RECORD_BYTES = 8 * 1024 * 1024;

    /**
     * Default {@link #unavailablePlaceholder()}: Debezium's default {@code
     * unavailable.value.placeholder}.
     */
    public static final String DEFAULT_UNAVAILABLE_PLACEHOLDER = "__debezium_unavailable_value";

    private final String flowId;
    private final ChangeRecordFormat format;
    private final List<String> sourceNames;
    private final RowType dataType;
    private final RowType sourceType;
    private final List<String> keys;
    private final List<String> sequenceBy;
    private final boolean truncateEnabled;
    private final boolean appendOnly;
    private final OnSchemaChange onSchemaChange;
    private final OnInvalidRecord onInvalidRecord;
    private final int maxRecordBytes;
    private final String unavailablePlaceholder;

    private DecoderFlow(Builder b, RowType sourceType, List<String> sequenceBy) {
        this.flowId = b.flowId;
        this.format = b.format;
        this.sourceNames = List.copyOf(b.sourceNames);
        this.dataType = b.dataType;
        this.sourceType = sourceType;
        this.keys = List.copyOf(b.keys);
        this.sequenceBy = List.copyOf(sequenceBy);
        this.truncateEnabled = b.truncateEnabled;
        this.appendOnly = b.appendOnly;
        this.onSchemaChange = b.onSchemaChange;
        this.onInvalidRecord = b.onInvalidRecord;
        this.maxRecordBytes = b.maxRecordBytes;
        this.unavailablePlaceholder = b.unavailablePlaceholder;
    }

    /**
     * Starts a flow definition.
     *
     * @param flowId the flow's id (its name in metrics, uids and the quarantine table)
     * @param format the records' format
     * @param dataType the data columns (from a declared DDL column list, or {@link SchemaSampler})
     */
    public static Builder builder(String flowId, ChangeRecordFormat format, RowType dataType) {
        return new Builder(flowId, format, dataType);
    }

    public String flowId() {
        return flowId;
    }

    public ChangeRecordFormat format() {
        return format;
    }

    /** Table / topic names routed to this flow; empty = catch-all. */
    public List<String> sourceNames() {
        return sourceNames;
    }

    /** The data columns. */
    public RowType dataType() {
        return dataType;
    }

    /**
     * The decoded row shape: data columns, then (Debezium) {@link DebeziumMetadata#FIELDS}, then
     * {@link #sequenceOnlyColumns()}.
     */
    public RowType sourceType() {
        return sourceType;
    }

    /**
     * Names of the metadata columns in {@link #sourceType()}: {@link DebeziumMetadata#NAMES} and
     * {@link #sequenceOnlyColumns()} (empty for plain JSON).
     */
    public Set<String> metadataColumns() {
        if (format != ChangeRecordFormat.DEBEZIUM_JSON) {
            return Set.of();
        }
        List<String> extra = sequenceOnlyColumns();
        if (extra.isEmpty()) {
            return DebeziumMetadata.NAMES;
        }
        Set<String> all = new LinkedHashSet<>(DebeziumMetadata.NAMES);
        all.addAll(extra);
        return all;
    }

    /**
     * The sequence-only columns of a Debezium flow, in {@link #sourceType()} order after {@link
     * DebeziumMetadata#FIELDS}: {@code _log_position} and {@code _source_<member>} columns its
     * SEQUENCE BY names (A5); empty for plain JSON.
     */
    public List<String> sequenceOnlyColumns() {
        int from =
                format == ChangeRecordFormat.DEBEZIUM_JSON
                        ? dataType.getFieldCount() + DebeziumMetadata.FIELDS.size()
                        : sourceType.getFieldCount();
        List<String> names = sourceType.getFieldNames();
        return names.subList(from, names.size());
    }

    /** KEYS (data columns); empty exactly when {@link #appendOnly()}. */
    public List<String> keys() {
        return keys;
    }

    /**
     * SEQUENCE BY columns of {@link #sourceType()} (aliases resolved); may be empty only when
     * append-only.
     */
    public List<String> sequenceBy() {
        return sequenceBy;
    }

    /**
     * Whether Debezium truncates ({@code op = t}) are emitted; else they are quarantined {@code
     * TRUNCATE_NOT_ENABLED}.
     */
    public boolean truncateEnabled() {
        return truncateEnabled;
    }

    public boolean appendOnly() {
        return appendOnly;
    }

    public OnSchemaChange onSchemaChange() {
        return onSchemaChange;
    }

    public OnInvalidRecord onInvalidRecord() {
        return onInvalidRecord;
    }

    /**
     * Largest accepted record in bytes (the raw line / Kafka value); larger → {@code
     * RECORD_TOO_LARGE}.
     */
    public int maxRecordBytes() {
        return maxRecordBytes;
    }

    /**
     * The connector's {@code unavailable.value.placeholder} (Debezium flows; A3, A4, A5): a value
     * of an {@code after} image equal to it — a string, a base64 string of its UTF-8 bytes for a
     * BYTES column, or a one-element array of either — is not the column's value but "unchanged,
     * not sent" (PostgreSQL TOAST); the decoder nulls the column and marks it in {@link
     * DebeziumMetadata#UNAVAILABLE}.
     */
    public String unavailablePlaceholder() {
        return unavailablePlaceholder;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DecoderFlow)) {
            return false;
        }
        DecoderFlow f = (DecoderFlow) o;
        return flowId.equals(f.flowId)
                && format == f.format
                && sourceNames.equals(f.sourceNames)
                && dataType.equals(f.dataType)
                && keys.equals(f.keys)
                && sequenceBy.equals(f.sequenceBy)
                && truncateEnabled == f.truncateEnabled
                && appendOnly == f.appendOnly
                && onSchemaChange == f.onSchemaChange
                && onInvalidRecord == f.onInvalidRecord
                && maxRecordBytes == f.maxRecordBytes
                && unavailablePlaceholder.equals(f.unavailablePlaceholder);
    }

    @Override
    public int hashCode() {
        return Objects.hash(flowId, format, sourceNames, dataType, keys, sequenceBy);
    }

    @Override
    public String toString() {
        return "DecoderFlow{"
                + flowId
                + ", "
                + format.configName()
                + ", sources="
                + sourceNames
                + ", keys="
                + keys
                + ", sequenceBy="
                + sequenceBy
                + ", dataType="
                + dataType
                + (appendOnly ? ", append-only" : "")
                + (truncateEnabled ? ", truncate" : "")
                + ", on-schema-change="
                + onSchemaChange.configName()
                + ", on-invalid-record="
                + onInvalidRecord.configName()
                + ", max-record-bytes="
                + maxRecordBytes
                + "}";
    }

    /**
     * Builder of {@link DecoderFlow}; {@link #build()} validates and throws {@link
     * IllegalArgumentException}.
     */
    @PublicEvolving
    public static final class Builder {
        private final String flowId;
        private final ChangeRecordFormat format;
        private final RowType dataType;
        private List<String> sourceNames = List.of();
        private List<String> keys = List.of();
        private List<String> sequenceBy = List.of();
        private boolean truncateEnabled;
        private boolean appendOnly;
        private OnSchemaChange onSchemaChange = OnSchemaChange.FAIL;
        private OnInvalidRecord onInvalidRecord = OnInvalidRecord.QUARANTINE;
        private int maxRecordBytes = DEFAULT_MAX_RECORD_BYTES;
        private String connector;
        private String unavailablePlaceholder = DEFAULT_UNAVAILABLE_PLACEHOLDER;

        private Builder(String flowId, ChangeRecordFormat format, RowType dataType) {
            this.flowId = Objects.requireNonNull(flowId, "flowId");
            this.format = Objects.requireNonNull(format, "format");
            this.dataType = Objects.requireNonNull(dataType, "dataType");
        }

        public Builder sourceNames(List<String> names) {
            this.sourceNames = List.copyOf(names);
            return this;
        }

        public Builder sourceNames(String... names) {
            return sourceNames(List.of(names));
        }

        public Builder keys(List<String> keys) {
            this.keys = List.copyOf(keys);
            return this;
        }

        public Builder keys(String... keys) {
            return keys(List.of(keys));
        }

        /**
         * One column or several ({@code STRUCT(a, b)}); Debezium aliases such as {@code source.lsn}
         * allowed.
         */
        public Builder sequenceBy(List<String> columns) {
            this.sequenceBy = List.copyOf(columns);
            return this;
        }

        public Builder sequenceBy(String... columns) {
            return sequenceBy(List.of(columns));
        }

        /**
         * The Debezium connector ({@code source.connector}: postgresql, mysql, ...) the records
         * come from, when known; it chooses the default sequence ({@link
         * DebeziumMetadata#defaultSequence}, A5). Null (the default): PostgreSQL's.
         */
        public Builder connector(String connector) {
            this.connector = connector;
            return this;
        }

        public Builder truncateEnabled(boolean enabled) {
            this.truncateEnabled = enabled;
            return this;
        }

        /** Marks the flow append-only (requires no KEYS). */
        public Builder appendOnly(boolean appendOnly) {
            this.appendOnly = appendOnly;
            return this;
        }

        public Builder onSchemaChange(OnSchemaChange mode) {
            this.onSchemaChange = Objects.requireNonNull(mode);
            return this;
        }

        public Builder onInvalidRecord(OnInvalidRecord mode) {
            this.onInvalidRecord = Objects.requireNonNull(mode);
            return this;
        }

        public Builder maxRecordBytes(int maxRecordBytes) {
            this.maxRecordBytes = maxRecordBytes;
            return this;
        }

        /** See {@link DecoderFlow#unavailablePlaceholder()}; must not be empty. */
        public Builder unavailablePlaceholder(String placeholder) {
            this.unavailablePlaceholder = Objects.requireNonNull(placeholder, "placeholder");
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the flow and the offending option / column: empty
         *     flow id; a data column named like a metadata column; a column type the JSON decoder
         *     cannot produce; KEYS not data columns; KEYS empty without append-only, or KEYS with
         *     append-only; SEQUENCE BY missing from the source columns; a keyed plain-JSON flow
         *     without SEQUENCE BY; max-record-bytes not positive; an empty
         *     unavailable-value-placeholder
         */
        public DecoderFlow build() {
            String where = "flow '" + flowId + "': ";
            if (flowId.isBlank()) {
                throw new IllegalArgumentException("flow id must not be blank");
            }
            if (unavailablePlaceholder.isEmpty()) {
                throw new IllegalArgumentException(
                        where + "unavailable-value-placeholder must not be empty");
            }
            if (maxRecordBytes <= 0) {
                throw new IllegalArgumentException(
                        where + "max-record-bytes must be > 0, got " + maxRecordBytes);
            }
            List<RowType.RowField> fields = new ArrayList<>(dataType.getFields());
            Set<String> dataNames = new LinkedHashSet<>(dataType.getFieldNames());
            for (RowType.RowField f : dataType.getFields()) {
                checkSupported(where, f.getName(), f.getType());
            }
            if (format == ChangeRecordFormat.DEBEZIUM_JSON) {
                for (String n : dataNames) {
                    if (DebeziumMetadata.NAMES.contains(n)) {
                        throw new IllegalArgumentException(
                                where
                                        + "data column '"
                                        + n
                                        + "' clashes with the Debezium metadata column of the same name; rename it");
                    }
                }
                fields.addAll(DebeziumMetadata.FIELDS);
            }
            RowType sourceType = new RowType(fields);
            if (appendOnly && !keys.isEmpty()) {
                throw new IllegalArgumentException(
                        where + "an append-only flow has no KEYS, got " + keys);
            }
            if (!appendOnly && keys.isEmpty()) {
                throw new IllegalArgumentException(
                        where + "KEYS must not be empty (or mark the flow append-only)");
            }
            for (String k : keys) {
                if (!dataNames.contains(k)) {
                    throw new IllegalArgumentException(
                            where
                                    + "key column '"
                                    + k
                                    + "' is not a data column; data columns: "
                                    + dataNames);
                }
            }
            List<String> seq = new ArrayList<>();
            for (String s : sequenceBy) {
                seq.add(
                        format == ChangeRecordFormat.DEBEZIUM_JSON && !dataNames.contains(s)
                                ? DebeziumMetadata.resolveAlias(s)
                                : s);
            }
            if (seq.isEmpty() && !appendOnly) {
                if (format == ChangeRecordFormat.DEBEZIUM_JSON) {
                    seq.addAll(DebeziumMetadata.defaultSequence(connector));
                } else {
                    throw new IllegalArgumentException(
                            where + "SEQUENCE BY is required for a keyed plain-JSON flow");
                }
            }
            if (format == ChangeRecordFormat.DEBEZIUM_JSON) {
                // sequence-only columns (A5): the log position and other members of source
                for (String s : seq) {
                    if (sourceType.getFieldIndex(s) >= 0
                            || fields.stream().anyMatch(f -> f.getName().equals(s))) {
                        continue;
                    }
                    if (s.equals(DebeziumMetadata.LOG_POSITION)) {
                        fields.add(new RowType.RowField(s, VarCharType.STRING_TYPE));
                    } else if (DebeziumMetadata.sourceMember(s) != null) {
                        fields.add(
                                new RowType.RowField(
                                        s,
                                        DebeziumMetadata.sourceMemberType(
                                                DebeziumMetadata.sourceMember(s))));
                    }
                }
                sourceType = new RowType(fields);
            }
            for (String s : seq) {
                if (sourceType.getFieldIndex(s) < 0) {
                    throw new IllegalArgumentException(
                            where
                                    + "SEQUENCE BY column '"
                                    + s
                                    + "' is not a source column; source columns: "
                                    + sourceType.getFieldNames());
                }
            }
            return new DecoderFlow(this, sourceType, seq);
        }

        private static void checkSupported(String where, String column, LogicalType type) {
            switch (type.getTypeRoot()) {
                case BOOLEAN:
                case TINYINT:
                case SMALLINT:
                case INTEGER:
                case BIGINT:
                case FLOAT:
                case DOUBLE:
                case DECIMAL:
                case CHAR:
                case VARCHAR:
                case BINARY:
                case VARBINARY:
                case DATE:
                case TIME_WITHOUT_TIME_ZONE:
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                    return;
                case ROW:
                    for (RowType.RowField f : ((RowType) type).getFields()) {
                        checkSupported(where, column + "." + f.getName(), f.getType());
                    }
                    return;
                case ARRAY:
                    checkSupported(where, column + "[]", ((ArrayType) type).getElementType());
                    return;
                case MAP:
                    MapType m = (MapType) type;
                    if (!m.getKeyType().is(LogicalTypeFamily.CHARACTER_STRING)) {
                        throw new IllegalArgumentException(
                                where
                                        + "column '"
                                        + column
                                        + "' has type "
                                        + type
                                        + "; JSON maps need string keys");
                    }
                    checkSupported(where, column + "{}", m.getValueType());
                    return;
                default:
                    throw new IllegalArgumentException(
                            where
                                    + "column '"
                                    + column
                                    + "' has type "
                                    + type
                                    + ", which the JSON decoder does not produce");
            }
        }
    }
}

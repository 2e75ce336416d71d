package dev.changeflow.operators;

import dev.changeflow.operators.AutoCdcException.Code;
import dev.changeflow.state.SequenceCodec;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.BinaryType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Definition-time checks of semantics.md A1 (and A5's key-type rule) and derivation of the target
 * row type. Every rule has its own {@link AutoCdcException.Code}; messages name the flow, the
 * clause, the offending column / type and the fix. Rules are checked in this order, and the first
 * violation is thrown:
 *
 * <ol>
 *   <li>{@code EMPTY_KEYS}: KEYS lists no column;
 *   <li>{@code KEY_NOT_IN_SOURCE}: a KEYS column is not in the source schema;
 *   <li>{@code KEY_TYPE_NOT_SUPPORTED}: a KEYS column is FLOAT/DOUBLE (no reliable equality) or
 *       nested / non-atomic (ROW, ARRAY, MAP, MULTISET, RAW, ...);
 *   <li>{@code EMPTY_SEQUENCE}: SEQUENCE BY lists no column;
 *   <li>{@code SEQUENCE_NOT_IN_SOURCE}: a SEQUENCE BY column is not in the source schema;
 *   <li>{@code SEQUENCE_NOT_ORDERABLE}: a SEQUENCE BY column's type is not orderable (A1: integers,
 *       decimals, dates, times, timestamps, strings, booleans; a ROW-typed column is rejected too:
 *       a struct sequence is written {@code STRUCT(a, b)} over top-level columns);
 *   <li>{@code UNKNOWN_COLUMN}: COLUMNS names a column that is not in the source;
 *   <li>{@code KEY_DROPPED_BY_COLUMNS}: COLUMNS removes a KEYS column;
 *   <li>{@code TRUNCATE_REQUIRES_SCD1}: APPLY AS TRUNCATE WHEN / native truncates with SCD type 2;
 *   <li>{@code TRACK_HISTORY_REQUIRES_SCD2}: TRACK HISTORY with SCD type 1;
 *   <li>{@code UNKNOWN_COLUMN}: IGNORE NULL UPDATES ON / TRACK HISTORY ON names a column that is
 *       not a target column;
 *   <li>{@code RESERVED_COLUMN_NAME}: a target column named {@code __START_AT} / {@code __END_AT}
 *       (SCD type 2) or starting with {@code __changeflow_} (any type); case-insensitive.
 * </ol>
 *
 * <p>{@link #validateExistingTarget(AutoCdcSpec, RowType)} checks an existing table against the
 * flow ({@code TARGET_SCHEMA_MISMATCH}).
 */
@Internal
public final class AutoCdcSpecValidator {
    private AutoCdcSpecValidator() {}

    static void validate(AutoCdcSpec.Builder b) {
        String flow = "flow '" + b.name() + "'";
        RowType source = b.sourceType();
        List<String> sourceNames = source.getFieldNames();

        if (b.keys().isEmpty()) {
            throw new AutoCdcException(
                    Code.EMPTY_KEYS, flow + ": KEYS must name at least one column");
        }
        for (String k : b.keys()) {
            if (!sourceNames.contains(k)) {
                throw new AutoCdcException(
                        Code.KEY_NOT_IN_SOURCE,
                        flow
                                + ": KEYS column '"
                                + k
                                + "' is not in the source schema "
                                + sourceNames
                                + "; name an existing column");
            }
            LogicalType t = source.getTypeAt(source.getFieldIndex(k));
            if (!isSupportedKeyType(t)) {
                throw new AutoCdcException(
                        Code.KEY_TYPE_NOT_SUPPORTED,
                        flow
                                + ": KEYS column '"
                                + k
                                + "' has type "
                                + t.asSummaryString()
                                + ", which cannot be a key (FLOAT/DOUBLE and nested types are not supported);"
                                + " use an integer, decimal, string, binary, date, time or timestamp column");
            }
        }
        java.util.Set<String> expectationNames = new java.util.HashSet<>();
        for (Expectation e : b.expectations()) {
            if (!expectationNames.add(e.name().toLowerCase(java.util.Locale.ROOT))) {
                throw new AutoCdcException(
                        Code.DUPLICATE_EXPECTATION,
                        flow
                                + ": two expectations are named '"
                                + e.name()
                                + "'; give each CONSTRAINT its own name (S8)");
            }
        }
        if (b.sequenceBy().isEmpty()) {
            throw new AutoCdcException(
                    Code.EMPTY_SEQUENCE,
                    flow + ": SEQUENCE BY must name a column or STRUCT(...) of columns");
        }
        for (String s : b.sequenceBy()) {
            if (!sourceNames.contains(s)) {
                throw new AutoCdcException(
                        Code.SEQUENCE_NOT_IN_SOURCE,
                        flow
                                + ": SEQUENCE BY column '"
                                + s
                                + "' is not in the source schema "
                                + sourceNames
                                + "; name an existing column (Debezium: _source_lsn)");
            }
            LogicalType t = source.getTypeAt(source.getFieldIndex(s));
            if (!SequenceCodec.isOrderable(t)) {
                throw new AutoCdcException(
                        Code.SEQUENCE_NOT_ORDERABLE,
                        flow
                                + ": SEQUENCE BY column '"
                                + s
                                + "' has type "
                                + t.asSummaryString()
                                + ", which is not orderable; use an integer, decimal, date, time, timestamp,"
                                + " string or boolean column, or STRUCT(...) of such columns");
            }
        }
        if (b.columns().mode() != ColumnSelection.Mode.ALL) {
            for (String c : b.columns().columns()) {
                if (!sourceNames.contains(c)) {
                    throw new AutoCdcException(
                            Code.UNKNOWN_COLUMN,
                            flow
                                    + ": COLUMNS "
                                    + b.columns()
                                    + " names '"
                                    + c
                                    + "', which is not in the source schema "
                                    + sourceNames);
                }
            }
        }
        List<String> projected =
                AutoCdcSpec.projectedColumns(source, b.metadataColumns(), b.columns());
        for (String k : b.keys()) {
            if (!projected.contains(k)) {
                throw new AutoCdcException(
                        Code.KEY_DROPPED_BY_COLUMNS,
                        flow
                                + ": COLUMNS "
                                + b.columns()
                                + " drops KEYS column '"
                                + k
                                + "'; every key must stay in the target");
            }
        }
        if (b.scdType() == ScdType.TYPE_2 && (b.truncateWhen() != null || b.truncateEnabled())) {
            throw new AutoCdcException(
                    Code.TRUNCATE_REQUIRES_SCD1,
                    flow
                            + ": APPLY AS TRUNCATE WHEN (or truncate records) requires STORED AS SCD TYPE 1;"
                            + " remove the truncate clause or store as SCD TYPE 1");
        }
        if (b.scdType() == ScdType.TYPE_1 && b.trackHistoryOrNull() != null) {
            throw new AutoCdcException(
                    Code.TRACK_HISTORY_REQUIRES_SCD2,
                    flow
                            + ": TRACK HISTORY ON "
                            + b.trackHistoryOrNull()
                            + " requires STORED AS SCD TYPE 2; remove it or store as SCD TYPE 2");
        }
        checkListed(flow, "IGNORE NULL UPDATES ON", b.ignoreNullUpdates(), projected);
        checkListed(flow, "TRACK HISTORY ON", b.trackHistoryOrNull(), projected);
        for (String c : projected) {
            String upper = c.toUpperCase(Locale.ROOT);
            if (upper.startsWith(AutoCdcSpec.RESERVED_PREFIX.toUpperCase(Locale.ROOT))) {
                throw new AutoCdcException(
                        Code.RESERVED_COLUMN_NAME,
                        flow
                                + ": target column '"
                                + c
                                + "' uses the reserved prefix '"
                                + AutoCdcSpec.RESERVED_PREFIX
                                + "'; rename it or drop it with COLUMNS * EXCEPT");
            }
            if (b.scdType() == ScdType.TYPE_2
                    && (upper.equals(AutoCdcSpec.START_AT) || upper.equals(AutoCdcSpec.END_AT))) {
                throw new AutoCdcException(
                        Code.RESERVED_COLUMN_NAME,
                        flow
                                + ": target column '"
                                + c
                                + "' clashes with SCD TYPE 2's "
                                + AutoCdcSpec.START_AT
                                + "/"
                                + AutoCdcSpec.END_AT
                                + "; rename it or drop it with COLUMNS * EXCEPT");
            }
        }
    }

    private static void checkListed(
            String flow, String clause, ColumnSelection sel, List<String> projected) {
        if (sel == null || sel.mode() == ColumnSelection.Mode.ALL) {
            return;
        }
        for (String c : sel.columns()) {
            if (!projected.contains(c)) {
                throw new AutoCdcException(
                        Code.UNKNOWN_COLUMN,
                        flow
                                + ": "
                                + clause
                                + " "
                                + sel
                                + " names '"
                                + c
                                + "', which is not a target column "
                                + projected);
            }
        }
    }

    private static boolean isSupportedKeyType(LogicalType t) {
        switch (t.getTypeRoot()) {
            case BOOLEAN:
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case DECIMAL:
            case CHAR:
            case VARCHAR:
            case BINARY:
            case VARBINARY:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return true;
            default:
                return false;
        }
    }

    static RowType targetType(AutoCdcSpec.Builder b) {
        RowType source = b.sourceType();
        List<String> names = AutoCdcSpec.projectedColumns(source, b.metadataColumns(), b.columns());
        List<RowType.RowField> fields = new ArrayList<>();
        for (String n : names) {
            var t = source.getTypeAt(source.getFieldIndex(n));
            fields.add(new RowType.RowField(n, b.keys().contains(n) ? t.copy(false) : t));
        }
        if (b.scdType() == ScdType.TYPE_2) {
            var seq = AutoCdcSpec.sequenceType(source, b.sequenceBy());
            fields.add(new RowType.RowField(AutoCdcSpec.START_AT, notNullDeep(seq)));
            fields.add(new RowType.RowField(AutoCdcSpec.END_AT, seq.copy(true)));
        }
        return new RowType(fields);
    }

    /**
     * {@code type} as NOT NULL; a ROW (multi-column SEQUENCE BY) with NOT NULL fields as well: they
     * become Iceberg identifier fields of the SCD type 2 target (A4), and a sequence never holds a
     * null (A2 {@code NULL_SEQUENCE} quarantines such records before the operator).
     */
    static LogicalType notNullDeep(LogicalType type) {
        if (!(type instanceof RowType)) {
            return type.copy(false);
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (RowType.RowField f : ((RowType) type).getFields()) {
            fields.add(new RowType.RowField(f.getName(), notNullDeep(f.getType())));
        }
        return new RowType(false, fields);
    }

    /**
     * Checks that an existing target table can hold the flow's rows (A1, S1). {@code existing} is
     * the table's schema as a Flink {@link RowType} (for Iceberg: {@code FlinkSchemaUtil.convert}).
     *
     * <p>Columns are matched by name (order does not matter). Both sides' types are compared after
     * normalizing what an Iceberg round trip changes (CHAR/VARCHAR(n) → STRING, TINYINT/SMALLINT →
     * INT, VARBINARY(n) → BYTES, TIMESTAMP / TIMESTAMP_LTZ precision 0..6 → 6, TIME precision → 0),
     * recursively in nested types; nullability is ignored except that a NOT NULL table column must
     * be NOT NULL in the flow's target (a nullable value cannot be written into it). For SCD type
     * 2, {@code __START_AT} and {@code __END_AT} must have exactly the sequence type (after the
     * same normalization).
     *
     * @throws AutoCdcException {@code TARGET_SCHEMA_MISMATCH} listing every missing, unexpected and
     *     mismatching column
     */
    @PublicEvolving
    public static void validateExistingTarget(AutoCdcSpec spec, RowType existing) {
        RowType target = spec.targetType();
        Map<String, LogicalType> have = new LinkedHashMap<>();
        for (RowType.RowField f : existing.getFields()) {
            have.put(f.getName(), f.getType());
        }
        List<String> problems = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (RowType.RowField f : target.getFields()) {
            String name = f.getName();
            seen.add(name);
            LogicalType actual = have.get(name);
            if (actual == null) {
                problems.add(
                        "column '"
                                + name
                                + "' "
                                + f.getType().asSummaryString()
                                + " is missing from the table");
                continue;
            }
            boolean periodColumn =
                    spec.scdType() == ScdType.TYPE_2
                            && (name.equals(AutoCdcSpec.START_AT)
                                    || name.equals(AutoCdcSpec.END_AT));
            if (!sameType(f.getType(), actual)) {
                problems.add(
                        "column '"
                                + name
                                + "' is "
                                + actual.asSummaryString()
                                + " in the table but "
                                + f.getType().asSummaryString()
                                + " in the flow"
                                + (periodColumn
                                        ? " (SCD TYPE 2 period columns must have exactly the SEQUENCE BY type)"
                                        : ""));
            } else if (!actual.isNullable() && f.getType().isNullable()) {
                problems.add(
                        "column '" + name + "' is NOT NULL in the table but nullable in the flow");
            }
        }
        for (String name : have.keySet()) {
            if (!seen.contains(name)) {
                problems.add("table column '" + name + "' is not produced by the flow");
            }
        }
        if (!problems.isEmpty()) {
            throw new AutoCdcException(
                    Code.TARGET_SCHEMA_MISMATCH,
                    "flow '"
                            + spec.name()
                            + "': the existing target table does not match the flow's target "
                            + target.asSummaryString()
                            + ": "
                            + String.join("; ", problems)
                            + ". Fix the flow definition (COLUMNS, SEQUENCE BY, SCD type) or recreate the table.");
        }
    }

    static boolean sameType(LogicalType expected, LogicalType actual) {
        LogicalType e = normalize(expected);
        LogicalType a = normalize(actual);
        if (e.getTypeRoot() != a.getTypeRoot()) {
            return false;
        }
        List<LogicalType> ec = e.getChildren();
        List<LogicalType> ac = a.getChildren();
        if (!ec.isEmpty() || !ac.isEmpty()) {
            if (ec.size() != ac.size()) {
                return false;
            }
            if (e instanceof RowType
                    && !((RowType) e).getFieldNames().equals(((RowType) a).getFieldNames())) {
                return false;
            }
            for (int i = 0; i < ec.size(); i++) {
                if (!sameType(ec.get(i), ac.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return e.copy(true).equals(a.copy(true));
    }

    private static LogicalType normalize(LogicalType t) {
        switch (t.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return VarCharType.STRING_TYPE;
            case TINYINT:
            case SMALLINT:
                return new IntType();
            case VARBINARY:
                return new VarBinaryType(VarBinaryType.MAX_LENGTH);
            case BINARY:
                return new BinaryType(((BinaryType) t).getLength());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                {
                    int p = ((TimestampType) t).getPrecision();
                    return new TimestampType(p <= 6 ? 6 : p);
                }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    int p = ((LocalZonedTimestampType) t).getPrecision();
                    return new LocalZonedTimestampType(p <= 6 ? 6 : p);
                }
            case TIME_WITHOUT_TIME_ZONE:
                return new TimeType(0);
            default:
                return t;
        }
    }
}

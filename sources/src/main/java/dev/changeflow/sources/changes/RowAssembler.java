package dev.changeflow.sources.changes;

import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builds a routed record's row, shaped {@link DecoderFlow#sourceType()}, from the image a parser
 * chose, checks it, and emits it to the {@link DecodeOutput} (semantics.md A5): an upsert ({@code
 * RowKind.INSERT}) of an {@code after} image or plain row, a delete ({@code RowKind.DELETE}) of a
 * {@code before} image or of the record key alone (K2, K5), or a truncate (data columns null).
 * Metadata columns come from the parser ({@link ChangeRecordParser#writeMetadata}).
 *
 * <h2>Checks, in this order (items 8 to 13 of {@link ChangeRecordDecoder}'s list)</h2>
 *
 * <ol>
 *   <li>{@code TYPE_MISMATCH}: a value its column's type cannot hold ({@link ValueConverter});
 *   <li>{@code SCHEMA_CHANGED}: the image has members the data columns lack. Under {@link
 *       OnSchemaChange#ADD_COLUMNS} new top-level members throw {@link SchemaChangeException}
 *       (typed from the schema wrapper, else from the JSON value); unknown members of nested
 *       objects stay {@code SCHEMA_CHANGED}; {@link OnSchemaChange#FAIL} throws;
 *   <li>{@code MISSING_COLUMN} — Decision: a KEY or data SEQUENCE BY column <i>absent</i> (not
 *       merely null) from the image the row is built from ({@code after}; {@code before} of a
 *       delete; the record key of a key-only delete, for KEYS); other absent columns are null (A7
 *       item 1: in a Debezium image an absent column is one the source table did not have when the
 *       change was written — added later, or dropped);
 *   <li>{@code NULL_KEY}: a KEY column null;
 *   <li>{@code NULL_SEQUENCE}: a SEQUENCE BY column null — metadata such as {@code _source_lsn}
 *       absent from the envelope counts as null, and so does a data sequence column of a key-only
 *       delete. Until a record of the flow has had a sequence, a null that shows the sequence
 *       cannot order the connector's records throws instead ({@link
 *       QuarantinePolicy#checkSequence}, A5);
 *   <li>{@code TYPE_MISMATCH}: a non-key NOT NULL column null in an upsert.
 * </ol>
 *
 * A plain-JSON flow with APPLY AS TRUNCATE WHEN skips the key checks: such a record may be a
 * truncate, which has no key, and Flink SQL decides that after decoding (A2). A truncate is checked
 * for its sequence only.
 *
 * <p><b>Unavailable values</b> (Debezium, A3/A4): a top-level value of the image equal to the
 * flow's {@link DecoderFlow#unavailablePlaceholder()} (see there for the forms) is null in the row,
 * counts as present, is exempt from the NOT NULL check and is marked in {@link
 * DebeziumMetadata#UNAVAILABLE} (null when no column is); the AUTO CDC operator keeps the stored
 * value for it.
 *
 * <p>Each row is a new object (the output may keep it); the image tables and scratch arrays are
 * reused.
 */
@Internal
final class RowAssembler {
    private final ValueConverter conv;
    private final QuarantinePolicy policy;
    private DecodeOutput out;

    RowAssembler(ValueConverter conv, QuarantinePolicy policy) {
        this.conv = conv;
        this.policy = policy;
    }

    /** Starts a record: rows go to {@code out}. */
    void begin(DecodeOutput out) {
        this.out = out;
    }

    /**
     * Emits the upsert of an update that carries only the changed columns (MongoDB, A5 "MongoDB
     * partial updates"): {@code image} holds the key, the changed columns and the removed ones
     * (null); every other data column is marked unavailable, so the AUTO CDC apply keeps its stored
     * value (as for an A3/A4 placeholder; a key without a stored row is quarantined there as {@code
     * UNAVAILABLE_VALUE}). The mask carries the partial-update bit ({@link
     * AutoCdcSpec#markPartialUpdate}), so that quarantine says the columns were not in the update.
     */
    DecodeOutcome partialUpsert(FlowPlan plan, ChangeRecordParser record, JsonFields image)
            throws IOException, ValueConverter.InvalidRecord {
        partial = true;
        try {
            return upsert(plan, record, image, null, RowKind.INSERT);
        } finally {
            partial = false;
        }
    }

    /** Set while {@link #partialUpsert} runs. */
    private boolean partial;

    /**
     * Emits an upsert ({@code kind} INSERT) or delete ({@code kind} DELETE) built from {@code
     * image}.
     *
     * @param hint the image's struct schema from the schema wrapper, when the flow needs it
     * @throws ValueConverter.InvalidRecord a value its column cannot hold
     * @throws SchemaChangeException new top-level members, or columns the schema wrapper widens (A7
     *     item 4), under {@link OnSchemaChange#ADD_COLUMNS}
     * @throws ChangeRecordException when the flow's policy says fail
     */
    DecodeOutcome upsert(
            FlowPlan plan,
            ChangeRecordParser record,
            JsonFields image,
            @Nullable ConnectSchema hint,
            RowKind kind)
            throws IOException, ValueConverter.InvalidRecord {
        if (plan.debezium && plan.flow.onSchemaChange() == OnSchemaChange.ADD_COLUMNS) {
            ConnectSchema types =
                    hint != null
                            ? hint
                            : record.imageSchema(kind == RowKind.DELETE ? "before" : "after");
            if (types != null) {
                List<RowType.RowField> widened = widened(plan, types);
                if (!widened.isEmpty()) {
                    throw policy.widenedColumns(plan, record.tableName(plan), widened);
                }
            }
        }
        GenericRowData row = new GenericRowData(kind, plan.arity);
        conv.unknownFields.clear();
        boolean[] present = plan.present;
        Arrays.fill(present, false);
        conv.unavailable = null;
        conv.debezium = plan.debezium;
        conv.placeholder = plan.placeholder;
        conv.placeholderBase64 = plan.placeholderBase64;
        boolean addColumns = plan.flow.onSchemaChange() == OnSchemaChange.ADD_COLUMNS;
        conv.detectWidening = addColumns;
        try {
            conv.fillRow(plan.data, image, row, present, hint, "", 0);
        } catch (ValueConverter.InvalidRecord e) {
            if (addColumns
                    && e.widenTo != null
                    && !plan.flow.keys().contains(e.column)
                    && !plan.flow.sequenceBy().contains(e.column)) {
                // A7 item 4 without a schema wrapper: the value itself shows the wider type
                throw policy.widenedColumns(
                        plan,
                        record.tableName(plan),
                        List.of(new RowType.RowField(e.column, e.widenTo)));
            }
            throw e;
        } finally {
            conv.placeholder = null;
            conv.detectWidening = false;
        }
        if (partial) {
            for (int c = 0; c < plan.dataArity; c++) {
                if (!present[c]) {
                    if (conv.unavailable == null) {
                        conv.unavailable = new byte[(plan.data.arity() + 7) / 8];
                    }
                    conv.unavailable[c / 8] |= (byte) (1 << (c % 8));
                    present[c] = true;
                }
            }
            if (conv.unavailable != null) {
                // the operator's UNAVAILABLE_VALUE then says "not in the partial update"
                conv.unavailable = AutoCdcSpec.markPartialUpdate(conv.unavailable, plan.arity);
            }
        }
        if (!conv.unknownFields.isEmpty()
                && plan.flow.onSchemaChange() == OnSchemaChange.ADD_COLUMNS) {
            // the flow's own columns may not have needed the wrapper's schema; the new ones may
            ConnectSchema types =
                    hint != null
                            ? hint
                            : record.imageSchema(kind == RowKind.DELETE ? "before" : "after");
            List<RowType.RowField> added = newColumns(plan, image, types);
            if (!added.isEmpty()) {
                throw policy.newColumns(plan, record.tableName(plan), added);
            }
        }
        return finish(plan, record, row, false, kind == RowKind.INSERT);
    }

    /**
     * Emits a delete built from the key columns of a record key (a delete without {@code before}
     * image, K2, K5): other data columns null.
     *
     * @param keySchema the key's struct schema from its schema wrapper, when the flow needs it
     */
    DecodeOutcome keyOnlyDelete(
            FlowPlan plan,
            ChangeRecordParser record,
            JsonFields key,
            @Nullable ConnectSchema keySchema)
            throws IOException, ValueConverter.InvalidRecord {
        GenericRowData row = new GenericRowData(RowKind.DELETE, plan.arity);
        conv.unknownFields.clear();
        conv.unavailable = null;
        conv.debezium = plan.debezium;
        boolean[] present = plan.present;
        Arrays.fill(present, false);
        for (int k : plan.keyIdx) {
            String name = plan.data.names[k];
            int i = key.indexOf(name);
            if (i < 0) {
                return policy.quarantine(
                        plan,
                        QuarantineReason.MISSING_COLUMN,
                        "key column '"
                                + name
                                + "' absent from the record key of a delete without before image");
            }
            row.setField(
                    k,
                    conv.convert(
                            plan.data.columns[k],
                            key,
                            i,
                            keySchema == null ? null : keySchema.field(name),
                            "",
                            0));
            present[k] = true;
        }
        return finish(plan, record, row, true, false);
    }

    /** Emits a truncate: data columns null, metadata set; checked for a null sequence only. */
    DecodeOutcome truncate(FlowPlan plan, ChangeRecordParser record) {
        GenericRowData row = new GenericRowData(RowKind.INSERT, plan.arity);
        record.writeMetadata(row, plan.dataArity);
        for (int s : plan.seqIdx) {
            if (row.isNullAt(s)) {
                policy.checkSequence(plan, record, s); // A5: a sequence that cannot order fails
                return policy.quarantine(
                        plan,
                        QuarantineReason.NULL_SEQUENCE,
                        nullSequence(plan, s, " of a truncate"));
            }
        }
        plan.sequenceSeen = true;
        out.truncate(plan.index, row);
        return DecodeOutcome.TRUNCATE;
    }

    /**
     * A7 item 4: the data columns, other than KEYS and SEQUENCE BY columns, that the schema wrapper
     * types wider than the flow by an Iceberg promotion — INT → BIGINT ({@code int64}), FLOAT →
     * DOUBLE ({@code float64}), DECIMAL(p, s) → DECIMAL(p', s) with p' &gt; p when the wrapper
     * states {@code connect.decimal.precision} — with the wrapper's type, nullable. Remembered per
     * wrapper schema (cached by its bytes).
     */
    static List<RowType.RowField> widened(FlowPlan plan, ConnectSchema image) {
        if (image == plan.widenedFor) {
            return plan.widened;
        }
        List<RowType.RowField> out = new ArrayList<>();
        for (int c = 0; c < plan.dataArity; c++) {
            String name = plan.data.names[c];
            if (plan.flow.keys().contains(name) || plan.flow.sequenceBy().contains(name)) {
                continue;
            }
            ConnectSchema field = image.field(name);
            if (field == null) {
                continue;
            }
            LogicalType want;
            try {
                want = field.toLogicalType();
            } catch (RuntimeException unknownType) {
                continue; // not a promotion: the value converter decides
            }
            LogicalType have = plan.flow.dataType().getTypeAt(c);
            if (promotes(have, want, field)) {
                out.add(new RowType.RowField(name, want.copy(true)));
            }
        }
        plan.widenedFor = image;
        plan.widened = out;
        return out;
    }

    private static boolean promotes(LogicalType have, LogicalType want, ConnectSchema field) {
        switch (have.getTypeRoot()) {
            case INTEGER:
                return want.getTypeRoot() == LogicalTypeRoot.BIGINT;
            case FLOAT:
                return want.getTypeRoot() == LogicalTypeRoot.DOUBLE;
            case DECIMAL:
                if (want.getTypeRoot() != LogicalTypeRoot.DECIMAL
                        || !field.parameters.containsKey("connect.decimal.precision")) {
                    return false;
                }
                DecimalType h = (DecimalType) have;
                DecimalType w = (DecimalType) want;
                return w.getScale() == h.getScale() && w.getPrecision() > h.getPrecision();
            default:
                return false;
        }
    }

    /**
     * The top-level members of {@code image} that are not data columns, typed from the schema
     * wrapper or the JSON value (see {@link SchemaChangeException}). Unknown members of nested
     * objects are not columns that can be added: they stay {@code SCHEMA_CHANGED} quarantine.
     */
    private static List<RowType.RowField> newColumns(
            FlowPlan plan, JsonFields image, @Nullable ConnectSchema hint) {
        List<RowType.RowField> added = new ArrayList<>();
        for (int i = 0; i < image.size; i++) {
            String name = image.names[i];
            if (plan.data.index.containsKey(name)) {
                continue;
            }
            ConnectSchema fieldSchema = hint == null ? null : hint.field(name);
            LogicalType type;
            if (fieldSchema != null) {
                type = fieldSchema.toLogicalType();
            } else {
                switch (image.kinds[i]) {
                    case JsonFields.INT:
                        type = new BigIntType();
                        break;
                    case JsonFields.BIG_INT:
                        type = new DecimalType(DecimalType.MAX_PRECISION, 0);
                        break;
                    case JsonFields.FLOAT:
                        type = new DoubleType();
                        break;
                    case JsonFields.TRUE:
                    case JsonFields.FALSE:
                        type = new BooleanType();
                        break;
                    default:
                        type = VarCharType.STRING_TYPE;
                }
            }
            added.add(new RowType.RowField(name, type.copy(true)));
        }
        return added;
    }

    private DecodeOutcome finish(
            FlowPlan plan,
            ChangeRecordParser record,
            GenericRowData row,
            boolean keyOnly,
            boolean checkNotNull) {
        record.writeMetadata(row, plan.dataArity);
        byte[] unavailable = conv.unavailable;
        if (unavailable != null) {
            row.setField(plan.unavailableIdx, unavailable);
        }
        if (!conv.unknownFields.isEmpty()) {
            return policy.unknownMembers(
                    plan,
                    "table '"
                            + record.tableName(plan)
                            + "': "
                            + (conv.textCells
                                    // S2: CSV cells are named by their file's header line, and a
                                    // table without a column list takes its columns from a header
                                    ? "the CSV header's columns "
                                            + conv.unknownFields
                                            + " are not among the table's columns "
                                            + Arrays.toString(plan.data.names)
                                            + " (matched ignoring case)"
                                    : "fields "
                                            + conv.unknownFields
                                            + " are not among the declared columns "
                                            + Arrays.toString(plan.data.names)));
        }
        String image =
                !plan.debezium
                        ? "record"
                        : keyOnly
                                ? "record key"
                                : row.getRowKind() == RowKind.DELETE ? "before" : "after";
        boolean[] present = plan.present;
        // a plain JSON record of a flow with APPLY AS TRUNCATE WHEN may be a truncate, which has
        // no key; Flink SQL decides that after decoding, and the key check follows there (A2)
        boolean maybeTruncate = !plan.debezium && plan.flow.truncateEnabled();
        for (int k : plan.keyIdx) {
            if (!present[k] && !maybeTruncate) {
                return policy.quarantine(
                        plan,
                        QuarantineReason.MISSING_COLUMN,
                        "key column '" + plan.data.names[k] + "' absent from " + image);
            }
        }
        if (!keyOnly) {
            for (int s : plan.seqIdx) {
                if (s < plan.dataArity && !present[s]) {
                    return policy.quarantine(
                            plan,
                            QuarantineReason.MISSING_COLUMN,
                            "sequence column '" + plan.data.names[s] + "' absent from " + image);
                }
            }
        }
        for (int k : plan.keyIdx) {
            if (row.isNullAt(k) && !maybeTruncate) {
                return policy.quarantine(
                        plan,
                        QuarantineReason.NULL_KEY,
                        "key column '" + plan.data.names[k] + "' is null");
            }
        }
        for (int s : plan.seqIdx) {
            if (row.isNullAt(s)) {
                policy.checkSequence(plan, record, s); // A5: a sequence that cannot order fails
                return policy.quarantine(
                        plan,
                        QuarantineReason.NULL_SEQUENCE,
                        nullSequence(
                                plan,
                                s,
                                keyOnly
                                        ? " (delete without before image carries only the key)"
                                        : ""));
            }
        }
        plan.sequenceSeen = true;
        // A7 item 1: any other column absent from the image is null. A Debezium image names every
        // column the source table has, so an absent one is a column the source did not have when
        // the change was written (added later, or dropped): null from then on, which IGNORE NULL
        // UPDATES turns into the stored value
        if (checkNotNull) {
            for (int c : plan.notNullNonKey) {
                if (row.isNullAt(c)
                        && (unavailable == null || (unavailable[c / 8] & (1 << (c % 8))) == 0)) {
                    return policy.quarantine(
                            plan,
                            QuarantineReason.TYPE_MISMATCH,
                            "column '"
                                    + plan.data.names[c]
                                    + "' "
                                    + plan.data.columns[c].type
                                    + ": null or absent");
                }
            }
        }
        out.upsertOrDelete(plan.index, row);
        return DecodeOutcome.CHANGE;
    }

    private static String nullSequence(FlowPlan plan, int s, String suffix) {
        String name = plan.flow.sourceType().getFieldNames().get(s);
        return "sequence column '" + name + "' is null" + suffix;
    }
}

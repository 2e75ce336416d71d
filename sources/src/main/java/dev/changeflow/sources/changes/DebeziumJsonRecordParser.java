package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

/**
 * Parses Debezium JSON change events ({@link ChangeRecordFormat#DEBEZIUM_JSON}, semantics.md A5):
 * the envelope {@code {"before", "after", "source", "op", "ts_ms", ...}} bare, in a schema wrapper,
 * or in a capture line, in one streaming pass that asks {@link RecordForm} about every member the
 * envelope does not own. Other envelope members are ignored.
 *
 * <p>During the pass {@code after} is read into the member table {@link #image} (the routing fields
 * come after it in Debezium's output, so it is buffered, not tokenized twice), {@code before} is
 * kept as a byte range and read only for a delete, and {@code source} gives the metadata columns
 * ({@link DebeziumMetadata}) and the routing fields {@code source.schema} / {@code source.table}.
 * The {@code source} object is also kept as a byte range, read again after routing only for a flow
 * with sequence-only columns ({@code _log_position}, {@code _source_<member>}; A5 "Default sequence
 * per connector"). {@code source.txId} that is not an integer (Oracle's transaction ids) reads as
 * null, not as a {@code TYPE_MISMATCH}.
 *
 * <p>MongoDB (A5 "MongoDB documents"): when {@code source.connector} is {@code mongodb}, an {@code
 * after} / {@code before} given as a JSON string is read after the pass as the Extended JSON
 * document it holds ({@link MongoDocument}); {@code source.collection} routes like {@code
 * source.table} (with {@code source.db} as the schema), and a key-only delete takes {@code _id}
 * from the record key's {@code id}. A string image of another connector, or a string that is not a
 * document, is the record's structure error ({@code MALFORMED_JSON}).
 *
 * <h2>Operations (A5, K2, K5), after routing</h2>
 *
 * {@code c}, {@code r}, {@code u} → upsert of {@code after} ({@code before} is not needed); {@code
 * d} → delete with the columns of {@code before}, or, when {@code before} is null, with only the
 * key columns taken from the record key; {@code t} → truncate if the flow enables truncate. In this
 * order, before the rows' own checks ({@link RowAssembler}):
 *
 * <ol>
 *   <li>{@code TYPE_MISMATCH}: an envelope field of the wrong type ({@code source.lsn} not an
 *       integer or out of BIGINT range, {@code source.table} not a scalar, ...), detail "envelope
 *       field 'source.lsn': ... not an integer";
 *   <li>{@code UNKNOWN_OP}: {@code op} missing or not one of c, r, u, d, t; a c/r/u with a null or
 *       missing {@code after} (detail "null after"); u/d on an append-only flow;
 *   <li>{@code TRUNCATE_NOT_ENABLED};
 *   <li>{@code NULL_KEY} for a delete without {@code before}: no record key, or a key (or its
 *       schema wrapper's payload) that is not an object.
 * </ol>
 */
@Internal
final class DebeziumJsonRecordParser extends ChangeRecordParser {
    private static final int METADATA = DebeziumMetadata.ENVELOPE_FIELDS.size();

    /** Per metadata position, whether the column is BIGINT (else STRING). */
    private static final boolean[] BIGINT = new boolean[METADATA];

    /** Metadata position of each {@code source} member that has a column. */
    private static final HashMap<String, Integer> SOURCE_MEMBERS = new HashMap<>();

    static {
        for (int i = 0; i < METADATA; i++) {
            BIGINT[i] =
                    DebeziumMetadata.FIELDS.get(i).getType().getTypeRoot()
                            == LogicalTypeRoot.BIGINT;
            String field = DebeziumMetadata.ENVELOPE_FIELDS.get(i);
            if (field.startsWith("source.")) {
                SOURCE_MEMBERS.put(field.substring("source.".length()), i);
            }
        }
    }

    private final JsonFields before = new JsonFields();
    private final JsonFields key = new JsonFields();

    private final JsonFields sourceFields = new JsonFields();

    // ---- per-record state, cleared by read ----
    private int beforeStart, beforeEnd;
    private int sourceStart, sourceEnd;
    private boolean sourceRead;
    private boolean envelopeSeen;
    @Nullable private String metaError;

    /** {@code source.connector}, or null. */
    @Nullable private String connector;

    /** {@code source.collection} (MongoDB), or null. */
    @Nullable private String collection;

    /** {@code after} / {@code before} when a JSON string (MongoDB's document), else null. */
    @Nullable private String afterText, beforeText;

    /** {@link #beforeText} as plain JSON ({@link MongoDocument}), or null. */
    @Nullable private byte[] beforeDoc;

    /**
     * MongoDB updates that carry only the change (A5 "MongoDB partial updates"): {@code
     * updateDescription} (change streams) or {@code patch} (oplog), else null.
     */
    @Nullable private MongoDocument.Change mongoChange;

    /** MongoDB oplog capture: the {@code filter} string naming the updated document's _id. */
    @Nullable private String filterText;

    /** {@code source.txId} when it is not an integer (it reads as null), for messages. */
    @Nullable private String txIdText;

    /** The flow being emitted for (sequence-only columns are the flow's). */
    @Nullable private FlowPlan current;

    /** The metadata values by {@link DebeziumMetadata} position: Long, String or null. */
    private final Object[] meta = new Object[METADATA];

    /** Whether each metadata column's envelope member was in the record (null or not). */
    private final boolean[] metaPresent = new boolean[METADATA];

    /** The sequence-only column values of {@link #current}: Long, StringData, DecimalData, null. */
    private Object[] sequenceOnly = new Object[0];

    DebeziumJsonRecordParser(JsonFactory factory) {
        super(factory);
    }

    @Override
    Parsed read(byte[] value, int level) throws IOException {
        beforeStart = beforeEnd = -1;
        sourceStart = sourceEnd = -1;
        sourceRead = false;
        envelopeSeen = false;
        metaError = null;
        connector = null;
        collection = null;
        afterText = beforeText = null;
        beforeDoc = null;
        mongoChange = null;
        filterText = null;
        txIdText = null;
        current = null;
        Arrays.fill(meta, null);
        Arrays.fill(metaPresent, false);
        try (JsonParser p = factory.createParser(value)) {
            JsonToken t = p.nextToken();
            if (t != JsonToken.START_OBJECT) {
                return notAnObject(t);
            }
            scan(p, level);
            RecordForm.checkEnd(p);
        }
        if (afterText != null || beforeText != null) {
            readDocumentStrings();
        }
        return form.tombstone(envelopeSeen) ? Parsed.TOMBSTONE : Parsed.RECORD;
    }

    /** Reads the members of one object at {@code level} (see {@link RecordForm}). */
    private void scan(JsonParser p, int level) throws IOException {
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String n = p.currentName();
            JsonToken v = p.nextToken();
            switch (n) {
                case "before":
                    envelopeSeen = true;
                    if (v == JsonToken.START_OBJECT) {
                        beforeStart = (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        beforeEnd = (int) p.currentLocation().getByteOffset();
                    } else if (v == JsonToken.VALUE_STRING) {
                        beforeText = p.getText(); // MongoDB; read after the pass
                    } else if (v != JsonToken.VALUE_NULL) {
                        form.wrongKind(p, v, "envelope member 'before'", "an object");
                    }
                    break;
                case "after":
                    envelopeSeen = true;
                    if (v == JsonToken.START_OBJECT) {
                        image.clear(form.buf());
                        image.readObject(p, 0);
                        imagePresent = true;
                    } else if (v == JsonToken.VALUE_STRING) {
                        afterText = p.getText(); // MongoDB; read after the pass
                    } else if (v != JsonToken.VALUE_NULL) {
                        form.wrongKind(p, v, "envelope member 'after'", "an object");
                    }
                    break;
                case "source":
                    envelopeSeen = true;
                    if (v == JsonToken.START_OBJECT) {
                        sourceStart = (int) p.currentTokenLocation().getByteOffset();
                        parseSource(p);
                        sourceEnd = (int) p.currentLocation().getByteOffset();
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "op":
                    envelopeSeen = true;
                    if (v == JsonToken.VALUE_STRING) {
                        meta[DebeziumMetadata.I_OP] = interner.text(p);
                    } else if (v != JsonToken.VALUE_NULL) {
                        form.wrongKind(p, v, "envelope member 'op'", "a string");
                    }
                    break;
                case "ts_ms":
                    readMeta(p, v, DebeziumMetadata.I_TS_MS);
                    break;
                case "updateDescription":
                    if (v == JsonToken.START_OBJECT) {
                        mongoChange = MongoDocument.Change.ofUpdateDescription(p);
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "patch":
                    if (v == JsonToken.VALUE_STRING) {
                        mongoChange = MongoDocument.Change.ofPatch(p.getText());
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "filter":
                    if (v == JsonToken.VALUE_STRING) {
                        filterText = p.getText();
                    } else {
                        p.skipChildren();
                    }
                    break;
                default:
                    int inner = form.readMember(p, n, v, level);
                    if (inner != RecordForm.CONSUMED) {
                        scan(p, inner);
                    }
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new JsonParseException(p, "unexpected token " + t);
        }
    }

    private void parseSource(JsonParser p) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String n = p.currentName();
            Integer i = SOURCE_MEMBERS.get(n);
            JsonToken v = p.nextToken();
            if (i != null) {
                if (i == DebeziumMetadata.I_TXID
                        && v == JsonToken.VALUE_STRING
                        && !p.getText().trim().matches("-?[0-9]{1,18}")) {
                    txIdText = p.getText(); // Oracle: "02000a0037030000"; not a BIGINT
                    continue;
                }
                readMeta(p, v, i);
            } else if (v == JsonToken.VALUE_STRING && n.equals("connector")) {
                connector = interner.text(p);
            } else if (v == JsonToken.VALUE_STRING && n.equals("collection")) {
                collection = interner.text(p);
            } else {
                p.skipChildren();
            }
        }
    }

    /**
     * Reads {@code after} / {@code before} given as JSON strings (A5 "MongoDB documents"): for
     * {@code source.connector = mongodb} the Extended JSON document in the string becomes the image
     * ({@link MongoDocument}); for any other connector, or a string that is not a document, the
     * record's structure error ({@code MALFORMED_JSON}) names the member.
     */
    private void readDocumentStrings() throws IOException {
        if (!MongoDocument.isMongo(connector)) {
            if (form.structureError == null) {
                form.structureError =
                        "envelope member '"
                                + (afterText != null ? "after" : "before")
                                + "' is a string, not an object (a string document is read only"
                                + " for source.connector 'mongodb'; this record's connector is "
                                + (connector == null ? "not named" : "'" + connector + "'")
                                + ")";
            }
            return;
        }
        try {
            if (afterText != null) {
                byte[] doc =
                        MongoDocument.toPlainJson(
                                afterText, "envelope member 'after' (MongoDB document)", true);
                image.clear(doc);
                try (JsonParser p = factory.createParser(doc)) {
                    p.nextToken();
                    image.readObject(p, 0);
                }
                imagePresent = true;
            }
            if (beforeText != null) {
                beforeDoc =
                        MongoDocument.toPlainJson(
                                beforeText, "envelope member 'before' (MongoDB document)", true);
                beforeStart = 0;
                beforeEnd = beforeDoc.length;
            }
        } catch (MongoDocument.Malformed e) {
            if (form.structureError == null) {
                form.structureError = e.getMessage();
            }
            imagePresent = false;
            beforeStart = beforeEnd = -1;
        }
    }

    /** Reads the value {@code v} of the envelope field of metadata position {@code i}. */
    private void readMeta(JsonParser p, JsonToken v, int i) throws IOException {
        String name = DebeziumMetadata.ENVELOPE_FIELDS.get(i);
        metaPresent[i] = true;
        meta[i] = BIGINT[i] ? longMeta(p, v, name) : textMeta(p, v, name);
    }

    /** The members of the record's {@code source} (empty without one), read once per record. */
    private JsonFields sourceFields() throws IOException {
        if (!sourceRead) {
            sourceRead = true;
            byte[] buf = form.buf();
            sourceFields.clear(buf);
            if (sourceStart >= 0) {
                try (JsonParser p =
                        factory.createParser(buf, sourceStart, sourceEnd - sourceStart)) {
                    p.nextToken();
                    sourceFields.readObject(p, sourceStart);
                }
            }
        }
        return sourceFields;
    }

    /**
     * Reads the sequence-only columns of {@code plan} (A5) into {@link #sequenceOnly}.
     *
     * @return null when they were read; else the quarantine outcome ({@code TYPE_MISMATCH}: an
     *     integer, SCN or LSN member that is malformed, once the flow has had a sequence)
     * @throws ChangeRecordException a member read as text that holds a number, boolean, object or
     *     array (text would order it wrongly); a malformed member before the flow has had a
     *     sequence
     */
    @Nullable
    private DecodeOutcome readSequenceOnly(FlowPlan plan, QuarantinePolicy policy)
            throws IOException {
        String[] members = plan.sequenceOnlyMembers;
        if (sequenceOnly.length < members.length) {
            sequenceOnly = new Object[members.length];
        }
        JsonFields sf = sourceFields();
        for (int c = 0; c < members.length; c++) {
            String m = members[c];
            sequenceOnly[c] = null;
            if (m == null) {
                String position = LogPosition.of(connector, sf);
                sequenceOnly[c] = position == null ? null : StringData.fromString(position);
                continue;
            }
            int i = sf.indexOf(m);
            if (i < 0 || sf.kinds[i] == JsonFields.NULL) {
                continue;
            }
            LogicalType type = plan.flow.sourceType().getTypeAt(plan.firstSequenceOnly + c);
            String field = "source." + m;
            String problem = null;
            byte kind = sf.kinds[i];
            switch (type.getTypeRoot()) {
                case BIGINT:
                    if (kind == JsonFields.INT) {
                        sequenceOnly[c] = sf.longs[i];
                    } else if (kind == JsonFields.STRING
                            && sf.texts[i].trim().matches("-?[0-9]{1,18}")) {
                        sequenceOnly[c] = Long.parseLong(sf.texts[i].trim());
                    } else {
                        problem = "not an integer";
                    }
                    break;
                case DECIMAL:
                    {
                        BigInteger v =
                                kind == JsonFields.INT
                                        ? BigInteger.valueOf(sf.longs[i])
                                        : kind == JsonFields.STRING || kind == JsonFields.BIG_INT
                                                ? LogPosition.unsigned(sf.texts[i].trim())
                                                : null;
                        DecimalData d =
                                v == null
                                        ? null
                                        : DecimalData.fromBigDecimal(new BigDecimal(v), 38, 0);
                        if (d == null) {
                            problem = "not a number of at most 38 digits";
                        }
                        sequenceOnly[c] = d;
                        break;
                    }
                default:
                    if (kind != JsonFields.STRING) {
                        throw policy.fail(
                                plan,
                                QuarantineReason.TYPE_MISMATCH,
                                "SEQUENCE BY column '"
                                        + plan.flow
                                                .sourceType()
                                                .getFieldNames()
                                                .get(plan.firstSequenceOnly + c)
                                        + "' cannot order the records of flow '"
                                        + plan.flow.flowId()
                                        + "': "
                                        + field
                                        + " is "
                                        + sf.render(i)
                                        + " ("
                                        + JsonFields.kindName(kind)
                                        + "), but changeflow reads "
                                        + field
                                        + " as text, which orders numbers wrongly (\"9\" after"
                                        + " \"10\"); use log_position or another source field");
                    }
                    if (DebeziumMetadata.LSN_MEMBERS.contains(m)) {
                        String lsn = LogPosition.normalizeLsn(connector, sf.texts[i].trim());
                        if (lsn == null) {
                            problem = "not an LSN of hexadecimal parts";
                        }
                        sequenceOnly[c] = lsn == null ? null : StringData.fromString(lsn);
                    } else {
                        sequenceOnly[c] = StringData.fromString(sf.texts[i]);
                    }
            }
            if (problem != null) {
                String detail = "envelope field '" + field + "': " + sf.render(i) + " " + problem;
                if (!plan.sequenceSeen) {
                    throw policy.fail(
                            plan,
                            QuarantineReason.TYPE_MISMATCH,
                            detail
                                    + "; SEQUENCE BY cannot order the records of flow '"
                                    + plan.flow.flowId()
                                    + "' (no earlier record had a usable sequence)");
                }
                return policy.quarantine(plan, QuarantineReason.TYPE_MISMATCH, detail);
            }
        }
        return null;
    }

    /**
     * Why a null SEQUENCE BY column at {@code s} of {@code plan}'s source row means that the flow's
     * sequence cannot order this connector's records (A5), or null when it is one record's null: a
     * record that names its connector ({@code source.connector}) lacks the {@code source} member
     * (for {@code _log_position}: the members of its connector's position, or the connector has
     * none). The caller asks only while the flow has had no record with a sequence.
     */
    @Override
    @Nullable
    String unusableSequence(FlowPlan plan, int s) throws IOException {
        if (connector == null || s < plan.dataArity) {
            return null;
        }
        int i = s - plan.dataArity;
        String why;
        if (i < METADATA) {
            String field = DebeziumMetadata.ENVELOPE_FIELDS.get(i);
            if (!field.startsWith("source.") || metaPresent[i]) {
                return null;
            }
            why =
                    i == DebeziumMetadata.I_TXID && txIdText != null
                            ? "writes source.txId as \"" + txIdText + "\", not an integer"
                            : "does not write " + field;
        } else {
            String m = plan.sequenceOnlyMembers[s - plan.firstSequenceOnly];
            if (m != null) {
                if (sourceFields().indexOf(m) >= 0) {
                    return null;
                }
                why = "does not write source." + m;
            } else if (LogPosition.known(connector)) {
                why =
                        "wrote no usable log position ("
                                + LogPosition.describe(connector)
                                + ") in source "
                                + (sourceStart < 0
                                        ? "(absent)"
                                        : new String(
                                                form.buf(),
                                                sourceStart,
                                                Math.min(sourceEnd - sourceStart, 400),
                                                java.nio.charset.StandardCharsets.UTF_8));
            } else {
                why = "has no log position known to changeflow";
            }
        }
        List<String> def = DebeziumMetadata.defaultSequence(connector);
        return "SEQUENCE BY column '"
                + plan.flow.sourceType().getFieldNames().get(s)
                + "' cannot order the records of flow '"
                + plan.flow.flowId()
                + "': Debezium connector '"
                + connector
                + "' "
                + why
                + ", and no earlier record of the flow had a sequence. Declare 'sequence-by' with"
                + " fields this connector writes"
                + (LogPosition.known(connector)
                        ? " (its default: "
                                + (def.equals(DebeziumMetadata.POSTGRES_SEQUENCE)
                                        ? "source.lsn"
                                        : "log_position = " + LogPosition.describe(connector))
                                + ")"
                        : "");
    }

    @Nullable
    private Long longMeta(JsonParser p, JsonToken v, String name) throws IOException {
        if (v == JsonToken.VALUE_NULL) {
            return null;
        }
        if (v == JsonToken.VALUE_NUMBER_INT) {
            try {
                return p.getLongValue();
            } catch (InputCoercionException e) {
                metaMismatch(name, p.getText(), "out of BIGINT range");
                return null;
            }
        }
        if (v == JsonToken.VALUE_STRING) {
            String s = p.getText();
            try {
                return Long.parseLong(s.trim());
            } catch (NumberFormatException e) {
                metaMismatch(name, '"' + s + '"', "not an integer");
                return null;
            }
        }
        metaMismatch(name, RecordForm.describe(v), "not an integer");
        p.skipChildren();
        return null;
    }

    @Nullable
    private String textMeta(JsonParser p, JsonToken v, String name) throws IOException {
        if (v == JsonToken.VALUE_NULL) {
            return null;
        }
        if (v == JsonToken.VALUE_STRING) {
            return interner.text(p);
        }
        if (v.isScalarValue()) {
            return p.getText();
        }
        metaMismatch(name, RecordForm.describe(v), "not a scalar");
        p.skipChildren();
        return null;
    }

    private void metaMismatch(String name, String value, String why) {
        if (metaError == null) {
            metaError = "envelope field '" + name + "': " + value + " " + why;
        }
    }

    // ---- after routing
    // ---------------------------------------------------------------------------

    @Override
    DecodeOutcome emit(FlowPlan plan, RowAssembler rows, QuarantinePolicy policy)
            throws IOException, ValueConverter.InvalidRecord {
        if (metaError != null) {
            return policy.quarantine(plan, QuarantineReason.TYPE_MISMATCH, metaError);
        }
        current = plan;
        if (plan.sequenceOnlyMembers.length > 0) {
            DecodeOutcome bad = readSequenceOnly(plan, policy);
            if (bad != null) {
                return bad;
            }
        }
        String op = (String) meta[DebeziumMetadata.I_OP];
        if (op == null) {
            return policy.quarantine(
                    plan, QuarantineReason.UNKNOWN_OP, "missing op (not a Debezium change event)");
        }
        char o = op.length() == 1 ? op.charAt(0) : '?';
        switch (o) {
            case 'c':
            case 'r':
            case 'u':
                if (o == 'u' && plan.flow.appendOnly()) {
                    return policy.quarantine(
                            plan, QuarantineReason.UNKNOWN_OP, appendOnlyDetail(plan));
                }
                if (!imagePresent) {
                    if (o == 'u' && mongoChange != null && MongoDocument.isMongo(connector)) {
                        return mongoPartialUpdate(plan, rows, policy);
                    }
                    return policy.quarantine(
                            plan, QuarantineReason.UNKNOWN_OP, "op '" + op + "' with null after");
                }
                return rows.upsert(
                        plan,
                        this,
                        image,
                        plan.needsHints ? imageSchema("after") : null,
                        RowKind.INSERT);
            case 'd':
                if (plan.flow.appendOnly()) {
                    return policy.quarantine(
                            plan, QuarantineReason.UNKNOWN_OP, appendOnlyDetail(plan));
                }
                if (beforeStart >= 0) {
                    JsonFields beforeImage = before();
                    return rows.upsert(
                            plan,
                            this,
                            beforeImage,
                            plan.needsHints ? imageSchema("before") : null,
                            RowKind.DELETE);
                }
                return keyOnlyDelete(plan, rows, policy);
            case 't':
                if (!plan.flow.truncateEnabled()) {
                    return policy.quarantine(
                            plan,
                            QuarantineReason.TRUNCATE_NOT_ENABLED,
                            "truncate of table '"
                                    + tableName(plan)
                                    + "' at source.lsn "
                                    + meta[DebeziumMetadata.I_LSN]
                                    + "; flow '"
                                    + plan.flow.flowId()
                                    + "' does not enable TRUNCATE");
                }
                return rows.truncate(plan, this);
            default:
                return policy.quarantine(
                        plan,
                        QuarantineReason.UNKNOWN_OP,
                        "op '" + op + "' is not one of c, r, u, d, t");
        }
    }

    private static String appendOnlyDetail(FlowPlan plan) {
        return "op on append-only flow '"
                + plan.flow.flowId()
                + "' (no KEYS): only c and r records can be appended";
    }

    /** Reads the {@code before} image (kept as a byte range during the pass). */
    private JsonFields before() throws IOException {
        byte[] buf = beforeDoc != null ? beforeDoc : form.buf();
        before.clear(buf);
        try (JsonParser p = factory.createParser(buf, beforeStart, beforeEnd - beforeStart)) {
            p.nextToken();
            before.readObject(p, beforeStart);
        }
        return before;
    }

    /** A delete without {@code before}: its key columns come from the record key (K2, K5). */
    private DecodeOutcome keyOnlyDelete(FlowPlan plan, RowAssembler rows, QuarantinePolicy policy)
            throws IOException, ValueConverter.InvalidRecord {
        String bad = readKey(plan, "delete without before image");
        if (bad != null) {
            return policy.quarantine(plan, QuarantineReason.NULL_KEY, bad);
        }
        return rows.keyOnlyDelete(plan, this, key, keySchema);
    }

    /** The key's schema from the record key's wrapper, set by {@link #readKey}, or null. */
    @Nullable private ConnectSchema keySchema;

    /**
     * Reads the record key into {@link #key} (and {@link #keySchema}): the payload of a schema
     * wrapper, and for MongoDB {@code _id} from {@code {"id": "<Extended JSON>"}}.
     *
     * @param what the record's kind, for the message
     * @return null, or why the record has no usable key ({@code NULL_KEY})
     */
    @Nullable
    private String readKey(FlowPlan plan, String what) throws IOException {
        keySchema = null;
        byte[] keyBuf = form.keyBuf;
        if (keyBuf == null) {
            return form.keyNotObject
                    ? what + "; record key is not an object"
                    : what + " and without record key";
        }
        JsonFields k = key;
        k.clear(keyBuf);
        try (JsonParser p =
                factory.createParser(keyBuf, form.keyStart, form.keyEnd - form.keyStart)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return what + "; record key is not an object";
            }
            k.readObject(p, form.keyStart);
        }
        int ps = RecordForm.keyPayload(k);
        if (ps >= 0) {
            int ss = k.indexOf("schema");
            if (plan.needsHints && ss >= 0 && k.kinds[ss] == JsonFields.OBJECT) {
                keySchema = keySchema(keyBuf, k.starts[ss], k.ends[ss]);
            }
            if (k.kinds[ps] != JsonFields.OBJECT) {
                return what + "; record key payload is " + JsonFields.kindName(k.kinds[ps]);
            }
            int s = k.starts[ps], e = k.ends[ps];
            k.clear(keyBuf);
            try (JsonParser p = factory.createParser(keyBuf, s, e - s)) {
                p.nextToken();
                k.readObject(p, s);
            }
        }
        if (MongoDocument.isMongo(connector)) {
            int id = k.indexOf("id");
            if (id >= 0 && k.indexOf("_id") < 0 && k.kinds[id] == JsonFields.STRING) {
                mongoKey(k, k.texts[id]);
                keySchema = null; // it describes the string, not the _id's type
            }
        }
        return null;
    }

    /**
     * A MongoDB update that carries only what changed (A5 "MongoDB partial updates"): the key from
     * the record key (or the oplog {@code filter}), the updated fields with their new values, the
     * removed ones null, and every other column marked unavailable, so the AUTO CDC apply keeps its
     * stored value (as for A3/A4 placeholders). A change the columns cannot express — a field
     * inside a nested document, a truncated array, an update operator other than {@code $set} /
     * {@code $unset} — is quarantined as {@code PARTIAL_UPDATE}.
     */
    private DecodeOutcome mongoPartialUpdate(
            FlowPlan plan, RowAssembler rows, QuarantinePolicy policy)
            throws IOException, ValueConverter.InvalidRecord {
        MongoDocument.Change change = mongoChange;
        String bad = readKey(plan, "MongoDB update without full document");
        byte[] id = null;
        if (bad == null && key.indexOf("_id") >= 0) {
            id = valueJson(key, key.indexOf("_id"));
        } else if (filterText != null) {
            try {
                id = MongoDocument.idOfFilter(filterText);
            } catch (MongoDocument.Malformed e) {
                return policy.quarantine(plan, QuarantineReason.MALFORMED_JSON, e.getMessage());
            }
        }
        if (id == null) {
            return policy.quarantine(
                    plan,
                    QuarantineReason.NULL_KEY,
                    bad != null ? bad : "MongoDB update without full document and without _id");
        }
        byte[] doc;
        try {
            doc = change.document(id);
        } catch (MongoDocument.Unsupported e) {
            return policy.quarantine(plan, QuarantineReason.PARTIAL_UPDATE, e.getMessage());
        } catch (MongoDocument.Malformed e) {
            return policy.quarantine(plan, QuarantineReason.MALFORMED_JSON, e.getMessage());
        }
        image.clear(doc);
        try (JsonParser p = factory.createParser(doc)) {
            p.nextToken();
            image.readObject(p, 0);
        }
        imagePresent = true;
        if (change.whole) {
            return rows.upsert(plan, this, image, null, RowKind.INSERT);
        }
        return rows.partialUpsert(plan, this, image);
    }

    /**
     * Refills {@code k} with {@code _id} from a MongoDB record key {@code {"id": text}} (A5): the
     * text is the {@code _id} in Extended JSON ({@code "{\"$oid\": \"5f...\"}"}, {@code "1004"},
     * {@code "\"abc\""}), read by {@link MongoDocument}; text that is not JSON is the id itself.
     */
    private void mongoKey(JsonFields k, String text) throws IOException {
        byte[] value;
        try {
            value = MongoDocument.toPlainJson(text, "record key member 'id'", false);
        } catch (MongoDocument.Malformed e) {
            value = quote(text);
        }
        byte[] doc = new byte[value.length + 8];
        byte[] head = "{\"_id\":".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        System.arraycopy(head, 0, doc, 0, head.length);
        System.arraycopy(value, 0, doc, head.length, value.length);
        doc[head.length + value.length] = '}';
        k.clear(doc);
        try (JsonParser p = factory.createParser(doc, 0, head.length + value.length + 1)) {
            p.nextToken();
            k.readObject(p, 0);
        }
    }

    /** Member {@code i} of {@code f} as JSON text. */
    private static byte[] valueJson(JsonFields f, int i) {
        switch (f.kinds[i]) {
            case JsonFields.OBJECT:
            case JsonFields.ARRAY:
                return Arrays.copyOfRange(f.buf, f.starts[i], f.ends[i]);
            case JsonFields.STRING:
                return quote(f.texts[i]);
            case JsonFields.INT:
                return Long.toString(f.longs[i]).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            case JsonFields.TRUE:
                return "true".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            case JsonFields.FALSE:
                return "false".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            case JsonFields.NULL:
                return "null".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            default: // BIG_INT, FLOAT
                return f.texts[i].getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** {@code text} as a JSON string literal. */
    private static byte[] quote(String text) {
        StringBuilder b = new StringBuilder(text.length() + 2).append('"');
        com.fasterxml.jackson.core.io.CharTypes.appendQuoted(b, text);
        return b.append('"').toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    void writeMetadata(GenericRowData row, int from) {
        for (int i = 0; i < METADATA; i++) {
            Object v = meta[i];
            row.setField(from + i, v instanceof String ? interner.data((String) v) : v);
        }
        if (current != null) {
            for (int c = 0; c < current.sequenceOnlyMembers.length; c++) {
                row.setField(current.firstSequenceOnly + c, sequenceOnly[c]);
            }
        }
    }

    /** {@code source.schema}; for a MongoDB record without one, {@code source.db} (A5). */
    @Override
    @Nullable
    String sourceSchema() {
        Object schema = meta[DebeziumMetadata.I_SCHEMA];
        if (schema == null && collection != null && meta[DebeziumMetadata.I_TABLE] == null) {
            return (String) meta[DebeziumMetadata.I_DB];
        }
        return (String) schema;
    }

    /** {@code source.table}, else {@code source.collection} (MongoDB, A5). */
    @Override
    @Nullable
    String sourceTable() {
        Object table = meta[DebeziumMetadata.I_TABLE];
        return table != null ? (String) table : collection;
    }

    @Override
    @Nullable
    String connector() {
        return connector;
    }

    @Override
    @Nullable
    String namespace() {
        Object schema = meta[DebeziumMetadata.I_SCHEMA];
        return (String) (schema != null ? schema : meta[DebeziumMetadata.I_DB]);
    }

    /** The envelope schema's {@code before} or {@code after} struct. */
    @Override
    @Nullable
    ConnectSchema imageSchema(String imageName) throws IOException {
        ConnectSchema envelope = wrapperSchema();
        return envelope == null ? null : envelope.field(imageName);
    }

    @Override
    @Nullable
    JsonFields sampleImage() throws IOException {
        return imagePresent ? image : beforeStart >= 0 ? before() : null;
    }

    @Override
    String sampleImageName() {
        return imagePresent ? "after" : "before";
    }
}

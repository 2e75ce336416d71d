package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;

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

    // ---- per-record state, cleared by read ----
    private int beforeStart, beforeEnd;
    private boolean envelopeSeen;
    @Nullable private String metaError;

    /** The metadata values by {@link DebeziumMetadata} position: Long, String or null. */
    private final Object[] meta = new Object[METADATA];

    DebeziumJsonRecordParser(JsonFactory factory) {
        super(factory);
    }

    @Override
    Parsed read(byte[] value, int level) throws IOException {
        beforeStart = beforeEnd = -1;
        envelopeSeen = false;
        metaError = null;
        Arrays.fill(meta, null);
        try (JsonParser p = factory.createParser(value)) {
            JsonToken t = p.nextToken();
            if (t != JsonToken.START_OBJECT) {
                return notAnObject(t);
            }
            scan(p, level);
            RecordForm.checkEnd(p);
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
                    } else if (v != JsonToken.VALUE_NULL) {
                        form.wrongKind(p, v, "envelope member 'after'", "an object");
                    }
                    break;
                case "source":
                    envelopeSeen = true;
                    if (v == JsonToken.START_OBJECT) {
                        parseSource(p);
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
            Integer i = SOURCE_MEMBERS.get(p.currentName());
            JsonToken v = p.nextToken();
            if (i != null) {
                readMeta(p, v, i);
            } else {
                p.skipChildren();
            }
        }
    }

    /** Reads the value {@code v} of the envelope field of metadata position {@code i}. */
    private void readMeta(JsonParser p, JsonToken v, int i) throws IOException {
        String name = DebeziumMetadata.ENVELOPE_FIELDS.get(i);
        meta[i] = BIGINT[i] ? longMeta(p, v, name) : textMeta(p, v, name);
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
        byte[] buf = form.buf();
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
        byte[] keyBuf = form.keyBuf;
        if (keyBuf == null) {
            return policy.quarantine(
                    plan,
                    QuarantineReason.NULL_KEY,
                    form.keyNotObject
                            ? "delete without before image; record key is not an object"
                            : "delete without before image and without record key");
        }
        JsonFields k = key;
        k.clear(keyBuf);
        ConnectSchema keySchema = null;
        try (JsonParser p =
                factory.createParser(keyBuf, form.keyStart, form.keyEnd - form.keyStart)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return policy.quarantine(
                        plan,
                        QuarantineReason.NULL_KEY,
                        "delete without before image; record key is not an object");
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
                return policy.quarantine(
                        plan,
                        QuarantineReason.NULL_KEY,
                        "delete without before image; record key payload is "
                                + JsonFields.kindName(k.kinds[ps]));
            }
            int s = k.starts[ps], e = k.ends[ps];
            k.clear(keyBuf);
            try (JsonParser p = factory.createParser(keyBuf, s, e - s)) {
                p.nextToken();
                k.readObject(p, s);
            }
        }
        return rows.keyOnlyDelete(plan, this, k, keySchema);
    }

    @Override
    void writeMetadata(GenericRowData row, int from) {
        for (int i = 0; i < METADATA; i++) {
            Object v = meta[i];
            row.setField(from + i, v instanceof String ? interner.data((String) v) : v);
        }
    }

    @Override
    @Nullable
    String sourceSchema() {
        return (String) meta[DebeziumMetadata.I_SCHEMA];
    }

    @Override
    @Nullable
    String sourceTable() {
        return (String) meta[DebeziumMetadata.I_TABLE];
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

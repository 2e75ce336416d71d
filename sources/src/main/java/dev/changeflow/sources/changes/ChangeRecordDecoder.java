package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;
import dev.changeflow.operators.quarantine.QuarantineRecords;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.InputCoercionException;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes change records — plain JSON and Debezium JSON — into Flink rows for the flows it was built
 * for (semantics.md A5). Pure Java (no Flink runtime), single-threaded, reusable: build one per
 * task and call {@link #decode} per record. Parsing is one streaming pass with Jackson's {@link
 * JsonParser}; the data image is buffered as a flat member table until the routing fields (which
 * Debezium writes after it) are known, so each record is tokenized about once.
 *
 * <h2>Accepted record forms</h2>
 *
 * <ul>
 *   <li><b>Capture line</b> {@code {"key": ..., "value": ..., "topic": "..."}} (files recorded from
 *       Kafka, see {@code shared/data/README.md}); {@code "value": null} is a tombstone.
 *   <li><b>Schema wrapper</b> {@code {"schema": {...}, "payload": {...}}} (Kafka {@code JsonConverter}
 *       with schemas), alone or as the capture line's value or key; {@code "payload": null} is a
 *       tombstone. The schema drives Connect {@code Decimal} and temporal units.
 *   <li><b>Debezium envelope</b> {@code {"before", "after", "source", "op", "ts_ms", ...}}; other
 *       envelope members are ignored.
 *   <li><b>Plain JSON row</b> {@code {"col": value, ...}} (format {@link ChangeRecordFormat#JSON}). An
 *       object is taken as a capture line only when all its members are among {@code key}, {@code
 *       value}, {@code topic} and it has a {@code value}; as a schema wrapper only when its members
 *       are exactly among {@code schema}, {@code payload} with a {@code payload}.
 * </ul>
 *
 * <h2>Debezium operations (A5, K5)</h2>
 *
 * {@code c}, {@code r}, {@code u} → upsert ({@code RowKind.INSERT}) of {@code after} ({@code before}
 * is not needed); {@code d} → delete ({@code RowKind.DELETE}) with the columns of {@code before}, or,
 * when {@code before} is null, with only the key columns taken from the record key (other columns
 * null); {@code t} → truncate (data columns null, metadata set) if the flow enables truncate, else
 * {@code TRUNCATE_NOT_ENABLED}; a tombstone is skipped and reported as {@link
 * DecodeOutcome#TOMBSTONE_SKIPPED}. Append-only flows accept {@code c} and {@code r} only (see {@link
 * DecoderFlow}). Plain JSON records are always upserts; delete predicates run later in Flink SQL.
 *
 * <h2>Quarantine reasons, checked in this order</h2>
 *
 * <ol>
 *   <li>{@code RECORD_TOO_LARGE}: longer than the largest {@code maxRecordBytes} of all flows (before
 *       parsing) or than the routed flow's (after routing);
 *   <li>{@code NOT_JSON}: empty, blank, or the first non-blank byte cannot start a JSON value;
 *   <li>{@code MALFORMED_JSON}: a parse error (truncated, bad token, trailing content), a top-level
 *       value that is not an object, or envelope members of the wrong JSON kind ({@code before} /
 *       {@code after} / capture {@code value} not an object, {@code op} not a string);
 *   <li>{@code UNKNOWN_TOPIC}: no flow claims the record's topic / table (see {@link DecoderFlow});
 *   <li>{@code TYPE_MISMATCH} in an envelope field ({@code source.lsn} not an integer, ...);
 *   <li>{@code UNKNOWN_OP}: {@code op} missing or not one of c, r, u, d, t; a c/r/u with a null or
 *       missing {@code after} (detail "null after"); u/d on an append-only flow;
 *   <li>{@code TRUNCATE_NOT_ENABLED};
 *   <li>{@code TYPE_MISMATCH}: a value its column's type cannot hold, detail names column, type and
 *       value. Conversion: TINYINT..BIGINT from integer numbers (range-checked; no strings, no
 *       fractions); FLOAT/DOUBLE from numbers or {@code "NaN"}/{@code "Infinity"}/{@code
 *       "-Infinity"}; DECIMAL(p,s) from a number or decimal string, or with the schema wrapper a
 *       Connect {@code Decimal} (base64 unscaled bytes, schema {@code scale}), never rounded;
 *       BOOLEAN from true/false; CHAR/VARCHAR/STRING from strings as they are (blank padding kept),
 *       other JSON as its text; BINARY/VARBINARY from base64; DATE from days since epoch
 *       ({@code io.debezium.time.Date}) or an ISO date; TIME(p) and TIMESTAMP(p) from integers in the
 *       unit the wrapper's schema names ({@code Timestamp} ms, {@code MicroTimestamp} µs, {@code
 *       NanoTimestamp} ns) or, without schema, by precision (p ≤ 3 ms, ≤ 6 µs, else ns), or from ISO
 *       strings, read as UTC; TIMESTAMP_LTZ(p) from an ISO instant ({@code ZonedTimestamp}) or an
 *       integer; ROW/MAP from objects, ARRAY from arrays;
 *   <li>{@code SCHEMA_CHANGED}: the data image (or plain row) has members the data columns lack
 *       (under {@link OnSchemaChange#QUARANTINE}; {@code FAIL} throws {@link ChangeRecordException};
 *       {@code ADD_COLUMNS} throws {@link SchemaChangeException} naming the new top-level columns and
 *       their types, and quarantines only unknown members of nested objects);
 *   <li>{@code MISSING_COLUMN} — Decision: a KEY or data SEQUENCE BY column that is <i>absent</i> (not
 *       merely null) from the image the row is built from ({@code after}; {@code before} of a delete;
 *       the record key of a key-only delete, for KEYS); other absent columns are null, not errors;
 *   <li>{@code NULL_KEY}: a KEY column null (truncates exempt), or a delete with neither {@code
 *       before} nor a record key;
 *   <li>{@code NULL_SEQUENCE}: a SEQUENCE BY column null — metadata such as {@code _source_lsn}
 *       absent from the envelope counts as null, and so does a data sequence column of a key-only
 *       delete;
 *   <li>{@code TYPE_MISMATCH}: a non-key NOT NULL column null in an upsert.
 * </ol>
 *
 * <h2>Failure policy</h2>
 *
 * Records routed to a flow follow its {@link DecoderFlow#onInvalidRecord()} ({@code FAIL} throws
 * {@link ChangeRecordException} with the reason) and, for {@code SCHEMA_CHANGED}, its {@link
 * DecoderFlow#onSchemaChange()} ({@code FAIL} throws naming the table and fields). Records that
 * cannot be routed (too large, not JSON, malformed) belong to the only flow when there is one, and
 * Kafka records (the key/value method) to the flow their topic routes to;
 * otherwise they carry flow null and fail the job if any flow says {@code fail}. {@code
 * UNKNOWN_TOPIC} records are always quarantined (they belong to no flow). Quarantine rows carry
 * {@code raw} as received, cut to its first {@value #QUARANTINE_RAW_LIMIT} bytes for {@code
 * RECORD_TOO_LARGE}.
 *
 * <p>All flows of one decoder share one {@link ChangeRecordFormat} (one source, one format).
 */
@PublicEvolving
public final class ChangeRecordDecoder {
    /** Bytes of an oversized record kept in the quarantine row's {@code raw}. */
    public static final int QUARANTINE_RAW_LIMIT = 64 * 1024;


    private final List<DecoderFlow> flows;
    private final Plan[] plans;
    private final ChangeRecordFormat format;
    private final JsonFactory factory;
    private final ValueConverter conv;
    private final HashMap<String, Integer> byName = new HashMap<>();
    private final HashMap<String, HashMap<String, Integer>> bySchemaTable = new HashMap<>();
    private final int catchAll;
    private final int maxAll;
    private final boolean anyFail;
    private final LinkedHashMap<SchemaKey, ConnectSchema> schemaCache = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<SchemaKey, ConnectSchema> eldest) {
            return size() > 256;
        }
    };
    private final SchemaKey probe = new SchemaKey();
    private final Interner interner = new Interner();

    // ---- per-record state ----
    private byte[] raw;
    private String source;
    @Nullable private Integer partition;
    private long offset;
    private long now;
    private DecodeOutput out;

    private final JsonFields after = new JsonFields();
    private final JsonFields keyFields = new JsonFields();
    private boolean afterPresent;
    private byte[] buf;
    private int beforeStart, beforeEnd;
    private int schemaStart, schemaEnd;
    private byte[] keyBuf;
    private int keyStart, keyEnd;
    private boolean keyNotObject;
    private boolean valueNull, payloadNull, envelopeSeen;
    @Nullable private String topic, op, structureError, metaError;
    @Nullable private Long tsMs, lsn, srcTsMs, txId, pos;
    @Nullable private String snapshot, db, schemaName, table, file;

    /**
     * @param flows the flows, all of one format; their index in this list is the {@code flowIndex}
     *     of {@link DecodeOutput}
     * @throws IllegalArgumentException for no flows, mixed formats, two flows claiming one name, or
     *     two catch-all flows (no source names)
     */
    public ChangeRecordDecoder(List<DecoderFlow> flows) {
        if (flows.isEmpty()) {
            throw new IllegalArgumentException("a decoder needs at least one flow");
        }
        this.flows = List.copyOf(flows);
        this.format = flows.get(0).format();
        StreamReadConstraints unlimited = StreamReadConstraints.builder()
                .maxStringLength(Integer.MAX_VALUE).maxNumberLength(Integer.MAX_VALUE).build();
        this.factory = JsonFactory.builder().streamReadConstraints(unlimited).build();
        this.conv = new ValueConverter(factory);
        this.plans = new Plan[flows.size()];
        int all = 0, catchAllIndex = -1;
        boolean fail = false;
        for (int i = 0; i < flows.size(); i++) {
            DecoderFlow f = flows.get(i);
            if (f.format() != format) {
                throw new IllegalArgumentException("all flows of one decoder must share a format: flow '"
                        + f.flowId() + "' is " + f.format().configName() + ", flow '" + flows.get(0).flowId()
                        + "' is " + format.configName());
            }
            plans[i] = new Plan(i, f);
            all = Math.max(all, f.maxRecordBytes());
            fail |= f.onInvalidRecord() == OnInvalidRecord.FAIL;
            if (f.sourceNames().isEmpty()) {
                if (catchAllIndex >= 0) {
                    throw new IllegalArgumentException("flows '" + flows.get(catchAllIndex).flowId() + "' and '"
                            + f.flowId() + "' both have no source names; at most one flow may be the catch-all");
                }
                catchAllIndex = i;
            }
            for (String name : f.sourceNames()) {
                Integer prev = byName.put(name, i);
                if (prev != null && prev != i) {
                    throw new IllegalArgumentException("source name '" + name + "' is claimed by flows '"
                            + flows.get(prev).flowId() + "' and '" + f.flowId() + "'");
                }
                int dot = name.indexOf('.');
                if (dot > 0 && dot == name.lastIndexOf('.')) {
                    bySchemaTable.computeIfAbsent(name.substring(0, dot), k -> new HashMap<>())
                            .put(name.substring(dot + 1), i);
                }
            }
        }
        this.catchAll = catchAllIndex;
        this.maxAll = all;
        this.anyFail = fail;
    }

    public List<DecoderFlow> flows() {
        return flows;
    }

    /** The flow id that unroutable records are attributed to: the only flow's, or null with several flows. */
    @Nullable
    public String defaultFlowId() {
        return plans.length == 1 ? plans[0].flow.flowId() : null;
    }

    /**
     * Decodes one record given as one byte array: a file line or a Kafka value (capture line,
     * schema wrapper, envelope or plain row; see the class comment).
     *
     * @param raw the record's bytes (UTF-8); null is a tombstone
     * @param source file path or topic, for the quarantine row (not used for routing)
     * @param partition Kafka partition, or null for files
     * @param offset Kafka offset or 1-based line number
     * @param nowMillis processing time for {@code quarantined_at}, epoch ms
     * @return what was emitted
     * @throws ChangeRecordException when the record's flow (or, unroutable, the policy above) says fail
     */
    public DecodeOutcome decode(@Nullable byte[] raw, String source, @Nullable Integer partition, long offset,
            long nowMillis, DecodeOutput out) {
        begin(raw, source, partition, offset, nowMillis, out);
        if (raw == null) {
            return DecodeOutcome.TOMBSTONE_SKIPPED;
        }
        return decodeValue(raw, 0, null);
    }

    /**
     * Decodes a Kafka record whose key and value are separate (the topic routes; the value is a
     * schema wrapper, an envelope or a plain row; the key, JSON or null, is used by key-only deletes).
     *
     * @param key the record key's bytes, or null
     * @param value the record value's bytes; null is a tombstone
     * @param topic the Kafka topic (routing and the quarantine row's {@code source})
     * @throws ChangeRecordException as {@link #decode(byte[], String, Integer, long, long, DecodeOutput)}
     */
    public DecodeOutcome decode(@Nullable byte[] key, @Nullable byte[] value, String topic, int partition,
            long offset, long nowMillis, DecodeOutput out) {
        begin(value, topic, partition, offset, nowMillis, out);
        if (value == null) {
            return DecodeOutcome.TOMBSTONE_SKIPPED;
        }
        if (key != null && key.length > 0) {
            keyBuf = key;
            keyStart = 0;
            keyEnd = key.length;
        }
        return decodeValue(value, 1, topic);
    }

    /**
     * Quarantines (or, by the unroutable policy, fails on) a record the caller rejected before
     * decoding, e.g. a file line longer than the reader's buffer ({@code RECORD_TOO_LARGE}). The
     * {@code raw} is kept up to {@link #QUARANTINE_RAW_LIMIT} bytes.
     */
    public DecodeOutcome reject(QuarantineReason reason, @Nullable byte[] raw, String source,
            @Nullable Integer partition, long offset, String detail, long nowMillis, DecodeOutput out) {
        begin(raw, source, partition, offset, nowMillis, out);
        return quarantine(null, reason, detail);
    }

    private void begin(@Nullable byte[] raw, String source, @Nullable Integer partition, long offset, long now,
            DecodeOutput out) {
        this.raw = raw;
        this.source = source;
        this.partition = partition;
        this.offset = offset;
        this.now = now;
        this.out = out;
        this.buf = raw;
        after.clear(raw);
        afterPresent = false;
        beforeStart = beforeEnd = -1;
        schemaStart = schemaEnd = -1;
        keyBuf = null;
        keyStart = keyEnd = -1;
        keyNotObject = false;
        valueNull = payloadNull = envelopeSeen = false;
        topic = op = structureError = metaError = null;
        tsMs = lsn = srcTsMs = txId = pos = null;
        snapshot = db = schemaName = table = file = null;
    }

    // ------------------------------------------------------------------------------------------

    private DecodeOutcome decodeValue(byte[] value, int depth, @Nullable String knownTopic) {
        // a Kafka record's topic routes it before parsing: a record that cannot be parsed belongs to
        // the topic's flow (its policy and flow id), not to "no flow"
        Plan byTopic = null;
        if (knownTopic != null) {
            topic = knownTopic;
            byTopic = route();
        }
        if (value.length > maxAll) {
            return quarantine(byTopic, QuarantineReason.RECORD_TOO_LARGE, tooLarge(value.length, maxAll));
        }
        int first = firstNonBlank(value);
        if (first < 0) {
            return quarantine(byTopic, QuarantineReason.NOT_JSON, value.length == 0 ? "empty record" : "blank record");
        }
        if (!startsJson(value[first])) {
            int b = value[first] & 0xff;
            return quarantine(byTopic, QuarantineReason.NOT_JSON, "record does not start like JSON: first byte 0x"
                    + String.format("%02x", b) + (b >= 0x20 && b < 0x7f ? " '" + (char) b + "'" : ""));
        }
        try {
            if (format == ChangeRecordFormat.DEBEZIUM_JSON) {
                try (JsonParser p = factory.createParser(value)) {
                    JsonToken t = p.nextToken();
                    if (t != JsonToken.START_OBJECT) {
                        return quarantine(null, QuarantineReason.MALFORMED_JSON, "expected a JSON object, found " + describe(t));
                    }
                    scanDebezium(p, depth);
                    checkEnd(p);
                }
                if (knownTopic != null) {
                    topic = knownTopic;
                }
                return afterScanDebezium();
            } else {
                return decodePlain(value, depth, knownTopic);
            }
        } catch (JsonProcessingException e) {
            return quarantine(byTopic, QuarantineReason.MALFORMED_JSON, "JSON parse error: " + e.getOriginalMessage()
                    + locationOf(e));
        } catch (IOException e) {
            return quarantine(byTopic, QuarantineReason.MALFORMED_JSON, "JSON read error: " + e.getMessage());
        }
    }

    private static String locationOf(JsonProcessingException e) {
        return e.getLocation() == null ? "" : " at byte " + e.getLocation().getByteOffset();
    }

    private static void checkEnd(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t != null) {
            throw new com.fasterxml.jackson.core.JsonParseException(p, "trailing content after the JSON object");
        }
    }

    /** Records the members of one level; depth 0 = the record, 1 = capture value / Kafka value, 2 = payload. */
    private void scanDebezium(JsonParser p, int depth) throws IOException {
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String n = p.currentName();
            JsonToken v = p.nextToken();
            switch (n) {
                case "key":
                    if (depth == 0) {
                        if (v == JsonToken.START_OBJECT) {
                            keyBuf = buf;
                            keyStart = (int) p.currentTokenLocation().getByteOffset();
                            p.skipChildren();
                            keyEnd = (int) p.currentLocation().getByteOffset();
                        } else {
                            keyNotObject = v != JsonToken.VALUE_NULL;
                            p.skipChildren();
                        }
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "value":
                    if (depth == 0) {
                        if (v == JsonToken.VALUE_NULL) {
                            valueNull = true;
                        } else if (v == JsonToken.START_OBJECT) {
                            scanDebezium(p, 1);
                        } else {
                            structure("capture line member 'value' is " + describe(v) + ", not an object");
                            p.skipChildren();
                        }
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "topic":
                    if (depth == 0 && v == JsonToken.VALUE_STRING) {
                        topic = interner.text(p);
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "schema":
                    if (depth <= 1 && v == JsonToken.START_OBJECT) {
                        schemaStart = (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        schemaEnd = (int) p.currentLocation().getByteOffset();
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "payload":
                    if (depth <= 1) {
                        if (v == JsonToken.VALUE_NULL) {
                            payloadNull = true;
                        } else if (v == JsonToken.START_OBJECT) {
                            scanDebezium(p, 2);
                        } else {
                            structure("member 'payload' is " + describe(v) + ", not an object");
                            p.skipChildren();
                        }
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "before":
                    envelopeSeen = true;
                    if (v == JsonToken.START_OBJECT) {
                        beforeStart = (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        beforeEnd = (int) p.currentLocation().getByteOffset();
                    } else if (v != JsonToken.VALUE_NULL) {
                        structure("envelope member 'before' is " + describe(v) + ", not an object");
                        p.skipChildren();
                    }
                    break;
                case "after":
                    envelopeSeen = true;
                    if (v == JsonToken.START_OBJECT) {
                        after.clear(buf);
                        after.readObject(p, 0);
                        afterPresent = true;
                    } else if (v != JsonToken.VALUE_NULL) {
                        structure("envelope member 'after' is " + describe(v) + ", not an object");
                        p.skipChildren();
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
                        op = interner.text(p);
                    } else if (v != JsonToken.VALUE_NULL) {
                        structure("envelope member 'op' is " + describe(v) + ", not a string");
                        p.skipChildren();
                    }
                    break;
                case "ts_ms":
                    tsMs = longMeta(p, v, "ts_ms");
                    break;
                default:
                    p.skipChildren();
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new com.fasterxml.jackson.core.JsonParseException(p, "unexpected token " + t);
        }
    }

    private void structure(String detail) {
        if (structureError == null) {
            structureError = detail;
        }
    }

    private void parseSource(JsonParser p) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String n = p.currentName();
            JsonToken v = p.nextToken();
            switch (n) {
                case "lsn":
                    lsn = longMeta(p, v, "source.lsn");
                    break;
                case "ts_ms":
                    srcTsMs = longMeta(p, v, "source.ts_ms");
                    break;
                case "txId":
                    txId = longMeta(p, v, "source.txId");
                    break;
                case "pos":
                    pos = longMeta(p, v, "source.pos");
                    break;
                case "snapshot":
                    snapshot = textMeta(p, v, "source.snapshot");
                    break;
                case "db":
                    db = textMeta(p, v, "source.db");
                    break;
                case "schema":
                    schemaName = textMeta(p, v, "source.schema");
                    break;
                case "table":
                    table = textMeta(p, v, "source.table");
                    break;
                case "file":
                    file = textMeta(p, v, "source.file");
                    break;
                default:
                    p.skipChildren();
            }
        }
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
        metaMismatch(name, describe(v), "not an integer");
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
        metaMismatch(name, describe(v), "not a scalar");
        p.skipChildren();
        return null;
    }

    private void metaMismatch(String name, String value, String why) {
        if (metaError == null) {
            metaError = "envelope field '" + name + "': " + value + " " + why;
        }
    }

    private DecodeOutcome afterScanDebezium() throws IOException {
        if (valueNull || (payloadNull && !envelopeSeen)) {
            return DecodeOutcome.TOMBSTONE_SKIPPED;
        }
        Plan plan = route();
        if (plan == null) {
            return unknownTopic();
        }
        if (raw.length > plan.flow.maxRecordBytes()) {
            return quarantine(plan, QuarantineReason.RECORD_TOO_LARGE, tooLarge(raw.length, plan.flow.maxRecordBytes()));
        }
        if (structureError != null) {
            return quarantine(plan, QuarantineReason.MALFORMED_JSON, structureError);
        }
        if (metaError != null) {
            return quarantine(plan, QuarantineReason.TYPE_MISMATCH, metaError);
        }
        if (op == null) {
            return quarantine(plan, QuarantineReason.UNKNOWN_OP, "missing op (not a Debezium change event)");
        }
        char o = op.length() == 1 ? op.charAt(0) : '?';
        try {
            switch (o) {
                case 'c':
                case 'r':
                case 'u':
                    if (o == 'u' && plan.flow.appendOnly()) {
                        return quarantine(plan, QuarantineReason.UNKNOWN_OP, appendOnlyDetail(plan));
                    }
                    if (!afterPresent) {
                        return quarantine(plan, QuarantineReason.UNKNOWN_OP, "op '" + op + "' with null after");
                    }
                    return upsert(plan, after, schemaHint(plan, "after"), RowKind.INSERT);
                case 'd':
                    if (plan.flow.appendOnly()) {
                        return quarantine(plan, QuarantineReason.UNKNOWN_OP, appendOnlyDetail(plan));
                    }
                    if (beforeStart >= 0) {
                        JsonFields before = conv.fields(0);
                        before.clear(buf);
                        try (JsonParser p = factory.createParser(buf, beforeStart, beforeEnd - beforeStart)) {
                            p.nextToken();
                            before.readObject(p, beforeStart);
                        }
                        return upsert(plan, before, schemaHint(plan, "before"), RowKind.DELETE);
                    }
                    return keyOnlyDelete(plan);
                case 't':
                    if (!plan.flow.truncateEnabled()) {
                        return quarantine(plan, QuarantineReason.TRUNCATE_NOT_ENABLED, "truncate of table '" + tableName(plan)
                                + "' at source.lsn " + lsn + "; flow '" + plan.flow.flowId() + "' does not enable TRUNCATE");
                    }
                    GenericRowData row = new GenericRowData(RowKind.INSERT, plan.arity);
                    setMetadata(plan, row);
                    for (int s : plan.seqIdx) {
                        if (row.isNullAt(s)) {
                            return quarantine(plan, QuarantineReason.NULL_SEQUENCE, nullSequence(plan, s, " of a truncate"));
                        }
                    }
                    out.truncate(plan.index, row);
                    return DecodeOutcome.TRUNCATE;
                default:
                    return quarantine(plan, QuarantineReason.UNKNOWN_OP, "op '" + op + "' is not one of c, r, u, d, t");
            }
        } catch (ValueConverter.InvalidRecord e) {
            return quarantine(plan, e.reason, e.detail);
        }
    }

    private static String appendOnlyDetail(Plan plan) {
        return "op on append-only flow '" + plan.flow.flowId() + "' (no KEYS): only c and r records can be appended";
    }

    private DecodeOutcome keyOnlyDelete(Plan plan) throws IOException, ValueConverter.InvalidRecord {
        if (keyBuf == null) {
            return quarantine(plan, QuarantineReason.NULL_KEY, keyNotObject
                    ? "delete without before image; record key is not an object"
                    : "delete without before image and without record key");
        }
        JsonFields k = keyFields;
        k.clear(keyBuf);
        ConnectSchema keySchema = null;
        try (JsonParser p = factory.createParser(keyBuf, keyStart, keyEnd - keyStart)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return quarantine(plan, QuarantineReason.NULL_KEY, "delete without before image; record key is not an object");
            }
            k.readObject(p, keyStart);
        }
        int ps = k.indexOf("payload");
        if (ps >= 0 && k.size <= 2 && (k.size == 1 || k.indexOf("schema") >= 0)) {
            int ss = k.indexOf("schema");
            if (plan.needsHints && ss >= 0 && k.kinds[ss] == JsonFields.OBJECT) {
                keySchema = cachedSchema(keyBuf, k.starts[ss], k.ends[ss]);
            }
            if (k.kinds[ps] != JsonFields.OBJECT) {
                return quarantine(plan, QuarantineReason.NULL_KEY, "delete without before image; record key payload is "
                        + JsonFields.kindName(k.kinds[ps]));
            }
            int s = k.starts[ps], e = k.ends[ps];
            k.clear(keyBuf);
            try (JsonParser p = factory.createParser(keyBuf, s, e - s)) {
                p.nextToken();
                k.readObject(p, s);
            }
        }
        GenericRowData row = new GenericRowData(RowKind.DELETE, plan.arity);
        conv.unknownFields.clear();
        boolean[] present = plan.present;
        Arrays.fill(present, false);
        for (int key : plan.keyIdx) {
            String name = plan.data.names[key];
            int i = k.indexOf(name);
            if (i < 0) {
                return quarantine(plan, QuarantineReason.MISSING_COLUMN, "key column '" + name
                        + "' absent from the record key of a delete without before image");
            }
            row.setField(key, conv.convert(plan.data.columns[key], k, i,
                    keySchema == null ? null : keySchema.field(name), "", 0));
            present[key] = true;
        }
        return finish(plan, row, true, false);
    }

    private DecodeOutcome upsert(Plan plan, JsonFields image, @Nullable ConnectSchema hint, RowKind kind)
            throws IOException, ValueConverter.InvalidRecord {
        GenericRowData row = new GenericRowData(kind, plan.arity);
        conv.unknownFields.clear();
        boolean[] present = plan.present;
        Arrays.fill(present, false);
        conv.fillRow(plan.data, image, row, present, hint, "", 0);
        if (!conv.unknownFields.isEmpty() && plan.flow.onSchemaChange() == OnSchemaChange.ADD_COLUMNS) {
            ConnectSchema types = hint;
            if (types == null && schemaStart >= 0) {
                // the flow's own columns did not need the wrapper's schema; the new ones may
                ConnectSchema wrapper = cachedSchema(buf, schemaStart, schemaEnd);
                types = wrapper == null || !plan.debezium ? wrapper
                        : wrapper.field(kind == RowKind.DELETE ? "before" : "after");
            }
            List<RowType.RowField> added = newColumns(plan, image, types);
            if (!added.isEmpty()) {
                throw new SchemaChangeException(plan.flow.flowId(), tableName(plan), source, partition, offset, added);
            }
        }
        return finish(plan, row, false, kind == RowKind.INSERT);
    }

    /**
     * The top-level members of {@code image} that are not data columns, typed from the schema
     * wrapper or the JSON value (see {@link SchemaChangeException}). Unknown members of nested
     * objects are not columns that can be added: they stay {@code SCHEMA_CHANGED} quarantine.
     */
    private static List<RowType.RowField> newColumns(Plan plan, JsonFields image, @Nullable ConnectSchema hint) {
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

    private DecodeOutcome finish(Plan plan, GenericRowData row, boolean keyOnly, boolean checkNotNull) {
        if (plan.debezium) {
            setMetadata(plan, row);
        }
        if (!conv.unknownFields.isEmpty()) {
            String detail = "table '" + tableName(plan) + "': fields " + conv.unknownFields
                    + " are not among the declared columns " + Arrays.toString(plan.data.names);
            if (plan.flow.onSchemaChange() == OnSchemaChange.FAIL) {
                throw new ChangeRecordException(QuarantineReason.SCHEMA_CHANGED, plan.flow.flowId(), source, partition, offset,
                        detail + "; set on-schema-change = quarantine or add-columns, or declare the columns");
            }
            // ADD_COLUMNS reaches here only for unknown members of nested objects (see upsert)
            return quarantine(plan, QuarantineReason.SCHEMA_CHANGED, detail);
        }
        String image = plan.debezium ? (keyOnly ? "record key" : row.getRowKind() == RowKind.DELETE ? "before" : "after")
                : "record";
        boolean[] present = plan.present;
        // a plain JSON record of a flow with APPLY AS TRUNCATE WHEN may be a truncate, which has
        // no key; Flink SQL decides that after decoding, and the key check follows there (A2)
        boolean maybeTruncate = !plan.debezium && plan.flow.truncateEnabled();
        for (int k : plan.keyIdx) {
            if (!present[k] && !maybeTruncate) {
                return quarantine(plan, QuarantineReason.MISSING_COLUMN,
                        "key column '" + plan.data.names[k] + "' absent from " + image);
            }
        }
        if (!keyOnly) {
            for (int s : plan.seqIdx) {
                if (s < plan.dataArity && !present[s]) {
                    return quarantine(plan, QuarantineReason.MISSING_COLUMN,
                            "sequence column '" + plan.data.names[s] + "' absent from " + image);
                }
            }
        }
        for (int k : plan.keyIdx) {
            if (row.isNullAt(k) && !maybeTruncate) {
                return quarantine(plan, QuarantineReason.NULL_KEY, "key column '" + plan.data.names[k] + "' is null");
            }
        }
        for (int s : plan.seqIdx) {
            if (row.isNullAt(s)) {
                return quarantine(plan, QuarantineReason.NULL_SEQUENCE,
                        nullSequence(plan, s, keyOnly ? " (delete without before image carries only the key)" : ""));
            }
        }
        if (plan.debezium && !keyOnly && row.getRowKind() != RowKind.DELETE) {
            // Debezium writes every column of an after image, nulls included: an absent column is a
            // malformed record (or a schema change upstream), not a null (A5 MISSING_COLUMN)
            for (int c = 0; c < plan.dataArity; c++) {
                if (!present[c]) {
                    return quarantine(plan, QuarantineReason.MISSING_COLUMN,
                            "column '" + plan.data.names[c] + "' absent from " + image);
                }
            }
        }
        if (checkNotNull) {
            for (int c : plan.notNullNonKey) {
                if (row.isNullAt(c)) {
                    return quarantine(plan, QuarantineReason.TYPE_MISMATCH, "column '" + plan.data.names[c] + "' "
                            + plan.data.columns[c].type + ": null or absent");
                }
            }
        }
        out.upsertOrDelete(plan.index, row);
        return DecodeOutcome.CHANGE;
    }

    private static String nullSequence(Plan plan, int s, String suffix) {
        String name = plan.flow.sourceType().getFieldNames().get(s);
        return "sequence column '" + name + "' is null" + suffix;
    }

    private void setMetadata(Plan plan, GenericRowData row) {
        int d = plan.dataArity;
        row.setField(d + DebeziumMetadata.I_OP, opData());
        row.setField(d + DebeziumMetadata.I_TS_MS, tsMs);
        row.setField(d + DebeziumMetadata.I_LSN, lsn);
        row.setField(d + DebeziumMetadata.I_SOURCE_TS_MS, srcTsMs);
        row.setField(d + DebeziumMetadata.I_TXID, txId);
        row.setField(d + DebeziumMetadata.I_SNAPSHOT, str(snapshot));
        row.setField(d + DebeziumMetadata.I_DB, str(db));
        row.setField(d + DebeziumMetadata.I_SCHEMA, str(schemaName));
        row.setField(d + DebeziumMetadata.I_TABLE, str(table));
        row.setField(d + DebeziumMetadata.I_FILE, str(file));
        row.setField(d + DebeziumMetadata.I_POS, pos);
    }

    @Nullable
    private StringData opData() {
        return str(op);
    }

    @Nullable
    private StringData str(@Nullable String s) {
        return s == null ? null : interner.data(s);
    }

    @Nullable
    private ConnectSchema schemaHint(Plan plan, String image) throws IOException {
        if (!plan.needsHints || schemaStart < 0) {
            return null;
        }
        ConnectSchema envelope = cachedSchema(buf, schemaStart, schemaEnd);
        return envelope == null ? null : envelope.field(image);
    }

    @Nullable
    private ConnectSchema cachedSchema(byte[] b, int start, int end) throws IOException {
        probe.set(b, start, end);
        ConnectSchema s = schemaCache.get(probe);
        if (s == null) {
            try (JsonParser p = factory.createParser(b, start, end - start)) {
                p.nextToken();
                s = ConnectSchema.parse(p);
            }
            schemaCache.put(probe.copy(), s);
        }
        return s;
    }

    // ---- plain JSON ---------------------------------------------------------------------------

    private DecodeOutcome decodePlain(byte[] value, int depth, @Nullable String knownTopic) throws IOException {
        int start = 0, end = value.length;
        ConnectSchema rowSchema = null;
        int level = depth;
        boolean top = true;
        while (true) {
            try (JsonParser p = factory.createParser(value, start, end - start)) {
                JsonToken t = p.nextToken();
                if (t != JsonToken.START_OBJECT) {
                    return quarantine(null, QuarantineReason.MALFORMED_JSON, "expected a JSON object, found " + describe(t));
                }
                t = p.nextToken();
                if (t == JsonToken.FIELD_NAME && wrapperName(p.currentName(), level)) {
                    JsonFields w = conv.fields(0);
                    w.clear(value);
                    w.readObject(p, start);
                    if (top) {
                        checkEnd(p);
                    }
                    int vi = level == 0 ? w.indexOf("value") : -1;
                    int pi = w.indexOf("payload");
                    boolean capture = vi >= 0 && objectOrNull(w, vi) && onlyNames(w, "key", "value", "topic");
                    boolean wrapper = !capture && pi >= 0 && objectOrNull(w, pi) && onlyNames(w, "schema", "payload");
                    if (capture || wrapper) {
                        int ri = capture ? vi : pi;
                        if (capture) {
                            int ti = w.indexOf("topic");
                            if (ti >= 0 && w.kinds[ti] == JsonFields.STRING) {
                                topic = w.texts[ti];
                            }
                        } else {
                            int si = w.indexOf("schema");
                            if (si >= 0 && w.kinds[si] == JsonFields.OBJECT) {
                                schemaStart = w.starts[si];
                                schemaEnd = w.ends[si];
                            }
                        }
                        if (w.kinds[ri] == JsonFields.NULL) {
                            return DecodeOutcome.TOMBSTONE_SKIPPED;
                        }
                        if (w.kinds[ri] != JsonFields.OBJECT) {
                            structure((capture ? "capture line member 'value'" : "member 'payload'") + " is "
                                    + JsonFields.kindName(w.kinds[ri]) + ", not an object");
                            break;
                        }
                        start = w.starts[ri];
                        end = w.ends[ri];
                        level = capture ? 1 : 2;
                        top = false;
                        continue;
                    }
                    // not a wrapper after all: the whole object is the row
                    try (JsonParser p2 = factory.createParser(value, start, end - start)) {
                        p2.nextToken();
                        after.clear(value);
                        after.readObject(p2, start);
                    }
                } else {
                    after.clear(value);
                    after.readObject(p, start);
                    if (top) {
                        checkEnd(p);
                    }
                }
                afterPresent = true;
                break;
            }
        }
        if (knownTopic != null) {
            topic = knownTopic;
        }
        Plan plan = route();
        if (plan == null) {
            return unknownTopic();
        }
        if (raw.length > plan.flow.maxRecordBytes()) {
            return quarantine(plan, QuarantineReason.RECORD_TOO_LARGE, tooLarge(raw.length, plan.flow.maxRecordBytes()));
        }
        if (structureError != null) {
            return quarantine(plan, QuarantineReason.MALFORMED_JSON, structureError);
        }
        ConnectSchema hint = null;
        if (plan.needsHints && schemaStart >= 0) {
            hint = cachedSchema(value, schemaStart, schemaEnd);
        }
        try {
            return upsert(plan, after, hint, RowKind.INSERT);
        } catch (ValueConverter.InvalidRecord e) {
            return quarantine(plan, e.reason, e.detail);
        }
    }

    private static boolean wrapperName(String n, int level) {
        if (level == 0 && (n.equals("key") || n.equals("value") || n.equals("topic"))) {
            return true;
        }
        return level <= 1 && (n.equals("schema") || n.equals("payload"));
    }

    private static boolean objectOrNull(JsonFields w, int i) {
        return w.kinds[i] == JsonFields.OBJECT || w.kinds[i] == JsonFields.NULL;
    }

    private static boolean onlyNames(JsonFields w, String... allowed) {
        outer:
        for (int i = 0; i < w.size; i++) {
            for (String a : allowed) {
                if (a.equals(w.names[i])) {
                    continue outer;
                }
            }
            return false;
        }
        return true;
    }

    // ---- routing and quarantine ----------------------------------------------------------------

    @Nullable
    private Plan route() {
        if (plans.length == 1 && catchAll == 0) {
            return plans[0];
        }
        Integer i = null;
        if (topic != null) {
            i = byName.get(topic);
        }
        if (i == null && table != null) {
            if (schemaName != null && !bySchemaTable.isEmpty()) {
                HashMap<String, Integer> m = bySchemaTable.get(schemaName);
                if (m != null) {
                    i = m.get(table);
                }
            }
            if (i == null) {
                i = byName.get(table);
            }
        }
        if (i == null && topic != null) {
            int dot = topic.lastIndexOf('.');
            if (dot >= 0) {
                i = byName.get(topic.substring(dot + 1));
            }
        }
        if (i != null) {
            return plans[i];
        }
        if (catchAll >= 0) {
            return plans[catchAll];
        }
        if (topic == null && table == null && plans.length == 1) {
            return plans[0];
        }
        return null;
    }

    private DecodeOutcome unknownTopic() {
        List<String> names = new ArrayList<>();
        for (DecoderFlow f : flows) {
            names.addAll(f.sourceNames());
        }
        String detail = "no flow for " + (table != null ? "table '" + table + "'" : "record")
                + (topic != null ? " (topic '" + topic + "')" : " (no topic or source.table)")
                + "; flows read " + names;
        out.quarantine(QuarantineRecords.of(null, source, partition, offset, raw, QuarantineReason.UNKNOWN_TOPIC, detail, now));
        return DecodeOutcome.QUARANTINED;
    }

    private DecodeOutcome quarantine(@Nullable Plan plan, QuarantineReason reason, String detail) {
        String flowId = plan != null ? plan.flow.flowId() : defaultFlowId();
        boolean fail;
        if (plan != null) {
            fail = reason == QuarantineReason.SCHEMA_CHANGED
                    ? plan.flow.onSchemaChange() == OnSchemaChange.FAIL
                    : plan.flow.onInvalidRecord() == OnInvalidRecord.FAIL;
        } else {
            fail = anyFail;
        }
        if (fail) {
            throw new ChangeRecordException(reason, flowId, source, partition, offset, detail);
        }
        byte[] kept = raw;
        if (raw != null && raw.length > QUARANTINE_RAW_LIMIT && reason == QuarantineReason.RECORD_TOO_LARGE) {
            kept = Arrays.copyOf(raw, QUARANTINE_RAW_LIMIT);
        }
        out.quarantine(QuarantineRecords.of(flowId, source, partition, offset, kept, reason, detail, now));
        return DecodeOutcome.QUARANTINED;
    }

    private String tableName(Plan plan) {
        return table != null ? table : topic != null ? topic : plan.flow.flowId();
    }

    private static String tooLarge(int length, int max) {
        return "record of " + length + " bytes exceeds max-record-bytes " + max;
    }

    private static int firstNonBlank(byte[] b) {
        int i = 0;
        if (b.length >= 3 && (b[0] & 0xff) == 0xEF && (b[1] & 0xff) == 0xBB && (b[2] & 0xff) == 0xBF) {
            i = 3;
        }
        for (; i < b.length; i++) {
            byte c = b[i];
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                return i;
            }
        }
        return -1;
    }

    private static boolean startsJson(byte c) {
        return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n';
    }

    private static String describe(@Nullable JsonToken t) {
        if (t == null) {
            return "nothing";
        }
        switch (t) {
            case START_ARRAY:
                return "an array";
            case START_OBJECT:
                return "an object";
            case VALUE_STRING:
                return "a string";
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return "a number";
            case VALUE_TRUE:
            case VALUE_FALSE:
                return "a boolean";
            case VALUE_NULL:
                return "null";
            default:
                return t.toString();
        }
    }

    // ---- compiled flow ---------------------------------------------------------------------------

    private static final class Plan {
        final int index;
        final DecoderFlow flow;
        final RowShape data;
        final int dataArity;
        final int arity;
        final int[] keyIdx;
        final int[] seqIdx;
        final int[] notNullNonKey;
        final boolean debezium;
        final boolean needsHints;
        final boolean[] present;

        Plan(int index, DecoderFlow flow) {
            this.index = index;
            this.flow = flow;
            this.data = new RowShape(flow.dataType());
            this.dataArity = data.arity();
            this.arity = flow.sourceType().getFieldCount();
            RowType st = flow.sourceType();
            this.keyIdx = flow.keys().stream().mapToInt(st::getFieldIndex).toArray();
            this.seqIdx = flow.sequenceBy().stream().mapToInt(st::getFieldIndex).toArray();
            List<Integer> nn = new ArrayList<>();
            for (int c = 0; c < dataArity; c++) {
                if (!data.columns[c].nullable && !flow.keys().contains(data.names[c])) {
                    nn.add(c);
                }
            }
            this.notNullNonKey = nn.stream().mapToInt(Integer::intValue).toArray();
            this.debezium = flow.format() == ChangeRecordFormat.DEBEZIUM_JSON;
            this.needsHints = needsHints(flow.dataType());
            this.present = new boolean[dataArity];
        }

        private static boolean needsHints(LogicalType t) {
            switch (t.getTypeRoot()) {
                case DECIMAL:
                case TIME_WITHOUT_TIME_ZONE:
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                    return true;
                case ROW:
                    for (RowType.RowField f : ((RowType) t).getFields()) {
                        if (needsHints(f.getType())) {
                            return true;
                        }
                    }
                    return false;
                case ARRAY:
                    return needsHints(((ArrayType) t).getElementType());
                case MAP:
                    return needsHints(((MapType) t).getValueType());
                default:
                    return false;
            }
        }
    }

    /** A byte range used as a schema-cache key; the probe instance wraps the input without copying. */
    private static final class SchemaKey {
        byte[] b;
        int start, end, hash;

        void set(byte[] b, int start, int end) {
            this.b = b;
            this.start = start;
            this.end = end;
            int h = 1;
            for (int i = start; i < end; i++) {
                h = 31 * h + b[i];
            }
            this.hash = h;
        }

        SchemaKey copy() {
            SchemaKey k = new SchemaKey();
            k.b = Arrays.copyOfRange(b, start, end);
            k.start = 0;
            k.end = k.b.length;
            k.hash = hash;
            return k;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof SchemaKey)) {
                return false;
            }
            SchemaKey k = (SchemaKey) o;
            return hash == k.hash && Arrays.equals(b, start, end, k.b, k.start, k.end);
        }
    }
}

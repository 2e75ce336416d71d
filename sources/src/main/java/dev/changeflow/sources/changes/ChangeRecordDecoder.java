package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.List;

/**
 * Decodes change records — plain JSON and Debezium JSON — into Flink rows for the flows it was
 * built for (semantics.md A5). Pure Java (no Flink runtime), single-threaded, reusable: build one
 * per task and call {@link #decode} per record. Parsing is one streaming pass with Jackson's {@link
 * JsonParser}; the data image is buffered as a flat member table until the routing fields (which
 * Debezium writes after it) are known, so each record is tokenized about once.
 *
 * <h2>Accepted record forms</h2>
 *
 * <ul>
 *   <li><b>Capture line</b> {@code {"key": ..., "value": ..., "topic": "..."}} (files recorded from
 *       Kafka, see {@code shared/data/README.md}); {@code "value": null} is a tombstone.
 *   <li><b>Schema wrapper</b> {@code {"schema": {...}, "payload": {...}}} (Kafka {@code
 *       JsonConverter} with schemas), alone or as the capture line's value or key; {@code
 *       "payload": null} is a tombstone. The schema drives Connect {@code Decimal} and temporal
 *       units.
 *   <li><b>Debezium envelope</b> {@code {"before", "after", "source", "op", "ts_ms", ...}}; other
 *       envelope members are ignored.
 *   <li><b>Plain JSON row</b> {@code {"col": value, ...}} (format {@link ChangeRecordFormat#JSON}).
 *       An object is taken as a capture line only when all its members are among {@code key},
 *       {@code value}, {@code topic} and it has a {@code value}; as a schema wrapper only when its
 *       members are exactly among {@code schema}, {@code payload} with a {@code payload}.
 * </ul>
 *
 * <h2>Debezium operations (A5, K5)</h2>
 *
 * {@code c}, {@code r}, {@code u} → upsert ({@code RowKind.INSERT}) of {@code after} ({@code
 * before} is not needed); {@code d} → delete ({@code RowKind.DELETE}) with the columns of {@code
 * before}, or, when {@code before} is null, with only the key columns taken from the record key
 * (other columns null); {@code t} → truncate (data columns null, metadata set) if the flow enables
 * truncate, else {@code TRUNCATE_NOT_ENABLED}; a tombstone is skipped and reported as {@link
 * DecodeOutcome#TOMBSTONE_SKIPPED}. Append-only flows accept {@code c} and {@code r} only (see
 * {@link DecoderFlow}). Plain JSON records are always upserts; delete predicates run later in Flink
 * SQL.
 *
 * <h2>Quarantine reasons, checked in this order</h2>
 *
 * <ol>
 *   <li>{@code RECORD_TOO_LARGE}: longer than the largest {@code maxRecordBytes} of all flows
 *       (before parsing) or than the routed flow's (after routing);
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
 *       other JSON as its text; BINARY/VARBINARY from base64; DATE from days since epoch ({@code
 *       io.debezium.time.Date}) or an ISO date; TIME(p) and TIMESTAMP(p) from integers in the unit
 *       the wrapper's schema names ({@code Timestamp} ms, {@code MicroTimestamp} µs, {@code
 *       NanoTimestamp} ns) or, without schema, by precision (p ≤ 3 ms, ≤ 6 µs, else ns), or from
 *       ISO strings, read as UTC; TIMESTAMP_LTZ(p) from an ISO instant ({@code ZonedTimestamp}) or
 *       an integer; ROW/MAP from objects, ARRAY from arrays;
 *   <li>{@code SCHEMA_CHANGED}: the data image (or plain row) has members the data columns lack
 *       (under {@link OnSchemaChange#QUARANTINE}; {@code FAIL} throws {@link
 *       ChangeRecordException}; {@code ADD_COLUMNS} throws {@link SchemaChangeException} naming the
 *       new top-level columns and their types, and quarantines only unknown members of nested
 *       objects);
 *   <li>{@code MISSING_COLUMN} — Decision: a KEY or data SEQUENCE BY column that is <i>absent</i>
 *       (not merely null) from the image the row is built from ({@code after}; {@code before} of a
 *       delete; the record key of a key-only delete, for KEYS); other absent columns are null, not
 *       errors;
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
 * Kafka records (the key/value method) to the flow their topic routes to; otherwise they carry flow
 * null and fail the job if any flow says {@code fail}. {@code UNKNOWN_TOPIC} records are always
 * quarantined (they belong to no flow). Quarantine rows carry {@code raw} as received, cut to its
 * first {@value #QUARANTINE_RAW_LIMIT} bytes for {@code RECORD_TOO_LARGE}.
 *
 * <p>All flows of one decoder share one {@link ChangeRecordFormat} (one source, one format).
 *
 * <h2>Stages</h2>
 *
 * Each record goes once through: the checks before parsing (size, {@code NOT_JSON}); the format's
 * parser ({@code DebeziumJsonRecordParser} or {@code JsonRecordParser}, over {@code
 * ChangeRecordParser}), which recognises the record form ({@code RecordForm}) in the same pass;
 * routing ({@code FlowRouter}, shared with {@link SchemaSampler}); the format's operation rules;
 * row assembly and its checks ({@code RowAssembler}); and the failure policy ({@code
 * QuarantinePolicy}) wherever a check fails.
 */
@PublicEvolving
public final class ChangeRecordDecoder {
    /** Bytes of an oversized record kept in the quarantine row's {@code raw}. */
    public static final int QUARANTINE_RAW_LIMIT = 64 * 1024;

    private final List<DecoderFlow> flows;
    private final FlowPlan[] plans;
    private final FlowRouter router;
    private final int maxAll;
    private final ChangeRecordParser parser;
    private final QuarantinePolicy policy;
    private final RowAssembler rows;
    private final ValueConverter values;

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
        ChangeRecordFormat format = flows.get(0).format();
        this.plans = new FlowPlan[flows.size()];
        FlowRouter.Builder routes = FlowRouter.builder();
        int all = 0;
        for (int i = 0; i < flows.size(); i++) {
            DecoderFlow f = flows.get(i);
            if (f.format() != format) {
                throw new IllegalArgumentException(
                        "all flows of one decoder must share a format: flow '"
                                + f.flowId()
                                + "' is "
                                + f.format().configName()
                                + ", flow '"
                                + flows.get(0).flowId()
                                + "' is "
                                + format.configName());
            }
            plans[i] = new FlowPlan(i, f);
            all = Math.max(all, f.maxRecordBytes());
            routes.add(f.flowId(), f.sourceNames());
        }
        this.router = routes.build();
        this.maxAll = all;
        JsonFactory factory = jsonFactory();
        this.parser = ChangeRecordParser.forFormat(format, factory);
        this.policy = new QuarantinePolicy(this.flows);
        this.values = new ValueConverter(factory);
        this.rows = new RowAssembler(values, policy);
    }

    /**
     * Jackson without length limits on strings and numbers: {@code max-record-bytes} is the limit.
     */
    static JsonFactory jsonFactory() {
        StreamReadConstraints unlimited =
                StreamReadConstraints.builder()
                        .maxStringLength(Integer.MAX_VALUE)
                        .maxNumberLength(Integer.MAX_VALUE)
                        .build();
        return JsonFactory.builder().streamReadConstraints(unlimited).build();
    }

    /**
     * The flows in the order given; a flow's position is its {@code flowIndex} in {@link
     * DecodeOutput}.
     */
    public List<DecoderFlow> flows() {
        return flows;
    }

    /**
     * The flow id that unroutable records are attributed to: the only flow's, or null with several
     * flows.
     */
    @Nullable
    public String defaultFlowId() {
        return policy.defaultFlowId();
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
     * @throws ChangeRecordException when the record's flow (or, unroutable, the policy above) says
     *     fail
     */
    /**
     * Whether the records decoded next are the text cells of CSV lines (docs/semantics.md S2):
     * every value a JSON string, read by the column's type from its text (an integer or BOOLEAN
     * from {@code 42} / {@code true}); a number is then never taken as days or microseconds since
     * the epoch. False (the default) for JSON and Debezium records.
     */
    public void textCells(boolean textCells) {
        values.textCells = textCells;
    }

    public DecodeOutcome decode(
            @Nullable byte[] raw,
            String source,
            @Nullable Integer partition,
            long offset,
            long nowMillis,
            DecodeOutput out) {
        begin(raw, source, partition, offset, nowMillis, out);
        if (raw == null) {
            return DecodeOutcome.TOMBSTONE_SKIPPED;
        }
        return decodeValue(raw, RecordForm.RECORD, null, null);
    }

    /**
     * Decodes a Kafka record whose key and value are separate (the topic routes; the value is a
     * schema wrapper, an envelope or a plain row; the key, JSON or null, is used by key-only
     * deletes).
     *
     * @param key the record key's bytes, or null
     * @param value the record value's bytes; null is a tombstone
     * @param topic the Kafka topic (routing and the quarantine row's {@code source})
     * @throws ChangeRecordException as {@link #decode(byte[], String, Integer, long, long,
     *     DecodeOutput)}
     */
    public DecodeOutcome decode(
            @Nullable byte[] key,
            @Nullable byte[] value,
            String topic,
            int partition,
            long offset,
            long nowMillis,
            DecodeOutput out) {
        begin(value, topic, partition, offset, nowMillis, out);
        if (value == null) {
            return DecodeOutcome.TOMBSTONE_SKIPPED;
        }
        return decodeValue(
                value, RecordForm.VALUE, topic, key != null && key.length > 0 ? key : null);
    }

    /**
     * Quarantines (or, by the unroutable policy, fails on) a record the caller rejected before
     * decoding, e.g. a file line longer than the reader's buffer ({@code RECORD_TOO_LARGE}). The
     * {@code raw} is kept up to {@link #QUARANTINE_RAW_LIMIT} bytes.
     */
    public DecodeOutcome reject(
            QuarantineReason reason,
            @Nullable byte[] raw,
            String source,
            @Nullable Integer partition,
            long offset,
            String detail,
            long nowMillis,
            DecodeOutput out) {
        begin(raw, source, partition, offset, nowMillis, out);
        return policy.quarantine(null, reason, detail);
    }

    private void begin(
            @Nullable byte[] raw,
            String source,
            @Nullable Integer partition,
            long offset,
            long now,
            DecodeOutput out) {
        policy.begin(raw, source, partition, offset, now, out);
        rows.begin(out);
    }

    private DecodeOutcome decodeValue(
            byte[] value, int level, @Nullable String knownTopic, @Nullable byte[] key) {
        // a Kafka record's topic routes it before parsing: a record that cannot be parsed belongs
        // to
        // the topic's flow (its policy and flow id), not to "no flow"
        FlowPlan byTopic = knownTopic == null ? null : plan(router.route(knownTopic, null, null));
        if (value.length > maxAll) {
            return policy.quarantine(
                    byTopic,
                    QuarantineReason.RECORD_TOO_LARGE,
                    QuarantinePolicy.tooLarge(value.length, maxAll));
        }
        String notJson = RecordForm.notJson(value);
        if (notJson != null) {
            return policy.quarantine(byTopic, QuarantineReason.NOT_JSON, notJson);
        }
        FlowPlan plan = null;
        try {
            switch (parser.parse(value, level, knownTopic, key)) {
                case TOMBSTONE:
                    return DecodeOutcome.TOMBSTONE_SKIPPED;
                case NOT_AN_OBJECT:
                    return policy.quarantine(
                            null, QuarantineReason.MALFORMED_JSON, parser.notAnObjectDetail);
                default:
            }
            plan = plan(router.route(parser.topic(), parser.sourceSchema(), parser.sourceTable()));
            if (plan == null) {
                return policy.unrouted(router.unrouted(parser.topic(), parser.sourceTable()));
            }
            if (value.length > plan.flow.maxRecordBytes()) {
                return policy.quarantine(
                        plan,
                        QuarantineReason.RECORD_TOO_LARGE,
                        QuarantinePolicy.tooLarge(value.length, plan.flow.maxRecordBytes()));
            }
            if (parser.form.structureError != null) {
                return policy.quarantine(
                        plan, QuarantineReason.MALFORMED_JSON, parser.form.structureError);
            }
            return parser.emit(plan, rows, policy);
        } catch (ValueConverter.InvalidRecord e) {
            return policy.quarantine(plan, e.reason, e.detail);
        } catch (JsonProcessingException e) {
            String at =
                    e.getLocation() == null ? "" : " at byte " + e.getLocation().getByteOffset();
            return policy.quarantine(
                    byTopic,
                    QuarantineReason.MALFORMED_JSON,
                    "JSON parse error: " + e.getOriginalMessage() + at);
        } catch (IOException e) {
            return policy.quarantine(
                    byTopic, QuarantineReason.MALFORMED_JSON, "JSON read error: " + e.getMessage());
        }
    }

    @Nullable
    private FlowPlan plan(int route) {
        return route == FlowRouter.NONE ? null : plans[route];
    }
}

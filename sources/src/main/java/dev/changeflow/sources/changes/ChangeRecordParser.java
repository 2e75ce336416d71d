package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * The shared base of the per-format record parsers (semantics.md A5): one streaming pass over a
 * record ({@link #parse}) recognises its form ({@link RecordForm}) and reads what routing needs
 * (topic, Debezium {@code source.schema} / {@code source.table}) and the data image as a flat
 * member table; after routing, {@link #emit} turns it into rows through {@link RowAssembler}.
 * {@link SchemaSampler} calls {@link #parse} alone, so sampling sees records exactly as decoding
 * does.
 *
 * <p>Reusable and single-threaded: the per-record state lives in fields cleared by {@link #parse},
 * so parsing allocates no objects for the form or the image beyond the texts of its values.
 */
@Internal
abstract class ChangeRecordParser {
    /** What {@link #parse} found. */
    enum Parsed {
        /** A record to route and {@link #emit}. */
        RECORD,
        /** A tombstone: nothing to emit (A5, K5). */
        TOMBSTONE,
        /**
         * The top-level value is not an object ({@code MALFORMED_JSON}, detail {@link
         * #notAnObjectDetail}).
         */
        NOT_AN_OBJECT
    }

    final JsonFactory factory;
    final Interner interner = new Interner();
    final RecordForm form = new RecordForm(interner);

    /** The data image read during the pass: a Debezium {@code after}, or the plain row. */
    final JsonFields image = new JsonFields();

    boolean imagePresent;

    /** The {@link Parsed#NOT_AN_OBJECT} detail. */
    @Nullable String notAnObjectDetail;

    private final SchemaCache schemas;

    ChangeRecordParser(JsonFactory factory) {
        this.factory = factory;
        this.schemas = new SchemaCache(factory);
    }

    /** The parser of a format. */
    static ChangeRecordParser forFormat(ChangeRecordFormat format, JsonFactory factory) {
        return format == ChangeRecordFormat.DEBEZIUM_JSON
                ? new DebeziumJsonRecordParser(factory)
                : new JsonRecordParser(factory);
    }

    /**
     * Parses one record.
     *
     * @param value the record's bytes (a file line or a Kafka value), starting like JSON
     * @param level {@link RecordForm#RECORD} for a line, {@link RecordForm#VALUE} for a Kafka value
     * @param topic the Kafka topic, or null (a capture line names its own)
     * @param key a Kafka record key (non-empty), or null
     * @throws IOException when the JSON does not parse (cut short, bad token, trailing content)
     */
    final Parsed parse(byte[] value, int level, @Nullable String topic, @Nullable byte[] key)
            throws IOException {
        form.clear(value, topic);
        if (key != null) {
            form.recordKey(key);
        }
        image.clear(value);
        imagePresent = false;
        notAnObjectDetail = null;
        return read(value, level);
    }

    /**
     * Reads the record after {@link #parse} cleared the shared state; clears the format's own
     * first.
     */
    abstract Parsed read(byte[] value, int level) throws IOException;

    /**
     * Emits the parsed record's rows for the flow it was routed to, after the decoder's checks that
     * come before the format's (size, structure).
     *
     * @throws ValueConverter.InvalidRecord a value its column cannot hold (the caller quarantines
     *     it)
     * @throws IOException when a nested part of the record (an image, the schema) does not parse
     */
    abstract DecodeOutcome emit(FlowPlan plan, RowAssembler rows, QuarantinePolicy policy)
            throws IOException, ValueConverter.InvalidRecord;

    /** The record's topic: the Kafka topic or the capture line's, or null. */
    @Nullable
    final String topic() {
        return form.topic;
    }

    /**
     * The record's database schema ({@code source.schema}), for routing; null when the format has
     * none.
     */
    @Nullable
    String sourceSchema() {
        return null;
    }

    /** The record's table ({@code source.table}), for routing; null when the format has none. */
    @Nullable
    String sourceTable() {
        return null;
    }

    /**
     * The table a record names for messages: its source table, else its topic, else the flow id.
     */
    final String tableName(FlowPlan plan) {
        String table = sourceTable();
        return table != null ? table : form.topic != null ? form.topic : plan.flow.flowId();
    }

    /**
     * Writes the format's metadata columns into {@code row} from position {@code from}; none by
     * default.
     */
    void writeMetadata(GenericRowData row, int from) {}

    /**
     * Why the null SEQUENCE BY column at position {@code s} of the source row shows that the flow's
     * sequence cannot order the records of this source at all, or null when it is this record's
     * null (semantics.md A5 "Default sequence per connector"); none by default.
     */
    @Nullable
    String unusableSequence(FlowPlan plan, int s) throws IOException {
        return null;
    }

    /**
     * The struct schema of the named image ({@code "after"}, {@code "before"}) from the record's
     * schema wrapper, or null without one.
     */
    @Nullable
    abstract ConnectSchema imageSchema(String imageName) throws IOException;

    /** The schema wrapper's schema (cached by its bytes), or null without one. */
    @Nullable
    final ConnectSchema wrapperSchema() throws IOException {
        return form.hasSchema() ? schemas.get(form.buf(), form.schemaStart, form.schemaEnd) : null;
    }

    /** A schema object of the record key, {@code b[start, end)} (cached by its bytes). */
    final ConnectSchema keySchema(byte[] b, int start, int end) throws IOException {
        return schemas.get(b, start, end);
    }

    /**
     * The image a schema is learnt from ({@link SchemaSampler}): the Debezium {@code after}, else
     * its {@code before}; the plain row. Null when the record has none.
     */
    @Nullable
    abstract JsonFields sampleImage() throws IOException;

    /** The name of {@link #sampleImage()}'s image for {@link #imageSchema}. */
    abstract String sampleImageName();

    /** The record's {@code source.connector} (Debezium), or null. */
    @Nullable
    String connector() {
        return null;
    }

    /** The namespace a record names ({@code source.schema}, else {@code source.db}), or null. */
    @Nullable
    String namespace() {
        return null;
    }

    /** Answers {@link Parsed#NOT_AN_OBJECT} for a record whose first token is {@code t}. */
    final Parsed notAnObject(@Nullable JsonToken t) {
        notAnObjectDetail = "expected a JSON object, found " + RecordForm.describe(t);
        return Parsed.NOT_AN_OBJECT;
    }
}

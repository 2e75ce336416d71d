package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * Recognises the form a change record arrives in (semantics.md A5) and keeps what the form says
 * about the record being parsed. One per {@link ChangeRecordParser}, cleared per record; nothing is
 * allocated per record but the topic text (interned).
 *
 * <h2>Forms, outside in</h2>
 *
 * <ul>
 *   <li><b>Capture line</b> {@code {"key": ..., "value": ..., "topic": "..."}} at level {@link
 *       #RECORD} (files recorded from Kafka); {@code "value": null} is a tombstone. Its {@code key}
 *       is the record key (used by key-only deletes) and its {@code topic} routes the record.
 *   <li><b>Schema wrapper</b> {@code {"schema": {...}, "payload": {...}}} (Kafka {@code
 *       JsonConverter} with schemas) at level {@link #RECORD} or {@link #VALUE} (a capture line's
 *       value or a Kafka value); {@code "payload": null} is a tombstone. Its {@code schema} types
 *       Connect decimals and temporal units (see {@link ConnectSchema}).
 *   <li><b>The record itself</b> at any level: a Debezium envelope or a plain JSON row, read by the
 *       format's parser; inside a wrapper its level is {@link #PAYLOAD}.
 * </ul>
 *
 * <h2>Two recognition rules</h2>
 *
 * <ul>
 *   <li><b>Member by member</b> ({@link #readMember}), for Debezium JSON: an envelope has no member
 *       named {@code key}, {@code value}, {@code topic}, {@code schema} or {@code payload}, so such
 *       a member at a level where its form can stand is the form's, and everything else is left to
 *       the envelope. The parser asks about each member it does not own, in the same single pass.
 *   <li><b>Whole object</b> ({@link #unwrap}), for plain JSON: a row may have columns of any name,
 *       so an object is a capture line only when all its members are among {@code key}, {@code
 *       value}, {@code topic} and it has a {@code value} that is an object or null, and a schema
 *       wrapper only when all its members are among {@code schema}, {@code payload} and it has such
 *       a {@code payload}. {@link #startsForm} tells from the first member name whether an object
 *       can be a form at all, so that a row is read into a member table only once.
 * </ul>
 *
 * A record key read on its own (key-only deletes) is a schema wrapper when its members are {@code
 * payload} and at most a {@code schema} ({@link #keyPayload}).
 */
@Internal
final class RecordForm {
    /** The whole record (a file line or a Kafka value read as a line). */
    static final int RECORD = 0;

    /** A capture line's value, or a Kafka record's value. */
    static final int VALUE = 1;

    /** A schema wrapper's payload. */
    static final int PAYLOAD = 2;

    /** {@link #readMember}'s answer for a member it consumed. */
    static final int CONSUMED = -1;

    private final Interner interner;

    private byte[] buf;

    /** The capture line's (or the Kafka record's) topic. */
    @Nullable String topic;

    /** The record key's bytes ({@link #buf} for a capture line's key, or a Kafka key), or null. */
    @Nullable byte[] keyBuf;

    int keyStart;
    int keyEnd;

    /** A record key was present but not an object (and not null). */
    boolean keyNotObject;

    /** The wrapper's {@code schema} object in {@link #buf}, or {@code schemaStart < 0}. */
    int schemaStart;

    int schemaEnd;
    boolean valueNull;
    boolean payloadNull;

    /**
     * The first form member of the wrong JSON kind ({@code MALFORMED_JSON} after routing), or null.
     */
    @Nullable String structureError;

    RecordForm(Interner interner) {
        this.interner = interner;
    }

    /**
     * Starts a record: {@code topic} is the Kafka topic when known (a capture line names its own).
     */
    void clear(byte[] buf, @Nullable String topic) {
        this.buf = buf;
        this.topic = topic;
        keyBuf = null;
        keyStart = keyEnd = -1;
        keyNotObject = false;
        schemaStart = schemaEnd = -1;
        valueNull = payloadNull = false;
        structureError = null;
    }

    /** The bytes of the record being parsed (the ranges above are in them). */
    byte[] buf() {
        return buf;
    }

    /** Sets a Kafka record key (non-empty bytes). */
    void recordKey(byte[] key) {
        keyBuf = key;
        keyStart = 0;
        keyEnd = key.length;
    }

    boolean hasSchema() {
        return schemaStart >= 0;
    }

    /**
     * Records a member of the wrong JSON kind as the record's structure error (the first one wins)
     * and skips it.
     */
    void wrongKind(JsonParser p, JsonToken v, String member, String expected) throws IOException {
        if (structureError == null) {
            structureError = member + " is " + describe(v) + ", not " + expected;
        }
        p.skipChildren();
    }

    /**
     * Whether the record is a tombstone: a capture line's null value, or a wrapper's null payload
     * with no envelope member beside it.
     */
    boolean tombstone(boolean recordSeen) {
        return valueNull || (payloadNull && !recordSeen);
    }

    // ---- member by member (Debezium)
    // --------------------------------------------------------------

    /**
     * Reads a member the envelope does not own; the parser is on the member's value token {@code
     * v}. Form members are recorded (key, topic, schema, null value / payload, structure errors),
     * anything else is skipped.
     *
     * @return {@link #VALUE} or {@link #PAYLOAD} when the member is an object holding the record
     *     one level down, which the caller reads next (the parser is on its START_OBJECT); else
     *     {@link #CONSUMED}
     */
    int readMember(JsonParser p, String name, JsonToken v, int level) throws IOException {
        switch (name) {
            case "key":
                if (level == RECORD) {
                    if (v == JsonToken.START_OBJECT) {
                        keyBuf = buf;
                        keyStart = (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        keyEnd = (int) p.currentLocation().getByteOffset();
                        return CONSUMED;
                    }
                    keyNotObject = v != JsonToken.VALUE_NULL;
                }
                break;
            case "value":
                if (level == RECORD) {
                    return holder(p, v, VALUE, "capture line member 'value'");
                }
                break;
            case "topic":
                if (level == RECORD && v == JsonToken.VALUE_STRING) {
                    topic = interner.text(p);
                }
                break;
            case "schema":
                if (level <= VALUE && v == JsonToken.START_OBJECT) {
                    schemaStart = (int) p.currentTokenLocation().getByteOffset();
                    p.skipChildren();
                    schemaEnd = (int) p.currentLocation().getByteOffset();
                    return CONSUMED;
                }
                break;
            case "payload":
                if (level <= VALUE) {
                    return holder(p, v, PAYLOAD, "member 'payload'");
                }
                break;
            default:
        }
        p.skipChildren();
        return CONSUMED;
    }

    /**
     * A member that holds the record at level {@code inner}: an object, or null for a tombstone.
     */
    private int holder(JsonParser p, JsonToken v, int inner, String member) throws IOException {
        if (v == JsonToken.START_OBJECT) {
            return inner;
        }
        if (v == JsonToken.VALUE_NULL) {
            if (inner == VALUE) {
                valueNull = true;
            } else {
                payloadNull = true;
            }
        } else {
            wrongKind(p, v, member, "an object");
        }
        return CONSUMED;
    }

    // ---- whole object (plain JSON)
    // ----------------------------------------------------------------

    /** Whether an object at {@code level} whose first member is {@code name} may be a form. */
    static boolean startsForm(String name, int level) {
        if (level == RECORD
                && (name.equals("key") || name.equals("value") || name.equals("topic"))) {
            return true;
        }
        return level <= VALUE && (name.equals("schema") || name.equals("payload"));
    }

    /**
     * Recognises the members {@code w} of an object at {@code level} as a form, and records its
     * topic (capture line) or schema (wrapper).
     *
     * @return the index in {@code w} of the member holding the record (an object or null, null
     *     being a tombstone), or -1 when the object is the record itself
     */
    int unwrap(JsonFields w, int level) {
        int vi = level == RECORD ? w.indexOf("value") : -1;
        if (vi >= 0 && objectOrNull(w, vi) && onlyNames(w, "key", "value", "topic")) {
            int ti = w.indexOf("topic");
            if (ti >= 0 && w.kinds[ti] == JsonFields.STRING) {
                topic = w.texts[ti];
            }
            return vi;
        }
        int pi = w.indexOf("payload");
        if (pi >= 0 && objectOrNull(w, pi) && onlyNames(w, "schema", "payload")) {
            int si = w.indexOf("schema");
            if (si >= 0 && w.kinds[si] == JsonFields.OBJECT) {
                schemaStart = w.starts[si];
                schemaEnd = w.ends[si];
            }
            return pi;
        }
        return -1;
    }

    /** The level of the record held by member {@code i} of an {@link #unwrap}ped form. */
    static int levelInside(JsonFields w, int i) {
        return "value".equals(w.names[i]) ? VALUE : PAYLOAD;
    }

    /**
     * The index of a record key's {@code payload} when the key (members {@code k}) is a schema
     * wrapper, else -1.
     */
    static int keyPayload(JsonFields k) {
        int ps = k.indexOf("payload");
        return ps >= 0 && k.size <= 2 && (k.size == 1 || k.indexOf("schema") >= 0) ? ps : -1;
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

    // ---- before parsing
    // ------------------------------------------------------------------------------

    /**
     * Why a record is {@code NOT_JSON} (empty, blank, or its first non-blank byte after an optional
     * UTF-8 byte-order mark cannot start a JSON value), or null when it may be JSON.
     */
    @Nullable
    static String notJson(byte[] value) {
        int first = firstNonBlank(value);
        if (first < 0) {
            return value.length == 0 ? "empty record" : "blank record";
        }
        byte c = value[first];
        if (c == '{'
                || c == '['
                || c == '"'
                || c == '-'
                || (c >= '0' && c <= '9')
                || c == 't'
                || c == 'f'
                || c == 'n') {
            return null;
        }
        int b = c & 0xff;
        return "record does not start like JSON: first byte 0x"
                + String.format("%02x", b)
                + (b >= 0x20 && b < 0x7f ? " '" + (char) b + "'" : "");
    }

    private static int firstNonBlank(byte[] b) {
        int i = 0;
        if (b.length >= 3
                && (b[0] & 0xff) == 0xEF
                && (b[1] & 0xff) == 0xBB
                && (b[2] & 0xff) == 0xBF) {
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

    /** Fails on anything after the record's top-level object. */
    static void checkEnd(JsonParser p) throws IOException {
        if (p.nextToken() != null) {
            throw new JsonParseException(p, "trailing content after the JSON object");
        }
    }

    /** A JSON token's kind for messages: "an array", "a string", "null", "nothing", .... */
    static String describe(@Nullable JsonToken t) {
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
}

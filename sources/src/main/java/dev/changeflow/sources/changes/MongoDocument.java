package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.annotation.Internal;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Map;

/**
 * The document of a Debezium MongoDB change event (semantics.md A5 "MongoDB documents"): the
 * connector writes {@code after} (and {@code before} with pre-images) as a JSON <em>string</em>
 * holding the document in MongoDB Extended JSON, and the record key as {@code {"id": "<the _id in
 * Extended JSON>"}}. {@link #toPlainJson} turns such a string into plain JSON bytes that the
 * decoder reads like any other image; the type wrappers become the values the column types read
 * ({@link ValueConverter}):
 *
 * <ul>
 *   <li>{@code {"$oid": "5f..."}} → the string {@code "5f..."} (STRING);
 *   <li>{@code {"$numberLong": "9"}}, {@code {"$numberInt": "9"}} → the integer 9 (BIGINT, INT);
 *   <li>{@code {"$numberDouble": "1.5"}} → 1.5 ({@code "NaN"}, {@code "Infinity"} stay strings);
 *   <li>{@code {"$numberDecimal": "12.30"}} → the exact number 12.30 (DECIMAL where declared; never
 *       rounded);
 *   <li>{@code {"$date": n}}, {@code {"$date": {"$numberLong": "n"}}} or {@code {"$date":
 *       "2024-01-02T03:04:05.678Z"}} → n, milliseconds since the epoch (TIMESTAMP(3));
 *   <li>{@code {"$binary": {"base64": "...", ...}}} or {@code {"$binary": "...", "$type": ..}} →
 *       the base64 string (BYTES).
 * </ul>
 *
 * Other objects (nested documents, {@code $timestamp}, {@code $regex}, ...) and arrays are kept,
 * with the wrappers inside them replaced the same way.
 */
@Internal
final class MongoDocument {
    private static final JsonMapper MAPPER =
            JsonMapper.builder()
                    .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                    .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
                    .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
                    .build();

    private static final JsonNodeFactory NODES = MAPPER.getNodeFactory();

    /** Whether {@code connector} (a {@code source.connector} value) is Debezium's MongoDB one. */
    static boolean isMongo(String connector) {
        return "mongodb".equals(connector);
    }

    private MongoDocument() {}

    /**
     * The plain JSON of a document given as Extended JSON text.
     *
     * @param text the JSON string's content (the document)
     * @param what names the member for messages, e.g. {@code "envelope member 'after'"}
     * @throws Malformed when the text is not JSON, not an object (when {@code objectOnly}), or a
     *     type wrapper holds a value of the wrong form
     */
    static byte[] toPlainJson(String text, String what, boolean objectOnly) throws Malformed {
        JsonNode doc;
        try {
            doc = MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new Malformed(
                    what
                            + " is a string that is not a MongoDB Extended JSON document: "
                            + e.getOriginalMessage());
        }
        if (doc == null || (objectOnly && !doc.isObject())) {
            throw new Malformed(
                    what
                            + " is a string holding "
                            + (doc == null ? "nothing" : doc.getNodeType().toString().toLowerCase())
                            + ", not a MongoDB document (an object)");
        }
        try {
            return MAPPER.writeValueAsBytes(plain(doc, what));
        } catch (JsonProcessingException e) {
            throw new Malformed(what + ": " + e.getOriginalMessage());
        }
    }

    /** Replaces the Extended JSON type wrappers in {@code n} (recursively). */
    private static JsonNode plain(JsonNode n, String what) throws Malformed {
        if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                ((com.fasterxml.jackson.databind.node.ArrayNode) n).set(i, plain(n.get(i), what));
            }
            return n;
        }
        if (!n.isObject()) {
            return n;
        }
        ObjectNode o = (ObjectNode) n;
        if (o.size() >= 1) {
            String first = o.fieldNames().next();
            if (first.startsWith("$")) {
                JsonNode w = wrapper(first, o, what);
                if (w != null) {
                    return w;
                }
            }
        }
        Iterator<Map.Entry<String, JsonNode>> it = o.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            e.setValue(plain(e.getValue(), what));
        }
        return o;
    }

    /** The value of a type wrapper {@code {"$name": v}}, or null when it is not one handled. */
    private static JsonNode wrapper(String name, ObjectNode o, String what) throws Malformed {
        JsonNode v = o.get(name);
        switch (name) {
            case "$oid":
                return o.size() == 1 && v.isTextual() ? v : null;
            case "$numberLong":
            case "$numberInt":
                if (o.size() != 1) {
                    return null;
                }
                try {
                    return NODES.numberNode(Long.parseLong(v.asText().trim()));
                } catch (NumberFormatException e) {
                    throw new Malformed(what + ": " + name + " " + v + " is not an integer");
                }
            case "$numberDouble":
                if (o.size() != 1) {
                    return null;
                }
                try {
                    double d = Double.parseDouble(v.asText().trim());
                    return Double.isFinite(d) ? NODES.numberNode(d) : v;
                } catch (NumberFormatException e) {
                    throw new Malformed(what + ": " + name + " " + v + " is not a number");
                }
            case "$numberDecimal":
                if (o.size() != 1) {
                    return null;
                }
                try {
                    return NODES.numberNode(new BigDecimal(v.asText().trim()));
                } catch (NumberFormatException e) {
                    // "NaN", "Infinity": no DECIMAL value; kept as text (a DECIMAL column rejects)
                    return v;
                }
            case "$date":
                if (o.size() != 1) {
                    return null;
                }
                if (v.isIntegralNumber()) {
                    return NODES.numberNode(v.longValue());
                }
                if (v.isObject() && v.has("$numberLong")) {
                    return wrapper("$numberLong", (ObjectNode) v, what);
                }
                if (v.isTextual()) {
                    try {
                        return NODES.numberNode(Instant.parse(v.asText()).toEpochMilli());
                    } catch (DateTimeParseException e) {
                        throw new Malformed(what + ": $date " + v + " is not an ISO-8601 instant");
                    }
                }
                throw new Malformed(what + ": $date " + v + " is not a date");
            case "$binary":
                if (v.isObject() && v.get("base64") != null) {
                    return v.get("base64");
                }
                return v.isTextual() ? v : null;
            default:
                return null;
        }
    }

    /** A MongoDB document string that cannot be read; the decoder quarantines MALFORMED_JSON. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }
}

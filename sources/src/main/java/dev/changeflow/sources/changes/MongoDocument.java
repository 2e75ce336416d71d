package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
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
 *       the base64 string (BYTES);
 *   <li>{@code {"$timestamp": {"t": s, "i": n}}} → the object {@code {"t": s, "i": n}} (a {@code
 *       ROW<t BIGINT, i BIGINT>} column);
 *   <li>{@code {"$regularExpression": {"pattern": p, "options": o}}} and the legacy {@code
 *       {"$regex": p, "$options": o}} → the string {@code /p/o}; {@code {"$symbol": s}} → s; {@code
 *       {"$undefined": true}} → null.
 * </ul>
 *
 * Other objects (nested documents, {@code $minKey}, {@code $maxKey}, ...) and arrays are kept, with
 * the wrappers inside them replaced the same way.
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
            case "$timestamp":
                // the oplog's (seconds, ordinal) pair: a ROW<t BIGINT, i BIGINT> column reads it
                return o.size() == 1 && v.isObject() ? v : null;
            case "$regularExpression":
                if (o.size() == 1 && v.isObject() && v.get("pattern") != null) {
                    JsonNode options = v.get("options");
                    return NODES.textNode(
                            "/"
                                    + v.get("pattern").asText()
                                    + "/"
                                    + (options == null ? "" : options.asText()));
                }
                return null;
            case "$regex":
                if (v.isTextual() && (o.size() == 1 || o.size() == 2 && o.has("$options"))) {
                    JsonNode options = o.get("$options");
                    return NODES.textNode(
                            "/" + v.asText() + "/" + (options == null ? "" : options.asText()));
                }
                return null;
            case "$symbol":
                return o.size() == 1 && v.isTextual() ? v : null;
            case "$undefined":
                return o.size() == 1 ? NODES.nullNode() : null;
            default:
                return null;
        }
    }

    /**
     * The {@code _id} of an oplog {@code filter} string ({@code "{\"_id\": {\"$oid\": ...}}"}) as
     * plain JSON.
     *
     * @throws Malformed when the filter is not a document with an {@code _id}
     */
    static byte[] idOfFilter(String filter) throws Malformed {
        JsonNode doc = read(filter, "envelope member 'filter'");
        JsonNode id = doc.isObject() ? doc.get("_id") : null;
        if (id == null) {
            throw new Malformed("envelope member 'filter' names no _id: " + filter);
        }
        try {
            return MAPPER.writeValueAsBytes(plain(id, "envelope member 'filter'"));
        } catch (JsonProcessingException e) {
            throw new Malformed("envelope member 'filter': " + e.getOriginalMessage());
        }
    }

    private static JsonNode read(String text, String what) throws Malformed {
        try {
            JsonNode n = MAPPER.readTree(text);
            if (n == null) {
                throw new Malformed(what + " is an empty string");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw new Malformed(
                    what
                            + " is a string that is not MongoDB Extended JSON: "
                            + e.getOriginalMessage());
        }
    }

    /**
     * What a MongoDB update without its full document says changed (semantics.md A5 "MongoDB
     * partial updates"): Debezium's change-streams {@code updateDescription} ({@code updatedFields}
     * — a JSON string of the new top-level values in Extended JSON —, {@code removedFields}, {@code
     * truncatedArrays}) or the oplog connector's {@code patch} (a JSON string: {@code {"$set":
     * {...}, "$unset": {...}}}, or a whole replacement document).
     */
    static final class Change {
        @Nullable private String updatedFields;
        @Nullable private JsonNode updatedObject;
        private final List<String> removed = new ArrayList<>();
        private final List<String> truncated = new ArrayList<>();
        @Nullable private String patch;

        /** Set by {@link #document}: the change was a whole replacement document, not a patch. */
        boolean whole;

        private Change() {}

        /** Reads {@code updateDescription}; the parser is on its START_OBJECT, left on its end. */
        static Change ofUpdateDescription(JsonParser p) throws IOException {
            Change c = new Change();
            JsonNode d = MAPPER.readTree(p);
            JsonNode updated = d.get("updatedFields");
            if (updated != null && updated.isTextual()) {
                c.updatedFields = updated.asText();
            } else if (updated != null && updated.isObject()) {
                c.updatedObject = updated;
            }
            JsonNode removed = d.get("removedFields");
            if (removed != null && removed.isArray()) {
                removed.forEach(n -> c.removed.add(n.asText()));
            }
            JsonNode truncated = d.get("truncatedArrays");
            if (truncated != null && truncated.isArray()) {
                truncated.forEach(
                        n ->
                                c.truncated.add(
                                        n.has("field") ? n.get("field").asText() : n.toString()));
            }
            return c;
        }

        /** The oplog connector's {@code patch} string. */
        static Change ofPatch(String patch) {
            Change c = new Change();
            c.patch = patch;
            return c;
        }

        /**
         * The document the change describes, as plain JSON: {@code _id}, every updated field with
         * its new value, every removed field null (for a replacement document: that document,
         * {@link #whole} set).
         *
         * @param id the document's {@code _id} as plain JSON
         * @throws Malformed when a string member is not Extended JSON
         * @throws Unsupported when the change touches a field inside a nested document ({@code
         *     a.b}), truncates an array, or uses an update operator other than {@code $set} and
         *     {@code $unset}: the new value of a column is then not in the record
         */
        byte[] document(byte[] id) throws Malformed {
            ObjectNode doc = NODES.objectNode();
            doc.set("_id", read(new String(id, java.nio.charset.StandardCharsets.UTF_8), "_id"));
            ObjectNode set = null;
            List<String> unset = new ArrayList<>(removed);
            whole = false;
            if (!truncated.isEmpty()) {
                throw new Unsupported(
                        "MongoDB update truncates the arrays "
                                + truncated
                                + " without sending their new value; capture full documents"
                                + " (capture.mode change_streams_update_full)");
            }
            if (patch != null) {
                JsonNode p = read(patch, "envelope member 'patch'");
                if (!p.isObject()) {
                    throw new Malformed("envelope member 'patch' is not a document: " + patch);
                }
                boolean operators = false;
                for (Iterator<String> it = p.fieldNames(); it.hasNext(); ) {
                    String f = it.next();
                    if (!f.startsWith("$")) {
                        continue;
                    }
                    operators = true;
                    switch (f) {
                        case "$set":
                            set = (ObjectNode) plain(p.get(f), "patch $set");
                            break;
                        case "$unset":
                            p.get(f).fieldNames().forEachRemaining(unset::add);
                            break;
                        case "$v":
                            break;
                        default:
                            throw new Unsupported(
                                    "MongoDB update operator "
                                            + f
                                            + " in 'patch' does not carry the new values; capture"
                                            + " full documents");
                    }
                }
                if (!operators) {
                    ObjectNode replacement = (ObjectNode) plain(p, "envelope member 'patch'");
                    replacement.set("_id", doc.get("_id"));
                    whole = true;
                    return bytes(replacement);
                }
            } else if (updatedFields != null) {
                JsonNode u = read(updatedFields, "updateDescription.updatedFields");
                if (!u.isObject()) {
                    throw new Malformed(
                            "updateDescription.updatedFields is not a document: " + updatedFields);
                }
                set = (ObjectNode) plain(u, "updateDescription.updatedFields");
            } else if (updatedObject != null) {
                set =
                        (ObjectNode)
                                plain(updatedObject.deepCopy(), "updateDescription.updatedFields");
            }
            if (set != null) {
                for (Iterator<Map.Entry<String, JsonNode>> it = set.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    nested(e.getKey());
                    doc.set(e.getKey(), e.getValue());
                }
            }
            for (String r : unset) {
                nested(r);
                doc.putNull(r);
            }
            return bytes(doc);
        }

        private static void nested(String field) throws Unsupported {
            if (field.indexOf('.') >= 0) {
                throw new Unsupported(
                        "MongoDB update changes the nested field '"
                                + field
                                + "' without sending the whole top-level value; capture full"
                                + " documents (capture.mode change_streams_update_full)");
            }
        }

        private static byte[] bytes(JsonNode n) throws Malformed {
            try {
                return MAPPER.writeValueAsBytes(n);
            } catch (JsonProcessingException e) {
                throw new Malformed("MongoDB update: " + e.getOriginalMessage());
            }
        }
    }

    /** A MongoDB partial update the columns cannot express; quarantined PARTIAL_UPDATE. */
    static final class Unsupported extends Malformed {
        private static final long serialVersionUID = 1L;

        Unsupported(String message) {
            super(message);
        }
    }

    /** A MongoDB document string that cannot be read; the decoder quarantines MALFORMED_JSON. */
    static class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }
}

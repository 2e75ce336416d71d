package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A reusable flat table of the members of one JSON object (or the elements of one array), filled in
 * a single streaming pass: scalars are kept as a kind plus a {@code long} or the text, nested
 * objects / arrays as byte ranges of the input to be parsed again only when a column needs them.
 * This lets the decoder read a Debezium {@code after} image before it knows the flow (the routing
 * fields come later in the record) without tokenizing it twice.
 */
@Internal
final class JsonFields {
    static final byte NULL = 0,
            TRUE = 1,
            FALSE = 2,
            INT = 3,
            BIG_INT = 4,
            FLOAT = 5,
            STRING = 6,
            OBJECT = 7,
            ARRAY = 8;

    int size;
    String[] names = new String[16];
    byte[] kinds = new byte[16];
    long[] longs = new long[16];
    String[] texts = new String[16];
    int[] starts = new int[16];
    int[] ends = new int[16];
    byte[] buf;

    void clear(byte[] buf) {
        this.buf = buf;
        if (size > 0) {
            Arrays.fill(texts, 0, size, null);
            Arrays.fill(names, 0, size, null);
        }
        size = 0;
    }

    /**
     * Reads the members of an object; the parser is on its START_OBJECT (or on a FIELD_NAME inside
     * it). {@code base} is the offset in {@link #buf} at which the parser's input starts (Jackson
     * reports byte offsets relative to it).
     */
    void readObject(JsonParser p, int base) throws IOException {
        JsonToken t = p.currentToken() == JsonToken.START_OBJECT ? p.nextToken() : p.currentToken();
        while (t == JsonToken.FIELD_NAME) {
            int i = slot();
            names[i] = p.currentName();
            readValue(p, p.nextToken(), i, base);
            t = p.nextToken();
        }
    }

    /** Reads the elements of an array; the parser is on its START_ARRAY. */
    void readArray(JsonParser p, int base) throws IOException {
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY && t != null) {
            int i = slot();
            names[i] = null;
            readValue(p, t, i, base);
        }
    }

    private int slot() {
        if (size == names.length) {
            int n = size * 2;
            names = Arrays.copyOf(names, n);
            kinds = Arrays.copyOf(kinds, n);
            longs = Arrays.copyOf(longs, n);
            texts = Arrays.copyOf(texts, n);
            starts = Arrays.copyOf(starts, n);
            ends = Arrays.copyOf(ends, n);
        }
        return size++;
    }

    private void readValue(JsonParser p, JsonToken t, int i, int base) throws IOException {
        switch (t) {
            case VALUE_NULL:
                kinds[i] = NULL;
                break;
            case VALUE_TRUE:
                kinds[i] = TRUE;
                break;
            case VALUE_FALSE:
                kinds[i] = FALSE;
                break;
            case VALUE_NUMBER_INT:
                JsonParser.NumberType nt = p.getNumberType();
                if (nt == JsonParser.NumberType.INT || nt == JsonParser.NumberType.LONG) {
                    kinds[i] = INT;
                    longs[i] = p.getLongValue();
                } else {
                    kinds[i] = BIG_INT;
                    texts[i] = p.getText();
                }
                break;
            case VALUE_NUMBER_FLOAT:
                kinds[i] = FLOAT;
                texts[i] = p.getText();
                break;
            case VALUE_STRING:
                kinds[i] = STRING;
                texts[i] = p.getText();
                break;
            case START_OBJECT:
            case START_ARRAY:
                kinds[i] = t == JsonToken.START_OBJECT ? OBJECT : ARRAY;
                starts[i] = base + (int) p.currentTokenLocation().getByteOffset();
                p.skipChildren();
                ends[i] = base + (int) p.currentLocation().getByteOffset();
                break;
            default:
                throw new IOException("unexpected JSON token " + t);
        }
    }

    int indexOf(String name) {
        for (int i = 0; i < size; i++) {
            if (name.equals(names[i])) {
                return i;
            }
        }
        return -1;
    }

    /** The JSON text of entry {@code i}, for messages (capped). */
    String render(int i) {
        String s;
        switch (kinds[i]) {
            case NULL:
                return "null";
            case TRUE:
                return "true";
            case FALSE:
                return "false";
            case INT:
                return Long.toString(longs[i]);
            case BIG_INT:
            case FLOAT:
                s = texts[i];
                break;
            case STRING:
                s = '"' + texts[i] + '"';
                break;
            default:
                s = new String(buf, starts[i], ends[i] - starts[i], StandardCharsets.UTF_8);
        }
        return s.length() > 120 ? s.substring(0, 117) + "..." : s;
    }

    static String kindName(byte kind) {
        switch (kind) {
            case NULL:
                return "null";
            case TRUE:
            case FALSE:
                return "boolean";
            case INT:
            case BIG_INT:
                return "integer";
            case FLOAT:
                return "decimal number";
            case STRING:
                return "string";
            case OBJECT:
                return "object";
            default:
                return "array";
        }
    }
}

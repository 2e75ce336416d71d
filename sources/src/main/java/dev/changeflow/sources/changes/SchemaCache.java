package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The schema wrappers' {@code schema} objects seen lately, parsed once: a record's schema is looked
 * up by its bytes, without copying them, so a topic whose records all carry the same schema parses
 * it once. Least recently used entries beyond {@value #CAPACITY} are dropped. Not thread-safe; one
 * per parser.
 */
@Internal
final class SchemaCache {
    static final int CAPACITY = 256;

    private final JsonFactory factory;
    private final SchemaKey probe = new SchemaKey();
    private final LinkedHashMap<SchemaKey, ConnectSchema> schemas =
            new LinkedHashMap<>(16, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<SchemaKey, ConnectSchema> eldest) {
                    return size() > CAPACITY;
                }
            };

    SchemaCache(JsonFactory factory) {
        this.factory = factory;
    }

    /**
     * The schema whose JSON object is {@code b[start, end)}.
     *
     * @throws IOException when it does not parse
     */
    ConnectSchema get(byte[] b, int start, int end) throws IOException {
        probe.set(b, start, end);
        ConnectSchema s = schemas.get(probe);
        if (s == null) {
            try (JsonParser p = factory.createParser(b, start, end - start)) {
                p.nextToken();
                s = ConnectSchema.parse(p);
            }
            schemas.put(probe.copy(), s);
        }
        return s;
    }

    /** A byte range used as a key; the probe instance wraps the input without copying. */
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

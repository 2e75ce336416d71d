package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonParser;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.StringData;

import java.io.IOException;

/**
 * A small, lossy, per-decoder cache of short repeated strings (topic, table, schema, db, snapshot,
 * op) and their {@link StringData}, so that decoding a record does not allocate them again. Not
 * thread-safe; one per decoder.
 */
@Internal
final class Interner {
    private static final int SLOTS = 256;
    private static final int MAX_LENGTH = 96;

    private final String[] strings = new String[SLOTS];
    private final StringData[] data = new StringData[SLOTS];

    /** The text of the parser's current string token, interned when short. */
    String text(JsonParser p) throws IOException {
        int len = p.getTextLength();
        if (len > MAX_LENGTH) {
            return p.getText();
        }
        char[] chars = p.getTextCharacters();
        int off = p.getTextOffset();
        int h = 0;
        for (int i = off; i < off + len; i++) {
            h = 31 * h + chars[i];
        }
        int slot = h & (SLOTS - 1);
        String s = strings[slot];
        if (s != null && s.length() == len) {
            boolean same = true;
            for (int i = 0; i < len; i++) {
                if (s.charAt(i) != chars[off + i]) {
                    same = false;
                    break;
                }
            }
            if (same) {
                return s;
            }
        }
        s = new String(chars, off, len);
        strings[slot] = s;
        data[slot] = null;
        return s;
    }

    /** {@link StringData} of a string, shared when it is the interned instance. */
    StringData data(String s) {
        int slot = s.hashCode() & (SLOTS - 1);
        if (strings[slot] == s) {
            StringData d = data[slot];
            if (d == null) {
                d = StringData.fromString(s);
                data[slot] = d;
            }
            return d;
        }
        return StringData.fromString(s);
    }
}

package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.flink.annotation.Internal;
import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * Parses plain JSON rows ({@link ChangeRecordFormat#JSON}, semantics.md A5): {@code {"col": value,
 * ...}}, columns by name, bare, in a schema wrapper, or in a capture line. Every record is an
 * upsert ({@code RowKind.INSERT}) of the row; delete and truncate predicates run later in Flink
 * SQL.
 *
 * <p>Forms are recognised on the whole object ({@link RecordForm#unwrap}), since a row may have
 * columns named like form members. An object whose first member cannot start a form is read
 * straight into the member table {@link #image}; one whose first member can is read into a member
 * table of its own first and, if it is not a form after all, read again as the row.
 */
@Internal
final class JsonRecordParser extends ChangeRecordParser {
    private final JsonFields members = new JsonFields();

    JsonRecordParser(JsonFactory factory) {
        super(factory);
    }

    @Override
    Parsed read(byte[] value, int level) throws IOException {
        int start = 0, end = value.length;
        boolean top = true;
        while (true) {
            try (JsonParser p = factory.createParser(value, start, end - start)) {
                JsonToken t = p.nextToken();
                if (t != JsonToken.START_OBJECT) {
                    return notAnObject(t);
                }
                t = p.nextToken();
                if (t == JsonToken.FIELD_NAME && RecordForm.startsForm(p.currentName(), level)) {
                    JsonFields w = members;
                    w.clear(value);
                    w.readObject(p, start);
                    if (top) {
                        RecordForm.checkEnd(p);
                    }
                    int inner = form.unwrap(w, level);
                    if (inner >= 0) {
                        if (w.kinds[inner] == JsonFields.NULL) {
                            return Parsed.TOMBSTONE;
                        }
                        start = w.starts[inner];
                        end = w.ends[inner];
                        level = RecordForm.levelInside(w, inner);
                        top = false;
                        continue;
                    }
                    // not a form after all: the whole object is the row
                    try (JsonParser p2 = factory.createParser(value, start, end - start)) {
                        p2.nextToken();
                        image.clear(value);
                        image.readObject(p2, start);
                    }
                } else {
                    image.clear(value);
                    image.readObject(p, start);
                    if (top) {
                        RecordForm.checkEnd(p);
                    }
                }
                imagePresent = true;
                return Parsed.RECORD;
            }
        }
    }

    @Override
    DecodeOutcome emit(FlowPlan plan, RowAssembler rows, QuarantinePolicy policy)
            throws IOException, ValueConverter.InvalidRecord {
        return rows.upsert(
                plan, this, image, plan.needsHints ? imageSchema("record") : null, RowKind.INSERT);
    }

    /** The wrapper's schema itself: it describes the row. */
    @Override
    @Nullable
    ConnectSchema imageSchema(String imageName) throws IOException {
        return wrapperSchema();
    }

    @Override
    JsonFields sampleImage() {
        return image;
    }

    @Override
    String sampleImageName() {
        return "record";
    }
}

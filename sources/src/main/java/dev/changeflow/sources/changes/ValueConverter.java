package dev.changeflow.sources.changes;

import dev.changeflow.operators.quarantine.QuarantineReason;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.LogicalType;

import javax.annotation.Nullable;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;

/**
 * Converts JSON values (entries of a {@link JsonFields}) to Flink's internal data structures by
 * column type (semantics.md A5):
 *
 * <ul>
 *   <li>TINYINT/SMALLINT/INT/BIGINT: integer numbers only, range-checked;
 *   <li>FLOAT/DOUBLE: any number, or the strings {@code NaN}, {@code Infinity}, {@code -Infinity};
 *   <li>DECIMAL(p,s): a number or a decimal string; a Connect {@code Decimal} is a base64 string of
 *       the unscaled two's-complement big-endian bytes, with the schema's {@code scale} (schema
 *       wrapper) or, without the wrapper, the column's s (a string that reads as a decimal number
 *       is one); a Debezium {@code VariableScaleDecimal} is an object {@code {"scale": n, "value":
 *       base64}}; a value needing more than s fractional digits or p digits is a mismatch (never
 *       rounded);
 *   <li>BOOLEAN: {@code true}/{@code false};
 *   <li>CHAR/VARCHAR/STRING: strings as they are (blank padding kept); numbers and booleans as
 *       their JSON text; objects and arrays as their raw JSON text;
 *   <li>BINARY/VARBINARY: base64 strings; a Debezium {@code Geometry}/{@code Geography} object
 *       gives its {@code wkb};
 *   <li>DATE: an integer number of days since 1970-01-01 ({@code io.debezium.time.Date}) or an ISO
 *       date; {@code "infinity"}/{@code "-infinity"} (PostgreSQL) are 9999-12-31 / 0001-01-01;
 *   <li>TIME(p): an integer in the schema's unit ({@code Time} ms, {@code MicroTime} µs, {@code
 *       NanoTime} ns), without schema by precision (p ≤ 3 ms, ≤ 6 µs, else ns), or an ISO time;
 *       Flink's TIME holds milliseconds, so a value with digits below the millisecond is a mismatch
 *       (declare BIGINT to keep µs/ns since midnight);
 *   <li>TIMESTAMP(p): an integer since the epoch in the schema's unit ({@code Timestamp} ms, {@code
 *       MicroTimestamp} µs, {@code NanoTimestamp} ns), without schema by precision (p ≤ 3 ms, ≤ 6
 *       µs, else ns, as Debezium's adaptive mode chooses), or an ISO string ({@code T} or blank; an
 *       offset or {@code Z} is converted to UTC); values are read as UTC; PostgreSQL's ±infinity
 *       (the integer ±{@value #PG_POSITIVE_INFINITY} / {@value #PG_NEGATIVE_INFINITY} Debezium
 *       sends in every unit, or the string {@code "infinity"}/{@code "-infinity"}) is 9999-12-31
 *       23:59:59.999999999 (cut to p digits) / 0001-01-01 00:00:00, which sort as they must;
 *   <li>TIMESTAMP_LTZ(p): an ISO instant ({@code ZonedTimestamp}; no offset = UTC) or an integer
 *       since the epoch by precision;
 *   <li>ROW: an object (fields by name), ARRAY: an array, MAP: an object (string keys).
 * </ul>
 *
 * Anything else is {@code TYPE_MISMATCH}. JSON null is null for every type (NOT NULL checks are the
 * caller's). Unknown members of nested objects are collected in {@link #unknownFields}.
 */
@Internal
final class ValueConverter {
    private static final Base64.Decoder BASE64 = Base64.getDecoder();

    /** PostgreSQL JDBC's {@code PGStatement.DATE_POSITIVE_INFINITY}, sent by Debezium for +∞. */
    static final long PG_POSITIVE_INFINITY = 9223372036825200000L;

    /** PostgreSQL JDBC's {@code PGStatement.DATE_NEGATIVE_INFINITY}, sent by Debezium for -∞. */
    static final long PG_NEGATIVE_INFINITY = -9223372036832400000L;

    private static final LocalDate MAX_DATE = LocalDate.of(9999, 12, 31);
    private static final LocalDate MIN_DATE = LocalDate.of(1, 1, 1);

    private static final String SUB_MILLIS =
            "has digits below the millisecond, which TIME cannot hold (Flink's TIME is"
                    + " milliseconds): declare BIGINT for µs/ns since midnight";

    private final JsonFactory factory;
    private final List<JsonFields> pool = new ArrayList<>();

    /** Dotted paths of members no column exists for (schema changes), collected per record. */
    final List<String> unknownFields = new ArrayList<>();

    /**
     * Set by the caller around a top-level {@link #fillRow} of a Debezium image: the connector's
     * unavailable-value placeholder and its base64 form; null = no placeholder detection.
     */
    @Nullable String placeholder;

    @Nullable String placeholderBase64;

    /**
     * Bitmask of the top-level columns that carried the placeholder (bit {@code c % 8} of byte
     * {@code c / 8}); null when none did. Reset by the caller per record.
     */
    @Nullable byte[] unavailable;

    /**
     * Set by the caller per record: the image is Debezium's, so a DECIMAL string that is not a
     * number may be a Connect {@code Decimal} sent without its schema (padded base64).
     */
    boolean debezium;

    /**
     * Set by the caller per record under {@code on-schema-change: add-columns} (A7 item 4): a
     * top-level FLOAT value that a FLOAT cannot hold exactly is refused with {@link
     * InvalidRecord#widenTo} DOUBLE instead of being rounded. INT and DECIMAL overflows carry their
     * widening whatever this says (they fail either way).
     */
    boolean detectWidening;

    /**
     * Set by the caller per record: the record's values are the text cells of a CSV line (docs/
     * semantics.md S2), every one a JSON string. An integer or BOOLEAN column then reads the text
     * ({@code 42}, {@code true} / {@code FALSE}), and a DATE or TIMESTAMP column only an ISO text:
     * a CSV cell is never a count of days or microseconds since the epoch, as a JSON number of a
     * Debezium record is.
     */
    boolean textCells;

    ValueConverter(JsonFactory factory) {
        this.factory = factory;
    }

    JsonFields fields(int depth) {
        while (pool.size() <= depth) {
            pool.add(new JsonFields());
        }
        return pool.get(depth);
    }

    /**
     * Fills {@code row} from the members of {@code f} by name; members without a column are added
     * to {@link #unknownFields} (prefixed with {@code path}). Marks converted columns in {@code
     * present}.
     */
    void fillRow(
            RowShape shape,
            JsonFields f,
            GenericRowData row,
            @Nullable boolean[] present,
            @Nullable ConnectSchema hintStruct,
            String path,
            int depth)
            throws InvalidRecord, IOException {
        HashMap<String, Integer> index = shape.index;
        for (int i = 0; i < f.size; i++) {
            String name = f.names[i];
            Integer ci = index.get(name);
            if (ci == null && textCells && depth == 0) {
                // S2: a CSV header names the columns in any case, as the vendor's reader matches
                // them (CsvLines refuses a header with two names differing only in case)
                ci = ignoringCase(shape, name);
            }
            if (ci == null) {
                unknownFields.add(path + name);
                continue;
            }
            int c = ci;
            if (placeholder != null && depth == 0 && isPlaceholder(shape.columns[c], f, i)) {
                // A3/A4: not the value but "unchanged, not sent" (TOAST): null, marked
                if (unavailable == null) {
                    unavailable = new byte[(shape.arity() + 7) / 8];
                }
                unavailable[c / 8] |= (byte) (1 << (c % 8));
                if (present != null) {
                    present[c] = true;
                }
                continue;
            }
            ConnectSchema hint = hintStruct == null ? null : hintStruct.field(name);
            row.setField(c, convert(shape.columns[c], f, i, hint, path, depth));
            if (present != null) {
                present[c] = true;
            }
        }
    }

    /**
     * The index of the one column of {@code shape} named {@code name} ignoring case, or null when
     * none is, or more than one (columns declared differing only in case: exact names only).
     */
    @Nullable
    private static Integer ignoringCase(RowShape shape, String name) {
        Integer found = null;
        for (int c = 0; c < shape.names.length; c++) {
            if (shape.names[c].equalsIgnoreCase(name)) {
                if (found != null) {
                    return null;
                }
                found = c;
            }
        }
        return found;
    }

    /**
     * Whether member {@code i} is the unavailable-value placeholder: the string itself, its base64
     * form (binary columns), or a one-element array of either (array columns).
     */
    private boolean isPlaceholder(RowShape.Column c, JsonFields f, int i) throws IOException {
        byte k = f.kinds[i];
        if (k == JsonFields.STRING) {
            String t = f.texts[i];
            return t.equals(placeholder) || t.equals(placeholderBase64);
        }
        if (k != JsonFields.ARRAY
                || c.code != RowShape.Column.ARRAY
                || f.ends[i] - f.starts[i] > placeholderBase64.length() + 16) {
            return false;
        }
        JsonFields inner = fields(1);
        inner.clear(f.buf);
        try (JsonParser p = parserFor(f, i)) {
            inner.readArray(p, f.starts[i]);
        }
        return inner.size == 1
                && inner.kinds[0] == JsonFields.STRING
                && (inner.texts[0].equals(placeholder) || inner.texts[0].equals(placeholderBase64));
    }

    Object convert(
            RowShape.Column c,
            JsonFields f,
            int i,
            @Nullable ConnectSchema hint,
            String path,
            int depth)
            throws InvalidRecord, IOException {
        byte k = f.kinds[i];
        if (k == JsonFields.NULL) {
            return null;
        }
        switch (c.code) {
            case RowShape.Column.BOOLEAN:
                if (k == JsonFields.TRUE) {
                    return Boolean.TRUE;
                }
                if (k == JsonFields.FALSE) {
                    return Boolean.FALSE;
                }
                if (textCells && k == JsonFields.STRING) {
                    if (f.texts[i].equalsIgnoreCase("true")) {
                        return Boolean.TRUE;
                    }
                    if (f.texts[i].equalsIgnoreCase("false")) {
                        return Boolean.FALSE;
                    }
                }
                throw mismatch(c, f, i, path, "expected true or false");
            case RowShape.Column.TINYINT:
                return (byte) integer(c, f, i, path, Byte.MIN_VALUE, Byte.MAX_VALUE, textCells);
            case RowShape.Column.SMALLINT:
                return (short) integer(c, f, i, path, Short.MIN_VALUE, Short.MAX_VALUE, textCells);
            case RowShape.Column.INT:
                if (depth == 0 && k == JsonFields.INT && f.longs[i] != (int) f.longs[i]) {
                    throw widening(c, f, i, "out of range", new BigIntType(true));
                }
                return (int)
                        integer(c, f, i, path, Integer.MIN_VALUE, Integer.MAX_VALUE, textCells);
            case RowShape.Column.BIGINT:
                return integer(c, f, i, path, Long.MIN_VALUE, Long.MAX_VALUE, textCells);
            case RowShape.Column.FLOAT:
                double d = floating(c, f, i, path);
                float narrowed = (float) d;
                if (detectWidening && depth == 0 && narrowed != d && !fitsFloat(f, i, narrowed)) {
                    throw widening(
                            c, f, i, "cannot be held exactly by a FLOAT", new DoubleType(true));
                }
                return narrowed;
            case RowShape.Column.DOUBLE:
                return floating(c, f, i, path);
            case RowShape.Column.DECIMAL:
                return decimal(c, f, i, hint, path, depth);
            case RowShape.Column.STRING:
                return StringData.fromString(text(f, i));
            case RowShape.Column.BYTES:
                String base64 = k == JsonFields.OBJECT ? member(f, i, "wkb") : null;
                if (k != JsonFields.STRING && base64 == null) {
                    throw mismatch(c, f, i, path, "expected a base64 string");
                }
                try {
                    return BASE64.decode(base64 != null ? base64 : f.texts[i]);
                } catch (IllegalArgumentException e) {
                    throw mismatch(c, f, i, path, "not base64: " + e.getMessage());
                }
            case RowShape.Column.DATE:
                return date(c, f, i, path);
            case RowShape.Column.TIME:
                return time(c, f, i, hint, path);
            case RowShape.Column.TIMESTAMP:
                return timestamp(c, f, i, hint, path, false);
            case RowShape.Column.TIMESTAMP_LTZ:
                return timestamp(c, f, i, hint, path, true);
            case RowShape.Column.ROW:
                if (k != JsonFields.OBJECT) {
                    throw mismatch(c, f, i, path, "expected an object");
                }
                return nestedRow(c, f, i, hint, path, depth);
            case RowShape.Column.ARRAY:
                if (k != JsonFields.ARRAY) {
                    throw mismatch(c, f, i, path, "expected an array");
                }
                return array(c, f, i, hint, path, depth);
            case RowShape.Column.MAP:
                if (k != JsonFields.OBJECT) {
                    throw mismatch(c, f, i, path, "expected an object");
                }
                return map(c, f, i, hint, path, depth);
            default:
                throw new IllegalStateException("type code " + c.code);
        }
    }

    private static long integer(
            RowShape.Column c,
            JsonFields f,
            int i,
            String path,
            long min,
            long max,
            boolean textCells)
            throws InvalidRecord {
        byte k = f.kinds[i];
        if (textCells && k == JsonFields.STRING) {
            String t = f.texts[i];
            long v;
            try {
                v = Long.parseLong(t.startsWith("+") ? t.substring(1) : t);
            } catch (NumberFormatException e) {
                throw mismatch(
                        c,
                        f,
                        i,
                        path,
                        t.matches("[+-]?[0-9]+") ? "out of range" : "not an integer number");
            }
            if (v < min || v > max) {
                throw mismatch(c, f, i, path, "out of range");
            }
            return v;
        }
        if (k == JsonFields.INT) {
            long v = f.longs[i];
            if (v < min || v > max) {
                throw mismatch(c, f, i, path, "out of range");
            }
            return v;
        }
        if (k == JsonFields.BIG_INT) {
            throw mismatch(c, f, i, path, "out of range");
        }
        throw mismatch(c, f, i, path, "expected an integer number");
    }

    private static double floating(RowShape.Column c, JsonFields f, int i, String path)
            throws InvalidRecord {
        switch (f.kinds[i]) {
            case JsonFields.INT:
                return f.longs[i];
            case JsonFields.BIG_INT:
            case JsonFields.FLOAT:
                return Double.parseDouble(f.texts[i]);
            case JsonFields.STRING:
                switch (f.texts[i]) {
                    case "NaN":
                        return Double.NaN;
                    case "Infinity":
                        return Double.POSITIVE_INFINITY;
                    case "-Infinity":
                        return Double.NEGATIVE_INFINITY;
                    default:
                        throw mismatch(c, f, i, path, "expected a number");
                }
            default:
                throw mismatch(c, f, i, path, "expected a number");
        }
    }

    /** The string member {@code name} of the object at {@code i}, or null. */
    @Nullable
    private String member(JsonFields f, int i, String name) throws IOException {
        try (JsonParser p = parserFor(f, i)) {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String n = p.currentName();
                JsonToken t = p.nextToken();
                if (name.equals(n) && t == JsonToken.VALUE_STRING) {
                    return p.getText();
                }
                p.skipChildren();
            }
        }
        return null;
    }

    /** A Debezium {@code VariableScaleDecimal}: {@code {"scale": n, "value": base64}}. */
    private BigDecimal variableScale(RowShape.Column c, JsonFields f, int i, String path)
            throws InvalidRecord, IOException {
        Integer scale = null;
        String value = null;
        try (JsonParser p = parserFor(f, i)) {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String n = p.currentName();
                JsonToken t = p.nextToken();
                if ("scale".equals(n) && t == JsonToken.VALUE_NUMBER_INT) {
                    long s = p.getLongValue();
                    scale = s < Integer.MIN_VALUE || s > Integer.MAX_VALUE ? null : (int) s;
                } else if ("value".equals(n) && t == JsonToken.VALUE_STRING) {
                    value = p.getText();
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw mismatch(c, f, i, path, "not a VariableScaleDecimal {scale, value}");
        }
        if (scale == null || value == null) {
            throw mismatch(c, f, i, path, "not a VariableScaleDecimal {scale, value}");
        }
        try {
            return new BigDecimal(new BigInteger(BASE64.decode(value)), scale);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw mismatch(c, f, i, path, "not a base64 VariableScaleDecimal value");
        }
    }

    private DecimalData decimal(
            RowShape.Column c,
            JsonFields f,
            int i,
            @Nullable ConnectSchema hint,
            String path,
            int depth)
            throws InvalidRecord, IOException {
        BigDecimal bd;
        switch (f.kinds[i]) {
            case JsonFields.INT:
                bd = BigDecimal.valueOf(f.longs[i]);
                break;
            case JsonFields.BIG_INT:
            case JsonFields.FLOAT:
                bd = new BigDecimal(f.texts[i]);
                break;
            case JsonFields.STRING:
                int scale = hint == null ? -1 : hint.decimalScale();
                if (scale >= 0) {
                    try {
                        bd = new BigDecimal(new BigInteger(BASE64.decode(f.texts[i])), scale);
                    } catch (IllegalArgumentException | ArithmeticException e) {
                        throw mismatch(c, f, i, path, "not a base64 Connect Decimal");
                    }
                } else {
                    try {
                        bd = new BigDecimal(f.texts[i].trim());
                    } catch (NumberFormatException e) {
                        if (!debezium || f.texts[i].length() % 4 != 0) {
                            throw mismatch(c, f, i, path, "not a decimal number");
                        }
                        // a Connect Decimal without its schema: unscaled bytes, the column's scale
                        try {
                            bd = new BigDecimal(new BigInteger(BASE64.decode(f.texts[i])), c.scale);
                        } catch (IllegalArgumentException | ArithmeticException e2) {
                            throw mismatch(
                                    c, f, i, path, "neither a decimal number nor a base64 Decimal");
                        }
                    }
                }
                break;
            case JsonFields.OBJECT:
                bd = variableScale(c, f, i, path);
                break;
            default:
                throw mismatch(
                        c,
                        f,
                        i,
                        path,
                        "expected a number, a decimal string or a VariableScaleDecimal object");
        }
        if (bd.scale() != c.scale) {
            try {
                bd = bd.setScale(c.scale);
            } catch (ArithmeticException e) {
                throw mismatch(c, f, i, path, "has more than " + c.scale + " fractional digits");
            }
        }
        DecimalData d = DecimalData.fromBigDecimal(bd, c.precision, c.scale);
        if (d == null) {
            int wider = bd.precision() <= 18 ? 18 : 38;
            if (depth == 0 && bd.precision() <= 38 && wider > c.precision) {
                throw widening(
                        c,
                        f,
                        i,
                        "exceeds precision " + c.precision,
                        new DecimalType(true, wider, c.scale));
            }
            throw mismatch(c, f, i, path, "exceeds precision " + c.precision);
        }
        return d;
    }

    private String text(JsonFields f, int i) {
        switch (f.kinds[i]) {
            case JsonFields.STRING:
            case JsonFields.BIG_INT:
            case JsonFields.FLOAT:
                return f.texts[i];
            case JsonFields.INT:
                return Long.toString(f.longs[i]);
            case JsonFields.TRUE:
                return "true";
            case JsonFields.FALSE:
                return "false";
            default:
                return new String(
                        f.buf, f.starts[i], f.ends[i] - f.starts[i], StandardCharsets.UTF_8);
        }
    }

    private static int date(RowShape.Column c, JsonFields f, int i, String path)
            throws InvalidRecord {
        if (f.kinds[i] == JsonFields.INT) {
            long v = f.longs[i];
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw mismatch(c, f, i, path, "out of range");
            }
            return (int) v;
        }
        if (f.kinds[i] == JsonFields.STRING) {
            String s = f.texts[i];
            if (s.equals("infinity") || s.equals("+infinity")) {
                return (int) MAX_DATE.toEpochDay();
            }
            if (s.equals("-infinity")) {
                return (int) MIN_DATE.toEpochDay();
            }
            try {
                return (int) LocalDate.parse(s).toEpochDay();
            } catch (DateTimeParseException e) {
                throw mismatch(c, f, i, path, "not an ISO date");
            }
        }
        throw mismatch(c, f, i, path, "expected days since epoch or an ISO date");
    }

    private static int unit(RowShape.Column c, @Nullable ConnectSchema hint) {
        int u = hint == null ? ConnectSchema.UNIT_NONE : hint.temporalUnit();
        if (u != ConnectSchema.UNIT_NONE) {
            return u;
        }
        return c.precision <= 3
                ? ConnectSchema.UNIT_MILLIS
                : c.precision <= 6 ? ConnectSchema.UNIT_MICROS : ConnectSchema.UNIT_NANOS;
    }

    private static int time(
            RowShape.Column c, JsonFields f, int i, @Nullable ConnectSchema hint, String path)
            throws InvalidRecord {
        long millis;
        if (f.kinds[i] == JsonFields.INT) {
            long v = f.longs[i];
            switch (unit(c, hint)) {
                case ConnectSchema.UNIT_MILLIS:
                    millis = v;
                    break;
                case ConnectSchema.UNIT_MICROS:
                    if (v % 1_000L != 0) {
                        throw mismatch(c, f, i, path, SUB_MILLIS);
                    }
                    millis = v / 1_000L;
                    break;
                default:
                    if (v % 1_000_000L != 0) {
                        throw mismatch(c, f, i, path, SUB_MILLIS);
                    }
                    millis = v / 1_000_000L;
            }
        } else if (f.kinds[i] == JsonFields.STRING) {
            long nanos;
            try {
                nanos = LocalTime.parse(f.texts[i]).toNanoOfDay();
            } catch (DateTimeParseException e) {
                throw mismatch(c, f, i, path, "not an ISO time");
            }
            if (nanos % 1_000_000L != 0) {
                throw mismatch(c, f, i, path, SUB_MILLIS);
            }
            millis = nanos / 1_000_000L;
        } else {
            throw mismatch(c, f, i, path, "expected an integer time of day or an ISO time");
        }
        if (millis < 0 || millis >= 86_400_000L) {
            throw mismatch(c, f, i, path, "out of range for a time of day");
        }
        return (int) millis;
    }

    private static TimestampData timestamp(
            RowShape.Column c,
            JsonFields f,
            int i,
            @Nullable ConnectSchema hint,
            String path,
            boolean ltz)
            throws InvalidRecord {
        if (f.kinds[i] == JsonFields.INT) {
            long v = f.longs[i];
            if (v == PG_POSITIVE_INFINITY || v == PG_NEGATIVE_INFINITY) {
                return infinity(c, v > 0);
            }
            switch (unit(c, hint)) {
                case ConnectSchema.UNIT_MILLIS:
                    return TimestampData.fromEpochMillis(v);
                case ConnectSchema.UNIT_MICROS:
                    return TimestampData.fromEpochMillis(
                            Math.floorDiv(v, 1_000L), (int) Math.floorMod(v, 1_000L) * 1_000);
                default:
                    return TimestampData.fromEpochMillis(
                            Math.floorDiv(v, 1_000_000L), (int) Math.floorMod(v, 1_000_000L));
            }
        }
        if (f.kinds[i] != JsonFields.STRING) {
            throw mismatch(
                    c, f, i, path, "expected an integer since the epoch or an ISO timestamp");
        }
        String s = f.texts[i].trim();
        if (s.equals("infinity") || s.equals("+infinity") || s.equals("-infinity")) {
            return infinity(c, s.charAt(0) != '-');
        }
        try {
            if (s.length() == 10) {
                return TimestampData.fromLocalDateTime(LocalDate.parse(s).atStartOfDay());
            }
            if (s.length() > 10 && s.charAt(10) == ' ') {
                s = s.substring(0, 10) + 'T' + s.substring(11);
            }
            if (hasOffset(s)) {
                Instant instant = OffsetDateTime.parse(s).toInstant();
                return ltz
                        ? TimestampData.fromInstant(instant)
                        : TimestampData.fromLocalDateTime(
                                LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
            }
            LocalDateTime ldt = LocalDateTime.parse(s);
            return ltz
                    ? TimestampData.fromInstant(ldt.toInstant(ZoneOffset.UTC))
                    : TimestampData.fromLocalDateTime(ldt);
        } catch (DateTimeParseException e) {
            throw mismatch(c, f, i, path, "not an ISO timestamp");
        }
    }

    /**
     * PostgreSQL's ±infinity as the largest / smallest timestamp of the column's precision:
     * 9999-12-31 23:59:59.999999999 cut to p fractional digits, or 0001-01-01 00:00:00 (UTC).
     */
    private static TimestampData infinity(RowShape.Column c, boolean positive) {
        if (!positive) {
            return TimestampData.fromLocalDateTime(MIN_DATE.atStartOfDay());
        }
        int unit = pow10(9 - Math.max(0, Math.min(9, c.precision)));
        int nanos = 999_999_999 - 999_999_999 % unit;
        return TimestampData.fromLocalDateTime(MAX_DATE.atTime(23, 59, 59, nanos));
    }

    private static int pow10(int e) {
        int r = 1;
        for (int j = 0; j < e; j++) {
            r *= 10;
        }
        return r;
    }

    private static boolean hasOffset(String s) {
        if (s.endsWith("Z") || s.endsWith("z")) {
            return true;
        }
        for (int j = 11; j < s.length(); j++) {
            char ch = s.charAt(j);
            if (ch == '+' || ch == '-') {
                return true;
            }
        }
        return false;
    }

    private JsonParser parserFor(JsonFields f, int i) throws IOException {
        JsonParser p = factory.createParser(f.buf, f.starts[i], f.ends[i] - f.starts[i]);
        p.nextToken();
        return p;
    }

    private GenericRowData nestedRow(
            RowShape.Column c,
            JsonFields f,
            int i,
            @Nullable ConnectSchema hint,
            String path,
            int depth)
            throws InvalidRecord, IOException {
        JsonFields inner = fields(depth + 1);
        inner.clear(f.buf);
        try (JsonParser p = parserFor(f, i)) {
            inner.readObject(p, f.starts[i]);
        }
        RowShape shape = c.nested;
        GenericRowData row = new GenericRowData(shape.arity());
        String innerPath = path + c.name + ".";
        fillRow(shape, inner, row, null, hint, innerPath, depth + 1);
        for (int j = 0; j < shape.arity(); j++) {
            if (!shape.columns[j].nullable && row.isNullAt(j)) {
                throw new InvalidRecord(
                        QuarantineReason.TYPE_MISMATCH,
                        "column '"
                                + innerPath
                                + shape.names[j]
                                + "' "
                                + shape.columns[j].type
                                + ": null or absent");
            }
        }
        return row;
    }

    private GenericArrayData array(
            RowShape.Column c,
            JsonFields f,
            int i,
            @Nullable ConnectSchema hint,
            String path,
            int depth)
            throws InvalidRecord, IOException {
        JsonFields inner = fields(depth + 1);
        inner.clear(f.buf);
        try (JsonParser p = parserFor(f, i)) {
            inner.readArray(p, f.starts[i]);
        }
        ConnectSchema itemHint = hint == null ? null : hint.items;
        Object[] values = new Object[inner.size];
        for (int j = 0; j < values.length; j++) {
            values[j] = convert(c.element, inner, j, itemHint, path, depth + 1);
        }
        return new GenericArrayData(values);
    }

    private GenericMapData map(
            RowShape.Column c,
            JsonFields f,
            int i,
            @Nullable ConnectSchema hint,
            String path,
            int depth)
            throws InvalidRecord, IOException {
        JsonFields inner = fields(depth + 1);
        inner.clear(f.buf);
        try (JsonParser p = parserFor(f, i)) {
            inner.readObject(p, f.starts[i]);
        }
        ConnectSchema valueHint = hint == null ? null : hint.values;
        HashMap<Object, Object> values = new HashMap<>();
        for (int j = 0; j < inner.size; j++) {
            values.put(
                    StringData.fromString(inner.names[j]),
                    convert(c.element, inner, j, valueHint, path, depth + 1));
        }
        return new GenericMapData(values);
    }

    static InvalidRecord mismatch(RowShape.Column c, JsonFields f, int i, String path, String why) {
        return new InvalidRecord(
                QuarantineReason.TYPE_MISMATCH,
                "column '"
                        + path
                        + c.name
                        + "' "
                        + c.type
                        + ": "
                        + JsonFields.kindName(f.kinds[i])
                        + " "
                        + f.render(i)
                        + " "
                        + why);
    }

    /**
     * Whether the JSON number at {@code i} is exactly {@code narrowed}: its shortest decimal form
     * ({@link Float#toString}) has the value the JSON text has. Debezium writes a FLOAT (float32)
     * column's value that way, so {@code 0.1} fits though 0.1 is no binary fraction.
     */
    private static boolean fitsFloat(JsonFields f, int i, float narrowed) {
        if (Float.isNaN(narrowed) || Float.isInfinite(narrowed)) {
            return f.kinds[i] == JsonFields.STRING; // "NaN", "Infinity": a FLOAT holds them
        }
        if (f.kinds[i] == JsonFields.INT) {
            return (long) narrowed == f.longs[i];
        }
        try {
            return new BigDecimal(Float.toString(narrowed)).compareTo(new BigDecimal(f.texts[i]))
                    == 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** A top-level {@code TYPE_MISMATCH} that a wider column would hold (A7 item 4). */
    private static InvalidRecord widening(
            RowShape.Column c, JsonFields f, int i, String why, LogicalType to) {
        InvalidRecord e = mismatch(c, f, i, "", why);
        e.column = c.name;
        e.widenTo = to;
        return e;
    }

    /** A record-level validation failure: reason and detail; no stack trace (control flow). */
    static final class InvalidRecord extends Exception {
        private static final long serialVersionUID = 1L;
        final QuarantineReason reason;
        final String detail;

        /**
         * The top-level column whose value a wider type (an Iceberg promotion of its type) would
         * hold, or null: INT out of range (BIGINT), a FLOAT value a FLOAT cannot hold (DOUBLE,
         * under {@link #detectWidening}), a DECIMAL exceeding its precision at its scale
         * (DECIMAL(18, s) or DECIMAL(38, s)).
         */
        @Nullable String column;

        @Nullable LogicalType widenTo;

        InvalidRecord(QuarantineReason reason, String detail) {
            super(detail, null, false, false);
            this.reason = reason;
            this.detail = detail;
        }
    }
}

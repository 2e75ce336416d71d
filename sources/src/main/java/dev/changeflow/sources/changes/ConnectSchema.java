package dev.changeflow.sources.changes;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One node of a Kafka Connect JSON schema (the {@code "schema"} half of the schema wrapper written
 * by Kafka's {@code JsonConverter} with {@code schemas.enable=true}): {@code type}, {@code
 * optional}, the logical {@code name} (Debezium / Connect semantic types), {@code parameters},
 * struct {@code fields}, array {@code items}, map {@code keys}/{@code values}.
 */
@Internal
final class ConnectSchema {
    static final String DECIMAL = "org.apache.kafka.connect.data.Decimal";
    static final String CONNECT_DATE = "org.apache.kafka.connect.data.Date";
    static final String CONNECT_TIME = "org.apache.kafka.connect.data.Time";
    static final String CONNECT_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp";
    static final String DBZ_DATE = "io.debezium.time.Date";
    static final String DBZ_TIME = "io.debezium.time.Time";
    static final String DBZ_MICRO_TIME = "io.debezium.time.MicroTime";
    static final String DBZ_NANO_TIME = "io.debezium.time.NanoTime";
    static final String DBZ_TIMESTAMP = "io.debezium.time.Timestamp";
    static final String DBZ_MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp";
    static final String DBZ_NANO_TIMESTAMP = "io.debezium.time.NanoTimestamp";
    static final String DBZ_ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp";
    static final String DBZ_VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal";

    /**
     * Scale of the DECIMAL(38, s) a {@code VariableScaleDecimal} (PostgreSQL {@code numeric}
     * without precision) is inferred as; declare the column to choose another.
     */
    static final int VARIABLE_SCALE_DEFAULT = 18;

    /** Time units of integer temporal values. */
    static final int UNIT_NONE = 0, UNIT_MILLIS = 1, UNIT_MICROS = 2, UNIT_NANOS = 3;

    String type = "";
    boolean optional;
    @Nullable String name;
    @Nullable String field;
    Map<String, String> parameters = Collections.emptyMap();
    List<ConnectSchema> fields = Collections.emptyList();
    Map<String, ConnectSchema> fieldsByName = Collections.emptyMap();
    @Nullable ConnectSchema items;
    @Nullable ConnectSchema keys;
    @Nullable ConnectSchema values;

    /** Parses a schema object; the parser is positioned on its START_OBJECT. */
    static ConnectSchema parse(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.START_OBJECT) {
            throw new IOException("schema is not an object");
        }
        ConnectSchema s = new ConnectSchema();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String n = p.currentName();
            JsonToken t = p.nextToken();
            switch (n) {
                case "type":
                    s.type = t == JsonToken.VALUE_STRING ? p.getText() : "";
                    break;
                case "optional":
                    s.optional = t == JsonToken.VALUE_TRUE;
                    break;
                case "name":
                    s.name = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    break;
                case "field":
                    s.field = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    break;
                case "parameters":
                    if (t == JsonToken.START_OBJECT) {
                        Map<String, String> params = new HashMap<>();
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String k = p.currentName();
                            JsonToken vt = p.nextToken();
                            if (vt.isScalarValue() && vt != JsonToken.VALUE_NULL) {
                                params.put(k, p.getText());
                            } else {
                                p.skipChildren();
                            }
                        }
                        s.parameters = params;
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "fields":
                    if (t == JsonToken.START_ARRAY) {
                        List<ConnectSchema> list = new ArrayList<>();
                        Map<String, ConnectSchema> byName = new HashMap<>();
                        while (p.nextToken() == JsonToken.START_OBJECT) {
                            ConnectSchema child = parse(p);
                            list.add(child);
                            if (child.field != null) {
                                byName.put(child.field, child);
                            }
                        }
                        s.fields = list;
                        s.fieldsByName = byName;
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "items":
                    s.items = t == JsonToken.START_OBJECT ? parse(p) : skip(p);
                    break;
                case "keys":
                    s.keys = t == JsonToken.START_OBJECT ? parse(p) : skip(p);
                    break;
                case "values":
                    s.values = t == JsonToken.START_OBJECT ? parse(p) : skip(p);
                    break;
                default:
                    p.skipChildren();
            }
        }
        return s;
    }

    private static ConnectSchema skip(JsonParser p) throws IOException {
        p.skipChildren();
        return null;
    }

    @Nullable
    ConnectSchema field(String fieldName) {
        return fieldsByName.get(fieldName);
    }

    /** The decimal scale of a Connect {@code Decimal}, or -1. */
    int decimalScale() {
        if (!DECIMAL.equals(name)) {
            return -1;
        }
        String s = parameters.get("scale");
        try {
            return s == null ? 0 : Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The unit of an integer temporal value of this schema, or {@link #UNIT_NONE}. */
    int temporalUnit() {
        if (name == null) {
            return UNIT_NONE;
        }
        switch (name) {
            case DBZ_TIME:
            case DBZ_TIMESTAMP:
            case CONNECT_TIME:
            case CONNECT_TIMESTAMP:
                return UNIT_MILLIS;
            case DBZ_MICRO_TIME:
            case DBZ_MICRO_TIMESTAMP:
                return UNIT_MICROS;
            case DBZ_NANO_TIME:
            case DBZ_NANO_TIMESTAMP:
                return UNIT_NANOS;
            default:
                return UNIT_NONE;
        }
    }

    /**
     * The Flink type of this schema: {@code int8/16/32/64} → TINYINT/SMALLINT/INT/BIGINT, {@code
     * float32/64} → FLOAT/DOUBLE, {@code boolean}, {@code string} → STRING, {@code bytes} → BYTES,
     * {@code struct} → ROW, {@code array} → ARRAY, {@code map} → MAP; semantic names:
     * Debezium/Connect {@code Date} → DATE, {@code Time} → TIME(3), {@code MicroTime}/{@code
     * NanoTime} → BIGINT (µs/ns since midnight: Flink's TIME holds milliseconds only, so TIME(6)
     * would drop digits), {@code Timestamp}/{@code MicroTimestamp}/{@code NanoTimestamp} →
     * TIMESTAMP(3/6/9), {@code ZonedTimestamp} → TIMESTAMP_LTZ(6), Connect {@code Decimal} →
     * DECIMAL(p, s) with p from {@code connect.decimal.precision} (default 38), {@code
     * VariableScaleDecimal} → DECIMAL(38, {@value #VARIABLE_SCALE_DEFAULT}); other semantic types
     * by their literal type ({@code Json}, {@code Uuid}, {@code Enum}, {@code EnumSet}, {@code
     * ZonedTime}, {@code Interval} → STRING, {@code MicroDuration} → BIGINT, {@code Bits} → BYTES,
     * {@code Geometry}/{@code Geography} → ROW&lt;wkb BYTES, srid INT&gt;); {@code optional} →
     * nullable (semantics.md A5).
     */
    LogicalType toLogicalType() {
        boolean nullable = optional;
        if (name != null) {
            switch (name) {
                case DBZ_DATE:
                case CONNECT_DATE:
                    return new DateType(nullable);
                case DBZ_TIME:
                case CONNECT_TIME:
                    return new TimeType(nullable, 3);
                case DBZ_MICRO_TIME:
                case DBZ_NANO_TIME:
                    return new BigIntType(nullable);
                case DBZ_TIMESTAMP:
                case CONNECT_TIMESTAMP:
                    return new TimestampType(nullable, 3);
                case DBZ_MICRO_TIMESTAMP:
                    return new TimestampType(nullable, 6);
                case DBZ_NANO_TIMESTAMP:
                    return new TimestampType(nullable, 9);
                case DBZ_ZONED_TIMESTAMP:
                    return new LocalZonedTimestampType(nullable, 6);
                case DBZ_VARIABLE_SCALE_DECIMAL:
                    return new DecimalType(
                            nullable, DecimalType.MAX_PRECISION, VARIABLE_SCALE_DEFAULT);
                case DECIMAL:
                    int scale = Math.max(0, decimalScale());
                    int precision = DecimalType.MAX_PRECISION;
                    String p = parameters.get("connect.decimal.precision");
                    if (p != null) {
                        try {
                            precision = Integer.parseInt(p);
                        } catch (NumberFormatException ignored) {
                            // keep the maximum
                        }
                    }
                    precision = Math.max(1, Math.min(DecimalType.MAX_PRECISION, precision));
                    return new DecimalType(nullable, precision, Math.min(scale, precision));
                default:
                    break;
            }
        }
        switch (type) {
            case "int8":
                return new TinyIntType(nullable);
            case "int16":
                return new SmallIntType(nullable);
            case "int32":
                return new IntType(nullable);
            case "int64":
                return new BigIntType(nullable);
            case "float32":
                return new FloatType(nullable);
            case "float64":
                return new DoubleType(nullable);
            case "boolean":
                return new BooleanType(nullable);
            case "bytes":
                return new VarBinaryType(nullable, VarBinaryType.MAX_LENGTH);
            case "struct":
                return toRowType(nullable);
            case "array":
                return new ArrayType(
                        nullable, items == null ? VarCharType.STRING_TYPE : items.toLogicalType());
            case "map":
                return new MapType(
                        nullable,
                        keys == null ? VarCharType.STRING_TYPE : keys.toLogicalType(),
                        values == null ? VarCharType.STRING_TYPE : values.toLogicalType());
            case "string":
            default:
                return new VarCharType(nullable, VarCharType.MAX_LENGTH);
        }
    }

    /** This struct as a ROW type (field order of the schema). */
    RowType toRowType(boolean nullable) {
        List<RowType.RowField> out = new ArrayList<>();
        for (ConnectSchema f : fields) {
            out.add(
                    new RowType.RowField(
                            f.field == null ? "f" + out.size() : f.field, f.toLogicalType()));
        }
        return new RowType(nullable, out);
    }
}

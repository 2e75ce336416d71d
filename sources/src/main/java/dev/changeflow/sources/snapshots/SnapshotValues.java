package dev.changeflow.sources.snapshots;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * Reads the text of a snapshot value (a CSV field, a JSON scalar) as a column type, as Flink SQL's
 * {@code CAST(text AS type)} would for well-formed input: integers (range-checked), FLOAT, DOUBLE,
 * DECIMAL(p, s) (never rounded: more fractional digits than s is an error), BOOLEAN ({@code
 * true}/{@code false}), CHAR/VARCHAR/STRING as they are, DATE ({@code yyyy-MM-dd}), TIMESTAMP(p)
 * ({@code yyyy-MM-dd HH:mm:ss[.f]} or with {@code T}), TIMESTAMP_LTZ(p) (an ISO instant or a
 * timestamp with offset; none = UTC).
 */
@Internal
final class SnapshotValues {
    private SnapshotValues() {}

    /** Whether {@link #parse} reads this type. */
    static boolean supported(LogicalType type) {
        switch (type.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
            case BOOLEAN:
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case FLOAT:
            case DOUBLE:
            case DECIMAL:
            case DATE:
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return true;
            default:
                return false;
        }
    }

    /**
     * The internal value of {@code text} as {@code type}.
     *
     * @throws IllegalArgumentException with a short reason when the text does not fit the type
     */
    static Object parse(String text, LogicalType type) {
        String t = text.trim();
        try {
            switch (type.getTypeRoot()) {
                case CHAR:
                case VARCHAR:
                    return StringData.fromString(text);
                case BOOLEAN:
                    if (t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false")) {
                        return Boolean.parseBoolean(t);
                    }
                    throw new IllegalArgumentException("not true or false");
                case TINYINT:
                    return Byte.parseByte(t);
                case SMALLINT:
                    return Short.parseShort(t);
                case INTEGER:
                    return Integer.parseInt(t);
                case BIGINT:
                    return Long.parseLong(t);
                case FLOAT:
                    return Float.parseFloat(t);
                case DOUBLE:
                    return Double.parseDouble(t);
                case DECIMAL:
                    DecimalType d = (DecimalType) type;
                    BigDecimal value = new BigDecimal(t);
                    if (value.scale() > d.getScale()) {
                        throw new IllegalArgumentException(
                                "more than " + d.getScale() + " fractional digits");
                    }
                    DecimalData data =
                            DecimalData.fromBigDecimal(value, d.getPrecision(), d.getScale());
                    if (data == null) {
                        throw new IllegalArgumentException(
                                "more than " + d.getPrecision() + " digits");
                    }
                    return data;
                case DATE:
                    return (int) LocalDate.parse(t).toEpochDay();
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                    return TimestampData.fromLocalDateTime(
                            LocalDateTime.parse(t.replace(' ', 'T')));
                case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                    return TimestampData.fromInstant(instant(t.replace(' ', 'T')));
                default:
                    throw new IllegalArgumentException("type " + type + " is not supported");
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException("not of type " + type.asSummaryString(), e);
        }
    }

    private static Instant instant(String t) {
        try {
            return OffsetDateTime.parse(t).toInstant();
        } catch (DateTimeParseException e) {
            return LocalDateTime.parse(t).toInstant(java.time.ZoneOffset.UTC);
        }
    }
}

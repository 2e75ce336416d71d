package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.time.temporal.TemporalAccessor;

/**
 * Parses the timestamp bounds of F3: {@code yyyy-MM-dd[ HH:mm:ss[.SSS]]} with an optional zone
 * offset ({@code Z}, {@code +02:00}); without an offset the time is UTC (F8). Any other form is
 * {@code INVALID_TIMESTAMP}.
 */
@Internal
final class CdfTimestamps {

    private static final DateTimeFormatter FORMAT =
            new DateTimeFormatterBuilder()
                    .appendPattern("uuuu-MM-dd")
                    .optionalStart()
                    .appendPattern(" HH:mm:ss")
                    .optionalStart()
                    .appendLiteral('.')
                    .appendValue(ChronoField.MILLI_OF_SECOND, 3)
                    .optionalEnd()
                    .optionalEnd()
                    .optionalStart()
                    .appendOffset("+HH:MM", "Z")
                    .optionalEnd()
                    .toFormatter()
                    .withResolverStyle(ResolverStyle.STRICT);

    private CdfTimestamps() {}

    /** Epoch milliseconds of {@code text}; {@code option} names the option in the error message. */
    static long parseMillis(String text, String option, String tableName) {
        try {
            TemporalAccessor parsed = FORMAT.parse(text);
            LocalDate date = LocalDate.from(parsed);
            LocalDateTime dateTime =
                    parsed.isSupported(ChronoField.HOUR_OF_DAY)
                            ? LocalDateTime.of(date, LocalTime.from(parsed))
                            : date.atStartOfDay();
            ZoneOffset offset =
                    parsed.isSupported(ChronoField.OFFSET_SECONDS)
                            ? ZoneOffset.from(parsed)
                            : ZoneOffset.UTC;
            return dateTime.toInstant(offset).toEpochMilli();
        } catch (DateTimeException e) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_TIMESTAMP,
                    String.format(
                            "'%s' = '%s' for the change feed of table %s is not a timestamp. Use "
                                    + "yyyy-MM-dd, yyyy-MM-dd HH:mm:ss or yyyy-MM-dd HH:mm:ss.SSS, "
                                    + "optionally followed by an offset such as Z or +02:00 (no offset means UTC).",
                            option, text, tableName),
                    e);
        }
    }
}

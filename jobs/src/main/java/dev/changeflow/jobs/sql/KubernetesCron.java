package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.sql.SqlStatement.Schedule;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns a {@code SCHEDULE} clause into the five-field cron expression of a Kubernetes {@code
 * CronJob} ({@code minute hour day-of-month month day-of-week}, day-of-week 0–6 with Sunday = 0) —
 * docs/semantics.md S3.
 *
 * <p>{@code SCHEDULE CRON '<quartz>'}: a Quartz expression has six or seven fields ({@code second
 * minute hour day-of-month month day-of-week [year]}), {@code ?} for "no specific value" in one of
 * the two day fields and day-of-week 1–7 with Sunday = 1. It converts when the second is {@code 0},
 * the year is absent, {@code *} or {@code ?}, and no field uses Quartz's {@code L}, {@code W} or
 * {@code #}: {@code ?} becomes {@code *}, numeric days of the week move down by one ({@code 1-5} →
 * {@code 0-4}), {@code a/n} becomes {@code a-max/n}; names ({@code MON}, {@code JAN}) are kept.
 * Anything else cannot be expressed and fails.
 *
 * <p>{@code SCHEDULE EVERY n unit}: a cron expression fires at fixed times of the day, so only
 * periods that divide a day or equal a day or a week convert: {@code EVERY n HOURS} with n dividing
 * 24 → {@code 0 *&#47;n * * *} (n = 1: {@code 0 * * * *}); 24 hours as 1 day; {@code EVERY 1 DAY} →
 * {@code 0 0 * * *}; {@code EVERY 7 DAYS} or {@code EVERY 1 WEEK} → {@code 0 0 * * 0}. Other
 * periods (5 hours, 2 days, 3 weeks) fail with the advice to write {@code SCHEDULE CRON}: firing on
 * other times would refresh at a different rate than the statement asks.
 */
@PublicEvolving
public final class KubernetesCron {
    private static final Pattern STEP = Pattern.compile("([^/]+)/(\\d+)");
    private static final Pattern RANGE = Pattern.compile("([A-Za-z0-9]+)-([A-Za-z0-9]+)");
    private static final List<String> DAYS =
            List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT");
    private static final List<String> MONTHS =
            List.of(
                    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
                    "DEC");

    /** A field of a Quartz expression: name, lowest and highest value, its names (or none). */
    private record Field(String name, int min, int max, List<String> names) {}

    private static final Field SECOND = new Field("second", 0, 59, List.of());
    private static final Field MINUTE = new Field("minute", 0, 59, List.of());
    private static final Field HOUR = new Field("hour", 0, 23, List.of());
    private static final Field DAY_OF_MONTH = new Field("day-of-month", 1, 31, List.of());
    private static final Field MONTH = new Field("month", 1, 12, MONTHS);
    private static final Field DAY_OF_WEEK = new Field("day-of-week", 1, 7, DAYS);

    private KubernetesCron() {}

    /**
     * The Kubernetes cron expression of a schedule.
     *
     * @throws IllegalArgumentException when the schedule cannot be expressed as a Kubernetes cron
     *     expression; the message says why and what to write instead
     */
    public static String of(Schedule schedule) {
        if (schedule instanceof Schedule.Cron c) {
            return fromQuartz(c.quartz());
        }
        Schedule.Every e = (Schedule.Every) schedule;
        int n = e.count();
        switch (e.unit()) {
            case HOURS:
                if (n % 24 == 0) {
                    return every(n / 24, e);
                }
                if (n == 1) {
                    return "0 * * * *";
                }
                if (24 % n == 0) {
                    return "0 */" + n + " * * *";
                }
                break;
            case DAYS:
                return every(n, e);
            case WEEKS:
                if (n == 1) {
                    return "0 0 * * 0";
                }
                break;
            default:
                break;
        }
        throw notCron(e);
    }

    private static String every(int days, Schedule.Every e) {
        if (days == 1) {
            return "0 0 * * *";
        }
        if (days == 7) {
            return "0 0 * * 0";
        }
        throw notCron(e);
    }

    private static IllegalArgumentException notCron(Schedule.Every e) {
        return new IllegalArgumentException(
                "SCHEDULE EVERY "
                        + e.count()
                        + " "
                        + e.unit()
                        + " has no Kubernetes cron expression: a CronJob fires at fixed times of"
                        + " the day, so EVERY converts only for 1, 2, 3, 4, 6, 8, 12 or 24 hours, 1"
                        + " or 7 days and 1 week; write the times with SCHEDULE CRON"
                        + " '<quartz>' instead (e.g. CRON '0 0 0 */2 * ?' for every second day of"
                        + " the month)");
    }

    /**
     * Converts a Quartz cron expression (see the class comment).
     *
     * @throws IllegalArgumentException naming the field and the reason when it does not convert
     */
    public static String fromQuartz(String quartz) {
        String[] f = quartz.trim().split("\\s+");
        if (f.length < 6 || f.length > 7) {
            throw bad(
                    quartz,
                    "a Quartz expression has 6 or 7 fields (second minute hour day-of-month month"
                            + " day-of-week [year]), this one has "
                            + (quartz.isBlank() ? 0 : f.length));
        }
        String second = convert(quartz, f[0], SECOND);
        if (!second.equals("0")) {
            throw bad(
                    quartz,
                    "the second field is '"
                            + f[0]
                            + "': a Kubernetes CronJob fires at whole minutes, so the second must"
                            + " be 0");
        }
        if (f.length == 7 && !f[6].equals("*") && !f[6].equals("?")) {
            throw bad(
                    quartz,
                    "the year field is '"
                            + f[6]
                            + "': a Kubernetes cron expression has no year (use * or leave it out)");
        }
        boolean anyDom = f[3].equals("?");
        boolean anyDow = f[5].equals("?");
        if (anyDom && anyDow) {
            throw bad(quartz, "'?' may stand in only one of day-of-month and day-of-week");
        }
        if (!anyDom && !anyDow) {
            throw bad(
                    quartz,
                    "give '?' in day-of-month or in day-of-week (Quartz does not combine both)");
        }
        return String.join(
                " ",
                convert(quartz, f[1], MINUTE),
                convert(quartz, f[2], HOUR),
                anyDom ? "*" : convert(quartz, f[3], DAY_OF_MONTH),
                convert(quartz, f[4], MONTH),
                anyDow ? "*" : convert(quartz, f[5], DAY_OF_WEEK));
    }

    /** One field: a list of {@code *}, values, ranges and steps, checked and renumbered. */
    private static String convert(String quartz, String text, Field field) {
        List<String> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            out.add(part(quartz, part, field));
        }
        return String.join(",", out);
    }

    private static String part(String quartz, String part, Field field) {
        Matcher step = STEP.matcher(part);
        if (step.matches()) {
            int n = Integer.parseInt(step.group(2));
            if (n < 1 || n > field.max()) {
                throw bad(
                        quartz,
                        "step /" + n + " of the " + field.name() + " field is out of range");
            }
            String base = step.group(1);
            String range;
            if (base.equals("*")) {
                range = "*";
            } else if (RANGE.matcher(base).matches()) {
                range = part(quartz, base, field);
            } else {
                range = value(quartz, base, field) + "-" + value(quartz, max(field), field);
            }
            return range + "/" + n;
        }
        if (part.equals("*")) {
            return "*";
        }
        Matcher range = RANGE.matcher(part);
        if (range.matches()) {
            int from = number(quartz, range.group(1), field);
            int to = number(quartz, range.group(2), field);
            if (from > to) {
                throw bad(
                        quartz,
                        "range '"
                                + part
                                + "' of the "
                                + field.name()
                                + " field wraps around; write it as two ranges");
            }
            return value(quartz, range.group(1), field)
                    + "-"
                    + value(quartz, range.group(2), field);
        }
        return value(quartz, part, field);
    }

    private static String max(Field field) {
        return Integer.toString(field.max());
    }

    /** A single value in Kubernetes numbering: names kept, days of the week moved down by one. */
    private static String value(String quartz, String v, Field field) {
        int n = number(quartz, v, field);
        if (!field.names().isEmpty() && !v.chars().allMatch(Character::isDigit)) {
            return v.toUpperCase(Locale.ROOT);
        }
        return Integer.toString(field == DAY_OF_WEEK ? n - 1 : n);
    }

    private static int number(String quartz, String v, Field field) {
        int i = field.names().indexOf(v.toUpperCase(Locale.ROOT));
        if (i >= 0) {
            return i + field.min();
        }
        if (v.toUpperCase(Locale.ROOT).matches(".*[LW#].*")) {
            throw bad(
                    quartz,
                    "'"
                            + v
                            + "' in the "
                            + field.name()
                            + " field uses L, W or # (last day, nearest weekday, n-th weekday),"
                            + " which a Kubernetes cron expression cannot express");
        }
        if (v.isEmpty() || !v.chars().allMatch(Character::isDigit)) {
            throw bad(
                    quartz,
                    "'"
                            + v
                            + "' is not a value of the "
                            + field.name()
                            + " field"
                            + (field.names().isEmpty()
                                    ? ""
                                    : " (" + field.names().get(0) + "..., or a number)"));
        }
        int n = Integer.parseInt(v);
        if (n < field.min() || n > field.max()) {
            throw bad(
                    quartz,
                    "'"
                            + v
                            + "' is out of range for the "
                            + field.name()
                            + " field ("
                            + field.min()
                            + "–"
                            + field.max()
                            + (field == DAY_OF_WEEK ? ", Quartz numbers Sunday as 1" : "")
                            + ")");
        }
        return n;
    }

    private static IllegalArgumentException bad(String quartz, String why) {
        return new IllegalArgumentException(
                "cron '" + quartz + "' has no Kubernetes cron expression: " + why);
    }
}

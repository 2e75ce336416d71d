package dev.changeflow.operators.options;

import org.apache.flink.util.function.SerializableFunction;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@link OptionParser}s options are declared with, and the text forms they accept. Every error
 * names the option, the value and what is allowed.
 */
public final class OptionParsers {
    private static final Pattern DURATION =
            Pattern.compile("^(\\d+)\\s*(ms|s|sec|m|min|h|d|day|days)?$");

    private OptionParsers() {}

    /**
     * A single text value, as given (null stays null).
     *
     * @throws IllegalArgumentException for a list
     */
    public static OptionParser<String> text(String key) {
        return raw -> {
            if (raw instanceof Collection) {
                throw new IllegalArgumentException(
                        "'" + key + "' takes a single value, got the list " + raw);
            }
            return raw == null ? null : raw.toString();
        };
    }

    /**
     * A single text value read by {@code parse}, which throws any {@link RuntimeException} for a
     * value it does not accept (null is read as the empty text).
     *
     * @param allowed what the option accepts, completing {@code "... is not "} (e.g. {@code "a
     *     duration (for example '10 s')"})
     * @throws InvalidOptionValueException {@code "'KEY' = 'VALUE' is not ALLOWED."} for a value
     *     {@code parse} refuses, or a list
     */
    public static <T> OptionParser<T> parsing(
            String key, String allowed, SerializableFunction<String, T> parse) {
        return raw -> {
            if (raw instanceof Collection) {
                throw new InvalidOptionValueException(key, raw.toString(), allowed, null);
            }
            String text = raw == null ? "" : raw.toString();
            try {
                return parse.apply(text);
            } catch (RuntimeException notAccepted) {
                throw new InvalidOptionValueException(key, text, allowed, notAccepted);
            }
        };
    }

    /**
     * One of {@code allowed} (compared ignoring case; the result is lower case).
     *
     * @throws IllegalArgumentException {@code "'KEY' must be a, b or c, got 'x'"}
     */
    public static OptionParser<String> oneOf(String key, String... allowed) {
        OptionParser<String> text = text(key);
        return raw -> {
            String t = text.parse(raw);
            String lower = t == null ? "" : t.trim().toLowerCase(Locale.ROOT);
            for (String a : allowed) {
                if (a.equals(lower)) {
                    return lower;
                }
            }
            throw new IllegalArgumentException(
                    "'" + key + "' must be " + alternatives(allowed) + ", got '" + t + "'");
        };
    }

    /**
     * {@code true} or {@code false} (any case).
     *
     * @throws IllegalArgumentException {@code "KEY must be true or false, got 'x'"}
     */
    public static OptionParser<Boolean> bool(String key) {
        return raw -> {
            String t = raw == null ? "" : raw.toString().trim();
            if (t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false")) {
                return Boolean.parseBoolean(t);
            }
            throw new IllegalArgumentException(key + " must be true or false, got '" + raw + "'");
        };
    }

    /**
     * A whole number from {@code min} to {@code max}.
     *
     * @param what what the number counts, for the message (e.g. {@code "keys per subtask"})
     * @throws IllegalArgumentException {@code "KEY must be a whole number of WHAT from MIN to MAX,
     *     got 'x'"}
     */
    public static OptionParser<Integer> intRange(String key, int min, int max, String what) {
        return intRange(key, min, null, max, what);
    }

    /**
     * A whole number from {@code min} to {@code max}, where {@code min} means something of its own.
     *
     * @param minMeaning what {@code min} means, for the message (e.g. {@code "no buffering"}); null
     *     for none
     * @throws IllegalArgumentException {@code "KEY must be a whole number of WHAT from MIN
     *     (MEANING) to MAX, got 'x'"}
     */
    public static OptionParser<Integer> intRange(
            String key, int min, String minMeaning, int max, String what) {
        return raw -> {
            String t = raw == null ? "" : raw.toString().trim();
            if (t.matches("-?[0-9]{1,10}")) {
                long v = Long.parseLong(t);
                if (v >= min && v <= max) {
                    return (int) v;
                }
            }
            throw new IllegalArgumentException(
                    key
                            + " must be a whole number of "
                            + what
                            + " from "
                            + min
                            + (minMeaning == null ? "" : " (" + minMeaning + ")")
                            + " to "
                            + max
                            + ", got "
                            + (t.isEmpty() ? "an empty value" : "'" + t + "'"));
        };
    }

    /**
     * A duration: {@code 2s}, {@code 500ms}, {@code 10 min}, {@code 2d}, {@code 48h}, a bare number
     * of seconds, or ISO-8601 ({@code PT2S}); see {@link #duration(String, String)}.
     */
    public static OptionParser<Duration> duration(String key) {
        return raw -> duration(raw == null ? "" : raw.toString(), key);
    }

    /**
     * Parses a duration: {@code 2s}, {@code 500ms}, {@code 10 min}, {@code 2d}, {@code 48h}, a bare
     * number (seconds) or ISO-8601 ({@code PT2S}), at most {@link #MAX_DURATION} (100 years: a
     * longer one would overflow where it is added to a time or taken in milliseconds).
     *
     * @param label names the value in the error
     * @throws IllegalArgumentException {@code "LABEL: not a duration: 'x' (e.g. 2s, 500ms, 10min,
     *     2d)"}, or {@code "LABEL: 'x' is longer than 36500 days (100 years)"}
     */
    public static Duration duration(String text, String label) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        Duration d;
        try {
            d = parseDuration(text, t);
        } catch (NumberFormatException | ArithmeticException tooLarge) {
            throw longerThanMax(text, label);
        } catch (DateTimeParseException e) {
            if (e.getCause() instanceof ArithmeticException) {
                throw longerThanMax(text, label);
            }
            throw new IllegalArgumentException(
                    label + ": not a duration: '" + text + "' (e.g. 2s, 500ms, 10min, 2d)");
        }
        if (d.abs().compareTo(MAX_DURATION) > 0) {
            throw longerThanMax(text, label);
        }
        return d;
    }

    /** The longest duration {@link #duration(String, String)} accepts: 36,500 days. */
    public static final Duration MAX_DURATION = Duration.ofDays(36_500);

    private static IllegalArgumentException longerThanMax(String text, String label) {
        return new IllegalArgumentException(
                label
                        + ": '"
                        + text.trim()
                        + "' is longer than "
                        + MAX_DURATION.toDays()
                        + " days (100 years)");
    }

    private static Duration parseDuration(String text, String t) {
        Matcher m = DURATION.matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            String u = m.group(2) == null ? "s" : m.group(2);
            switch (u) {
                case "ms":
                    return Duration.ofMillis(n);
                case "s":
                case "sec":
                    return Duration.ofSeconds(n);
                case "m":
                case "min":
                    return Duration.ofMinutes(n);
                case "h":
                    return Duration.ofHours(n);
                default:
                    return Duration.ofDays(n);
            }
        }
        return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
    }

    /**
     * A list of texts: a list as given (items trimmed), or one text split at its top-level commas
     * ({@code "bid, bucket(16, aid)"} is two items); blank items are dropped, null is empty.
     */
    public static OptionParser<List<String>> list() {
        return OptionParsers::list;
    }

    /** See {@link #list()}. */
    public static List<String> list(Object raw) {
        List<String> out = new ArrayList<>();
        if (raw instanceof Collection) {
            for (Object e : (Collection<?>) raw) {
                out.add(String.valueOf(e).trim());
            }
            return out;
        }
        if (raw == null) {
            return out;
        }
        String text = raw.toString();
        int depth = 0;
        int from = 0;
        for (int i = 0; i <= text.length(); i++) {
            char c = i < text.length() ? text.charAt(i) : ',';
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth <= 0) {
                String item = text.substring(from, i).trim();
                if (!item.isEmpty()) {
                    out.add(item);
                }
                from = i + 1;
            }
        }
        return out;
    }

    /** {@code "a"}, {@code "a or b"}, {@code "a, b or c"}. */
    static String alternatives(String... values) {
        if (values.length == 1) {
            return values[0];
        }
        return String.join(", ", List.of(values).subList(0, values.length - 1))
                + " or "
                + values[values.length - 1];
    }
}

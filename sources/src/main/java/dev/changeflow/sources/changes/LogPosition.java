package dev.changeflow.sources.changes;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.math.BigInteger;
import java.util.Locale;

/**
 * The log position of a Debezium change record, {@code _log_position} (semantics.md A5 "Default
 * sequence per connector"): the members of the envelope's {@code source} that order the changes of
 * one row totally, chosen by {@code source.connector} and written as one text that sorts like the
 * position (Flink compares strings by their UTF-8 bytes; every part below is ASCII and of fixed
 * width, parts are separated by {@code /}):
 *
 * <pre>
 * postgresql       lsn
 * mysql, mariadb   number of the binlog file (the digits after the last '.' of source.file), pos,
 *                  row; a snapshot record (source.snapshot true/first/last/...) has "-" as row
 * sqlserver        commit_lsn, change_lsn, event_serial_no
 * db2              commit_lsn, change_lsn, event_serial_no
 * oracle           commit_scn (scn when absent), scn, rs_id, ssn
 * mongodb          seconds (source.sec, else source.ts_ms / 1000), ord
 * </pre>
 *
 * Numbers (JSON integers or strings of digits, such as Oracle's SCNs) are written as 20 decimal
 * digits, so {@code "9"} sorts before {@code "10"}. LSNs are hexadecimal parts separated by {@code
 * :} (SQL Server {@code 00000027:00000758:0005}, Db2 {@code 00000000:00000000:0000000000047e18}),
 * each written lower-case and left-padded to its width (SQL Server 8, 8, 4; Db2 8, 8, 16), so they
 * compare as numbers part by part. Oracle's {@code rs_id} (redo record address {@code 0x<log
 * seq>.<block>.<offset>}) is written as three hexadecimal parts of 16 digits. A part that is absent
 * or null and not essential is written {@code -}, which sorts before any value. The position is
 * null when an essential part (the first of each line, plus {@code pos} for MySQL and {@code ord}
 * for MongoDB) is absent, null or malformed, or when the connector is not one of the above.
 */
@Internal
final class LogPosition {
    /** Width of a number part: every unsigned 64-bit value fits. */
    static final int NUMBER_WIDTH = 20;

    private static final char SEP = '/';
    private static final String ABSENT = "-";

    private LogPosition() {}

    /** Whether {@code connector} (a {@code source.connector} value) has a log position. */
    static boolean known(@Nullable String connector) {
        return connector != null && describe(connector) != null;
    }

    /** The parts of a connector's position for messages and docs, or null for an unknown one. */
    @Nullable
    static String describe(String connector) {
        switch (connector) {
            case "postgresql":
                return "source.lsn";
            case "mysql":
            case "mariadb":
                return "binlog file number of source.file, source.pos, source.row";
            case "sqlserver":
            case "db2":
                return "source.commit_lsn, source.change_lsn, source.event_serial_no";
            case "oracle":
                return "source.commit_scn (else source.scn), source.scn, source.rs_id, source.ssn";
            case "mongodb":
                return "seconds of source.ts_ms (or source.sec), source.ord";
            default:
                return null;
        }
    }

    /**
     * The position of a record whose {@code source} members are {@code s}, or null (see the class
     * comment).
     */
    @Nullable
    static String of(@Nullable String connector, JsonFields s) {
        if (connector == null) {
            return null;
        }
        StringBuilder b = new StringBuilder(72);
        switch (connector) {
            case "postgresql":
                return number(b, s, "lsn", true) ? b.toString() : null;
            case "mysql":
            case "mariadb":
                {
                    int f = s.indexOf("file");
                    if (f < 0 || s.kinds[f] != JsonFields.STRING) {
                        return null;
                    }
                    String file = s.texts[f];
                    String suffix = file.substring(file.lastIndexOf('.') + 1);
                    if (!number(b, suffix) || !number(b.append(SEP), s, "pos", true)) {
                        return null;
                    }
                    b.append(SEP);
                    if (snapshot(s)) {
                        return b.append(ABSENT).toString();
                    }
                    return number(b, s, "row", false) ? b.toString() : null;
                }
            case "sqlserver":
                return lsns(b, s, new int[] {8, 8, 4});
            case "db2":
                return lsns(b, s, new int[] {8, 8, 16});
            case "oracle":
                {
                    String scn = "commit_scn";
                    int c = s.indexOf(scn);
                    if (c < 0 || s.kinds[c] == JsonFields.NULL) {
                        scn = "scn";
                    }
                    if (!number(b, s, scn, true) || !number(b.append(SEP), s, "scn", false)) {
                        return null;
                    }
                    b.append(SEP);
                    int r = s.indexOf("rs_id");
                    String rsId = r >= 0 && s.kinds[r] == JsonFields.STRING ? s.texts[r] : null;
                    if (rsId == null) {
                        b.append(ABSENT);
                    } else if (!hex(
                            b, rsId.trim().replace("0x", "").replace("0X", ""), '.', null)) {
                        return null;
                    }
                    return number(b.append(SEP), s, "ssn", false) ? b.toString() : null;
                }
            case "mongodb":
                {
                    int sec = s.indexOf("sec");
                    if (sec >= 0 && s.kinds[sec] != JsonFields.NULL) {
                        if (!number(b, s, "sec", true)) {
                            return null;
                        }
                    } else {
                        int t = s.indexOf("ts_ms");
                        if (t < 0 || s.kinds[t] != JsonFields.INT || s.longs[t] < 0) {
                            return null;
                        }
                        number(b, Long.toString(s.longs[t] / 1000));
                    }
                    return number(b.append(SEP), s, "ord", true) ? b.toString() : null;
                }
            default:
                return null;
        }
    }

    /** {@code commit_lsn/change_lsn/event_serial_no}, commit_lsn essential. */
    @Nullable
    private static String lsns(StringBuilder b, JsonFields s, int[] widths) {
        if (!lsn(b, s, "commit_lsn", widths, true)
                || !lsn(b.append(SEP), s, "change_lsn", widths, false)) {
            return null;
        }
        return number(b.append(SEP), s, "event_serial_no", false) ? b.toString() : null;
    }

    private static boolean lsn(
            StringBuilder b, JsonFields s, String member, int[] widths, boolean essential) {
        int i = s.indexOf(member);
        if (i < 0 || s.kinds[i] == JsonFields.NULL) {
            b.append(ABSENT);
            return !essential;
        }
        return s.kinds[i] == JsonFields.STRING && hex(b, s.texts[i], ':', widths);
    }

    /**
     * Normalizes an LSN (SQL Server, Db2) to lower-case hex parts left-padded to their widths, or
     * null when it is not such an LSN; for {@code source.commit_lsn} / {@code source.change_lsn}
     * used as sequence columns.
     *
     * @param connector {@code sqlserver} (widths 8, 8, 4), {@code db2} (8, 8, 16), else 16 each
     */
    @Nullable
    static String normalizeLsn(@Nullable String connector, String lsn) {
        int[] widths =
                "sqlserver".equals(connector)
                        ? new int[] {8, 8, 4}
                        : "db2".equals(connector) ? new int[] {8, 8, 16} : null;
        StringBuilder b = new StringBuilder(40);
        return hex(b, lsn, ':', widths) ? b.toString() : null;
    }

    /**
     * Appends the {@code sep}-separated hex parts of {@code text}, each lower-case and left-padded
     * to {@code widths[i]} (16 when {@code widths} is null); false when a part is empty, not hex,
     * longer than its width, or the number of parts differs from {@code widths}.
     */
    private static boolean hex(StringBuilder b, String text, char sep, @Nullable int[] widths) {
        String[] parts = text.split(java.util.regex.Pattern.quote(String.valueOf(sep)), -1);
        if (widths != null && parts.length != widths.length) {
            return false;
        }
        for (int p = 0; p < parts.length; p++) {
            String part = parts[p].toLowerCase(Locale.ROOT);
            int width = widths == null ? 16 : widths[p];
            if (part.isEmpty() || part.length() > width) {
                return false;
            }
            for (int k = 0; k < part.length(); k++) {
                if (Character.digit(part.charAt(k), 16) < 0) {
                    return false;
                }
            }
            if (p > 0) {
                b.append(':');
            }
            b.append("0".repeat(width - part.length())).append(part);
        }
        return true;
    }

    /**
     * Appends member {@code m} of {@code s} as a number part: a non-negative JSON integer or string
     * of digits. Absent or null: {@code -} unless essential.
     */
    private static boolean number(StringBuilder b, JsonFields s, String m, boolean essential) {
        int i = s.indexOf(m);
        if (i < 0 || s.kinds[i] == JsonFields.NULL) {
            b.append(ABSENT);
            return !essential;
        }
        switch (s.kinds[i]) {
            case JsonFields.INT:
                return s.longs[i] >= 0 && number(b, Long.toString(s.longs[i]));
            case JsonFields.BIG_INT:
            case JsonFields.STRING:
                return number(b, s.texts[i].trim());
            default:
                return false;
        }
    }

    /** Appends a string of decimal digits as a number part; false when it is not one. */
    private static boolean number(StringBuilder b, String digits) {
        BigInteger v = unsigned(digits);
        if (v == null) {
            return false;
        }
        String t = v.toString();
        if (t.length() > NUMBER_WIDTH) {
            return false;
        }
        b.append("0".repeat(NUMBER_WIDTH - t.length())).append(t);
        return true;
    }

    /** A non-empty string of ASCII digits as a number, else null. */
    @Nullable
    static BigInteger unsigned(String digits) {
        if (digits.isEmpty()) {
            return null;
        }
        for (int k = 0; k < digits.length(); k++) {
            char c = digits.charAt(k);
            if (c < '0' || c > '9') {
                return null;
            }
        }
        return new BigInteger(digits);
    }

    private static boolean snapshot(JsonFields s) {
        int i = s.indexOf("snapshot");
        if (i < 0) {
            return false;
        }
        if (s.kinds[i] == JsonFields.TRUE) {
            return true;
        }
        if (s.kinds[i] != JsonFields.STRING) {
            return false;
        }
        String v = s.texts[i];
        // "incremental" snapshot rows are read during streaming at the streaming position
        return !v.equals("false") && !v.equals("incremental");
    }
}

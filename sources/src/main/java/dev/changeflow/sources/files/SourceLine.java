package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One line of a change file, or a marker, as produced by {@link ChangeFiles#source} (a Flink POJO).
 *
 * <ul>
 *   <li><b>Data line</b>: {@code bytes} = the line without its LF / CRLF terminator, {@code line} =
 *       its 1-based number in the (decompressed) file, {@code length} = its full length in bytes.
 *       Empty lines are not emitted (their numbers are still counted). A line longer than the
 *       reader's limit has {@code length > bytes.length}: {@code bytes} then holds only its first
 *       64 KiB and the line is to be quarantined as {@code RECORD_TOO_LARGE} ({@link
 *       DecodeFunction} does).
 *   <li><b>Damage marker</b> ({@code damage != null}): the file is not read from here on; {@code
 *       line} = the first line not read (the number the next line would have had), {@code damage} =
 *       the detail, {@code damageReason} = how it is quarantined, {@code bytes} = the part of that
 *       line that was read, or null when the damage falls on a line boundary. {@code
 *       TRUNCATED_FILE}: a compressed stream that ends early (or fails while read); {@code
 *       DAMAGED_FILE}: a gzip file that fails its integrity checks, {@code line} being the first
 *       line not entirely in a verified member and {@code bytes} the part of it that is.
 *   <li><b>End-of-file marker</b> ({@code endOfFile = true}, {@code bytes} null): emitted once per
 *       file after its last line, or after its damage marker; {@code line} = the number of lines
 *       read.
 * </ul>
 *
 * {@code source} is the file's path (URI form as Flink's {@code Path#toString()}). Fields are
 * public (Flink POJO style) and also have getters and setters.
 */
@PublicEvolving
public final class SourceLine {
    /** The file's path. */
    public String source;

    /** 1-based line number (see the class comment for markers). */
    public long line;

    /**
     * The line's bytes; null for the end-of-file marker (and a damage marker on a line boundary).
     */
    @Nullable public byte[] bytes;

    /** Non-null only on the damage marker: the detail. */
    @Nullable public String damage;

    /**
     * On the damage marker: {@code TRUNCATED_FILE} or {@code DAMAGED_FILE} (a damage marker without
     * one is quarantined as {@code TRUNCATED_FILE}); null otherwise.
     */
    @Nullable public QuarantineReason damageReason;

    /**
     * On a data line of a CSV file ({@link ChangeFiles.Format#CSV}) that is no record of it: why
     * (quarantined as {@code MALFORMED_CSV} with {@code bytes} as read); null otherwise.
     */
    @Nullable public String malformed;

    /**
     * True on a data line of a CSV file turned into its JSON row ({@link CsvLines}): every value is
     * the text of a cell, read by the column's type ({@link
     * dev.changeflow.sources.changes.ChangeRecordDecoder#textCells}).
     */
    public boolean textCells;

    /** True only on the end-of-file marker. */
    public boolean endOfFile;

    /** The line's full length in bytes (more than {@code bytes.length} when oversized). */
    public long length;

    /** For Flink's POJO serializer. */
    public SourceLine() {}

    /** A data line, or a marker; a damage marker made here has reason {@code TRUNCATED_FILE}. */
    public SourceLine(
            String source,
            long line,
            @Nullable byte[] bytes,
            long length,
            @Nullable String damage,
            boolean endOfFile) {
        this.source = source;
        this.line = line;
        this.bytes = bytes;
        this.length = length;
        this.damage = damage;
        this.damageReason = damage == null ? null : QuarantineReason.TRUNCATED_FILE;
        this.endOfFile = endOfFile;
    }

    /** A data line. */
    public static SourceLine data(String source, long line, byte[] bytes) {
        return new SourceLine(source, line, bytes, bytes.length, null, false);
    }

    /** A damage marker of a stream that ends early or fails while read ({@code TRUNCATED_FILE}). */
    public static SourceLine damage(
            String source, long line, String detail, @Nullable byte[] partialLine) {
        return damage(source, line, QuarantineReason.TRUNCATED_FILE, detail, partialLine);
    }

    /**
     * A damage marker with its quarantine reason.
     *
     * @param reason {@code TRUNCATED_FILE} or {@code DAMAGED_FILE}
     * @param line the first line not read (1-based)
     * @param partialLine the bytes of that line that were read (and, for {@code DAMAGED_FILE},
     *     verified), or null
     */
    public static SourceLine damage(
            String source,
            long line,
            QuarantineReason reason,
            String detail,
            @Nullable byte[] partialLine) {
        SourceLine marker =
                new SourceLine(
                        source,
                        line,
                        partialLine,
                        partialLine == null ? 0 : partialLine.length,
                        detail,
                        false);
        marker.damageReason = reason;
        return marker;
    }

    /** An end-of-file marker. */
    public static SourceLine endOfFile(String source, long linesRead) {
        return new SourceLine(source, linesRead, null, 0, null, true);
    }

    /** Whether this is a marker (damage or end of file) rather than a data line. */
    public boolean marker() {
        return damage != null || endOfFile;
    }

    /** Whether the line was cut at the reader's limit ({@code length > bytes.length}). */
    public boolean oversized() {
        return !marker() && bytes != null && length > bytes.length;
    }

    public String getSource() {
        return source;
    }

    public void setSource(String source) {
        this.source = source;
    }

    public long getLine() {
        return line;
    }

    public void setLine(long line) {
        this.line = line;
    }

    @Nullable
    public byte[] getBytes() {
        return bytes;
    }

    public void setBytes(@Nullable byte[] bytes) {
        this.bytes = bytes;
    }

    @Nullable
    public String getDamage() {
        return damage;
    }

    public void setDamage(@Nullable String damage) {
        this.damage = damage;
    }

    @Nullable
    public QuarantineReason getDamageReason() {
        return damageReason;
    }

    public void setDamageReason(@Nullable QuarantineReason damageReason) {
        this.damageReason = damageReason;
    }

    @Nullable
    public String getMalformed() {
        return malformed;
    }

    public void setMalformed(@Nullable String malformed) {
        this.malformed = malformed;
    }

    public boolean isEndOfFile() {
        return endOfFile;
    }

    public void setEndOfFile(boolean endOfFile) {
        this.endOfFile = endOfFile;
    }

    public long getLength() {
        return length;
    }

    public void setLength(long length) {
        this.length = length;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SourceLine)) {
            return false;
        }
        SourceLine s = (SourceLine) o;
        return line == s.line
                && endOfFile == s.endOfFile
                && length == s.length
                && Objects.equals(source, s.source)
                && Arrays.equals(bytes, s.bytes)
                && Objects.equals(damage, s.damage)
                && Objects.equals(malformed, s.malformed)
                && damageReason == s.damageReason;
    }

    @Override
    public int hashCode() {
        return Objects.hash(source, line, damage, damageReason, malformed, endOfFile, length) * 31
                + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        if (endOfFile) {
            return "SourceLine{" + source + ":" + line + " END_OF_FILE}";
        }
        if (damage != null) {
            return "SourceLine{" + source + ":" + line + " " + damageReason + " " + damage + "}";
        }
        String text =
                bytes == null
                        ? "null"
                        : new String(bytes, 0, Math.min(bytes.length, 80), StandardCharsets.UTF_8);
        return "SourceLine{"
                + source
                + ":"
                + line
                + " "
                + text
                + (length > 80 ? "... (" + length + " bytes)" : "")
                + "}";
    }
}

package dev.changeflow.sources.cdf.stream.split;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;

import javax.annotation.Nullable;

import java.util.Objects;

/**
 * One unit of work of the streaming change feed: one part of one version (design.md "Order and
 * pairing — how").
 *
 * <ul>
 *   <li>{@link Kind#INITIAL}: one scan task of the initial snapshot; its live rows are emitted as
 *       {@code insert} rows tagged with the snapshot's version (F6). {@link #file()} holds the task
 *       as JSON (Iceberg's {@code ScanTaskParser}).
 *   <li>{@link Kind#ADDED}: the rows of one data file the version added ({@link #file()} is its
 *       location), emitted as unpaired {@code insert} rows.
 *   <li>{@link Kind#REMOVED}: the rows the version removed from earlier files (position deletes,
 *       deletion vectors, rewritten files, equality deletes) or restored in them, emitted as
 *       unpaired {@code delete} / {@code insert} rows.
 * </ul>
 *
 * <p>{@link #offset()} counts the rows of the split already emitted (a restored reader skips them);
 * {@link #finished()} marks a split whose rows were all emitted but whose version the enumerator
 * has not confirmed yet (it is reported again after a restore). Immutable.
 */
@Internal
public final class ChangeFeedSplit implements SourceSplit {

    /** What part of a version a split reads. */
    public enum Kind {
        INITIAL('I'),
        ADDED('A'),
        REMOVED('R');

        private final char code;

        Kind(char code) {
            this.code = code;
        }

        /** One-letter code used in split ids and the serialized form. */
        public char code() {
            return code;
        }

        static Kind ofCode(char code) {
            for (Kind kind : values()) {
                if (kind.code == code) {
                    return kind;
                }
            }
            throw new IllegalArgumentException("unknown split kind '" + code + "'");
        }
    }

    private final long version;
    private final long snapshotId;
    private final long commitMillis;
    private final Kind kind;
    private final int index;
    @Nullable private final String file;
    private final long offset;
    private final boolean finished;

    /**
     * @param version the snapshot's sequence number
     * @param snapshotId the snapshot's id
     * @param commitMillis the snapshot's commit time, epoch milliseconds
     * @param kind what part of the version the split reads
     * @param index position among the version's splits of this kind
     * @param file data file location, scan-task JSON or null (see {@link #file()})
     * @param offset rows already emitted
     * @param finished whether every row was emitted
     */
    public ChangeFeedSplit(
            long version,
            long snapshotId,
            long commitMillis,
            Kind kind,
            int index,
            @Nullable String file,
            long offset,
            boolean finished) {
        this.version = version;
        this.snapshotId = snapshotId;
        this.commitMillis = commitMillis;
        this.kind = kind;
        this.index = index;
        this.file = file;
        this.offset = offset;
        this.finished = finished;
    }

    /** A fresh split (nothing emitted yet). */
    public static ChangeFeedSplit of(
            long version,
            long snapshotId,
            long commitMillis,
            Kind kind,
            int index,
            @Nullable String file) {
        return new ChangeFeedSplit(version, snapshotId, commitMillis, kind, index, file, 0L, false);
    }

    /**
     * {@code <version>-<kind code><index>}, e.g. {@code 76-A3}; unique within a table's history.
     */
    @Override
    public String splitId() {
        return version + "-" + kind.code + index;
    }

    /** The version of a split id made by {@link #splitId()}. */
    public static long versionOf(String splitId) {
        return Long.parseLong(splitId.substring(0, splitId.indexOf('-')));
    }

    /** The version (snapshot sequence number) this split belongs to. */
    public long version() {
        return version;
    }

    public long snapshotId() {
        return snapshotId;
    }

    /** Commit time of the snapshot, epoch milliseconds (the rows' {@code _commit_timestamp}). */
    public long commitMillis() {
        return commitMillis;
    }

    public Kind kind() {
        return kind;
    }

    /** Position of the split among the splits of its version and kind. */
    public int index() {
        return index;
    }

    /**
     * Data file location ({@code ADDED}), scan-task JSON ({@code INITIAL}) or null ({@code
     * REMOVED}).
     */
    @Nullable
    public String file() {
        return file;
    }

    /** Rows of this split already emitted. */
    public long offset() {
        return offset;
    }

    /** Whether every row was emitted (awaiting the enumerator's confirmation). */
    public boolean finished() {
        return finished;
    }

    /** This split with {@code offset} rows emitted. */
    public ChangeFeedSplit withOffset(long offset) {
        return new ChangeFeedSplit(
                version, snapshotId, commitMillis, kind, index, file, offset, finished);
    }

    /** This split, marked finished. */
    public ChangeFeedSplit asFinished() {
        return new ChangeFeedSplit(
                version, snapshotId, commitMillis, kind, index, file, offset, true);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ChangeFeedSplit)) {
            return false;
        }
        ChangeFeedSplit that = (ChangeFeedSplit) o;
        return version == that.version
                && snapshotId == that.snapshotId
                && commitMillis == that.commitMillis
                && kind == that.kind
                && index == that.index
                && Objects.equals(file, that.file)
                && offset == that.offset
                && finished == that.finished;
    }

    @Override
    public int hashCode() {
        return Objects.hash(version, snapshotId, kind, index, offset, finished);
    }

    @Override
    public String toString() {
        return "ChangeFeedSplit{"
                + splitId()
                + ", snapshot="
                + snapshotId
                + ", offset="
                + offset
                + (finished ? ", finished" : "")
                + '}';
    }
}

package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.ChangeFeedOptions.StartMode;
import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Where a streaming change feed starts when its job starts <em>without</em> state (semantics.md F6,
 * F8, G1) — the one starting strategy of {@link ChangeFeedSource}, in the manner of Kafka's {@code
 * OffsetsInitializer} and Iceberg's {@code StreamingStartingStrategy}. A restore from a checkpoint
 * or savepoint never consults it: the enumerator state holds the position.
 *
 * <table>
 *   <caption>Strategies</caption>
 *   <tr><th>factory</th><th>option</th><th>first rows</th></tr>
 *   <tr><td>{@link #currentSnapshot()} (default)</td><td>no starting bound</td><td>the current
 *       snapshot as {@code insert} rows tagged with its version, then the later changes</td></tr>
 *   <tr><td>{@link #latest()}</td><td>{@code starting-version = latest}</td><td>only versions
 *       committed after the stream is built</td></tr>
 *   <tr><td>{@link #changesFrom(long)}</td><td>{@code starting-version = N}</td><td>the changes
 *       from version N (N may be latest + 1, F8)</td></tr>
 *   <tr><td>{@link #timestamp(String)}</td><td>{@code starting-timestamp}</td><td>the changes from
 *       the first commit at or after the time (F3 format)</td></tr>
 *   <tr><td>{@link #snapshotThenChanges(long)}</td><td>— (G1)</td><td>the table as of version N −
 *       1 as {@code insert} rows tagged with that snapshot's version, then the changes from N</td>
 *   </tr>
 *   <tr><td>{@link #withMode(StartMode)}</td><td>{@code start-mode} (G1)</td><td>the start
 *       above with the table as of N − 1 first ({@code snapshot-then-changes}), or without it
 *       ({@code changes-only})</td></tr>
 *   <tr><td>{@link #resolvedAtJobStart(Resolver)}</td><td>—</td><td>whatever the {@link Resolver}
 *       decides when the job starts without state (the Silver→Gold job)</td></tr>
 * </table>
 *
 * <p><b>Resolution.</b> {@link ChangeFeedSource.Builder#build} checks the strategy against the
 * table as it is then ({@link #resolve}: every error below surfaces at build time) and fixes the
 * two strategies defined relative to that moment — {@code latest} and the current snapshot — to the
 * position they mean then. The source's enumerator resolves the strategy to its planning position
 * ({@link #resolve}) once, when the job starts without state. No other code decides a start.
 *
 * <p><b>Errors</b> ({@link CdfException}): {@code INVALID_CDC_OPTIONS} for a negative version;
 * {@code START_AFTER_LATEST_COMMIT} for a version after latest + 1 or a timestamp after the last
 * commit; {@code VERSION_NOT_AVAILABLE} when the versions needed expired; {@code
 * INVALID_TIMESTAMP}; {@code TABLE_HISTORY_REWRITTEN} (F3, F4, F8).
 */
@PublicEvolving
public final class ChangeFeedStart implements Serializable {

    private static final long serialVersionUID = 1L;

    /**
     * Decides where a stream starts, inside the source's enumerator, when the job starts without
     * state; a job restored from a checkpoint or savepoint never calls it. For jobs whose start
     * depends on what they already wrote (the Silver→Gold job: its Gold tables' {@code
     * _source_version}), so that a start position in the arguments does not stop a restore.
     * Exceptions thrown fail the job's start with that exception.
     */
    @FunctionalInterface
    public interface Resolver extends Serializable {
        /**
         * @param table the table, refreshed
         * @return where to start (checked and resolved as if given to the builder)
         */
        ChangeFeedStart start(Table table);
    }

    private enum Kind {
        CURRENT_SNAPSHOT,
        LATEST,
        CHANGES_FROM,
        TIMESTAMP,
        SNAPSHOT_THEN_CHANGES,
        RESOLVED_AT_JOB_START,
        /** A position fixed by the builder ({@link #fixedAt}). */
        FIXED
    }

    private final Kind kind;
    @Nullable private final Long version;
    @Nullable private final String timestamp;
    @Nullable private final Resolver resolver;
    @Nullable private final PlanningPosition position;

    private ChangeFeedStart(
            Kind kind,
            @Nullable Long version,
            @Nullable String timestamp,
            @Nullable Resolver resolver,
            @Nullable PlanningPosition position) {
        this.kind = kind;
        this.version = version;
        this.timestamp = timestamp;
        this.resolver = resolver;
        this.position = position;
    }

    /**
     * The current snapshot as {@code insert} rows tagged with its version, then the later changes
     * (F6's default).
     */
    public static ChangeFeedStart currentSnapshot() {
        return new ChangeFeedStart(Kind.CURRENT_SNAPSHOT, null, null, null, null);
    }

    /** Only versions committed after the stream is built (F6 {@code starting-version = latest}). */
    public static ChangeFeedStart latest() {
        return new ChangeFeedStart(Kind.LATEST, null, null, null, null);
    }

    /**
     * The changes from {@code version} on (F6 {@code starting-version}); it may be latest + 1 (F8),
     * a version between two commits starts at the next commit (F3).
     */
    public static ChangeFeedStart changesFrom(long version) {
        return new ChangeFeedStart(Kind.CHANGES_FROM, version, null, null, null);
    }

    /**
     * The changes from the first commit at or after {@code timestamp} ({@code yyyy-MM-dd[
     * HH:mm:ss[.SSS]]} with an optional offset, UTC without; F3 {@code starting-timestamp}).
     */
    public static ChangeFeedStart timestamp(String timestamp) {
        return new ChangeFeedStart(
                Kind.TIMESTAMP, null, Objects.requireNonNull(timestamp), null, null);
    }

    /**
     * The table as of version {@code version − 1} (its newest snapshot at or before it) as {@code
     * insert} rows tagged with that snapshot's version, then the changes from {@code version} on
     * (G1 {@code snapshot-then-changes}; {@code version} may be latest + 1).
     */
    public static ChangeFeedStart snapshotThenChanges(long version) {
        return new ChangeFeedStart(Kind.SNAPSHOT_THEN_CHANGES, version, null, null, null);
    }

    /**
     * This start with or without the table's rows first (G1, {@code start-mode}): {@link
     * StartMode#SNAPSHOT_THEN_CHANGES} makes a start at version N (a version, a timestamp's first
     * commit, or latest + 1 for {@code latest}) begin with the table as of N − 1 as {@code insert}
     * rows; {@link StartMode#CHANGES_ONLY} makes every start read only changes (no starting
     * position: the versions after the latest, as {@code latest}).
     */
    public ChangeFeedStart withMode(StartMode mode) {
        boolean snapshot = mode == StartMode.SNAPSHOT_THEN_CHANGES;
        switch (kind) {
            case CURRENT_SNAPSHOT:
            case LATEST:
                return snapshot ? currentSnapshot() : latest();
            case CHANGES_FROM:
            case TIMESTAMP:
            case SNAPSHOT_THEN_CHANGES:
                return new ChangeFeedStart(
                        snapshot
                                ? Kind.SNAPSHOT_THEN_CHANGES
                                : timestamp != null ? Kind.TIMESTAMP : Kind.CHANGES_FROM,
                        version,
                        timestamp,
                        null,
                        null);
            case RESOLVED_AT_JOB_START:
                Resolver decide = resolver;
                return resolvedAtJobStart(table -> decide.start(table).withMode(mode));
            default:
                return this; // a position fixed by the builder stays fixed
        }
    }

    /** Whatever {@code resolver} returns when the job starts without state. */
    public static ChangeFeedStart resolvedAtJobStart(Resolver resolver) {
        return new ChangeFeedStart(
                Kind.RESOLVED_AT_JOB_START, null, null, Objects.requireNonNull(resolver), null);
    }

    /** The first version whose changes are read; empty unless given as a version. */
    public OptionalLong version() {
        return version == null ? OptionalLong.empty() : OptionalLong.of(version);
    }

    /** Whether the table's rows at a version come first, as inserts. */
    public boolean snapshotFirst() {
        return kind == Kind.CURRENT_SNAPSHOT || kind == Kind.SNAPSHOT_THEN_CHANGES;
    }

    /**
     * Checks the values that need no table: a version must be {@code >= 0}.
     *
     * @param table the table's name, for the message
     * @throws CdfException {@code INVALID_CDC_OPTIONS} naming the option, the value and what is
     *     allowed
     */
    void validate(String table) {
        if (version != null && version < 0) {
            throw StreamingAccess.error(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                    String.format(
                            "'%s' = %d for the change feed of table %s is negative. Versions are integers >= 0.",
                            ChangeFeedOptions.STARTING_VERSION.key(), version, table));
        }
    }

    /**
     * The strategy the enumerator resolves, as the builder hands it over: {@code latest} and the
     * current snapshot fixed to the position they mean at build time, every other strategy as it
     * is.
     *
     * @param position the position {@link #resolve} gives now (null for {@link
     *     #resolvedAtJobStart})
     */
    ChangeFeedStart asOfBuild(@Nullable PlanningPosition position) {
        return kind == Kind.LATEST || kind == Kind.CURRENT_SNAPSHOT ? fixedAt(position) : this;
    }

    /** Whether the position depends on the moment the job starts (nothing to check at build). */
    boolean resolvesAtJobStart() {
        return kind == Kind.RESOLVED_AT_JOB_START;
    }

    private static ChangeFeedStart fixedAt(PlanningPosition position) {
        return new ChangeFeedStart(Kind.FIXED, null, null, null, Objects.requireNonNull(position));
    }

    /**
     * The planning position of this start on {@code table} (refreshed): the one place a start is
     * decided.
     *
     * @throws CdfException as listed on the class
     */
    @Internal
    public PlanningPosition resolve(Table table) {
        switch (kind) {
            case FIXED:
                return position;
            case RESOLVED_AT_JOB_START:
                ChangeFeedStart decided = resolver.start(table);
                decided.validate(table.name());
                return decided.resolve(table);
            case LATEST:
                return PlanningPosition.at(StreamingAccess.history(table).latestVersion() + 1);
            case TIMESTAMP:
                return PlanningPosition.at(StreamingAccess.resolveStart(table, null, timestamp));
            case CHANGES_FROM:
                return PlanningPosition.at(StreamingAccess.resolveStart(table, version, null));
            case CURRENT_SNAPSHOT:
                Snapshot current = table.currentSnapshot();
                return current == null
                        ? PlanningPosition.at(StreamingAccess.history(table).latestVersion() + 1)
                        : PlanningPosition.initialSnapshot(
                                current.snapshotId(), current.sequenceNumber());
            case SNAPSHOT_THEN_CHANGES:
                long first = StreamingAccess.resolveStart(table, version, timestamp);
                // the newest ancestor before the first version read: the parent of an available
                // version is retained (F8), and there is none when the table had no snapshot
                // before it
                for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
                    if (s.sequenceNumber() < first) {
                        return PlanningPosition.initialSnapshot(s.snapshotId(), s.sequenceNumber());
                    }
                }
                return PlanningPosition.at(first);
            default:
                throw new IllegalStateException("Unknown start " + kind);
        }
    }

    /** How the start reads in an error message (the option and its value). */
    String describe() {
        switch (kind) {
            case LATEST:
                return ChangeFeedOptions.STARTING_VERSION.key() + " latest";
            case CHANGES_FROM:
                return ChangeFeedOptions.STARTING_VERSION.key() + " " + version;
            case TIMESTAMP:
                return ChangeFeedOptions.STARTING_TIMESTAMP.key() + " '" + timestamp + "'";
            case SNAPSHOT_THEN_CHANGES:
                return timestamp == null
                        ? "snapshot-then-changes from " + version
                        : "snapshot-then-changes from '" + timestamp + "'";
            case RESOLVED_AT_JOB_START:
                return "a start resolver";
            default:
                return toString();
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChangeFeedStart other
                && kind == other.kind
                && Objects.equals(version, other.version)
                && Objects.equals(timestamp, other.timestamp)
                && Objects.equals(resolver, other.resolver)
                && Objects.equals(position, other.position);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, version, timestamp, resolver, position);
    }

    @Override
    public String toString() {
        switch (kind) {
            case CURRENT_SNAPSHOT:
                return "current snapshot, then its changes";
            case LATEST:
                return "versions after the latest";
            case CHANGES_FROM:
                return "changes from version " + version;
            case TIMESTAMP:
                return "changes from the first commit at or after '" + timestamp + "'";
            case SNAPSHOT_THEN_CHANGES:
                return timestamp == null
                        ? "snapshot before version " + version + ", then changes from " + version
                        : "snapshot before the first commit at or after '"
                                + timestamp
                                + "', then changes from it";
            case RESOLVED_AT_JOB_START:
                return "resolved at job start by " + resolver;
            default:
                return "fixed at " + position;
        }
    }
}

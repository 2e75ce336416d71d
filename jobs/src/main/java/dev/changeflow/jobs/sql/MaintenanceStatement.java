package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.catalog.TableIdentifier;

import java.time.Duration;
import java.util.Optional;

/**
 * The table-maintenance statements of the vendor's dialect that {@code bin/changeflow sql} runs
 * itself, outside Flink SQL (docs/semantics.md M1–M3, S6):
 *
 * <pre>
 * OPTIMIZE name                           -- compaction, deletes applied (M1)
 * REORG TABLE name APPLY '(' PURGE ')'    -- deleted rows physically gone (M3, S6)
 * VACUUM name [RETAIN number HOUR[S]]     -- unreferenced files older than that (default 168 hours) deleted (M2)
 * </pre>
 *
 * Keywords are case-insensitive; a trailing {@code ;} is allowed. {@code OPTIMIZE ... WHERE} and
 * {@code ZORDER BY}, {@code REORG ... APPLY (UPGRADE ...)} and {@code VACUUM ... DRY RUN} fail with
 * {@code UNSUPPORTED_STATEMENT}; a {@code RETAIN} outside {@link #MIN_RETAIN} to {@link
 * #MAX_RETAIN} hours with {@code INVALID_RETENTION} (the platform refuses less than 168 hours
 * unless a safety switch is off; changeflow has no switch and refuses less than 1 hour, the age
 * under which a file may be a running job's uncommitted output); a word one edit away from
 * OPTIMIZE, REORG or VACUUM ({@code OPTIMISE t}) with {@code SYNTAX_ERROR} and a {@code did you
 * mean} hint; anything else malformed with {@code SYNTAX_ERROR}, positioned in the statement
 * ({@code statement 2:1:10} for the second {@code -e}).
 *
 * @param kind which action
 * @param table the table, as written (its namespace is the statement's, resolved by the caller)
 * @param retain for VACUUM: files modified less than this long ago are kept
 */
@Internal
public record MaintenanceStatement(Kind kind, TableIdentifier table, Duration retain) {
    /** The vendor's default VACUUM retention: 7 days. */
    public static final Duration DEFAULT_RETAIN = Duration.ofHours(168);

    /**
     * The least VACUUM retention: 1 hour, the least orphan age of the in-job orphan task ({@link
     * dev.changeflow.sinks.iceberg.TableMaintenanceOptions#MIN_ORPHANS_OLDER_THAN}): a younger file
     * may be a running job's, written but not committed yet (M2).
     */
    public static final Duration MIN_RETAIN =
            dev.changeflow.sinks.iceberg.TableMaintenanceOptions.MIN_ORPHANS_OLDER_THAN;

    /** The greatest VACUUM retention: 876,000 hours (100 years). */
    public static final Duration MAX_RETAIN = Duration.ofHours(876_000);

    /** The statement kinds. */
    public enum Kind {
        /** {@code OPTIMIZE t}. */
        OPTIMIZE,
        /** {@code REORG TABLE t APPLY (PURGE)}. */
        PURGE,
        /** {@code VACUUM t [RETAIN n HOURS]}. */
        VACUUM
    }

    /**
     * Parses {@code text} when it starts with {@code OPTIMIZE}, {@code REORG} or {@code VACUUM}
     * ({@link SqlParser#parseMaintenance}).
     *
     * @param label how error positions name the statement, e.g. {@code statement 1}
     * @return the statement, or empty when {@code text} starts with another word (a Flink SQL
     *     statement)
     * @throws SqlException {@code SYNTAX_ERROR} or {@code UNSUPPORTED_STATEMENT} for a malformed or
     *     unsupported maintenance statement
     */
    public static Optional<MaintenanceStatement> parse(String text, String label) {
        return SqlParser.parseMaintenance(text, label);
    }
}

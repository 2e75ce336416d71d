package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.ForwardingTableOperations;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A view of a table whose first {@code replace} commit (a compaction's) is preceded by another
 * commit: right before the compaction's metadata is written, {@code race} runs (on its own table
 * instance), so the compaction's commit finds the table moved on and Iceberg retries it on top of
 * the racing commit (validating it against what the racing commit did). This makes the interleaving
 * "the compaction planned on S, an ingest commit landed, then the compaction commits"
 * deterministic, as {@code FailingCommitCatalog} (e2e) does for commit failures.
 */
final class RacingCommitTable {
    private final Table table;
    private final AtomicBoolean raced = new AtomicBoolean();
    private final AtomicInteger replaceAttempts = new AtomicInteger();

    private RacingCommitTable(Table loaded, Runnable race) {
        this.table =
                new BaseTable(
                        racing(
                                ((HasTableOperations) loaded).operations(),
                                () -> {
                                    if (raced.compareAndSet(false, true)) {
                                        race.run();
                                    }
                                },
                                replaceAttempts),
                        loaded.name());
    }

    /**
     * {@code delegate} with {@code beforeReplace} run before every commit of a new {@code replace}
     * snapshot (counted in {@code replaceAttempts}); {@code beforeReplace} decides itself whether
     * to race (once).
     */
    static TableOperations racing(
            TableOperations delegate, Runnable beforeReplace, AtomicInteger replaceAttempts) {
        return new ForwardingTableOperations(delegate) {
            @Override
            public void commit(TableMetadata base, TableMetadata metadata) {
                boolean replace =
                        addsSnapshot(base, metadata)
                                && DataOperations.REPLACE.equals(
                                        metadata.currentSnapshot().operation());
                if (replace) {
                    replaceAttempts.incrementAndGet();
                    beforeReplace.run();
                }
                delegate.commit(base, metadata);
            }
        };
    }

    /**
     * {@code loaded} (a table instance of its own) with {@code race} run before its first replace.
     */
    static RacingCommitTable of(Table loaded, Runnable race) {
        return new RacingCommitTable(loaded, race);
    }

    Table table() {
        return table;
    }

    /** Whether the racing commit ran. */
    boolean raced() {
        return raced.get();
    }

    /** How often a replace commit was attempted (the first one, then Iceberg's retries). */
    int replaceAttempts() {
        return replaceAttempts.get();
    }
}

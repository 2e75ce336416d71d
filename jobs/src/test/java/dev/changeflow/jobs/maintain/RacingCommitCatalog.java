package dev.changeflow.jobs.maintain;

import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Hadoop catalog (used through {@code catalog-impl}, so that a Flink job's tasks load it) whose
 * tables run an {@link #arm armed} racing commit once, right before the first commit of a {@code
 * replace} snapshot — the in-job compaction's — as {@link RacingCommitTable} does for a table
 * instance the test holds. State is static: the MiniCluster's tasks run in the test's JVM.
 */
public class RacingCommitCatalog extends HadoopCatalog {
    private static final AtomicReference<Runnable> RACE = new AtomicReference<>();
    private static final AtomicInteger RACED = new AtomicInteger();
    private static final AtomicInteger REPLACE_ATTEMPTS = new AtomicInteger();

    public RacingCommitCatalog() {}

    /** Runs {@code race} (on a table instance of its own) before the next replace commit. */
    static void arm(Runnable race) {
        RACED.set(0);
        REPLACE_ATTEMPTS.set(0);
        RACE.set(race);
    }

    /** How often the armed race ran (0 or 1). */
    static int raced() {
        return RACED.get();
    }

    /** Replace commits attempted since {@link #arm}, Iceberg's retries included. */
    static int replaceAttempts() {
        return REPLACE_ATTEMPTS.get();
    }

    @Override
    protected TableOperations newTableOps(TableIdentifier identifier) {
        return RacingCommitTable.racing(
                super.newTableOps(identifier),
                () -> {
                    Runnable race = RACE.getAndSet(null);
                    if (race != null) {
                        race.run();
                        RACED.incrementAndGet();
                    }
                },
                REPLACE_ATTEMPTS);
    }
}

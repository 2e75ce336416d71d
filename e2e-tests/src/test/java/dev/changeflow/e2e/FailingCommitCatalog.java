package dev.changeflow.e2e;

import dev.changeflow.sinks.iceberg.ForwardingTableOperations;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.hadoop.HadoopCatalog;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Hadoop catalog (used through {@code catalog-impl}) whose table commits fail on demand — only
 * data commits (snapshots) of the named table, never table creation — in the two failure windows of
 * an Iceberg commit (stack.md):
 *
 * <ul>
 *   <li>{@link #failNextCommits(String, int)}, or {@link #armCommitFailure} with {@code answerLost
 *       = false}: the commit throws before anything is written ("after checkpoint n completed,
 *       before its Iceberg commit");
 *   <li>{@link #armCommitFailure} with {@code answerLost = true}: the commit is written, then
 *       {@link CommitStateUnknownException} is thrown ("the commit of n succeeded but its answer
 *       was lost"). Iceberg keeps the files of a commit in an unknown state; never another runtime
 *       exception after a successful commit, which would make Iceberg delete the manifests of a
 *       snapshot that did commit.
 * </ul>
 */
public class FailingCommitCatalog extends HadoopCatalog {
    private static final AtomicInteger FAILURES_LEFT = new AtomicInteger();
    private static final AtomicInteger FAILED = new AtomicInteger();
    private static volatile String tableName = "";

    public FailingCommitCatalog() {}

    /** Makes the next {@code n} snapshot commits of table {@code name} throw. */
    public static void failNextCommits(String name, int n) {
        tableName = name;
        FAILED.set(0);
        ARMED_FROM_CHECKPOINT.set(Long.MAX_VALUE);
        FAILURES_LEFT.set(n);
    }

    public static int failed() {
        return FAILED.get();
    }

    private static final AtomicLong ARMED_FROM_CHECKPOINT = new AtomicLong(Long.MAX_VALUE);
    private static final AtomicLong FIRED_AT_CHECKPOINT = new AtomicLong(-1);
    private static volatile boolean answerLost;

    /**
     * Arms one failure of the first snapshot commit of table {@code name} whose snapshot summary's
     * {@code flink.max-committed-checkpoint-id} is at least {@code fromCheckpoint} (the Flink
     * checkpoint being committed); {@link #firedAtCheckpoint()} then tells that checkpoint id.
     *
     * @param answerLost false: fail before writing; true: write, then throw {@link
     *     CommitStateUnknownException}
     */
    public static void armCommitFailure(String name, long fromCheckpoint, boolean answerLost) {
        tableName = name;
        FailingCommitCatalog.answerLost = answerLost;
        FIRED_AT_CHECKPOINT.set(-1);
        FAILURES_LEFT.set(0);
        ARMED_FROM_CHECKPOINT.set(fromCheckpoint);
    }

    /** The checkpoint id whose commit the armed failure hit, or -1 while it has not fired. */
    public static long firedAtCheckpoint() {
        return FIRED_AT_CHECKPOINT.get();
    }

    /**
     * Whether this commit is the one an {@link #armCommitFailure armed} failure hits (consumes it).
     */
    private static boolean armedFailureHits(TableMetadata metadata) {
        String id = metadata.currentSnapshot().summary().get("flink.max-committed-checkpoint-id");
        long from = ARMED_FROM_CHECKPOINT.get();
        if (id == null
                || Long.parseLong(id) < from
                || !ARMED_FROM_CHECKPOINT.compareAndSet(from, Long.MAX_VALUE)) {
            return false;
        }
        FAILED.incrementAndGet();
        FIRED_AT_CHECKPOINT.set(Long.parseLong(id));
        return true;
    }

    @Override
    protected TableOperations newTableOps(TableIdentifier identifier) {
        TableOperations delegate = super.newTableOps(identifier);
        // the table to fail is checked at commit time: a committer keeps its loaded table for a
        // while
        return new ForwardingTableOperations(delegate) {
            @Override
            public void commit(TableMetadata base, TableMetadata metadata) {
                boolean newSnapshot =
                        identifier.name().equals(tableName) && addsSnapshot(base, metadata);
                if (newSnapshot && FAILURES_LEFT.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    FAILED.incrementAndGet();
                    throw new IllegalStateException(
                            "injected commit failure of "
                                    + identifier
                                    + " (test; nothing was committed)");
                }
                boolean armed = newSnapshot && armedFailureHits(metadata);
                if (armed && !answerLost) {
                    throw new IllegalStateException(
                            "injected commit failure of "
                                    + identifier
                                    + " before checkpoint "
                                    + FIRED_AT_CHECKPOINT.get()
                                    + " was committed (test; nothing was committed)");
                }
                delegate.commit(base, metadata);
                if (armed) {
                    throw new CommitStateUnknownException(
                            new IllegalStateException(
                                    "injected: the commit of checkpoint "
                                            + FIRED_AT_CHECKPOINT.get()
                                            + " to "
                                            + identifier
                                            + " succeeded, its answer was lost (test)"));
                }
            }
        };
    }
}

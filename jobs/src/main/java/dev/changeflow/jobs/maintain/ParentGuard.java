package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.ForwardingTableOperations;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * Table operations that let a commit through only while {@code main}'s current snapshot is the
 * expected parent: a compare-and-set on {@code main} for a snapshot update whose summary depends on
 * that parent (the purge's closing commits, {@link TablePurge#closingCommits}). Iceberg retries a
 * commit that lost a race on a refreshed table with the summary it was given; here that retry fails
 * with {@link MainMovedException} instead (a {@link ValidationException}, so Iceberg deletes the
 * manifest list it wrote). Everything else is delegated.
 */
final class ParentGuard extends ForwardingTableOperations {
    private final long expectedParent;
    private volatile Snapshot committed;

    ParentGuard(TableOperations delegate, long expectedParent) {
        super(delegate);
        this.expectedParent = expectedParent;
    }

    /** {@code main} moved past the expected parent before the commit. */
    static final class MainMovedException extends ValidationException {
        MainMovedException(String message) {
            super("%s", message);
        }
    }

    /** The snapshot the guarded commit made current. */
    Snapshot committed() {
        if (committed == null) {
            throw new IllegalStateException("no commit went through these operations");
        }
        return committed;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
        Snapshot head = base.currentSnapshot();
        if (head == null || head.snapshotId() != expectedParent) {
            throw new MainMovedException(
                    "main is at snapshot "
                            + (head == null ? "none" : head.snapshotId())
                            + ", not at the expected parent "
                            + expectedParent);
        }
        delegate.commit(base, metadata);
        committed = metadata.currentSnapshot();
    }
}

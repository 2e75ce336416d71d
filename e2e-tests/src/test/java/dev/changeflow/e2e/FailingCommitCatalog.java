package dev.changeflow.e2e;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Hadoop catalog (used through {@code catalog-impl}) whose table commits fail on demand, before
 * anything is written: the failure window "after checkpoint n completed, before its Iceberg commit"
 * (stack.md). Armed with {@link #failNextCommits(String, int)}; only data commits (snapshots) of the
 * named table fail, never table creation.
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
        FAILURES_LEFT.set(n);
    }

    public static int failed() {
        return FAILED.get();
    }

    @Override
    protected TableOperations newTableOps(TableIdentifier identifier) {
        TableOperations delegate = super.newTableOps(identifier);
        if (!identifier.name().equals(tableName)) {
            return delegate;
        }
        return new TableOperations() {
            @Override
            public TableMetadata current() {
                return delegate.current();
            }

            @Override
            public TableMetadata refresh() {
                return delegate.refresh();
            }

            @Override
            public void commit(TableMetadata base, TableMetadata metadata) {
                if (base != null
                        && metadata.currentSnapshot() != null
                        && (base.currentSnapshot() == null || base.currentSnapshot().snapshotId() != metadata.currentSnapshot().snapshotId())
                        && FAILURES_LEFT.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    FAILED.incrementAndGet();
                    throw new IllegalStateException("injected commit failure of " + identifier + " (test; nothing was committed)");
                }
                delegate.commit(base, metadata);
            }

            @Override
            public FileIO io() {
                return delegate.io();
            }

            @Override
            public EncryptionManager encryption() {
                return delegate.encryption();
            }

            @Override
            public String metadataFileLocation(String fileName) {
                return delegate.metadataFileLocation(fileName);
            }

            @Override
            public LocationProvider locationProvider() {
                return delegate.locationProvider();
            }

            @Override
            public TableOperations temp(TableMetadata uncommittedMetadata) {
                return delegate.temp(uncommittedMetadata);
            }

            @Override
            public long newSnapshotId() {
                return delegate.newSnapshotId();
            }

            @Override
            public boolean requireStrictCleanup() {
                return delegate.requireStrictCleanup();
            }
        };
    }
}

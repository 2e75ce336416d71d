package dev.changeflow.sinks.iceberg;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.hadoop.HadoopTableOperations;
import org.apache.iceberg.util.LockManagers;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Hadoop catalog ({@code catalog-impl}) whose table commits fail on plan (stack.md "Test
 * mechanics"): the n-th snapshot commit either throws before it reaches the catalog (the commit did
 * not happen) or commits and then throws {@link CommitStateUnknownException} (the commit happened,
 * its answer is lost). The plan is JVM-global, as the MiniCluster runs in this JVM.
 */
public class FailingHadoopCatalog extends HadoopCatalog {

    enum Failure {
        BEFORE_COMMIT,
        AFTER_COMMIT
    }

    static final Map<Integer, Failure> PLAN = new ConcurrentHashMap<>();
    static final AtomicInteger SNAPSHOT_COMMITS = new AtomicInteger();
    static final AtomicInteger INJECTED = new AtomicInteger();

    static void reset(Map<Integer, Failure> plan) {
        PLAN.clear();
        PLAN.putAll(plan);
        SNAPSHOT_COMMITS.set(0);
        INJECTED.set(0);
    }

    public FailingHadoopCatalog() {}

    @Override
    protected TableOperations newTableOps(TableIdentifier identifier) {
        return new FailingOps(
                new Path(defaultWarehouseLocation(identifier)),
                new HadoopFileIO(getConf()),
                getConf());
    }

    private static final class FailingOps extends HadoopTableOperations {
        FailingOps(Path location, HadoopFileIO io, Configuration conf) {
            super(location, io, conf, LockManagers.defaultLockManager());
        }

        @Override
        public void commit(TableMetadata base, TableMetadata metadata) {
            boolean newSnapshot =
                    metadata.currentSnapshot() != null
                            && (base == null
                                    || base.currentSnapshot() == null
                                    || base.currentSnapshot().snapshotId()
                                            != metadata.currentSnapshot().snapshotId());
            Failure failure = newSnapshot ? PLAN.remove(SNAPSHOT_COMMITS.incrementAndGet()) : null;
            if (failure == Failure.BEFORE_COMMIT) {
                INJECTED.incrementAndGet();
                throw new IllegalStateException("injected failure before the commit");
            }
            super.commit(base, metadata);
            if (failure == Failure.AFTER_COMMIT) {
                INJECTED.incrementAndGet();
                throw new CommitStateUnknownException(
                        new RuntimeException("injected: commit answer lost"));
            }
        }
    }
}

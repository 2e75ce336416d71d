package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.LockManager;
import org.apache.iceberg.util.PropertyUtil;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The lock manager of changeflow's Hadoop catalogs (Iceberg property {@code lock-impl}, set by
 * {@link CatalogSettings#loader()} unless the catalog's properties name one): one lock table per
 * JVM, like Iceberg's default in-memory lock manager, except that closing a catalog releases no
 * lock.
 *
 * <p><b>Why.</b> A Hadoop table commits by checking that {@code v<n+1>.metadata.json} does not
 * exist and renaming its new metadata file to that name, both under this lock; a local file
 * system's rename replaces an existing file. Two commits of one table in one JVM that both passed
 * the check — the Flink committer's and in-job maintenance's, say — would leave only the second:
 * the first commit lost without an error. Iceberg's default ({@code
 * LockManagers.defaultLockManager()}, one in-memory manager for the whole JVM) is closed by every
 * {@code HadoopCatalog.close()}, and its {@code close()} clears every lock held in the JVM — a task
 * restart that closes its table loader drops the lock another task's commit holds (seen in CI:
 * "Cannot find lock for entity .../v11.metadata.json" when that commit released it).
 *
 * <p>"Per JVM" is per class loader: a Flink session cluster loads it once per job, as it loads
 * Iceberg's default. Across JVMs (TaskManagers on object storage) a Hadoop catalog has no safe
 * commit at all; such deployments use a REST, JDBC or Hive catalog.
 *
 * <p>Entities are the metadata file paths Iceberg passes, owners the temporary metadata files; a
 * lock is held for the duration of one rename, so there are no heartbeats and no expiry. {@link
 * #acquire} waits up to {@code lock.acquire.timeout-ms} (Iceberg's default 3 minutes) and returns
 * false after it or when the waiting thread is interrupted (the interrupt is kept); Iceberg then
 * fails that commit attempt with a {@code CommitFailedException} and retries it.
 */
@Internal
public final class JvmLockManager implements LockManager {
    /** Entity → owner of every lock held in this JVM; guarded by itself. */
    private static final Map<String, String> OWNERS = new HashMap<>();

    private long acquireTimeoutMs = CatalogProperties.LOCK_ACQUIRE_TIMEOUT_MS_DEFAULT;

    /** For Iceberg's {@code LockManagers}, which instantiates {@code lock-impl} reflectively. */
    public JvmLockManager() {}

    @Override
    public void initialize(Map<String, String> properties) {
        acquireTimeoutMs =
                PropertyUtil.propertyAsLong(
                        properties,
                        CatalogProperties.LOCK_ACQUIRE_TIMEOUT_MS,
                        CatalogProperties.LOCK_ACQUIRE_TIMEOUT_MS_DEFAULT);
    }

    /**
     * Takes the lock of {@code entityId} for {@code ownerId}, waiting while another owner holds it.
     *
     * @return true when taken; false after {@code lock.acquire.timeout-ms} or an interrupt
     */
    @Override
    public boolean acquire(String entityId, String ownerId) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(acquireTimeoutMs);
        synchronized (OWNERS) {
            while (OWNERS.containsKey(entityId)) {
                long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMs <= 0) {
                    return false;
                }
                try {
                    OWNERS.wait(leftMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            OWNERS.put(entityId, ownerId);
            return true;
        }
    }

    /**
     * Releases the lock of {@code entityId} if {@code ownerId} holds it.
     *
     * @return false when it does not (nothing changes)
     */
    @Override
    public boolean release(String entityId, String ownerId) {
        synchronized (OWNERS) {
            if (!ownerId.equals(OWNERS.get(entityId))) {
                return false;
            }
            OWNERS.remove(entityId);
            OWNERS.notifyAll();
            return true;
        }
    }

    /** Releases nothing: the locks held belong to the commits in flight, not to this catalog. */
    @Override
    public void close() {}
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link JvmLockManager}: one lock table per JVM that closing a catalog does not clear, and the
 * Hadoop catalogs of {@link CatalogSettings} use it.
 */
class JvmLockManagerTest {
    @TempDir Path warehouse;

    private static JvmLockManager manager(long timeoutMs) {
        JvmLockManager m = new JvmLockManager();
        m.initialize(Map.of(CatalogProperties.LOCK_ACQUIRE_TIMEOUT_MS, Long.toString(timeoutMs)));
        return m;
    }

    @Test
    void closingAnotherManagerReleasesNoLock() throws Exception {
        JvmLockManager a = manager(50);
        JvmLockManager b = manager(50);
        JvmLockManager c = manager(50);
        assertThat(a.acquire("v2.metadata.json", "owner-a")).isTrue();
        b.close();
        // Iceberg's default in-memory manager would now hand the lock to c as well
        assertThat(c.acquire("v2.metadata.json", "owner-c")).isFalse();
        assertThat(c.release("v2.metadata.json", "owner-c")).isFalse();
        assertThat(a.release("v2.metadata.json", "owner-a")).isTrue();
        assertThat(c.acquire("v2.metadata.json", "owner-c")).isTrue();
        assertThat(c.release("v2.metadata.json", "owner-c")).isTrue();
        assertThat(a.release("v2.metadata.json", "owner-a")).isFalse();
    }

    @Test
    void aWaiterGetsTheLockWhenItIsReleasedAndAnInterruptEndsTheWait() throws Exception {
        JvmLockManager a = manager(10_000);
        assertThat(a.acquire("e", "a")).isTrue();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            AtomicReference<Thread> waiting = new AtomicReference<>();
            Future<Boolean> waiter =
                    pool.submit(
                            () -> {
                                waiting.set(Thread.currentThread());
                                return manager(60_000).acquire("e", "b");
                            });
            // the waiter parks in acquire (on the lock table's monitor) while "a" holds the lock
            while (waiting.get() == null
                    || waiting.get().getState() != Thread.State.TIMED_WAITING) {
                Thread.onSpinWait();
            }
            assertThat(waiter.isDone()).isFalse();
            assertThat(a.release("e", "a")).isTrue();
            assertThat(waiter.get()).isTrue();
            assertThat(a.release("e", "b")).isTrue();

            assertThat(a.acquire("e", "a")).isTrue();
            Future<Boolean> interrupted =
                    pool.submit(
                            () -> {
                                Thread.currentThread().interrupt();
                                boolean taken = manager(60_000).acquire("e", "c");
                                return !taken && Thread.currentThread().isInterrupted();
                            });
            assertThat(interrupted.get()).isTrue();
            assertThat(a.release("e", "a")).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void hadoopCatalogsOfTheSettingsUseIt() throws Exception {
        Catalog cat = CatalogSettings.localHadoop(warehouse).open();
        try {
            // the catalog's lock manager (Iceberg keeps it in a private field)
            Field lockManager = HadoopCatalog.class.getDeclaredField("lockManager");
            lockManager.setAccessible(true);
            assertThat(lockManager.get(cat)).isInstanceOf(JvmLockManager.class);
        } finally {
            ((Closeable) cat).close();
        }
        assertThat(CatalogSettings.withJvmLock(Map.of("type", "rest", "uri", "http://x")))
                .doesNotContainKey(CatalogProperties.LOCK_IMPL);
        assertThat(
                        CatalogSettings.withJvmLock(
                                Map.of("catalog-impl", HadoopCatalog.class.getName())))
                .containsEntry(CatalogProperties.LOCK_IMPL, JvmLockManager.class.getName());
        assertThat(CatalogSettings.withJvmLock(Map.of("type", "hadoop", "lock-impl", "x.Mine")))
                .containsEntry(CatalogProperties.LOCK_IMPL, "x.Mine");
    }

    /**
     * A commit in flight holds the lock of the table's next metadata version; another catalog of
     * the JVM is closed (a task restart closing its table loader): a second commit of the table
     * still waits for that lock and fails once {@code lock.acquire.timeout-ms} is over, instead of
     * renaming over the first one's metadata file; once the lock is released it commits.
     */
    @Test
    void aCommitWaitsForALockThatAnotherCatalogsCloseDidNotRelease() throws Exception {
        CatalogSettings settings =
                CatalogSettings.of(
                        "changeflow",
                        Map.of(
                                "type",
                                "hadoop",
                                "warehouse",
                                warehouse.toAbsolutePath().toString(),
                                CatalogProperties.LOCK_ACQUIRE_TIMEOUT_MS,
                                "100"));
        TableIdentifier id = TableIdentifier.parse("db.t");
        Catalog cat = settings.open();
        try {
            StreamingTables.ensureTable(
                    cat,
                    id,
                    RowType.of(new IntType(false)),
                    List.of("f0"),
                    StreamingTableOptions.defaults());
            Table t = cat.loadTable(id);
            cat.loadTable(id).updateProperties().set("commit.retry.num-retries", "1").commit();
            // the lock entity HadoopTableOperations takes for its next version
            String current = ((HasTableOperations) t).operations().refresh().metadataFileLocation();
            Matcher m = Pattern.compile("v(\\d+)\\.metadata\\.json$").matcher(current);
            assertThat(m.find()).isTrue();
            String next =
                    new org.apache.hadoop.fs.Path(
                                    new org.apache.hadoop.fs.Path(current).getParent(),
                                    "v" + (Integer.parseInt(m.group(1)) + 1) + ".metadata.json")
                            .toString();
            JvmLockManager inFlight = manager(100);
            assertThat(inFlight.acquire(next, "a commit in flight")).isTrue();
            ((Closeable) settings.open()).close();
            assertThatThrownBy(() -> cat.loadTable(id).newAppend().set("n", "1").commit())
                    .isInstanceOf(CommitFailedException.class)
                    .hasMessageContaining("Failed to acquire lock");
            assertThat(inFlight.release(next, "a commit in flight")).isTrue();
            cat.loadTable(id).newAppend().set("n", "2").commit();
            assertThat(cat.loadTable(id).currentSnapshot().summary()).containsEntry("n", "2");
        } finally {
            ((Closeable) cat).close();
        }
    }
}

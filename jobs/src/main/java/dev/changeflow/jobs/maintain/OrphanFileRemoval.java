package dev.changeflow.jobs.maintain;

import dev.changeflow.sinks.iceberg.RewriteCommitGuard;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.DeleteOrphanFiles;
import org.apache.iceberg.flink.maintenance.api.MaintenanceTaskBuilder;
import org.apache.iceberg.flink.maintenance.api.TableMaintenance;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.apache.iceberg.flink.maintenance.operator.TableChange;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One run of Iceberg's Flink {@link DeleteOrphanFiles} maintenance task (M2) as a bounded job: a
 * single {@link TableChange} triggers the task once through {@link TableMaintenance}; files that no
 * snapshot of the table references and that are older than {@code minAge} are deleted.
 *
 * <p>Only the table's data folder ({@code write.data.path}, default {@code <location>/data}) is
 * listed: the table location also holds changeflow's consumer registry ({@code
 * changeflow/consumers/*.json}, F7), which no snapshot references and which must never be deleted.
 * Orphaned metadata files are left alone.
 *
 * <p>The lock is an in-process one (one maintainer per table and JVM); two maintainers in different
 * processes must not run on one table at once.
 */
@PublicEvolving
public final class OrphanFileRemoval {
    /** Files younger than this are never removed (M2: longer than any commit takes). */
    public static final Duration DEFAULT_MIN_AGE = Duration.ofDays(3);

    private OrphanFileRemoval() {}

    /**
     * Removes the orphan data files of {@code table}.
     *
     * @param env the environment of the job (bounded; it is executed here)
     * @param loader loads the table inside the job
     * @param minAge files modified more recently are kept
     * @return the files under the data folder before and after
     * @throws Exception when the job fails
     */
    public static Result run(
            StreamExecutionEnvironment env, TableLoader loader, Table table, Duration minAge)
            throws Exception {
        String dataLocation = dataLocation(table);
        Set<String> before = list(table, dataLocation);
        if (before.isEmpty() && table.io() instanceof SupportsPrefixOperations) {
            // no data folder yet (a table without data): no file to remove, and Iceberg's task
            // fails listing a folder that does not exist
            return new Result(table.name(), dataLocation, 0, 0, new TreeSet<>());
        }
        runOnce(
                env,
                loader,
                table,
                task(table, minAge).scheduleOnCommitCount(1),
                "changeflow maintain: orphan files of " + table.name());
        Set<String> after = list(table, dataLocation);
        Set<String> removed = new TreeSet<>(before);
        removed.removeAll(after);
        return new Result(table.name(), dataLocation, before.size(), after.size(), removed);
    }

    /**
     * Iceberg's {@link DeleteOrphanFiles} task for {@code table} as changeflow runs it, here and in
     * a job ({@link JobMaintenance}): only the data folder is listed (never the consumer registry
     * under the table location, F7), and files younger than {@code minAge} stay. The caller adds
     * the trigger.
     */
    public static DeleteOrphanFiles.Builder task(Table table, Duration minAge) {
        return DeleteOrphanFiles.builder().location(dataLocation(table)).minAge(minAge);
    }

    /**
     * Runs one Iceberg Flink maintenance {@code task} once on {@code table}, as a bounded job: a
     * single {@link TableChange} triggers it through {@link TableMaintenance} with the in-process
     * lock, released when the job ends. The task's commits go through {@link RewriteCommitGuard}.
     *
     * @throws Exception when the job fails
     */
    static void runOnce(
            StreamExecutionEnvironment env,
            TableLoader loader,
            Table table,
            MaintenanceTaskBuilder<?> task,
            String jobName)
            throws Exception {
        DataStream<TableChange> once =
                env.fromData(
                        TypeInformation.of(TableChange.class),
                        TableChange.builder().commitCount(1).build());
        TableMaintenance.forChangeStream(
                        once,
                        RewriteCommitGuard.guard(loader),
                        new InProcessLockFactory(table.name()))
                .rateLimit(Duration.ofMillis(1))
                .parallelism(1)
                .add(task)
                .append();
        try {
            env.execute(jobName);
        } finally {
            InProcessLockFactory.release(table.name());
        }
    }

    /** The folder new data files go to. */
    static String dataLocation(Table table) {
        String configured = table.properties().get(TableProperties.WRITE_DATA_LOCATION);
        return configured != null ? configured : table.location() + "/data";
    }

    /** The files under {@code location}; none when the folder does not exist. */
    private static Set<String> list(Table table, String location) {
        Set<String> files = new TreeSet<>();
        if (table.io() instanceof SupportsPrefixOperations) {
            try {
                for (FileInfo f : ((SupportsPrefixOperations) table.io()).listPrefix(location)) {
                    files.add(f.location());
                }
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof FileNotFoundException)) {
                    throw e;
                }
            }
        }
        return files;
    }

    /** What the run removed. */
    public static final class Result {
        /** The table's name. */
        public final String table;

        /** The folder listed. */
        public final String location;

        /** Files under {@link #location} before and after (0 when the FileIO cannot list). */
        public final int filesBefore;

        public final int filesAfter;

        /** The files removed. */
        public final Set<String> removed;

        Result(
                String table,
                String location,
                int filesBefore,
                int filesAfter,
                Set<String> removed) {
            this.table = table;
            this.location = location;
            this.filesBefore = filesBefore;
            this.filesAfter = filesAfter;
            this.removed = removed;
        }

        /** One line for the command line. */
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "Orphan files of %s under %s: %,d removed (%,d files -> %,d)",
                    table,
                    location,
                    removed.size(),
                    filesBefore,
                    filesAfter);
        }
    }

    /** A lock held within this JVM, per table: enough for the one-off command. */
    static final class InProcessLockFactory implements TriggerLockFactory {
        private static final Set<String> HELD = ConcurrentHashMap.newKeySet();
        private final String table;

        InProcessLockFactory(String table) {
            this.table = table;
        }

        @Override
        public void open() {}

        @Override
        public Lock createLock() {
            return lock("task:" + table);
        }

        @Override
        public Lock createRecoveryLock() {
            return lock("recovery:" + table);
        }

        @Override
        public void close() {}

        /** Releases both locks of a table (after its job ended, whatever the job left). */
        static void release(String table) {
            HELD.remove("task:" + table);
            HELD.remove("recovery:" + table);
        }

        private static Lock lock(String key) {
            return new Lock() {
                @Override
                public boolean tryLock() {
                    return HELD.add(key);
                }

                @Override
                public boolean isHeld() {
                    return HELD.contains(key);
                }

                @Override
                public void unlock() {
                    HELD.remove(key);
                }
            };
        }
    }
}

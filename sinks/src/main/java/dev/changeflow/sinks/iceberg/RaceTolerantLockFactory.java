package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Objects;

/**
 * A table's maintenance lock (docs/semantics.md M1, M2) as every in-job maintenance graph takes it:
 * Iceberg's {@link JdbcLockFactory}, except that a {@link Lock#tryLock()} whose insert of the lock
 * row fails counts as "held" ({@code false}) instead of throwing.
 *
 * <p>Why: Iceberg's {@code JdbcLock.tryLock} first checks that no row exists, then inserts one;
 * when another holder inserts its row between the two — changeflow's in-job expiry and Iceberg's
 * trigger manager of the same table in one job, or two jobs — the insert fails on the primary key
 * and Iceberg throws {@code UncheckedSQLException("Failed to create ... lock")}. Thrown from the
 * trigger manager's timer, that fails the whole ingest job (seen in {@code InJobExpiryITCase} with
 * the embedded SQLite lock). Here the failed attempt is logged at WARN and reported as a held lock:
 * the trigger manager tries again after its lock check delay, the expiry skips its tick.
 * Maintenance never fails the ingest. A lock database that keeps failing thus stops maintenance
 * (each attempt logged) rather than the job.
 *
 * <p>{@link Lock#isHeld()} and {@link Lock#unlock()} are Iceberg's unchanged: {@code unlock}
 * deletes the row whoever inserted it (Iceberg's lock rows carry a random instance id per {@code
 * tryLock} that the lock does not keep), which is why a job started without state clears another
 * job's lock (README, "Maintenance inside the ingest job").
 */
@Internal
public final class RaceTolerantLockFactory implements TriggerLockFactory {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(RaceTolerantLockFactory.class);

    private final TriggerLockFactory delegate;
    private final String name;

    /**
     * @param delegate the lock factory (Iceberg's {@link JdbcLockFactory})
     * @param name the lock's name in log lines, e.g. the table
     */
    public RaceTolerantLockFactory(TriggerLockFactory delegate, String name) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public void open() {
        delegate.open();
    }

    @Override
    public Lock createLock() {
        return new Tolerant(delegate.createLock(), "maintenance lock of " + name);
    }

    @Override
    public Lock createRecoveryLock() {
        return new Tolerant(delegate.createRecoveryLock(), "recovery lock of " + name);
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }

    private static final class Tolerant implements Lock {
        private final Lock lock;
        private final String name;

        Tolerant(Lock lock, String name) {
            this.lock = lock;
            this.name = name;
        }

        @Override
        public boolean tryLock() {
            try {
                return lock.tryLock();
            } catch (RuntimeException e) {
                LOG.warn(
                        "the {} could not be taken (another holder took it at the same moment, or"
                                + " the lock database failed); counted as held, tried again later",
                        name,
                        e);
                return false;
            }
        }

        @Override
        public boolean isHeld() {
            return lock.isHeld();
        }

        @Override
        public void unlock() {
            lock.unlock();
        }
    }
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
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
 * the embedded SQLite lock). Here the failed attempt is reported as a held lock — logged on one
 * INFO line when it is that race ({@link #lostRace}), at WARN with its stack trace otherwise: the
 * trigger manager tries again after its lock check delay, the expiry skips its tick. Maintenance
 * never fails the ingest. A lock database that keeps failing thus stops maintenance (each attempt
 * logged) rather than the job.
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

    /**
     * Whether {@code e} is a lost race for the lock row: an integrity-constraint violation (JDBC
     * {@link SQLIntegrityConstraintViolationException}, SQLState class {@code 23}, or SQLite's
     * {@code SQLITE_CONSTRAINT} codes, whose driver sets no SQLState) anywhere in its causes.
     */
    static boolean lostRace(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLIntegrityConstraintViolationException) {
                return true;
            }
            if (t instanceof SQLException) {
                String state = ((SQLException) t).getSQLState();
                String message = t.getMessage();
                if (state != null && state.startsWith("23")
                        || message != null && message.contains("SQLITE_CONSTRAINT")) {
                    return true;
                }
            }
        }
        return false;
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
                if (lostRace(e)) {
                    // the expected race: one line, no stack trace
                    LOG.info(
                            "the {} was taken by another holder at the same moment; counted as"
                                    + " held, tried again later",
                            name);
                } else {
                    LOG.warn(
                            "the {} could not be taken (the lock database failed); counted as"
                                    + " held, tried again later",
                            name,
                            e);
                }
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

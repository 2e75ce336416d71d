package dev.changeflow.sinks.iceberg;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.TriggerLockFactory;
import org.apache.iceberg.jdbc.UncheckedSQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The lock and options of {@link InJobMaintenance} (docs/semantics.md M1). */
class InJobMaintenanceTest {
    private static final TableIdentifier T = TableIdentifier.of("shop", "items");

    @TempDir Path tmp;

    @Test
    void embeddedLockIsASqliteFileInTheLocalWarehouseOneHolderAtATime() throws Exception {
        CatalogSettings catalog = CatalogSettings.localHadoop(tmp.resolve("wh"));
        TableMaintenanceOptions on = TableMaintenanceOptions.builder().enabled(true).build();
        TriggerLockFactory a = InJobMaintenance.lockFactory(catalog, T, on);
        TriggerLockFactory b = InJobMaintenance.lockFactory(catalog, T, on);
        assertThat(tmp.resolve("wh").resolve(TableMaintenanceOptions.EMBEDDED_LOCK_FILE)).exists();
        a.open();
        b.open();
        try {
            TriggerLockFactory.Lock la = a.createLock();
            TriggerLockFactory.Lock lb = b.createLock();
            assertThat(la.tryLock()).isTrue();
            assertThat(lb.tryLock()).as("a second job on the same table").isFalse();
            assertThat(lb.isHeld()).isTrue();
            la.unlock();
            assertThat(lb.tryLock()).isTrue();
            // another table has its own lock
            TriggerLockFactory other =
                    InJobMaintenance.lockFactory(catalog, TableIdentifier.of("shop", "x"), on);
            other.open();
            try {
                assertThat(other.createLock().tryLock()).isTrue();
            } finally {
                other.close();
            }
        } finally {
            a.close();
            b.close();
        }
    }

    /**
     * Another holder inserts its lock row between Iceberg's "is it held?" check and its insert
     * (simulated by an SQLite trigger that inserts that row just before each insert of a missing
     * row, so the insert fails on the primary key): Iceberg's {@code JdbcLock} throws, which from
     * the trigger manager's timer fails the job; the lock changeflow hands out reports the lock as
     * held instead.
     */
    @Test
    void losingTheRaceForTheLockRowCountsAsHeldNotAsAFailure() throws Exception {
        CatalogSettings catalog = CatalogSettings.localHadoop(tmp.resolve("wh"));
        TableMaintenanceOptions on = TableMaintenanceOptions.builder().enabled(true).build();
        TriggerLockFactory lock = InJobMaintenance.lockFactory(catalog, T, on);
        assertThat(lock).isInstanceOf(RaceTolerantLockFactory.class);
        String uri =
                "jdbc:sqlite:"
                        + tmp.resolve("wh")
                                .resolve(TableMaintenanceOptions.EMBEDDED_LOCK_FILE)
                                .toAbsolutePath();
        try (Connection c = DriverManager.getConnection(uri);
                Statement st = c.createStatement()) {
            st.execute(
                    "CREATE TRIGGER racing_holder BEFORE INSERT ON flink_maintenance_lock WHEN NOT"
                            + " EXISTS (SELECT 1 FROM flink_maintenance_lock WHERE"
                            + " LOCK_TYPE = NEW.LOCK_TYPE AND LOCK_ID = NEW.LOCK_ID) BEGIN INSERT"
                            + " INTO flink_maintenance_lock VALUES (NEW.LOCK_TYPE, NEW.LOCK_ID,"
                            + " '00000000-0000-0000-0000-000000000000'); END");
        }
        JdbcLockFactory iceberg =
                new JdbcLockFactory(uri, T.toString(), Map.of("jdbc.busy_timeout", "30000"));
        lock.open();
        iceberg.open();
        try {
            TriggerLockFactory.Lock plain = iceberg.createLock();
            assertThatThrownBy(plain::tryLock)
                    .isInstanceOf(UncheckedSQLException.class)
                    .hasMessage(
                            "Failed to create JdbcLock{type=MAINTENANCE, lockId=shop.items} lock")
                    .satisfies(
                            e ->
                                    assertThat(RaceTolerantLockFactory.lostRace(e))
                                            .as("told apart from a failing database")
                                            .isTrue());
            assertThat(
                            RaceTolerantLockFactory.lostRace(
                                    new UncheckedSQLException(
                                            new java.sql.SQLException(
                                                    "[SQLITE_BUSY] The database file is locked"),
                                            "Failed to create lock")))
                    .isFalse();
            // SQLite rolls the trigger's row back with the failed insert: nothing is left held

            TriggerLockFactory.Lock l = lock.createLock();
            assertThat(l.tryLock()).as("lost the race: counted as held").isFalse();
            assertThat(l.isHeld()).isFalse();
            TriggerLockFactory.Lock recovery = lock.createRecoveryLock();
            assertThat(recovery.tryLock()).isFalse();
            assertThat(recovery.isHeld()).isFalse();
            try (Connection c = DriverManager.getConnection(uri);
                    Statement st = c.createStatement()) {
                st.execute("DROP TRIGGER racing_holder");
            }
            assertThat(l.tryLock()).as("no race: taken").isTrue();
            assertThat(l.isHeld()).isTrue();
            l.unlock();
            assertThat(l.isHeld()).isFalse();
        } finally {
            iceberg.close();
            lock.close();
        }
    }

    @Test
    void aWarehouseThatIsNotLocalNeedsALockUri() {
        CatalogSettings s3 =
                CatalogSettings.of(
                        "lake",
                        Map.of(
                                "type", "rest",
                                "uri", "http://localhost:1/catalog",
                                "warehouse", "s3://bucket/wh"));
        TableMaintenanceOptions on = TableMaintenanceOptions.builder().enabled(true).build();
        assertThatThrownBy(() -> InJobMaintenance.lockFactory(s3, T, on))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("in-job maintenance of shop.items needs a lock")
                .hasMessageContaining("'s3://bucket/wh'")
                .hasMessageContaining("set 'maintenance-lock-jdbc-uri'");
        assertThat(InJobMaintenance.localWarehouse(s3)).isNull();
    }

    @Test
    void aLockDatabaseThatCannotBeOpenedIsNamed() throws Exception {
        Path notAFolder = Files.writeString(tmp.resolve("file"), "x");
        TableMaintenanceOptions on =
                TableMaintenanceOptions.builder()
                        .enabled(true)
                        .lockJdbcUri("jdbc:sqlite:" + notAFolder.resolve("locks.db"))
                        .build();
        assertThatThrownBy(
                        () -> InJobMaintenance.lockFactory(CatalogSettings.localHadoop(tmp), T, on))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot open the maintenance lock database jdbc:sqlite:")
                .hasMessageContaining("for shop.items");
    }

    @Test
    void offAddsNothing() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CatalogSettings s3 =
                CatalogSettings.of(
                        "lake",
                        Map.of(
                                "type",
                                "rest",
                                "uri",
                                "http://localhost:1/c",
                                "warehouse",
                                "s3://b"));
        InJobMaintenance.append(env, s3, T, TableMaintenanceOptions.off(), "maintenance-items");
        assertThat(env.getTransformations()).isEmpty();
    }

    @Test
    void optionsRefuseBadValues() {
        assertThatThrownBy(() -> TableMaintenanceOptions.builder().commitCount(-1).build())
                .hasMessage("maintenance commit count must be 0 (off) or more, got -1");
        assertThatThrownBy(
                        () ->
                                TableMaintenanceOptions.builder()
                                        .rateLimit(java.time.Duration.ZERO)
                                        .build())
                .hasMessage("maintenance rate limit must be positive, got PT0S");
        assertThatThrownBy(() -> TableMaintenanceOptions.builder().deleteFileThreshold(0).build())
                .hasMessage("maintenance delete-file threshold must be at least 1, got 0");
        assertThatThrownBy(() -> TableMaintenanceOptions.builder().lockJdbcUri("db").build())
                .hasMessage("maintenance lock URI must be a JDBC URI (jdbc:...), got 'db'");
        assertThatThrownBy(
                        () ->
                                TableMaintenanceOptions.builder()
                                        .enabled(true)
                                        .commitCount(0)
                                        .dataFileCount(0)
                                        .deleteFileCount(0)
                                        .interval(null)
                                        .build())
                .hasMessageStartingWith("maintenance is on but every trigger is off");
        assertThat(
                        TableMaintenanceOptions.builder()
                                .interval(java.time.Duration.ZERO)
                                .build()
                                .interval())
                .isNull();
    }
}

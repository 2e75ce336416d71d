package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

import java.util.Objects;

/**
 * Iceberg {@link TableOperations} that forward every call to a delegate; a subclass overrides only
 * what it changes (typically {@link #commit}, to check or interfere with a commit before or after
 * the delegate writes it). Used by the commit guards of the maintenance steps ({@link
 * DanglingDeletes}, the purge's parent guard; docs/semantics.md M3) and by tests that race or fail
 * commits.
 *
 * <p>Thread-safety: as the delegate's.
 */
@Internal
public abstract class ForwardingTableOperations implements TableOperations {
    /** The operations every call goes to. */
    protected final TableOperations delegate;

    /**
     * @param delegate the operations to forward to; not null
     * @throws NullPointerException when {@code delegate} is null
     */
    protected ForwardingTableOperations(TableOperations delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /**
     * Whether committing {@code metadata} on {@code base} makes a new snapshot current: {@code
     * base} exists (not a table creation), {@code metadata} has a current snapshot and it is not
     * {@code base}'s.
     *
     * @param base the metadata the commit starts from; null for a table creation
     * @param metadata the metadata to commit
     */
    public static boolean addsSnapshot(TableMetadata base, TableMetadata metadata) {
        Snapshot next = metadata.currentSnapshot();
        return base != null
                && next != null
                && (base.currentSnapshot() == null
                        || base.currentSnapshot().snapshotId() != next.snapshotId());
    }

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
}

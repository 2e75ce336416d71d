package dev.changeflow.sources.cdf.retention;

import dev.changeflow.sources.cdf.stream.enumerator.ConsumerPositionListener;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.flink.TableLoader;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The streaming change feed's consumer registration (semantics.md F7): after every completed
 * checkpoint of a stream with a {@code consumer-id}, its enumerator passes the next version it
 * needs here, and this writes {@code <table location>/changeflow/consumers/<consumer-id>.json}
 * through the table's FileIO, at most once a minute ({@link ConsumerProgress}). Used by {@code
 * ChangeFeedSource} whenever a consumer id is set and no other listener is given.
 */
@Internal
public final class RegistryPositionListener implements ConsumerPositionListener {
    private static final long serialVersionUID = 1L;

    private final TableLoader tableLoader;
    private transient ConsumerProgress progress;

    public RegistryPositionListener(TableLoader tableLoader) {
        this.tableLoader = tableLoader;
    }

    @Override
    public void positionCommitted(String consumerId, long nextVersion, long checkpointId) {
        if (progress == null) {
            try (TableLoader loader = tableLoader.clone()) {
                loader.open();
                progress =
                        ConsumerProgress.of(
                                ConsumerRegistry.forTable(loader.loadTable()), consumerId);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        progress.checkpointCompleted(nextVersion);
    }
}

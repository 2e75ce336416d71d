package dev.changeflow.sources.cdf.stream.enumerator;

import org.apache.flink.annotation.Internal;

import java.io.Serializable;

/**
 * Hook for the consumer registry (semantics.md F7): called by {@link ChangeFeedEnumerator} after a
 * checkpoint of a stream with a {@code consumer-id} completed, with the first version the stream
 * still needs as of that checkpoint (every version before it was emitted completely and is in the
 * checkpoint's downstream state). The registry writes {@code
 * <table>/changeflow/consumers/<consumer-id>.json} from here; until it exists the hook does nothing
 * ({@link #NONE}). Called on the enumerator's thread; must not block for long.
 */
@Internal
@FunctionalInterface
public interface ConsumerPositionListener extends Serializable {

    /** The listener that does nothing. */
    ConsumerPositionListener NONE = (consumerId, nextVersion, checkpointId) -> {};

    /**
     * @param consumerId the stream's {@code consumer-id}
     * @param nextVersion first version not completely emitted as of the checkpoint
     * @param checkpointId the completed checkpoint
     */
    void positionCommitted(String consumerId, long nextVersion, long checkpointId);
}

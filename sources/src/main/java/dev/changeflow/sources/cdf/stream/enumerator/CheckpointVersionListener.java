package dev.changeflow.sources.cdf.stream.enumerator;

import org.apache.flink.annotation.Internal;

import java.io.Serializable;

/**
 * Hook for G2/G3 (docs/semantics.md): told, while the change feed's enumerator takes part in
 * checkpoint {@code c}, the version the stream has completely emitted as of that checkpoint. Every
 * change of the versions up to it was emitted by a reader before the reader reported its splits
 * finished, hence before checkpoint {@code c}'s barrier left that reader (the coordinator is
 * checkpointed before the barriers are injected), so with aligned checkpoints every operator's
 * state and every sink's files of checkpoint {@code c} contain them. Called on the coordinator
 * thread; must not block for long.
 *
 * <p>Not called while the stream's initial snapshot (F6, G1 snapshot-then-changes) is still being
 * planned or emitted, nor before any version completed: until then the stream reflects no complete
 * Silver version.
 */
@Internal
public interface CheckpointVersionListener extends Serializable {

    /** The listener that does nothing. */
    CheckpointVersionListener NONE = (checkpointId, completedVersion) -> {};

    /**
     * @param checkpointId the checkpoint being taken
     * @param completedVersion every change of the versions up to this one is in the checkpoint
     */
    void checkpointing(long checkpointId, long completedVersion);

    /** Checkpoint {@code checkpointId} completed (older records may be discarded). */
    default void checkpointCompleted(long checkpointId) {}

    /**
     * A bounded stream emitted every change up to its bound {@code completedVersion} and tells its
     * readers to finish: what a sink receives until its input ends holds every change up to it
     * (Iceberg's Flink committers commit that last data at the end of input, with checkpoint id
     * {@link Long#MAX_VALUE}).
     */
    default void ended(long completedVersion) {}
}

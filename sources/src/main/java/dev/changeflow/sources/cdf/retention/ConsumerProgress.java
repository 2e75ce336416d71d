package dev.changeflow.sources.cdf.retention;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * A streaming change-feed reader's registration as consumer {@code consumerId} (F7). Its enumerator
 * calls {@link #checkpointCompleted(long)} after every completed checkpoint with the next version
 * it will plan; the position is written at most once per {@link #MIN_INTERVAL} (the first call
 * always writes), so a short checkpoint interval does not turn into a stream of small writes. A
 * position that is up to a minute old only keeps more snapshots alive. Not thread-safe: one
 * enumerator owns it.
 */
@PublicEvolving
public final class ConsumerProgress {

    /**
     * The shortest time between two writes of a consumer's position (F7: at most once a minute).
     */
    public static final Duration MIN_INTERVAL = Duration.ofMinutes(1);

    private final ConsumerRegistry registry;
    private final String consumerId;
    private final Clock clock;
    private Instant lastWrite;

    private ConsumerProgress(ConsumerRegistry registry, String consumerId, Clock clock) {
        this.registry = registry;
        this.consumerId = consumerId;
        this.clock = clock;
        registry.location(consumerId); // validates the id now, not at the first checkpoint
    }

    /** Progress of {@code consumerId} in {@code registry}, timed by the UTC system clock. */
    public static ConsumerProgress of(ConsumerRegistry registry, String consumerId) {
        return of(registry, consumerId, Clock.systemUTC());
    }

    /** As {@link #of(ConsumerRegistry, String)} with an explicit clock (tests). */
    public static ConsumerProgress of(ConsumerRegistry registry, String consumerId, Clock clock) {
        return new ConsumerProgress(registry, consumerId, clock);
    }

    /**
     * Records that a checkpoint completed with {@code nextVersion} as the next version to read.
     *
     * @return true when the position was written now, false when throttled
     */
    public boolean checkpointCompleted(long nextVersion) {
        Instant now = clock.instant();
        if (lastWrite != null && now.isBefore(lastWrite.plus(MIN_INTERVAL))) {
            return false;
        }
        registry.write(consumerId, nextVersion, now);
        lastWrite = now;
        return true;
    }
}

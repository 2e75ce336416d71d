package dev.changeflow.sources.cdf.stream.event;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;

/**
 * Enumerator → every reader: every split of every version up to and including {@link #version()}
 * has been emitted, so each reader emits watermark {@code version} (the version-completion
 * watermark, design.md "Order and pairing — how").
 */
@Internal
public final class VersionCompletedEvent implements SourceEvent {

    private static final long serialVersionUID = 1L;

    private final long version;

    public VersionCompletedEvent(long version) {
        this.version = version;
    }

    public long version() {
        return version;
    }

    @Override
    public String toString() {
        return "VersionCompletedEvent(" + version + ")";
    }
}

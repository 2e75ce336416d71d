package dev.changeflow.sources.cdf.stream.event;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;

import java.util.List;

/**
 * Reader → enumerator: every row of these splits was emitted. Sent again after a restore for splits
 * still marked finished in the reader's state, so the enumerator treats unknown ids as already
 * done.
 */
@Internal
public final class SplitsFinishedEvent implements SourceEvent {

    private static final long serialVersionUID = 1L;

    private final List<String> splitIds;

    public SplitsFinishedEvent(List<String> splitIds) {
        this.splitIds = List.copyOf(splitIds);
    }

    public List<String> splitIds() {
        return splitIds;
    }

    @Override
    public String toString() {
        return "SplitsFinishedEvent" + splitIds;
    }
}

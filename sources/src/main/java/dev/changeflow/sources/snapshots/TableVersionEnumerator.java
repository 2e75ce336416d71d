package dev.changeflow.sources.snapshots;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Discovers the versions of the source table of {@link IcebergSnapshots} ({@link
 * IcebergSnapshots#versionsAfter}) and hands them to the single reader one at a time, lowest first,
 * each when the reader asked for the next (it asks only after finishing one). Bounded: the versions
 * present at the start, then no more splits. Continuous: the table is looked at every monitor
 * interval (in the coordinator's worker thread).
 */
@Internal
final class TableVersionEnumerator
        implements SplitEnumerator<TableVersionSplit, TableVersionEnumState> {
    private final SplitEnumeratorContext<TableVersionSplit> context;
    private final TableLoader loader;
    private final IcebergSnapshots.Versions mode;
    private final long monitorMillis;
    private final TreeMap<Long, TableVersionSplit> pending = new TreeMap<>();
    private final Set<Integer> waiting = new LinkedHashSet<>();
    private volatile long lastDiscovered;
    @Nullable private Table table;

    /**
     * @param monitorMillis 0 for bounded
     */
    TableVersionEnumerator(
            SplitEnumeratorContext<TableVersionSplit> context,
            TableLoader loader,
            IcebergSnapshots.Versions mode,
            long monitorMillis,
            @Nullable TableVersionEnumState restored) {
        this.context = context;
        this.loader = loader;
        this.mode = mode;
        this.monitorMillis = monitorMillis;
        this.lastDiscovered = restored == null ? Long.MIN_VALUE : restored.lastDiscovered;
        if (restored != null) {
            restored.pending.forEach(s -> pending.put(s.version, s));
        }
    }

    @Override
    public void start() {
        loader.open();
        table = loader.loadTable();
        if (monitorMillis <= 0) {
            found(discover(), null);
        } else {
            context.callAsync(this::discover, this::found, 0, monitorMillis);
        }
    }

    private synchronized List<TableVersionSplit> discover() {
        table.refresh();
        return IcebergSnapshots.versionsAfter(table, mode, lastDiscovered);
    }

    private void found(@Nullable List<TableVersionSplit> splits, @Nullable Throwable error) {
        if (error != null) {
            throw new IllegalStateException(
                    "cannot list the versions of snapshot table " + table.name(), error);
        }
        for (TableVersionSplit s : splits) {
            if (s.version > lastDiscovered) {
                pending.put(s.version, s);
                lastDiscovered = s.version;
            }
        }
        assign();
    }

    @Override
    public void handleSplitRequest(int subtaskId, @Nullable String requesterHostname) {
        waiting.add(subtaskId);
        assign();
    }

    private void assign() {
        for (Integer subtask : new ArrayList<>(waiting)) {
            if (!context.registeredReaders().containsKey(subtask)) {
                continue;
            }
            if (!pending.isEmpty()) {
                context.assignSplit(pending.pollFirstEntry().getValue(), subtask);
                waiting.remove(subtask);
            } else if (monitorMillis <= 0) {
                context.signalNoMoreSplits(subtask);
                waiting.remove(subtask);
            }
        }
    }

    @Override
    public void addSplitsBack(List<TableVersionSplit> splits, int subtaskId) {
        splits.forEach(s -> pending.put(s.version, s));
    }

    @Override
    public void addReader(int subtaskId) {}

    @Override
    public TableVersionEnumState snapshotState(long checkpointId) {
        return new TableVersionEnumState(lastDiscovered, new ArrayList<>(pending.values()));
    }

    @Override
    public void close() throws IOException {
        loader.close();
    }
}

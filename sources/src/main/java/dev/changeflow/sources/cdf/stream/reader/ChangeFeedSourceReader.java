package dev.changeflow.sources.cdf.stream.reader;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.DeleteFileCache;
import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.stream.event.SplitsFinishedEvent;
import dev.changeflow.sources.cdf.stream.event.VersionCompletedEvent;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;
import dev.changeflow.sources.reader.SequentialSourceReaderBase;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;
import org.apache.iceberg.ScanTaskParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.flink.TableLoader;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Reader of the streaming change feed: reads one split at a time (on its own I/O thread, so the
 * task thread stays free for checkpoints), emits its rows UNPAIRED ({@code _change_type} {@code
 * delete} for removed rows, {@code insert} for added ones) with the record timestamp set to the
 * version, reports each finished split to the enumerator, and emits watermark {@code v} when the
 * enumerator reports version {@code v} complete (design.md "Order and pairing — how").
 *
 * <p>Rows are of the source's row type ({@code StreamingAccess#sourceRowType}: the change feed's
 * row type, plus {@code _row_id} with row lineage). A split's rows are computed whole (the change
 * computation holds one version part in memory) and come in the same order on every read, so the
 * checkpointed offset says exactly which rows were emitted; a restored split skips them. Finished
 * splits whose version is not confirmed yet stay in the state (marked finished) and are reported
 * again after a restore.
 *
 * <p>Delete files loaded for one split are kept for the next ones in a {@link DeleteFileCache} of
 * {@link DeleteFileCache#DEFAULT_MAX_BYTES} estimated bytes per reader: on a never-compacted table
 * every version applies the whole pile of earlier equality deletes, each of which is then parsed
 * once.
 *
 * <p>Errors: a split whose files are gone fails the job with {@link CdfException} {@code
 * VERSION_NOT_AVAILABLE} (K6), never a partial result.
 */
@Internal
public final class ChangeFeedSourceReader extends SequentialSourceReaderBase<ChangeFeedSplit> {

    /** Rows emitted per {@link #pollNext} call, so checkpoints can come between batches. */
    static final int BATCH = 1024;

    private final Schema dataSchema;
    private final boolean rowLineage;

    /** Delete files loaded for earlier splits, used only on {@link #ioThread}. */
    private final DeleteFileCache deleteCache;

    private final List<ChangeFeedSplit> finishedUnconfirmed = new ArrayList<>();
    private ExecutorService ioThread;

    private ChangeFeedSplit current;
    private CompletableFuture<List<RowData>> loading;
    private List<RowData> rows;
    private int position;

    private long confirmedVersion = Long.MIN_VALUE;
    private long emittedWatermark = Long.MIN_VALUE;

    public ChangeFeedSourceReader(
            SourceReaderContext context,
            TableLoader tableLoader,
            Schema dataSchema,
            boolean rowLineage,
            DeleteFileCache deleteCache) {
        super(context, tableLoader);
        this.dataSchema = dataSchema;
        this.rowLineage = rowLineage;
        this.deleteCache = deleteCache;
    }

    @Override
    public void start() {
        super.start();
        ioThread =
                Executors.newSingleThreadExecutor(
                        new ExecutorThreadFactory(
                                "changeflow-cdf-reader-" + context.getIndexOfSubtask()));
    }

    @Override
    public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
        long watermark = Math.min(confirmedVersion, minHeldVersion() - 1);
        if (watermark > emittedWatermark) {
            output.emitWatermark(new Watermark(watermark));
            emittedWatermark = watermark;
        }
        if (rows != null) {
            int end = Math.min(rows.size(), position + BATCH);
            for (; position < end; position++) {
                output.collect(rows.get(position), current.version());
            }
            if (position >= rows.size()) {
                finishCurrent();
            }
            return InputStatus.MORE_AVAILABLE;
        }
        if (loading != null) {
            if (!loading.isDone()) {
                availableWhen(loading);
                return InputStatus.NOTHING_AVAILABLE;
            }
            try {
                rows = loading.join();
            } catch (CompletionException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                if (cause instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw new IOException(cause);
            }
            loading = null;
            position = (int) current.offset();
            return InputStatus.MORE_AVAILABLE;
        }
        while (!queue.isEmpty()) {
            ChangeFeedSplit split = queue.poll();
            if (split.finished()) {
                report(split); // finished before a restore, not confirmed yet
                continue;
            }
            current = split;
            loading = CompletableFuture.supplyAsync(() -> read(split), ioThread);
            return InputStatus.MORE_AVAILABLE;
        }
        return awaitSplits();
    }

    /**
     * The lowest version of a split this reader still has to emit rows of ({@link Long#MAX_VALUE}
     * when none): after a regional failover the enumerator may already count such a split as
     * finished, so the reader never lets its watermark reach the version of a split it holds.
     */
    private long minHeldVersion() {
        long min = current != null ? current.version() : Long.MAX_VALUE;
        for (ChangeFeedSplit split : queue) {
            if (!split.finished()) {
                min = Math.min(min, split.version());
            }
        }
        return min;
    }

    private List<RowData> read(ChangeFeedSplit split) {
        switch (split.kind()) {
            case INITIAL:
                List<RowData> out = new ArrayList<>();
                StreamingAccess.forEachSnapshotRow(
                        table,
                        dataSchema,
                        rowLineage,
                        ScanTaskParser.fromJson(split.file(), true),
                        split.version(),
                        split.commitMillis(),
                        deleteCache,
                        out::add);
                return out;
            case ADDED:
            case REMOVED:
                Snapshot snapshot = table.snapshot(split.snapshotId());
                if (snapshot == null) {
                    table.refresh();
                    snapshot = table.snapshot(split.snapshotId());
                }
                if (snapshot == null) {
                    throw StreamingAccess.error(
                            CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                            String.format(
                                    "Version %d of table %s is not available: its snapshot %d has expired before "
                                            + "the change feed read it. Restart the stream from a later version, or "
                                            + "retain snapshots longer.",
                                    split.version(), table.name(), split.snapshotId()));
                }
                return StreamingAccess.versionRows(
                        table,
                        dataSchema,
                        rowLineage,
                        snapshot,
                        split.kind() == ChangeFeedSplit.Kind.ADDED ? split.file() : null,
                        split.kind() == ChangeFeedSplit.Kind.REMOVED,
                        deleteCache);
            default:
                throw new IllegalStateException("unknown split kind " + split.kind());
        }
    }

    private void finishCurrent() {
        ChangeFeedSplit done = current.withOffset(rows.size());
        current = null;
        rows = null;
        position = 0;
        report(done);
    }

    private void report(ChangeFeedSplit split) {
        if (split.version() > confirmedVersion) {
            finishedUnconfirmed.add(split.asFinished());
        }
        context.sendSourceEventToCoordinator(new SplitsFinishedEvent(List.of(split.splitId())));
        if (queue.isEmpty()) {
            requestSplit();
        }
    }

    @Override
    public List<ChangeFeedSplit> snapshotState(long checkpointId) {
        List<ChangeFeedSplit> state = new ArrayList<>(finishedUnconfirmed);
        if (current != null) {
            state.add(rows != null ? current.withOffset(position) : current);
        }
        state.addAll(queue);
        return state;
    }

    @Override
    public void handleSourceEvents(SourceEvent sourceEvent) {
        if (sourceEvent instanceof VersionCompletedEvent completed) {
            confirmedVersion = Math.max(confirmedVersion, completed.version());
            finishedUnconfirmed.removeIf(s -> s.version() <= confirmedVersion);
            signalAvailable();
        }
    }

    @Override
    public void close() throws Exception {
        if (ioThread != null) {
            ioThread.shutdownNow();
        }
        super.close();
    }
}

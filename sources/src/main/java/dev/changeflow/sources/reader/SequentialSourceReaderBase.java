package dev.changeflow.sources.reader;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Base of a source reader that reads the splits of one Iceberg table one at a time, in the order
 * they were assigned, and asks the enumerator for more only when it has none left (design.md "Order
 * and pairing — how": a version's rows are emitted whole before the next version's).
 *
 * <p>It holds what every such reader does the same way: the table (opened by {@link #start()},
 * closed by {@link #close()}), the queue of assigned splits not begun yet ({@link #queue}), the end
 * of input ({@link #notifyNoMoreSplits()}), one outstanding split request at a time and the
 * availability future. A subclass reads the split it took from the queue in {@link #pollNext}, and
 * calls {@link #awaitSplits()} when the queue is empty and it holds no split. Its checkpointed
 * state is its own ({@link #snapshotState}): the split it holds, with its progress, then the queue.
 *
 * @param <S> the split type
 */
@Internal
public abstract class SequentialSourceReaderBase<S extends SourceSplit>
        implements SourceReader<RowData, S> {

    protected final SourceReaderContext context;
    protected final TableLoader tableLoader;

    /** Splits assigned to this reader and not begun yet, in assignment order. */
    protected final Deque<S> queue = new ArrayDeque<>();

    /** The source table, loaded by {@link #start()}. */
    @Nullable protected Table table;

    private boolean noMoreSplits;
    private boolean requested;
    private CompletableFuture<Void> available = new CompletableFuture<>();

    protected SequentialSourceReaderBase(SourceReaderContext context, TableLoader tableLoader) {
        this.context = context;
        this.tableLoader = tableLoader;
    }

    /** Opens the table loader and loads the table. A subclass that overrides it calls it first. */
    @Override
    public void start() {
        tableLoader.open();
        table = tableLoader.loadTable();
    }

    /**
     * What {@link #pollNext} returns when the queue is empty and no split is held: {@link
     * InputStatus#END_OF_INPUT} after {@link #notifyNoMoreSplits()}, else {@link
     * InputStatus#NOTHING_AVAILABLE}, having sent one split request (unless one is outstanding) and
     * renewed the availability future if it was completed.
     */
    protected final InputStatus awaitSplits() {
        if (noMoreSplits) {
            return InputStatus.END_OF_INPUT;
        }
        if (!requested) {
            requestSplit();
        }
        if (available.isDone()) {
            available = new CompletableFuture<>();
        }
        return InputStatus.NOTHING_AVAILABLE;
    }

    /** Sends a split request to the enumerator now, outstanding until splits are added. */
    protected final void requestSplit() {
        requested = true;
        context.sendSplitRequest();
    }

    /** Makes the reader available again when {@code work} completes, normally or not. */
    protected final void availableWhen(CompletableFuture<?> work) {
        available = work.handle((r, e) -> null);
    }

    /** Completes the availability future: the reader has something to do. */
    protected final void signalAvailable() {
        available.complete(null);
    }

    /** Whether the enumerator has said that no more splits come. */
    protected final boolean allSplitsAssigned() {
        return noMoreSplits;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        return available;
    }

    @Override
    public void addSplits(List<S> splits) {
        queue.addAll(splits);
        requested = false;
        available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {
        noMoreSplits = true;
        available.complete(null);
    }

    /**
     * Closes the table loader. A subclass that overrides it releases its own resources first, then
     * calls it.
     *
     * @throws UncheckedIOException when the loader cannot be closed
     */
    @Override
    public void close() throws Exception {
        if (tableLoader != null) {
            try {
                tableLoader.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

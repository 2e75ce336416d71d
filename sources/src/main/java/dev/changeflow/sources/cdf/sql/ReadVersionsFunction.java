package dev.changeflow.sources.cdf.sql;

import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.DeleteFileCache;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.async.ResultFuture;
import org.apache.flink.streaming.api.functions.async.RichAsyncFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * Reads the changes of each version it receives (a version of the range planned by {@link
 * ChangeFeedTableSource}) and emits them as rows of the SQL table's row type: columns are matched
 * by name, a column the range's ending schema lacks is null.
 *
 * <p>Runs as Flink's <em>ordered</em> async operator with a capacity of {@code concurrency}: up to
 * {@code concurrency} versions are read at the same time, each by its own thread with its own
 * {@link TableChanges} (its own {@code Table}), and the operator emits every version's rows whole,
 * in the order the versions arrived (ascending). So at most {@code concurrency} versions are held
 * in memory; a slow version holds back the later ones already read, never reorders them. The
 * threads share one {@link DeleteFileCache} (of {@link DeleteFileCache#DEFAULT_MAX_BYTES} estimated
 * bytes): a delete file loaded for one version serves the others.
 */
@Internal
final class ReadVersionsFunction extends RichAsyncFunction<Long, RowData> {

    private static final long serialVersionUID = 1L;

    /** Stands for "no version" (the element of an empty range), produces nothing. */
    static final long NO_VERSION = -1L;

    private final TableLoader tableLoader;
    private final Map<String, String> options;
    private final RowType rowType;
    private final int concurrency;

    private transient ExecutorService readers;
    private transient BlockingQueue<TableChanges> idle;
    private transient RowData.FieldGetter[] getters;

    /**
     * @param concurrency versions read at the same time (threads, and the async operator's capacity
     *     this function must be given)
     */
    ReadVersionsFunction(
            TableLoader tableLoader,
            Map<String, String> options,
            RowType rowType,
            int concurrency) {
        if (concurrency < 1) {
            throw new IllegalArgumentException(
                    "concurrency must be at least 1, got " + concurrency);
        }
        this.tableLoader = tableLoader;
        this.options = Map.copyOf(options);
        this.rowType = rowType;
        this.concurrency = concurrency;
    }

    @Override
    public void open(OpenContext openContext) {
        tableLoader.open();
        idle = new ArrayBlockingQueue<>(concurrency);
        // one cache for all threads, of the size the options give (delete-file-cache-size)
        DeleteFileCache deleteCache =
                new DeleteFileCache(
                        ChangeFeedOptions.resolve(String.valueOf(tableLoader), options)
                                .get(ChangeFeedOptions.DELETE_FILE_CACHE_SIZE)
                                .getBytes());
        for (int i = 0; i < concurrency; i++) {
            // the same resolution as at planning time; the range's snapshots are immutable
            idle.add(
                    TableChanges.forTable(tableLoader.loadTable())
                            .options(options)
                            .deleteFileCache(deleteCache)
                            .build());
        }
        RowType source = idle.peek().rowType();
        getters = new RowData.FieldGetter[rowType.getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            int from = source.getFieldNames().indexOf(rowType.getFieldNames().get(i));
            getters[i] = from < 0 ? null : RowData.createFieldGetter(source.getTypeAt(from), from);
        }
        readers =
                Executors.newFixedThreadPool(
                        concurrency,
                        runnable -> {
                            Thread t = new Thread(runnable, "changeflow-cdf-sql-reader");
                            t.setDaemon(true);
                            return t;
                        });
    }

    @Override
    public void asyncInvoke(Long version, ResultFuture<RowData> resultFuture) {
        if (version == NO_VERSION) {
            resultFuture.complete(List.of());
            return;
        }
        readers.execute(() -> read(version, resultFuture));
    }

    private void read(long version, ResultFuture<RowData> resultFuture) {
        TableChanges changes;
        try {
            changes = idle.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            deliver(() -> resultFuture.completeExceptionally(e));
            return;
        }
        List<RowData> read = new ArrayList<>();
        Throwable failure = null;
        try (CloseableIterable<RowData> rows = changes.readRowData(version)) {
            rows.forEach(read::add);
        } catch (Throwable t) {
            // VERSION_NOT_AVAILABLE (K6) among others: the job fails, never a partial result
            failure = t;
        } finally {
            idle.add(changes);
        }
        Throwable failed = failure;
        deliver(
                failed == null
                        ? () -> resultFuture.complete(projected(read))
                        : () -> resultFuture.completeExceptionally(failed));
    }

    /**
     * Hands a result to the async operator. Once the task is closing (another version failed the
     * job, or it was cancelled) the operator's mailbox refuses it: the result is no longer wanted,
     * and the reader thread must not die of it.
     */
    private static void deliver(Runnable handOver) {
        try {
            handOver.run();
        } catch (RejectedExecutionException closing) {
            // the task is closing: nothing waits for this version any more
        }
    }

    /** {@code rows} as rows of the SQL row type, projected when the operator emits them. */
    private List<RowData> projected(List<RowData> rows) {
        return new AbstractList<>() {
            @Override
            public RowData get(int index) {
                RowData row = rows.get(index);
                GenericRowData projected = new GenericRowData(getters.length);
                for (int i = 0; i < getters.length; i++) {
                    projected.setField(
                            i, getters[i] == null ? null : getters[i].getFieldOrNull(row));
                }
                return projected;
            }

            @Override
            public int size() {
                return rows.size();
            }
        };
    }

    @Override
    public void close() throws Exception {
        if (readers != null) {
            readers.shutdownNow();
        }
        tableLoader.close();
    }
}

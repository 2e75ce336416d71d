package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.SnapshotVersions;
import dev.changeflow.sources.reader.SequentialSourceReaderBase;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.BaseCombinedScanTask;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.source.DataIterator;
import org.apache.iceberg.flink.source.RowDataFileScanTaskReader;
import org.apache.iceberg.io.CloseableIterable;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Reads the versions of the source table of {@link IcebergSnapshots} one after the other, in the
 * task thread: every live row of the version's Iceberg snapshot (data files minus position and
 * equality deletes, by Iceberg's Flink {@link RowDataFileScanTaskReader}), as a row of the flow's
 * source type with the version column set, then the version's end marker ({@link
 * SnapshotVersions#endOf}). Data files are read in a fixed order (path, then offset), so the rows
 * of a version always come in the same order: a reader restored inside a version plans it again and
 * skips the rows it emitted before the checkpoint ({@link TableVersionSplit#emitted}), which is
 * what the ordering step expects (it keeps counting the version).
 */
@Internal
final class TableVersionReader extends SequentialSourceReaderBase<TableVersionSplit> {
    private final RowType sourceType;
    private final SnapshotVersions versions;

    @Nullable private TableVersionSplit current;
    @Nullable private DataIterator<RowData> rows;
    private int[] positions;
    private RowData.FieldGetter[] getters;
    private long emitted;

    TableVersionReader(
            SourceReaderContext context,
            TableLoader loader,
            RowType sourceType,
            SnapshotVersions versions) {
        super(context, loader);
        this.sourceType = sourceType;
        this.versions = versions;
    }

    @Override
    public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
        if (current == null) {
            if (queue.isEmpty()) {
                return awaitSplits();
            }
            open(queue.poll());
        }
        if (rows.hasNext()) {
            output.collect(toSourceRow(rows.next()));
            emitted++;
            return InputStatus.MORE_AVAILABLE;
        }
        output.collect(versions.endOf(versions.valueOf(current.version)));
        rows.close();
        rows = null;
        current = null;
        return InputStatus.MORE_AVAILABLE;
    }

    private void open(TableVersionSplit split) throws IOException {
        table.refresh();
        Snapshot snapshot = table.snapshot(split.snapshotId);
        if (snapshot == null) {
            throw new IllegalStateException(
                    "snapshot table "
                            + table.name()
                            + ": version "
                            + split.version
                            + " (Iceberg snapshot "
                            + split.snapshotId
                            + ") expired before it was read; raise the table's snapshot retention"
                            + " above the flow's lag");
        }
        Schema tableSchema = table.schema();
        List<String> columns = new ArrayList<>();
        for (int i = 0; i < sourceType.getFieldCount(); i++) {
            if (i != versions.index()) {
                columns.add(sourceType.getFieldNames().get(i));
            }
        }
        Schema projected = tableSchema.select(columns);
        RowType readType = FlinkSchemaUtil.convert(projected);
        positions = new int[sourceType.getFieldCount()];
        getters = new RowData.FieldGetter[sourceType.getFieldCount()];
        for (int i = 0; i < positions.length; i++) {
            if (i == versions.index()) {
                continue;
            }
            int p = readType.getFieldIndex(sourceType.getFieldNames().get(i));
            if (p < 0) {
                throw new IllegalStateException(
                        "snapshot table "
                                + table.name()
                                + " has no column '"
                                + sourceType.getFieldNames().get(i)
                                + "' any more (version "
                                + split.version
                                + ")");
            }
            positions[i] = p;
            getters[i] = RowData.createFieldGetter(readType.getTypeAt(p), p);
        }
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> planned =
                table.newScan().useSnapshot(split.snapshotId).project(projected).planFiles()) {
            planned.forEach(tasks::add);
        }
        tasks.sort(
                Comparator.comparing((FileScanTask t) -> t.file().location())
                        .thenComparingLong(FileScanTask::start));
        RowDataFileScanTaskReader reader =
                new RowDataFileScanTaskReader(
                        tableSchema,
                        projected,
                        table.properties().get(TableProperties.DEFAULT_NAME_MAPPING),
                        true,
                        List.of());
        current = split;
        rows =
                new DataIterator<>(
                        reader, new BaseCombinedScanTask(tasks), table.io(), table.encryption());
        emitted = 0;
        while (emitted < split.emitted && rows.hasNext()) {
            rows.next();
            emitted++;
        }
    }

    private RowData toSourceRow(RowData read) {
        GenericRowData out = new GenericRowData(sourceType.getFieldCount());
        for (int i = 0; i < positions.length; i++) {
            out.setField(
                    i,
                    i == versions.index()
                            ? versions.valueOf(current.version)
                            : getters[i].getFieldOrNull(read));
        }
        return out;
    }

    @Override
    public List<TableVersionSplit> snapshotState(long checkpointId) {
        List<TableVersionSplit> state = new ArrayList<>();
        if (current != null) {
            state.add(current.withEmitted(emitted));
        }
        state.addAll(queue);
        return state;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        return current != null || !queue.isEmpty() || allSplitsAssigned()
                ? CompletableFuture.completedFuture(null)
                : super.isAvailable();
    }

    @Override
    public void close() throws Exception {
        if (rows != null) {
            rows.close();
        }
        super.close();
    }
}

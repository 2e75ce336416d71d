package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.SnapshotVersions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.flink.TableLoader;

/**
 * The FLIP-27 source of {@link IcebergSnapshots}: a {@link TableVersionEnumerator} handing out the
 * versions of an Iceberg table, a {@link TableVersionReader} reading each in full. Run it at
 * parallelism 1 (a single reader sees the versions in order).
 */
@Internal
final class IcebergSnapshotSource
        implements Source<RowData, TableVersionSplit, TableVersionEnumState>,
                ResultTypeQueryable<RowData> {
    private static final long serialVersionUID = 1L;

    private final TableLoader loader;
    private final RowType sourceType;
    private final SnapshotVersions versions;
    private final IcebergSnapshots.Versions mode;
    private final long monitorMillis;

    IcebergSnapshotSource(
            TableLoader loader,
            RowType sourceType,
            SnapshotVersions versions,
            IcebergSnapshots.Versions mode,
            long monitorMillis) {
        this.loader = loader;
        this.sourceType = sourceType;
        this.versions = versions;
        this.mode = mode;
        this.monitorMillis = monitorMillis;
    }

    @Override
    public Boundedness getBoundedness() {
        return monitorMillis > 0 ? Boundedness.CONTINUOUS_UNBOUNDED : Boundedness.BOUNDED;
    }

    @Override
    public SplitEnumerator<TableVersionSplit, TableVersionEnumState> createEnumerator(
            SplitEnumeratorContext<TableVersionSplit> context) {
        return new TableVersionEnumerator(context, loader.clone(), mode, monitorMillis, null);
    }

    @Override
    public SplitEnumerator<TableVersionSplit, TableVersionEnumState> restoreEnumerator(
            SplitEnumeratorContext<TableVersionSplit> context, TableVersionEnumState state) {
        return new TableVersionEnumerator(context, loader.clone(), mode, monitorMillis, state);
    }

    @Override
    public SimpleVersionedSerializer<TableVersionSplit> getSplitSerializer() {
        return TableVersionSplit.Serializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<TableVersionEnumState> getEnumeratorCheckpointSerializer() {
        return new TableVersionEnumState.Serializer();
    }

    @Override
    public SourceReader<RowData, TableVersionSplit> createReader(SourceReaderContext context) {
        return new TableVersionReader(context, loader.clone(), sourceType, versions);
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(sourceType);
    }
}

package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumState;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumStateSerializer;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedEnumerator;
import dev.changeflow.sources.cdf.stream.enumerator.ChangeFeedSplitPlanner;
import dev.changeflow.sources.cdf.stream.enumerator.ConsumerPositionListener;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;
import dev.changeflow.sources.cdf.stream.reader.ChangeFeedSourceReader;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplitSerializer;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
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
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * The FLIP-27 source of the streaming change feed: emits the UNPAIRED removed ({@code delete}) and
 * added ({@code insert}) rows of each version of an Iceberg table with the version as record
 * timestamp, and watermark {@code v} once every row of versions {@code <= v} was emitted. Ordering
 * and pairing happen downstream in the keyed pairing operator; use {@link ChangeFeedStream}, which
 * builds both. Created by {@link ChangeFeedStream.Builder}; the start position was resolved there.
 *
 * <p>Rows are of {@link #producedRowType()}: the change feed's row type ({@link #rowType()}), plus
 * each row's {@code _row_id} as a last column when the stream pairs by row lineage ({@link
 * #rowLineage()}: a format v3 table without identifier fields).
 */
@Internal
public final class ChangeFeedSource
        implements Source<RowData, ChangeFeedSplit, ChangeFeedEnumState>,
                ResultTypeQueryable<RowData> {

    private static final long serialVersionUID = 1L;

    private final TableLoader tableLoader;
    private final String tableName;
    private final Schema dataSchema;
    private final RowType rowType;
    private final boolean rowLineage;
    private final PlanningPosition startPosition;
    private final long boundVersion;
    private final long monitorIntervalMillis;
    private final long maxFilesPerCycle;
    private final long maxBytesPerCycle;
    @Nullable private final String consumerId;
    private final ConsumerPositionListener consumerListener;
    @Nullable private final ChangeFeedStream.StartResolver startResolver;

    ChangeFeedSource(
            TableLoader tableLoader,
            String tableName,
            Schema dataSchema,
            boolean rowLineage,
            PlanningPosition startPosition,
            long boundVersion,
            long monitorIntervalMillis,
            long maxFilesPerCycle,
            long maxBytesPerCycle,
            @Nullable String consumerId,
            ConsumerPositionListener consumerListener,
            @Nullable ChangeFeedStream.StartResolver startResolver) {
        this.tableLoader = tableLoader;
        this.tableName = tableName;
        this.dataSchema = dataSchema;
        this.rowType = StreamingAccess.rowType(dataSchema);
        this.rowLineage = rowLineage;
        this.startPosition = startPosition;
        this.boundVersion = boundVersion;
        this.monitorIntervalMillis = monitorIntervalMillis;
        this.maxFilesPerCycle = maxFilesPerCycle;
        this.maxBytesPerCycle = maxBytesPerCycle;
        this.consumerId = consumerId;
        this.consumerListener = consumerListener;
        this.startResolver = startResolver;
    }

    /** The change feed's row type (F1). */
    public RowType rowType() {
        return rowType;
    }

    /** The row type of the rows this source emits: {@link #rowType()} [+ {@code _row_id}]. */
    public RowType producedRowType() {
        return StreamingAccess.sourceRowType(dataSchema, rowLineage);
    }

    /**
     * Whether rows carry their {@code _row_id} and pair by it (v3 table without identifier fields).
     */
    public boolean rowLineage() {
        return rowLineage;
    }

    /** The data schema (the table's schema when the stream was built). */
    public Schema dataSchema() {
        return dataSchema;
    }

    /** Where a start without state begins (resolved by the builder). */
    @VisibleForTesting
    PlanningPosition startPosition() {
        return startPosition;
    }

    @Override
    public Boundedness getBoundedness() {
        return boundVersion == Long.MAX_VALUE
                ? Boundedness.CONTINUOUS_UNBOUNDED
                : Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<RowData, ChangeFeedSplit> createReader(SourceReaderContext readerContext) {
        return new ChangeFeedSourceReader(
                readerContext, tableLoader.clone(), dataSchema, rowLineage);
    }

    @Override
    public SplitEnumerator<ChangeFeedSplit, ChangeFeedEnumState> createEnumerator(
            SplitEnumeratorContext<ChangeFeedSplit> enumContext) {
        PlanningPosition start = startPosition;
        if (startResolver != null) {
            TableLoader loader = tableLoader.clone();
            try (loader) {
                loader.open();
                Table table = loader.loadTable();
                table.refresh();
                start = startResolver.start(table).resolve(table);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return restoreEnumerator(
                enumContext,
                new ChangeFeedEnumState(start, boundVersion, -1L, List.of(), Map.of()));
    }

    @Override
    public SplitEnumerator<ChangeFeedSplit, ChangeFeedEnumState> restoreEnumerator(
            SplitEnumeratorContext<ChangeFeedSplit> enumContext, ChangeFeedEnumState checkpoint) {
        TableLoader loader = tableLoader.clone();
        loader.open();
        Table table = loader.loadTable();
        return new ChangeFeedEnumerator(
                enumContext,
                new ChangeFeedSplitPlanner(table, maxFilesPerCycle, maxBytesPerCycle),
                tableName,
                monitorIntervalMillis,
                consumerId,
                consumerListener,
                checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<ChangeFeedSplit> getSplitSerializer() {
        return ChangeFeedSplitSerializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<ChangeFeedEnumState> getEnumeratorCheckpointSerializer() {
        return ChangeFeedEnumStateSerializer.INSTANCE;
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return InternalTypeInfo.of(producedRowType());
    }
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DistributionMode;
import org.apache.iceberg.SerializableTable;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.FlinkWriteOptions;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;

/**
 * Writes streams to Iceberg streaming tables with Iceberg's own Flink sink ({@link FlinkSink}):
 * Iceberg's writers produce the data, equality-delete, position-delete and (v3) deletion-vector
 * files, and Iceberg's committer commits them once per completed Flink checkpoint, exactly once (a
 * retried commit is recognised through the snapshot summary's {@code
 * flink.max-committed-checkpoint-id}, {@code flink.job-id}, {@code flink.operator-id}).
 *
 * <p><b>Why {@link FlinkSink} and not Iceberg's Sink V2 {@code IcebergSink}.</b> In Iceberg 1.11
 * the Sink V2 pre-commit aggregator collects the writers' results without their checkpoint id: the
 * files of a checkpoint that was aborted (a declined or timed-out checkpoint, or a periodic one
 * racing a stop-with-savepoint) are merged into the next checkpoint's single snapshot, where the
 * equality deletes of the later changes cannot delete the earlier rows (same sequence number) —
 * duplicate keys, observed here with a stop-with-savepoint (K4; the bug class of apache/iceberg
 * #11008, fixed for {@link FlinkSink} by #10526). {@link FlinkSink}'s committer keeps results per
 * checkpoint id and commits each checkpoint as its own snapshot.
 *
 * <p><b>Changelog write</b> ({@link #write}): the AUTO CDC operator's output, {@code +I} for a new
 * key, {@code -U}/{@code +U} for a changed row, {@code -D} for a removed row (semantics.md A3, A4).
 * The sink runs in non-upsert mode with the identifier fields as equality fields:
 *
 * <ul>
 *   <li>{@code +I}/{@code +U} append the row to a data file; no delete is written for it;
 *   <li>{@code -U}/{@code -D} must carry the <b>complete previous row</b>: when the same writer
 *       wrote that key in the current checkpoint it becomes a position delete (v2) or a deletion
 *       vector (v3) against that file, otherwise an equality delete storing the whole row, filed
 *       under the partition computed from that row — so an update that moves a row to another
 *       partition deletes it from the old one (K1), and a stored row with a null partition value is
 *       deleted from the null partition (K2);
 *   <li>distribution mode {@code none}: with equality fields, Iceberg keys the stream by the
 *       equality fields before the writers, so all changes of one identity reach one writer in the
 *       order the operator emitted them (the {@code -U} and its {@code +U} included, even when
 *       their partitions differ). {@code hash} is not used: on a table partitioned by a non-key
 *       column it would route by partition and Iceberg rejects it.
 *   <li>every snapshot it commits carries {@value StreamingTables#CHANGELOG_WRITER}{@code =<uid
 *       suffix>} in its summary: the change feed takes pre-images from the equality-delete files of
 *       a snapshot only when it and every earlier snapshot it descends from were committed by this
 *       writer (semantics.md F2), since another writer's commit makes this writer's carried rows
 *       stale;
 *   <li>the changes of one checkpoint are one Iceberg snapshot ({@code append} when no delete was
 *       written, else {@code overwrite}); after a restart, several pending checkpoints are
 *       committed as one snapshot each, in checkpoint order, so equality deletes of a later
 *       checkpoint apply to the data of an earlier one (K4).
 * </ul>
 *
 * <p><b>Row type.</b> When the stream's type is {@link InternalTypeInfo} of a {@link RowType}, the
 * rows are read with that type and Iceberg checks it against the table (same columns and order;
 * nullable into NOT NULL fails). Otherwise the rows are read with the table's own Flink type.
 *
 * <p><b>Stateless restarts with the same job id</b> (apache/iceberg #18098, application mode): a
 * pass-through {@link StatelessStartMarker} (uid {@code <suffix>-stateless-start}, chained in front
 * of the writer) resets the committer's {@code flink.max-committed-checkpoint-id} lookup when a job
 * starts without state under a job id that already committed to the table; otherwise a failover
 * before the new run's first commit would drop its restored checkpoints.
 *
 * <p>Iceberg's post-commit maintenance (compaction, snapshot expiry, orphan files) is switched off
 * explicitly, whatever the job configuration says.
 */
@PublicEvolving
public final class StreamingTableSink {

    /** What {@link FlinkSink} appends to the uid prefix for its committer's uid. */
    static final String COMMITTER_UID_SUFFIX = "-committer";

    private StreamingTableSink() {}

    /**
     * Writes an AUTO CDC changelog ({@code +I}/{@code -U}/{@code +U}/{@code -D} rows of the table's
     * row type; {@code -U}/{@code -D} carry the complete previous row) to an existing table.
     *
     * @param equalityFields the table's identifier fields: KEYS, or KEYS + {@code __START_AT} for
     *     SCD2 (not empty); a STRUCT {@code __START_AT} (multi-column SEQUENCE BY) stands for its
     *     nested fields ({@link StreamingTables#identifierFieldNames})
     * @param uidSuffix stable prefix of the sink's operator uids ({@code <suffix>-stateless-start},
     *     {@code <suffix>-writer}, {@code <suffix>-committer}) so checkpoints and savepoints
     *     restore into a changed job
     * @return the Flink sink, for further settings (name, slot sharing group)
     * @throws IllegalArgumentException when {@code equalityFields} is empty or names a column the
     *     table lacks
     */
    public static DataStreamSink<Void> write(
            DataStream<RowData> changelog,
            CatalogLoader catalogLoader,
            TableIdentifier table,
            List<String> equalityFields,
            StreamingTableOptions options,
            String uidSuffix) {
        Objects.requireNonNull(equalityFields, "equalityFields");
        if (equalityFields.isEmpty()) {
            throw new IllegalArgumentException(
                    "writing a changelog to "
                            + table
                            + " needs equality fields (the table's KEYS); "
                            + "use StreamingTableSink.append for append-only tables");
        }
        Table loaded = loadTable(catalogLoader, table);
        List<String> equalityColumns =
                StreamingTables.identifierFieldNames(loaded.schema(), equalityFields);
        // the table as loaded here: the sink does not load it a second time
        FlinkSink.Builder builder =
                builder(changelog, catalogLoader, table, options, uidSuffix, null, true)
                        .table(loaded)
                        .equalityFieldColumns(equalityColumns)
                        .upsert(false)
                        .distributionMode(DistributionMode.NONE)
                        .setSnapshotProperty(StreamingTables.CHANGELOG_WRITER, uidSuffix);
        return builder.append();
    }

    /**
     * Writes the changes of a REPLACE USING flow (semantics.md S5; {@code
     * dev.changeflow.operators.ReplaceUsingOperator}) to an existing table without identifier
     * fields: {@code +I} rows a key gains, {@code -D} complete rows it loses. A key may have many
     * rows, so the rows are identified by <b>all their columns</b> (the equality fields are every
     * column of the table), in non-upsert mode:
     *
     * <ul>
     *   <li>{@code +I} appends the row;
     *   <li>{@code -D} of a row that the same writer appended in the current checkpoint becomes a
     *       position delete (v2) or deletion vector (v3) of exactly that row; of an older row, an
     *       equality delete on all columns (nulls match nulls), which removes the committed row and
     *       nothing else;
     *   <li>every snapshot it commits carries {@value StreamingTables#CHANGELOG_WRITER}{@code =<uid
     *       suffix>}, as {@link #write} does: an equality-delete row is a complete row that the
     *       operator held for its key, so the change feed may take it as the {@code delete} row's
     *       values (semantics.md F2) instead of scanning the parent snapshot. The operator never
     *       holds two identical rows (its rows of a key are a set), so the table holds each row
     *       once and one equality-delete row removes exactly one row.
     * </ul>
     *
     * Why not the key columns as equality fields: Iceberg's {@code BaseEqualityDeltaWriter} keeps
     * one position per equality key within a checkpoint, so a second row of the same key written in
     * the same checkpoint would position-delete the first, and a delete of the key would then
     * remove only the last row written (and write no equality delete for the older rows). With all
     * columns as the identity that map holds one position per distinct row, which is sound because
     * the operator's rows of a key are a set (an identical row is never inserted twice while held).
     * Iceberg keys the stream by the equality fields, so the changes of one row reach one writer in
     * order. The rows are re-typed to the table's canonical Flink type first ({@link
     * CanonicalRows}): Iceberg reads a deleted row in that type (TIMESTAMP(6), not TIMESTAMP(3)).
     *
     * <p>A job started without state over a table that holds rows fails ({@code
     * STATE_MISSING_FOR_EXISTING_TABLE}, as for AUTO CDC, K8): the operator's per-key sequences and
     * rows are not rebuilt from the table.
     *
     * @param uidSuffix stable prefix of the sink's operator uids
     * @throws IllegalArgumentException when the table has identifier fields
     */
    public static DataStreamSink<Void> replaceUsing(
            DataStream<RowData> changes,
            CatalogLoader catalogLoader,
            TableIdentifier table,
            StreamingTableOptions options,
            String uidSuffix) {
        Table loaded = loadTable(catalogLoader, table);
        if (!loaded.schema().identifierFieldIds().isEmpty()) {
            throw new IllegalArgumentException(
                    "table "
                            + table
                            + " has identifier fields "
                            + loaded.schema().identifierFieldNames()
                            + "; a REPLACE USING flow keeps many rows per key and writes a table"
                            + " without identifier fields");
        }
        List<String> all = new java.util.ArrayList<>();
        for (org.apache.iceberg.types.Types.NestedField f : loaded.schema().columns()) {
            all.add(f.name());
        }
        RowType from = rowTypeOf(changes.getType());
        if (from == null) {
            throw new IllegalArgumentException(
                    "REPLACE USING changes into "
                            + table
                            + " must be typed InternalTypeInfo.of(RowType), got "
                            + changes.getType());
        }
        // the equality-delete writer reads deleted rows in the table's canonical Flink type
        RowType canonical = FlinkSchemaUtil.convert(loaded.schema());
        DataStream<RowData> typed =
                changes.map(new CanonicalRows(from), InternalTypeInfo.of(canonical))
                        .name("canonical types " + table)
                        .uid(uidSuffix + "-canonical-types")
                        .setParallelism(changes.getParallelism());
        // K8: the operator's state (each key's sequence and rows) is not rebuilt from the table
        return builder(typed, catalogLoader, table, options, uidSuffix, canonical, true)
                .table(loaded)
                .equalityFieldColumns(all)
                .upsert(false)
                .distributionMode(DistributionMode.NONE)
                .setSnapshotProperty(StreamingTables.CHANGELOG_WRITER, uidSuffix)
                .append();
    }

    /**
     * Writes upserts to an existing table with identifier fields, Iceberg's upsert mode: {@code +I}
     * and {@code +U} rows replace the row of their key (an equality delete by key, then an insert),
     * {@code -D} rows delete their key (only the key columns need values), {@code -U} rows are
     * ignored. Writing the same upsert twice gives the same table (idempotent), which the
     * Silver→Gold job relies on when it replays versions.
     *
     * @param keys the table's identifier fields (not empty)
     * @param uidSuffix stable prefix of the sink's operator uids
     * @throws IllegalArgumentException when {@code keys} is empty
     */
    public static DataStreamSink<Void> upsert(
            DataStream<RowData> upserts,
            CatalogLoader catalogLoader,
            TableIdentifier table,
            List<String> keys,
            StreamingTableOptions options,
            String uidSuffix) {
        Objects.requireNonNull(keys, "keys");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException(
                    "upserts into " + table + " need the table's identifier fields");
        }
        return builder(upserts, catalogLoader, table, options, uidSuffix, null, false)
                .equalityFieldColumns(List.copyOf(keys))
                .upsert(true)
                .distributionMode(DistributionMode.HASH)
                .append();
    }

    /**
     * Appends rows ({@code +I} only; other row kinds are not interpreted) to an existing table
     * without identifier fields, one snapshot per checkpoint that produced rows. The distribution
     * mode is the table's {@code write.distribution-mode} (Iceberg's default: none).
     *
     * @throws IllegalArgumentException when the table has identifier fields (Iceberg would then
     *     de-duplicate keys inside a checkpoint; write a changelog with {@link #write} instead)
     */
    public static DataStreamSink<Void> append(
            DataStream<RowData> rows,
            CatalogLoader catalogLoader,
            TableIdentifier table,
            StreamingTableOptions options,
            String uidSuffix) {
        return append(rows, catalogLoader, table, options, uidSuffix, null);
    }

    /**
     * As {@link #append(DataStream, CatalogLoader, TableIdentifier, StreamingTableOptions,
     * String)}, reading the rows with the given row type (for streams whose type information is not
     * {@link InternalTypeInfo}).
     */
    public static DataStreamSink<Void> append(
            DataStream<RowData> rows,
            CatalogLoader catalogLoader,
            TableIdentifier table,
            StreamingTableOptions options,
            String uidSuffix,
            @Nullable RowType rowType) {
        FlinkSink.Builder builder =
                builder(rows, catalogLoader, table, options, uidSuffix, rowType, false);
        Table loaded = loadTable(catalogLoader, table);
        if (!loaded.schema().identifierFieldIds().isEmpty()) {
            throw new IllegalArgumentException(
                    "table "
                            + table
                            + " has identifier fields "
                            + loaded.schema().identifierFieldNames()
                            + "; append-only writes need a table without identifier fields (write a "
                            + "changelog with StreamingTableSink.write instead)");
        }
        return builder.table(loaded).append();
    }

    private static FlinkSink.Builder builder(
            DataStream<RowData> input,
            CatalogLoader catalogLoader,
            TableIdentifier table,
            StreamingTableOptions options,
            String uidSuffix,
            @Nullable RowType explicitType,
            boolean requireEmptyWithoutState) {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(catalogLoader, "catalogLoader");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(options, "options");
        if (uidSuffix == null || uidSuffix.isBlank()) {
            throw new IllegalArgumentException("uidSuffix must not be empty (table " + table + ")");
        }
        TableLoader loader = TableLoader.fromCatalog(catalogLoader, table);
        input =
                input.transform(
                                uidSuffix + "-stateless-start",
                                input.getType(),
                                new StatelessStartMarker(
                                        loader.clone(),
                                        uidSuffix + COMMITTER_UID_SUFFIX,
                                        requireEmptyWithoutState))
                        .uid(uidSuffix + "-stateless-start")
                        .setParallelism(input.getParallelism());
        FlinkSink.Builder builder =
                FlinkSink.forRowData(input).tableLoader(loader).uidPrefix(uidSuffix);
        RowType rowType = explicitType != null ? explicitType : rowTypeOf(input.getType());
        if (rowType != null) {
            builder.resolvedSchema(FlinkSchemaUtil.toResolvedSchema(rowType));
        }
        options.writeParallelism().ifPresent(builder::writeParallelism);
        options.targetFileSizeBytes()
                .ifPresent(
                        n ->
                                builder.set(
                                        FlinkWriteOptions.TARGET_FILE_SIZE_BYTES.key(),
                                        Long.toString(n)));
        return builder;
    }

    private static Table loadTable(CatalogLoader catalogLoader, TableIdentifier table) {
        try (TableLoader loader = TableLoader.fromCatalog(catalogLoader, table)) {
            loader.open();
            return SerializableTable.copyOf(loader.loadTable());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load table " + table, e);
        }
    }

    @Nullable
    private static RowType rowTypeOf(TypeInformation<RowData> type) {
        if (type instanceof InternalTypeInfo) {
            LogicalType logical = ((InternalTypeInfo<?>) type).toLogicalType();
            if (logical instanceof RowType) {
                return (RowType) logical;
            }
        }
        return null;
    }
}

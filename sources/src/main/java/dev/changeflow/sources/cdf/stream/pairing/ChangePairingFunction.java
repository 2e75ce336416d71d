package dev.changeflow.sources.cdf.stream.pairing;

import dev.changeflow.sources.cdf.ChangeType;
import dev.changeflow.sources.cdf.StreamingAccess;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ListTypeInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.Collector;
import org.apache.iceberg.Schema;

import java.util.ArrayList;
import java.util.List;

/**
 * The keyed pairing operator of the streaming change feed (design.md "Order and pairing — how",
 * semantics.md F2, F6): buffers the unpaired rows of each row identity per version in keyed state
 * until the watermark (= the version-completion watermark of the source) reaches the version, then
 * emits that version's changes for the key: a removed and an added row of one identity become
 * {@code update_preimage} directly followed by {@code update_postimage}, identical pairs (carried
 * over by a rewrite) cancel, the rest stay {@code delete} / {@code insert}. Versions are emitted in
 * order per key (event-time timers keyed on the version fire in order).
 *
 * <p>Output rows are of the change feed's row type (F1) and carry the version as their timestamp;
 * in changelog mode (G1) they are of {@code StreamingAccess#changelogRowType} and carry their
 * change as row kind ({@link ChangeType#rowKind()}). Input rows are of the source's row type: the
 * same, plus a last {@code _row_id} column when the table pairs by row lineage (a format v3 table
 * without identifier fields; the operator is then keyed by {@code _row_id}, see {@link
 * RowIdentityKeySelector#forRowLineage}); the {@code _row_id} is dropped on output. The pure
 * decision logic is {@code StreamingAccess#pair} (over the batch feed's {@code ChangePairing});
 * this class only adapts it to keyed state and timers. Buffered rows are checkpointed ({@code
 * MapState<version, rows>}).
 */
@Internal
public final class ChangePairingFunction extends KeyedProcessFunction<Integer, RowData, RowData> {

    private static final long serialVersionUID = 1L;

    private final Schema dataSchema;
    private final RowType rowType;
    private final RowType inputType;
    private final boolean rowLineage;
    private final boolean changelog;
    private final int columns;

    private transient MapState<Long, List<RowData>> buffered;
    private transient RowData.FieldGetter[] getters;
    private transient Counter cancelled;

    /** Pairs rows of the change feed's {@code rowType} by identifier fields, else whole rows. */
    public ChangePairingFunction(Schema dataSchema, RowType rowType) {
        this(dataSchema, rowType, false);
    }

    /**
     * @param rowType the change feed's row type (output)
     * @param rowLineage whether input rows carry {@code _row_id} as a last column and pair by it
     *     ({@code StreamingAccess#sourceRowType})
     */
    public ChangePairingFunction(Schema dataSchema, RowType rowType, boolean rowLineage) {
        this(dataSchema, rowType, rowLineage, false);
    }

    /**
     * @param changelog whether to emit a changelog (G1): rows of {@code
     *     StreamingAccess#changelogRowType} (no {@code _change_type}) with the change's row kind
     *     ({@link ChangeType#rowKind()})
     */
    public ChangePairingFunction(
            Schema dataSchema, RowType rowType, boolean rowLineage, boolean changelog) {
        this.dataSchema = dataSchema;
        this.rowType = rowType;
        this.rowLineage = rowLineage;
        this.changelog = changelog;
        this.inputType = StreamingAccess.sourceRowType(dataSchema, rowLineage);
        this.columns = dataSchema.columns().size();
    }

    @Override
    public void open(OpenContext openContext) {
        buffered =
                getRuntimeContext()
                        .getMapState(
                                new MapStateDescriptor<>(
                                        "buffered-changes",
                                        Types.LONG,
                                        new ListTypeInfo<>(InternalTypeInfo.of(inputType))));
        getters = new RowData.FieldGetter[rowType.getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(rowType.getTypeAt(i), i);
        }
        cancelled = getRuntimeContext().getMetricGroup().counter("carryOverRowsCancelled");
    }

    @Override
    public void processElement(RowData row, Context ctx, Collector<RowData> out) throws Exception {
        long version = row.getLong(columns + 1);
        List<RowData> rows = buffered.get(version);
        if (rows == null) {
            rows = new ArrayList<>();
        }
        rows.add(row);
        buffered.put(version, rows);
        ctx.timerService().registerEventTimeTimer(version);
    }

    @Override
    public void onTimer(long version, OnTimerContext ctx, Collector<RowData> out) throws Exception {
        List<RowData> rows = buffered.get(version);
        if (rows == null) {
            return;
        }
        buffered.remove(version);
        List<StreamingAccess.PairedRow> changes =
                StreamingAccess.pair(dataSchema, rowLineage, rows);
        cancelled.inc(rows.size() - changes.size());
        for (StreamingAccess.PairedRow change : changes) {
            out.collect(changelog ? changelogRow(change) : changeRow(change));
        }
    }

    /** The change as a row of the change feed (F1): {@code _change_type} says what it is. */
    private RowData changeRow(StreamingAccess.PairedRow change) {
        GenericRowData copy = new GenericRowData(getters.length);
        for (int i = 0; i < getters.length; i++) {
            copy.setField(i, getters[i].getFieldOrNull(change.row));
        }
        copy.setField(columns, StringData.fromString(change.type.value()));
        return copy;
    }

    /** The change as a changelog row (G1): its row kind says what it is. */
    private RowData changelogRow(StreamingAccess.PairedRow change) {
        GenericRowData copy = new GenericRowData(change.type.rowKind(), getters.length - 1);
        for (int i = 0; i < copy.getArity(); i++) {
            // skip _change_type, the column after the data columns
            copy.setField(i, getters[i < columns ? i : i + 1].getFieldOrNull(change.row));
        }
        return copy;
    }
}

package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithKeyedOperator;
import org.apache.flink.table.data.RowData;

import java.util.List;

/**
 * The operator of {@link Scd1TruncateFunction} (SCD type 1 with truncate records, semantics.md A3):
 * Flink's keyed broadcast operator, plus the record of the row type its keyed rows are encoded with
 * ({@link AutoCdcStateDescriptors#ROW_TYPE}) and the migration of those rows at a restore after a
 * widened column (A7 item 4, {@link StateMigration}), as {@link AutoCdcApplyOperator} does.
 */
@Internal
public final class Scd1TruncateOperator
        extends CoBroadcastWithKeyedOperator<RowData, RowData, RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final AutoCdcSpec spec;
    private transient StateMigration.RowTypeRecord rowType;

    public Scd1TruncateOperator(AutoCdcSpec spec) {
        super(new Scd1TruncateFunction(spec), List.of(AutoCdcStateDescriptors.truncate()));
        this.spec = spec;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        rowType =
                StateMigration.RowTypeRecord.initialize(
                        context, getKeyedStateBackend(), spec, getUserCodeClassloader());
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        rowType.snapshot();
    }
}

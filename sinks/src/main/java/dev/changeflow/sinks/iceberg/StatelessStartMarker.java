package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Map;

/**
 * Pass-through step in front of an Iceberg {@code FlinkSink} that works around apache/iceberg
 * #18098 for that sink: it makes a job that starts <b>without state</b> but with a job id that
 * already committed to the table (application mode fixes the job id per deployment; a redeployment
 * without its HA data or savepoint starts it again with no state) invisible to the committer's
 * "already committed?" check.
 *
 * <p><b>The bug.</b> Iceberg's committer ({@code IcebergFilesCommitter}) stamps every snapshot with
 * {@code flink.job-id}, {@code flink.operator-id} and {@code flink.max-committed-checkpoint-id}.
 * When it is restored from a checkpoint it looks up, from the table's current snapshot backwards,
 * the newest snapshot with its (job id, operator id) and drops every restored checkpoint at or
 * below that snapshot's checkpoint id, and skips later checkpoints up to it. A stateless run
 * numbers its checkpoints from 1 again; until it has committed once, that lookup finds the previous
 * run's snapshot — so a failover before the run's first commit to a table loses the restored
 * checkpoints (observed: a table whose topic had stayed empty, so it held only the previous run's
 * empty snapshots, which K8 counts as empty; its first rows were lost). The Sink V2 {@code
 * IcebergSink} does the lookup on every commit, hence the title.
 *
 * <p><b>The workaround.</b> When the job starts without state, subtask 0 looks up the table like
 * the committer does and, if a snapshot of this (job id, committer operator id) exists, commits an
 * empty snapshot stamped with them and {@code flink.max-committed-checkpoint-id = -1} (the
 * committer's initial value). Every later lookup of this run then finds either that marker or the
 * run's own commits. The marker is committed before this task runs, hence before the job's first
 * checkpoint can complete; a restored job (failover, HA recovery, savepoint) never writes one, so a
 * real committed checkpoint is never masked. With random job ids (local runs) nothing is written.
 *
 * <p><b>Telling a start without state.</b> Flink sends no restore to a task none of whose operators
 * holds state in the checkpoint: every operator of it then sees {@link
 * StateInitializationContext#isRestored()} false even in a failover or a start from a savepoint.
 * The writer chain this marker sits in (projection, Iceberg's stream writer) holds none, so the
 * marker keeps a one-element union list state of its own ({@code stateless-start-seen}, written at
 * every checkpoint and savepoint) that makes a restore visible, and it also counts any attempt
 * number above 0 (a restart of this execution) as restored. (Before this state existed, a failover
 * at such a moment wrote a marker that masked the committed checkpoints: the restored committer
 * committed them again, found their deleted manifests missing and failed in every restart.) A job
 * restored from a checkpoint or savepoint of an earlier changeflow version whose marker held no
 * state is taken for a start without state once, on its first attempt.
 *
 * <p><b>K8 on a cluster.</b> For AUTO CDC tables ({@link StreamingTableSink#write}) the same start
 * without state fails with {@code STATE_MISSING_FOR_EXISTING_TABLE} when the table holds rows
 * (semantics.md K8; local runs check it before submitting). The exception is a non-recoverable
 * error: the job fails once instead of restarting in a loop.
 */
@Internal
final class StatelessStartMarker extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(StatelessStartMarker.class);

    static final String FLINK_JOB_ID = "flink.job-id";
    static final String OPERATOR_ID = "flink.operator-id";
    static final String MAX_COMMITTED_CHECKPOINT_ID = "flink.max-committed-checkpoint-id";

    /** The marker's own state: one {@code true} per subtask, so a restore reaches this task. */
    static final ListStateDescriptor<Boolean> SEEN =
            new ListStateDescriptor<>("stateless-start-seen", Types.BOOLEAN);

    private final TableLoader tableLoader;
    private final String committerOperatorId;
    private final boolean requireEmptyWithoutState;

    private transient ListState<Boolean> seen;

    /**
     * @param tableLoader the sink's table
     * @param committerUid the uid of the sink's committer operator
     */
    StatelessStartMarker(TableLoader tableLoader, String committerUid) {
        this(tableLoader, committerUid, false);
    }

    /**
     * @param requireEmptyWithoutState fail a start without state when the table holds rows (K8, for
     *     AUTO CDC tables: their state — sequences, tombstones — cannot be rebuilt from the table)
     */
    StatelessStartMarker(
            TableLoader tableLoader, String committerUid, boolean requireEmptyWithoutState) {
        this.tableLoader = tableLoader;
        this.committerOperatorId = operatorId(committerUid);
        this.requireEmptyWithoutState = requireEmptyWithoutState;
    }

    /**
     * The operator id Flink derives from a user-given uid (what {@code getOperatorUniqueID()}
     * returns for it).
     */
    @VisibleForTesting
    static String operatorId(String uid) {
        return new OperatorID(StreamGraphHasherV2.generateUserSpecifiedHash(uid)).toString();
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        seen = context.getOperatorStateStore().getUnionListState(SEEN);
        if (restored(context) || getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() != 0) {
            return;
        }
        String jobId = getRuntimeContext().getJobInfo().getJobId().toString();
        try (TableLoader loader = tableLoader.clone()) {
            loader.open();
            Table table = loader.loadTable();
            if (requireEmptyWithoutState) {
                // the cluster form of LocalIngest's check: a job started without its checkpoint or
                // savepoint (a redeployment that lost them) must not apply changes without state
                StreamingTables.checkStartWithoutState(
                        table,
                        table.name(),
                        "job " + jobId + " started without a checkpoint or savepoint",
                        "Start the job from its latest checkpoint or savepoint"
                                + " (initialSavepointPath), or drop the table to rebuild it.");
            }
            Snapshot previous = newestOf(table, jobId, committerOperatorId);
            if (previous == null
                    || "-1".equals(previous.summary().get(MAX_COMMITTED_CHECKPOINT_ID))) {
                return;
            }
            table.newAppend()
                    .set(FLINK_JOB_ID, jobId)
                    .set(OPERATOR_ID, committerOperatorId)
                    .set(MAX_COMMITTED_CHECKPOINT_ID, "-1")
                    .commit();
            LOG.info(
                    "Job {} starts without state on {}, which holds commits of the same job id up to checkpoint {}:"
                            + " committed an empty snapshot resetting flink.max-committed-checkpoint-id (apache/iceberg #18098)",
                    jobId,
                    table.name(),
                    previous.summary().get(MAX_COMMITTED_CHECKPOINT_ID));
        }
    }

    /**
     * Whether this start continues an earlier one: restored from a checkpoint or savepoint that
     * holds this operator's state, or a restart (attempt above 0) of this execution.
     */
    private boolean restored(StateInitializationContext context) {
        return context.isRestored() || getRuntimeContext().getTaskInfo().getAttemptNumber() > 0;
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        seen.update(List.of(Boolean.TRUE));
    }

    /**
     * The newest snapshot of the main branch's lineage written by this (job id, operator id), as
     * the committer finds it.
     */
    @Nullable
    static Snapshot newestOf(Table table, String jobId, String operatorId) {
        Snapshot s = table.snapshot(SnapshotRef.MAIN_BRANCH);
        while (s != null) {
            Map<String, String> summary = s.summary();
            if (jobId.equals(summary.get(FLINK_JOB_ID))
                    && operatorId.equals(summary.get(OPERATOR_ID))) {
                return s;
            }
            s = s.parentId() == null ? null : table.snapshot(s.parentId());
        }
        return null;
    }

    @Override
    public void processElement(StreamRecord<RowData> element) {
        output.collect(element);
    }
}

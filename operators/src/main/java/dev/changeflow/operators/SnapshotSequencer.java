package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.table.data.RowData;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The ordering step of AUTO CDC FROM SNAPSHOT (semantics.md A6), at parallelism 1 right after the
 * snapshot source: checks the versions and turns each end marker ({@link SnapshotVersions#endOf})
 * into the watermark that ends the snapshot for every {@link SnapshotDiffOperator} subtask.
 *
 * <ul>
 *   <li>A snapshot whose version is not above the last applied one is skipped whole — its rows and
 *       its marker — and counted ({@code skippedSnapshots}, {@code skippedSnapshotRows}), and
 *       named: a warning naming the versions and, through the {@link SnapshotOrigin}, the file, and
 *       the gauge {@link #SKIPPED_GAUGE}: versions apply in ascending order only.
 *   <li>The first snapshot (no version applied yet) with no rows fails with {@code
 *       FIRST_SNAPSHOT_EMPTY}; a row or marker without a version with {@code
 *       NULL_SNAPSHOT_VERSION}; a row with a null KEYS column with {@code MALFORMED_SNAPSHOT_ROW}
 *       (all {@link AutoCdcException}, not retried). Messages name the version and, when the flow
 *       has a {@link SnapshotOrigin}, where it came from (the snapshot file).
 *   <li>Rows of a second version before the first one's marker break the input contract: {@link
 *       IllegalStateException}.
 * </ul>
 *
 * Watermarks and watermark statuses of the source are dropped (only its end of input, {@code
 * Long.MAX_VALUE}, passes): downstream, a watermark means exactly "snapshot v ended". State
 * (operator list state, one subtask): the last applied version, the version being read and its row
 * count so far, so a restore in the middle of a snapshot goes on counting it. Counters: {@code
 * snapshots} (applied); gauge {@code lastAppliedSnapshot} (the ordering {@code long} of the last
 * applied version, {@code Long.MIN_VALUE} before the first) and gauge {@link #SKIPPED_GAUGE} in the
 * group {@code flow=<flow name>}.
 */
@Internal
public final class SnapshotSequencer extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    /** Operator state name; part of savepoint compatibility: never rename it. */
    public static final String STATE_NAME = "snapshot-sequencer";

    private static final long NONE = Long.MIN_VALUE;

    /** The metric group key under which {@link #LAST_APPLIED_GAUGE} is registered. */
    public static final String FLOW_GROUP = "flow";

    /** Gauge: the last applied version (as its ordering {@code long}). */
    public static final String LAST_APPLIED_GAUGE = "lastAppliedSnapshot";

    /**
     * Gauge (a {@code String}): the snapshots this instance skipped since it started, each as
     * {@code snapshot <version>} plus its origin in parentheses (the file), joined by {@code "; "};
     * empty when none was. At most {@link #SKIPPED_NAMED} are named, then {@code ... and <n> more}.
     */
    public static final String SKIPPED_GAUGE = "skippedSnapshotNames";

    /** How many skipped snapshots {@link #SKIPPED_GAUGE} names at most. */
    static final int SKIPPED_NAMED = 100;

    private final AutoCdcSpec spec;
    private final SnapshotVersions versions;
    @Nullable private final SnapshotOrigin origin;

    private transient ListState<Long> state;
    private transient long applied;
    private transient long current;
    private transient long rows;
    private transient int[] keyPositions;
    private transient Counter snapshots;
    private transient Counter skipped;
    private transient Counter skippedRows;
    private transient List<String> skippedNames;

    /** An ordering step whose messages name versions only (no {@link SnapshotOrigin}). */
    public SnapshotSequencer(AutoCdcSpec spec) {
        this(spec, null);
    }

    /**
     * @param origin names the input of a version in messages (the snapshot file), or null
     */
    public SnapshotSequencer(AutoCdcSpec spec, @Nullable SnapshotOrigin origin) {
        this.spec = spec;
        this.versions = new SnapshotVersions(spec);
        this.origin = origin;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        state =
                context.getOperatorStateStore()
                        .getListState(
                                new ListStateDescriptor<>(STATE_NAME, LongSerializer.INSTANCE));
        applied = NONE;
        current = NONE;
        rows = 0;
        List<Long> saved = new ArrayList<>();
        Iterable<Long> stored = state.get();
        if (stored != null) {
            stored.forEach(saved::add);
        }
        if (saved.size() == 3) {
            applied = saved.get(0);
            current = saved.get(1);
            rows = saved.get(2);
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        state.update(List.of(applied, current, rows));
    }

    @Override
    public void open() throws Exception {
        super.open();
        keyPositions = spec.keyIndexesInSource();
        snapshots = getMetricGroup().counter("snapshots");
        skipped = getMetricGroup().counter("skippedSnapshots");
        skippedRows = getMetricGroup().counter("skippedSnapshotRows");
        skippedNames = new CopyOnWriteArrayList<>();
        MetricGroup flow = getMetricGroup().addGroup(FLOW_GROUP, spec.name());
        flow.gauge(LAST_APPLIED_GAUGE, (Gauge<Long>) () -> applied);
        flow.gauge(SKIPPED_GAUGE, (Gauge<String>) this::skippedSnapshotNames);
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        RowData row = element.getValue();
        long version = versions.versionOf(row);
        boolean end = SnapshotVersions.isEnd(row);
        if (applied != NONE && version <= applied) {
            if (end) {
                skipped.inc();
                String name = SnapshotOrigin.phrase(origin, versions, version);
                if (skippedNames.size() < SKIPPED_NAMED) {
                    skippedNames.add(name);
                }
                LOG.warn(
                        "Flow '{}': skipped {}, not newer than the applied snapshot {}"
                                + " (semantics.md A6)",
                        spec.name(),
                        name,
                        versions.valueOf(applied));
            } else {
                skippedRows.inc();
            }
            return;
        }
        if (current != NONE && current != version) {
            throw new IllegalStateException(
                    "flow '"
                            + spec.name()
                            + "': snapshot "
                            + versions.valueOf(version)
                            + " started before the end marker of snapshot "
                            + versions.valueOf(current)
                            + "; a snapshot source emits one snapshot after the other");
        }
        if (end) {
            if (applied == NONE && rows == 0) {
                String where = origin == null ? null : origin.describe(version);
                throw new AutoCdcException(
                        AutoCdcException.Code.FIRST_SNAPSHOT_EMPTY,
                        "flow '"
                                + spec.name()
                                + "': the first snapshot ("
                                + versions.valueOf(version)
                                + (where == null ? "" : ", " + where)
                                + ") has no rows; an empty first snapshot is refused (a wrong path"
                                + " or an empty export?)");
            }
            applied = version;
            current = NONE;
            rows = 0;
            snapshots.inc();
            output.emitWatermark(new Watermark(version));
            return;
        }
        for (int p : keyPositions) {
            if (row.isNullAt(p)) {
                throw new AutoCdcException(
                        AutoCdcException.Code.MALFORMED_SNAPSHOT_ROW,
                        "flow '"
                                + spec.name()
                                + "': a row of "
                                + SnapshotOrigin.phrase(origin, versions, version)
                                + " has a null KEYS column '"
                                + spec.sourceType().getFieldNames().get(p)
                                + "'");
            }
        }
        current = version;
        rows++;
        output.collect(element);
    }

    /** Snapshots skipped by this instance (the {@code skippedSnapshots} counter). */
    @VisibleForTesting
    long skippedSnapshots() {
        return skipped.getCount();
    }

    /** The value of the gauge {@link #SKIPPED_GAUGE}. */
    @VisibleForTesting
    String skippedSnapshotNames() {
        long more = skipped.getCount() - skippedNames.size();
        return String.join("; ", skippedNames) + (more > 0 ? " ... and " + more + " more" : "");
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        if (mark.getTimestamp() == Long.MAX_VALUE) {
            super.processWatermark(mark);
        }
    }

    /**
     * Never forwarded: an idle source (a folder without new files) must not mark the diff's input
     * idle, or the next end-of-snapshot watermark would be ignored there.
     */
    @Override
    public void processWatermarkStatus(WatermarkStatus status) {}
}

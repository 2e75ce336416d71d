package dev.changeflow.sources.cdf.retention;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The Iceberg Flink sink committers ({@code IcebergFilesCommitter}) that committed to {@code main},
 * each with its newest commit in {@code main}'s history (F7, M2, M3).
 *
 * <p><b>Why they matter to expiry.</b> The committer stamps every snapshot it commits with {@value
 * #JOB_ID}, {@value #OPERATOR_ID} and {@value #MAX_COMMITTED_CHECKPOINT_ID}. When its job is
 * restored from a checkpoint or savepoint, it walks from {@code main}'s current snapshot to parent
 * after parent until it finds a snapshot of its (job id, operator id); the checkpoint id there is
 * the last one committed. The pending checkpoints of the restored state above that id are committed
 * again, from the temporary manifests the committer wrote under {@code metadata/} — which it
 * deleted right after their commit. When that walk ends before the committer's snapshot — the
 * snapshot, or one between it and the current snapshot, expired — the id falls back to -1 and the
 * restored job commits its last checkpoint again from deleted manifests: {@code
 * FileNotFoundException}, a job restarting forever (issue #17). So an expiry keeps {@code main}'s
 * history from the newest commit of each committer up (see {@link #live}).
 *
 * <p>A committer is keyed by {@value #OPERATOR_ID} (stable across runs of a job with uids), or by
 * {@value #JOB_ID} for snapshots without an operator id; only snapshots carrying all of {@value
 * #JOB_ID} and {@value #MAX_COMMITTED_CHECKPOINT_ID} count.
 */
@PublicEvolving
public final class FlinkCommitters {
    /** Summary property: the committing Flink job's id. */
    public static final String JOB_ID = "flink.job-id";

    /** Summary property: the committer operator's unique id. */
    public static final String OPERATOR_ID = "flink.operator-id";

    /** Summary property: the last checkpoint id committed by the job. */
    public static final String MAX_COMMITTED_CHECKPOINT_ID = "flink.max-committed-checkpoint-id";

    private static final String FLINK_PREFIX = "flink.";

    private FlinkCommitters() {}

    /**
     * One committer and its newest commit in {@code main}'s history.
     *
     * @param key the operator id, or {@code job:<job id>} without one
     * @param newest the committer's newest snapshot in {@code main}'s history
     * @param properties the {@code flink.*} summary properties of {@code newest} (job id, operator
     *     id, checkpoint id, ...), sorted by name
     */
    public record Committer(String key, Snapshot newest, Map<String, String> properties) {}

    /**
     * The committers whose restore an expiry must not break, ordered by the sequence number of
     * their newest commit, oldest first: every committer in {@code main}'s history whose newest
     * commit is younger than {@code staleAfter} at {@code now}, and always the committer of the
     * newest Flink commit (a stopped ingest may resume after any pause). A committer whose newest
     * commit is older is stale: a job restored from its state would walk past it (issue #17).
     *
     * @param staleAfter the age of a newest commit past which its committer is stale (the consumer
     *     expiry of F7)
     * @return empty for a table without snapshot or without a Flink commit in {@code main}
     */
    public static List<Committer> live(Table table, Instant now, Duration staleAfter) {
        Map<String, Committer> newest = new LinkedHashMap<>();
        for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
            Map<String, String> summary = s.summary();
            String job = summary.get(JOB_ID);
            if (job == null || summary.get(MAX_COMMITTED_CHECKPOINT_ID) == null) {
                continue;
            }
            String operator = summary.get(OPERATOR_ID);
            String key = operator != null ? operator : "job:" + job;
            newest.computeIfAbsent(key, k -> new Committer(k, s, flinkProperties(s)));
        }
        List<Committer> live = new ArrayList<>();
        boolean first = true; // ancestors come newest first, so does the map's insertion order
        long staleBefore = now.minus(staleAfter).toEpochMilli();
        for (Committer c : newest.values()) {
            if (first || c.newest().timestampMillis() >= staleBefore) {
                live.add(c);
            }
            first = false;
        }
        live.sort(Comparator.comparingLong(c -> c.newest().sequenceNumber()));
        return live;
    }

    /** The {@code flink.*} summary properties of {@code snapshot}, sorted by name. */
    public static Map<String, String> flinkProperties(Snapshot snapshot) {
        Map<String, String> flink = new TreeMap<>();
        snapshot.summary()
                .forEach(
                        (k, v) -> {
                            if (k.startsWith(FLINK_PREFIX)) {
                                flink.put(k, v);
                            }
                        });
        return flink;
    }
}

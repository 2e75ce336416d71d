package dev.changeflow.e2e;

import org.apache.iceberg.Snapshot;

import java.util.List;
import java.util.Map;

/**
 * The empty snapshot Iceberg's Flink committer ({@code IcebergFilesCommitter}) may commit at the
 * end of a bounded job: at end of input it commits every checkpoint it has not yet been told is
 * complete, one {@code RowDelta} per checkpoint when one of them has delete files, the writer's
 * empty end-of-input flush (checkpoint id {@code Long.MAX_VALUE}) included. Whether it appears
 * depends on whether the last checkpoint's completion reached the committer before the end of
 * input, so tests that count a bounded job's versions leave it out.
 */
final class EndOfInputCommits {
    private EndOfInputCommits() {}

    /**
     * A snapshot that adds and removes no file, committed for the writer's end-of-input flush
     * ({@code flink.max-committed-checkpoint-id} = Long.MAX_VALUE).
     */
    static boolean isEmpty(Snapshot snapshot) {
        Map<String, String> summary = snapshot.summary();
        return Long.toString(Long.MAX_VALUE)
                        .equals(summary.get("flink.max-committed-checkpoint-id"))
                && count(summary, "added-data-files") == 0
                && count(summary, "added-delete-files") == 0
                && count(summary, "deleted-data-files") == 0
                && count(summary, "removed-delete-files") == 0;
    }

    /** {@code ancestry} (oldest first) without a last snapshot that {@link #isEmpty}. */
    static List<Snapshot> withoutTrailingEmpty(List<Snapshot> ancestry) {
        if (!ancestry.isEmpty() && isEmpty(ancestry.get(ancestry.size() - 1))) {
            return ancestry.subList(0, ancestry.size() - 1);
        }
        return ancestry;
    }

    private static long count(Map<String, String> summary, String key) {
        return Long.parseLong(summary.getOrDefault(key, "0"));
    }
}

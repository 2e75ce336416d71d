package dev.changeflow.jobs.ingest;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.sources.cdf.ChangeType;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.table.data.RowData;

/**
 * The check of an append flow over the change feed of a table (docs/semantics.md S7): as on the
 * platform, a streaming read of a table takes the rows appended to it, so every change row must be
 * an {@code insert}; the first {@code update_preimage}, {@code update_postimage} or {@code delete}
 * fails the job with {@link AutoCdcException.Code#SOURCE_ROWS_CHANGED}, naming the flow, the source
 * table and the version (not retried, so nothing of the running checkpoint is committed).
 */
@Internal
final class AppendedRowsOnly implements FilterFunction<RowData> {
    private static final long serialVersionUID = 1L;

    private final String flow;
    private final String table;
    private final String target;
    private final int changeType;
    private final int commitVersion;

    /**
     * @param changeType index of {@code _change_type} in the rows
     * @param commitVersion index of {@code _commit_version} in the rows
     */
    AppendedRowsOnly(String flow, String table, String target, int changeType, int commitVersion) {
        this.flow = flow;
        this.table = table;
        this.target = target;
        this.changeType = changeType;
        this.commitVersion = commitVersion;
    }

    @Override
    public boolean filter(RowData row) {
        String type = row.getString(changeType).toString();
        if (type.equals(ChangeType.INSERT.value())) {
            return true;
        }
        long version = row.getLong(commitVersion);
        throw new AutoCdcException(
                AutoCdcException.Code.SOURCE_ROWS_CHANGED,
                "flow '"
                        + flow
                        + "' appends the rows added to table "
                        + table
                        + ", and version "
                        + version
                        + " of "
                        + table
                        + " changes rows that were there (a '"
                        + type
                        + "' change): an append flow cannot apply updates or deletes (the"
                        + " platform fails such a stream too; docs/semantics.md S7). "
                        + target
                        + " keeps what earlier checkpoints committed. Fix: REFRESH STREAMING TABLE "
                        + target.substring(target.lastIndexOf('.') + 1)
                        + " FULL, or run --full-refresh "
                        + target.substring(target.lastIndexOf('.') + 1)
                        + " (empties it and reads the current rows of "
                        + table
                        + ", then its later versions), or read "
                        + table
                        + " with FLOW AUTO CDC ... KEYS (...) to apply its changes");
    }
}

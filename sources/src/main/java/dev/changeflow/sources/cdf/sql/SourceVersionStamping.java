package dev.changeflow.sources.cdf.sql;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.ReplacePartitions;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Gold side of {@link SourceVersionLog} (G2): a {@link TableLoader} for Iceberg's Flink sink
 * whose tables add {@code changeflow.source-version.<db.table>} to every commit of the sink's
 * committer. The committer stamps each commit with the checkpoint id whose data it holds ({@value
 * #CHECKPOINT_ID}, set on the operation before {@code commit()}); at {@code commit()} the versions
 * the changelog reads recorded for that checkpoint ({@link SourceVersionLog#versionsAt}) are set on
 * the same operation, so they are part of the same atomic snapshot. A commit that merges several
 * pending checkpoints (an append-only commit) carries the newest id and so the newest versions,
 * which its data covers.
 *
 * <p><b>Which Silver tables</b> (issue #16): a loader made with a set of Silver tables ({@code
 * db.t}) sets the versions of those tables only — the tables the Gold table's own INSERT reads
 * ({@link ChangeflowCatalog#addInsertReads}), so that a Gold table in a job of several INSERTs
 * never claims a version of a Silver table it does not read (and the gap rule, G3, never checks it
 * against one). Without a set, every read of the job is recorded.
 *
 * <p>Only the operations the committers use are wrapped ({@code newAppend}, {@code newFastAppend},
 * {@code newRowDelta}, {@code newOverwrite}, {@code newReplacePartitions}); every other call goes
 * to the table as loaded.
 */
@Internal
public final class SourceVersionStamping implements TableLoader {
    private static final long serialVersionUID = 1L;

    /** The summary property in which Iceberg's Flink committers put the checkpoint id. */
    public static final String CHECKPOINT_ID = "flink.max-committed-checkpoint-id";

    private final TableLoader delegate;
    private final SourceVersionLog log;
    @Nullable private final TreeSet<String> tables;

    /**
     * Loads {@code delegate}'s table, stamping its commits from {@code log} with every read's
     * version.
     */
    public SourceVersionStamping(TableLoader delegate, SourceVersionLog log) {
        this(delegate, log, null);
    }

    /**
     * Loads {@code delegate}'s table, stamping its commits from {@code log} with the versions of
     * the Silver tables {@code tables} ({@code db.t}) only; null: every read's.
     */
    public SourceVersionStamping(
            TableLoader delegate, SourceVersionLog log, @Nullable Set<String> tables) {
        this.delegate = delegate;
        this.log = log;
        this.tables = tables == null ? null : new TreeSet<>(tables);
    }

    @Override
    public void open() {
        delegate.open();
    }

    @Override
    public boolean isOpen() {
        return delegate.isOpen();
    }

    @Override
    public Table loadTable() {
        Table table = delegate.loadTable();
        if (!(table instanceof BaseTable base) || table.getClass() != BaseTable.class) {
            return table;
        }
        return new StampedTable(base, log, tables);
    }

    @Override
    @SuppressWarnings({"MethodDoesntCallSuperMethod", "checkstyle:NoClone"})
    public TableLoader clone() {
        return new SourceVersionStamping(delegate.clone(), log, tables);
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate
                + " (source versions"
                + (tables == null ? "" : " of " + String.join(", ", tables))
                + " from "
                + log.dir()
                + ")";
    }

    /** A table whose snapshot-producing operations are stamped. */
    static final class StampedTable extends BaseTable {
        private static final long serialVersionUID = 1L;
        private final transient SourceVersionLog log;
        @Nullable private final transient Set<String> tables;

        StampedTable(BaseTable table, SourceVersionLog log, @Nullable Set<String> tables) {
            super(table.operations(), table.name(), table.reporter());
            this.log = log;
            this.tables = tables;
        }

        @Override
        public AppendFiles newAppend() {
            return stamped(AppendFiles.class, super.newAppend(), log, tables);
        }

        @Override
        public AppendFiles newFastAppend() {
            return stamped(AppendFiles.class, super.newFastAppend(), log, tables);
        }

        @Override
        public RowDelta newRowDelta() {
            return stamped(RowDelta.class, super.newRowDelta(), log, tables);
        }

        @Override
        public OverwriteFiles newOverwrite() {
            return stamped(OverwriteFiles.class, super.newOverwrite(), log, tables);
        }

        @Override
        public ReplacePartitions newReplacePartitions() {
            return stamped(ReplacePartitions.class, super.newReplacePartitions(), log, tables);
        }
    }

    /**
     * {@code operation}, seen through {@code type}, with {@code set(CHECKPOINT_ID, c)} remembered
     * and the source versions of {@code c} of {@code tables} (null: all) set just before {@code
     * commit()}.
     */
    static <T> T stamped(
            Class<T> type, T operation, SourceVersionLog log, @Nullable Set<String> tables) {
        long[] checkpoint = {-1L};
        Object[] self = new Object[1];
        Object proxy =
                Proxy.newProxyInstance(
                        type.getClassLoader(),
                        new Class<?>[] {type},
                        (p, method, args) -> {
                            if (method.getName().equals("set")
                                    && args != null
                                    && args.length == 2
                                    && CHECKPOINT_ID.equals(args[0])) {
                                checkpoint[0] = Long.parseLong(String.valueOf(args[1]));
                            }
                            if (method.getName().equals("commit")
                                    && (args == null || args.length == 0)
                                    && checkpoint[0] >= 0) {
                                for (Map.Entry<String, Long> v :
                                        log.versionsAt(checkpoint[0], tables).entrySet()) {
                                    ((org.apache.iceberg.SnapshotUpdate<?>) operation)
                                            .set(
                                                    SourceVersionLog.SOURCE_VERSION_PREFIX
                                                            + v.getKey(),
                                                    Long.toString(v.getValue()));
                                }
                            }
                            Object result;
                            try {
                                result = method.invoke(operation, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                            return result == operation ? self[0] : result;
                        });
        self[0] = proxy;
        return type.cast(proxy);
    }
}

package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.types.Comparators;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps a compaction's commit from dropping an equality delete that still applies to the files it
 * writes (docs/semantics.md M1). Every compaction path of changeflow commits through it: the in-job
 * compaction ({@link InJobMaintenance}), the one-off {@code maintain --rewrite} / {@code OPTIMIZE}
 * and the purge.
 *
 * <p><b>The pitfall.</b> A rewrite that keeps its starting sequence number gives the files it
 * writes the data sequence number {@code s} of the snapshot it planned on, so an equality delete an
 * ingest commits meanwhile (sequence number {@code e > s}) still removes rows from them. But
 * Iceberg's commit of a rewrite (1.11, {@code MergingSnapshotProducer}) also drops every delete
 * file older than the smallest data sequence number of the data manifests that were there before —
 * the rewrite's own new files are not counted. When the rewritten files were all those older than
 * {@code e} and a later commit added data (say: an ingest commit with only deletes at {@code e},
 * then one with inserts), the delete at {@code e} is dropped although it applies to the new files
 * of sequence number {@code s}, and the rows it deleted come back (apache/iceberg#10312, fix
 * proposed in apache/iceberg#10962, not released).
 *
 * <p><b>The guard.</b> Table operations that look at each commit attempt before it is written
 * (Iceberg retries a commit that lost a race on the refreshed table, and the drop is decided anew
 * at each attempt): if the new snapshot removes an equality delete file with data sequence number
 * {@code e} and adds a data file with a data sequence number below {@code e} in the same partition
 * spec and partition (any partition for an equality delete of an unpartitioned spec, which applies
 * to the whole table), the attempt fails with a {@link ValidationException} and nothing is
 * committed. The compaction is then given up as if a concurrent commit had conflicted and the next
 * trigger plans again on the new snapshot, where the delete is applied while rewriting; no row is
 * resurrected. Each refusal is logged here at WARN (one line naming the table and the delete file)
 * and counted per table location in this JVM ({@link #refusals}): Iceberg's in-job commit service
 * logs a failed commit and removes its files but counts it in no metric, so the in-job expiry
 * publishes the count as gauge {@code changeflowMaintenance.table.<name>.compactionsRefused}.
 * Position deletes and deletion vectors need no check: they name data files by path, and a file the
 * rewrite writes is named by none. The summary of a snapshot tells whether it removed equality
 * deletes and added data files; only then are its own manifests read.
 *
 * <p>Thread-safety: as the wrapped table's operations.
 */
@PublicEvolving
public final class RewriteCommitGuard extends ForwardingTableOperations {
    private static final Logger LOG = LoggerFactory.getLogger(RewriteCommitGuard.class);

    /** Refused commit attempts per table location, since this JVM started. */
    private static final Map<String, AtomicLong> REFUSALS = new ConcurrentHashMap<>();

    private RewriteCommitGuard(TableOperations delegate) {
        super(delegate);
    }

    /**
     * {@code table} with its commits guarded; the same instance when it exposes no table operations
     * (such a table cannot commit anyway, e.g. a read-only serialized copy).
     */
    public static Table guard(Table table) {
        Objects.requireNonNull(table, "table");
        if (!(table instanceof HasTableOperations)
                || ((HasTableOperations) table).operations() instanceof RewriteCommitGuard) {
            return table;
        }
        return new BaseTable(
                new RewriteCommitGuard(((HasTableOperations) table).operations()), table.name());
    }

    /** A loader whose tables are {@link #guard guarded}; for Iceberg's Flink maintenance tasks. */
    public static TableLoader guard(TableLoader loader) {
        Objects.requireNonNull(loader, "loader");
        return loader instanceof GuardedLoader ? loader : new GuardedLoader(loader);
    }

    /**
     * How many commit attempts of the table at {@code location} (its {@code Table.location()}) a
     * guard refused in this JVM since it started, in any job; 0 when none.
     */
    public static long refusals(String location) {
        AtomicLong n = REFUSALS.get(Objects.requireNonNull(location, "location"));
        return n == null ? 0 : n.get();
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
        if (addsSnapshot(base, metadata)) {
            check(metadata);
        }
        delegate.commit(base, metadata);
    }

    private void check(TableMetadata metadata) {
        Snapshot next = metadata.currentSnapshot();
        Map<String, String> summary = next.summary();
        if (count(summary, SnapshotSummary.REMOVED_EQ_DELETE_FILES_PROP) == 0
                || count(summary, SnapshotSummary.ADDED_FILES_PROP) == 0) {
            return;
        }
        List<DeleteFile> removed = new ArrayList<>();
        for (DeleteFile d : next.removedDeleteFiles(delegate.io())) {
            if (d.content() == FileContent.EQUALITY_DELETES) {
                removed.add(d);
            }
        }
        if (removed.isEmpty()) {
            return;
        }
        Map<Integer, PartitionSpec> specs = metadata.specsById();
        for (DataFile added : next.addedDataFiles(delegate.io())) {
            for (DeleteFile d : removed) {
                if (applies(d, added, specs)) {
                    REFUSALS.computeIfAbsent(metadata.location(), k -> new AtomicLong())
                            .incrementAndGet();
                    LOG.warn(
                            "Refused a compaction commit of {}: it would drop equality delete file"
                                    + " {} (data sequence number {}), which still applies to its new"
                                    + " data file {} (data sequence number {}); nothing committed,"
                                    + " the next compaction plans again (apache/iceberg#10312)",
                            metadata.location(),
                            d.location(),
                            d.dataSequenceNumber(),
                            added.location(),
                            added.dataSequenceNumber());
                    throw new ValidationException(
                            "refused to commit a rewrite of %s: it would drop equality delete file"
                                    + " %s (data sequence number %d), which still applies to its"
                                    + " new data file %s (data sequence number %d), and the rows"
                                    + " it deleted would come back (Iceberg drops delete files"
                                    + " older than the data files that were there before,"
                                    + " apache/iceberg#10312); nothing was committed, the next"
                                    + " compaction plans again on the current snapshot",
                            metadata.location(),
                            d.location(),
                            d.dataSequenceNumber(),
                            added.location(),
                            added.dataSequenceNumber());
                }
            }
        }
    }

    /** Iceberg's rule of which equality delete applies to which data file (spec, sequence). */
    private static boolean applies(
            DeleteFile delete, DataFile data, Map<Integer, PartitionSpec> specs) {
        if (delete.dataSequenceNumber() <= data.dataSequenceNumber()) {
            return false;
        }
        PartitionSpec spec = specs.get(delete.specId());
        if (spec == null || spec.isUnpartitioned()) {
            return true;
        }
        return delete.specId() == data.specId()
                && samePartition(spec, delete.partition(), data.partition());
    }

    private static boolean samePartition(PartitionSpec spec, StructLike a, StructLike b) {
        return Comparators.forType(spec.partitionType()).compare(a, b) == 0;
    }

    private static long count(Map<String, String> summary, String key) {
        String v = summary.get(key);
        return v == null ? 0 : Long.parseLong(v);
    }

    /** Loads the delegate's table and {@link #guard guards} it. */
    private static final class GuardedLoader implements TableLoader {
        private static final long serialVersionUID = 1L;

        private final TableLoader delegate;

        GuardedLoader(TableLoader delegate) {
            this.delegate = delegate;
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
            return guard(delegate.loadTable());
        }

        @Override
        @SuppressWarnings({"checkstyle:NoClone", "checkstyle:SuperClone"})
        public TableLoader clone() {
            return new GuardedLoader(delegate.clone());
        }

        @Override
        public void close() throws IOException {
            delegate.close();
        }

        @Override
        public String toString() {
            return "guarded " + delegate;
        }
    }
}

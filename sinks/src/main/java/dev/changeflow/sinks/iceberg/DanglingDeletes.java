package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.util.ContentFileUtil;
import org.apache.iceberg.util.PartitionMap;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Removes the delete files of a table's current snapshot that apply to no live data file any more
 * ("dangling" deletes; Spark's {@code remove-dangling-deletes}, which Iceberg's Flink API lacks).
 * After compactions that keep the starting sequence number (M1) every live data file of a partition
 * can be newer than an old delete file, which then removes no row but is still planned by every
 * scan; this step drops such files in one {@code replace} commit on Iceberg's core API ({@link
 * RewriteFiles}, no file is read or written). The table's rows do not change and the version yields
 * no change rows (docs/semantics.md F2, M1, M3).
 *
 * <p><b>Which delete files are dangling</b> (Iceberg's rules of which delete applies to which data
 * file, grouped as its delete index groups them, by partition spec id and partition):
 *
 * <ul>
 *   <li>an equality delete of a partitioned spec: its data sequence number is {@code <=} the
 *       smallest data sequence number of the live data files of its spec and partition (or there is
 *       none); an equality delete of an unpartitioned spec (a global delete, it applies to every
 *       partition): the same against the smallest of the whole table;
 *   <li>a position delete naming one data file (a file-scoped position delete or a deletion
 *       vector): that file is no longer live, or its data sequence number is greater than the
 *       delete's;
 *   <li>any other position delete: its data sequence number is {@code <} the smallest data sequence
 *       number of the live data files of its spec and partition (or there is none).
 * </ul>
 *
 * <p><b>Concurrent commits.</b> The commit is a {@link RewriteFiles} that only removes delete
 * files, validated from the snapshot the step read: it fails when a concurrent commit already
 * removed one of them ({@code failMissingDeletePaths}). Iceberg's own validation of such a rewrite
 * checks nothing else, in particular not new data files; but a data file committed meanwhile with
 * an old data sequence number (a compaction keeping its starting sequence number, or a rewrite with
 * an explicit one) could be one a removed delete still applies to. So the commit goes through table
 * operations that, at every attempt (Iceberg retries a commit that lost the race on the refreshed
 * table), look at the data files the snapshots committed after the read one added: if a removed
 * equality delete of the same partition (or a global one) has a greater data sequence number than
 * such a file, or a removed position delete of the same partition a greater or equal one, the
 * attempt fails with a {@link ValidationException} and nothing is committed. A normal ingest
 * commit's files get a new, greater sequence number and never conflict. The step then plans again
 * on the new current snapshot, at most {@value #ATTEMPTS} times.
 *
 * <p>Thread-safety: none; one call per table at a time, like the other maintenance steps.
 */
@PublicEvolving
public final class DanglingDeletes {
    /** Plans (each with one commit) tried before {@link #remove} gives up on racing commits. */
    public static final int ATTEMPTS = 3;

    private DanglingDeletes() {}

    /**
     * Removes the dangling delete files of {@code table}'s current snapshot (refreshed first) on
     * {@code main}, in one {@code replace} commit; makes no commit when none is dangling or the
     * table has no snapshot.
     *
     * @return what was removed and the versions involved
     * @throws ValidationException when concurrent commits conflicted with each of {@value
     *     #ATTEMPTS} attempts (nothing removed; run it again)
     * @throws UncheckedIOException when a manifest cannot be read
     */
    public static Result remove(Table table) {
        ValidationException last = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            table.refresh();
            Snapshot read = table.currentSnapshot();
            if (read == null) {
                return new Result(table.name(), null, null, List.of(), 0, attempt);
            }
            Plan plan = plan(table, read);
            if (plan.dangling.isEmpty()) {
                return new Result(
                        table.name(), read.sequenceNumber(), null, List.of(), plan.kept, attempt);
            }
            Guard guard = new Guard(((HasTableOperations) table).operations(), read, plan);
            RewriteFiles rewrite =
                    new BaseTable(guard, table.name())
                            .newRewrite()
                            .validateFromSnapshot(read.snapshotId());
            plan.dangling.forEach(rewrite::deleteFile);
            try {
                rewrite.commit();
            } catch (ValidationException e) {
                last = e; // a concurrent commit conflicted: plan again on top of it
                continue;
            }
            table.refresh();
            return new Result(
                    table.name(),
                    read.sequenceNumber(),
                    guard.committed.sequenceNumber(),
                    plan.dangling,
                    plan.kept,
                    attempt);
        }
        throw new ValidationException(
                last,
                "removal of dangling delete files of %s: concurrent commits conflicted with each of"
                        + " %d attempts; run it again",
                table.name(),
                ATTEMPTS);
    }

    /** The dangling delete files of {@code snapshot} and the maximum removed sequence numbers. */
    private static final class Plan {
        final List<DeleteFile> dangling = new ArrayList<>();
        int kept;

        /** Per spec and partition: max data sequence number of removed equality deletes. */
        final PartitionMap<Long> maxEq;

        /** Per spec and partition: max data sequence number of removed position deletes. */
        final PartitionMap<Long> maxPos;

        /** Max data sequence number of removed global equality deletes. */
        long maxGlobalEq = Long.MIN_VALUE;

        Plan(Map<Integer, PartitionSpec> specs) {
            maxEq = PartitionMap.create(specs);
            maxPos = PartitionMap.create(specs);
        }

        /** Whether a removed delete would apply to a data file added after the read snapshot. */
        boolean conflictsWith(DataFile added) {
            long seq = added.dataSequenceNumber();
            Long eq = maxEq.get(added.specId(), added.partition());
            Long pos = maxPos.get(added.specId(), added.partition());
            return maxGlobalEq > seq || (eq != null && eq > seq) || (pos != null && pos >= seq);
        }
    }

    private static Plan plan(Table table, Snapshot read) {
        Map<Integer, PartitionSpec> specs = table.specs();
        PartitionMap<Long> minByPartition = PartitionMap.create(specs);
        Map<String, Long> liveFiles = new HashMap<>();
        long tableMin = Long.MAX_VALUE;
        for (ManifestFile manifest : read.dataManifests(table.io())) {
            try (ManifestReader<DataFile> reader =
                    ManifestFiles.read(manifest, table.io(), specs)) {
                for (DataFile f : reader) {
                    long seq = f.dataSequenceNumber();
                    tableMin = Math.min(tableMin, seq);
                    liveFiles.put(f.location(), seq);
                    StructLike partition = f.copyWithoutStats().partition();
                    Long min = minByPartition.get(f.specId(), partition);
                    if (min == null || seq < min) {
                        minByPartition.put(f.specId(), partition, seq);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Plan plan = new Plan(specs);
        for (ManifestFile manifest : read.deleteManifests(table.io())) {
            try (ManifestReader<DeleteFile> reader =
                    ManifestFiles.readDeleteManifest(manifest, table.io(), specs)) {
                for (DeleteFile d : reader) {
                    long seq = d.dataSequenceNumber();
                    boolean global =
                            d.content() == FileContent.EQUALITY_DELETES
                                    && specs.get(d.specId()).isUnpartitioned();
                    String referenced =
                            d.content() == FileContent.POSITION_DELETES
                                    ? ContentFileUtil.referencedDataFileLocation(d)
                                    : null;
                    Long partitionMin = minByPartition.get(d.specId(), d.partition());
                    boolean applies;
                    if (global) {
                        applies = tableMin < seq;
                    } else if (d.content() == FileContent.EQUALITY_DELETES) {
                        applies = partitionMin != null && partitionMin < seq;
                    } else if (referenced != null) {
                        Long fileSeq = liveFiles.get(referenced);
                        applies = fileSeq != null && fileSeq <= seq;
                    } else {
                        applies = partitionMin != null && partitionMin <= seq;
                    }
                    if (applies) {
                        plan.kept++;
                        continue;
                    }
                    DeleteFile copy = d.copyWithoutStats();
                    plan.dangling.add(copy);
                    if (global) {
                        plan.maxGlobalEq = Math.max(plan.maxGlobalEq, seq);
                    } else {
                        PartitionMap<Long> max =
                                d.content() == FileContent.EQUALITY_DELETES
                                        ? plan.maxEq
                                        : plan.maxPos;
                        Long before = max.get(copy.specId(), copy.partition());
                        if (before == null || before < seq) {
                            max.put(copy.specId(), copy.partition(), seq);
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return plan;
    }

    /**
     * Table operations that let the removal's commit through only when no snapshot committed after
     * the read one added a data file a removed delete applies to (see the class comment).
     */
    private static final class Guard extends ForwardingTableOperations {
        private final Snapshot read;
        private final Plan plan;
        private Snapshot committed;

        Guard(TableOperations delegate, Snapshot read, Plan plan) {
            super(delegate);
            this.read = read;
            this.plan = plan;
        }

        @Override
        public void commit(TableMetadata base, TableMetadata metadata) {
            Snapshot s = base.currentSnapshot();
            while (s != null && s.snapshotId() != read.snapshotId()) {
                for (DataFile added : s.addedDataFiles(delegate.io())) {
                    if (plan.conflictsWith(added)) {
                        throw new ValidationException(
                                "snapshot %d added data file %s with data sequence number %d, to"
                                        + " which a delete file planned for removal applies",
                                s.snapshotId(), added.location(), added.dataSequenceNumber());
                    }
                }
                s = s.parentId() == null ? null : base.snapshot(s.parentId());
            }
            if (s == null) {
                throw new ValidationException(
                        "snapshot %d read for the removal of dangling delete files is no longer an"
                                + " ancestor of main",
                        read.snapshotId());
            }
            delegate.commit(base, metadata);
            committed = metadata.currentSnapshot();
        }
    }

    /** What one removal did. */
    public static final class Result {
        /** The table's name. */
        public final String table;

        /** The version (sequence number) of the snapshot planned on; null without snapshot. */
        @Nullable public final Long readVersion;

        /** The version of the {@code replace} commit; null when nothing was removed. */
        @Nullable public final Long committedVersion;

        /** The removed delete files (without column stats), in manifest order. */
        public final List<DeleteFile> removed;

        /** Live delete files of the read snapshot that still apply and were kept. */
        public final int kept;

        /** Plans made: 1, or more when concurrent commits conflicted. */
        public final int attempts;

        Result(
                String table,
                @Nullable Long readVersion,
                @Nullable Long committedVersion,
                List<DeleteFile> removed,
                int kept,
                int attempts) {
            this.table = table;
            this.readVersion = readVersion;
            this.committedVersion = committedVersion;
            this.removed = List.copyOf(removed);
            this.kept = kept;
            this.attempts = attempts;
        }

        /** Removed equality-delete files. */
        public long removedEqualityDeletes() {
            return removed.stream()
                    .filter(d -> d.content() == FileContent.EQUALITY_DELETES)
                    .count();
        }

        /** Removed position-delete files and deletion vectors. */
        public long removedPositionDeletes() {
            return removed.size() - removedEqualityDeletes();
        }

        /** One line for the command line. */
        public String describe() {
            if (readVersion == null) {
                return "Dangling delete files of " + table + ": the table has no snapshot yet";
            }
            if (committedVersion == null) {
                return String.format(
                        Locale.ROOT,
                        "Dangling delete files of %s at version %d: none (%,d delete files still"
                                + " apply); no version written",
                        table,
                        readVersion,
                        kept);
            }
            return String.format(
                    Locale.ROOT,
                    "Dangling delete files of %s at version %d: %,d removed (%,d equality, %,d"
                            + " position), %,d still apply; committed as version %d (replace)",
                    table,
                    readVersion,
                    removed.size(),
                    removedEqualityDeletes(),
                    removedPositionDeletes(),
                    kept,
                    committedVersion);
        }
    }
}

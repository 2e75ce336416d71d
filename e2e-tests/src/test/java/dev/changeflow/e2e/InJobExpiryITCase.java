package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.TableChanges;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.RuntimeIOException;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import static dev.changeflow.e2e.PacedAccountsIngest.ACCOUNTS;
import static dev.changeflow.e2e.PacedAccountsIngest.accountsUpTo;
import static dev.changeflow.e2e.PacedAccountsIngest.ancestry;
import static dev.changeflow.e2e.PacedAccountsIngest.batchBounds;
import static dev.changeflow.e2e.PacedAccountsIngest.createTables;
import static dev.changeflow.e2e.PacedAccountsIngest.environment;
import static dev.changeflow.e2e.PacedAccountsIngest.finalAccounts;
import static dev.changeflow.e2e.PacedAccountsIngest.jobConfiguration;
import static dev.changeflow.e2e.PacedAccountsIngest.rows;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * In-job expiry, manifest rewrite and orphan removal ({@link JobMaintenance}, docs/semantics.md M2,
 * F7) during a real ingest, with compaction (M1) in the same job: the recorded pgbench capture's
 * changes of the accounts with aid ≤ 2,000 are replayed in 10 batches (one per completed
 * checkpoint) into {@code public.pgbench_accounts} with {@code maintenance: true}, snapshots older
 * than 1 ms expired every 300 ms, manifests rewritten past 1 (so a rewrite happens however the
 * compactions and the ingest commits interleave: every commit after a rewrite adds a manifest), and
 * orphan files older than 1 h removed every second. A consumer is registered before the job at next
 * version 6. The job runs until the table equals PostgreSQL's and every task has acted; then:
 *
 * <ul>
 *   <li>the table equals PostgreSQL's final table exactly;
 *   <li>the oldest snapshot left is version 5 (what the consumer needs: the parent of its next
 *       version), everything older is expired, everything from 5 on is kept;
 *   <li>the consumer resuming at version 6 reads exactly its changes: the table as of version 5
 *       with the changes of 6 onward applied is the final table, and the {@code replace} versions
 *       (compactions, manifest rewrites) yield no change row;
 *   <li>a manifest rewrite is in the table's history — in a metadata file of its metadata log, as
 *       the expiry may since have removed it when it came before version 5 — and an orphan file
 *       planted two hours old under the data folder is gone.
 * </ul>
 */
class InJobExpiryITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir Path tmp;

    private static final int MAX_AID = 2_000;

    /** The consumer's next version: it needs version 5 and later. */
    private static final long CONSUMER_NEXT = 6;

    /** The summary key only Iceberg's manifest rewrite writes. */
    private static final String ENTRIES_PROCESSED = "entries-processed";

    private static final String FLOWS =
            PacedAccountsIngest.flows(
                    "in-job-expiry",
                    PacedAccountsIngest.COMPACTION_OPTIONS,
                    "    maintenance-expire-older-than: 1ms",
                    "    maintenance-expire-interval: 300ms",
                    "    maintenance-manifest-count: 1",
                    "    maintenance-orphans-older-than: 1h",
                    "    maintenance-orphans-interval: 1s");

    @Test
    void expiryKeepsWhatTheConsumerNeedsAndTheFeedStaysExact() throws Exception {
        long t0 = System.nanoTime();
        Path capture = SharedData.pgbenchCapture();
        Path warehouse = tmp.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        IngestPlan plan =
                IngestPlanner.plan(FlowsFile.parse(FLOWS, "flows.yaml"), List.of(capture));
        IngestPlan.Flow flow = plan.flows.get(0);
        assertThat(flow.config.maintenance.expiryGraphOn()).isTrue();
        assertThat(flow.config.maintenance.orphansOn()).isTrue();
        createTables(catalog, plan);
        Table table = catalog.loadTable(ACCOUNTS);
        ConsumerRegistry.forTable(table).write("reader", CONSUMER_NEXT, Instant.now());
        Path orphan = localPath(table.location()).resolve("data").resolve("orphan-0.parquet");
        Files.createDirectories(orphan.getParent());
        Files.writeString(orphan, "not referenced by any snapshot");
        Files.setLastModifiedTime(orphan, FileTime.from(Instant.now().minus(Duration.ofHours(2))));

        List<String> oracle = PgbenchCaptureITCase.sortedByKey(finalAccounts(MAX_AID));
        assertThat(oracle).hasSizeGreaterThan(MAX_AID - 50);

        StreamExecutionEnvironment env = environment(jobConfiguration(tmp.resolve("checkpoints")));
        DataStream<SourceLine> lines =
                PacedCaptureLines.stream(env, capture, batchBounds(), accountsUpTo(MAX_AID));
        IngestJob.build(lines, plan, settings);
        List<String> expected = oracle;
        JobClient job = env.executeAsync("ingest with in-job expiry");
        try {
            Await.until(
                    "the final table, expiry down to version 5, a compaction and a manifest"
                            + " rewrite after it, and the orphan removed",
                    Duration.ofSeconds(120),
                    () -> {
                        Table t = catalog.loadTable(ACCOUNTS);
                        List<Snapshot> history = ancestry(t);
                        return !history.isEmpty()
                                && oldestVersion(t) == CONSUMER_NEXT - 1
                                && history.stream().anyMatch(InJobExpiryITCase::compaction)
                                && manifestRewriteInHistory(t)
                                && !Files.exists(orphan)
                                && rows(t).equals(expected);
                    },
                    () -> progress(catalog.loadTable(ACCOUNTS), orphan, expected));
        } catch (AssertionError | RuntimeException e) {
            try {
                job.cancel().get();
            } catch (Exception cancel) {
                e.addSuppressed(cancel);
            }
            throw e;
        }
        job.cancel().get();
        System.out.printf("maintained ingest done in %.1f s%n", (System.nanoTime() - t0) / 1e9);

        table = catalog.loadTable(ACCOUNTS);
        System.out.println("versions: " + describe(table));
        assertThat(rows(table)).isEqualTo(oracle);
        assertThat(oldestVersion(table))
                .as("versions before the consumer's are expired, its own kept")
                .isEqualTo(CONSUMER_NEXT - 1);
        List<Snapshot> history = ancestry(table);
        List<Snapshot> all = new ArrayList<>();
        table.snapshots().forEach(all::add);
        assertThat(all).as("every snapshot left is on main").hasSameSizeAs(history);
        assertThat(history.get(0).sequenceNumber()).isEqualTo(CONSUMER_NEXT - 1);

        // the consumer resumes at version 6: the table as of 5 plus its changes is the table
        Map<String, String> state = new TreeMap<>();
        int columns = table.schema().columns().size();
        for (Record r : TableRows.readAtVersion(table, CONSUMER_NEXT - 1)) {
            state.put(String.valueOf(r.get(0)), line(r, columns));
        }
        Map<Long, List<Record>> changes = new TreeMap<>();
        try (CloseableIterable<Record> rows =
                TableChanges.forTable(table).startingVersion(CONSUMER_NEXT).build().read()) {
            for (Record r : rows) {
                long v = ((Number) r.getField("_commit_version")).longValue();
                changes.computeIfAbsent(v, k -> new ArrayList<>()).add(r.copy());
            }
        }
        for (Snapshot s : history) {
            if (DataOperations.REPLACE.equals(s.operation())) {
                assertThat(changes.getOrDefault(s.sequenceNumber(), List.of()))
                        .as("changes of the replace version " + s.sequenceNumber())
                        .isEmpty();
            }
        }
        int applied = 0;
        for (List<Record> version : changes.values()) {
            for (Record r : version) {
                String type = (String) r.getField("_change_type");
                if (type.equals("delete") || type.equals("update_preimage")) {
                    assertThat(state.remove(String.valueOf(r.get(0))))
                            .as("the removed row was there: " + line(r, columns))
                            .isEqualTo(line(r, columns));
                }
            }
            for (Record r : version) {
                String type = (String) r.getField("_change_type");
                if (type.equals("insert") || type.equals("update_postimage")) {
                    assertThat(state.put(String.valueOf(r.get(0)), line(r, columns)))
                            .as("no row of key " + r.get(0) + " before its insert")
                            .isNull();
                }
                applied++;
            }
        }
        assertThat(applied).as("changes after the consumer's position").isPositive();
        Map<String, String> end = new TreeMap<>();
        for (Record r : TableRows.read(table)) {
            end.put(String.valueOf(r.get(0)), line(r, columns));
        }
        assertThat(state).as("state(5) + changes(6..) = the final table").isEqualTo(end);
        assertThat(orphan).doesNotExist();
    }

    /**
     * Whether a manifest rewrite's snapshot is in the table's current metadata or in any of the
     * earlier metadata files its metadata log lists that still exist (the table keeps the last
     * {@code write.metadata.previous-versions-max}, 100): a rewrite before the consumer's version
     * is expired at the next expiry tick, so the retained snapshots alone may no longer show it.
     */
    private static boolean manifestRewriteInHistory(Table t) {
        TableMetadata current = ((HasTableOperations) t).operations().current();
        List<TableMetadata> metadata = new ArrayList<>();
        metadata.add(current);
        for (TableMetadata.MetadataLogEntry earlier : current.previousFiles()) {
            try {
                metadata.add(TableMetadataParser.read(t.io(), earlier.file()));
            } catch (NotFoundException | RuntimeIOException e) {
                if (Files.exists(localPath(earlier.file()))) {
                    throw e;
                }
                // deleted at a commit since (write.metadata.delete-after-commit.enabled)
            }
        }
        return metadata.stream()
                .flatMap(m -> m.snapshots().stream())
                .anyMatch(s -> s.summary().containsKey(ENTRIES_PROCESSED));
    }

    /** A compaction: a replace snapshot that rewrote data files (not a manifest rewrite). */
    private static boolean compaction(Snapshot s) {
        return DataOperations.REPLACE.equals(s.operation())
                && !s.summary().containsKey(ENTRIES_PROCESSED);
    }

    private static long oldestVersion(Table t) {
        long oldest = Long.MAX_VALUE;
        for (Snapshot s : t.snapshots()) {
            oldest = Math.min(oldest, s.sequenceNumber());
        }
        return oldest;
    }

    private static Path localPath(String location) {
        return location.startsWith("file:") ? Path.of(URI.create(location)) : Path.of(location);
    }

    private static String line(Record r, int columns) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < columns; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(Objects.toString(r.get(i), ""));
        }
        return b.toString();
    }

    /** Each condition the wait checks, for the timeout message. */
    private static String progress(Table t, Path orphan, List<String> expected) {
        return "oldest version "
                + oldestVersion(t)
                + ", table exact: "
                + rows(t).equals(expected)
                + ", orphan present: "
                + Files.exists(orphan)
                + ", data manifests: "
                + (t.currentSnapshot() == null
                        ? 0
                        : t.currentSnapshot().dataManifests(t.io()).size())
                + ", snapshots: "
                + describe(t);
    }

    private static String describe(Table t) {
        StringBuilder b = new StringBuilder();
        for (Snapshot s : ancestry(t)) {
            b.append(s.sequenceNumber())
                    .append(':')
                    .append(s.operation())
                    .append(s.summary().containsKey(ENTRIES_PROCESSED) ? "(manifests)" : "")
                    .append(' ');
        }
        return b.toString();
    }
}

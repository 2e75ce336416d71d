package dev.changeflow.e2e;

import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Gold SQL job with {@code SET 'changeflow.maintenance' = 'true'} ({@link GoldSql}, M1, G2): the
 * Gold upsert table of a Silver table's changelog is compacted inside the running Gold job (every 2
 * Gold commits, at most every 300 ms) while Silver gets 6 more versions of inserts, updates and
 * deletes; the Gold table ends exactly equal to Silver's final rows, with at least one compaction
 * ({@code replace}) in its history, and the cancelled job ends {@code runLocal} normally.
 */
class GoldSqlMaintenanceITCase {
    @TempDir Path tmp;

    private static final Schema ACCOUNTS =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.LongType.get()),
                            Types.NestedField.optional(2, "bid", Types.LongType.get()),
                            Types.NestedField.optional(3, "balance", Types.LongType.get())),
                    Set.of(1));

    private static final String FILE =
            String.join(
                    "\n",
                    "SET 'changeflow.maintenance' = 'true';",
                    "SET 'changeflow.maintenance-commit-count' = '2';",
                    "SET 'changeflow.maintenance-data-file-count' = '0';",
                    "SET 'changeflow.maintenance-delete-file-count' = '2';",
                    "SET 'changeflow.maintenance-interval' = '0';",
                    "SET 'changeflow.maintenance-rate-limit' = '300ms';",
                    "CREATE DATABASE IF NOT EXISTS gold;",
                    "CREATE TABLE IF NOT EXISTS gold.balances (aid BIGINT, bid BIGINT,"
                            + " balance BIGINT, PRIMARY KEY (aid) NOT ENFORCED);",
                    "INSERT INTO gold.balances SELECT aid, bid, balance FROM"
                            + " silver.`accounts$changelog`;");

    @Test
    void aMaintainedGoldJobEndsWithTheExactTableAndACompaction() throws Exception {
        long t0 = System.nanoTime();
        Path warehouse = tmp.resolve("warehouse");
        CatalogSettings settings = CatalogSettings.localHadoop(warehouse.toAbsolutePath());
        Catalog catalog = settings.open();
        Table silver =
                catalog.createTable(
                        TableIdentifier.of("silver", "accounts"),
                        ACCOUNTS,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        Map<Long, long[]> rows = new TreeMap<>();
        Random random = new Random(17);
        for (long a = 1; a <= 40; a++) {
            rows.put(a, new long[] {1 + random.nextInt(5), random.nextInt(6) * 10});
        }
        commit(silver, images(rows, rows.keySet()), List.of());

        Path file = tmp.resolve("gold_balances.sql");
        Files.writeString(file, FILE);
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.parallelism = 1;
        o.checkpointInterval = Duration.ofMillis(200);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        o.out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        AtomicReference<JobClient> job = new AtomicReference<>();
        o.onStart = job::set;
        CompletableFuture<Void> run =
                CompletableFuture.runAsync(
                        () -> {
                            try {
                                GoldSql.runLocal(GoldSql.read(file), settings, o);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        });
        TableIdentifier goldId = TableIdentifier.of("gold", "balances");
        try {
            Await.until(
                    "the Gold job's first commit",
                    Duration.ofSeconds(120),
                    () ->
                            run.isDone()
                                    || (catalog.tableExists(goldId)
                                            && catalog.loadTable(goldId).currentSnapshot() != null),
                    () -> printed.toString(StandardCharsets.UTF_8));
            assertThat(run).as("the job runs").isNotDone();
            for (int version = 2; version <= 7; version++) {
                version(silver, rows, random);
            }
            Await.until(
                    "Gold equal to Silver's final rows, and a compaction",
                    Duration.ofSeconds(60),
                    () -> {
                        Table gold = catalog.loadTable(goldId);
                        return history(gold).stream()
                                        .anyMatch(s -> DataOperations.REPLACE.equals(s.operation()))
                                && sorted(TableRows.toCsvLines(gold))
                                        .equals(sorted(silverLines(catalog)));
                    },
                    () ->
                            "Gold versions "
                                    + describe(catalog.loadTable(goldId))
                                    + "; printed: "
                                    + printed.toString(StandardCharsets.UTF_8));
        } finally {
            if (job.get() != null) {
                job.get().cancel().get();
            }
        }
        run.get();
        System.out.printf("maintained Gold job done in %.1f s%n", (System.nanoTime() - t0) / 1e9);

        Table gold = catalog.loadTable(goldId);
        List<String> expected = new ArrayList<>();
        rows.forEach((aid, r) -> expected.add(aid + "," + r[0] + "," + r[1]));
        assertThat(silverLines(catalog)).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(TableRows.toCsvLines(gold)).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(history(gold))
                .as("compactions in the Gold table's history")
                .anyMatch(s -> DataOperations.REPLACE.equals(s.operation()));
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("maintaining gold.balances in the job")
                .contains("Stopped: the Gold tables hold what the last checkpoint committed.");
    }

    private static List<String> sorted(List<String> lines) {
        List<String> out = new ArrayList<>(lines);
        out.sort(null);
        return out;
    }

    private static List<String> silverLines(Catalog catalog) {
        return TableRows.toCsvLines(catalog.loadTable(TableIdentifier.of("silver", "accounts")));
    }

    private static List<Snapshot> history(Table t) {
        t.refresh();
        List<Snapshot> out = new ArrayList<>();
        if (t.currentSnapshot() != null) {
            SnapshotUtil.currentAncestors(t).forEach(out::add);
        }
        return out;
    }

    private static String describe(Table t) {
        StringBuilder b = new StringBuilder();
        for (Snapshot s : history(t)) {
            b.append(s.sequenceNumber()).append(':').append(s.operation()).append(' ');
        }
        return b.toString();
    }

    /** One Silver version of up to 8 inserts, updates and deletes. */
    private static void version(Table silver, Map<Long, long[]> rows, Random random) {
        Set<Long> changed = new java.util.TreeSet<>();
        List<Long> deleted = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            long aid = 1 + random.nextInt(45);
            if (deleted.contains(aid) || changed.contains(aid)) {
                continue;
            }
            if (rows.containsKey(aid) && random.nextInt(4) == 0) {
                rows.remove(aid);
                deleted.add(aid);
            } else {
                long[] row = rows.computeIfAbsent(aid, k -> new long[2]);
                row[0] = 1 + random.nextInt(5);
                row[1] = random.nextInt(6) * 10;
                changed.add(aid);
            }
        }
        commit(silver, images(rows, changed), deleted);
    }

    private static List<Record> images(Map<Long, long[]> rows, Set<Long> keys) {
        List<Record> out = new ArrayList<>();
        for (long aid : new java.util.TreeSet<>(keys)) {
            GenericRecord r = GenericRecord.create(ACCOUNTS);
            r.setField("aid", aid);
            r.setField("bid", rows.get(aid)[0]);
            r.setField("balance", rows.get(aid)[1]);
            out.add(r);
        }
        return out;
    }

    /** One version as an SCD1 table gets it: equality deletes of the keys, then the new images. */
    private static void commit(Table table, List<Record> images, List<Long> deletedKeys) {
        RowDelta delta = table.newRowDelta();
        Schema keySchema = ACCOUNTS.select("aid");
        List<Record> keys = new ArrayList<>();
        for (Record image : images) {
            GenericRecord k = GenericRecord.create(keySchema);
            k.setField("aid", image.getField("aid"));
            keys.add(k);
        }
        for (long d : deletedKeys) {
            GenericRecord k = GenericRecord.create(keySchema);
            k.setField("aid", d);
            keys.add(k);
        }
        if (!images.isEmpty()) {
            delta.addRows(IcebergWrites.dataFile(table, images));
        }
        if (!keys.isEmpty()) {
            delta.addDeletes(
                    IcebergWrites.equalityDeletes(
                            table,
                            keySchema,
                            new int[] {ACCOUNTS.findField("aid").fieldId()},
                            keys));
        }
        delta.commit();
        table.refresh();
    }
}

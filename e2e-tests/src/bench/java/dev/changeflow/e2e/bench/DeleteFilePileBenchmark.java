package dev.changeflow.e2e.bench;

import dev.changeflow.e2e.IcebergWrites;
import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.DeleteFileCache;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Benchmark (not a test) of the change feed over a pile of key-only equality deletes (issue #16):
 * one read of versions 2..{@code versions + 1} of a never-compacted table written as Iceberg's
 * upsert sink writes it (per version, a key-only equality-delete file of {@code changed} random
 * keys and a data file of their new rows), with the delete-file cache of the read ({@link
 * DeleteFileCache}, default bound) and without it (bound 0: every version parses again every
 * equality-delete file applying to the parent's data files it reads, the behaviour before the
 * cache). Each version's pre-images are looked up in the parent snapshot, whose data files all have
 * the whole pile of earlier deletes applied.
 *
 * <p>Prints per mode the wall time of the read (ms, median of {@code runs} interleaved runs), the
 * rows read and the delete files parsed and served from the cache; the two modes must read the same
 * rows (else {@code WRONG}, exit status 1). Arguments {@code key=value}, all optional: {@code
 * versions=200}, {@code changed=20}, {@code accounts=10000}, {@code runs=3}, {@code
 * dir=e2e-tests/target/bench-delete-pile}. Run: {@code ./mvnw -B -q -Pbench -pl e2e-tests -am
 * verify -DskipTests -Dbench.class=dev.changeflow.e2e.bench.DeleteFilePileBenchmark
 * -Dbench.args="versions=200"}.
 */
public final class DeleteFilePileBenchmark {
    private static final TableIdentifier TABLE = TableIdentifier.of("silver", "accounts");
    private static final Schema SCHEMA =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.LongType.get()),
                            Types.NestedField.optional(2, "bid", Types.LongType.get()),
                            Types.NestedField.optional(3, "abalance", Types.LongType.get())),
                    Set.of(1));

    private DeleteFilePileBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            for (String kv : arg.split("\\s+")) {
                if (!kv.isBlank()) {
                    String[] p = kv.split("=", 2);
                    a.put(p[0], p.length > 1 ? p[1] : "");
                }
            }
        }
        int versions = Integer.parseInt(a.getOrDefault("versions", "200"));
        int changed = Integer.parseInt(a.getOrDefault("changed", "20"));
        int accounts = Integer.parseInt(a.getOrDefault("accounts", "10000"));
        int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
        Path dir = Path.of(a.getOrDefault("dir", "e2e-tests/target/bench-delete-pile"));
        LocalRunner.deleteRecursively(dir);
        Catalog catalog = CatalogSettings.localHadoop(dir.toAbsolutePath()).open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("silver"));
        Table table =
                catalog.createTable(
                        TABLE,
                        SCHEMA,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        Random random = new Random(42);
        List<Record> initial = new ArrayList<>();
        for (long aid = 1; aid <= accounts; aid++) {
            initial.add(row(aid, random));
        }
        table.newAppend().appendFile(IcebergWrites.dataFile(table, initial)).commit();
        Schema keySchema = SCHEMA.select("aid");
        for (int v = 0; v < versions; v++) {
            Set<Long> keys = new LinkedHashSet<>();
            while (keys.size() < changed) {
                keys.add(1L + random.nextInt(accounts));
            }
            List<Record> images = new ArrayList<>();
            List<Record> deleted = new ArrayList<>();
            for (long aid : keys) {
                images.add(row(aid, random));
                GenericRecord k = GenericRecord.create(keySchema);
                k.setField("aid", aid);
                deleted.add(k);
            }
            RowDelta delta =
                    table.newRowDelta()
                            .addRows(IcebergWrites.dataFile(table, images))
                            .addDeletes(
                                    IcebergWrites.equalityDeletes(
                                            table, keySchema, new int[] {1}, deleted));
            delta.commit();
        }
        System.out.printf(
                "Change feed over a pile of key-only equality deletes: %d versions of %d changed of"
                        + " %d accounts, %d cores, load average %.2f%n",
                versions,
                changed,
                accounts,
                Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.out.printf(
                "%-28s %10s %8s %14s %12s %8s%n",
                "delete-file cache", "median ms", "rows", "files parsed", "cache hits", "result");
        List<Long> cached = new ArrayList<>();
        List<Long> uncached = new ArrayList<>();
        Read lastCached = null;
        Read lastUncached = null;
        for (int r = 0; r < runs; r++) {
            lastUncached = read(catalog, versions, new DeleteFileCache(0));
            uncached.add(lastUncached.millis);
            lastCached = read(catalog, versions, new DeleteFileCache());
            cached.add(lastCached.millis);
        }
        boolean same = lastCached.rows.equals(lastUncached.rows);
        print("none (bound 0, as before)", uncached, lastUncached, same);
        print("64 MiB (default)", cached, lastCached, same);
        if (!same) {
            System.exit(1);
        }
    }

    private static Record row(long aid, Random random) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        r.setField("aid", aid);
        r.setField("bid", aid % 10);
        r.setField("abalance", (long) random.nextInt(100_000));
        return r;
    }

    /** One read of the whole range through {@code cache}. */
    private static Read read(Catalog catalog, int versions, DeleteFileCache cache)
            throws Exception {
        Table table = catalog.loadTable(TABLE);
        long start = System.nanoTime();
        List<String> rows = new ArrayList<>();
        try (CloseableIterable<Record> changes =
                TableChanges.forTable(table)
                        .startingVersion(2)
                        .endingVersion(versions + 1)
                        .deleteFileCache(cache)
                        .build()
                        .read()) {
            for (Record change : changes) {
                // aid, abalance, _change_type, _commit_version
                rows.add(
                        change.get(0)
                                + ","
                                + change.get(2)
                                + ","
                                + change.get(3)
                                + ","
                                + change.get(4));
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        return new Read(millis, rows, cache);
    }

    private static void print(String mode, List<Long> millis, Read read, boolean same) {
        List<Long> sorted = new ArrayList<>(millis);
        sorted.sort(null);
        System.out.printf(
                "%-28s %10d %8d %14d %12d %8s%n",
                mode,
                sorted.get(sorted.size() / 2),
                read.rows.size(),
                read.parsed,
                read.hits,
                same ? "same" : "WRONG");
    }

    private static final class Read {
        final long millis;
        final List<String> rows;
        final long parsed;
        final long hits;

        Read(long millis, List<String> rows, DeleteFileCache cache) {
            this.millis = millis;
            this.rows = rows;
            this.parsed = cache.loads();
            this.hits = cache.hits();
        }
    }
}

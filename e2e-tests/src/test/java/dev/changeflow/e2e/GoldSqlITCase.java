package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.gold.GoldException;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

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

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code bin/changeflow gold FILE.sql --bounded} (docs/semantics.md G2, G3) on the example file
 * {@code examples/gold_branches.sql} (its {@code starting-version} hints removed, so {@code
 * --starting-version} applies): two Silver tables written with Iceberg's API as an SCD1 table gets
 * its versions (new row images and equality deletes of the keys they replace or delete) — 6
 * versions of accounts with inserts, updates (balances and branch moves) and deletes, 5 of branches
 * with renames and a delete. The file's two INSERTs (per-branch COUNT/MIN/MAX/COUNT DISTINCT/AVG
 * with HAVING; a join of the two changelogs ranked per branch, top 2) run as one bounded job: first
 * from version 1 over accounts 1..3 and branches 1 (the recorded {@code
 * changeflow.source-version.*} checked exactly: each Gold table records the Silver tables its own
 * INSERT reads); after the other versions, a replay at 5 is {@code GOLD_VERSION_MISMATCH} and
 * commits nothing; a replay from version 2 with new checkpoints empties and rebuilds both Gold
 * tables, each of which must equal the same query evaluated in Java over Silver's final rows, and
 * record the final versions.
 */
class GoldSqlITCase {
    @TempDir Path tmp;

    static final Schema ACCOUNTS =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.LongType.get()),
                            Types.NestedField.optional(2, "bid", Types.LongType.get()),
                            Types.NestedField.optional(3, "balance", Types.LongType.get())),
                    Set.of(1));

    static final Schema BRANCHES =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "bid", Types.LongType.get()),
                            Types.NestedField.optional(2, "name", Types.StringType.get())),
                    Set.of(1));

    @Test
    void goldTablesOfAFlinkSqlFileEqualItsQueriesOverSilversFinalRows() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Map<String, String> v2 = Map.of(TableProperties.FORMAT_VERSION, "2");
        Table accounts =
                catalog.createTable(
                        TableIdentifier.of("silver", "accounts"),
                        ACCOUNTS,
                        PartitionSpec.unpartitioned(),
                        v2);
        Table branches =
                catalog.createTable(
                        TableIdentifier.of("silver", "branches"),
                        BRANCHES,
                        PartitionSpec.unpartitioned(),
                        v2);

        // Silver: 5 branches; 40 accounts over 6 versions of updates, moves and deletes
        Map<Long, String> branchRows = new TreeMap<>();
        for (long b = 1; b <= 5; b++) {
            branchRows.put(b, "branch-" + b);
        }
        commit(branches, BRANCHES, "bid", branchImages(branchRows, branchRows.keySet()), List.of());
        Map<Long, long[]> accountRows = new TreeMap<>(); // aid -> {bid, balance}
        Random random = new Random(16);
        for (long a = 1; a <= 40; a++) {
            accountRows.put(a, new long[] {1 + random.nextInt(5), random.nextInt(6) * 10});
        }
        commit(
                accounts,
                ACCOUNTS,
                "aid",
                accountImages(accountRows, accountRows.keySet()),
                List.of());
        for (int version = 2; version <= 3; version++) {
            accountsVersion(accounts, accountRows, random);
        }

        // run 1 over accounts 1..3 and branches 1, from version 1 (every read: --starting-version)
        Path file = tmp.resolve("gold_branches.sql");
        Files.writeString(
                file,
                Files.readString(
                                SharedData.repositoryRoot()
                                        .resolve("examples")
                                        .resolve("gold_branches.sql"))
                        .replace("/*+ OPTIONS('starting-version'='1') */", ""));
        assertThat(gold(warehouse, file, "1")).isZero();
        Table stats = catalog.loadTable(TableIdentifier.of("gold", "branch_stats"));
        Table top = catalog.loadTable(TableIdentifier.of("gold", "top_accounts"));
        // G2: the last commit of each Gold table records the versions of the Silver tables its
        // own INSERT reads, up to which it is complete (branch_stats reads accounts only)
        stats.refresh();
        top.refresh();
        assertThat(sourceVersions(stats))
                .isEqualTo(Map.of("changeflow.source-version.silver.accounts", "3"));
        assertThat(sourceVersions(top))
                .isEqualTo(
                        Map.of(
                                "changeflow.source-version.silver.accounts", "3",
                                "changeflow.source-version.silver.branches", "1"));
        assertThat(TableRows.toCsvLines(stats))
                .containsExactlyInAnyOrderElementsOf(branchStats(silverAccounts(catalog)));

        // accounts 4..6; branch 2 is renamed (branches 2), branch 5 deleted (branches 3: its
        // accounts leave the join), branches 3 and 4 renamed (branches 4, 5)
        for (int version = 4; version <= 6; version++) {
            accountsVersion(accounts, accountRows, random);
        }
        branchRows.put(2L, "branch-two");
        commit(branches, BRANCHES, "bid", branchImages(branchRows, Set.of(2L)), List.of());
        branchRows.remove(5L);
        commit(branches, BRANCHES, "bid", List.of(), List.of(5L));
        // branches 4 and 5: two more renames (so both tables have a version 5)
        branchRows.put(3L, "branch-three");
        commit(branches, BRANCHES, "bid", branchImages(branchRows, Set.of(3L)), List.of());
        branchRows.put(4L, "branch-four");
        commit(branches, BRANCHES, "bid", branchImages(branchRows, Set.of(4L)), List.of());

        // G3: a replay at 5 would skip accounts' version 4 (Gold holds accounts up to 3): refused,
        // before anything is committed
        long statsSnapshot = stats.currentSnapshot().snapshotId();
        long topSnapshot = top.currentSnapshot().snapshotId();
        GoldSql.Options gap = new GoldSql.Options();
        gap.warehouse = warehouse;
        gap.bounded = true;
        gap.startingVersion = 5L;
        gap.parallelism = 1;
        assertThatThrownBy(
                        () ->
                                GoldSql.runLocal(
                                        GoldSql.read(file),
                                        CatalogSettings.localHadoop(warehouse.toAbsolutePath()),
                                        gap))
                .isInstanceOfSatisfying(
                        GoldException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(GoldException.Code.GOLD_VERSION_MISMATCH))
                .hasMessageContaining("starting version 5 leaves a gap")
                .hasMessageContaining(
                        "Gold table gold.branch_stats (recorded"
                                + " changeflow.source-version.silver.accounts = 3)")
                .hasMessageContaining("Start at version 4");
        stats.refresh();
        top.refresh();
        assertThat(stats.currentSnapshot().snapshotId()).isEqualTo(statsSnapshot);
        assertThat(top.currentSnapshot().snapshotId()).isEqualTo(topSnapshot);

        // G3: replay from version 2 with new checkpoints (a local run discards the old ones):
        // accounts as of 1 then its changes 2..6, branches as of 1 then 2..5; the Gold tables are
        // emptied first and end equal to the queries over Silver's final rows
        assertThat(gold(warehouse, file, "2")).isZero();

        // Silver's final rows, read back (the oracle's input is what Silver holds, not the map)
        Map<Long, long[]> finalAccounts = new TreeMap<>();
        for (Record r :
                TableRows.read(catalog.loadTable(TableIdentifier.of("silver", "accounts")))) {
            finalAccounts.put(
                    (Long) r.getField("aid"),
                    new long[] {(Long) r.getField("bid"), (Long) r.getField("balance")});
        }
        assertThat(finalAccounts.keySet()).isEqualTo(accountRows.keySet());
        Map<Long, String> finalBranches = new TreeMap<>();
        for (Record r :
                TableRows.read(catalog.loadTable(TableIdentifier.of("silver", "branches")))) {
            finalBranches.put((Long) r.getField("bid"), (String) r.getField("name"));
        }
        assertThat(finalBranches).isEqualTo(branchRows);

        List<String> statsOracle = branchStats(finalAccounts);
        List<String> topOracle = topAccounts(finalAccounts, finalBranches);
        assertThat(statsOracle).hasSizeGreaterThan(2);
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "branch_stats"))))
                .containsExactlyInAnyOrderElementsOf(statsOracle);
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "top_accounts"))))
                .containsExactlyInAnyOrderElementsOf(topOracle);
        for (Table gold : List.of(stats, top)) {
            gold.refresh();
            assertThat(sourceVersions(gold))
                    .isEqualTo(
                            gold == stats
                                    ? Map.of("changeflow.source-version.silver.accounts", "6")
                                    : Map.of(
                                            "changeflow.source-version.silver.accounts", "6",
                                            "changeflow.source-version.silver.branches", "5"));
            // the replay's first commit empties the table and names where the rebuild of its own
            // reads starts
            Snapshot reset = null;
            for (Snapshot snap : SnapshotUtil.currentAncestors(gold)) {
                if (snap.summary().containsKey("changeflow.gold-reset.silver.accounts")) {
                    reset = snap;
                    break;
                }
            }
            assertThat(reset).isNotNull();
            assertThat(reset.summary()).containsEntry("changeflow.gold-reset.silver.accounts", "2");
            if (gold == stats) {
                assertThat(reset.summary())
                        .doesNotContainKey("changeflow.gold-reset.silver.branches");
            } else {
                assertThat(reset.summary())
                        .containsEntry("changeflow.gold-reset.silver.branches", "2");
            }
        }
    }

    static final Schema ITEMS =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.LongType.get()),
                            Types.NestedField.optional(2, "grp", Types.StringType.get()),
                            Types.NestedField.optional(3, "amount", Types.LongType.get())),
                    Set.of(1));

    /**
     * G2 {@code _source_version}: {@code SOURCE_VERSION(_commit_version)} in a grouped query is the
     * last Silver version that changed the group — an insert, an update or a delete (group a's last
     * change is the delete at 3, although its remaining row is of version 1; Flink's MAX would drop
     * back) — and {@code _commit_version AS _source_version} in a projection the version of the
     * row's last change. A replay from 3 reads Silver's snapshot of version 2, whose rows all carry
     * 2: a group or row not changed since before 3 then shows 2 (N−1), the others their last change
     * as before.
     */
    @Test
    void sourceVersionIsTheLastSilverVersionThatChangedTheGroupOrRow() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        Catalog catalog = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table items =
                catalog.createTable(
                        TableIdentifier.of("silver", "items"),
                        ITEMS,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        // 1: five inserts; 2: updates of 2 and 4; 3: delete of 2; 4: insert of 5
        commit(
                items,
                ITEMS,
                "id",
                List.of(
                        item(1, "a", 10),
                        item(2, "a", 20),
                        item(3, "b", 5),
                        item(4, "c", 1),
                        item(6, "d", 100)),
                List.of());
        commit(items, ITEMS, "id", List.of(item(2, "a", 30), item(4, "c", 2)), List.of());
        commit(items, ITEMS, "id", List.of(), List.of(2L));
        commit(items, ITEMS, "id", List.of(item(5, "b", 7)), List.of());
        Path file = tmp.resolve("source_version.sql");
        Files.writeString(
                file,
                "CREATE DATABASE IF NOT EXISTS gold;\n"
                        + "CREATE TABLE IF NOT EXISTS gold.item_groups (grp STRING, n BIGINT,"
                        + " total BIGINT, _source_version BIGINT, PRIMARY KEY (grp) NOT"
                        + " ENFORCED);\n"
                        + "CREATE TABLE IF NOT EXISTS gold.items (id BIGINT, grp STRING, amount"
                        + " BIGINT, _source_version BIGINT, PRIMARY KEY (id) NOT ENFORCED);\n"
                        + "INSERT INTO gold.item_groups SELECT grp, COUNT(*), SUM(amount),"
                        + " SOURCE_VERSION(_commit_version) FROM silver.`items$changelog` GROUP BY"
                        + " grp;\n"
                        + "INSERT INTO gold.items SELECT id, grp, amount, _commit_version AS"
                        + " _source_version FROM silver.`items$changelog`;\n"
                        // version 2 updates item 2 from 20 to 30: the filter passes its -U
                        // alone, which must delete the Gold row (upsert materializer, G1)
                        + "CREATE TABLE IF NOT EXISTS gold.small_items (id BIGINT, amount BIGINT,"
                        + " PRIMARY KEY (id) NOT ENFORCED);\n"
                        + "INSERT INTO gold.small_items SELECT id, amount FROM"
                        + " silver.`items$changelog` WHERE amount < 25;\n");

        assertThat(gold(warehouse, file, "1")).isZero();
        Table groups = catalog.loadTable(TableIdentifier.of("gold", "item_groups"));
        Table rows = catalog.loadTable(TableIdentifier.of("gold", "items"));
        assertThat(TableRows.toCsvLines(groups))
                .containsExactlyInAnyOrder("a,1,10,3", "b,2,12,4", "c,1,2,2", "d,1,100,1");
        assertThat(TableRows.toCsvLines(rows))
                .containsExactlyInAnyOrder(
                        "1,a,10,1", "3,b,5,1", "4,c,2,2", "5,b,7,4", "6,d,100,1");
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "small_items"))))
                .containsExactlyInAnyOrder("1,10", "3,5", "4,2", "5,7");

        // replay from 3: Silver's snapshot of 2 (every row carries 2), then versions 3 and 4
        assertThat(gold(warehouse, file, "3")).isZero();
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "item_groups"))))
                .containsExactlyInAnyOrder("a,1,10,3", "b,2,12,4", "c,1,2,2", "d,1,100,2");
        assertThat(TableRows.toCsvLines(catalog.loadTable(TableIdentifier.of("gold", "items"))))
                .containsExactlyInAnyOrder(
                        "1,a,10,2", "3,b,5,2", "4,c,2,2", "5,b,7,4", "6,d,100,2");
        assertThat(
                        TableRows.toCsvLines(
                                catalog.loadTable(TableIdentifier.of("gold", "small_items"))))
                .containsExactlyInAnyOrder("1,10", "3,5", "4,2", "5,7");
    }

    private static Record item(long id, String grp, long amount) {
        GenericRecord r = GenericRecord.create(ITEMS);
        r.setField("id", id);
        r.setField("grp", grp);
        r.setField("amount", amount);
        return r;
    }

    private static int gold(Path warehouse, Path file, String startingVersion) {
        return Main.execute(
                "gold",
                "--warehouse",
                warehouse.toString(),
                "--bounded",
                "--starting-version",
                startingVersion,
                "--checkpoint-interval",
                "1s",
                "--parallelism",
                "1",
                file.toString());
    }

    /** The {@code changeflow.source-version.*} properties of the table's current snapshot. */
    static Map<String, String> sourceVersions(Table table) {
        Map<String, String> out = new TreeMap<>();
        table.currentSnapshot()
                .summary()
                .forEach(
                        (k, v) -> {
                            if (k.startsWith("changeflow.source-version.")) {
                                out.put(k, v);
                            }
                        });
        return out;
    }

    private static Map<Long, long[]> silverAccounts(Catalog catalog) {
        Map<Long, long[]> rows = new TreeMap<>();
        for (Record r :
                TableRows.read(catalog.loadTable(TableIdentifier.of("silver", "accounts")))) {
            rows.put(
                    (Long) r.getField("aid"),
                    new long[] {(Long) r.getField("bid"), (Long) r.getField("balance")});
        }
        return rows;
    }

    /** One accounts version of up to 10 inserts, updates (balances, branch moves) and deletes. */
    static void accountsVersion(Table accounts, Map<Long, long[]> accountRows, Random random) {
        Set<Long> changed = new HashSet<>();
        List<Long> deleted = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            long aid = 1 + random.nextInt(45);
            if (deleted.contains(aid) || changed.contains(aid)) {
                continue;
            }
            if (accountRows.containsKey(aid) && random.nextInt(4) == 0) {
                accountRows.remove(aid);
                deleted.add(aid);
            } else {
                long[] row = accountRows.computeIfAbsent(aid, k -> new long[2]);
                if (random.nextBoolean()) {
                    row[0] = 1 + random.nextInt(5);
                }
                row[1] = random.nextInt(6) * 10;
                changed.add(aid);
            }
        }
        commit(accounts, ACCOUNTS, "aid", accountImages(accountRows, changed), deleted);
    }

    /** bid, accounts, min, max, distinct balances, avg (BIGINT, truncated) where accounts >= 2. */
    static List<String> branchStats(Map<Long, long[]> accounts) {
        Map<Long, List<Long>> byBranch = new TreeMap<>();
        accounts.values()
                .forEach(r -> byBranch.computeIfAbsent(r[0], k -> new ArrayList<>()).add(r[1]));
        List<String> out = new ArrayList<>();
        byBranch.forEach(
                (bid, balances) -> {
                    if (balances.size() < 2) {
                        return;
                    }
                    long sum = balances.stream().mapToLong(Long::longValue).sum();
                    out.add(
                            String.join(
                                    ",",
                                    String.valueOf(bid),
                                    String.valueOf(balances.size()),
                                    String.valueOf(
                                            balances.stream()
                                                    .mapToLong(Long::longValue)
                                                    .min()
                                                    .getAsLong()),
                                    String.valueOf(
                                            balances.stream()
                                                    .mapToLong(Long::longValue)
                                                    .max()
                                                    .getAsLong()),
                                    String.valueOf(new HashSet<>(balances).size()),
                                    String.valueOf(sum / balances.size())));
                });
        return out;
    }

    /** branch name, rank, aid, balance: the 2 largest balances per branch name (ties by aid). */
    static List<String> topAccounts(Map<Long, long[]> accounts, Map<Long, String> branches) {
        Map<String, List<long[]>> byName = new TreeMap<>();
        accounts.forEach(
                (aid, r) -> {
                    String name = branches.get(r[0]);
                    if (name != null) {
                        byName.computeIfAbsent(name, k -> new ArrayList<>())
                                .add(new long[] {aid, r[1]});
                    }
                });
        List<String> out = new ArrayList<>();
        byName.forEach(
                (name, rows) -> {
                    rows.sort(
                            Comparator.<long[]>comparingLong(r -> -r[1])
                                    .thenComparingLong(r -> r[0]));
                    for (int i = 0; i < Math.min(2, rows.size()); i++) {
                        out.add(name + "," + (i + 1) + "," + rows.get(i)[0] + "," + rows.get(i)[1]);
                    }
                });
        return out;
    }

    static List<Record> accountImages(Map<Long, long[]> rows, Set<Long> keys) {
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

    static List<Record> branchImages(Map<Long, String> rows, Set<Long> keys) {
        List<Record> out = new ArrayList<>();
        for (long bid : new java.util.TreeSet<>(keys)) {
            GenericRecord r = GenericRecord.create(BRANCHES);
            r.setField("bid", bid);
            r.setField("name", rows.get(bid));
            out.add(r);
        }
        return out;
    }

    /**
     * One version as an SCD1 table gets it: equality deletes of every changed or deleted key, then
     * the new images (a delete applies to older data only, so the images survive it).
     */
    static void commit(
            Table table, Schema schema, String key, List<Record> images, List<Long> deletedKeys) {
        RowDelta delta = table.newRowDelta();
        Schema keySchema = schema.select(key);
        List<Record> keys = new ArrayList<>();
        for (Record image : images) {
            GenericRecord k = GenericRecord.create(keySchema);
            k.setField(key, image.getField(key));
            keys.add(k);
        }
        for (long d : deletedKeys) {
            GenericRecord k = GenericRecord.create(keySchema);
            k.setField(key, d);
            keys.add(k);
        }
        if (!images.isEmpty()) {
            delta.addRows(IcebergWrites.dataFile(table, images));
        }
        if (!keys.isEmpty()) {
            delta.addDeletes(
                    IcebergWrites.equalityDeletes(
                            table, keySchema, new int[] {schema.findField(key).fieldId()}, keys));
        }
        delta.commit();
        table.refresh();
    }
}

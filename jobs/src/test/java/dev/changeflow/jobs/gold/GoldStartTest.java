package dev.changeflow.jobs.gold;

import dev.changeflow.sources.cdf.sql.ChangeflowCatalog;
import dev.changeflow.sources.cdf.sql.SourceVersionLog;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where a Gold SQL run starts without state ({@link GoldSqlStart}, docs/semantics.md G3): the
 * recorded version, gaps and expired versions (GOLD_VERSION_MISMATCH), the reads of each INSERT,
 * the emptying commit. (The flag form's own start rules went with it: it compiles to Gold SQL.)
 */
class GoldStartTest {
    private static final Schema SILVER =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "aid", Types.IntegerType.get()),
                            Types.NestedField.optional(2, "abalance", Types.IntegerType.get())),
                    Set.of(1));
    private static final Schema GOLD =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "bid", Types.IntegerType.get()),
                            Types.NestedField.required(2, "n", Types.LongType.get()),
                            Types.NestedField.required(
                                    3, GoldFlags.SOURCE_VERSION, Types.LongType.get())),
                    Set.of(1));

    @TempDir Path dir;
    private HadoopCatalog catalog;
    private Table silver;

    @BeforeEach
    void setUp() throws IOException {
        catalog = new HadoopCatalog(new Configuration(), dir.toUri().toString());
        silver =
                catalog.createTable(
                        TableIdentifier.of("silver", "accounts"),
                        SILVER,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        for (int v = 1; v <= 5; v++) {
            TableAppends.append(silver, SILVER, row(SILVER, v, v * 10));
        }
        // version 6: an empty commit (no change), version 7: one more row
        silver.newAppend().commit();
        TableAppends.append(silver, SILVER, row(SILVER, 7, 70));
    }

    /**
     * F4: a replay whose skipped versions have expired cannot be checked for changes; it fails
     * before any job runs, naming the recorded version and the fix.
     */
    @Test
    void sqlGoldStartOverExpiredVersionsIsAMismatch() throws IOException {
        String stamp = SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.accounts";
        Map<String, Table> gold = Map.of("gold.g", sqlGold("g", Map.of(stamp, "3")));
        silver.expireSnapshots()
                .expireOlderThan(System.currentTimeMillis() + 1)
                .retainLast(1)
                .commit();
        GoldException e =
                assertThrows(
                        GoldException.class,
                        () ->
                                GoldSqlStart.check(
                                        gold,
                                        List.of(new GoldSqlStart.Read("silver.accounts", 5L, true)),
                                        t -> silver));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, e.code());
        assertTrue(
                e.getMessage()
                        .startsWith(
                                "GOLD_VERSION_MISMATCH: Gold table gold.g (recorded"
                                        + " changeflow.source-version.silver.accounts = 3) contain"
                                        + " Silver "
                                        + silver.name()
                                        + " up to version 3, but versions from 4 on are no longer"
                                        + " available (snapshots expired), so Gold cannot continue"
                                        + " exactly: rebuild it from Silver's current snapshot"
                                        + " (omit the starting version)."),
                e.getMessage());
    }

    /** A Gold table of gold FILE.sql whose commits carry the given summary properties. */
    @SafeVarargs
    private Table sqlGold(String name, Map<String, String>... commits) throws IOException {
        Table t =
                catalog.createTable(
                        TableIdentifier.of("gold", name),
                        GOLD,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        for (Map<String, String> props : commits) {
            var append = t.newAppend();
            props.forEach(append::set);
            append.commit();
        }
        t.refresh();
        return t;
    }

    /** G2/G3: the recorded version is the newest stamp, or the start of a newer emptying run. */
    @Test
    void sqlGoldRecordedVersionIsItsNewestStampOrTheResetBeforeIt() throws IOException {
        String stamp = SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.accounts";
        String reset = GoldSqlStart.RESET_PREFIX + "silver.accounts";
        Table g = sqlGold("g", Map.of(stamp, "3"), Map.of("other", "x"));
        assertEquals(OptionalLong.of(3), GoldSqlStart.recordedVersion(g, "silver.accounts"));
        assertEquals(OptionalLong.empty(), GoldSqlStart.recordedVersion(g, "silver.branches"));
        // a replay from 2 emptied it and has not yet committed a complete snapshot: as of 1
        g.newAppend().set(reset, "2").commit();
        g.newAppend().commit();
        assertEquals(OptionalLong.of(1), GoldSqlStart.recordedVersion(g, "silver.accounts"));
        g.newAppend().set(stamp, "5").commit();
        assertEquals(OptionalLong.of(5), GoldSqlStart.recordedVersion(g, "silver.accounts"));
        assertEquals(
                OptionalLong.empty(),
                GoldSqlStart.recordedVersion(sqlGold("empty"), "silver.accounts"));
    }

    /**
     * G3's gap rule for gold FILE.sql, the same code as the definition-file job's: a start after
     * the recorded version + 1 over versions with changes fails, naming the Gold table, its
     * recorded version and the starting version; earlier starts and gaps without changes pass.
     */
    @Test
    void sqlGoldStartAfterTheRecordedVersionPlusOneIsAMismatch() throws IOException {
        String stamp = SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.accounts";
        Map<String, Table> gold = Map.of("gold.g", sqlGold("g", Map.of(stamp, "3")));
        for (long ok : new long[] {1, 3, 4}) {
            GoldSqlStart.check(
                    gold, List.of(new GoldSqlStart.Read("silver.accounts", ok, true)), t -> silver);
        }
        // no explicit starting version, or another table: nothing to check
        GoldSqlStart.check(
                gold, List.of(new GoldSqlStart.Read("silver.accounts", null, true)), t -> silver);
        GoldSqlStart.check(
                gold, List.of(new GoldSqlStart.Read("silver.branches", 9L, true)), t -> silver);
        GoldException e =
                assertThrows(
                        GoldException.class,
                        () ->
                                GoldSqlStart.check(
                                        gold,
                                        List.of(new GoldSqlStart.Read("silver.accounts", 5L, true)),
                                        t -> silver));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, e.code());
        assertEquals(
                "GOLD_VERSION_MISMATCH: starting version 5 leaves a gap: Gold table gold.g (recorded"
                        + " changeflow.source-version.silver.accounts = 3) contain Silver "
                        + silver.name()
                        + " up to version 3, and versions 4..4 hold 1 change(s) no Gold commit"
                        + " contains. Start at version 4 (or omit the starting version).",
                e.getMessage());
        // version 6 holds no change: recorded 5, a start at 7 skips nothing
        Map<String, Table> at5 = Map.of("gold.h", sqlGold("h", Map.of(stamp, "5")));
        GoldSqlStart.check(
                at5, List.of(new GoldSqlStart.Read("silver.accounts", 7L, true)), t -> silver);
        GoldException late =
                assertThrows(
                        GoldException.class,
                        () ->
                                GoldSqlStart.check(
                                        at5,
                                        List.of(new GoldSqlStart.Read("silver.accounts", 9L, true)),
                                        t -> silver));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, late.code());
    }

    /**
     * Issue #16: each Gold table is checked against the reads of its own INSERTs only — a start
     * that is a gap for a table's stale version of a Silver table it does not read passes.
     */
    @Test
    void sqlGoldIsCheckedOnlyAgainstTheReadsOfItsOwnInserts() throws IOException {
        String stamp = SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.accounts";
        // g reads branches only, yet records accounts = 3 (as every Gold commit did before #16);
        // h reads accounts and records 5
        Table g = sqlGold("g", Map.of(stamp, "3"));
        Table h = sqlGold("h", Map.of(stamp, "5"));
        Map<String, Table> gold = new java.util.LinkedHashMap<>();
        gold.put("gold.g", g);
        gold.put("gold.h", h);
        GoldSqlStart.Read accountsAt6 = new GoldSqlStart.Read("silver.accounts", 6L, true);
        GoldSqlStart.Read branchesAt6 = new GoldSqlStart.Read("silver.branches", 6L, true);
        GoldSqlStart.check(
                gold,
                Map.of("gold.g", List.of(branchesAt6), "gold.h", List.of(accountsAt6)),
                t -> silver);
        // every Gold table against every read (the form for tables written from all reads)
        GoldException e =
                assertThrows(
                        GoldException.class,
                        () ->
                                GoldSqlStart.check(
                                        gold, List.of(accountsAt6, branchesAt6), t -> silver));
        assertEquals(GoldException.Code.GOLD_VERSION_MISMATCH, e.code());
        assertTrue(e.getMessage().contains("Gold table gold.g (recorded"), e.getMessage());
    }

    /** The reads of a file, per table; a changes-only read means Gold is not rebuilt. */
    @Test
    void sqlGoldReadsArePerTableAndRebuildOnlyFromSnapshots() {
        List<GoldSqlStart.Read> reads =
                GoldSqlStart.reads(
                        List.of(
                                new ChangeflowCatalog.ChangelogRead(
                                        "silver.a", Map.of("starting-version", "4")),
                                new ChangeflowCatalog.ChangelogRead(
                                        "silver.a", Map.of("starting-version", "2")),
                                new ChangeflowCatalog.ChangelogRead("silver.b", Map.of()),
                                new ChangeflowCatalog.ChangelogRead(
                                        "silver.b",
                                        Map.of("start-mode", "snapshot-then-changes"))));
        assertEquals(
                List.of(
                        new GoldSqlStart.Read("silver.a", 2L, true),
                        new GoldSqlStart.Read("silver.b", null, true)),
                reads);
        assertTrue(GoldSqlStart.rebuilds(reads));
        assertFalse(
                GoldSqlStart.rebuilds(
                        GoldSqlStart.reads(
                                List.of(
                                        new ChangeflowCatalog.ChangelogRead(
                                                "silver.a",
                                                Map.of("start-mode", "changes-only"))))));
        assertFalse(GoldSqlStart.rebuilds(List.of()));
    }

    /** A run that rebuilds Gold empties it in one commit naming where each read starts. */
    @Test
    void sqlGoldResetEmptiesTheTableInOneMarkedCommit() throws IOException {
        Table g = sqlGold("g");
        assertFalse(GoldSqlStart.reset(g, Map.of("silver.accounts", 2L))); // no snapshot yet
        TableAppends.append(g, GOLD, row(GOLD, 1, 2L, 3L));
        long before = g.currentSnapshot().snapshotId();
        assertTrue(GoldSqlStart.reset(g, Map.of("silver.accounts", 2L)));
        g.refresh();
        assertEquals(before, g.currentSnapshot().parentId());
        assertEquals(
                "2", g.currentSnapshot().summary().get("changeflow.gold-reset.silver.accounts"));
        assertFalse(g.newScan().planFiles().iterator().hasNext());
    }

    private static Record row(Schema schema, Object... values) {
        GenericRecord r = GenericRecord.create(schema);
        for (int i = 0; i < values.length; i++) {
            r.set(i, values[i]);
        }
        return r;
    }
}

package dev.changeflow.jobs.gold;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.sql.SourceVersionLog;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * G2 and G3 per INSERT (issue #16): a Gold file whose INSERTs read different Silver tables, run by
 * {@link GoldSql#runLocal} (bounded, a local MiniCluster, a Hadoop catalog on disk). Each Gold
 * table's commits record {@code changeflow.source-version.<s>} only for the Silver tables its own
 * INSERT reads, and its emptying commit {@code changeflow.gold-reset.<s>} only for those; the gap
 * rule checks a Gold table only against the reads of its own INSERT.
 *
 * <p>Silver: {@code silver.a} and {@code silver.b} (id key, grp, amount), appended rows only. Gold:
 * {@code gold.x} = per-grp COUNT and SUM of {@code a$changelog}, {@code gold.y} the same of {@code
 * b$changelog}.
 */
class GoldSqlSourceVersionsTest {
    private static final Schema SILVER =
            new Schema(
                    List.of(
                            Types.NestedField.required(1, "id", Types.LongType.get()),
                            Types.NestedField.optional(2, "grp", Types.StringType.get()),
                            Types.NestedField.optional(3, "amount", Types.LongType.get())),
                    Set.of(1));

    private static final String CREATE =
            "CREATE TABLE IF NOT EXISTS gold.x (grp STRING, n BIGINT, total BIGINT,"
                    + " PRIMARY KEY (grp) NOT ENFORCED);\n"
                    + "CREATE TABLE IF NOT EXISTS gold.y (grp STRING, n BIGINT, total BIGINT,"
                    + " PRIMARY KEY (grp) NOT ENFORCED);\n";

    private static final String INSERT_X =
            "INSERT INTO gold.x SELECT grp, COUNT(*), SUM(amount) FROM silver.`a$changelog`"
                    + " GROUP BY grp;\n";

    private static final String INSERT_Y =
            "INSERT INTO gold.y SELECT grp, COUNT(*), SUM(amount) FROM silver.`b$changelog`"
                    + " GROUP BY grp;\n";

    private static final String A = SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.a";
    private static final String B = SourceVersionLog.SOURCE_VERSION_PREFIX + "silver.b";

    @TempDir Path warehouse;

    /** Silver a: versions 1 and 2; b: versions 1..4. */
    private Catalog silver() throws IOException {
        Catalog catalog = settings().open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("silver"));
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("gold"));
        Table a = silverTable(catalog, "a");
        append(a, row(1, "a", 10), row(2, "b", 20));
        append(a, row(3, "a", 5));
        Table b = silverTable(catalog, "b");
        append(b, row(1, "p", 1));
        append(b, row(2, "p", 2));
        append(b, row(3, "q", 3));
        append(b, row(4, "q", 4));
        return catalog;
    }

    /**
     * Both INSERTs in one job: gold.x's commits name only silver.a (at its latest version 2),
     * gold.y's only silver.b (at 4) — before, every commit named every read of the job.
     */
    @Test
    void eachGoldTableRecordsOnlyTheSilverTablesItsInsertReads() throws Exception {
        Catalog catalog = silver();
        String printed = run(CREATE + INSERT_X + INSERT_Y, "both", null);

        Table x = catalog.loadTable(TableIdentifier.of("gold", "x"));
        Table y = catalog.loadTable(TableIdentifier.of("gold", "y"));
        assertThat(sourceVersions(x.currentSnapshot())).isEqualTo(Map.of(A, "2"));
        assertThat(sourceVersions(y.currentSnapshot())).isEqualTo(Map.of(B, "4"));
        assertThat(changeflowKeys(x)).containsExactly(A);
        assertThat(changeflowKeys(y)).containsExactly(B);
        assertThat(TableRows.toCsvLines(x)).containsExactlyInAnyOrder("a,2,15", "b,1,20");
        assertThat(TableRows.toCsvLines(y)).containsExactlyInAnyOrder("p,2,3", "q,2,7");
        assertThat(GoldSqlStart.recordedVersion(x, "silver.a")).hasValue(2);
        assertThat(GoldSqlStart.recordedVersion(x, "silver.b")).isEmpty();
        assertThat(GoldSqlStart.recordedVersion(y, "silver.b")).hasValue(4);
        assertThat(GoldSqlStart.recordedVersion(y, "silver.a")).isEmpty();
        assertThat(printed)
                .contains(
                        "Gold table gold.x: complete up to Silver silver.a version 2\n"
                                + "Gold table gold.y: complete up to Silver silver.b version 4\n");
    }

    /**
     * G3 per INSERT: gold.y is left at silver.a's old version by nothing it reads. After run 1
     * (both INSERTs), silver.a gets versions 3 and 4 and a file with gold.x's INSERT alone brings
     * gold.x to a = 4. A replay of the whole file at version 5 (one past both tables' latest, 4) is
     * then fine for gold.x (recorded a = 4) and gold.y (recorded b = 4). Before, gold.y's commits
     * also recorded silver.a = 2 from run 1, and the start was refused with {@code
     * GOLD_VERSION_MISMATCH} for gold.y (a's versions 3..4 "missing" from a table that never reads
     * a).
     */
    @Test
    void aReplayIsCheckedOnlyAgainstTheReadsOfEachGoldTablesOwnInsert() throws Exception {
        Catalog catalog = silver();
        run(CREATE + INSERT_X + INSERT_Y, "both", null);
        Table a = catalog.loadTable(TableIdentifier.of("silver", "a"));
        append(a, row(4, "b", 7));
        append(a, row(5, "c", 1));
        run(CREATE + INSERT_X, "x-only", null);
        Table x = catalog.loadTable(TableIdentifier.of("gold", "x"));
        Table y = catalog.loadTable(TableIdentifier.of("gold", "y"));
        assertThat(sourceVersions(x.currentSnapshot())).isEqualTo(Map.of(A, "4"));

        String printed = run(CREATE + INSERT_X + INSERT_Y, "both", 5L);

        x.refresh();
        y.refresh();
        assertThat(sourceVersions(x.currentSnapshot())).isEqualTo(Map.of(A, "4"));
        assertThat(sourceVersions(y.currentSnapshot())).isEqualTo(Map.of(B, "4"));
        assertThat(changeflowKeys(x)).containsExactly(GoldSqlStart.RESET_PREFIX + "silver.a", A);
        assertThat(changeflowKeys(y)).containsExactly(GoldSqlStart.RESET_PREFIX + "silver.b", B);
        assertThat(x.currentSnapshot().summary())
                .doesNotContainKey(GoldSqlStart.RESET_PREFIX + "silver.b");
        assertThat(TableRows.toCsvLines(x)).containsExactlyInAnyOrder("a,2,15", "b,2,27", "c,1,1");
        assertThat(TableRows.toCsvLines(y)).containsExactlyInAnyOrder("p,2,3", "q,2,7");
        assertThat(printed)
                .contains(
                        "Gold table gold.x: emptied; rebuilt from Silver silver.a as of version 4\n")
                .contains(
                        "Gold table gold.y: emptied; rebuilt from Silver silver.b as of version 4\n");
    }

    /** Runs {@code text} as file {@code name}.sql, bounded, from {@code startingVersion}. */
    private String run(String text, String name, Long startingVersion) throws Exception {
        Path file = warehouse.resolve(name + ".sql");
        Files.writeString(file, text);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.bounded = true;
        o.parallelism = 1;
        o.checkpointInterval = Duration.ofSeconds(1);
        o.startingVersion = startingVersion;
        o.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        GoldSql.runLocal(GoldSql.read(file), settings(), o);
        return out.toString(StandardCharsets.UTF_8);
    }

    private CatalogSettings settings() {
        return CatalogSettings.localHadoop(warehouse.toAbsolutePath());
    }

    /** The {@code changeflow.source-version.*} properties of one commit. */
    private static Map<String, String> sourceVersions(Snapshot snapshot) {
        Map<String, String> out = new TreeMap<>();
        snapshot.summary()
                .forEach(
                        (k, v) -> {
                            if (k.startsWith(SourceVersionLog.SOURCE_VERSION_PREFIX)) {
                                out.put(k, v);
                            }
                        });
        return out;
    }

    /**
     * The {@code changeflow.source-version.*} and {@code changeflow.gold-reset.*} keys over every
     * commit of {@code gold}, sorted.
     */
    private static Set<String> changeflowKeys(Table gold) {
        gold.refresh();
        Set<String> keys = new TreeSet<>();
        for (Snapshot s : gold.snapshots()) {
            for (String k : s.summary().keySet()) {
                if (k.startsWith(SourceVersionLog.SOURCE_VERSION_PREFIX)
                        || k.startsWith(GoldSqlStart.RESET_PREFIX)) {
                    keys.add(k);
                }
            }
        }
        return keys;
    }

    private static Table silverTable(Catalog catalog, String name) {
        return catalog.createTable(
                TableIdentifier.of("silver", name),
                SILVER,
                PartitionSpec.unpartitioned(),
                Map.of(TableProperties.FORMAT_VERSION, "2"));
    }

    private static Record row(long id, String grp, long amount) {
        GenericRecord r = GenericRecord.create(SILVER);
        r.setField("id", id);
        r.setField("grp", grp);
        r.setField("amount", amount);
        return r;
    }

    /** One Silver version: the rows appended in one data file. */
    private static void append(Table table, Record... rows) throws IOException {
        TableAppends.append(table, SILVER, rows);
    }
}

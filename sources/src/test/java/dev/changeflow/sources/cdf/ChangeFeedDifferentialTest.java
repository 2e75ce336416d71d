package dev.changeflow.sources.cdf;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential test of F2: for every version v of tables holding appends, equality deletes (with
 * and without carried rows), position deletes (v2) or deletion vectors (v3), copy-on-write
 * overwrites and compactions, the state at v−1 with the changes of v applied equals the state at v
 * (both states read by Iceberg's own scan), and per identity a preimage is directly followed by its
 * postimage ({@link ChangeFeedDifferential}).
 */
class ChangeFeedDifferentialTest {

    private static final int VERSIONS = 30;

    @TempDir Path warehouse;

    private CdfTestTables tables;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
    }

    @ParameterizedTest(name = "format v{0}, eq-deletes-carry-rows={1}, seed {2}")
    @CsvSource({"2, true, 1", "2, false, 2", "3, true, 3", "3, false, 4"})
    void stateBeforeWithChangesAppliedEqualsStateAfter(
            int formatVersion, boolean carryRows, long seed) {
        Table table =
                tables.create(
                        "t",
                        CdfTestTables.SCHEMA,
                        PartitionSpec.unpartitioned(),
                        formatVersion,
                        carryRows
                                ? Map.of(ChangeFeedOptions.EQ_DELETES_CARRY_ROWS, "true")
                                : Map.of());
        Random random = new Random(seed);
        long nextKey = 1;
        table.newAppend()
                .appendFile(
                        tables.dataFile(
                                table, row(nextKey++, "n0", "eu"), row(nextKey++, "n0", "us")))
                .commit();
        for (int i = 1; i < VERSIONS; i++) {
            nextKey =
                    ChangeFeedDifferential.randomCommit(
                            tables, table, random, i, nextKey, formatVersion, carryRows);
        }
        table.refresh();

        List<Snapshot> ancestors = TableVersions.of(table).ancestors();
        assertThat(ancestors).hasSize(VERSIONS);
        ChangeFeedDifferential.assertEveryVersion(
                table,
                ancestors,
                new ArrayList<>(),
                ChangeFeedDifferential.changesByVersion(
                        TableChanges.forTable(table).startingVersion(0).build()));
        Set<String> operations = new TreeSet<>();
        ancestors.forEach(s -> operations.add(s.operation()));
        assertThat(operations).containsExactly("append", "delete", "overwrite", "replace");
    }
}

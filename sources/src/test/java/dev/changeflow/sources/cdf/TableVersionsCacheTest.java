package dev.changeflow.sources.cdf;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The version history and lineage the change feed reuses between reads: the same metadata file
 * gives the same {@link TableVersions}, a commit a new one that knows it; a second {@link
 * ChangelogLineage} of the table answers as the first (their shared cache), and a snapshot
 * committed later by another writer is judged on its own.
 */
class TableVersionsCacheTest {
    @TempDir Path warehouse;

    @Test
    void aNewMetadataFileGivesANewHistoryAndTheLineageStaysExact() {
        HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
        Table table = create(catalog, TableIdentifier.of("db", "t"));
        append(table, "w1");
        TableVersions first = TableVersions.of(table);
        assertThat(TableVersions.of(table)).isSameAs(first);
        assertThat(first.latestVersion()).isEqualTo(1);

        append(table, "w1");
        table.refresh();
        TableVersions second = TableVersions.of(table);
        assertThat(second).isNotSameAs(first);
        assertThat(second.latestVersion()).isEqualTo(2);
        assertThat(second.ancestors()).hasSize(2);
        // another catalog name of the same metadata file names the table its own way
        Table renamed = catalog.loadTable(TableIdentifier.of("db", "t"));
        assertThat(TableVersions.of(renamed).tableName()).isEqualTo(renamed.name());

        assertThat(new ChangelogLineage(table).carriedRowsTrusted(table.currentSnapshot()))
                .isTrue();
        append(table, null); // a commit of another writer
        table.refresh();
        ChangelogLineage again = new ChangelogLineage(table);
        assertThat(again.carriedRowsTrusted(table.snapshot(second.ancestors().get(1).snapshotId())))
                .isTrue();
        assertThat(again.hasOtherWriters(table.currentSnapshot())).isTrue();
        append(table, "w1");
        table.refresh();
        assertThat(new ChangelogLineage(table).carriedRowsTrusted(table.currentSnapshot()))
                .as("after another writer's commit, carried rows are not trusted any more")
                .isFalse();
    }

    /**
     * A Hadoop table dropped and created again at the same place writes {@code v1.metadata.json}
     * ... again: its history is its own, not the dropped table's.
     */
    @Test
    void aTableCreatedAgainAtTheSamePlaceHasItsOwnHistory() {
        HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
        TableIdentifier id = TableIdentifier.of("db", "again");
        Table first = twoCommits(create(catalog, id));
        assertThat(TableVersions.of(first).latestVersion()).isEqualTo(2);
        catalog.dropTable(id, true);
        Table second = twoCommits(create(catalog, id));
        assertThat(TableVersions.of(second).ancestors())
                .extracting(org.apache.iceberg.Snapshot::snapshotId)
                .containsExactly(
                        second.snapshots().iterator().next().snapshotId(),
                        second.currentSnapshot().snapshotId());
    }

    private static Table create(HadoopCatalog catalog, TableIdentifier id) {
        return catalog.createTable(
                id,
                new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get())),
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "2"));
    }

    /** Two appends by writer {@code w1}; returns the table refreshed. */
    private static Table twoCommits(Table table) {
        append(table, "w1");
        append(table, "w1");
        table.refresh();
        return table;
    }

    /** Appends one data file's metadata, naming changelog writer {@code writer} (or none). */
    private static void append(Table table, String writer) {
        var append =
                table.newFastAppend()
                        .appendFile(
                                org.apache.iceberg.DataFiles.builder(table.spec())
                                        .withPath(
                                                table.location()
                                                        + "/data/"
                                                        + java.util.UUID.randomUUID()
                                                        + ".parquet")
                                        .withFileSizeInBytes(10)
                                        .withRecordCount(1)
                                        .build());
        if (writer != null) {
            append.set(ChangeFeedOptions.CHANGELOG_WRITER, writer);
        }
        append.commit();
    }
}

package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotVersions;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.Path;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The snapshot-folder source's parts (semantics.md A6): versions from file names, the version order
 * of the split assigner, and the CSV / JSON reader with its end marker and restore.
 */
class SnapshotFilesTest {
    static final String V = SnapshotVersions.VERSION_COLUMN;

    @TempDir java.nio.file.Path dir;

    static AutoCdcSpec spec() {
        RowType type =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            VarCharType.STRING_TYPE,
                            new IntType(),
                            new DecimalType(10, 2),
                            new DateType(),
                            new BigIntType()
                        },
                        new String[] {"id", "city", "n", "amount", "day", V});
        return AutoCdcSpec.builder("cities", type)
                .metadataColumns(List.of(V))
                .keys("id")
                .sequenceBy(V)
                .build();
    }

    @Test
    void versionsComeFromFileNames() {
        assertThat(SnapshotFileNames.version("snapshot_10.csv")).isEqualTo(10L);
        assertThat(SnapshotFileNames.version("export_2024_07.json")).isEqualTo(7L);
        assertThat(SnapshotFileNames.version("3.jsonl.gz")).isEqualTo(3L);
        assertThat(SnapshotFileNames.format("snapshot_1.CSV"))
                .isEqualTo(SnapshotFileNames.Format.CSV);
        assertThat(SnapshotFileNames.format("snapshot_1.jsonl.gz"))
                .isEqualTo(SnapshotFileNames.Format.JSON);
        assertThatThrownBy(() -> SnapshotFileNames.version("snapshot_latest.csv"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageStartingWith(
                        "SNAPSHOT_VERSION_NOT_SORTABLE: snapshot file 'snapshot_latest.csv' has no"
                                + " integer version in its name");
        assertThatThrownBy(() -> SnapshotFileNames.version("snapshot_1.parquet"))
                .isInstanceOf(AutoCdcException.class);
    }

    @Test
    void listingOrdersByVersionAndRefusesTwoFilesOfOneVersion() throws IOException {
        Files.writeString(dir.resolve("snapshot_10.csv"), "id\n");
        Files.writeString(dir.resolve("snapshot_9.csv"), "id\n");
        Files.writeString(dir.resolve(".snapshot_9.csv.crc"), "x");
        Files.writeString(dir.resolve("_SUCCESS"), "");
        assertThat(SnapshotFileNames.list(dir).keySet()).containsExactly(9L, 10L);
        Files.writeString(dir.resolve("snapshot_9.json"), "{}\n");
        assertThatThrownBy(() -> SnapshotFileNames.list(dir))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("both have version 9; one file per version");
    }

    @Test
    void assignerHandsOutFilesInVersionOrder() {
        SnapshotSplitAssigner a =
                new SnapshotSplitAssigner(
                        List.of(split("snapshot_10.csv"), split("snapshot_9.csv")));
        a.addSplits(List.of(split("snapshot_1.json")));
        List<String> order = new ArrayList<>();
        for (Optional<FileSourceSplit> s = a.getNext(null); s.isPresent(); s = a.getNext(null)) {
            order.add(s.get().path().getName());
        }
        assertThat(order).containsExactly("snapshot_1.json", "snapshot_9.csv", "snapshot_10.csv");
        assertThatThrownBy(() -> a.addSplits(List.of(split("cities.csv"))))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("SNAPSHOT_VERSION_NOT_SORTABLE");
    }

    @Test
    void csvRowsByHeaderNameThenTheEndMarker() throws IOException {
        Files.writeString(
                dir.resolve("snapshot_2.csv"),
                "city,extra,id,n,amount,day\n"
                        + "Oaxaca,x,1,7,12.50,2024-01-31\n"
                        + "\"Los Angeles, CA\",,2,,,\n");
        assertThat(read("snapshot_2.csv", 0))
                .containsExactly(
                        "+I(1,Oaxaca,7,12.50,19753,2)",
                        "+I(2,Los Angeles, CA,null,null,null,2)",
                        "-D(null,null,null,null,null,2)");
        // restored after two records: only the end marker is left
        assertThat(read("snapshot_2.csv", 2)).containsExactly("-D(null,null,null,null,null,2)");
    }

    /**
     * A zero-byte JSON file and a CSV file of a right header and no row are snapshots without rows
     * (only the end marker); a CSV file without a header line (0 bytes or blank lines) or whose
     * header lacks a declared column and has no row is MALFORMED_SNAPSHOT_ROW naming the file: it
     * may be an export still being written, and as an empty snapshot it would delete every row.
     */
    @Test
    void aZeroByteJsonOrHeaderOnlyCsvIsAnEmptySnapshotAHeaderlessCsvIsRefused() throws IOException {
        Files.writeString(dir.resolve("snapshot_6.json"), "");
        assertThat(read("snapshot_6.json", 0)).containsExactly("-D(null,null,null,null,null,6)");
        Files.writeString(dir.resolve("snapshot_7.csv"), "day,amount,n,city,id,extra\n");
        assertThat(read("snapshot_7.csv", 0)).containsExactly("-D(null,null,null,null,null,7)");
        String needsHeader =
                ": a CSV snapshot file starts with its header line, even without rows (write the"
                        + " file elsewhere, then rename it into the folder)";
        Files.writeString(dir.resolve("snapshot_5.csv"), "");
        assertThatThrownBy(() -> read("snapshot_5.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + dir.resolve("snapshot_5.csv")
                                + " (snapshot 5) is empty (0 bytes)"
                                + needsHeader);
        Files.writeString(dir.resolve("snapshot_8.csv"), "\n  \n\n");
        assertThatThrownBy(() -> read("snapshot_8.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + dir.resolve("snapshot_8.csv")
                                + " (snapshot 8) has no header line (only blank lines)"
                                + needsHeader);
        Files.writeString(dir.resolve("snapshot_9.csv"), "id,city,n,amount\n");
        assertThatThrownBy(() -> read("snapshot_9.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + dir.resolve("snapshot_9.csv")
                                + " (snapshot 9) has no row and its header has no column 'day'"
                                + " (header: [id, city, n, amount])");
    }

    @Test
    void jsonLinesByMemberName() throws IOException {
        Files.writeString(
                dir.resolve("snapshot_3.json"),
                "{\"id\": 1, \"city\": \"Oaxaca\", \"n\": 7, \"amount\": 12.5}\n"
                        + "{\"id\": 2, \"city\": null, \"day\": \"2024-02-01\"}\n");
        assertThat(read("snapshot_3.json", 0))
                .containsExactly(
                        "+I(1,Oaxaca,7,12.50,null,3)",
                        "+I(2,null,null,null,19754,3)",
                        "-D(null,null,null,null,null,3)");
    }

    @Test
    void badValueOrMissingColumnFailsNamingFileRowAndColumn() throws IOException {
        Files.writeString(dir.resolve("snapshot_4.csv"), "id,city,n,amount,day\n1,a,seven,1,\n");
        assertThatThrownBy(() -> read("snapshot_4.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("MALFORMED_SNAPSHOT_ROW: snapshot file ")
                .hasMessageEndingWith(
                        "snapshot_4.csv (snapshot 4) row 1 column 'n': 'seven' is not of type INT");
        Files.writeString(dir.resolve("snapshot_5.csv"), "id,city\n1,a\n");
        assertThatThrownBy(() -> read("snapshot_5.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("snapshot_5.csv (snapshot 5) row 1 has no column 'n'");
        Files.writeString(dir.resolve("snapshot_6.json"), "[1, 2]\n");
        assertThatThrownBy(() -> read("snapshot_6.json", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageEndingWith("snapshot_6.json (snapshot 6) row 1 is not a JSON object");
    }

    /**
     * A CSV row shorter than the header names the header line of the file (not the fields the row
     * has), and a null KEYS column names the file, the row and the version.
     */
    @Test
    void shortCsvRowAndNullKeyNameTheFileHeaderAndRow() throws IOException {
        Files.writeString(dir.resolve("snapshot_7.csv"), "id,city,n,amount,day\n1,a,2,3,\n2,b\n");
        assertThatThrownBy(() -> read("snapshot_7.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + dir.resolve("snapshot_7.csv")
                                + " (snapshot 7) row 2 has 2 field(s), the header has 5: no value for column"
                                + " 'n' (header: [id, city, n, amount, day])");
        Files.writeString(dir.resolve("snapshot_8.csv"), "id,city,n,amount,day\n1,a,,,\n,b,,,\n");
        assertThatThrownBy(() -> read("snapshot_8.csv", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + dir.resolve("snapshot_8.csv")
                                + " (snapshot 8) row 2 has a null KEYS column 'id'");
        Files.writeString(dir.resolve("snapshot_9.json"), "{\"city\": \"a\"}\n");
        assertThatThrownBy(() -> read("snapshot_9.json", 0))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + dir.resolve("snapshot_9.json")
                                + " (snapshot 9) row 1 has a null KEYS column 'id'");
    }

    /** A folder that does not exist (or is a file) is SNAPSHOT_FOLDER_NOT_FOUND naming it. */
    @Test
    void missingFolderIsAnErrorNamingIt() throws IOException {
        java.nio.file.Path missing = dir.resolve("exports");
        assertThatThrownBy(() -> SnapshotFileNames.list(missing))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "SNAPSHOT_FOLDER_NOT_FOUND: snapshot folder "
                                + missing
                                + " does not exist; 'from-snapshot' names the folder that holds"
                                + " the snapshot files (snapshot_1.csv, snapshot_2.csv, ...)");
        Files.writeString(missing, "id\n");
        assertThatThrownBy(() -> SnapshotFileNames.list(missing))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "SNAPSHOT_FOLDER_NOT_FOUND: snapshot folder "
                                + missing
                                + " is a file, not a folder; 'from-snapshot' names the folder"
                                + " that holds the snapshot files (snapshot_1.csv, snapshot_2.csv,"
                                + " ...)");
    }

    /** The origin of a version is its file in the folder, listed when asked. */
    @Test
    void originNamesTheFileOfAVersion() throws IOException {
        Files.writeString(dir.resolve("snapshot_3.csv"), "id\n");
        Files.writeString(dir.resolve("snapshot_4.json"), "{}\n");
        Files.writeString(dir.resolve(".snapshot_4.csv"), "id\n");
        Files.writeString(dir.resolve("notes.txt"), "x");
        dev.changeflow.operators.SnapshotOrigin origin =
                SnapshotFiles.origin(new Path(dir.toUri()));
        assertThat(origin.describe(3)).isEqualTo("file " + dir.resolve("snapshot_3.csv"));
        assertThat(origin.describe(5)).isEqualTo("no file of version 5 left in " + dir);
        Files.writeString(dir.resolve("export_4.csv"), "id\n");
        assertThat(origin.describe(4))
                .isEqualTo(
                        "files "
                                + dir.resolve("export_4.csv")
                                + ", "
                                + dir.resolve("snapshot_4.json"));
        assertThat(SnapshotFiles.origin(new Path(dir.resolve("gone").toUri())).describe(1))
                .isEqualTo("a file of version 1 in " + dir.resolve("gone"));
    }

    private FileSourceSplit split(String name) {
        return new FileSourceSplit(name, new Path(dir.resolve(name).toUri()), 0, 1, 0, 1);
    }

    private List<String> read(String name, long skip) throws IOException {
        java.nio.file.Path f = dir.resolve(name);
        long size = Files.size(f);
        FileSourceSplit split =
                new FileSourceSplit(
                        name,
                        new Path(f.toUri()),
                        0,
                        size,
                        0,
                        size,
                        new String[0],
                        skip == 0
                                ? null
                                : new CheckpointedPosition(CheckpointedPosition.NO_OFFSET, skip));
        AutoCdcSpec spec = spec();
        SnapshotBulkFormat format =
                new SnapshotBulkFormat(
                        spec.sourceType(), new SnapshotVersions(spec), spec.keyIndexesInSource());
        List<String> out = new ArrayList<>();
        try (BulkFormat.Reader<RowData> reader =
                skip == 0
                        ? format.createReader(new Configuration(), split)
                        : format.restoreReader(new Configuration(), split)) {
            for (BulkFormat.RecordIterator<RowData> b = reader.readBatch();
                    b != null;
                    b = reader.readBatch()) {
                for (RecordAndPosition<RowData> r = b.next(); r != null; r = b.next()) {
                    out.add(r.getRecord().toString());
                }
                b.releaseBatch();
            }
        }
        return out;
    }
}

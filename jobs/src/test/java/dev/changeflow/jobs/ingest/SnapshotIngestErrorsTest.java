package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a failing AUTO CDC FROM SNAPSHOT job reaches the user of {@code changeflow ingest}
 * (docs/semantics.md A6): the snapshot error the job failed with, with its code, file and row — not
 * the library exception it wraps.
 */
class SnapshotIngestErrorsTest {
    @TempDir Path dir;

    @Test
    void aLineThatIsNotJsonFailsWithItsFileAndRow() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("cities"));
        // line 2 opens an object that never closes: Jackson's parser fails inside the reader
        Files.write(
                folder.resolve("snapshot_1.json"),
                List.of("{\"id\":1,\"city\":\"Berlin\"}", "{\"id\":2,\"city\":\"Lyon\""));
        Path flows = dir.resolve("cities.yaml");
        Files.writeString(
                flows,
                String.join(
                        "\n",
                        "name: cities",
                        "checkpoint-interval: 100ms",
                        "flows:",
                        "  - table: cities",
                        "    from-snapshot: " + folder,
                        "    keys: [id]",
                        "    schema: \"id BIGINT, city STRING\"",
                        ""));
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "ingest",
                        "--flows",
                        flows.toString(),
                        "--warehouse",
                        dir.resolve("warehouse").toString());
        String text = run.stderr();
        assertThat(run.code()).as(text).isEqualTo(2);
        assertThat(text)
                .startsWith(
                        "error: MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + folder.resolve("snapshot_1.json")
                                + " (snapshot 1) row 2 cannot be read: Unexpected end-of-input:"
                                + " expected close marker for Object");
        // one line: neither Jackson's "at [Source: ...]" line nor a "cause:" line
        assertThat(text.lines()).hasSize(1);
    }

    private static final String NEEDS_HEADER =
            ": a CSV snapshot file starts with its header line, even without rows (write the file"
                    + " elsewhere, then rename it into the folder)";

    /**
     * A CSV snapshot file that cannot be a finished export is refused naming the file, in one line,
     * before any of it is applied: the rows of snapshot 1 stay (applying it would delete them all).
     * A 0-byte file (an export not yet written, say), a file of blank lines only (no header line),
     * and a header-only file whose header lacks a declared column (as with rows).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("unfinishedCsvSnapshots")
    void anUnfinishedCsvSnapshotIsRefusedAndTheTableKeepsItsRows(
            String what, String content, String expectedAfterFile) throws Exception {
        Path snapshot2 = refusedSecondSnapshot(content);
        assertThat(secondRun.stderr())
                .isEqualTo(
                        "error: MALFORMED_SNAPSHOT_ROW: snapshot file "
                                + snapshot2
                                + expectedAfterFile);
    }

    static Stream<Arguments> unfinishedCsvSnapshots() {
        return Stream.of(
                Arguments.of(
                        "a 0-byte file",
                        "",
                        " (snapshot 2) is empty (0 bytes)" + NEEDS_HEADER + "\n"),
                Arguments.of(
                        "blank lines only",
                        "\n  \n\n",
                        " (snapshot 2) has no header line (only blank lines)"
                                + NEEDS_HEADER
                                + "\n"),
                Arguments.of(
                        "a header without the keys column",
                        "foo,bar\n",
                        " (snapshot 2) has no row and its header has no column 'id'"
                                + " (header: [foo, bar])\n"));
    }

    /** A header-only CSV file with the declared columns is an empty snapshot: every row deleted. */
    @Test
    void aHeaderOnlyCsvFileWithTheRightHeaderIsAnEmptySnapshot() throws Exception {
        Path folder = firstSnapshotApplied();
        Files.writeString(folder.resolve("snapshot_2.csv"), "city,id\n");
        CapturedOutput.MainRun run = ingest();
        assertThat(run.code()).as(run.stderr()).isZero();
        assertThat(rows()).isEmpty();
    }

    private CapturedOutput.MainRun secondRun;

    /**
     * Applies snapshot 1 (Berlin, Paris), then writes {@code content} as snapshot_2.csv and runs
     * ingest again: it must fail with exit code 2 and leave the rows of snapshot 1.
     */
    private Path refusedSecondSnapshot(String content) throws Exception {
        Path folder = firstSnapshotApplied();
        Path snapshot2 = folder.resolve("snapshot_2.csv");
        Files.writeString(snapshot2, content);
        secondRun = ingest();
        assertThat(secondRun.code()).as(secondRun.stderr()).isEqualTo(2);
        assertThat(rows()).containsExactly("1,Berlin", "2,Paris");
        return snapshot2;
    }

    private Path firstSnapshotApplied() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("cities"));
        Files.writeString(folder.resolve("snapshot_1.csv"), "id,city\n1,Berlin\n2,Paris\n");
        Files.writeString(
                dir.resolve("cities.yaml"),
                String.join(
                        "\n",
                        "name: cities",
                        "namespace: geo",
                        "checkpoint-interval: 100ms",
                        "flows:",
                        "  - table: cities",
                        "    from-snapshot: " + folder,
                        "    keys: [id]",
                        "    schema: \"id BIGINT, city STRING\"",
                        ""));
        CapturedOutput.MainRun run = ingest();
        assertThat(run.code()).as(run.stderr()).isZero();
        assertThat(rows()).containsExactly("1,Berlin", "2,Paris");
        return folder;
    }

    private CapturedOutput.MainRun ingest() {
        return CapturedOutput.main(
                "ingest",
                "--flows",
                dir.resolve("cities.yaml").toString(),
                "--warehouse",
                dir.resolve("warehouse").toString());
    }

    /** The live rows of geo.cities as CSV lines, by id. */
    private List<String> rows() {
        return TableRows.toCsvLines(
                CatalogSettings.localHadoop(dir.resolve("warehouse").toAbsolutePath())
                        .open()
                        .loadTable(TableIdentifier.of("geo", "cities")));
    }
}

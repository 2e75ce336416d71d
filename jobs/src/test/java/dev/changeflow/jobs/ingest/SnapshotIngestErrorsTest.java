package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.CapturedOutput;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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
    }
}

package dev.changeflow.jobs.ingest;

import org.apache.flink.core.fs.FileStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code run --state-dir} (docs/semantics.md S3): how a state location is read ({@link
 * LocalIngest#stateDir}) and where a job's state goes under it ({@link LocalIngest#stateLocation});
 * the file operations of a local state folder ({@link StateFiles}) as before object stores. The
 * object store itself is exercised by {@code S3StateDirITCase} (in-process S3).
 */
class StateDirTest {
    @TempDir Path tmp;

    @Test
    void aLocalFolderOrFileUriIsALocalStateLocation() {
        org.apache.flink.core.fs.Path plain =
                LocalIngest.stateDir(tmp.resolve("state").toString(), "--state-dir");
        org.apache.flink.core.fs.Path uri =
                LocalIngest.stateDir(tmp.resolve("state").toUri().toString(), "--state-dir");
        assertThat(StateFiles.isLocal(plain)).isTrue();
        assertThat(LocalIngest.display(plain)).isEqualTo(tmp.resolve("state").toString());
        assertThat(LocalIngest.display(uri)).isEqualTo(tmp.resolve("state").toString());

        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = tmp.resolve("warehouse");
        assertThat(LocalIngest.display(LocalIngest.stateLocation("shop", o)))
                .isEqualTo(
                        tmp.resolve("warehouse/.changeflow/checkpoints/shop")
                                .toAbsolutePath()
                                .toString());
        o.stateDir = plain;
        assertThat(LocalIngest.display(LocalIngest.stateLocation("shop", o)))
                .isEqualTo(tmp.resolve("state/shop").toString());
        o.stateDir = new org.apache.flink.core.fs.Path("s3://bucket/prefix/");
        assertThat(LocalIngest.stateLocation("shop", o).toString())
                .isEqualTo("s3://bucket/prefix/shop");
        // changeflow's records beside the checkpoints
        assertThat(
                        new LocalCheckpoints(LocalIngest.stateLocation("shop", o))
                                .jobStateRoot()
                                .toString())
                .isEqualTo("s3://bucket/prefix/shop.state");
    }

    @Test
    void anUnusableLocationIsRefusedWithACode() {
        assertThatThrownBy(() -> LocalIngest.stateDir("s3:///prefix", "--state-dir"))
                .isInstanceOf(LocalIngest.StateLocationException.class)
                .hasMessage(
                        "STATE_DIR_UNAVAILABLE: --state-dir 's3:///prefix' names no bucket: write"
                                + " it as <scheme>://<bucket>/<prefix>, e.g."
                                + " s3://lakehouse/changeflow/state");
        assertThatThrownBy(() -> LocalIngest.stateDir("nosuchfs://bucket/x", "--state-dir"))
                .isInstanceOf(LocalIngest.StateLocationException.class)
                .hasMessageStartingWith(
                        "STATE_DIR_UNAVAILABLE: --state-dir nosuchfs://bucket/x: no Flink file"
                                + " system for scheme 'nosuchfs' of nosuchfs://bucket/x: add the"
                                + " Flink file-system plugin for it");
    }

    @Test
    void localStateFilesAreWrittenWholeAndFound() throws Exception {
        org.apache.flink.core.fs.Path root = StateFiles.of(tmp.resolve("job"));
        org.apache.flink.core.fs.Path list =
                StateFiles.child(StateFiles.child(root, "files-done"), "3.txt");
        StateFiles.mkdirs(list.getParent());
        StateFiles.writeLines(list, List.of("/in/a.json", "/in/b.json"));
        assertThat(Files.readString(tmp.resolve("job/files-done/3.txt"), StandardCharsets.UTF_8))
                .isEqualTo("/in/a.json\n/in/b.json\n");
        assertThat(StateFiles.readLines(list)).containsExactly("/in/a.json", "/in/b.json");
        // written through a temporary file moved over it: none is left
        assertThat(Files.exists(tmp.resolve("job/files-done/3.txt.tmp"))).isFalse();

        Files.createDirectories(tmp.resolve("job/savepoints/j/savepoint-1"));
        Files.writeString(tmp.resolve("job/savepoints/j/savepoint-1/_metadata"), "x");
        Files.createDirectories(tmp.resolve("job/a/b/c/d"));
        Files.writeString(tmp.resolve("job/a/b/c/d/_metadata"), "too deep");
        assertThat(
                        StateFiles.find(root, "_metadata", 4).stream()
                                .map(FileStatus::getPath)
                                .map(StateFiles::display)
                                .collect(Collectors.toList()))
                .containsExactly(tmp.resolve("job/savepoints/j/savepoint-1/_metadata").toString());
        assertThat(StateFiles.find(StateFiles.of(tmp.resolve("none")), "_metadata", 4)).isEmpty();

        StateFiles.deleteRecursively(root);
        assertThat(Files.exists(tmp.resolve("job"))).isFalse();
    }
}

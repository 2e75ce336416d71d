package dev.changeflow.sources.files;

import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** S2: glob patterns in input paths ({@link FileGlob}). */
class FileGlobTest {
    @TempDir java.nio.file.Path dir;

    private void touch(String... names) throws IOException {
        for (String n : names) {
            java.nio.file.Path f = dir.resolve(n);
            Files.createDirectories(f.getParent());
            Files.writeString(f, "{}\n");
        }
    }

    private List<String> relative(List<java.nio.file.Path> files) {
        List<String> out = new ArrayList<>();
        java.nio.file.Path root = dir.toAbsolutePath().normalize();
        for (java.nio.file.Path f : files) {
            out.add(root.relativize(f).toString());
        }
        return out;
    }

    @Test
    void theBaseIsThePathBeforeTheFirstSegmentWithAGlobCharacter() {
        assertThat(FileGlob.base(new Path("s3://bucket/analysis/*/*/*.json")))
                .isEqualTo(new Path("s3://bucket/analysis"));
        assertThat(FileGlob.base(new Path("/data/in/part-?.csv"))).isEqualTo(new Path("/data/in"));
        assertThat(FileGlob.base(new Path("/data/{a,b}/x.json"))).isEqualTo(new Path("/data"));
        assertThat(FileGlob.base(new Path("/data/in"))).isEqualTo(new Path("/data/in"));
        assertThat(FileGlob.base(java.nio.file.Path.of("/data/in/2024-*/x.json")))
                .isEqualTo(java.nio.file.Path.of("/data/in"));
        assertThat(FileGlob.isPattern("/data/in/[ab].json")).isTrue();
        assertThat(FileGlob.isPattern("/data/in/a.json")).isFalse();
    }

    @Test
    void aPatternSelectsTheVisibleFilesUnderItsBaseThatMatchIt() throws IOException {
        touch(
                "in/2024/01/a.json",
                "in/2024/01/b.csv",
                "in/2024/c.json",
                "in/2024/_tmp/d.json",
                "in/2024/02/.e.json",
                "in/_staging/03/g.json",
                "in/2025/03/f.json");
        assertThat(relative(FileGlob.listLocal(List.of(dir.resolve("in/*/*/*.json")))))
                .containsExactly("in/2024/01/a.json", "in/2025/03/f.json");
        assertThat(relative(FileGlob.listLocal(List.of(dir.resolve("in/**.json")))))
                .containsExactly("in/2024/01/a.json", "in/2024/c.json", "in/2025/03/f.json");
        assertThat(relative(FileGlob.listLocal(List.of(dir.resolve("in/2024/01/*.{csv,json}")))))
                .containsExactly("in/2024/01/a.json", "in/2024/01/b.csv");
        // a plain folder: every visible file, recursively, as before
        assertThat(relative(FileGlob.listLocal(List.of(dir.resolve("in")))))
                .containsExactly(
                        "in/2024/01/a.json",
                        "in/2024/01/b.csv",
                        "in/2024/c.json",
                        "in/2025/03/f.json");
        assertThat(FileGlob.listLocal(List.of(dir.resolve("in/*/*/*.parquet")))).isEmpty();
    }

    @Test
    void aPatternWhoseBaseDoesNotExistIsNotFound() {
        assertThatThrownBy(() -> FileGlob.listLocal(List.of(dir.resolve("missing/*.json"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("input not found: " + dir.resolve("missing/*.json"));
    }

    /**
     * S2: {@link FileGlob#list} lists through Flink's {@code FileSystem} (here the local one, as
     * {@code file:} URIs): the same files and order as the local listing, named by {@link
     * FileGlob#key} as the launcher records them.
     */
    @Test
    void theFlinkFileSystemListingSelectsTheSameFilesAsTheLocalOne() throws IOException {
        touch(
                "in/2024/01/a.json",
                "in/2024/01/b.csv",
                "in/2024/c.json",
                "in/2024/_tmp/d.json",
                "in/2024/02/.e.json",
                "in/2025/03/f.json");
        String base = dir.toAbsolutePath().normalize().toUri().toString(); // file:/.../
        List<Path> found =
                FileGlob.list(
                        List.of(
                                new Path(base + "in/*/*/*.json"),
                                new Path(base + "in/2024/c.json")));
        List<String> keys = new ArrayList<>();
        for (Path p : found) {
            assertThat(p.toUri().getScheme()).isEqualTo("file");
            keys.add(FileGlob.key(p));
        }
        String root = dir.toAbsolutePath().normalize().toString();
        assertThat(keys)
                .containsExactly(
                        root + "/in/2024/01/a.json",
                        root + "/in/2024/c.json",
                        root + "/in/2025/03/f.json");
        assertThat(FileGlob.list(List.of(new Path(base + "in"))))
                .hasSize(4)
                .extracting(FileGlob::key)
                .containsExactly(
                        root + "/in/2024/01/a.json",
                        root + "/in/2024/01/b.csv",
                        root + "/in/2024/c.json",
                        root + "/in/2025/03/f.json");
        assertThatThrownBy(() -> FileGlob.list(List.of(new Path(base + "missing/*.json"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("input not found: " + root + "/missing/*.json");
        // another file system's file is named by its URI
        assertThat(FileGlob.key(new Path("s3://bucket/cdc/2024/a.json")))
                .isEqualTo("s3://bucket/cdc/2024/a.json");
    }

    /** The Flink file source's enumerator selects the same files as the local listing. */
    @Test
    void theFileSourceEnumeratorSelectsTheSameFiles() throws IOException {
        touch("in/2024/01/a.json", "in/2024/01/b.csv", "in/2024/c.json", "in/2025/03/f.json");
        List<Path> inputs = List.of(new Path(dir.resolve("in").toUri() + "*/*/*.json"));
        FileGlob glob = FileGlob.of(inputs);
        Collection<FileSourceSplit> splits =
                glob.enumerator().create().enumerateSplits(glob.bases(), 1);
        List<String> found = new ArrayList<>();
        for (FileSourceSplit s : splits) {
            found.add(
                    dir.toAbsolutePath()
                            .relativize(java.nio.file.Path.of(s.path().toUri()))
                            .toString());
        }
        found.sort(null);
        assertThat(found).containsExactly("in/2024/01/a.json", "in/2025/03/f.json");
    }
}

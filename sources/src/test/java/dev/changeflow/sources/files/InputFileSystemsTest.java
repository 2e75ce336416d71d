package dev.changeflow.sources.files;

import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** S2: the file systems of the launcher's inputs ({@link InputFileSystems}). */
class InputFileSystemsTest {
    @TempDir java.nio.file.Path dir;

    /**
     * A scheme no file system serves (no plugin in the plugins folder): a clear error naming the
     * scheme and the plugin to add, not Flink's raw UnsupportedFileSystemSchemeException.
     */
    @Test
    void aSchemeWithoutPluginNamesTheSchemeAndThePluginToAdd() throws IOException {
        java.nio.file.Path plugins = Files.createDirectories(dir.resolve("plugins"));
        String saved = System.getProperty(InputFileSystems.PLUGINS_DIR_PROPERTY);
        System.setProperty(InputFileSystems.PLUGINS_DIR_PROPERTY, plugins.toString());
        try {
            InputFileSystems.initialize(Map.of());
            assertThatThrownBy(() -> InputFileSystems.exists(new Path("gs://bucket/cdc")))
                    .isInstanceOf(InputFileSystems.NoFileSystemException.class)
                    .hasMessage(
                            "no Flink file system for scheme 'gs' of gs://bucket/cdc: add the"
                                    + " Flink file-system plugin flink-gs-fs-hadoop"
                                    + " (flink-gs-fs-hadoop-2.1.1.jar) in a sub-folder of its own"
                                    + " of the plugins folder ("
                                    + plugins
                                    + ", from changeflow.flink-plugins-dir or"
                                    + " FLINK_PLUGINS_DIR)")
                    .extracting(e -> ((InputFileSystems.NoFileSystemException) e).scheme())
                    .isEqualTo("gs");
            assertThatThrownBy(
                            () ->
                                    FileGlob.list(
                                            List.of(
                                                    new Path(
                                                            "abfss://c@acct.dfs.core.windows.net/cdc/*.json"))))
                    .isInstanceOf(InputFileSystems.NoFileSystemException.class)
                    .hasMessageStartingWith(
                            "no Flink file system for scheme 'abfss' of"
                                    + " abfss://c@acct.dfs.core.windows.net/cdc: add the Flink"
                                    + " file-system plugin flink-azure-fs-hadoop");
        } finally {
            if (saved == null) {
                System.clearProperty(InputFileSystems.PLUGINS_DIR_PROPERTY);
            } else {
                System.setProperty(InputFileSystems.PLUGINS_DIR_PROPERTY, saved);
            }
            InputFileSystems.initialize(Map.of());
        }
    }

    /** A path as written: a URI stays a URI, a local path becomes an absolute file: path. */
    @Test
    void aWrittenPathIsAUriOrALocalPathResolvedAgainstTheBase() {
        java.nio.file.Path base = java.nio.file.Path.of("/pipelines");
        assertThat(InputFileSystems.parse("s3://bucket/cdc/*.json", base))
                .isEqualTo(new Path("s3://bucket/cdc/*.json"));
        assertThat(FileGlob.key(InputFileSystems.parse("in/../cdc", base)))
                .isEqualTo("/pipelines/cdc");
        assertThat(InputFileSystems.parse("/abs/e", base).toUri().getScheme()).isEqualTo("file");
        assertThat(InputFileSystems.isFileSystemOption("s3.endpoint")).isTrue();
        assertThat(InputFileSystems.isFileSystemOption("checkpoint-interval")).isFalse();
    }
}

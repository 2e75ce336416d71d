package dev.changeflow.sinks.iceberg;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.FileNotFoundException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ForkFreeLocalFileSystemTest {
    @TempDir java.nio.file.Path tmp;

    @Test
    void catalogsUseItForFilePathsUnlessTheirHadoopPropertiesNameAnother() throws Exception {
        Configuration conf = CatalogSettings.localHadoop(tmp).hadoopConf();
        try (FileSystem fs = FileSystem.newInstance(tmp.toUri(), conf)) {
            assertThat(fs).isInstanceOf(ForkFreeLocalFileSystem.class);
        }
        Configuration other =
                CatalogSettings.localHadoop(tmp)
                        .withHadoopProperties(
                                Map.of("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem"))
                        .hadoopConf();
        assertThat(other.get("fs.file.impl")).isEqualTo("org.apache.hadoop.fs.RawLocalFileSystem");
    }

    @Test
    void filesAndDirectoriesGetHadoopsPermissionsWithoutAChildProcess() throws Exception {
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", ForkFreeLocalFileSystem.class.getName());
        conf.set("fs.permissions.umask-mode", "027");
        try (FileSystem fs = FileSystem.newInstance(tmp.toUri(), conf)) {
            Path dir = new Path(tmp.toUri().toString(), "a/b");
            assertThat(fs.mkdirs(dir, new FsPermission((short) 0777))).isTrue();
            Path file = new Path(dir, "data.parquet");
            try (FSDataOutputStream out = fs.create(file, false)) {
                out.write(new byte[] {1, 2, 3});
            }
            assertThat(perms(tmp.resolve("a/b"))).isEqualTo("rwxr-x---");
            assertThat(perms(tmp.resolve("a/b/data.parquet"))).isEqualTo("rw-r-----");
            assertThat(perms(tmp.resolve("a/b/.data.parquet.crc"))).isEqualTo("rw-r-----");

            fs.setPermission(file, new FsPermission((short) 0604));
            assertThat(perms(tmp.resolve("a/b/data.parquet"))).isEqualTo("rw----r--");
            // the sticky bit goes through Hadoop's own chmod
            fs.setPermission(dir, new FsPermission((short) 01750));
            assertThat(fs.getFileStatus(dir).getPermission().getStickyBit()).isTrue();
            assertThat(perms(tmp.resolve("a/b"))).isEqualTo("rwxr-x---");

            assertThatThrownBy(
                            () ->
                                    fs.setPermission(
                                            new Path(dir, "missing"),
                                            new FsPermission((short) 0644)))
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining("missing");
        }
    }

    @Test
    void aHadoopCatalogWritesItsTablesThroughIt() throws Exception {
        CatalogSettings settings = CatalogSettings.localHadoop(tmp);
        org.apache.iceberg.catalog.Catalog catalog = settings.open();
        try {
            TableIdentifier id = TableIdentifier.of(Namespace.of("ns"), "t");
            ((org.apache.iceberg.catalog.SupportsNamespaces) catalog)
                    .createNamespace(Namespace.of("ns"));
            catalog.createTable(
                    id,
                    new org.apache.iceberg.Schema(
                            org.apache.iceberg.types.Types.NestedField.required(
                                    1, "id", org.apache.iceberg.types.Types.LongType.get())));
            java.nio.file.Path metadata = tmp.resolve("ns/t/metadata");
            try (var files = Files.list(metadata)) {
                assertThat(files.map(f -> f.getFileName().toString()))
                        .contains("v1.metadata.json", "version-hint.text");
            }
            assertThat(perms(metadata.resolve("v1.metadata.json"))).isEqualTo("rw-r--r--");
        } finally {
            if (catalog instanceof java.io.Closeable c) {
                c.close();
            }
        }
    }

    private static String perms(java.nio.file.Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}

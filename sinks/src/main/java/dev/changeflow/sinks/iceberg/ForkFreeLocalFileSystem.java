package dev.changeflow.sinks.iceberg;

import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Hadoop's checksummed local file system (scheme {@code file}, as {@link LocalFileSystem}) that
 * sets the permissions of the files and directories it creates through {@code java.nio} instead of
 * a {@code chmod} child process.
 *
 * <p>Without Hadoop's native library (changeflow does not ship it), {@link RawLocalFileSystem}
 * forks {@code chmod} for every file it creates and for its {@code .crc} file: an Iceberg table in
 * a local warehouse gets one fork per data, delete, manifest, manifest-list and metadata file,
 * about 150 per run of the README's pgbench ingest (a tenth of that run's CPU, and each fork on the
 * committing thread). {@link CatalogSettings#hadoopConf()} makes it the {@code fs.file.impl} of the
 * catalogs changeflow opens, unless the catalog's Hadoop properties name another.
 *
 * <p>Permissions are the ones Hadoop computes (its umask applied); a permission with the sticky
 * bit, or a file system without POSIX attributes, falls back to Hadoop's own {@code chmod}. Errors:
 * {@link FileNotFoundException} when the path does not exist, other {@link IOException}s as {@code
 * java.nio} reports them.
 */
public final class ForkFreeLocalFileSystem extends LocalFileSystem {

    /** A checksummed local file system over {@link Raw}. */
    public ForkFreeLocalFileSystem() {
        super(new Raw());
    }

    /** {@link RawLocalFileSystem} with {@link #setPermission} through {@code java.nio}. */
    static final class Raw extends RawLocalFileSystem {
        @Override
        public void setPermission(Path p, FsPermission permission) throws IOException {
            if (permission.getStickyBit()) {
                super.setPermission(p, permission);
                return;
            }
            java.nio.file.Path file = pathToFile(p).toPath();
            try {
                Files.setPosixFilePermissions(
                        file,
                        PosixFilePermissions.fromString(
                                permission.getUserAction().SYMBOL
                                        + permission.getGroupAction().SYMBOL
                                        + permission.getOtherAction().SYMBOL));
            } catch (UnsupportedOperationException e) {
                super.setPermission(p, permission);
            } catch (NoSuchFileException e) {
                throw new FileNotFoundException("File " + p + " does not exist");
            }
        }
    }
}

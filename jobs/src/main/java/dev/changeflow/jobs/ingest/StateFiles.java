package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.local.LocalRunner;
import dev.changeflow.sources.files.FileGlob;
import dev.changeflow.sources.files.InputFileSystems;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The file operations of a local job's saved state (its checkpoint folder and changeflow's records
 * beside it, {@link LocalCheckpoints}, {@link LocalJobState}) on any Flink file system: a local
 * folder ({@code file:} or a plain path) or an object store ({@code s3://bucket/prefix}, through
 * Flink's file-system plugin and its {@code s3.*} options, {@link InputFileSystems}).
 *
 * <p>A local folder is written as it always was (java.nio: a file is replaced by an atomic move of
 * a temporary file). An object store has no atomic rename, but every object is written whole by one
 * PUT: a record is written in place ({@link FileSystem.WriteMode#OVERWRITE}), and a reader sees the
 * old or the new object, never a part.
 */
final class StateFiles {
    private StateFiles() {}

    /** Whether {@code p} is a local path ({@code file:} or no scheme). */
    static boolean isLocal(Path p) {
        String scheme = p.toUri().getScheme();
        return scheme == null || scheme.toLowerCase(Locale.ROOT).equals("file");
    }

    /** A local path as a {@link java.nio.file.Path}; only for {@link #isLocal} paths. */
    static java.nio.file.Path local(Path p) {
        return toNio(p).toAbsolutePath();
    }

    /** A local {@link java.nio.file.Path} as a Flink path ({@code file:}, absolute, normalized). */
    static Path of(java.nio.file.Path local) {
        // not from the URI: a folder's URI ends with '/', and such a path has an empty name
        return new Path("file", null, local.toAbsolutePath().normalize().toString());
    }

    /**
     * {@code p} as messages show it: a local path as its plain absolute path, an object-store path
     * as its URI.
     */
    static String display(Path p) {
        return FileGlob.key(p);
    }

    /**
     * {@code p} as a URI string for Flink's configuration and savepoint targets: a local path as
     * {@link java.nio.file.Path#toUri} gives it ({@code file:///...}), another as written.
     */
    static String uri(Path p) {
        return isLocal(p) ? toNio(p).toAbsolutePath().toUri().toString() : p.toUri().toString();
    }

    /** {@code parent/child}. */
    static Path child(Path parent, String child) {
        return new Path(parent, child);
    }

    /**
     * The file system of {@code p}.
     *
     * @throws InputFileSystems.NoFileSystemException when no file system serves its scheme
     */
    static FileSystem fs(Path p) throws IOException {
        return InputFileSystems.of(p);
    }

    static boolean exists(Path p) throws IOException {
        if (isLocal(p)) {
            return Files.exists(toNio(p));
        }
        return fs(p).exists(p);
    }

    /** Whether {@code p} is a regular file (an object). */
    static boolean isFile(Path p) throws IOException {
        if (isLocal(p)) {
            return Files.isRegularFile(toNio(p));
        }
        try {
            return !fs(p).getFileStatus(p).isDir();
        } catch (FileNotFoundException e) {
            return false;
        }
    }

    static byte[] readBytes(Path p) throws IOException {
        if (isLocal(p)) {
            return Files.readAllBytes(toNio(p));
        }
        try (InputStream in = fs(p).open(p)) {
            return in.readAllBytes();
        }
    }

    static String readString(Path p) throws IOException {
        return new String(readBytes(p), StandardCharsets.UTF_8);
    }

    /** The lines of a text file (as {@link Files#readAllLines}). */
    static List<String> readLines(Path p) throws IOException {
        if (isLocal(p)) {
            return Files.readAllLines(toNio(p));
        }
        String s = readString(p);
        List<String> out = new ArrayList<>();
        if (s.isEmpty()) {
            return out;
        }
        for (String line : s.split("\r?\n", -1)) {
            out.add(line);
        }
        if (s.endsWith("\n")) {
            out.remove(out.size() - 1);
        }
        return out;
    }

    /** Opens a file for reading. */
    static InputStream open(Path p) throws IOException {
        if (isLocal(p)) {
            return Files.newInputStream(toNio(p));
        }
        FSDataInputStream in = fs(p).open(p);
        return in;
    }

    /**
     * Writes a file whole, replacing it: locally a temporary file {@code <name>.tmp} moved over it
     * atomically; on an object store one PUT.
     */
    static void write(Path p, byte[] bytes) throws IOException {
        if (isLocal(p)) {
            java.nio.file.Path f = toNio(p);
            java.nio.file.Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
            Files.write(tmp, bytes);
            Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return;
        }
        try (FSDataOutputStream out = fs(p).create(p, FileSystem.WriteMode.OVERWRITE)) {
            out.write(bytes);
        }
    }

    static void writeString(Path p, String s) throws IOException {
        write(p, s.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Lines, each ended by a newline (as {@link Files#write(java.nio.file.Path, Iterable,
     * java.nio.file.OpenOption...)}).
     */
    static void writeLines(Path p, Iterable<String> lines) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        for (String l : lines) {
            buf.writeBytes(l.getBytes(StandardCharsets.UTF_8));
            buf.write('\n');
        }
        write(p, buf.toByteArray());
    }

    /** Deletes a file if it exists. */
    static void deleteIfExists(Path p) throws IOException {
        if (isLocal(p)) {
            Files.deleteIfExists(toNio(p));
            return;
        }
        fs(p).delete(p, false);
    }

    /** Deletes a folder tree if it exists ({@link LocalRunner#deleteRecursively} locally). */
    static void deleteRecursively(Path p) throws IOException {
        if (isLocal(p)) {
            LocalRunner.deleteRecursively(toNio(p));
            return;
        }
        FileSystem fs = fs(p);
        if (fs.exists(p)) {
            fs.delete(p, true);
        }
    }

    /** Creates a folder and its parents (on an object store: nothing to create). */
    static void mkdirs(Path p) throws IOException {
        if (isLocal(p)) {
            Files.createDirectories(toNio(p));
            return;
        }
        fs(p).mkdirs(p);
    }

    /** The entries of a folder; empty when it does not exist. */
    static List<FileStatus> list(Path dir) throws IOException {
        List<FileStatus> out = new ArrayList<>();
        FileStatus[] st;
        try {
            st = fs(dir).listStatus(dir);
        } catch (FileNotFoundException e) {
            return out;
        }
        if (st != null) {
            out.addAll(List.of(st));
        }
        return out;
    }

    /**
     * Files named {@code name} at most {@code depth} levels below {@code root} (1 = its entries),
     * with their modification times; empty when {@code root} does not exist.
     */
    static List<FileStatus> find(Path root, String name, int depth) throws IOException {
        List<FileStatus> out = new ArrayList<>();
        find(root, name, depth, out);
        return out;
    }

    private static void find(Path dir, String name, int depth, List<FileStatus> out)
            throws IOException {
        if (depth <= 0) {
            return;
        }
        for (FileStatus st : list(dir)) {
            if (st.isDir()) {
                find(st.getPath(), name, depth - 1, out);
            } else if (st.getPath().getName().equals(name)) {
                out.add(st);
            }
        }
    }

    private static java.nio.file.Path toNio(Path p) {
        return p.toUri().getScheme() == null
                ? java.nio.file.Path.of(p.toString())
                : java.nio.file.Path.of(p.toUri());
    }
}

package dev.changeflow.sources.files;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.connector.file.src.enumerate.FileEnumerator;
import org.apache.flink.connector.file.src.enumerate.NonSplittingRecursiveAllDirEnumerator;
import org.apache.flink.core.fs.Path;

import java.io.Serializable;
import java.nio.file.FileSystems;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Glob patterns in input paths: {@code read_files('s3://bucket/analysis/*&#47;*&#47;*.json')}, as the
 * vendor's examples write them (docs/semantics.md S2). A path is a pattern when it holds one of
 * {@code * ? [ {}; its <em>base</em> is the part before the first path segment that does, and the
 * files read are the visible files under the base whose whole path matches the pattern, with the
 * glob syntax of {@link java.nio.file.FileSystem#getPathMatcher}: {@code *} and {@code ?} within one
 * segment, {@code **} across segments, {@code [abc]}, {@code {json,csv}} (without {@code /} inside
 * the braces). A path without those characters is a file or a folder read recursively, as before.
 *
 * <p>As an input filter this is a file predicate of Flink's {@link
 * NonSplittingRecursiveAllDirEnumerator} (every visible folder under the bases is listed, the
 * predicate decides per file), so the Flink file source, the local launcher's own listing and the
 * schema sampler select the same files. Names starting with {@code .} or {@code _} (in any segment
 * below the base) are never read, as Flink's {@link DefaultFileFilter} has it.
 */
@PublicEvolving
public final class FileGlob implements Predicate<Path>, Serializable {
    private static final long serialVersionUID = 1L;

    private static final String GLOB_CHARS = "*?[{";

    /** The inputs: a base and, for a pattern, the glob of its path component. */
    private final List<Input> inputs;

    private FileGlob(List<Input> inputs) {
        this.inputs = inputs;
    }

    /** The filter over {@code paths} (patterns or plain files and folders). */
    public static FileGlob of(List<Path> paths) {
        List<Input> inputs = new ArrayList<>();
        for (Path p : paths) {
            inputs.add(new Input(p));
        }
        return new FileGlob(inputs);
    }

    /** Whether {@code path} (a path or URI as written) is a pattern. */
    public static boolean isPattern(String path) {
        for (int i = 0; i < path.length(); i++) {
            if (GLOB_CHARS.indexOf(path.charAt(i)) >= 0) {
                return true;
            }
        }
        return false;
    }

    /** Whether any of {@code paths} is a pattern. */
    public static boolean anyPattern(List<Path> paths) {
        for (Path p : paths) {
            if (isPattern(p.toUri().getPath())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The folder a pattern lists (the path up to the segment before the first one holding a glob
     * character), or {@code path} itself when it is no pattern.
     */
    public static Path base(Path path) {
        String p = path.toUri().getPath();
        if (!isPattern(p)) {
            return path;
        }
        int glob = firstGlobChar(p);
        int slash = p.lastIndexOf('/', glob);
        String dir = slash <= 0 ? "/" : p.substring(0, slash);
        java.net.URI uri = path.toUri();
        return new Path(uri.getScheme(), uri.getAuthority(), dir);
    }

    /** {@link #base(Path)} of a local path. */
    public static java.nio.file.Path base(java.nio.file.Path path) {
        String p = path.toString();
        if (!isPattern(p)) {
            return path;
        }
        int slash = p.lastIndexOf('/', firstGlobChar(p));
        return java.nio.file.Path.of(slash <= 0 ? "/" : p.substring(0, slash));
    }

    /** The folders and files the file source lists: the bases, without repeats. */
    public Path[] bases() {
        Set<Path> bases = new LinkedHashSet<>();
        for (Input in : inputs) {
            bases.add(in.base);
        }
        return bases.toArray(new Path[0]);
    }

    /**
     * The enumerator provider of a file source over these inputs: Flink's {@link
     * NonSplittingRecursiveAllDirEnumerator} with this filter (files are not split).
     */
    public FileEnumerator.Provider enumerator() {
        FileGlob filter = this;
        return () -> new NonSplittingRecursiveAllDirEnumerator(filter);
    }

    /**
     * Whether a file found under the bases is read: visible (no segment below its base starts with
     * {@code .} or {@code _}) and, under a pattern, matching it.
     */
    @Override
    public boolean test(Path file) {
        for (Input in : inputs) {
            if (in.accepts(file)) {
                return true;
            }
        }
        return false;
    }

    /** {@link #test(Path)} of a local file. */
    public boolean test(java.nio.file.Path file) {
        return test(new Path(file.toAbsolutePath().normalize().toUri()));
    }

    /**
     * The visible files of local {@code inputs} (a file, a folder read recursively, or a pattern),
     * as absolute normalized paths, sorted; a pattern's files are those under its base that match
     * it. The listing is {@link #list(List)}'s, over Flink's local file system.
     *
     * @throws java.io.IOException when a folder cannot be listed
     * @throws IllegalArgumentException when an input (a pattern: its base) does not exist
     */
    public static List<java.nio.file.Path> listLocal(List<java.nio.file.Path> inputs)
            throws java.io.IOException {
        List<Path> flinkInputs = new ArrayList<>();
        for (java.nio.file.Path in : inputs) {
            flinkInputs.add(new Path(in.toAbsolutePath().normalize().toUri()));
        }
        List<java.nio.file.Path> files = new ArrayList<>();
        for (Path f : list(flinkInputs)) {
            files.add(java.nio.file.Path.of(f.toUri().getPath()));
        }
        files.sort(null);
        return files;
    }

    /**
     * The visible files of {@code inputs} on any Flink file system (local, {@code s3://}, ...; a
     * file, a folder read recursively, or a glob pattern: the files under its base that match it),
     * sorted by {@link #key(Path)}. Local paths and object-store paths take this same code path
     * through {@link org.apache.flink.core.fs.FileSystem} (docs/semantics.md S2).
     *
     * @throws java.io.IOException when a folder cannot be listed
     * @throws InputFileSystems.NoFileSystemException when no file system serves an input's scheme
     * @throws IllegalArgumentException when an input (a pattern: its base) does not exist
     */
    public static List<Path> list(List<Path> inputs) throws java.io.IOException {
        List<Path> files = new ArrayList<>();
        for (Path in : inputs) {
            Path root = base(in);
            org.apache.flink.core.fs.FileSystem fs = InputFileSystems.of(root);
            org.apache.flink.core.fs.FileStatus st;
            try {
                st = fs.exists(root) ? fs.getFileStatus(root) : null;
            } catch (java.io.FileNotFoundException e) {
                st = null;
            }
            if (st == null) {
                throw new IllegalArgumentException("input not found: " + key(in));
            }
            if (!st.isDir()) {
                files.add(root);
            } else {
                FileGlob filter = of(List.of(in));
                walk(fs, root, filter, files);
            }
        }
        files.sort(java.util.Comparator.comparing(FileGlob::key));
        return files;
    }

    private static void walk(
            org.apache.flink.core.fs.FileSystem fs, Path dir, FileGlob filter, List<Path> out)
            throws java.io.IOException {
        org.apache.flink.core.fs.FileStatus[] children = fs.listStatus(dir);
        if (children == null) {
            return;
        }
        for (org.apache.flink.core.fs.FileStatus c : children) {
            if (c.isDir()) {
                String n = c.getPath().getName();
                // hidden folders hold no file that is read
                if (!n.startsWith(".") && !n.startsWith("_")) {
                    walk(fs, c.getPath(), filter, out);
                }
            } else if (filter.test(c.getPath())) {
                out.add(c.getPath());
            }
        }
    }

    /**
     * A file as the launcher records it (read lists, skipped lists, messages): a local file as its
     * plain absolute normalized path, a file of another file system as its URI ({@code
     * s3://bucket/key}).
     */
    public static String key(Path path) {
        java.net.URI uri = path.toUri();
        if (uri.getScheme() == null || "file".equals(uri.getScheme())) {
            return java.nio.file.Path.of(uri.getPath()).toAbsolutePath().normalize().toString();
        }
        return uri.toString();
    }

    private static int firstGlobChar(String p) {
        for (int i = 0; i < p.length(); i++) {
            if (GLOB_CHARS.indexOf(p.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    private static String stripSlash(String p) {
        return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }

    /** One input path: its base and, when it is a pattern, the pattern of its path component. */
    private static final class Input implements Serializable {
        private static final long serialVersionUID = 1L;

        final Path base;
        final String scheme;
        final String authority;
        final String basePath;
        final String glob; // null: a plain file or folder
        private transient PathMatcher matcher;

        Input(Path path) {
            java.net.URI uri = path.toUri();
            this.scheme = uri.getScheme();
            this.authority = uri.getAuthority();
            String p = stripSlash(uri.getPath());
            this.glob = isPattern(p) ? p : null;
            this.base = base(path);
            this.basePath = stripSlash(base.toUri().getPath());
        }

        boolean accepts(Path file) {
            java.net.URI uri = file.toUri();
            if (!Objects.equals(authority, uri.getAuthority())
                    || scheme != null
                            && uri.getScheme() != null
                            && !scheme.equals(uri.getScheme())) {
                return false;
            }
            String p = uri.getPath();
            if (!(p.equals(basePath)
                    || p.startsWith(basePath.endsWith("/") ? basePath : basePath + "/"))) {
                return false;
            }
            String below = p.substring(basePath.length());
            for (String segment : below.split("/")) {
                if (segment.startsWith(".") || segment.startsWith("_")) {
                    return false;
                }
            }
            if (glob == null) {
                return true;
            }
            if (matcher == null) {
                matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
            }
            return matcher.matches(java.nio.file.Path.of(p));
        }
    }
}

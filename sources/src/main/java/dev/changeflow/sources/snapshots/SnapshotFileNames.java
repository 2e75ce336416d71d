package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Versions of snapshot files from their names (semantics.md A6): {@code <anything>_<n>.<ext>} or
 * {@code <n>.<ext>}, where {@code n} is an integer (the version, a BIGINT; {@code snapshot_10}
 * sorts after {@code snapshot_9}) and {@code ext} is {@code csv}, {@code json} or {@code jsonl},
 * optionally followed by {@code .gz}. Names starting with {@code .} or {@code _} are not snapshot
 * files (Flink's file sources skip them too).
 */
@PublicEvolving
public final class SnapshotFileNames {
    private static final Pattern NAME =
            Pattern.compile("(?i)^(?:.*_)?([^_]*)\\.(csv|json|jsonl)(\\.gz)?$");

    /** The format of a snapshot file, by extension. */
    public enum Format {
        /** Comma-separated values with a header line naming the columns. */
        CSV,
        /** One JSON object per line ({@code .json} or {@code .jsonl}), columns by name. */
        JSON
    }

    private SnapshotFileNames() {}

    /** Whether a file is skipped (hidden or temporary: starts with {@code .} or {@code _}). */
    public static boolean ignored(String fileName) {
        return fileName.startsWith(".") || fileName.startsWith("_");
    }

    /**
     * The version in a snapshot file's name.
     *
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} naming the file when the name
     *     has no integer version or an unknown extension
     */
    public static long version(String fileName) {
        Matcher m = NAME.matcher(fileName);
        if (m.matches() && m.group(1).matches("-?[0-9]{1,18}")) {
            return Long.parseLong(m.group(1));
        }
        throw new AutoCdcException(
                AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                "snapshot file '"
                        + fileName
                        + "' has no integer version in its name; name snapshot files"
                        + " <name>_<n>.csv or <name>_<n>.json (n an integer, e.g. snapshot_3.csv)");
    }

    /** The format of a snapshot file (its name passed {@link #version}). */
    public static Format format(String fileName) {
        String n = fileName.toLowerCase(Locale.ROOT);
        if (n.endsWith(".gz")) {
            n = n.substring(0, n.length() - 3);
        }
        return n.endsWith(".csv") ? Format.CSV : Format.JSON;
    }

    /**
     * The snapshot files of a local folder by version, checked as the source will read them: every
     * file not {@link #ignored} must carry a version, and no two files the same one.
     *
     * @throws AutoCdcException {@code SNAPSHOT_VERSION_NOT_SORTABLE} naming the file(s), {@code
     *     SNAPSHOT_FOLDER_NOT_FOUND} naming the folder when it does not exist or is a file
     * @throws UncheckedIOException when the folder exists but cannot be listed
     */
    public static TreeMap<Long, Path> list(Path folder) {
        if (!Files.isDirectory(folder)) {
            throw new AutoCdcException(
                    AutoCdcException.Code.SNAPSHOT_FOLDER_NOT_FOUND,
                    "snapshot folder "
                            + folder
                            + (Files.exists(folder)
                                    ? " is a file, not a folder"
                                    : " does not exist")
                            + "; 'from-snapshot' names the folder that holds the snapshot files"
                            + " (snapshot_1.csv, snapshot_2.csv, ...)");
        }
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(folder)) {
            s.filter(Files::isRegularFile)
                    .filter(p -> !ignored(p.getFileName().toString()))
                    .forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list snapshot folder " + folder, e);
        }
        TreeMap<Long, Path> byVersion = new TreeMap<>();
        for (Path f : files) {
            long v = version(f.getFileName().toString());
            Path other = byVersion.put(v, f);
            if (other != null) {
                throw new AutoCdcException(
                        AutoCdcException.Code.SNAPSHOT_VERSION_NOT_SORTABLE,
                        "snapshot files '"
                                + other.getFileName()
                                + "' and '"
                                + f.getFileName()
                                + "' in "
                                + folder
                                + " both have version "
                                + v
                                + "; one file per version");
            }
        }
        return byVersion;
    }
}

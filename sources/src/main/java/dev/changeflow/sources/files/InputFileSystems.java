package dev.changeflow.sources.files;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.UnsupportedFileSystemSchemeException;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;

/**
 * The Flink file systems of the local launcher's inputs ({@code read_files} paths and {@code
 * ingest} arguments, docs/semantics.md S2): a local path ({@code file:} or no scheme) and an
 * object-store path ({@code s3://}, {@code gs://}, {@code abfss://}, ...) are listed, sampled,
 * probed and read through the same {@link FileSystem} abstraction.
 *
 * <p>Object stores come from Flink's file-system plugins, found as Flink finds them: the folder the
 * system property {@value #PLUGINS_DIR_PROPERTY} names, else the environment variable {@code
 * FLINK_PLUGINS_DIR} ({@code bin/changeflow} sets it to {@code jobs/target/flink-plugins}, which
 * the build fills with {@code flink-s3-fs-hadoop}); each plugin in a sub-folder of its own. Their
 * options ({@code s3.endpoint}, {@code s3.access-key}, {@code s3.secret-key}, {@code
 * s3.path.style.access}, ...) are Flink configuration: the {@code config.yaml} of {@code
 * FLINK_CONF_DIR} when that is set, overlaid by the options given to {@link #initialize(Map)}.
 */
@PublicEvolving
public final class InputFileSystems {
    /** System property naming the plugins folder (overrides {@code FLINK_PLUGINS_DIR}). */
    public static final String PLUGINS_DIR_PROPERTY = "changeflow.flink-plugins-dir";

    private static final Map<String, String> PLUGINS =
            Map.of(
                    "s3", "flink-s3-fs-hadoop",
                    "s3a", "flink-s3-fs-hadoop",
                    "s3p", "flink-s3-fs-presto",
                    "gs", "flink-gs-fs-hadoop",
                    "abfs", "flink-azure-fs-hadoop",
                    "abfss", "flink-azure-fs-hadoop",
                    "wasb", "flink-azure-fs-hadoop",
                    "wasbs", "flink-azure-fs-hadoop",
                    "oss", "flink-oss-fs-hadoop");

    private InputFileSystems() {}

    /**
     * Whether {@code key} is a file-system option of Flink's configuration ({@code s3.*}, {@code
     * gs.*}, {@code fs.*}, {@code presto.s3.*}), as {@code SET} takes them.
     */
    public static boolean isFileSystemOption(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.startsWith("s3.")
                || k.startsWith("s3a.")
                || k.startsWith("gs.")
                || k.startsWith("fs.")
                || k.startsWith("presto.s3.");
    }

    /**
     * (Re)initializes Flink's file systems in this JVM with the plugins folder (if any) and the
     * Flink configuration of {@code FLINK_CONF_DIR} (if set) overlaid by {@code options}.
     *
     * @param options file-system options such as {@code s3.endpoint}; may be empty
     */
    public static void initialize(Map<String, String> options) {
        String confDir = System.getenv("FLINK_CONF_DIR");
        Configuration conf =
                confDir == null || confDir.isBlank()
                        ? new Configuration()
                        : GlobalConfiguration.loadConfiguration(confDir);
        options.forEach(conf::setString);
        FileSystem.initialize(conf, pluginManager(conf));
    }

    @Nullable
    private static PluginManager pluginManager(Configuration conf) {
        String dir = pluginsDir();
        if (dir == null || !java.nio.file.Files.isDirectory(java.nio.file.Path.of(dir))) {
            return null;
        }
        try {
            return new DefaultPluginManager(
                    new DirectoryBasedPluginFinder(java.nio.file.Path.of(dir)).findPlugins(),
                    CoreOptions.getPluginParentFirstLoaderPatterns(conf));
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "the Flink plugins folder " + dir + " cannot be read: " + e.getMessage(), e);
        }
    }

    /** The plugins folder: {@value #PLUGINS_DIR_PROPERTY}, else {@code FLINK_PLUGINS_DIR}. */
    @Nullable
    public static String pluginsDir() {
        String dir = System.getProperty(PLUGINS_DIR_PROPERTY);
        if (dir == null || dir.isBlank()) {
            dir = System.getenv("FLINK_PLUGINS_DIR");
        }
        return dir == null || dir.isBlank() ? null : dir;
    }

    /**
     * The file system of {@code path}.
     *
     * @throws NoFileSystemException when no file system (no plugin) serves the path's scheme
     * @throws IOException when the file system cannot be created (e.g. bad options)
     */
    public static FileSystem of(Path path) throws IOException {
        try {
            return path.getFileSystem();
        } catch (UnsupportedFileSystemSchemeException e) {
            throw new NoFileSystemException(path, e);
        }
    }

    /**
     * Whether {@code path} (a file, a folder, or a glob pattern's base) exists.
     *
     * @throws NoFileSystemException when no file system serves the path's scheme
     */
    public static boolean exists(Path path) throws IOException {
        return of(path).exists(path);
    }

    /**
     * A path as written: {@code scheme://...} stays a URI, anything else is a local path made
     * absolute against {@code base} ({@code file:} URIs taken as they are).
     */
    public static Path parse(String written, java.nio.file.Path base) {
        if (written.contains("://") || written.startsWith("file:")) {
            return new Path(written);
        }
        java.nio.file.Path p = java.nio.file.Path.of(written);
        return new Path((p.isAbsolute() ? p : base.resolve(p)).normalize().toUri());
    }

    /** A local {@link java.nio.file.Path} as a Flink {@code file:} path (absolute, normalized). */
    public static Path of(java.nio.file.Path local) {
        return new Path(local.toAbsolutePath().normalize().toUri());
    }

    /**
     * A path for messages and saved lists: a local path as its plain absolute path, another file
     * system's path as its URI ({@code s3://bucket/key}).
     */
    public static String display(Path path) {
        return FileGlob.key(path);
    }

    /**
     * No file system serves a path's scheme: the message names the scheme and the plugin to add
     * ({@code SOURCE_NOT_FOUND} where a launcher reports it).
     */
    public static final class NoFileSystemException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        private final String scheme;

        NoFileSystemException(Path path, Throwable cause) {
            super(message(path), cause);
            this.scheme = path.toUri().getScheme();
        }

        /** The scheme without a file system, e.g. {@code gs}. */
        public String scheme() {
            return scheme;
        }

        private static String message(Path path) {
            String scheme = path.toUri().getScheme();
            String plugin = PLUGINS.get(scheme == null ? "" : scheme.toLowerCase(Locale.ROOT));
            String dir = pluginsDir();
            return "no Flink file system for scheme '"
                    + scheme
                    + "' of "
                    + path
                    + ": add the Flink file-system plugin"
                    + (plugin == null ? " for it" : " " + plugin + " (" + plugin + "-2.1.1.jar)")
                    + " in a sub-folder of its own of the plugins folder ("
                    + (dir == null
                            ? "set FLINK_PLUGINS_DIR"
                            : dir + ", from " + PLUGINS_DIR_PROPERTY + " or FLINK_PLUGINS_DIR")
                    + ")";
        }
    }
}

package dev.changeflow.e2e;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classpath {@code bin/changeflow} runs with ({@code jobs/target/launcher-classpath.txt}, the
 * runtime scope of {@code jobs}, plus the job jar) holds what the runtime needs beyond what the
 * tests' own classpath proves: a dependency that only the tests declared (or that the parent POM's
 * dependency management narrowed to test scope) is missing there, and the command fails only for
 * the user. Each check loads the class through a class loader of exactly that classpath.
 */
class LauncherClasspathITCase {

    /**
     * The embedded lock of in-job maintenance ({@code maintenance: true}, docs/semantics.md M1)
     * opens a SQLite file through JDBC: the driver must be on the launcher's classpath and open a
     * database.
     */
    @Test
    void sqliteDriverOfTheEmbeddedMaintenanceLockIsOnTheLauncherClasspath(@TempDir Path tmp)
            throws Exception {
        try (URLClassLoader launcher = launcherClassLoader()) {
            Driver driver =
                    (Driver)
                            Class.forName("org.sqlite.JDBC", true, launcher)
                                    .getDeclaredConstructor()
                                    .newInstance();
            String url = "jdbc:sqlite:" + tmp.resolve("locks.db");
            assertThat(driver.acceptsURL(url)).isTrue();
            try (Connection c = driver.connect(url, new Properties());
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT 41 + 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
        }
    }

    /** The job jar and the entries of {@code launcher-classpath.txt}, on the platform loader. */
    private static URLClassLoader launcherClassLoader() throws Exception {
        Path target = SharedData.repositoryRoot().resolve("jobs").resolve("target");
        Path listing = target.resolve("launcher-classpath.txt");
        assertThat(listing).as("written by the jobs module's package phase").isRegularFile();
        List<URL> urls = new ArrayList<>();
        try (Stream<Path> files = Files.list(target)) {
            files.filter(
                            f -> {
                                String n = f.getFileName().toString();
                                return n.startsWith("changeflow-jobs-")
                                        && n.endsWith(".jar")
                                        && !n.endsWith("-tests.jar");
                            })
                    .forEach(f -> urls.add(toUrl(f)));
        }
        assertThat(urls).as("the job jar in " + target).hasSize(1);
        for (String entry : Files.readString(listing).trim().split(java.io.File.pathSeparator)) {
            urls.add(toUrl(Path.of(entry)));
        }
        return new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    }

    private static URL toUrl(Path p) {
        try {
            return p.toUri().toURL();
        } catch (java.net.MalformedURLException e) {
            throw new IllegalArgumentException(p.toString(), e);
        }
    }
}

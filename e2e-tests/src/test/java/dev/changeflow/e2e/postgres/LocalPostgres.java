package dev.changeflow.e2e.postgres;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server for tests, run from the machine's own binaries (Debian's {@code
 * postgresql} package: {@code /usr/lib/postgresql/<version>/bin}, the highest version found; else
 * {@code initdb} on the {@code PATH}): a fresh cluster in a temporary folder ({@code initdb}, trust
 * authentication, UTF-8, C locale), listening on a free port of {@code 127.0.0.1} only, with {@code
 * wal_level=logical} for Debezium's {@code pgoutput} and durability off ({@code fsync}, {@code
 * synchronous_commit}) for speed. {@code initdb} refuses to run as root, so under root the server
 * tools run as the {@code postgres} OS user ({@code runuser}), which owns the folder. Superuser
 * {@code postgres}, no password. Stopped ({@code pg_ctl stop -m fast}) and deleted on close, or by
 * a JVM shutdown hook if the test JVM ends first.
 *
 * <p>Without the binaries (or, under root, without the {@code postgres} user), each test of a class
 * that registers it is skipped with a message saying what it needs ({@link #start()} called
 * directly skips the calling test) — except under {@code CI=true}, where it fails: CI's {@code
 * .ci/run} installs the package.
 *
 * <pre>{@code
 * @RegisterExtension static final LocalPostgres PG = new LocalPostgres();
 * ... PG.createDatabase("app") ... DriverManager.getConnection(PG.jdbcUrl("app"), PG.user(), "") ...
 * }</pre>
 */
public final class LocalPostgres
        implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback, AutoCloseable {
    /** The server tools this utility and its callers use; all must be in the same folder. */
    private static final List<String> TOOLS = List.of("initdb", "pg_ctl", "postgres", "pgbench");

    private static final String SERVER_USER = "postgres";
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(120);

    private Path bin;
    private Path dir;
    private Path data;
    private int port;
    private boolean asServerUser;
    private Thread shutdownHook;

    /** Why the server was not started (as an extension, outside CI), or null. */
    private String skipReason;

    /**
     * Creates and starts a fresh cluster.
     *
     * @throws org.opentest4j.TestAbortedException when PostgreSQL is not installed (not under CI)
     * @throws IllegalStateException when it is not installed under {@code CI=true}, or a server
     *     tool fails (its output is in the message)
     */
    public LocalPostgres start() {
        if (data != null) {
            return this;
        }
        whatIsMissing().ifPresent(LocalPostgres::skipOrFail);
        bin = findBinaries().orElseThrow();
        asServerUser = "root".equals(System.getProperty("user.name"));
        try {
            dir = Files.createTempDirectory("changeflow-pg-");
            if (asServerUser) {
                UserPrincipal owner =
                        dir.getFileSystem()
                                .getUserPrincipalLookupService()
                                .lookupPrincipalByName(SERVER_USER);
                Files.setOwner(dir, owner);
            }
            data = dir.resolve("data");
            run(
                    List.of(
                            tool("initdb"),
                            "-D",
                            data.toString(),
                            "-U",
                            SERVER_USER,
                            "--auth=trust",
                            "--encoding=UTF8",
                            "--locale=C",
                            "--no-sync"));
            shutdownHook = new Thread(this::stopQuietly, "local-postgres-stop");
            Runtime.getRuntime().addShutdownHook(shutdownHook);
            IllegalStateException last = null;
            for (int attempt = 0; attempt < 5; attempt++) {
                port = freePort();
                try {
                    run(
                            List.of(
                                    tool("pg_ctl"),
                                    "-D",
                                    data.toString(),
                                    "-l",
                                    dir.resolve("server.log").toString(),
                                    "-w",
                                    "-t",
                                    "60",
                                    "-o",
                                    serverOptions(),
                                    "start"));
                    return this;
                } catch (IllegalStateException e) {
                    // a port taken between choosing and binding it: try another one
                    last = e;
                }
            }
            throw last;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String serverOptions() {
        return String.join(
                " ",
                "-c listen_addresses=127.0.0.1",
                "-p " + port,
                "-c unix_socket_directories='" + dir + "'",
                "-c wal_level=logical",
                "-c max_wal_senders=4",
                "-c max_replication_slots=4",
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
                "-c max_connections=50");
    }

    /**
     * What this machine lacks to run the server (binaries, or under root the server's OS user), as
     * a skip message.
     */
    static Optional<String> whatIsMissing() {
        String missing = null;
        if (findBinaries().isEmpty()) {
            missing =
                    "PostgreSQL server binaries "
                            + TOOLS
                            + " (looked in /usr/lib/postgresql/*/bin and the PATH)";
        } else if ("root".equals(System.getProperty("user.name")) && !userExists(SERVER_USER)) {
            missing =
                    "the OS user '" + SERVER_USER + "' to run PostgreSQL as (initdb refuses root)";
        }
        return Optional.ofNullable(missing)
                .map(m -> "this test needs " + m + ": on Debian, apt-get install -y postgresql");
    }

    /**
     * Skips the current test (or container) with {@code message}; fails instead under {@code
     * CI=true}.
     */
    private static void skipOrFail(String message) {
        if ("true".equals(System.getenv("CI"))) {
            throw new IllegalStateException(message + " (.ci/run installs it)");
        }
        Assumptions.abort(message);
    }

    private static Optional<Path> findBinaries() {
        List<Path> candidates = new ArrayList<>();
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                versions.map(v -> v.resolve("bin"))
                        .sorted(
                                Comparator.comparing(
                                                (Path p) ->
                                                        versionOf(
                                                                p.getParent()
                                                                        .getFileName()
                                                                        .toString()))
                                        .reversed())
                        .forEach(candidates::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String p : path.split(":")) {
                if (!p.isEmpty()) {
                    candidates.add(Path.of(p));
                }
            }
        }
        return candidates.stream()
                .filter(d -> TOOLS.stream().allMatch(t -> Files.isExecutable(d.resolve(t))))
                .findFirst();
    }

    private static int versionOf(String name) {
        try {
            return Integer.parseInt(name);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean userExists(String user) {
        try (Stream<String> lines = Files.lines(Path.of("/etc/passwd"))) {
            return lines.anyMatch(l -> l.startsWith(user + ":"));
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The absolute path of a server tool ({@code pgbench}, {@code psql}, ...) of this installation.
     */
    public String tool(String name) {
        if (bin == null) {
            throw new IllegalStateException("the local PostgreSQL server is not started");
        }
        return bin.resolve(name).toString();
    }

    /** The TCP port on {@code 127.0.0.1}. */
    public int port() {
        if (data == null) {
            throw new IllegalStateException("the local PostgreSQL server is not started");
        }
        return port;
    }

    /** The superuser's name ({@code postgres}; trust authentication, any or no password). */
    public String user() {
        return SERVER_USER;
    }

    /** {@code jdbc:postgresql://127.0.0.1:<port>/<database>}. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port() + "/" + database;
    }

    /** A new connection to {@code database} as the superuser (close it). */
    public Connection connect(String database) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database), user(), "");
    }

    /** Creates a database (UTF-8). @throws SQLException when it exists or the server refuses */
    public void createDatabase(String name) throws SQLException {
        try (Connection c = connect("postgres");
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE \"" + name + "\"");
        }
    }

    /**
     * Starts the server. Without PostgreSQL (outside CI) it only notes why, and {@link #beforeEach}
     * skips each test with that reason, so the tests show as skipped with the message.
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        Optional<String> missing = whatIsMissing();
        if (missing.isPresent() && !"true".equals(System.getenv("CI"))) {
            skipReason = missing.get();
            return;
        }
        start();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (skipReason != null) {
            Assumptions.abort(skipReason);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    /** Stops the server (fast shutdown) and deletes its folder. */
    @Override
    public void close() {
        stopQuietly();
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException ignored) {
                // the JVM is already shutting down
            }
            shutdownHook = null;
        }
        if (dir != null) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            dir = null;
        }
    }

    private synchronized void stopQuietly() {
        if (data != null && Files.exists(data.resolve("postmaster.pid"))) {
            try {
                run(
                        List.of(
                                tool("pg_ctl"),
                                "-D",
                                data.toString(),
                                "-m",
                                "fast",
                                "-w",
                                "-t",
                                "60",
                                "stop"));
            } catch (RuntimeException ignored) {
                // not running (a start that failed half-way)
            }
        }
        data = null;
    }

    /**
     * Runs a server tool in the cluster folder (as the server user under root); its output goes to
     * the error on failure.
     */
    private void run(List<String> command) {
        List<String> cmd = new ArrayList<>();
        if (asServerUser) {
            cmd.addAll(List.of("runuser", "-u", SERVER_USER, "--"));
        }
        cmd.addAll(command);
        try {
            Path out = Files.createTempFile("changeflow-pg-tool-", ".out");
            try {
                Process p =
                        new ProcessBuilder(cmd)
                                .directory(dir.toFile())
                                .redirectErrorStream(true)
                                .redirectOutput(out.toFile())
                                .start();
                if (!p.waitFor(TOOL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(
                            String.join(" ", cmd)
                                    + " did not finish within "
                                    + TOOL_TIMEOUT.toSeconds()
                                    + " s");
                }
                if (p.exitValue() != 0) {
                    String log =
                            dir != null && Files.exists(dir.resolve("server.log"))
                                    ? "\nserver log:\n"
                                            + Files.readString(
                                                    dir.resolve("server.log"),
                                                    StandardCharsets.UTF_8)
                                    : "";
                    throw new IllegalStateException(
                            String.join(" ", cmd)
                                    + " failed ("
                                    + p.exitValue()
                                    + "):\n"
                                    + Files.readString(out, StandardCharsets.UTF_8)
                                    + log);
                }
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + cmd, e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }
}

package dev.changeflow.e2e;

import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * Locates {@code ../shared/data} beside the repository (CI lays it there). Tests that need it are
 * skipped with a message when it is absent, except under {@code CI=true}, where absence fails.
 */
public final class SharedData {
    private SharedData() {}

    /** The clone's root: the first folder with {@code .mvn} at or above the working directory. */
    public static Path repositoryRoot() {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException(
                    "cannot find the repository root (a folder with .mvn) above "
                            + System.getProperty("user.dir"));
        }
        return p;
    }

    /** {@code ../shared/data/<name>} or a skipped test (failure under CI=true). */
    static Path require(String name) {
        Path dir = repositoryRoot().resolveSibling("shared").resolve("data").resolve(name);
        if (!Files.isDirectory(dir)) {
            String msg =
                    "this test needs the recorded capture "
                            + dir
                            + " (../shared/data/"
                            + name
                            + " beside the clone)";
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(msg + ", which CI must provide");
            }
            Assumptions.abort(msg);
        }
        return dir;
    }

    static Path pgbenchCapture() {
        return require("pgbench-s1").resolve("capture-pgbench-s1.jsonl.gz");
    }

    /**
     * The oracle CSV of a pgbench table: data lines without the header, as PostgreSQL wrote them.
     */
    public static List<String> finalCsv(String table) throws IOException {
        Path dir = require("pgbench-s1");
        Path plain = dir.resolve("final-" + table + ".csv");
        Path gz = dir.resolve("final-" + table + ".csv.gz");
        List<String> lines = new ArrayList<>();
        try (InputStream in =
                        Files.exists(plain)
                                ? Files.newInputStream(plain)
                                : new GZIPInputStream(Files.newInputStream(gz));
                BufferedReader r =
                        new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            r.readLine();
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                lines.add(line);
            }
        }
        return lines;
    }

    static List<String> readLines(Path gz) throws IOException {
        List<String> lines = new ArrayList<>();
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(
                                new GZIPInputStream(Files.newInputStream(gz)),
                                StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                lines.add(line);
            }
        }
        return lines;
    }
}

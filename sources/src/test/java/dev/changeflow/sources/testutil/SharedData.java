package dev.changeflow.sources.testutil;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Locates the shared test data ({@code ../shared/data} next to the repository root, the folder
 * holding {@code .mvn}). When it is absent, tests are skipped with a message — except on CI ({@code
 * CI=true}), where absence fails.
 */
public final class SharedData {
    private SharedData() {}

    /** The repository root: the nearest ancestor of {@code user.dir} containing {@code .mvn}. */
    public static Path repositoryRoot() {
        Path p = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException(
                    "no folder containing .mvn above " + System.getProperty("user.dir"));
        }
        return p;
    }

    /** {@code <root>/../shared/data/<relative>}, or skips (fails on CI) when it does not exist. */
    public static Path require(String relative) {
        Path file = repositoryRoot().resolve("../shared/data").resolve(relative).normalize();
        if (!Files.exists(file)) {
            String msg =
                    "needs the shared test data "
                            + file
                            + " (the pgbench capture from ../shared/data next to the repository)";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                throw new AssertionError(msg + " — missing on CI");
            }
            Assumptions.assumeTrue(false, msg);
        }
        return file;
    }

    /** The real Debezium capture of pgbench (141,511 lines). */
    public static Path pgbenchCapture() {
        return require("pgbench-s1/capture-pgbench-s1.jsonl.gz");
    }
}

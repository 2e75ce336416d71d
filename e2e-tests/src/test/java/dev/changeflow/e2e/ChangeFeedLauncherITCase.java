package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's change-feed commands as a user runs them: {@code changeflow sql -e ...} creating,
 * writing and reading a table through {@code table_changes(...)}, a change-feed error with its
 * code, and {@code changeflow expire} keeping what a registered consumer needs.
 */
class ChangeFeedLauncherITCase {
    @TempDir Path tmp;

    /** Exit code, stdout lines (without the test log's lines, which share stdout) and stderr of one run. */
    private record Run(int code, List<String> out, String err) {}

    private static final java.util.regex.Pattern LOG_LINE =
            java.util.regex.Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d,\\d{3} |\\s|java\\.|Missing ).*");

    private Run run(String... args) {
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            code = Main.execute(args);
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
        }
        List<String> lines = Arrays.stream(out.toString(StandardCharsets.UTF_8).split("\n"))
                .filter(l -> !LOG_LINE.matcher(l).matches())
                .collect(java.util.stream.Collectors.toList());
        String errText = Arrays.stream(err.toString(StandardCharsets.UTF_8).split("\n"))
                .filter(l -> !LOG_LINE.matcher(l).matches())
                .collect(java.util.stream.Collectors.joining("\n"));
        return new Run(code, lines, errText);
    }

    @Test
    void sqlReadsTableChangesAndExpireKeepsConsumers() {
        String warehouse = tmp.resolve("warehouse").toString();
        Run write = run("sql", "--warehouse", warehouse,
                "-e", "CREATE DATABASE db",
                "-e", "CREATE TABLE db.t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
                        + "WITH ('format-version'='2', 'write.upsert.enabled'='true')",
                "-e", "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')",
                "-e", "INSERT INTO db.t VALUES (2, 'b, 2')",
                "-e", "INSERT INTO db.t VALUES (3, 'c')");
        assertThat(write.code()).as(write.err() + write.out()).isZero();
        assertThat(write.out()).containsExactly("OK", "OK", "OK", "OK", "OK");

        Run read = run("sql", "--warehouse", warehouse, "-e",
                "SELECT id, name, _change_type, _commit_version FROM table_changes('db.t', 2, 3) "
                        + "ORDER BY _commit_version, id, name");
        assertThat(read.code()).as(read.err()).isZero();
        assertThat(read.out())
                .containsExactly(
                        "id,name,_change_type,_commit_version",
                        "2,b,update_preimage,2",
                        "2,\"b, 2\",update_postimage,2",
                        "3,c,insert,3");

        Run error = run("sql", "--warehouse", warehouse, "-e", "SELECT * FROM table_changes('db.t', 4)");
        assertThat(error.code()).isEqualTo(1);
        assertThat(error.err())
                .isEqualTo("error: START_AFTER_LATEST_COMMIT: The starting version 4 of the change feed of table "
                        + "changeflow.db.t is after the latest version 3. Start at version 3 or earlier, or set "
                        + "'timestamp-out-of-range.enabled' = 'true' to get an empty result.");

        Table table = new HadoopCatalog(new Configuration(), tmp.resolve("warehouse").toUri().toString())
                .loadTable(TableIdentifier.of("db", "t"));
        Instant updated = Instant.now();
        ConsumerRegistry.forTable(table).write("gold", 3, updated);
        Run expire = run("expire", "--table", "db.t", "--older-than", "0s", "--retain-last", "1", "--warehouse", warehouse);
        assertThat(expire.code()).as(expire.err()).isZero();
        assertThat(expire.out())
                .contains(
                        "expired versions: 1",
                        "oldest retained version: 2",
                        "kept for consumers from version: 2",
                        "live consumers: [gold@3 (" + updated + ")]",
                        "stale consumers (ignored): -");

        Run after = run("sql", "--warehouse", warehouse, "-e",
                "SELECT count(*) AS changes FROM table_changes('db.t', 3)");
        assertThat(after.out()).containsExactly("changes", "1");
    }
}

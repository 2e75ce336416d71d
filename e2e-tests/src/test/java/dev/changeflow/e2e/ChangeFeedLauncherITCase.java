package dev.changeflow.e2e;

import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Snapshot;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's change-feed commands as a user runs them: {@code changeflow sql -e ...} creating,
 * writing and reading a table through {@code table_changes(...)}, a change-feed error with its
 * code, and {@code changeflow expire} keeping what a registered consumer needs.
 */
class ChangeFeedLauncherITCase {
    @TempDir Path tmp;

    /**
     * Exit code, stdout lines (without the test log's lines, which share stdout) and stderr of one
     * run.
     */
    private record Run(int code, List<String> out, String err) {}

    private static final Pattern LOG_LINE =
            Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d,\\d{3} |\\s|java\\.|Missing ).*");

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
        List<String> lines =
                Arrays.stream(out.toString(StandardCharsets.UTF_8).split("\n"))
                        .filter(l -> !LOG_LINE.matcher(l).matches())
                        .collect(Collectors.toList());
        String errText =
                Arrays.stream(err.toString(StandardCharsets.UTF_8).split("\n"))
                        .filter(l -> !LOG_LINE.matcher(l).matches())
                        .collect(Collectors.joining("\n"));
        return new Run(code, lines, errText);
    }

    @Test
    void sqlReadsTableChangesAndExpireKeepsConsumers() {
        String warehouse = tmp.resolve("warehouse").toString();
        Run write =
                run(
                        "sql",
                        "--warehouse",
                        warehouse,
                        "-e",
                        "CREATE DATABASE db",
                        "-e",
                        "CREATE TABLE db.t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
                                + "WITH ('format-version'='2', 'write.upsert.enabled'='true')",
                        "-e",
                        "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')",
                        "-e",
                        "INSERT INTO db.t VALUES (2, 'b, 2')",
                        "-e",
                        "INSERT INTO db.t VALUES (3, 'c')");
        assertThat(write.code()).as(write.err() + write.out()).isZero();
        assertThat(write.out()).containsExactly("OK", "OK", "OK", "OK", "OK");

        Run read =
                run(
                        "sql",
                        "--warehouse",
                        warehouse,
                        "-e",
                        "SELECT id, name, _change_type, _commit_version FROM table_changes('db.t', 2, 3) "
                                + "ORDER BY _commit_version, id, name");
        assertThat(read.code()).as(read.err()).isZero();
        assertThat(read.out())
                .containsExactly(
                        "id,name,_change_type,_commit_version",
                        "2,b,update_preimage,2",
                        "2,\"b, 2\",update_postimage,2",
                        "3,c,insert,3");

        Run error =
                run(
                        "sql",
                        "--warehouse",
                        warehouse,
                        "-e",
                        "SELECT * FROM table_changes('db.t', 4)");
        assertThat(error.code()).isEqualTo(1);
        assertThat(error.err())
                .isEqualTo(
                        "error: START_AFTER_LATEST_COMMIT: The starting version 4 of the change feed of table "
                                + "changeflow.db.t is after the latest version 3. Start at version 3 or earlier, or set "
                                + "'timestamp-out-of-range.enabled' = 'true' to get an empty result.");

        Table table =
                new HadoopCatalog(new Configuration(), tmp.resolve("warehouse").toUri().toString())
                        .loadTable(TableIdentifier.of("db", "t"));
        Instant updated = Instant.now();
        ConsumerRegistry.forTable(table).write("gold", 3, updated);
        Run expire =
                run(
                        "expire",
                        "--table",
                        "db.t",
                        "--older-than",
                        "0s",
                        "--retain-last",
                        "1",
                        "--warehouse",
                        warehouse);
        assertThat(expire.code()).as(expire.err()).isZero();
        assertThat(expire.out())
                .contains(
                        "expired versions: 1",
                        "oldest retained version: 2",
                        "kept for consumers from version: 2",
                        "live consumers: [gold@3 (" + updated + ")]",
                        "stale consumers (ignored): -");

        Run after =
                run(
                        "sql",
                        "--warehouse",
                        warehouse,
                        "-e",
                        "SELECT count(*) AS changes FROM table_changes('db.t', 3)");
        assertThat(after.out()).containsExactly("changes", "1");
    }

    /**
     * Issue #19: {@code changeflow sql -e "SELECT * FROM table_changes(...)"} (BATCH mode at the
     * local parallelism) prints the changes in version order without an {@code ORDER BY}, within a
     * version by key with each preimage directly before its postimage, although every version has
     * several data files.
     */
    @Test
    void sqlPrintsTableChangesInVersionOrder() {
        String warehouse = tmp.resolve("warehouse").toString();
        String insert = "INSERT INTO db.t /*+ OPTIONS('write-parallelism'='2') */ VALUES ";
        Run write =
                run(
                        "sql",
                        "--warehouse",
                        warehouse,
                        "-e",
                        "CREATE DATABASE db",
                        "-e",
                        "CREATE TABLE db.t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
                                + "WITH ('format-version'='2', 'write.upsert.enabled'='true')",
                        "-e",
                        insert + "(1, 'a1'), (2, 'a2'), (3, 'a3'), (4, 'a4')",
                        "-e",
                        insert + "(1, 'b1'), (5, 'b5'), (6, 'b6')",
                        "-e",
                        insert + "(2, 'c2'), (7, 'c7'), (11, 'c11'), (12, 'c12')",
                        "-e",
                        insert + "(3, 'd3'), (5, 'd5'), (8, 'd8')");
        assertThat(write.code()).as(write.err() + write.out()).isZero();
        Table table =
                new HadoopCatalog(new Configuration(), tmp.resolve("warehouse").toUri().toString())
                        .loadTable(TableIdentifier.of("db", "t"));
        Map<Long, String> committed = new HashMap<>();
        for (Snapshot snapshot : table.snapshots()) {
            assertThat(snapshot.addedDataFiles(table.io()))
                    .as("data files of version %d", snapshot.sequenceNumber())
                    .hasSizeGreaterThan(1);
            committed.put(
                    snapshot.sequenceNumber(),
                    Instant.ofEpochMilli(snapshot.timestampMillis()).toString());
        }
        assertThat(committed).containsOnlyKeys(1L, 2L, 3L, 4L);

        Run read =
                run(
                        "sql",
                        "--warehouse",
                        warehouse,
                        "-e",
                        "SELECT * FROM table_changes('db.t', 1, 4)");
        assertThat(read.code()).as(read.err()).isZero();
        assertThat(read.out())
                .containsExactly(
                        "id,name,_change_type,_commit_version,_commit_timestamp",
                        "1,a1,insert,1," + committed.get(1L),
                        "2,a2,insert,1," + committed.get(1L),
                        "3,a3,insert,1," + committed.get(1L),
                        "4,a4,insert,1," + committed.get(1L),
                        "1,a1,update_preimage,2," + committed.get(2L),
                        "1,b1,update_postimage,2," + committed.get(2L),
                        "5,b5,insert,2," + committed.get(2L),
                        "6,b6,insert,2," + committed.get(2L),
                        "2,a2,update_preimage,3," + committed.get(3L),
                        "2,c2,update_postimage,3," + committed.get(3L),
                        "7,c7,insert,3," + committed.get(3L),
                        "11,c11,insert,3," + committed.get(3L),
                        "12,c12,insert,3," + committed.get(3L),
                        "3,a3,update_preimage,4," + committed.get(4L),
                        "3,d3,update_postimage,4," + committed.get(4L),
                        "5,b5,update_preimage,4," + committed.get(4L),
                        "5,d5,update_postimage,4," + committed.get(4L),
                        "8,d8,insert,4," + committed.get(4L));
    }
}

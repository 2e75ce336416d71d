package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flag checks of {@code gold} (issue #16, a fresh user's findings): a missing or misplaced flag
 * is one coded error line, exit code 2 — {@code GOLD_DEFINITION_INVALID} when the definition names
 * no Silver or no Gold table or an aggregate table lacks its parts (docs/semantics.md G2), {@code
 * INVALID_OPTION} for a flag that belongs elsewhere or a bad value (README "Exit codes") — and
 * every flag is checked before anything is read or printed, {@code --print-sql} included.
 */
class GoldCommandFlagsTest {
    @TempDir Path dir;

    /** Exit code, standard output and standard error of {@code gold <args> --warehouse <dir>}. */
    private record Result(int code, String out, String err) {}

    private Result gold(String... args) {
        List<String> all = new ArrayList<>(List.of("gold"));
        all.addAll(List.of(args));
        all.addAll(List.of("--warehouse", dir.resolve("warehouse").toString()));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CapturedOutput.MainRun run =
                CapturedOutput.stdout(out, () -> CapturedOutput.main(all.toArray(String[]::new)));
        return new Result(run.code(), out.toString(StandardCharsets.UTF_8), run.stderr());
    }

    @Test
    void missingAndMisplacedFlagsAreCoded() {
        Map<List<String>, String> cases = new LinkedHashMap<>();
        cases.put(List.of(), "GOLD_DEFINITION_INVALID: give FILE.sql or --source NS.TABLE");
        cases.put(
                List.of("--source", "silver.s"),
                "GOLD_DEFINITION_INVALID: give --upsert-table, --aggregate-table, or both");
        cases.put(
                List.of("--source", "silver.s", "--aggregate-table", "gold.a"),
                "GOLD_DEFINITION_INVALID: --aggregate-table needs --group-by and at least one"
                        + " --aggregate");
        cases.put(
                List.of("--source", "silver.s", "--upsert-table", "gold.t", "--group-by", "bid"),
                "INVALID_OPTION: --group-by and --aggregate belong to --aggregate-table");
        cases.put(
                List.of("--source", "silver.s", "--aggregate-table", "gold.a", "--where", "x > 0"),
                "INVALID_OPTION: --columns and --where belong to --upsert-table");
        cases.put(
                List.of("--source", "s", "--upsert-table", "gold.t"),
                "INVALID_OPTION: --source takes NAMESPACE.TABLE, got 's'");
        cases.put(
                List.of("--source", "silver.s", "--upsert-table", "gold.t", "--bounded"),
                "INVALID_OPTION: --bounded applies to gold FILE.sql (a local run of --source ends"
                        + " at Silver's latest version anyway)");
        cases.put(
                List.of("--source", "silver.s", "--upsert-table", "gold.t", "--cluster"),
                "INVALID_OPTION: --cluster needs an Iceberg catalog (--catalog type=rest --catalog"
                        + " uri=...)");
        cases.forEach(
                (args, expected) ->
                        assertThat(gold(args.toArray(String[]::new)))
                                .as(args.toString())
                                .isEqualTo(new Result(2, "", "error: " + expected + "\n")));
        assertThat(dir.resolve("warehouse")).doesNotExist();
    }

    /**
     * {@code --print-sql} prints nothing when another flag is wrong (it used to print and exit 0
     * before the checkpoint interval or the starting version were looked at).
     */
    @Test
    void printSqlChecksEveryFlagFirst() {
        String[] definition = {"--print-sql", "--source", "silver.s", "--upsert-table", "gold.t"};
        Map<List<String>, String> cases = new LinkedHashMap<>();
        cases.put(
                List.of("--checkpoint-interval", "soon"),
                "INVALID_OPTION: --checkpoint-interval: not a duration: 'soon' (e.g. 2s, 500ms,"
                        + " 10min, 2d)");
        cases.put(
                List.of("--starting-version", "-1"),
                "INVALID_OPTION: --starting-version must be >= 0, got -1");
        cases.put(
                List.of("--parallelism", "0"),
                "INVALID_OPTION: --parallelism must be at least 1, got 0");
        cases.forEach(
                (bad, expected) -> {
                    List<String> args = new ArrayList<>(List.of(definition));
                    args.addAll(bad);
                    assertThat(gold(args.toArray(String[]::new)))
                            .as(bad.toString())
                            .isEqualTo(new Result(2, "", "error: " + expected + "\n"));
                });
        assertThat(dir.resolve("warehouse")).doesNotExist();
    }

    /** {@code gold FILE.sql}: its flag errors are coded too, checked before the file is read. */
    @Test
    void fileFlagsAreCodedBeforeTheFileIsRead() throws Exception {
        Path file = dir.resolve("g.sql");
        Files.writeString(file, "CREATE DATABASE IF NOT EXISTS gold;\nINSERT INTO gold.t SELECT 1");
        assertThat(gold(file.toString(), "--checkpoint-interval", "soon"))
                .isEqualTo(
                        new Result(
                                2,
                                "",
                                "error: INVALID_OPTION: --checkpoint-interval: not a duration:"
                                        + " 'soon' (e.g. 2s, 500ms, 10min, 2d)\n"));
        assertThat(gold(file.toString(), "--source", "silver.s"))
                .isEqualTo(
                        new Result(
                                2,
                                "",
                                "error: INVALID_OPTION: --source belongs to the flag form of gold;"
                                        + " FILE.sql says what to maintain\n"));
        assertThat(dir.resolve("warehouse")).doesNotExist();
    }
}

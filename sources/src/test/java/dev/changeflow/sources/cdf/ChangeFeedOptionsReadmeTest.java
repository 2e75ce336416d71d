package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.sql.ChangeFeedSqlOptions;

import org.apache.flink.configuration.ConfigOption;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's change-feed option tables (SQL hints, streaming Java API) against the {@link
 * ChangeFeedOptions} constants: every declared option is documented, the SQL table lists exactly
 * {@link ChangeFeedSqlOptions#OPTIONS} in order, and every documented default is the declared one.
 */
class ChangeFeedOptionsReadmeTest {

    @Test
    void theSqlTableListsExactlyTheSqlOptionsInOrder() throws IOException {
        Map<String, String> sql = table("### Change data feed in SQL");
        List<String> keys = new ArrayList<>();
        ChangeFeedSqlOptions.OPTIONS.forEach(o -> keys.add(o.key()));
        assertThat(new ArrayList<>(sql.keySet())).isEqualTo(keys);
    }

    /**
     * The changelog table lists exactly {@link ChangeFeedSqlOptions#CHANGELOG_OPTIONS} in order,
     * with their defaults; {@code start-mode}'s is the changelog's ({@code snapshot-then-changes}).
     */
    @Test
    void theChangelogTableListsExactlyTheChangelogOptionsInOrder() throws IOException {
        Map<String, String> changelog = table("## Silver→Gold in Flink SQL");
        List<String> keys = new ArrayList<>();
        ChangeFeedSqlOptions.CHANGELOG_OPTIONS.forEach(o -> keys.add(o.key()));
        assertThat(new ArrayList<>(changelog.keySet())).isEqualTo(keys);
        for (ConfigOption<?> o : ChangeFeedSqlOptions.CHANGELOG_OPTIONS) {
            String expected =
                    o.equals(ChangeFeedOptions.START_MODE)
                            ? "`" + ChangeFeedOptions.StartMode.SNAPSHOT_THEN_CHANGES + "`"
                            : o.hasDefaultValue() ? defaultText(o.defaultValue()) : "—";
            assertThat(changelog.get(o.key())).as(o.key()).isEqualTo(expected);
        }
    }

    @Test
    void everyOptionIsDocumentedWithItsDefault() throws IOException {
        Map<String, String> sql = table("### Change data feed in SQL");
        Map<String, String> streaming = table("## Change data feed (streaming, Java API)");
        Set<String> documented = new TreeSet<>(sql.keySet());
        documented.addAll(streaming.keySet());
        Set<String> declared = new TreeSet<>(ChangeFeedOptions.SET.keys());
        assertThat(documented).isEqualTo(declared);
        for (Map<String, String> t : List.of(sql, streaming)) {
            for (Map.Entry<String, String> row : t.entrySet()) {
                ConfigOption<?> o = ChangeFeedOptions.SET.options().get(row.getKey());
                if (o.hasDefaultValue()) {
                    assertThat(row.getValue()).as(o.key()).isEqualTo(defaultText(o.defaultValue()));
                } else {
                    assertThat(row.getValue()).as(o.key()).isIn("—", "latest");
                }
            }
        }
    }

    /** How the README writes a default: {@code `false`}, {@code `10 s`}, {@code unlimited}. */
    private static String defaultText(Object value) {
        if (value instanceof Duration) {
            return "`" + ((Duration) value).toSeconds() + " s`";
        }
        if (value.equals(Integer.MAX_VALUE) || value.equals(Long.MAX_VALUE)) {
            return "unlimited";
        }
        return "`" + value + "`";
    }

    /** The first option table after {@code heading}: key → default column. */
    private static Map<String, String> table(String heading) throws IOException {
        String readme = readme();
        int from = readme.indexOf("| option | default | meaning |", readme.indexOf(heading));
        int to = readme.indexOf("\n\n", from);
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m =
                Pattern.compile("(?m)^\\| `([a-z.-]+)` \\| ([^|]*) \\|")
                        .matcher(readme.substring(from, to));
        while (m.find()) {
            rows.put(m.group(1), m.group(2).trim());
        }
        assertThat(rows).as("option table after " + heading).isNotEmpty();
        return rows;
    }

    /** The repository's README.md (found above the module folder). */
    private static String readme() throws IOException {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (!Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        return Files.readString(p.resolve("README.md"));
    }
}

package dev.changeflow.sources.cdf.sql;

import org.apache.flink.configuration.ConfigOption;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's SQL options table lists exactly {@link ChangeFeedSqlOptions#OPTIONS}, in order. */
class ChangeFeedSqlOptionsTest {

    @Test
    void theReadmeDocumentsExactlyTheSqlOptions() throws Exception {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (!Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        String readme = Files.readString(p.resolve("README.md"));
        String section =
                readme.substring(
                        readme.indexOf("### Change data feed in SQL"),
                        readme.indexOf("### Change-feed retention"));
        List<String> documented = new ArrayList<>();
        List<String> defaults = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^\\| `([a-z.-]+)` \\| ([^|]+) \\|").matcher(section);
        while (m.find()) {
            documented.add(m.group(1));
            defaults.add(m.group(2).trim());
        }
        List<String> keys = new ArrayList<>();
        ChangeFeedSqlOptions.OPTIONS.forEach(o -> keys.add(o.key()));
        assertThat(documented).isEqualTo(keys);
        for (int i = 0; i < keys.size(); i++) {
            ConfigOption<?> option = ChangeFeedSqlOptions.OPTIONS.get(i);
            // numbers and durations are documented in words ("unlimited", "10 s")
            if (option.hasDefaultValue()
                    && !(option.defaultValue() instanceof Number)
                    && !(option.defaultValue() instanceof Duration)) {
                assertThat(defaults.get(i))
                        .as(option.key())
                        .isEqualTo("`" + option.defaultValue() + "`");
            }
        }
    }
}

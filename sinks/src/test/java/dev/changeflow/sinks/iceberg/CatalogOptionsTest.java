package dev.changeflow.sinks.iceberg;

import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link CatalogOptions#resolve}: declared catalog options, pass-through, precedence, errors. */
class CatalogOptionsTest {

    @Test
    void flagsWinOverTheDefinitionAndOtherKeysPassThroughInOrder() {
        Map<String, String> p =
                CatalogOptions.resolve(
                        List.of(
                                OptionLayer.of(
                                        OptionSource.FLAG,
                                        "--catalog",
                                        Map.of("uri", "http://flag:8181")),
                                OptionLayer.of(
                                        OptionSource.DEFINITION,
                                        "x.yaml: catalog",
                                        linked(
                                                "type", "REST",
                                                "uri", "http://file:8181",
                                                "s3.endpoint", "http://minio:9000",
                                                "credential", "${env:C}"))));
        assertThat(p)
                .containsExactly(
                        Map.entry("uri", "http://flag:8181"),
                        Map.entry("type", "REST"),
                        Map.entry("s3.endpoint", "http://minio:9000"),
                        Map.entry("credential", "${env:C}"));
        assertThat(
                        CatalogOptions.resolve(
                                List.of(
                                        OptionLayer.of(
                                                OptionSource.DEFINITION,
                                                "a",
                                                Map.of("s3.endpoint", "one")),
                                        OptionLayer.of(
                                                OptionSource.DEFINITION,
                                                "b",
                                                Map.of("s3.endpoint", "two")))))
                .containsExactly(Map.entry("s3.endpoint", "two"));
    }

    @Test
    void aBadTypeNamesThePropertyTheValueAndTheAcceptedTypes() {
        assertThatThrownBy(() -> CatalogOptions.fromFlags("--catalog", Map.of("type", "oracle")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--catalog: 'type' = 'oracle' is not one of hadoop, rest, jdbc, hive, glue, nessie"
                                + " (or set 'catalog-impl' to a catalog class name).");
    }

    @Test
    void aListValueIsRefusedNamingTheProperty() {
        assertThatThrownBy(() -> fromFile(Map.of("header", List.of("a", "b"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("x.yaml: catalog: 'header' takes a single value, got the list [a, b]");
        assertThatThrownBy(() -> fromFile(Map.of("uri", List.of("a"))))
                .hasMessage("x.yaml: catalog: 'uri' takes a single value, got the list [a]");
    }

    @Test
    void theReadmeTableListsTheDeclaredOptions() throws IOException {
        String readme = readme();
        int from = readme.indexOf("### Object storage and REST catalog");
        int table = readme.indexOf("| option | default | meaning |", from);
        String rows = readme.substring(table, readme.indexOf("\n\n", table));
        Set<String> documented = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `([a-z.-]+)` \\| ([^|]*) \\|").matcher(rows);
        while (m.find()) {
            documented.add(m.group(1));
            assertThat(m.group(2).trim())
                    .as(m.group(1) + " has no default")
                    .isIn("—", "the catalog's");
        }
        assertThat(documented).isEqualTo(new TreeSet<>(CatalogOptions.SET.keys()));
        assertThat(rows).contains("| any other key |");
        for (String type : CatalogOptions.ACCEPTED_TYPES.split(", ")) {
            assertThat(rows).contains("`" + type + "`");
        }
    }

    /** Resolves one {@code x.yaml: catalog} block. */
    private static Map<String, String> fromFile(Map<String, ?> values) {
        return CatalogOptions.resolve(
                List.of(OptionLayer.of(OptionSource.DEFINITION, "x.yaml: catalog", values)));
    }

    private static Map<String, Object> linked(String... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
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

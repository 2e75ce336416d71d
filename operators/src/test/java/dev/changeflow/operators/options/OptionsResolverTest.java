package dev.changeflow.operators.options;

import org.apache.flink.configuration.ConfigOption;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.apache.flink.configuration.ConfigOptions.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OptionsResolverTest {
    private static final ConfigOption<Integer> BUFFER =
            key("buffer").intType().defaultValue(100).withDescription("keys");
    private static final ConfigOption<String> MODE =
            key("mode").stringType().defaultValue("fail").withDescription("mode");
    private static final ConfigOption<List<String>> KEYS =
            key("keys").stringType().asList().noDefaultValue().withDescription("keys");
    private static final ConfigOption<Boolean> FLAG =
            key("flag").booleanType().defaultValue(false).withDescription("flag");
    private static final OptionSet SET =
            OptionSet.builder("test")
                    .add(BUFFER, OptionParsers.intRange("buffer", 0, 1000, "keys"))
                    .add(MODE, OptionParsers.oneOf("mode", "fail", "quarantine", "add-columns"))
                    .add(KEYS, OptionParsers.list())
                    .add(FLAG, OptionParsers.bool("flag"))
                    .build();

    private static OptionLayer layer(OptionSource source, String label, Map<String, ?> values) {
        return OptionLayer.of(source, label, values);
    }

    @Test
    void precedenceIsFlagThenSetThenDefinitionThenTablePropertyThenDefault() {
        List<OptionLayer> layers =
                List.of(
                        layer(
                                OptionSource.TABLE_PROPERTY,
                                "t",
                                Map.of("buffer", "1", "mode", "quarantine", "keys", "p")),
                        layer(
                                OptionSource.DEFINITION,
                                "f.yaml",
                                Map.of("buffer", "2", "mode", "add-columns")),
                        layer(OptionSource.FLAG, "--buffer", Map.of("buffer", "4")),
                        layer(OptionSource.SET, "--set t.buffer=3", Map.of("buffer", "3")));
        ResolvedOptions r = OptionsResolver.resolve(SET, layers);
        assertThat(r.get(BUFFER)).isEqualTo(4);
        assertThat(r.source(BUFFER)).isEqualTo(OptionSource.FLAG);
        assertThat(r.get(MODE)).isEqualTo("add-columns");
        assertThat(r.source(MODE)).isEqualTo(OptionSource.DEFINITION);
        assertThat(r.get(KEYS)).containsExactly("p");
        assertThat(r.source(KEYS)).isEqualTo(OptionSource.TABLE_PROPERTY);
        assertThat(r.get(FLAG)).isFalse();
        assertThat(r.isSet(FLAG)).isFalse();
        assertThat(r.source(FLAG)).isEqualTo(OptionSource.DEFAULT);
    }

    @Test
    void theLaterLayerOfOneSourceWins() {
        ResolvedOptions r =
                OptionsResolver.resolve(
                        SET,
                        List.of(
                                layer(OptionSource.SET, "--set t.buffer=1", Map.of("buffer", "1")),
                                layer(
                                        OptionSource.SET,
                                        "--set t.buffer=2",
                                        Map.of("buffer", "2"))));
        assertThat(r.get(BUFFER)).isEqualTo(2);
    }

    @Test
    void defaultsWithoutLayersAndListsFromTextOrLists() {
        ResolvedOptions r = OptionsResolver.resolve(SET, List.of());
        assertThat(r.get(BUFFER)).isEqualTo(100);
        assertThat(r.get(MODE)).isEqualTo("fail");
        assertThat(r.get(KEYS)).isNull();
        assertThat(
                        OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.DEFINITION,
                                                        "x",
                                                        Map.of("keys", "bid, bucket(16, aid)"))))
                                .get(KEYS))
                .containsExactly("bid", "bucket(16, aid)");
        assertThat(
                        OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.DEFINITION,
                                                        "x",
                                                        Map.of("keys", List.of(" a", "b ")))))
                                .get(KEYS))
                .containsExactly("a", "b");
    }

    @Test
    void unknownKeysAndBadValuesNameThePlaceTheOptionTheValueAndTheRange() {
        assertThatThrownBy(
                        () ->
                                OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.DEFINITION,
                                                        "x.yaml: flow 't'",
                                                        Map.of("bufer", "1")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "x.yaml: flow 't': unknown option 'bufer' (known: buffer, flag, keys, mode)");
        assertThatThrownBy(
                        () ->
                                OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.SET,
                                                        "--set t.buffer=2000",
                                                        Map.of("buffer", "2000")))))
                .hasMessage(
                        "--set t.buffer=2000: buffer must be a whole number of keys from 0 to 1000, got '2000'");
        assertThatThrownBy(
                        () ->
                                OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.FLAG,
                                                        "--mode",
                                                        Map.of("mode", "drop")))))
                .hasMessage("--mode: 'mode' must be fail, quarantine or add-columns, got 'drop'");
        assertThatThrownBy(
                        () ->
                                OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.DEFINITION,
                                                        "f",
                                                        Map.of("flag", "yes")))))
                .hasMessage("f: flag must be true or false, got 'yes'");
        // a bad value is an error also where a stronger place overrides it
        assertThatThrownBy(
                        () ->
                                OptionsResolver.resolve(
                                        SET,
                                        List.of(
                                                layer(
                                                        OptionSource.FLAG,
                                                        "--buffer",
                                                        Map.of("buffer", "1")),
                                                layer(
                                                        OptionSource.DEFINITION,
                                                        "f",
                                                        Map.of("buffer", "x")))))
                .hasMessage("f: buffer must be a whole number of keys from 0 to 1000, got 'x'");
    }

    @Test
    void tablePropertiesOfOtherToolsAreSkipped() {
        ResolvedOptions r =
                OptionsResolver.resolve(
                        SET,
                        List.of(
                                layer(
                                        OptionSource.TABLE_PROPERTY,
                                        "table t",
                                        Map.of("write.format.default", "parquet", "buffer", "7"))));
        assertThat(r.get(BUFFER)).isEqualTo(7);
    }

    @Test
    void anOptionOfAnotherSetIsRefused() {
        ConfigOption<Integer> other = key("other").intType().defaultValue(1).withDescription("o");
        assertThatThrownBy(() -> OptionsResolver.resolve(SET, List.of()).get(other))
                .hasMessage("'other' is not a test option");
        assertThatThrownBy(() -> OptionSet.builder("x").add(BUFFER, raw -> 1).add(BUFFER, raw -> 2))
                .hasMessage("x option 'buffer' is declared twice");
    }

    @Test
    void durations() {
        assertThat(OptionParsers.duration("2s", "x")).isEqualTo(Duration.ofSeconds(2));
        assertThat(OptionParsers.duration("10 min", "x")).isEqualTo(Duration.ofMinutes(10));
        assertThat(OptionParsers.duration("2d", "x")).isEqualTo(Duration.ofDays(2));
        assertThat(OptionParsers.duration("PT1M", "x")).isEqualTo(Duration.ofMinutes(1));
        assertThat(OptionParsers.duration("15", "x")).isEqualTo(Duration.ofSeconds(15));
        assertThatThrownBy(() -> OptionParsers.duration("soon", "tombstone-gc-threshold"))
                .hasMessage(
                        "tombstone-gc-threshold: not a duration: 'soon' (e.g. 2s, 500ms, 10min, 2d)");
    }

    @Test
    void everyUnknownKeyOfALayerIsNamedWithTheKnownOnes() {
        assertThatThrownBy(() -> definition(SET, "x.yaml", Map.of("bufer", "1", "mdoe", "fail")))
                .isInstanceOfSatisfying(
                        UnknownOptionsException.class,
                        e -> {
                            assertThat(e.label()).isEqualTo("x.yaml");
                            assertThat(e.unknownKeys()).containsExactly("bufer", "mdoe");
                            assertThat(e.knownKeys())
                                    .containsExactly("buffer", "flag", "keys", "mode");
                        })
                .hasMessage(
                        "x.yaml: unknown options 'bufer', 'mdoe' (known: buffer, flag, keys, mode)");
    }

    @Test
    void aParsingParserNamesTheOptionTheValueAndWhatIsAllowed() {
        ConfigOption<Long> size = key("size").longType().defaultValue(1L).withDescription("size");
        OptionSet set =
                OptionSet.builder("test")
                        .add(
                                size,
                                OptionParsers.parsing(
                                        "size",
                                        "a number of bytes (an integer >= 1)",
                                        Long::valueOf))
                        .build();
        assertThat(definition(set, "t", Map.of("size", "7")).get(size)).isEqualTo(7L);
        assertThatThrownBy(() -> definition(set, "t", Map.of("size", "big")))
                .hasMessage("t: 'size' = 'big' is not a number of bytes (an integer >= 1).")
                .cause()
                .isInstanceOfSatisfying(
                        InvalidOptionValueException.class,
                        v -> {
                            assertThat(v.key()).isEqualTo("size");
                            assertThat(v.value()).isEqualTo("big");
                            assertThat(v.allowed())
                                    .isEqualTo("a number of bytes (an integer >= 1)");
                        });
    }

    @Test
    void selectKeepsTheChosenOptionsWithTheirParsers() {
        OptionSet only = SET.select(List.of(MODE));
        assertThat(only.keys()).containsExactly("mode");
        assertThatThrownBy(() -> definition(only, "t", Map.of("mode", "x")))
                .hasMessage("t: 'mode' must be fail, quarantine or add-columns, got 'x'");
    }

    /** Resolves one {@link OptionSource#DEFINITION} layer. */
    private static ResolvedOptions definition(OptionSet set, String label, Map<String, ?> values) {
        return OptionsResolver.resolve(set, List.of(layer(OptionSource.DEFINITION, label, values)));
    }
}

package dev.changeflow.operators.options;

import org.apache.flink.configuration.ConfigOption;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Resolves the options of one {@link OptionSet} from the places that give them, in one fixed
 * precedence (as Iceberg's {@code FlinkConfParser} does): command-line flag &gt; {@code --set} &gt;
 * the flow's definition (flows file, statement, Java builder) &gt; table property &gt; default.
 * Among layers of the same source, the later one wins ({@code --set t.a=1 --set t.a=2} gives 2).
 *
 * <p>Every layer is checked in full, also where a higher layer overrides it: a key that is not
 * declared fails ({@code "LABEL: unknown option 'k' (known: ...)"}, every unknown key of the layer
 * named, as an {@link UnknownOptionsException}), except in table properties, which also hold
 * properties of other tools and are skipped; a value its parser refuses fails with {@code "LABEL:
 * "} and the parser's message (the option, the value, what is allowed).
 */
public final class OptionsResolver {
    private OptionsResolver() {}

    /**
     * @param set the declared options
     * @param layers the places giving values, in any order of sources
     * @return every declared option with its value and source
     * @throws UnknownOptionsException for unknown keys, naming the layer's label
     * @throws IllegalArgumentException for a bad value, naming the layer's label; the parser's
     *     exception is the cause
     */
    public static ResolvedOptions resolve(OptionSet set, List<OptionLayer> layers) {
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, OptionSource> sources = new HashMap<>();
        Map<String, Integer> rank = new HashMap<>();
        for (int i = 0; i < layers.size(); i++) {
            OptionLayer layer = layers.get(i);
            // lower is stronger: the source first, then the later layer of a source
            int layerRank = layer.source().ordinal() * 1_000_000 - i;
            TreeSet<String> unknown = new TreeSet<>();
            for (String key : layer.values().keySet()) {
                if (!set.keys().contains(key) && layer.source() != OptionSource.TABLE_PROPERTY) {
                    unknown.add(key);
                }
            }
            if (!unknown.isEmpty()) {
                throw new UnknownOptionsException(
                        layer.label(), unknown, new TreeSet<>(set.keys()));
            }
            for (Map.Entry<String, Object> e : layer.values().entrySet()) {
                String key = e.getKey();
                if (!set.keys().contains(key)) {
                    continue; // a table property of another tool
                }
                Object parsed;
                try {
                    parsed = set.parser(key).parse(e.getValue());
                } catch (IllegalArgumentException bad) {
                    throw new IllegalArgumentException(
                            layer.label() + ": " + bad.getMessage(), bad);
                }
                Integer before = rank.get(key);
                if (before == null || layerRank < before) {
                    rank.put(key, layerRank);
                    values.put(key, parsed);
                    sources.put(key, layer.source());
                }
            }
        }
        Map<String, Object> ordered = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigOption<?>> o : set.options().entrySet()) {
            String key = o.getKey();
            if (values.containsKey(key)) {
                ordered.put(key, values.get(key));
            } else {
                ordered.put(key, o.getValue().hasDefaultValue() ? defaultOf(o.getValue()) : null);
                sources.put(key, OptionSource.DEFAULT);
            }
        }
        return new ResolvedOptions(set, ordered, sources);
    }

    private static Object defaultOf(ConfigOption<?> option) {
        Object d = option.defaultValue();
        return d instanceof List ? new ArrayList<>((List<?>) d) : d;
    }
}

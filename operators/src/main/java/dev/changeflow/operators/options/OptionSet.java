package dev.changeflow.operators.options;

import org.apache.flink.configuration.ConfigOption;

import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The options of one concept (a flow, the top level of a flows file, the Kafka input, the change
 * feed): each a Flink {@link ConfigOption} constant — typed, with its default and description —
 * paired with the {@link OptionParser} that reads its raw values. Declared once, in the concept's
 * options class (as {@code KafkaConnectorOptions} or Iceberg's {@code FlinkReadOptions} do), and
 * resolved by {@link OptionsResolver}.
 */
public final class OptionSet implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String concept;
    private final Map<String, ConfigOption<?>> options;
    private final Map<String, OptionParser<?>> parsers;

    private OptionSet(
            String concept,
            Map<String, ConfigOption<?>> options,
            Map<String, OptionParser<?>> parsers) {
        this.concept = concept;
        this.options = Collections.unmodifiableMap(options);
        this.parsers = Collections.unmodifiableMap(parsers);
    }

    /**
     * @param concept what the options configure, for messages (e.g. {@code "flow"})
     */
    public static Builder builder(String concept) {
        return new Builder(concept);
    }

    /** What the options configure, e.g. {@code "flow"}. */
    public String concept() {
        return concept;
    }

    /** The keys, in declaration order. */
    public Set<String> keys() {
        return options.keySet();
    }

    /** The declared options by key, in declaration order. */
    public Map<String, ConfigOption<?>> options() {
        return options;
    }

    /** Whether {@code option} belongs to this set. */
    public boolean contains(ConfigOption<?> option) {
        return options.get(option.key()) == option;
    }

    /**
     * The options among {@code selected}, with their parsers, as a set of their own (e.g. the
     * change-feed options a SQL read accepts).
     *
     * @throws IllegalArgumentException when an option of {@code selected} is not in this set
     */
    public OptionSet select(Iterable<? extends ConfigOption<?>> selected) {
        Builder b = new Builder(concept);
        for (ConfigOption<?> o : selected) {
            if (!contains(o)) {
                throw new IllegalArgumentException(
                        "'" + o.key() + "' is not a " + concept + " option");
            }
            b.options.put(o.key(), o);
            b.parsers.put(o.key(), parsers.get(o.key()));
        }
        return b.build();
    }

    @SuppressWarnings("unchecked")
    <T> OptionParser<T> parser(String key) {
        return (OptionParser<T>) parsers.get(key);
    }

    /** Collects the options of a concept. */
    public static final class Builder {
        private final String concept;
        private final Map<String, ConfigOption<?>> options = new LinkedHashMap<>();
        private final Map<String, OptionParser<?>> parsers = new LinkedHashMap<>();

        private Builder(String concept) {
            this.concept = concept;
        }

        /**
         * Adds an option with the parser of its raw values.
         *
         * @throws IllegalArgumentException when the key was added before
         */
        public <T> Builder add(ConfigOption<T> option, OptionParser<T> parser) {
            if (options.putIfAbsent(option.key(), option) != null) {
                throw new IllegalArgumentException(
                        concept + " option '" + option.key() + "' is declared twice");
            }
            parsers.put(option.key(), parser);
            return this;
        }

        public OptionSet build() {
            return new OptionSet(
                    concept, new LinkedHashMap<>(options), new LinkedHashMap<>(parsers));
        }
    }
}

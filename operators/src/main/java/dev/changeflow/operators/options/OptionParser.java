package dev.changeflow.operators.options;

import java.io.Serializable;

/**
 * Turns the raw value of one option — text (a flag, {@code --set}, a statement), a YAML scalar's
 * text, or a list of texts (a YAML sequence) — into the type its {@link
 * org.apache.flink.configuration.ConfigOption} declares, checking the allowed range.
 *
 * @param <T> the option's type
 */
@FunctionalInterface
public interface OptionParser<T> extends Serializable {
    /**
     * @param raw a {@link String}, a {@link java.util.List} of strings, or null (an empty value)
     * @return the typed value
     * @throws IllegalArgumentException naming the option, the value and what is allowed (without
     *     the place it came from: the resolver prefixes that)
     */
    T parse(Object raw);
}

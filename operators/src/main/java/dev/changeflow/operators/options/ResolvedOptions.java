package dev.changeflow.operators.options;

import org.apache.flink.configuration.ConfigOption;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.Collections;
import java.util.Map;

/**
 * The options of one {@link OptionSet} after {@link OptionsResolver#resolve}: every declared option
 * with its typed value and the {@link OptionSource} it came from. Immutable.
 */
public final class ResolvedOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    private final OptionSet set;
    private final Map<String, Object> values;
    private final Map<String, OptionSource> sources;

    ResolvedOptions(OptionSet set, Map<String, Object> values, Map<String, OptionSource> sources) {
        this.set = set;
        this.values = Collections.unmodifiableMap(values);
        this.sources = Collections.unmodifiableMap(sources);
    }

    /**
     * The value: from the highest-precedence place that set it, else the option's default (null
     * when it has none).
     *
     * @throws IllegalArgumentException when {@code option} is not one of the resolved set's
     */
    @Nullable
    @SuppressWarnings("unchecked")
    public <T> T get(ConfigOption<T> option) {
        check(option);
        return (T) values.get(option.key());
    }

    /** Whether a place other than the default gave a value. */
    public boolean isSet(ConfigOption<?> option) {
        return source(option) != OptionSource.DEFAULT;
    }

    /** Where the value came from. */
    public OptionSource source(ConfigOption<?> option) {
        check(option);
        return sources.get(option.key());
    }

    /** The set these options were resolved for. */
    public OptionSet optionSet() {
        return set;
    }

    private void check(ConfigOption<?> option) {
        if (!set.contains(option)) {
            throw new IllegalArgumentException(
                    "'" + option.key() + "' is not a " + set.concept() + " option");
        }
    }

    @Override
    public String toString() {
        return values.toString();
    }
}

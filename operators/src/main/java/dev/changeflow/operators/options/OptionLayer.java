package dev.changeflow.operators.options;

import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The raw option values one place gives — the flags of a command line, the {@code --set} overrides
 * of one table, one flows-file entry or statement, a table's properties — with the label that
 * errors name it by (e.g. {@code "x.yaml: flow 't'"}, {@code "--set t.scd-type=3"}).
 *
 * <p>Values are a {@link String}, a {@link java.util.List} of strings or null (an empty value).
 */
public final class OptionLayer implements Serializable {
    private static final long serialVersionUID = 1L;

    private final OptionSource source;
    private final String label;
    private final Map<String, Object> values;

    private OptionLayer(OptionSource source, String label, Map<String, Object> values) {
        this.source = source;
        this.label = label;
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /**
     * @param source its place in the precedence
     * @param label how errors name it
     * @param values raw values by option key
     */
    public static OptionLayer of(OptionSource source, String label, Map<String, ?> values) {
        return new OptionLayer(source, label, new LinkedHashMap<>(values));
    }

    /** A layer holding one value. */
    public static OptionLayer single(
            OptionSource source, String label, String key, Object rawValue) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(key, rawValue);
        return new OptionLayer(source, label, m);
    }

    public OptionSource source() {
        return source;
    }

    public String label() {
        return label;
    }

    /** Raw values by key, unmodifiable. */
    public Map<String, Object> values() {
        return values;
    }

    @Override
    public String toString() {
        return source + " " + label + " " + values;
    }
}

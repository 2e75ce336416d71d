package dev.changeflow.operators.options;

import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Thrown by {@link OptionsResolver} when a place gives keys its {@link OptionSet} does not declare.
 * The message is {@code "LABEL: unknown option 'k' (known: a, b, c)"} (or {@code "unknown options
 * 'k', 'l'"} for several); the parts are kept so that a caller with a message format of its own
 * (the change feed's {@code INVALID_CDC_OPTIONS}) can build its message from them.
 */
public final class UnknownOptionsException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String label;
    private final SortedSet<String> unknown;
    private final SortedSet<String> known;

    UnknownOptionsException(String label, SortedSet<String> unknown, SortedSet<String> known) {
        super(
                label
                        + ": unknown option"
                        + (unknown.size() > 1 ? "s " : " ")
                        + quoted(unknown)
                        + " (known: "
                        + String.join(", ", known)
                        + ")");
        this.label = label;
        this.unknown = Collections.unmodifiableSortedSet(new TreeSet<>(unknown));
        this.known = Collections.unmodifiableSortedSet(new TreeSet<>(known));
    }

    /** How the place giving the keys is named, e.g. {@code "x.yaml: flow 't'"}. */
    public String label() {
        return label;
    }

    /** The keys that are not declared, sorted. */
    public SortedSet<String> unknownKeys() {
        return unknown;
    }

    /** The declared keys, sorted. */
    public SortedSet<String> knownKeys() {
        return known;
    }

    /** {@code 'a', 'b'}. */
    public static String quoted(Iterable<String> keys) {
        StringBuilder b = new StringBuilder();
        for (String k : keys) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append('\'').append(k).append('\'');
        }
        return b.toString();
    }
}

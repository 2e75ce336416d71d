package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;

/**
 * A data-quality expectation of an AUTO CDC flow (semantics.md S8): {@code CONSTRAINT name EXPECT
 * (expression) [ON VIOLATION DROP ROW | FAIL UPDATE]}. The expression is Flink SQL over the flow's
 * source columns ({@link AutoCdcSpec#sourceType()}), evaluated by {@link AutoCdcPredicates} on
 * every upsert before the AUTO CDC apply (deletes and truncates are not checked). A record violates
 * the expectation when the expression is FALSE; TRUE and NULL pass (as an SQL CHECK constraint).
 *
 * <p>Instances are immutable; the name is what metrics, quarantine rows and errors show.
 */
@PublicEvolving
public final class Expectation implements Serializable {
    private static final long serialVersionUID = 1L;

    /** What a violation does. */
    public enum OnViolation {
        /** No ON VIOLATION clause: the record is applied and the violation counted. */
        KEEP,
        /** ON VIOLATION DROP ROW: the record goes to the quarantine table instead of the table. */
        DROP_ROW,
        /** ON VIOLATION FAIL UPDATE: the job fails; nothing of the running checkpoint commits. */
        FAIL_UPDATE;

        /** The flows file's spelling: {@code keep}, {@code drop-row}, {@code fail-update}. */
        public String configName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /**
         * {@code keep}, {@code drop-row}, {@code fail-update} (case-insensitive; {@code _} or a
         * space for {@code -}).
         *
         * @throws IllegalArgumentException for another value, naming the accepted ones
         */
        public static OnViolation fromConfigName(String value) {
            String v = value.trim().toLowerCase(Locale.ROOT).replace('_', '-').replace(' ', '-');
            for (OnViolation o : values()) {
                if (o.configName().equals(v)) {
                    return o;
                }
            }
            throw new IllegalArgumentException(
                    "on-violation must be keep, drop-row or fail-update, got '" + value + "'");
        }
    }

    private final String name;
    private final String expression;
    private final OnViolation onViolation;

    /**
     * @param name the constraint's name: letters, digits and {@code _}, not starting with a digit
     * @param expression a Flink SQL boolean expression over the source columns
     * @throws IllegalArgumentException for an empty or malformed name or an empty expression
     */
    public Expectation(String name, String expression, OnViolation onViolation) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(expression, "expression");
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new IllegalArgumentException(
                    "expectation name '"
                            + name
                            + "' must be letters, digits and '_', not starting with a digit");
        }
        if (expression.isBlank()) {
            throw new IllegalArgumentException("expectation '" + name + "' has no expression");
        }
        this.name = name;
        this.expression = expression.trim();
        this.onViolation = Objects.requireNonNull(onViolation, "onViolation");
    }

    public String name() {
        return name;
    }

    /** The Flink SQL expression, as written. */
    public String expression() {
        return expression;
    }

    public OnViolation onViolation() {
        return onViolation;
    }

    /**
     * Name of the counter of the records that violated this expectation, registered per subtask in
     * the metric group {@code flow=<flow>}: {@code expectation_<name>_violated}.
     */
    public String counterName() {
        return "expectation_" + name + "_violated";
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Expectation)) {
            return false;
        }
        Expectation e = (Expectation) o;
        return name.equals(e.name)
                && expression.equals(e.expression)
                && onViolation == e.onViolation;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, expression, onViolation);
    }

    /** {@code CONSTRAINT name EXPECT (expression) [ON VIOLATION ...]}. */
    @Override
    public String toString() {
        return "CONSTRAINT "
                + name
                + " EXPECT ("
                + expression
                + ")"
                + (onViolation == OnViolation.KEEP
                        ? ""
                        : " ON VIOLATION " + onViolation.name().replace('_', ' '));
    }
}

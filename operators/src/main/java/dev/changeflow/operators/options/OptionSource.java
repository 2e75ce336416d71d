package dev.changeflow.operators.options;

/**
 * Where the value of an option came from, in precedence order: a value from an earlier constant
 * wins over one from a later constant ({@link OptionsResolver}).
 */
public enum OptionSource {
    /** A dedicated command-line flag, e.g. {@code --scd-type 2}. */
    FLAG("command-line flag"),
    /** A {@code --set TABLE.OPTION=VALUE} override (or a SQL hint). */
    SET("--set"),
    /** The flow's definition: a flows-file entry, a statement's clauses or a Java builder call. */
    DEFINITION("definition"),
    /** A property of the target table, e.g. a {@code TBLPROPERTIES} entry. */
    TABLE_PROPERTY("table property"),
    /** The option's declared default. */
    DEFAULT("default");

    private final String description;

    OptionSource(String description) {
        this.description = description;
    }

    /** A short human name, e.g. {@code "--set"}. */
    public String description() {
        return description;
    }
}

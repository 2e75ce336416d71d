package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * A column list clause: {@code (a, b)} or {@code * EXCEPT (a, b)} or {@code *}. Used by COLUMNS,
 * IGNORE NULL UPDATES ON and TRACK HISTORY ON (semantics.md A1).
 */
@PublicEvolving
public final class ColumnSelection implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Which form the clause has. */
    public enum Mode {
        ALL,
        INCLUDE,
        EXCEPT
    }

    private final Mode mode;
    private final List<String> columns;

    private ColumnSelection(Mode mode, List<String> columns) {
        this.mode = mode;
        this.columns = List.copyOf(columns);
    }

    public static ColumnSelection all() {
        return new ColumnSelection(Mode.ALL, List.of());
    }

    public static ColumnSelection include(List<String> columns) {
        return new ColumnSelection(Mode.INCLUDE, columns);
    }

    public static ColumnSelection except(List<String> columns) {
        return new ColumnSelection(Mode.EXCEPT, columns);
    }

    public Mode mode() {
        return mode;
    }

    /** The listed columns (empty for {@link Mode#ALL}). */
    public List<String> columns() {
        return columns;
    }

    /** Whether {@code column} is selected by this clause. */
    public boolean selects(String column) {
        switch (mode) {
            case ALL:
                return true;
            case INCLUDE:
                return columns.contains(column);
            default:
                return !columns.contains(column);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ColumnSelection)) {
            return false;
        }
        ColumnSelection that = (ColumnSelection) o;
        return mode == that.mode && columns.equals(that.columns);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, columns);
    }

    @Override
    public String toString() {
        switch (mode) {
            case ALL:
                return "*";
            case INCLUDE:
                return "(" + String.join(", ", columns) + ")";
            default:
                return "* EXCEPT (" + String.join(", ", columns) + ")";
        }
    }
}

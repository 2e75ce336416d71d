package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.PublicEvolving;

import java.io.Serializable;

/**
 * Where a token or statement of a pipeline file starts: the file as the user named it, the line and
 * the column (both 1-based; a tab counts as one column). Printed as {@code file:line:column}, the
 * form editors and terminals link to.
 */
@PublicEvolving
public record SqlPosition(String file, int line, int column) implements Serializable {
    @Override
    public String toString() {
        return file + ":" + line + ":" + column;
    }
}

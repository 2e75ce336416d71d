package dev.changeflow.operators;

import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.io.Serializable;

/**
 * Names where a snapshot version of an AUTO CDC FROM SNAPSHOT flow came from (semantics.md A6), for
 * the messages of {@link SnapshotSequencer} and {@link SnapshotDiffOperator}: those operators see
 * only versions, while the snapshot source knows, for example, the file a version was read from.
 *
 * <p>Called only on the rare paths: an error ({@code DUPLICATE_KEY_VIOLATION}, {@code
 * FIRST_SNAPSHOT_EMPTY}, a null KEYS column) or a skipped snapshot; never per row. It may do I/O
 * (list a folder) and must not throw.
 */
@PublicEvolving
@FunctionalInterface
public interface SnapshotOrigin extends Serializable {
    /**
     * A short text naming the input of snapshot {@code version} (the ordering {@code long} of
     * {@link SnapshotVersions#versionOf}), e.g. {@code file /exports/customers/snapshot_3.csv};
     * null when not known. Messages show it in parentheses after the version.
     */
    @Nullable
    String describe(long version);

    /**
     * {@code snapshot <version>}, followed by {@code (<origin>)} when {@code origin} names one: the
     * phrase the snapshot operators' messages use.
     */
    static String phrase(@Nullable SnapshotOrigin origin, SnapshotVersions versions, long version) {
        String text = "snapshot " + versions.valueOf(version);
        String where = origin == null ? null : origin.describe(version);
        return where == null ? text : text + " (" + where + ")";
    }
}

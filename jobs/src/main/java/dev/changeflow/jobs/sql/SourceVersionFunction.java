package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.functions.AggregateFunction;

/**
 * {@code SOURCE_VERSION(v BIGINT) → BIGINT}, the built-in aggregate of {@code bin/changeflow gold
 * FILE.sql} and {@code bin/changeflow sql} (docs/semantics.md G2, "_source_version"): the largest
 * {@code v} among <em>all</em> rows the group has accumulated <em>or retracted</em>. Over a {@code
 * t$changelog} read, {@code SOURCE_VERSION(_commit_version)} is the last Silver version that
 * changed the group — an insert ({@code +I}, {@code +U}) as well as an update's preimage ({@code
 * -U}) or a delete ({@code -D}), whose rows carry the version of the change.
 *
 * <p>Why not {@code MAX}: Flink's {@code MAX} on a retracting input is the largest value still
 * accumulated, so it drops back when the row carrying it is retracted (a deleted row, the preimage
 * of an update), and the group would show a version older than its last change.
 *
 * <p>Input NULLs are ignored; the result is NULL while the group has seen no non-NULL value. The
 * accumulator only grows, so retraction, merging (two-phase and session-window aggregation) and
 * restore from a checkpoint need no more state than one {@code long}. When every row of a group is
 * retracted, Flink's group aggregation deletes the group (its count reaches 0) and its state with
 * it: a later row starts from that row's version.
 *
 * <p>Rows a read takes from Silver's snapshot ({@code snapshot-then-changes}, G1) carry the
 * snapshot's version N−1, not the version that last changed them; see G3 for what a replay from N
 * shows.
 */
@PublicEvolving
public final class SourceVersionFunction
        extends AggregateFunction<Long, SourceVersionFunction.Accumulator> {

    private static final long serialVersionUID = 1L;

    /** The SQL name the function is registered under ({@link #register}). */
    public static final String NAME = "SOURCE_VERSION";

    /** The largest value seen so far; {@code seen} is false until the first non-NULL value. */
    public static final class Accumulator {
        /** The largest value accumulated or retracted (meaningful only when {@link #seen}). */
        public long max;

        /** Whether a non-NULL value has been accumulated or retracted. */
        public boolean seen;

        void add(long v) {
            if (!seen || v > max) {
                max = v;
                seen = true;
            }
        }
    }

    /**
     * Registers the function as temporary system function {@value #NAME} of {@code tEnv}, so any
     * catalog and database of the session can call it (names are case-insensitive).
     */
    public static void register(TableEnvironment tEnv) {
        tEnv.createTemporarySystemFunction(NAME, SourceVersionFunction.class);
    }

    @Override
    public Accumulator createAccumulator() {
        return new Accumulator();
    }

    @Override
    public Long getValue(Accumulator acc) {
        return acc.seen ? acc.max : null;
    }

    /** An inserted row ({@code +I}, {@code +U}) of the group. */
    public void accumulate(Accumulator acc, Long v) {
        if (v != null) {
            acc.add(v);
        }
    }

    /**
     * A retracted row ({@code -U}, {@code -D}) of the group: it changed the group too, so its value
     * counts like an accumulated one.
     */
    public void retract(Accumulator acc, Long v) {
        if (v != null) {
            acc.add(v);
        }
    }

    /** Merges the accumulators of other partial aggregations into {@code acc}. */
    public void merge(Accumulator acc, Iterable<Accumulator> others) {
        for (Accumulator o : others) {
            if (o.seen) {
                acc.add(o.max);
            }
        }
    }

    /** Back to a group without values. */
    public void resetAccumulator(Accumulator acc) {
        acc.max = 0;
        acc.seen = false;
    }
}

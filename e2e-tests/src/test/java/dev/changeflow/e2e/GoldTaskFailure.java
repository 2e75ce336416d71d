package dev.changeflow.e2e;

import org.apache.flink.table.functions.ScalarFunction;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test-only scalar function for Gold SQL files, {@code CREATE TEMPORARY FUNCTION fail_once AS
 * 'dev.changeflow.e2e.GoldTaskFailure'}, called as {@code fail_once(column, _commit_version)}: the
 * identity on its {@code INT} column, so a query that wraps a column in it has the same rows. The
 * test arms it with Silver versions ({@link #failAt}, static fields: the MiniCluster runs in the
 * test JVM); the k-th armed failure makes the task of the first row whose {@code _commit_version}
 * is at or after the k-th version throw, once — and only once the Gold table has recorded a Silver
 * version above 1 ({@link #recorded}, which the test keeps current) — so Flink's restart strategy
 * restores the job from its last completed checkpoint. It fails in the middle of the running job,
 * while it reads Silver's changes, not in a checkpoint callback; a restored job re-reads from
 * before that version, and the next failure waits for its own version.
 */
public final class GoldTaskFailure extends ScalarFunction {
    private static final long serialVersionUID = 1L;

    private static volatile long[] versions = {};
    private static final AtomicInteger FIRED = new AtomicInteger();
    private static final AtomicLong LAST_VERSION = new AtomicLong(-1);
    private static final AtomicLong RECORDED = new AtomicLong();
    private static final AtomicLong LAST_RECORDED = new AtomicLong(-1);

    /** Arms one task failure per version (ascending), forgetting earlier ones. */
    static void failAt(long... silverVersions) {
        FIRED.set(0);
        LAST_VERSION.set(-1);
        RECORDED.set(0);
        LAST_RECORDED.set(-1);
        versions = silverVersions.clone();
    }

    /**
     * The Silver version the Gold table has recorded (its last commit), as the test last read it:
     * no failure fires before it is above 1 (the job then reads Silver's changes and has committed
     * some).
     */
    static void recorded(long version) {
        RECORDED.set(version);
    }

    /** {@link #recorded} as it was when the last failure fired, or -1. */
    static long lastRecorded() {
        return LAST_RECORDED.get();
    }

    /** How many task failures the function has caused since {@link #failAt}. */
    static int fired() {
        return FIRED.get();
    }

    /** The {@code _commit_version} of the row that caused the last failure, or -1. */
    static long lastVersion() {
        return LAST_VERSION.get();
    }

    /**
     * @return {@code value}
     * @throws IllegalStateException once per armed version, for the first row at or after it
     */
    public Integer eval(Integer value, Long commitVersion) {
        long[] armed = versions;
        int fired = FIRED.get();
        long recorded = RECORDED.get();
        if (fired < armed.length
                && recorded > 1
                && commitVersion != null
                && commitVersion >= armed[fired]
                && FIRED.compareAndSet(fired, fired + 1)) {
            LAST_VERSION.set(commitVersion);
            LAST_RECORDED.set(recorded);
            throw new IllegalStateException(
                    "injected task failure #"
                            + (fired + 1)
                            + " at Silver version "
                            + commitVersion
                            + " (GoldTaskFailure)");
        }
        return value;
    }
}

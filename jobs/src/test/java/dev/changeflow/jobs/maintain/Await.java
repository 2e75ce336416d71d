package dev.changeflow.jobs.maintain;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Polls a condition every 20 ms until it holds or a deadline passes (tests wait on states, never on
 * time); the jobs module's copy of the e2e tests' {@code Await.until}.
 */
public final class Await {
    private Await() {}

    /**
     * Returns once {@code condition} holds.
     *
     * @throws AssertionError when it does not hold within {@code timeout}; the message names {@code
     *     what} and {@code state}
     */
    public static void until(
            String what, Duration timeout, BooleanSupplier condition, Supplier<String> state) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "timed out after "
                                + timeout.toSeconds()
                                + " s waiting for "
                                + what
                                + " ("
                                + state.get()
                                + ")");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}

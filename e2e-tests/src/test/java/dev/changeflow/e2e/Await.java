package dev.changeflow.e2e;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Polls a condition every 20 ms until it holds or a deadline passes (tests wait on states, never on
 * time).
 */
final class Await {
    private Await() {}

    /**
     * Returns once {@code condition} holds.
     *
     * @param what the awaited state, for the failure message
     * @throws AssertionError when it does not hold within {@code timeout}; the message names {@code
     *     what} and {@code state}
     */
    static void until(
            String what, Duration timeout, BooleanSupplier condition, Supplier<String> state) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                System.out.println(
                        "Timed out waiting for "
                                + what
                                + "; the threads of this JVM:\n"
                                + threadDump());
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

    /**
     * The stacks of every live thread (up to 40 frames each), for the log of a wait that timed out:
     * a job that stopped checkpointing shows where its task threads are.
     */
    static String threadDump() {
        StringBuilder out = new StringBuilder();
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            out.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                out.append(" on ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                out.append(" owned by \"").append(t.getLockOwnerName()).append('"');
            }
            out.append('\n');
            StackTraceElement[] stack = t.getStackTrace();
            for (int i = 0; i < Math.min(40, stack.length); i++) {
                out.append("    at ").append(stack[i]).append('\n');
            }
        }
        return out.toString();
    }
}

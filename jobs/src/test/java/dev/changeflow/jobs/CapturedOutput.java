package dev.changeflow.jobs;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what a call prints on {@code System.out} or {@code System.err} (UTF-8) into a buffer the
 * test reads afterwards; the stream is restored when the call returns or throws. Tests that run the
 * command line in-process ({@code Main.execute}) assert on what it printed with it.
 */
public final class CapturedOutput {
    private CapturedOutput() {}

    /** A call that returns a value (an exit code, mostly) and may throw. */
    @FunctionalInterface
    public interface Call<T, E extends Exception> {
        T call() throws E;
    }

    /** Runs {@code call} with {@code System.out} printing into {@code out}; returns its value. */
    public static <T, E extends Exception> T stdout(ByteArrayOutputStream out, Call<T, E> call)
            throws E {
        PrintStream stdout = System.out;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            return call.call();
        } finally {
            System.setOut(stdout);
        }
    }

    /** Runs {@code call} with {@code System.err} printing into {@code err}; returns its value. */
    public static <T, E extends Exception> T stderr(ByteArrayOutputStream err, Call<T, E> call)
            throws E {
        PrintStream stderr = System.err;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            return call.call();
        } finally {
            System.setErr(stderr);
        }
    }
}

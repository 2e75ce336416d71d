package dev.changeflow.jobs;

import dev.changeflow.jobs.cli.Main;

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

    /**
     * As {@link #stdout}, then prints what was captured on the real {@code System.out} too (so the
     * test log shows it), when the call returned.
     */
    public static <T, E extends Exception> T stdoutEchoed(
            ByteArrayOutputStream out, Call<T, E> call) throws E {
        T value = stdout(out, call);
        System.out.print(out.toString(StandardCharsets.UTF_8));
        return value;
    }

    /** What {@link #main} returns: the exit status and everything printed on standard error. */
    public record MainRun(int code, String stderr) {}

    /**
     * Runs the command line in-process ({@code Main.execute(args)}) with {@code System.err}
     * captured; returns its exit status and what it printed there (UTF-8).
     */
    public static MainRun main(String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = stderr(err, () -> Main.execute(args));
        return new MainRun(code, err.toString(StandardCharsets.UTF_8));
    }
}

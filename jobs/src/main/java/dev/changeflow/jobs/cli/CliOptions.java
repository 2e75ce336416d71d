package dev.changeflow.jobs.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The picocli options several commands repeat, declared once as {@link Mixin}s: the same names,
 * defaults and help text in every command that mixes them in.
 */
public final class CliOptions {
    private CliOptions() {}

    /**
     * {@code --warehouse DIR} (default {@code warehouse}) of the commands that read or write tables
     * only: {@code demo}, {@code expire}, {@code show}, {@code sql}.
     */
    public static final class Warehouse {
        /** The local warehouse folder (Hadoop catalog), as given (relative to the working dir). */
        @Option(
                names = "--warehouse",
                paramLabel = "DIR",
                defaultValue = "warehouse",
                description = "Local warehouse folder. Default: ${DEFAULT-VALUE}.")
        public Path warehouse;
    }

    /**
     * {@code --warehouse DIR} (default {@code warehouse}; also the root of the saved state) and
     * {@code --from-scratch} of the commands that run a local ingest job: {@code ingest}, {@code
     * run}.
     */
    public static final class LocalRun {
        /** The local warehouse folder and checkpoint root, as given. */
        @Option(
                names = "--warehouse",
                paramLabel = "DIR",
                defaultValue = "warehouse",
                description =
                        "Local Iceberg warehouse folder (Hadoop catalog) and checkpoint root. Default: ${DEFAULT-VALUE}.")
        public Path warehouse;

        /** Drop the target tables and the saved state before the run. */
        @Option(
                names = "--from-scratch",
                description = "Drop the target tables and the saved state first.")
        public boolean fromScratch;
    }
}

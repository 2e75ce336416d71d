package dev.changeflow.jobs.deploy;

import dev.changeflow.jobs.cli.DeployCommand;

import picocli.CommandLine;

import java.nio.file.Path;

/** Test access to {@code deploy --print FILE.sql}'s rendering without printing. */
final class DeployCommandAccess {
    private DeployCommandAccess() {}

    static String renderPipeline(Path file, String... more) throws Exception {
        DeployCommand c = new DeployCommand();
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(more));
        args.add(0, "--print");
        args.add(file.toString());
        new CommandLine(c).parseArgs(args.toArray(new String[0]));
        return c.renderPipeline();
    }
}

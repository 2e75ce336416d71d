package dev.changeflow.jobs.deploy;

import dev.changeflow.jobs.cli.DeployCommand;

import picocli.CommandLine;

import java.nio.file.Path;

/** Test access to {@code deploy --print FILE.sql}'s rendering without printing. */
final class DeployCommandAccess {
    private DeployCommandAccess() {}

    static String renderPipeline(Path file) throws Exception {
        DeployCommand c = new DeployCommand();
        new CommandLine(c).parseArgs("--print", file.toString());
        return c.renderPipeline();
    }
}

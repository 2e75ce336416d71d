package dev.changeflow.jobs.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shared {@link CliOptions} mixins: every command keeps the option names, defaults and help
 * text it had before they were shared (descriptions as picocli renders them).
 */
class CliOptionsTest {
    private static final String LOCAL = "Local warehouse folder. Default: warehouse.";
    private static final String RUN =
            "Local Iceberg warehouse folder (Hadoop catalog) and checkpoint root. Default:"
                    + " warehouse.";

    @Test
    void warehouseKeepsItsDefaultAndHelpTextInEveryCommand() {
        Map<Object, String> expected =
                Map.of(
                        new DemoCommand(), LOCAL,
                        new ExpireCommand(), LOCAL,
                        new ShowCommand(), LOCAL,
                        new SqlCommand(), LOCAL,
                        new IngestCommand(), RUN,
                        new RunCommand(), RUN,
                        new GoldCommand(),
                                "Local Iceberg warehouse folder (Hadoop catalog). Default:"
                                        + " warehouse.");
        expected.forEach(
                (command, description) -> {
                    OptionSpec o =
                            new CommandLine(command).getCommandSpec().findOption("--warehouse");
                    assertThat(o.description())
                            .as(command.getClass().getSimpleName())
                            .containsExactly(description);
                    assertThat(o.defaultValue()).isEqualTo("warehouse");
                    assertThat(o.paramLabel()).isEqualTo("DIR");
                });
    }

    @Test
    void fromScratchIsSharedByIngestAndRun() {
        for (Object command : List.of(new IngestCommand(), new RunCommand())) {
            OptionSpec o = new CommandLine(command).getCommandSpec().findOption("--from-scratch");
            assertThat(o.description())
                    .containsExactly("Drop the target tables and the saved state first.");
            assertThat(o.arity().max()).isZero();
        }
    }

    @Test
    void theMixedInValuesReachTheCommand() {
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs("p.sql", "--warehouse", "wh", "--from-scratch");
        assertThat(run.local.warehouse).isEqualTo(Path.of("wh"));
        assertThat(run.local.fromScratch).isTrue();
        ShowCommand show = new ShowCommand();
        new CommandLine(show).parseArgs("db.t");
        assertThat(show.local.warehouse).isEqualTo(Path.of("warehouse"));
    }
}

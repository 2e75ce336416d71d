package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.jobs.sql.SqlPipeline;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.jobs.sql.SqlStatement;
import dev.changeflow.jobs.sql.TableStatements;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.io.Closeable;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow describe FILE.sql TABLE...}: prints {@code DESCRIBE TABLE EXTENDED} of each
 * named table ({@link TableStatements#describe}: columns, the definition of its flow in the file,
 * its schedule and its last refresh, docs/semantics.md S9) without running anything. The file is
 * compiled as {@code run} compiles it and, when it has flows, planned to know the tables' namespace
 * (which may read a sample of the inputs); a table of the file that does not exist yet shows its
 * declared columns. A name that is neither a table of the file nor of the catalog is an error
 * ({@code UNKNOWN_TABLE}, exit code 2).
 */
@Command(
        name = "describe",
        mixinStandardHelpOptions = true,
        description =
                "Print DESCRIBE TABLE EXTENDED of tables of a pipeline file: definition, schedule,"
                        + " last refresh. Runs nothing.")
public final class DescribeCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE.sql", description = "The pipeline file.")
    Path file;

    @Parameters(
            index = "1..*",
            arity = "1..*",
            paramLabel = "TABLE",
            description = "Streaming tables of the file, or namespace.table of the catalog.")
    List<String> tables;

    @Mixin CliOptions.Warehouse local;

    /** Where the lines go (a test may replace it). */
    PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(file)) {
            throw CliErrors.fileNotFound("pipeline file", file, "");
        }
        SqlPipeline pipeline = SqlPipeline.read(file);
        Map<String, TableIdentifier> targets = new HashMap<>();
        if (!pipeline.config().flows.isEmpty()) {
            IngestPlan plan =
                    pipeline.plan(LocalIngest.catalog(pipeline.config(), local.warehouse));
            for (IngestPlan.Flow f : plan.flows) {
                targets.put(pipeline.tableOfFlow(f.name()).toLowerCase(Locale.ROOT), f.target);
            }
        }
        for (SqlPipeline.SnapshotTable st : pipeline.snapshotTables()) {
            // A6: a snapshot flow's target, in the file's namespace unless qualified
            targets.put(st.name().toLowerCase(Locale.ROOT), pipeline.snapshotTarget(st));
        }
        String namespace =
                pipeline.config().namespace != null
                        ? pipeline.config().namespace
                        : IngestPlanner.DEFAULT_NAMESPACE;
        Catalog cat = LocalIngest.catalog(pipeline.config(), local.warehouse).open();
        try {
            for (String t : tables) {
                String name = t.trim();
                if (name.toLowerCase(Locale.ROOT).startsWith("live.")) {
                    name = name.substring(5);
                }
                SqlStatement.CreateStreamingTable decl = pipeline.declaration(name);
                SqlPosition at =
                        decl != null ? decl.position() : new SqlPosition(file.toString(), 1, 1);
                SqlStatement.Describe d = new SqlStatement.Describe(at, name, at, true);
                TableStatements.describe(
                                pipeline,
                                d,
                                cat,
                                TableStatements.identifier(name, targets, namespace))
                        .forEach(out::println);
            }
        } finally {
            if (cat instanceof Closeable c) {
                c.close();
            }
        }
        return 0;
    }
}

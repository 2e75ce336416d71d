package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.ScdType;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IngestCommandTest {

    private static IngestCommand parse(String... args) {
        IngestCommand c = new IngestCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void singleTableFlagsDefineAFlow() {
        IngestConfig cfg = new IngestConfig();
        parse(
                        "--table",
                        "orders",
                        "--keys",
                        "id,region",
                        "--sequence-by",
                        "STRUCT(ts, seq)",
                        "--scd-type",
                        "2",
                        "--schema",
                        "id INT",
                        "in.jsonl")
                .applyOverrides(cfg);
        FlowConfig f = cfg.flow("orders");
        assertThat(f.keys).containsExactly("id", "region");
        assertThat(f.sequenceBy).containsExactly("ts", "seq");
        assertThat(f.scdType).isEqualTo(ScdType.TYPE_2);
        assertThat(f.schema).isEqualTo("id INT");
        assertThat(cfg.name).as("job id of a flag-only run: its table").isEqualTo("orders");
    }

    /**
     * S2 (issue #13): an object-store INPUT stays its URI, a local one becomes an absolute file:
     * path; {@code --set s3.endpoint=...} is a Flink file-system option, not a flow's; a scheme
     * without a file-system plugin fails naming the scheme and the plugin, before any job.
     */
    @Test
    void objectStoreInputsSetS3OptionsAndASchemeWithoutPluginIsNamed() throws Exception {
        IngestConfig cfg = new IngestConfig();
        IngestCommand c =
                parse(
                        "--table",
                        "orders",
                        "--keys",
                        "id",
                        "--set",
                        "s3.endpoint=http://minio:9000",
                        "--set",
                        "s3.path.style.access=true",
                        "s3://lake/cdc/*.json",
                        "local/in");
        c.applyOverrides(cfg);
        assertThat(cfg.fileSystem)
                .containsExactly(
                        java.util.Map.entry("s3.endpoint", "http://minio:9000"),
                        java.util.Map.entry("s3.path.style.access", "true"));
        assertThat(c.inputFiles())
                .extracting(dev.changeflow.sources.files.FileGlob::key)
                .containsExactly(
                        "s3://lake/cdc/*.json",
                        java.nio.file.Path.of("local/in").toAbsolutePath().toString());

        java.nio.file.Path plugins = java.nio.file.Files.createTempDirectory("plugins");
        String key = dev.changeflow.sources.files.InputFileSystems.PLUGINS_DIR_PROPERTY;
        String saved = System.getProperty(key);
        System.setProperty(key, plugins.toString());
        try {
            assertThatThrownBy(
                            () ->
                                    parse("--table", "orders", "--keys", "id", "gs://lake/cdc/")
                                            .call())
                    .isInstanceOf(
                            dev.changeflow.sources.files.InputFileSystems.NoFileSystemException
                                    .class)
                    .hasMessage(
                            "no Flink file system for scheme 'gs' of gs://lake/cdc: add the Flink"
                                    + " file-system plugin flink-gs-fs-hadoop"
                                    + " (flink-gs-fs-hadoop-2.1.1.jar) in a sub-folder of its own"
                                    + " of the plugins folder ("
                                    + plugins
                                    + ", from changeflow.flink-plugins-dir or"
                                    + " FLINK_PLUGINS_DIR)");
        } finally {
            if (saved == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, saved);
            }
            dev.changeflow.sources.files.InputFileSystems.initialize(java.util.Map.of());
            java.nio.file.Files.delete(plugins);
        }
    }

    @Test
    void setOverridesAnyOptionOfAnExistingFlow() {
        IngestConfig cfg = new IngestConfig();
        FlowConfig f = new FlowConfig();
        f.table = "pgbench_accounts";
        f.keys = List.of("aid");
        cfg.flows.add(f);
        parse(
                        "--set",
                        "pgbench_accounts.scd-type=2",
                        "--set",
                        "pgbench_accounts.partitioned-by=bid",
                        "--set",
                        "pgbench_accounts.apply-buffer-keys=1000",
                        "x")
                .applyOverrides(cfg);
        assertThat(f.scdType).isEqualTo(ScdType.TYPE_2);
        assertThat(f.partitionedBy).containsExactly("bid");
        assertThat(f.applyBufferKeys).isEqualTo(1_000);
    }

    /** S4: --set reaches a REPLACE WHERE flow by its name, and its options are checked again. */
    @Test
    void setOverridesAReplaceWhereFlowByName() {
        IngestConfig cfg = new IngestConfig();
        FlowConfig f = new FlowConfig();
        f.name = "daily";
        f.target = "gold.daily";
        f.replaceWhere = "d >= 2";
        f.query = "SELECT 1 AS d";
        f.replaceWherePosition = new dev.changeflow.jobs.sql.SqlPosition("f.yaml", 4, 20);
        cfg.replaceWheres.add(f);
        parse("--set", "daily.replace-where=d >= 3").applyOverrides(cfg);
        assertThat(f.replaceWhere).isEqualTo("d >= 3");
        assertThat(f.replaceWherePosition).as("not the file's any more").isNull();
        assertThatThrownBy(() -> parse("--set", "daily.keys=d").applyOverrides(cfg))
                .hasMessageStartingWith("flow 'daily': 'replace-where' takes no [keys]");
    }

    @Test
    void badOverridesNameTheProblem() {
        IngestConfig cfg = new IngestConfig();
        assertThatThrownBy(() -> parse("--set", "nodot", "x").applyOverrides(cfg))
                .hasMessage("--set takes TABLE.OPTION=VALUE, got 'nodot'");
        assertThatThrownBy(() -> parse("--set", "t.keys=a", "x").applyOverrides(cfg))
                .hasMessage("--set t.keys=a: no flow for table 't'");
        assertThatThrownBy(() -> parse("--keys", "a", "x").applyOverrides(cfg))
                .hasMessage(
                        "--keys, --sequence-by, --scd-type, --append-only and --schema need --table");
    }

    @Test
    void exitCodeTwoForUsageErrors() {
        assertThat(Main.execute("ingest", "--flows", "/does/not/exist.yaml", "x")).isEqualTo(2);
        assertThat(Main.execute("ingest", "/does/not/exist.jsonl")).isEqualTo(2);
        assertThat(Main.execute("ingest", "--set", "nodot", "x")).isEqualTo(2);
        assertThat(Main.execute("ingest")).isEqualTo(2);
    }
}

package dev.changeflow.jobs.cli;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.apache.logging.log4j.core.config.properties.PropertiesConfigurationFactory;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's logging ({@code bin/log4j2-cli.properties}, loaded into a context of its own): a
 * damaged Parquet file shows changeflow's one DAMAGED_FILE warning, not Iceberg's Parquet reader's
 * ERROR with its stack trace before it (issue #13); changeflow's own warnings and other errors stay
 * on the console.
 */
class CliLogConfigTest {
    private static Path repositoryRoot() {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        assertThat(p).isNotNull();
        return p;
    }

    @Test
    void icebergsParquetReaderErrorIsOffAndChangeflowsWarningsShow() throws Exception {
        Path file = repositoryRoot().resolve("bin/log4j2-cli.properties");
        LoggerContext ctx = new LoggerContext("changeflow-cli-test");
        try {
            Configuration config =
                    new PropertiesConfigurationFactory()
                            .getConfiguration(ctx, ConfigurationSource.fromUri(file.toUri()));
            ctx.start(config);
            // the logger Iceberg's ParquetReader.FileIterator logs "Error decoding Parquet file" to
            assertThat(
                            ctx.getLogger("org.apache.iceberg.parquet.ParquetReader$FileIterator")
                                    .isEnabled(Level.ERROR))
                    .isFalse();
            assertThat(
                            ctx.getLogger("dev.changeflow.sources.files.ParquetRowsFormat")
                                    .isEnabled(Level.WARN))
                    .isTrue();
            assertThat(
                            ctx.getLogger("org.apache.iceberg.BaseMetastoreCatalog")
                                    .isEnabled(Level.ERROR))
                    .isTrue();
        } finally {
            ctx.stop();
        }
    }
}

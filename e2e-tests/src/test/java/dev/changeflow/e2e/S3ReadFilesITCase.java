package dev.changeflow.e2e;

import dev.changeflow.e2e.s3.InProcessS3;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code changeflow run FILE.sql} whose {@code read_files} path is on S3 (docs/semantics.md S2):
 * the local launcher lists, samples and reads {@code s3://} objects through Flink's file-system
 * plugin ({@code flink-s3-fs-hadoop}, from the plugins folder the build fills, as {@code
 * bin/changeflow} finds it), configured by the file's {@code SET s3.*} statements, against an
 * in-process S3 ({@link InProcessS3}). The glob selects the visible matching objects; a second run
 * after an object was added reads only that object; a third reads nothing.
 */
class S3ReadFilesITCase {
    private static final String BUCKET = "lake";

    private static InProcessS3 s3;
    private static final Map<String, String> SAVED_PROPERTIES = new HashMap<>();

    @TempDir Path tmp;

    @BeforeAll
    static void startS3() throws Exception {
        s3 = InProcessS3.start(BUCKET);
        // Flink's S3 plugin is built on the AWS SDK 1.x, which announces its end of support on
        // stderr
        SAVED_PROPERTIES.put(
                "aws.java.v1.disableDeprecationAnnouncement",
                System.setProperty("aws.java.v1.disableDeprecationAnnouncement", "true"));
    }

    @AfterAll
    static void stopS3() throws Exception {
        SAVED_PROPERTIES.forEach(
                (k, v) -> {
                    if (v == null) {
                        System.clearProperty(k);
                    } else {
                        System.setProperty(k, v);
                    }
                });
        FileSystem.initialize(new Configuration(), null);
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void readFilesOfAnS3GlobReadsEachMatchingObjectOnceAcrossRuns() throws Exception {
        s3.put(
                "cdc/2024/1.json",
                "{\"id\":1,\"status\":\"a\",\"seq\":1}\n{\"id\":2,\"status\":\"x\",\"seq\":2}\n");
        // not matched by the glob, and hidden: never read
        s3.put("cdc/2024/notes.txt", "not a record\n");
        s3.put("cdc/_tmp/9.json", "{\"id\":9,\"status\":\"hidden\",\"seq\":9}\n");
        Path sql = tmp.resolve("shop.sql");
        Files.writeString(
                sql,
                "SET 's3.endpoint' = '"
                        + s3.endpoint()
                        + "';\n"
                        + "SET 's3.path.style.access' = 'true';\n"
                        + "SET 's3.access-key' = '"
                        + InProcessS3.ACCESS_KEY
                        + "';\n"
                        + "SET 's3.secret-key' = '"
                        + InProcessS3.SECRET_KEY
                        + "';\n"
                        + "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE orders (id INT, status STRING, seq"
                        + " BIGINT)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('s3://"
                        + BUCKET
                        + "/cdc/*/*.json', format => 'json')\n"
                        + "  KEYS (id) SEQUENCE BY seq;\n");
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("Ingesting 1 file(s) into 1 table(s), starting without state");
        assertThat(TableRows.toCsvLines(table(warehouse))).containsExactly("1,a,1", "2,x,2");

        // an object added since: only it is read
        s3.put(
                "cdc/2025/2.json",
                "{\"id\":1,\"status\":\"b\",\"seq\":3}\n{\"id\":3,\"status\":\"y\",\"seq\":4}\n");
        out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("Ingesting 1 file(s) into 1 table(s), resuming from");
        assertThat(TableRows.toCsvLines(table(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");

        // nothing new: nothing read again
        out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, sql.toString())).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "Nothing new to ingest: all 2 input file(s) were read by an earlier run.");
        assertThat(TableRows.toCsvLines(table(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");
    }

    private static org.apache.iceberg.Table table(Path warehouse) {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        return cat.loadTable(TableIdentifier.of("shop", "orders"));
    }

    /** Runs the command line in-process, copying what it printed to {@code out}. */
    private static int run(ByteArrayOutputStream out, String... args) {
        return dev.changeflow.jobs.CapturedOutput.stdoutEchoed(out, () -> Main.execute(args));
    }
}

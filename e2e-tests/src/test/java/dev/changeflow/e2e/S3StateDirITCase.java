package dev.changeflow.e2e;

import dev.changeflow.e2e.s3.InProcessS3;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.iceberg.Table;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/semantics.md S3, issue #13 item 3: the bounded refresh a scheduled table's CronJob runs
 * ({@code run FILE.sql --refresh t --state-dir s3://...}) keeps its saved state on an object store
 * — here the in-process S3 of {@link InProcessS3} (s3proxy), reached through Flink's S3 file system
 * plugin ({@code flink-s3-fs-hadoop} from the plugins folder Failsafe names) configured by the
 * file's {@code SET s3.*} statements. Flink's checkpoints and savepoints and changeflow's job
 * records go to the bucket, nothing to the local warehouse's {@code .changeflow} folder; a second
 * run with a new input file resumes from the savepoint on S3 and reads only that file; a third
 * reads nothing. A state location that cannot be used fails with {@code STATE_DIR_UNAVAILABLE}
 * before anything is written.
 */
class S3StateDirITCase {
    private static final String BUCKET = "state";

    private static InProcessS3 s3;
    private static final Map<String, String> SAVED_PROPERTIES = new HashMap<>();

    @TempDir Path tmp;

    @BeforeAll
    static void startS3() throws Exception {
        s3 = InProcessS3.start(BUCKET);
        Map<String, String> props = new HashMap<>(InProcessS3.awsSdkSystemProperties());
        // Flink's S3 plugin is built on the AWS SDK 1.x, which announces its end of support on
        // stderr
        props.put("aws.java.v1.disableDeprecationAnnouncement", "true");
        props.forEach((k, v) -> SAVED_PROPERTIES.put(k, System.setProperty(k, v)));
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

    /** The pipeline: one AUTO CDC table over a local folder, S3 options for the state. */
    private Path pipeline(Path input, String endpoint) throws Exception {
        return pipeline(input, endpoint, "", "");
    }

    /**
     * As {@link #pipeline(Path, String)}, with more statements first ({@code set}) and more {@code
     * read_files} options ({@code options}, each starting with ", ").
     */
    private Path pipeline(Path input, String endpoint, String set, String options)
            throws Exception {
        Path sql = tmp.resolve("shop.sql");
        Files.writeString(
                sql,
                set
                        + "SET 's3.endpoint' = '"
                        + endpoint
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
                        + "  SCHEDULE EVERY 1 HOUR\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('"
                        + input
                        + "', format => 'json'"
                        + options
                        + ")\n"
                        + "  KEYS (id) SEQUENCE BY seq;\n");
        return sql;
    }

    @Test
    void refreshWithStateOnS3ReadsEachFileOnceAndResumesFromTheSavepointOnS3() throws Exception {
        Path input = Files.createDirectories(tmp.resolve("in"));
        Files.writeString(
                input.resolve("1.json"),
                "{\"id\":1,\"status\":\"a\",\"seq\":1}\n{\"id\":2,\"status\":\"x\",\"seq\":2}\n");
        Path sql = pipeline(input, s3.endpoint());
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        String state = "s3://" + BUCKET + "/changeflow/state";

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out))
                .contains("Ingesting 1 file(s) into 1 table(s), starting without state");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse))).containsExactly("1,a,1", "2,x,2");
        // the state is on S3: the savepoint (and only it, after a clean stop), the list of files
        // it read, changeflow's records; nothing under the local warehouse
        // the refresh of one scheduled table: job <name>-refresh-<table>, as its CronJob runs it
        String job = "changeflow/state/shop-refresh-orders";
        assertThat(s3.keys(job + "/savepoints/"))
                .anyMatch(
                        k -> k.matches(job + "/savepoints/[0-9a-f]{32}/savepoint-[^/]+/_metadata"));
        assertThat(s3.keys(job + "/checkpoints/").stream().filter(k -> k.endsWith("/_metadata")))
                .isEmpty();
        assertThat(s3.keys(job + "/files-done/")).hasSize(1);
        assertThat(
                        s3.keys(job + ".state/").stream()
                                .map(k -> k.substring((job + ".state/").length()))
                                .collect(Collectors.toList()))
                .containsExactlyInAnyOrder(
                        "committed-savepoint", "files-seen.json", "flows.json", "tables.json");
        assertThat(warehouse.resolve(".changeflow")).doesNotExist();

        // a new file: only it is read, from the state on S3
        Files.writeString(
                input.resolve("2.json"),
                "{\"id\":1,\"status\":\"b\",\"seq\":3}\n{\"id\":3,\"status\":\"y\",\"seq\":4}\n");
        out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out))
                .contains(
                        "Ingesting 1 file(s) into 1 table(s), resuming from s3://"
                                + BUCKET
                                + "/"
                                + job
                                + "/savepoints/");
        // the two records of the new file, not the four of both
        assertThat(text(out)).contains(": 2 records (");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");
        assertThat(
                        s3.keys(job + "/savepoints/").stream()
                                .filter(k -> k.endsWith("/_metadata"))
                                .count())
                .as("only the newest savepoint is kept")
                .isEqualTo(1);

        // nothing new: nothing read again
        out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out))
                .contains(
                        "Nothing new to ingest: all 2 input file(s) were read by an earlier run.");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");

        // a run killed after its savepoint, before it recorded the clean stop (the record read
        // from S3 is what tells): the next run restores that state so its commits happen
        org.apache.flink.core.fs.Path marker =
                new org.apache.flink.core.fs.Path(
                        "s3://" + BUCKET + "/" + job + ".state/committed-savepoint");
        assertThat(marker.getFileSystem().delete(marker, false)).isTrue();
        out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out))
                .contains(
                        "No new input file, but the last run was stopped before it finished:"
                                + " resuming its state to commit what it had read.");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactly("1,b,3", "2,x,2", "3,y,4");
        assertThat(s3.keys(job + ".state/")).contains(job + ".state/committed-savepoint");
    }

    /**
     * Two file readers ({@code SET file-readers = 2}) with the state on S3: each reader subtask
     * writes its own list of files read per checkpoint, an object each ({@code N.txt}, {@code
     * N-1.txt}); after a clean stop exactly the savepoint's lists are kept, their union is every
     * file read, and the next runs read only what is new.
     */
    @Test
    void twoReadersKeepOneListEachOnS3AndTheNextRunsReadOnlyNewFiles() throws Exception {
        Path input = Files.createDirectories(tmp.resolve("in"));
        Files.writeString(input.resolve("1.json"), "{\"id\":1,\"status\":\"a\",\"seq\":1}\n");
        Files.writeString(input.resolve("2.json"), "{\"id\":2,\"status\":\"x\",\"seq\":2}\n");
        Path sql = pipeline(input, s3.endpoint(), "SET file-readers = 2;\n", "");
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        // a state folder of its own: the bucket outlives each test
        String state = "s3://" + BUCKET + "/changeflow/two-readers";
        String job = "changeflow/two-readers/shop-refresh-orders";
        String one = input.resolve("1.json").toAbsolutePath().toString();
        String two = input.resolve("2.json").toAbsolutePath().toString();

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out))
                .contains("Ingesting 2 file(s) into 1 table(s), starting without state");
        assertThat(listsOfTwoReaders(job)).containsExactlyInAnyOrder(one, two);

        Files.writeString(input.resolve("3.json"), "{\"id\":1,\"status\":\"b\",\"seq\":3}\n");
        out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out)).contains("Ingesting 1 file(s) into 1 table(s), resuming from s3://");
        assertThat(text(out)).contains(": 1 records (");
        assertThat(listsOfTwoReaders(job))
                .containsExactlyInAnyOrder(
                        one, two, input.resolve("3.json").toAbsolutePath().toString());

        out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, w, state)).isZero();
        assertThat(text(out))
                .contains(
                        "Nothing new to ingest: all 3 input file(s) were read by an earlier run.");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse))).containsExactly("1,b,3", "2,x,2");
    }

    /**
     * The lists of files read under {@code job} on S3, which must be the two lists of one
     * checkpoint ({@code N.txt}, {@code N-1.txt}): the union of their lines.
     */
    private List<String> listsOfTwoReaders(String job) throws Exception {
        List<String> keys = s3.keys(job + "/files-done/");
        List<String> names =
                keys.stream().map(k -> k.substring(k.lastIndexOf('/') + 1)).sorted().toList();
        assertThat(names).hasSize(2);
        String id = names.get(1).substring(0, names.get(1).length() - ".txt".length());
        assertThat(names).containsExactly(id + "-1.txt", id + ".txt");
        List<String> lines = new ArrayList<>();
        for (String k : keys) {
            org.apache.flink.core.fs.Path p =
                    new org.apache.flink.core.fs.Path("s3://" + BUCKET + "/" + k);
            try (var in = p.getFileSystem().open(p)) {
                new String(in.readAllBytes(), StandardCharsets.UTF_8)
                        .lines()
                        .filter(l -> !l.isBlank())
                        .forEach(lines::add);
            }
        }
        return lines;
    }

    /**
     * A pod killed in the middle of a refresh (OOM, node loss): the real {@code bin/changeflow run
     * ... --state-dir s3://...} process is killed with SIGKILL once two checkpoints are on S3 (one
     * new file per checkpoint, {@code maxFilesPerTrigger => 1}); the next run resumes from the
     * newest retained checkpoint on S3 and reads the files that checkpoint had not read completely:
     * the table equals the input's last value per key, and a run after it reads nothing.
     */
    @Test
    void aRunKilledMidwayResumesFromItsLastCheckpointOnS3() throws Exception {
        Path input = Files.createDirectories(tmp.resolve("many"));
        // keys of their own per file (the source takes the files in no fixed order): a file read
        // twice would show as late records, a file lost as missing rows
        int files = 8;
        int perFile = 200;
        Map<Integer, String> last = new java.util.TreeMap<>();
        for (int f = 0; f < files; f++) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < perFile; i++) {
                int id = f * 1000 + i;
                b.append("{\"id\":")
                        .append(id)
                        .append(",\"status\":\"f")
                        .append(f)
                        .append("\",\"seq\":")
                        .append(i)
                        .append("}\n");
                last.put(id, id + ",f" + f + "," + i);
            }
            Files.writeString(input.resolve(String.format("%02d.json", f)), b.toString());
        }
        Path sql =
                pipeline(
                        input,
                        s3.endpoint(),
                        "SET 'execution.checkpointing.interval' = '500ms';\n",
                        ", maxFilesPerTrigger => 1");
        Path warehouse = tmp.resolve("warehouse");
        String state = "s3://" + BUCKET + "/killed";
        String prefix = "killed/shop-refresh-orders/checkpoints/";
        java.util.regex.Pattern checkpoint =
                java.util.regex.Pattern.compile(prefix + "[0-9a-f]{32}/chk-[0-9]+/_metadata");

        Path log = tmp.resolve("killed.log");
        ProcessBuilder pb =
                new ProcessBuilder(
                        SharedData.repositoryRoot().resolve("bin/changeflow").toString(),
                        "run",
                        sql.toString(),
                        "--refresh",
                        "orders",
                        "--warehouse",
                        warehouse.toString(),
                        "--state-dir",
                        state);
        pb.environment().put("CHANGEFLOW_NO_BUILD", "1");
        pb.environment()
                .put(
                        "CHANGEFLOW_JAVA_OPTS",
                        "-Xmx1g -XX:TieredStopAtLevel=1"
                                + " -Daws.java.v1.disableDeprecationAnnouncement=true");
        Process p = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(5);
            while (s3.keys(prefix).stream().filter(k -> checkpoint.matcher(k).matches()).count()
                    < 2) {
                assertThat(p.isAlive())
                        .as("the run is still running; its output:%n%s", Files.readString(log))
                        .isTrue();
                assertThat(System.nanoTime())
                        .as("two checkpoints on S3 in time")
                        .isLessThan(deadline);
                java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
            }
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
        assertThat(s3.keys("killed/shop-refresh-orders/savepoints/")).as("no clean stop").isEmpty();

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, warehouse.toString(), state)).isZero();
        assertThat(text(out))
                .contains(", resuming from " + state + "/shop-refresh-orders/checkpoints/");
        java.util.regex.Matcher resumed =
                java.util.regex.Pattern.compile("Ingesting (\\d+) file\\(s\\)").matcher(text(out));
        assertThat(resumed.find()).isTrue();
        int rest = Integer.parseInt(resumed.group(1));
        assertThat(rest).as("files the killed run had not read completely").isBetween(1, files - 1);
        // every record of those files applied once, none of the files read before again; the
        // checkpoint it resumes from may have been taken in the middle of one of them (its
        // position is in the checkpoint), so that file is read from there on: between
        // (rest - 1) * perFile and rest * perFile records, each applied, none late
        java.util.regex.Matcher done =
                java.util.regex.Pattern.compile(
                                "Done in [0-9.]+ s: ([0-9,]+) records .*, applied ([0-9,]+), late 0,")
                        .matcher(text(out));
        assertThat(done.find()).as("run summary in:%n%s", text(out)).isTrue();
        int read = Integer.parseInt(done.group(1).replace(",", ""));
        int applied = Integer.parseInt(done.group(2).replace(",", ""));
        assertThat(applied).as("records applied = records read").isEqualTo(read);
        assertThat(applied).isGreaterThan((rest - 1) * perFile).isLessThanOrEqualTo(rest * perFile);
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactlyElementsOf(last.values());

        out = new ByteArrayOutputStream();
        assertThat(refresh(out, sql, warehouse.toString(), state)).isZero();
        assertThat(text(out))
                .contains(
                        "Nothing new to ingest: all "
                                + files
                                + " input file(s) were read by an earlier run.");
        assertThat(TableRows.toCsvLines(ordersTable(warehouse)))
                .containsExactlyElementsOf(last.values());
    }

    /**
     * A state location that cannot be used fails with {@code STATE_DIR_UNAVAILABLE} (exit code 2)
     * before a table or state is written: a scheme no file system serves, a URI without a bucket, a
     * bucket the store does not have.
     */
    @Test
    void aStateDirThatCannotBeUsedFailsWithACodeBeforeAnythingIsWritten() throws Exception {
        Path input = Files.createDirectories(tmp.resolve("in"));
        Files.writeString(input.resolve("1.json"), "{\"id\":1,\"status\":\"a\",\"seq\":1}\n");
        Path sql = pipeline(input, s3.endpoint());
        Path warehouse = tmp.resolve("warehouse");
        for (String[] c :
                new String[][] {
                    {
                        "gs://bucket/state",
                        "STATE_DIR_UNAVAILABLE: --state-dir gs://bucket/state: no Flink file"
                                + " system for scheme 'gs' of gs://bucket/state: add the Flink"
                                + " file-system plugin flink-gs-fs-hadoop"
                    },
                    {
                        "s3:///state",
                        "STATE_DIR_UNAVAILABLE: --state-dir 's3:///state' names no bucket: write"
                                + " it as <scheme>://<bucket>/<prefix>, e.g."
                                + " s3://lakehouse/changeflow/state"
                    },
                    {
                        "s3://no-such-bucket/state",
                        "STATE_DIR_UNAVAILABLE: --state-dir s3://no-such-bucket/state cannot be"
                                + " reached: "
                    }
                }) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code =
                    stderr(
                            err,
                            () ->
                                    dev.changeflow.jobs.cli.Main.execute(
                                            "run",
                                            sql.toString(),
                                            "--refresh",
                                            "orders",
                                            "--warehouse",
                                            warehouse.toString(),
                                            "--state-dir",
                                            c[0]));
            assertThat(code).as(c[0]).isEqualTo(2);
            assertThat(text(err)).as(c[0]).startsWith("error: " + c[1]);
            assertThat(warehouse).as(c[0]).doesNotExist();
        }
    }

    /**
     * A file's DROP TABLE statements delete the dropped tables' state, which is searched in local
     * folders only: with an object-store {@code --state-dir} they are refused before anything runs.
     */
    @Test
    void dropStatementsAreRefusedWithAStateDirOnAnObjectStore() throws Exception {
        Path input = Files.createDirectories(tmp.resolve("in"));
        Path sql = pipeline(input, s3.endpoint());
        Files.writeString(sql, Files.readString(sql) + "DROP TABLE IF EXISTS old_orders;\n");
        Path warehouse = tmp.resolve("warehouse");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code =
                stderr(
                        err,
                        () ->
                                dev.changeflow.jobs.cli.Main.execute(
                                        "run",
                                        sql.toString(),
                                        "--warehouse",
                                        warehouse.toString(),
                                        "--state-dir",
                                        "s3://" + BUCKET + "/drops"));
        assertThat(code).isEqualTo(2);
        assertThat(text(err))
                .isEqualTo(
                        "error: INVALID_OPTION: --state-dir s3://"
                                + BUCKET
                                + "/drops: the file's DROP TABLE statements would delete the saved"
                                + " state of the tables they drop, which is searched in local"
                                + " folders only: run the DROP statements without --state-dir on"
                                + " an object store, or with --refresh / --full-refresh (which run"
                                + " no DROP)\n");
        assertThat(warehouse).doesNotExist();
    }

    /** {@code run FILE.sql --refresh orders --warehouse W --state-dir STATE}: its exit code. */
    private static int refresh(
            ByteArrayOutputStream out, Path sql, String warehouse, String state) {
        return run(
                out,
                "run",
                sql.toString(),
                "--refresh",
                "orders",
                "--warehouse",
                warehouse,
                "--state-dir",
                state);
    }

    private static Table ordersTable(Path warehouse) {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        return cat.loadTable(TableIdentifier.of("shop", "orders"));
    }

    private static String text(ByteArrayOutputStream out) {
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Runs the command line in-process, copying what it printed to {@code out}. */
    private static int run(ByteArrayOutputStream out, String... args) {
        return dev.changeflow.jobs.CapturedOutput.stdoutEchoed(
                out, () -> dev.changeflow.jobs.cli.Main.execute(args));
    }

    /** Runs {@code command}, capturing standard error into {@code err}. */
    private static int stderr(ByteArrayOutputStream err, java.util.function.IntSupplier command) {
        java.io.PrintStream saved = System.err;
        System.setErr(new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return command.getAsInt();
        } finally {
            System.setErr(saved);
            System.err.print(text(err));
        }
    }
}

package dev.changeflow.e2e;

import dev.changeflow.e2e.kafka.EmbeddedKafka;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kill -9} of the real {@code bin/changeflow ingest} process (the README's pgbench command
 * over the recorded capture), at seeded moments, resumed each time with the same command; after the
 * kills a run to the end and one more run ("Nothing new to ingest"): the four tables must equal
 * PostgreSQL's final CSVs (so no key is missing, duplicated, resurrected or stale) and the
 * quarantine table must be empty. Issue #19: a run killed the moment its final savepoint was
 * written left uncommitted Iceberg files that no later run committed.
 *
 * <p>Kill moments, each drawn by the seed: a delay after the process starts; just after the n-th
 * new Iceberg snapshot of the run appears; just after its n-th checkpoint completes (its {@code
 * _metadata} appears); just after the final savepoint's {@code _metadata} appears (always the last
 * kill of a seed). Every seed kills at each kind of moment at least once (with 4 or more kills).
 * Checkpoints every 500 ms, so even a run on a fast machine has several checkpoints and commits to
 * be killed around.
 *
 * <p>The same over Kafka: the capture produced to an embedded broker (one topic per table, 2
 * partitions each) and read with {@code --kafka-bootstrap}/{@code --topics} up to the end offsets
 * seen at launch; the run after the final one reads no record.
 *
 * <p>System properties: {@code kill.seeds} (default 1, to keep CI short: seeds 1..N for files),
 * {@code kill.kafka-seeds} (default 1), {@code kill.seed} (replay one seed, both inputs), {@code
 * kill.kills} (kills per seed, default 4: each kind of moment once). The seeds and the kill moments
 * are printed. A benchmark-style run: {@code ./mvnw -B verify -pl e2e-tests -am
 * -Dit.test=IngestKillITCase -Dkill.seeds=20 -DskipTests=false -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class IngestKillITCase {
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(5);
    private static final String JOB = "pgbench";
    private static final List<String> TABLES =
            List.of("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history");

    @RegisterExtension static final EmbeddedKafka KAFKA = new EmbeddedKafka();
    private static List<String> topics;

    /** Lines of the capture the warm-up run ingests (its snapshot reads of the first accounts). */
    private static final int WARM_UP_LINES = 2_000;

    private static boolean archiveChecked;

    /** A moment to kill at. */
    enum Moment {
        AFTER_START,
        NEW_SNAPSHOT,
        CHECKPOINT_COMPLETED,
        FINAL_SAVEPOINT
    }

    /**
     * One kill of a schedule: at the n-th occurrence of the moment (or after {@code n} ms for
     * AFTER_START), plus a delay.
     */
    record Kill(Moment moment, int n, int delayMs) {
        @Override
        public String toString() {
            return switch (moment) {
                case AFTER_START -> n + " ms after start";
                case NEW_SNAPSHOT ->
                        delayMs + " ms after new Iceberg snapshot #" + n + " of the run";
                case CHECKPOINT_COMPLETED ->
                        delayMs + " ms after checkpoint #" + n + " of the run completed";
                case FINAL_SAVEPOINT ->
                        delayMs + " ms after the final savepoint's _metadata appeared";
            };
        }
    }

    static Stream<Long> seeds() {
        return seeds("kill.seeds", 1);
    }

    static Stream<Long> kafkaSeeds() {
        return seeds("kill.kafka-seeds", 1);
    }

    private static Stream<Long> seeds(String property, long defaultCount) {
        String one = System.getProperty("kill.seed");
        if (one != null && !one.isBlank()) {
            return Stream.of(Long.parseLong(one.trim()));
        }
        return LongStream.rangeClosed(1, Long.getLong(property, defaultCount)).boxed();
    }

    /**
     * The schedule of a seed: the last kill at the final savepoint (the run it kills has read all
     * input; a kill after it would find only a short run that commits and ends), before it each
     * other kind of moment at least once and the rest drawn, in a seeded order. The moments inside
     * a run are early ones (first checkpoints and snapshots, a few seconds), so every kill before
     * the last finds input left to read.
     */
    static List<Kill> schedule(long seed, int kills) {
        Random rnd = new Random(seed);
        List<Moment> early =
                List.of(Moment.AFTER_START, Moment.NEW_SNAPSHOT, Moment.CHECKPOINT_COMPLETED);
        List<Moment> moments = new ArrayList<>();
        for (int i = 0; i < kills - 1; i++) {
            moments.add(i < early.size() ? early.get(i) : early.get(rnd.nextInt(early.size())));
        }
        Collections.shuffle(moments, rnd);
        moments.add(Moment.FINAL_SAVEPOINT);
        List<Kill> out = new ArrayList<>();
        for (Moment m : moments) {
            out.add(
                    switch (m) {
                        case AFTER_START -> new Kill(m, 1000 + rnd.nextInt(5000), 0);
                        case NEW_SNAPSHOT -> new Kill(m, 1 + rnd.nextInt(3), rnd.nextInt(30));
                        case CHECKPOINT_COMPLETED ->
                                new Kill(m, 1 + rnd.nextInt(2), rnd.nextInt(30));
                        case FINAL_SAVEPOINT -> new Kill(m, 1, rnd.nextInt(10));
                    });
        }
        return out;
    }

    @ParameterizedTest(name = "files, seed {0}")
    @MethodSource("seeds")
    void killedFileIngestResumesExactlyOnce(long seed, @TempDir Path dir) throws Exception {
        killAndResume(
                "files",
                seed,
                dir,
                PGBENCH_FLOWS,
                List.of(SharedData.pgbenchCapture().toString()),
                "Nothing new to ingest");
    }

    /**
     * As {@link #killedFileIngestResumesExactlyOnce}, with the capture cut into {@value #PARTS}
     * files read by two readers ({@code file-readers: 2}): each reader writes its own list of
     * completed files per checkpoint, and a resumed run must take exactly their union as read.
     */
    @ParameterizedTest(name = "files, two readers, seed {0}")
    @MethodSource("seeds")
    void killedFileIngestWithTwoReadersResumesExactlyOnce(long seed, @TempDir Path dir)
            throws Exception {
        Path input = dir.resolve("input");
        List<String> lines = SharedData.readLines(SharedData.pgbenchCapture());
        int per = (lines.size() + PARTS - 1) / PARTS;
        for (int i = 0; i < PARTS; i++) {
            PgbenchCaptureITCase.write(
                    input.resolve("capture-" + i + ".jsonl.gz"),
                    lines.subList(i * per, Math.min(lines.size(), (i + 1) * per)));
        }
        Path flows = dir.resolve("pgbench-flows.yaml");
        // two files per commit (one per reader) keep each run long enough for its kill to land
        // between files completing on both readers
        Files.writeString(
                flows,
                "file-readers: 2\nmax-files-per-trigger: 2\n" + Files.readString(PGBENCH_FLOWS));
        killAndResume(
                "files, two readers",
                seed,
                dir,
                flows,
                List.of(input.toString()),
                "Nothing new to ingest");
    }

    /** Files the two-reader variant cuts the capture into. */
    private static final int PARTS = 8;

    private static final Path PGBENCH_FLOWS =
            SharedData.repositoryRoot().resolve("examples").resolve("pgbench-flows.yaml");

    @ParameterizedTest(name = "Kafka, seed {0}")
    @MethodSource("kafkaSeeds")
    void killedKafkaIngestResumesExactlyOnce(long seed, @TempDir Path dir) throws Exception {
        List<String> topicNames = produceCaptureOnce();
        killAndResume(
                "Kafka",
                seed,
                dir,
                PGBENCH_FLOWS,
                List.of(
                        "--kafka-bootstrap",
                        KAFKA.bootstrapServers(),
                        "--topics",
                        String.join(",", topicNames),
                        "--group-id",
                        "kill-" + seed),
                "Done in");
    }

    /**
     * Produces the capture to Kafka once per class (the runs of every seed read it from the start).
     */
    private static synchronized List<String> produceCaptureOnce() throws Exception {
        if (topics == null) {
            List<ProducerRecord<byte[], byte[]>> records =
                    KafkaPgbenchITCase.records(SharedData.readLines(SharedData.pgbenchCapture()));
            TreeSet<String> names = new TreeSet<>();
            records.forEach(r -> names.add(r.topic()));
            KAFKA.createTopics(2, new ArrayList<>(names));
            try (KafkaProducer<byte[], byte[]> producer = KAFKA.producer()) {
                for (ProducerRecord<byte[], byte[]> r : records) {
                    producer.send(r);
                }
                producer.flush();
            }
            topics = new ArrayList<>(names);
        }
        return topics;
    }

    /**
     * Runs the seed's schedule of kills over one input, then a run to the end and one more run
     * (whose output must contain {@code againSays}), and compares the tables with PostgreSQL's.
     */
    private static void killAndResume(
            String input, long seed, Path dir, Path flows, List<String> inputArgs, String againSays)
            throws Exception {
        Path warehouse = dir.resolve("warehouse");
        List<Kill> kills = schedule(seed, Integer.getInteger("kill.kills", 4));
        writeClassArchiveOnce(dir.resolve("warm-up"));
        System.out.println(
                "IngestKillITCase "
                        + input
                        + " seed "
                        + seed
                        + ": "
                        + kills.size()
                        + " kills (replay with -Dkill.seed="
                        + seed
                        + ")");
        for (int i = 0; i < kills.size(); i++) {
            Kill k = kills.get(i);
            Path log = dir.resolve("attempt-" + i + ".log");
            long t0 = System.nanoTime();
            Process p = start(flows, inputArgs, warehouse, log);
            String what = killAt(p, k, warehouse);
            System.out.printf(
                    "  %s seed %d kill %d: %-60s -> %s at %.1f s%n",
                    input, seed, i + 1, k, what, (System.nanoTime() - t0) / 1e9);
        }
        Path last = dir.resolve("final.log");
        Process p = start(flows, inputArgs, warehouse, last);
        assertThat(p.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .as("final run ends")
                .isTrue();
        assertThat(p.exitValue())
                .as("final run's exit code; its output:%n%s", tail(last))
                .isEqualTo(0);
        System.out.println("  " + input + " seed " + seed + " final run: " + firstLine(last));
        Path again = dir.resolve("again.log");
        p = start(flows, inputArgs, warehouse, again);
        assertThat(p.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue())
                .as("run after the final one; its output:%n%s", tail(again))
                .isEqualTo(0);
        String againOut = Files.readString(again);
        assertThat(againOut)
                .as("run after the final one")
                .contains(againSays)
                .doesNotContain("No new input file, but");
        if (againSays.equals("Done in")) {
            assertThat(againOut)
                    .as("run after the final one reads nothing")
                    .contains(": 0 records");
        }

        for (String t : TABLES) {
            List<String> expected = PgbenchCaptureITCase.sorted(SharedData.finalCsv(t));
            List<String> actual =
                    PgbenchCaptureITCase.sorted(
                            PgbenchCaptureITCase.rows(warehouse, "public." + t));
            assertThat(difference(expected, actual))
                    .as(
                            "public.%s after %s seed %d (replay with -Dkill.seed=%d)",
                            t, input, seed, seed)
                    .isEmpty();
            assertThat(actual).as(t).isEqualTo(expected);
        }
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(
                        TableRows.count(
                                cat.loadTable(
                                        TableIdentifier.of("public", "changeflow_quarantine"))))
                .as("quarantined")
                .isZero();
    }

    /**
     * Makes the launcher's class data sharing archive ({@code jobs/target/changeflow-cds.jsa}, see
     * {@code bin/changeflow}) exist before the first kill, once per class. The launcher writes it
     * only when an ingest exits normally, so without this every run up to the first seed's final
     * run (four kills, each a fresh JVM) loads and verifies all classes from the jars, about 40%
     * more CPU up to a first checkpoint. The warm-up is a short ingest of the capture's first lines
     * into a folder of its own (it exits 0 and so writes the archive); it changes nothing the kills
     * test, since a user's second run of the launcher has the archive too.
     */
    private static synchronized void writeClassArchiveOnce(Path dir) throws Exception {
        Path archive =
                SharedData.repositoryRoot()
                        .resolve("jobs")
                        .resolve("target")
                        .resolve("changeflow-cds.jsa");
        if (archiveChecked
                || Files.exists(archive)
                || "0".equals(System.getenv("CHANGEFLOW_CDS"))) {
            archiveChecked = true;
            return;
        }
        archiveChecked = true;
        Files.createDirectories(dir);
        Path input = dir.resolve("capture-head.jsonl.gz");
        List<String> lines = SharedData.readLines(SharedData.pgbenchCapture());
        try (Writer w =
                new OutputStreamWriter(
                        new GZIPOutputStream(Files.newOutputStream(input)),
                        StandardCharsets.UTF_8)) {
            for (String line : lines.subList(0, Math.min(WARM_UP_LINES, lines.size()))) {
                w.write(line);
                w.write('\n');
            }
        }
        Path log = dir.resolve("warm-up.log");
        long t0 = System.nanoTime();
        Process p = start(PGBENCH_FLOWS, List.of(input.toString()), dir.resolve("warehouse"), log);
        assertThat(p.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .as("warm-up run ends")
                .isTrue();
        assertThat(p.exitValue())
                .as("warm-up run's exit code; its output:%n%s", tail(log))
                .isEqualTo(0);
        System.out.printf(
                "IngestKillITCase: warm-up run (class archive written) in %.1f s%n",
                (System.nanoTime() - t0) / 1e9);
    }

    /**
     * Rows missing from and unexpected in {@code actual}, a few of each, as one line (empty when
     * they are equal).
     */
    private static String difference(List<String> expected, List<String> actual) {
        Map<String, Integer> left = new HashMap<>();
        expected.forEach(r -> left.merge(r, 1, Integer::sum));
        List<String> unexpected = new ArrayList<>();
        for (String r : actual) {
            if (left.merge(r, -1, Integer::sum) < 0) {
                unexpected.add(r);
            }
        }
        List<String> missing = new ArrayList<>();
        left.forEach(
                (r, n) -> {
                    for (int i = 0; i < n; i++) {
                        missing.add(r);
                    }
                });
        if (missing.isEmpty() && unexpected.isEmpty()) {
            return "";
        }
        Collections.sort(missing);
        return String.format(
                "%,d rows (expected %,d): %,d missing, e.g. %s; %,d unexpected, e.g. %s",
                actual.size(),
                expected.size(),
                missing.size(),
                missing.subList(0, Math.min(3, missing.size())),
                unexpected.size(),
                unexpected.subList(0, Math.min(3, unexpected.size())));
    }

    private static Process start(Path flows, List<String> inputArgs, Path warehouse, Path log)
            throws IOException {
        Path root = SharedData.repositoryRoot();
        List<String> cmd =
                new ArrayList<>(
                        List.of(
                                root.resolve("bin").resolve("changeflow").toString(),
                                "ingest",
                                "--flows",
                                flows.toString(),
                                "--warehouse",
                                warehouse.toString(),
                                "--checkpoint-interval",
                                "500ms"));
        cmd.addAll(inputArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("CHANGEFLOW_NO_BUILD", "1");
        // C1 only: every run is a fresh JVM of a few seconds to a minute, most of whose CPU on two
        // busy cores is start-up, where C2's compiler threads cost more than they give back
        pb.environment().put("CHANGEFLOW_JAVA_OPTS", "-Xmx1g -XX:TieredStopAtLevel=1");
        return pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /**
     * Waits for the kill's moment and kills the process with SIGKILL ({@link
     * Process#destroyForcibly} on Linux; the launcher {@code exec}s java, so this is the JVM
     * itself).
     *
     * @return what happened, for the printed schedule
     */
    private static String killAt(Process p, Kill k, Path warehouse) throws Exception {
        Path ckRoot = warehouse.resolve(".changeflow").resolve("checkpoints").resolve(JOB);
        long snapshots0 = snapshots(warehouse);
        long checkpoints0 = count(ckRoot.resolve("checkpoints"), "_metadata");
        long savepoints0 = count(ckRoot.resolve("savepoints"), "_metadata");
        long start = System.nanoTime();
        long deadline = start + RUN_TIMEOUT.toNanos();
        while (true) {
            if (!p.isAlive()) {
                return "exited (rc " + p.exitValue() + ") before the moment";
            }
            boolean reached =
                    switch (k.moment()) {
                        case AFTER_START ->
                                System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(k.n());
                        case NEW_SNAPSHOT -> snapshots(warehouse) - snapshots0 >= k.n();
                        case CHECKPOINT_COMPLETED ->
                                count(ckRoot.resolve("checkpoints"), "_metadata") - checkpoints0
                                        >= k.n();
                        case FINAL_SAVEPOINT ->
                                count(ckRoot.resolve("savepoints"), "_metadata") > savepoints0;
                    };
            if (reached || System.nanoTime() > deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(k.delayMs()));
                p.destroyForcibly();
                p.waitFor();
                return reached
                        ? "killed"
                        : "killed (moment not reached in " + RUN_TIMEOUT.toMinutes() + " min)";
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    /**
     * Snapshots committed to the four tables so far (one manifest list {@code snap-*.avro} each).
     */
    private static long snapshots(Path warehouse) throws IOException {
        long n = 0;
        for (String t : TABLES) {
            Path meta = warehouse.resolve("public").resolve(t).resolve("metadata");
            if (Files.isDirectory(meta)) {
                try (Stream<Path> s = Files.list(meta)) {
                    n += s.filter(f -> f.getFileName().toString().startsWith("snap-")).count();
                }
            }
        }
        return n;
    }

    private static long count(Path root, String name) throws IOException {
        if (!Files.isDirectory(root)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(root, 3)) {
            return s.filter(f -> f.getFileName().toString().equals(name)).count();
        } catch (UncheckedIOException e) {
            return count(
                    root, name); // a folder vanished while walking (Flink's clean-up): look again
        }
    }

    private static String firstLine(Path log) throws IOException {
        return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                .filter(l -> l.startsWith("Ingesting") || l.startsWith("No new"))
                .findFirst()
                .orElse("(no start line)");
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}

package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The recorded PostgreSQL + pgbench + Debezium capture ({@code ../shared/data/pgbench-s1}, 141,511
 * events) ingested end to end on a MiniCluster with RocksDB and checkpoints into a Hadoop catalog:
 * every table must equal PostgreSQL's final table exactly (all columns, blank padding, nulls;
 * history as a multiset), and the SCD type 2 history of the accounts must equal the versions
 * derived from the capture (A4) — in file order, with per-key order destroyed, and across a
 * savepoint half-way.
 */
class PgbenchCaptureITCase {
    private static final String[] KEYED = {
        "pgbench_accounts", "pgbench_branches", "pgbench_tellers"
    };

    @TempDir Path tmp;

    @Test
    void captureInFileOrderEqualsPostgresAndScd2History() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(withScd2(config()), List.of(capture));
        LocalIngest.Summary s = run(plan, List.of(capture), warehouse, false);
        assertThat(s.quarantined).isZero();
        assertTablesEqualOracle(warehouse);
        assertThat(sorted(rows(warehouse, "public.pgbench_accounts_scd2")))
                .isEqualTo(sorted(scd2Oracle(capture)));
    }

    @Test
    void captureWithPerKeyOrderDestroyedGivesIdenticalTables() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        List<String> lines = SharedData.readLines(capture);
        Random random = new Random(20261130L);
        for (int from = 0; from < lines.size(); from += 1_000) {
            Collections.shuffle(lines.subList(from, Math.min(lines.size(), from + 1_000)), random);
        }
        // cut into 5 files read by two readers (file-readers: 2): a key's changes also arrive
        // from two files at once
        Path shuffled = tmp.resolve("shuffled");
        int per = (lines.size() + 4) / 5;
        for (int i = 0; i < 5; i++) {
            write(
                    shuffled.resolve("capture-shuffled-" + i + ".jsonl.gz"),
                    lines.subList(i * per, Math.min(lines.size(), (i + 1) * per)));
        }
        Path warehouse = tmp.resolve("warehouse");
        IngestConfig cfg = withScd2(config());
        cfg.fileReaders = 2;
        IngestPlan plan = IngestPlanner.plan(cfg, List.of(shuffled));
        run(plan, List.of(shuffled), warehouse, false);
        assertTablesEqualOracle(warehouse);
        assertThat(sorted(rows(warehouse, "public.pgbench_accounts_scd2")))
                .isEqualTo(sorted(scd2Oracle(capture)));
    }

    @Test
    void resumesFromItsSavepointHalfWayAndRefusesToStartWithoutState() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        List<String> lines = SharedData.readLines(capture);
        Path input = tmp.resolve("input");
        int half = lines.size() / 2;
        write(input.resolve("part-1.jsonl.gz"), lines.subList(0, half));
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(config(), List.of(input));

        LocalIngest.Summary first = run(plan, List.of(input), warehouse, false);
        assertThat(first.savepoint).isNotNull();
        // the first half holds only snapshot records (op r) of the accounts: one row each
        long snapshotAccounts =
                lines.subList(0, half).stream()
                        .filter(
                                l ->
                                        l.contains("\"topic\":\"pgbench.public.pgbench_accounts\"")
                                                && l.contains("\"op\":\"r\""))
                        .count();
        assertThat(snapshotAccounts).isEqualTo(half);
        assertThat(rows(warehouse, "public.pgbench_accounts")).hasSize(half);

        write(input.resolve("part-2.jsonl.gz"), lines.subList(half, lines.size()));
        LocalIngest.Summary second = run(plan, List.of(input), warehouse, false);
        assertThat(second.records).isEqualTo(lines.size() - half);
        assertTablesEqualOracle(warehouse);

        LocalIngest.Summary third = run(plan, List.of(input), warehouse, false);
        assertThat(third.nothingToDo).isTrue();

        LocalIngest.deleteState(LocalIngest.checkpointRoot(plan, options(warehouse, false)));
        assertThatThrownBy(() -> run(plan, List.of(input), warehouse, false))
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(
                                                AutoCdcException.Code
                                                        .STATE_MISSING_FOR_EXISTING_TABLE))
                .hasMessageContaining("public.pgbench_accounts")
                .hasMessageContaining("--from-scratch");

        run(plan, List.of(input), warehouse, true);
        assertTablesEqualOracle(warehouse);
    }

    /**
     * Issue #19: when the process dies after the final savepoint was written but before the job
     * finished, the savepoint's Iceberg commits may not have happened; every file is marked read in
     * it, yet the next run must restore it (its committers commit what it holds) rather than say
     * "Nothing new to ingest". Simulated by removing the clean-stop record: the run restores the
     * savepoint, reads nothing, and leaves the tables exact; the run after it has nothing to do.
     * ({@link IngestKillITCase} kills the real process at that moment, when the commits are
     * missing.)
     */
    @Test
    void savepointOfARunThatDidNotFinishIsRestoredEvenWithNothingNew() throws Exception {
        Path capture = SharedData.pgbenchCapture();
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(config(), List.of(capture));
        run(plan, List.of(capture), warehouse, false);
        Path ckRoot = LocalIngest.checkpointRoot(plan, options(warehouse, false));
        Files.delete(
                ckRoot.resolveSibling(ckRoot.getFileName() + ".state")
                        .resolve("committed-savepoint"));

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LocalIngest.Options o = options(warehouse, false);
        o.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        LocalIngest.Summary second = LocalIngest.run(plan, List.of(capture), o);
        assertThat(second.nothingToDo).isFalse();
        assertThat(second.records).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("the last run was stopped before it finished");
        assertTablesEqualOracle(warehouse);

        LocalIngest.Summary third = run(plan, List.of(capture), warehouse, false);
        assertThat(third.nothingToDo).isTrue();
        assertTablesEqualOracle(warehouse);
    }

    // ---------------------------------------------------------------------------------------------

    static IngestConfig config() throws IOException {
        return FlowsFile.read(
                SharedData.repositoryRoot().resolve("examples").resolve("pgbench-flows.yaml"));
    }

    static IngestConfig withScd2(IngestConfig cfg) {
        FlowConfig scd2 = new FlowConfig();
        scd2.table = "pgbench_accounts";
        scd2.target = "pgbench_accounts_scd2";
        scd2.keys = List.of("aid");
        scd2.scdType = ScdType.TYPE_2;
        scd2.schema = cfg.flow("pgbench_accounts").schema;
        cfg.flows.add(scd2);
        return cfg;
    }

    static LocalIngest.Options options(Path warehouse, boolean fromScratch) {
        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = warehouse;
        o.fromScratch = fromScratch;
        o.out = new PrintStream(OutputStream.nullOutputStream());
        return o;
    }

    static LocalIngest.Summary run(
            IngestPlan plan, List<Path> inputs, Path warehouse, boolean fromScratch)
            throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        LocalIngest.Options o = options(warehouse, fromScratch);
        o.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        try {
            return LocalIngest.run(plan, inputs, o);
        } finally {
            System.out.print(buf.toString(StandardCharsets.UTF_8));
        }
    }

    static void assertTablesEqualOracle(Path warehouse) throws IOException {
        for (String t : KEYED) {
            assertThat(rows(warehouse, "public." + t))
                    .as(t)
                    .isEqualTo(
                            SharedData.finalCsv(t).size() > 0
                                    ? sortedByKey(SharedData.finalCsv(t))
                                    : List.of());
        }
        assertThat(sorted(rows(warehouse, "public.pgbench_history")))
                .as("pgbench_history")
                .isEqualTo(sorted(SharedData.finalCsv("pgbench_history")));
    }

    /**
     * No table of namespace {@code public} holds a reset marker of {@code StatelessStartMarker} (a
     * snapshot with {@code flink.max-committed-checkpoint-id = -1}): every start of the jobs that
     * wrote them continued from state or used a job id new to the table.
     */
    static void assertNoResetMarkers(Catalog cat) {
        for (TableIdentifier t : cat.listTables(Namespace.of("public"))) {
            List<Long> markers = new ArrayList<>();
            for (Snapshot s : cat.loadTable(t).snapshots()) {
                if ("-1".equals(s.summary().get("flink.max-committed-checkpoint-id"))) {
                    markers.add(s.snapshotId());
                }
            }
            assertThat(markers).as("reset markers in " + t).isEmpty();
        }
    }

    /** The table's rows formatted like PostgreSQL's CSV, ordered by the first (key) column. */
    static List<String> rows(Path warehouse, String table) {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table t = cat.loadTable(TableIdentifier.parse(table));
        List<String> out = new ArrayList<>();
        for (Record r : TableRows.read(t)) {
            out.add(TableRows.toCsvLine(r));
        }
        return sortedByKey(out);
    }

    static List<String> sortedByKey(List<String> lines) {
        List<String> copy = new ArrayList<>(lines);
        copy.sort(
                (a, b) -> {
                    long ka = Long.parseLong(a.substring(0, a.indexOf(',')));
                    long kb = Long.parseLong(b.substring(0, b.indexOf(',')));
                    return ka != kb ? Long.compare(ka, kb) : a.compareTo(b);
                });
        return copy;
    }

    static List<String> sorted(List<String> lines) {
        List<String> copy = new ArrayList<>(lines);
        copy.sort(null);
        return copy;
    }

    /**
     * The SCD type 2 history of pgbench_accounts derived from the capture (A4): per key, events in
     * {@code source.lsn} order; an upsert whose row differs from the open version closes it and
     * opens a new one at its LSN; an identical one opens nothing; a delete closes the open version.
     */
    static List<String> scd2Oracle(Path capture) throws IOException {
        ObjectMapper json = new ObjectMapper();
        Map<Long, List<long[]>> order = new TreeMap<>();
        Map<Long, List<String>> rowsByEvent = new HashMap<>();
        List<JsonNode> events = new ArrayList<>();
        for (String line : SharedData.readLines(capture)) {
            JsonNode n = json.readTree(line);
            if (!n.path("topic").asText().endsWith(".pgbench_accounts")
                    || n.path("value").isNull()) {
                continue;
            }
            events.add(n.path("value"));
        }
        Map<Long, List<JsonNode>> perKey = new TreeMap<>();
        for (JsonNode v : events) {
            JsonNode img = v.path("op").asText().equals("d") ? v.path("before") : v.path("after");
            perKey.computeIfAbsent(img.path("aid").asLong(), k -> new ArrayList<>()).add(v);
        }
        List<String> versions = new ArrayList<>();
        for (Map.Entry<Long, List<JsonNode>> e : perKey.entrySet()) {
            List<JsonNode> evs = e.getValue();
            evs.sort(
                    (a, b) ->
                            Long.compare(
                                    a.path("source").path("lsn").asLong(),
                                    b.path("source").path("lsn").asLong()));
            String openRow = null;
            long openStart = 0;
            for (JsonNode v : evs) {
                long lsn = v.path("source").path("lsn").asLong();
                if (v.path("op").asText().equals("d")) {
                    if (openRow != null) {
                        versions.add(openRow + "," + openStart + "," + lsn);
                        openRow = null;
                    }
                    continue;
                }
                JsonNode a = v.path("after");
                String row =
                        a.path("aid").asText()
                                + ","
                                + a.path("bid").asText()
                                + ","
                                + a.path("abalance").asText()
                                + ","
                                + (a.path("filler").isNull() ? "" : a.path("filler").asText());
                if (row.equals(openRow)) {
                    continue;
                }
                if (openRow != null) {
                    versions.add(openRow + "," + openStart + "," + lsn);
                }
                openRow = row;
                openStart = lsn;
            }
            if (openRow != null) {
                versions.add(openRow + "," + openStart + ",");
            }
        }
        return versions;
    }

    static void write(Path file, List<String> lines) throws IOException {
        Files.createDirectories(file.getParent());
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
            for (String l : lines) {
                out.write(l.getBytes(StandardCharsets.UTF_8));
                out.write('\n');
            }
        }
    }
}

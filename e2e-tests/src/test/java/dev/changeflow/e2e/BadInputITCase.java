package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every reason code the decoder produces (semantics.md A5), end to end: one bad record per kind in
 * a file among good ones, plus a damaged gzip file. The job keeps running, the good records are
 * applied, and every bad record lands in {@code shop.changeflow_quarantine} with its reason, file
 * and line; under {@code on-invalid-record = fail} the job stops with a clear error instead. A gzip
 * file whose bytes were flipped (garbage before the CRC check fails) is quarantined whole as {@code
 * DAMAGED_FILE}, once, beside good files that apply (issue #19, 3).
 */
class BadInputITCase {
    @TempDir Path tmp;

    static String flows(String onInvalid) {
        return String.join(
                "\n",
                "name: bad-input",
                "namespace: shop",
                "max-record-bytes: 4096",
                // two readers: the two input files are read at once
                "file-readers: 2",
                "flows:",
                "  - table: items",
                "    keys: [id]",
                "    schema: 'id INT, region STRING, v INT'",
                "    on-schema-change: quarantine",
                "    on-invalid-record: " + onInvalid);
    }

    static String ev(String op, String after, String source) {
        return "{\"key\":null,\"value\":{\"before\":null,\"after\":"
                + after
                + ",\"source\":"
                + source
                + ",\"op\":\""
                + op
                + "\",\"ts_ms\":1},\"topic\":\"db.shop.items\"}";
    }

    static String src(long lsn) {
        return "{\"connector\":\"postgresql\",\"schema\":\"shop\",\"table\":\"items\",\"lsn\":"
                + lsn
                + "}";
    }

    @Test
    void everyKindOfBadRecordIsQuarantinedWithItsReasonAndTheGoodOnesApply() throws Exception {
        List<String> lines = new ArrayList<>();
        lines.add(ev("c", "{\"id\":10,\"region\":\"a\",\"v\":1}", src(100))); // 1 good
        lines.add("plain text, not json"); // 2 NOT_JSON
        lines.add(
                "{\"key\":null,\"value\":{\"before\":null,\"after\":{\"id\":1"); // 3 MALFORMED_JSON
        lines.add(
                ev("c", "{\"id\":2,\"region\":\"a\",\"v\":\"abc\"}", src(101))); // 4 TYPE_MISMATCH
        lines.add(ev("c", "{\"region\":\"a\",\"v\":3}", src(102))); // 5 MISSING_COLUMN
        lines.add(ev("c", "{\"id\":null,\"region\":\"a\",\"v\":4}", src(103))); // 6 NULL_KEY
        lines.add(
                ev(
                        "c",
                        "{\"id\":5,\"region\":\"a\",\"v\":5}",
                        "{\"table\":\"items\",\"schema\":\"shop\"}")); // 7 NULL_SEQUENCE
        lines.add(ev("x", "{\"id\":6,\"region\":\"a\",\"v\":6}", src(104))); // 8 UNKNOWN_OP
        lines.add(ev("c", "null", src(105))); // 9 UNKNOWN_OP (null after)
        lines.add(
                "{\"key\":null,\"value\":{\"before\":null,\"after\":{\"id\":7},\"source\":{\"schema\":\"shop\",\"table\":\"other\",\"lsn\":106},\"op\":\"c\"},\"topic\":\"db.shop.other\"}"); // 10 UNKNOWN_TOPIC
        lines.add(
                ev(
                        "c",
                        "{\"id\":8,\"region\":\"a\",\"v\":8,\"w\":1}",
                        src(107))); // 11 SCHEMA_CHANGED
        lines.add(ev("t", "null", src(108))); // 12 TRUNCATE_NOT_ENABLED
        char[] big = new char[5000];
        Arrays.fill(big, 'x');
        lines.add(
                ev(
                        "c",
                        "{\"id\":9,\"region\":\"" + new String(big) + "\",\"v\":9}",
                        src(109))); // 13 RECORD_TOO_LARGE
        // 14 good since A7 item 1 (was MISSING_COLUMN): a Debezium image without v is a change
        // written when the source had no column v, so v is null
        lines.add(ev("u", "{\"id\":10,\"region\":\"c\"}", src(111)));
        lines.add(ev("c", "{\"id\":11,\"region\":\"b\",\"v\":2}", src(110))); // 15 good
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("bad.jsonl"), lines);

        // a gzip file cut in the middle: the lines before the damage apply, the rest is quarantined
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz)) {
            for (int i = 0; i < 400; i++) {
                out.write(
                        (ev(
                                                "c",
                                                "{\"id\":"
                                                        + (1000 + i)
                                                        + ",\"region\":\"z\",\"v\":"
                                                        + i
                                                        + "}",
                                                src(200 + i))
                                        + "\n")
                                .getBytes(StandardCharsets.UTF_8));
            }
        }
        byte[] whole = gz.toByteArray();
        Files.write(input.resolve("damaged.jsonl.gz"), Arrays.copyOf(whole, whole.length / 2));

        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan =
                IngestPlanner.plan(
                        FlowsFile.parse(flows("quarantine"), "flows.yaml"),
                        List.of(input.resolve("bad.jsonl")));
        LocalIngest.Summary summary =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        List<String> quarantine = new ArrayList<>();
        long damagedAt = -1;
        for (Record r :
                TableRows.read(
                        cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            String source =
                    Path.of(r.getField("source").toString().replaceFirst("^file:", ""))
                            .getFileName()
                            .toString();
            long offset = (Long) r.getField("offset");
            String reason = r.getField("reason").toString();
            assertThat(r.getField("detail").toString()).as("detail of " + reason).isNotBlank();
            assertThat(r.getField("quarantined_at")).isNotNull();
            if (reason.equals("TRUNCATED_FILE")) {
                damagedAt = offset;
                assertThat(source).isEqualTo("damaged.jsonl.gz");
                continue;
            }
            quarantine.add(source + ":" + offset + ":" + reason + ":" + r.getField("flow"));
            assertThat((ByteBuffer) r.getField("raw")).isNotNull();
        }
        assertThat(quarantine)
                .containsExactlyInAnyOrder(
                        "bad.jsonl:2:NOT_JSON:items",
                        "bad.jsonl:3:MALFORMED_JSON:items",
                        "bad.jsonl:4:TYPE_MISMATCH:items",
                        "bad.jsonl:5:MISSING_COLUMN:items",
                        "bad.jsonl:6:NULL_KEY:items",
                        "bad.jsonl:7:NULL_SEQUENCE:items",
                        "bad.jsonl:8:UNKNOWN_OP:items",
                        "bad.jsonl:9:UNKNOWN_OP:items",
                        "bad.jsonl:10:UNKNOWN_TOPIC:null",
                        "bad.jsonl:11:SCHEMA_CHANGED:items",
                        "bad.jsonl:12:TRUNCATE_NOT_ENABLED:items",
                        "bad.jsonl:13:RECORD_TOO_LARGE:items");
        assertThat(damagedAt).as("line of the damage in damaged.jsonl.gz").isBetween(2L, 400L);
        assertThat(summary.quarantined).isEqualTo(13);

        List<String> expected = new ArrayList<>(List.of("10,c,", "11,b,2"));
        for (int i = 0; i < damagedAt - 1; i++) {
            expected.add((1000 + i) + ",z," + i);
        }
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items"))))
                .containsExactlyElementsOf(expected);
    }

    @Test
    void addColumnsOverFilesEvolvesTheTableAndResumes() throws Exception {
        // the same launcher path as over Kafka (KafkaBadInputITCase): stop at the record, add the
        // column, resume from the last checkpoint with the wider row
        String flows =
                String.join(
                        "\n",
                        "name: add-columns-files",
                        "namespace: shop",
                        "flows:",
                        "  - table: items",
                        "    keys: [id]",
                        "    schema: 'id INT, region STRING, v INT'",
                        "    on-schema-change: add-columns");
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(
                input.resolve("1.jsonl"),
                List.of(
                        ev("c", "{\"id\":1,\"region\":\"a\",\"v\":1}", src(100)),
                        ev("c", "{\"id\":2,\"region\":\"b\",\"v\":2}", src(101))));
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of());
        assertThat(
                        LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse))
                                .addedColumns)
                .isEmpty();

        Files.write(
                input.resolve("2.jsonl"),
                List.of(
                        ev("c", "{\"id\":3,\"region\":\"c\",\"v\":3,\"n\":30}", src(102)),
                        ev("u", "{\"id\":1,\"region\":\"a\",\"v\":10,\"n\":null}", src(103))));
        LocalIngest.Summary second =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns).containsExactly("shop.items: + n BIGINT");
        assertThat(second.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().findField("n").type()).isEqualTo(Types.LongType.get());
        assertThat(TableRows.toCsvLines(items)).containsExactly("1,a,10,", "2,b,2,", "3,c,3,30");
    }

    @Test
    void onInvalidRecordFailStopsTheJobNamingTheReason() throws Exception {
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(
                input.resolve("bad.jsonl"),
                List.of(
                        ev("c", "{\"id\":10,\"region\":\"a\",\"v\":1}", src(100)),
                        "plain text, not json"));
        IngestPlan plan =
                IngestPlanner.plan(FlowsFile.parse(flows("fail"), "flows.yaml"), List.of(input));
        assertThatThrownBy(
                        () ->
                                LocalIngest.run(
                                        plan,
                                        List.of(input),
                                        KeysCasesITCase.quiet(tmp.resolve("warehouse"))))
                .satisfies(
                        e -> {
                            Throwable root = e;
                            while (root.getCause() != null) {
                                root = root.getCause();
                            }
                            assertThat(root)
                                    .hasMessageContaining("NOT_JSON")
                                    .hasMessageContaining("bad.jsonl");
                        });
    }

    static byte[] gzip(List<String> lines) throws IOException {
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz)) {
            for (String l : lines) {
                out.write((l + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        return gz.toByteArray();
    }

    /**
     * A gzip member with a flipped byte, the CRC32 its trailer holds, and the one its data inflates
     * to.
     */
    record Flipped(byte[] gz, long trailerCrc, long dataCrc, List<String> schemaChangingGarbage) {}

    /**
     * The gzip of {@code lines} with one byte of its deflate data flipped: the first flip from the
     * middle on after which Java's gzip reader hands out at least one line that is not one of
     * {@code lines} yet parses as a Debezium event whose {@code after} has a field outside {@code
     * columns} — garbage the decoder would take for a schema change — and only then fails, at the
     * trailer's CRC.
     */
    static Flipped flipped(List<String> lines, List<String> columns) throws IOException {
        byte[] gz = gzip(lines);
        CRC32 crc = new CRC32();
        crc.update((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
        ObjectMapper json = new ObjectMapper();
        for (int at = gz.length / 2; at < gz.length - 8; at++) {
            byte[] bad = gz.clone();
            bad[at] ^= 0x10;
            ByteArrayOutputStream inflated = new ByteArrayOutputStream();
            try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(bad))) {
                in.transferTo(inflated);
                continue;
            } catch (ZipException e) {
                if (!"Corrupt GZIP trailer".equals(e.getMessage())) {
                    continue;
                }
            }
            List<String> schemaChanging = new ArrayList<>();
            for (String l : inflated.toString(StandardCharsets.UTF_8).split("\n")) {
                if (lines.contains(l)) {
                    continue;
                }
                try {
                    JsonNode after = json.readTree(l).path("value").path("after");
                    for (Iterator<String> f = after.fieldNames(); f.hasNext(); ) {
                        if (!columns.contains(f.next())) {
                            schemaChanging.add(l);
                            break;
                        }
                    }
                } catch (IOException notJson) {
                    // garbage the decoder would quarantine; look for worse
                }
            }
            if (!schemaChanging.isEmpty()) {
                CRC32 dataCrc = new CRC32();
                dataCrc.update(inflated.toByteArray());
                return new Flipped(bad, crc.getValue(), dataCrc.getValue(), schemaChanging);
            }
        }
        throw new AssertionError("no flip yields garbage with an unknown column");
    }

    static String srcTx(long lsn) {
        return "{\"connector\":\"postgresql\",\"schema\":\"shop\",\"table\":\"items\",\"lsn\":"
                + lsn
                + ",\"txId\":"
                + (lsn / 3)
                + ",\"snapshot\":\"false\"}";
    }

    static List<String> events(int fromId, int toId, String region, long lsn0) {
        List<String> out = new ArrayList<>();
        for (int id = fromId; id <= toId; id++) {
            out.add(
                    ev(
                            "c",
                            "{\"id\":"
                                    + id
                                    + ",\"region\":\""
                                    + region
                                    + "\",\"v\":"
                                    + (id % 7)
                                    + "}",
                            srcTx(lsn0 + id)));
        }
        return out;
    }

    @Test
    void damagedGzipIsQuarantinedOnceAndTheGoodFilesOfTheFolderApply() throws Exception {
        // default on-schema-change (fail) and on-invalid-record: garbage with unknown fields would
        // stop the job
        String flows =
                String.join(
                        "\n",
                        "name: damaged-gzip",
                        "namespace: shop",
                        "file-readers: 2",
                        "flows:",
                        "  - table: items",
                        "    keys: [id]",
                        "    schema: 'id INT, region STRING, v INT'");
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("1-good.jsonl.gz"), gzip(events(1, 150, "a", 1000)));
        // two members (concatenated gzip files), both intact
        Files.write(
                input.resolve("2-good.jsonl.gz"),
                concat(gzip(events(151, 200, "b", 1000)), gzip(events(201, 260, "b", 1000))));
        // updates of the same keys, later in the log: none of them may reach the table; before the
        // fix, a garbage line with an unknown column stopped the job with SCHEMA_CHANGED on every
        // run
        Flipped damaged = flipped(events(1, 300, "z", 5000), List.of("id", "region", "v"));
        assertThat(damaged.schemaChangingGarbage())
                .as("garbage Java's gzip reader hands out before its CRC check")
                .isNotEmpty();
        Path damagedFile = input.resolve("3-damaged.jsonl.gz");
        Files.write(damagedFile, damaged.gz());

        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of());
        LocalIngest.Summary first =
                LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(first.quarantined).isEqualTo(1);

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= 260; id++) {
            expected.add(id + "," + (id <= 150 ? "a" : "b") + "," + (id % 7));
        }
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items"))))
                .containsExactlyElementsOf(expected);
        String source =
                new org.apache.flink.core.fs.Path(damagedFile.toAbsolutePath().toUri()).toString();
        String row =
                "items|"
                        + source
                        + "|null|1|null|DAMAGED_FILE|"
                        + String.format(
                                "damaged gzip file %s: member 1 (at compressed "
                                        + "byte 0): CRC mismatch (trailer says 0x%08x, the data has 0x%08x); 0 member(s) before it verified; first "
                                        + "untrusted line: 1",
                                source, damaged.trailerCrc(), damaged.dataCrc());
        assertThat(quarantineRows(cat)).containsExactly(row);

        // the next run over the same folder: nothing new, no second quarantine row
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LocalIngest.Options o = KeysCasesITCase.quiet(warehouse);
        o.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        LocalIngest.Summary second = LocalIngest.run(plan, List.of(input), o);
        assertThat(second.nothingToDo).isTrue();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "Nothing new to ingest: all 3 input file(s) were read by an earlier run.");
        assertThat(quarantineRows(cat)).containsExactly(row);
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items"))))
                .containsExactlyElementsOf(expected);

        // the reader count cannot go from more than 1 to 1: such a run is refused, by name
        IngestPlan oneReader =
                IngestPlanner.plan(
                        FlowsFile.parse(
                                flows.replace("file-readers: 2", "file-readers: 1"), "flows.yaml"),
                        List.of());
        assertThatThrownBy(
                        () ->
                                LocalIngest.run(
                                        oneReader,
                                        List.of(input),
                                        KeysCasesITCase.quiet(warehouse)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "file-readers is 1, but the saved state of job 'damaged-gzip' (")
                .hasMessageEndingWith(
                        ") was taken with 2: a job's reader count cannot go from 1 to more or"
                                + " back (Flink cannot restore its Iceberg committers then). Set"
                                + " file-readers back to 2, or re-run with --from-scratch to"
                                + " recreate the tables.");
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items"))))
                .containsExactlyElementsOf(expected);
    }

    /** {@code flow|source|partition|offset|raw|reason|detail} of every quarantine row. */
    private static List<String> quarantineRows(Catalog cat) {
        List<String> rows = new ArrayList<>();
        for (Record r :
                TableRows.read(
                        cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            rows.add(
                    r.getField("flow")
                            + "|"
                            + r.getField("source")
                            + "|"
                            + r.getField("partition")
                            + "|"
                            + r.getField("offset")
                            + "|"
                            + r.getField("raw")
                            + "|"
                            + r.getField("reason")
                            + "|"
                            + r.getField("detail"));
        }
        return rows;
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}

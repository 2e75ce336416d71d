package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every reason code the decoder produces (semantics.md A5), end to end: one bad record per kind in
 * a file among good ones, plus a damaged gzip file. The job keeps running, the good records are
 * applied, and every bad record lands in {@code shop.changeflow_quarantine} with its reason, file
 * and line; under {@code on-invalid-record = fail} the job stops with a clear error instead.
 */
class BadInputITCase {
    @TempDir Path tmp;

    static String flows(String onInvalid) {
        return String.join(
                "\n",
                "name: bad-input",
                "namespace: shop",
                "max-record-bytes: 4096",
                "flows:",
                "  - table: items",
                "    keys: [id]",
                "    schema: 'id INT, region STRING, v INT'",
                "    on-schema-change: quarantine",
                "    on-invalid-record: " + onInvalid);
    }

    static String ev(String op, String after, String source) {
        return "{\"key\":null,\"value\":{\"before\":null,\"after\":" + after + ",\"source\":" + source
                + ",\"op\":\"" + op + "\",\"ts_ms\":1},\"topic\":\"db.shop.items\"}";
    }

    static String src(long lsn) {
        return "{\"connector\":\"postgresql\",\"schema\":\"shop\",\"table\":\"items\",\"lsn\":" + lsn + "}";
    }

    @Test
    void everyKindOfBadRecordIsQuarantinedWithItsReasonAndTheGoodOnesApply() throws Exception {
        List<String> lines = new ArrayList<>();
        lines.add(ev("c", "{\"id\":10,\"region\":\"a\",\"v\":1}", src(100)));                      // 1 good
        lines.add("plain text, not json");                                                         // 2 NOT_JSON
        lines.add("{\"key\":null,\"value\":{\"before\":null,\"after\":{\"id\":1");                 // 3 MALFORMED_JSON
        lines.add(ev("c", "{\"id\":2,\"region\":\"a\",\"v\":\"abc\"}", src(101)));                 // 4 TYPE_MISMATCH
        lines.add(ev("c", "{\"region\":\"a\",\"v\":3}", src(102)));                                 // 5 MISSING_COLUMN
        lines.add(ev("c", "{\"id\":null,\"region\":\"a\",\"v\":4}", src(103)));                    // 6 NULL_KEY
        lines.add(ev("c", "{\"id\":5,\"region\":\"a\",\"v\":5}", "{\"table\":\"items\",\"schema\":\"shop\"}")); // 7 NULL_SEQUENCE
        lines.add(ev("x", "{\"id\":6,\"region\":\"a\",\"v\":6}", src(104)));                       // 8 UNKNOWN_OP
        lines.add(ev("c", "null", src(105)));                                                      // 9 UNKNOWN_OP (null after)
        lines.add("{\"key\":null,\"value\":{\"before\":null,\"after\":{\"id\":7},\"source\":{\"schema\":\"shop\",\"table\":\"other\",\"lsn\":106},\"op\":\"c\"},\"topic\":\"db.shop.other\"}"); // 10 UNKNOWN_TOPIC
        lines.add(ev("c", "{\"id\":8,\"region\":\"a\",\"v\":8,\"w\":1}", src(107)));               // 11 SCHEMA_CHANGED
        lines.add(ev("t", "null", src(108)));                                                      // 12 TRUNCATE_NOT_ENABLED
        char[] big = new char[5000];
        Arrays.fill(big, 'x');
        lines.add(ev("c", "{\"id\":9,\"region\":\"" + new String(big) + "\",\"v\":9}", src(109))); // 13 RECORD_TOO_LARGE
        lines.add(ev("u", "{\"id\":10,\"region\":\"c\"}", src(111)));                             // 14 MISSING_COLUMN (v)
        lines.add(ev("c", "{\"id\":11,\"region\":\"b\",\"v\":2}", src(110)));                      // 15 good
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("bad.jsonl"), lines);

        // a gzip file cut in the middle: the lines before the damage apply, the rest is quarantined
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz)) {
            for (int i = 0; i < 400; i++) {
                out.write((ev("c", "{\"id\":" + (1000 + i) + ",\"region\":\"z\",\"v\":" + i + "}", src(200 + i)) + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
        }
        byte[] whole = gz.toByteArray();
        Files.write(input.resolve("damaged.jsonl.gz"), Arrays.copyOf(whole, whole.length / 2));

        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows("quarantine"), "flows.yaml"), List.of(input.resolve("bad.jsonl")));
        LocalIngest.Summary summary = LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        List<String> quarantine = new ArrayList<>();
        long damagedAt = -1;
        for (Record r : TableRows.read(cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            String source = Path.of(r.getField("source").toString().replaceFirst("^file:", "")).getFileName().toString();
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
            assertThat((java.nio.ByteBuffer) r.getField("raw")).isNotNull();
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
                        "bad.jsonl:13:RECORD_TOO_LARGE:items",
                        "bad.jsonl:14:MISSING_COLUMN:items");
        assertThat(damagedAt).as("line of the damage in damaged.jsonl.gz").isBetween(2L, 400L);
        assertThat(summary.quarantined).isEqualTo(14);

        List<String> expected = new ArrayList<>(List.of("10,a,1", "11,b,2"));
        for (int i = 0; i < damagedAt - 1; i++) {
            expected.add((1000 + i) + ",z," + i);
        }
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "items")))).containsExactlyElementsOf(expected);
    }

    @Test
    void addColumnsOverFilesEvolvesTheTableAndResumes() throws Exception {
        // the same launcher path as over Kafka (KafkaBadInputITCase): stop at the record, add the
        // column, resume from the last checkpoint with the wider row
        String flows = String.join(
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
        Files.write(input.resolve("1.jsonl"), List.of(
                ev("c", "{\"id\":1,\"region\":\"a\",\"v\":1}", src(100)),
                ev("c", "{\"id\":2,\"region\":\"b\",\"v\":2}", src(101))));
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of());
        assertThat(LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse)).addedColumns).isEmpty();

        Files.write(input.resolve("2.jsonl"), List.of(
                ev("c", "{\"id\":3,\"region\":\"c\",\"v\":3,\"n\":30}", src(102)),
                ev("u", "{\"id\":1,\"region\":\"a\",\"v\":10,\"n\":null}", src(103))));
        LocalIngest.Summary second = LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));
        assertThat(second.addedColumns).containsExactly("shop.items: + n BIGINT");
        assertThat(second.quarantined).isZero();
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        org.apache.iceberg.Table items = cat.loadTable(TableIdentifier.of("shop", "items"));
        assertThat(items.schema().findField("n").type()).isEqualTo(org.apache.iceberg.types.Types.LongType.get());
        assertThat(TableRows.toCsvLines(items)).containsExactly("1,a,10,", "2,b,2,", "3,c,3,30");
    }

    @Test
    void onInvalidRecordFailStopsTheJobNamingTheReason() throws Exception {
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("bad.jsonl"), List.of(ev("c", "{\"id\":10,\"region\":\"a\",\"v\":1}", src(100)), "plain text, not json"));
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows("fail"), "flows.yaml"), List.of(input));
        assertThatThrownBy(() -> LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(tmp.resolve("warehouse"))))
                .satisfies(e -> {
                    Throwable root = e;
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    assertThat(root).hasMessageContaining("NOT_JSON").hasMessageContaining("bad.jsonl");
                });
    }
}

package dev.changeflow.sources.changes;

import dev.changeflow.sources.testutil.SharedData;

import org.apache.flink.core.fs.Path;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SchemaSamplerTest {

    @TempDir java.nio.file.Path dir;

    private static String q(String s) {
        return s.replace('\'', '"');
    }

    private static final String ENVELOPE_SCHEMA =
            q(
                    "{'type':'struct','name':'pg.public.items.Envelope','fields':["
                            + "{'type':'struct','optional':true,'name':'pg.public.items.Value','field':'before','fields':[]},"
                            + "{'type':'struct','optional':true,'name':'pg.public.items.Value','field':'after','fields':["
                            + "{'type':'int32','optional':false,'field':'id'},"
                            + "{'type':'int64','optional':true,'field':'big'},"
                            + "{'type':'int16','optional':true,'field':'small'},"
                            + "{'type':'string','optional':true,'field':'name'},"
                            + "{'type':'boolean','optional':true,'field':'flag'},"
                            + "{'type':'float64','optional':true,'field':'ratio'},"
                            + "{'type':'bytes','optional':true,'field':'blob'},"
                            + "{'type':'bytes','optional':true,'name':'org.apache.kafka.connect.data.Decimal','version':1,"
                            + "'parameters':{'scale':'2','connect.decimal.precision':'12'},'field':'price'},"
                            + "{'type':'int32','optional':true,'name':'io.debezium.time.Date','version':1,'field':'day'},"
                            + "{'type':'int64','optional':false,'name':'io.debezium.time.MicroTimestamp','version':1,'field':'at'},"
                            + "{'type':'int64','optional':true,'name':'io.debezium.time.Timestamp','version':1,'field':'at_ms'},"
                            + "{'type':'string','optional':true,'name':'io.debezium.time.ZonedTimestamp','version':1,'field':'zoned'}]},"
                            + "{'type':'struct','optional':false,'field':'source','fields':[]},"
                            + "{'type':'string','optional':false,'field':'op'}]}");

    private java.nio.file.Path write(String name, boolean gzip, String... lines)
            throws IOException {
        java.nio.file.Path f = dir.resolve(name);
        try (OutputStream os =
                gzip ? new GZIPOutputStream(Files.newOutputStream(f)) : Files.newOutputStream(f)) {
            for (String l : lines) {
                os.write((l + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        return f;
    }

    @Test
    void typesFromTheSchemaWrapper() throws IOException {
        String payload =
                q(
                        "{'before':null,'after':{'id':1,'big':2,'small':3,'name':'n','flag':true,'ratio':0.5,'blob':'AQ==',"
                                + "'price':'MDk=','day':19000,'at':1,'at_ms':1,'zoned':'2026-01-01T00:00:00Z'},'source':{'table':'items','schema':'public'},'op':'c'}");
        java.nio.file.Path f =
                write(
                        "items.jsonl.gz",
                        true,
                        q(
                                "{'key':null,'value':{'schema':"
                                        + ENVELOPE_SCHEMA
                                        + ",'payload':"
                                        + payload
                                        + "},'topic':'pg.public.items'}"));
        Map<String, RowType> types =
                SchemaSampler.sample(List.of(f), ChangeRecordFormat.DEBEZIUM_JSON, List.of("items"))
                        .types();
        assertThat(types).containsOnlyKeys("items");
        assertThat(types.get("items"))
                .isEqualTo(
                        SchemaSampler.parseColumns(
                                "id INT NOT NULL, big BIGINT, small SMALLINT, name STRING, flag BOOLEAN, ratio DOUBLE, blob BYTES,"
                                        + " price DECIMAL(12, 2), day DATE, at TIMESTAMP(6) NOT NULL, at_ms TIMESTAMP(3), zoned TIMESTAMP_LTZ(6)"));
    }

    @Test
    void typesInferredFromValuesAcrossRecordsInFirstSeenOrder() throws IOException {
        java.nio.file.Path f =
                write(
                        "mixed.jsonl",
                        false,
                        q(
                                "{'key':null,'value':{'op':'c','after':{'id':1,'amount':1,'note':null,'nested':{'a':1}},'source':{'table':'t1'}},'topic':'x.t1'}"),
                        "not json at all",
                        q("{'key':null,'value':null,'topic':'x.t1'}"),
                        q(
                                "{'key':null,'value':{'op':'c','after':{'id':2,'amount':2.5,'tags':['a'],'nested':{'b':true}},'source':{'table':'t1'}},'topic':'x.t1'}"),
                        q(
                                "{'key':null,'value':{'op':'d','before':{'k':'v'},'after':null,'source':{'table':'t2'}},'topic':'x.t2'}"),
                        q(
                                "{'key':null,'value':{'op':'c','after':{'late':1},'source':{'table':'t1'}},'topic':'x.t1'}"));
        SchemaSampler.Result result =
                SchemaSampler.sampleFlinkPaths(
                        List.of(new Path(dir.toUri())),
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        List.of("t1", "t2", "t3"),
                        SchemaSampler.DEFAULT_MAX_LINES);
        assertThat(result.linesRead()).isEqualTo(6);
        assertThat(result.namespace()).isNull();
        Map<String, RowType> types = result.types();
        assertThat(types).containsOnlyKeys("t1", "t2");
        // sampling stops when every wanted table was seen, so t1's 'late' column (after t2) is not
        // included;
        // t3 is never seen: the cap (all lines) ends the sample
        assertThat(types.get("t1"))
                .isEqualTo(
                        SchemaSampler.parseColumns(
                                "id BIGINT, amount DOUBLE, note STRING, nested ROW<a BIGINT, b BOOLEAN>, tags ARRAY<STRING>, late BIGINT"));
        assertThat(types.get("t2")).isEqualTo(SchemaSampler.parseColumns("k STRING"));
        Map<String, RowType> two =
                SchemaSampler.sample(
                                List.of(f), ChangeRecordFormat.DEBEZIUM_JSON, List.of("t1", "t2"))
                        .types();
        assertThat(two.get("t1"))
                .isEqualTo(
                        SchemaSampler.parseColumns(
                                "id BIGINT, amount DOUBLE, note STRING, nested ROW<a BIGINT, b BOOLEAN>, tags ARRAY<STRING>"));
    }

    @Test
    void plainJsonRowsBelongToTheOnlyWantedTable() throws IOException {
        java.nio.file.Path f =
                write("rows.jsonl", false, q("{'id':1,'name':'a','score':1.5,'ok':false}"));
        assertThat(
                        SchemaSampler.sample(List.of(f), ChangeRecordFormat.JSON, List.of("rows"))
                                .types())
                .containsExactly(
                        Map.entry(
                                "rows",
                                SchemaSampler.parseColumns(
                                        "id BIGINT, name STRING, score DOUBLE, ok BOOLEAN")));
    }

    @Test
    void damagedGzipEndsThatFilesSample() throws IOException {
        String[] lines = new String[40_000];
        Random random = new Random(7);
        for (int i = 0; i < lines.length; i++) {
            String table = i < 20_000 ? "a" : "b";
            lines[i] =
                    q(
                            "{'op':'c','after':{'id':"
                                    + i
                                    + ",'r':"
                                    + random.nextLong()
                                    + "},'source':{'table':'"
                                    + table
                                    + "'}}");
        }
        java.nio.file.Path f = write("d.jsonl.gz", true, lines);
        byte[] bytes = Files.readAllBytes(f);
        Files.write(f, Arrays.copyOf(bytes, bytes.length / 3));
        Map<String, RowType> types =
                SchemaSampler.sample(
                                List.of(f), ChangeRecordFormat.DEBEZIUM_JSON, List.of("a", "b"))
                        .types();
        assertThat(types)
                .containsExactly(Map.entry("a", SchemaSampler.parseColumns("id BIGINT, r BIGINT")));
    }

    @Test
    void realPgbenchCapture() throws IOException {
        java.nio.file.Path capture = SharedData.pgbenchCapture();
        SchemaSampler.Result result =
                SchemaSampler.sample(
                        List.of(capture),
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        List.of(
                                "pgbench_accounts",
                                "pgbench_branches",
                                "pgbench_tellers",
                                "pgbench_history"));
        assertThat(result.namespace()).isEqualTo("public");
        Map<String, RowType> types = result.types();
        assertThat(types)
                .containsExactly(
                        Map.entry(
                                "pgbench_accounts",
                                SchemaSampler.parseColumns(
                                        "aid BIGINT, bid BIGINT, abalance BIGINT, filler STRING")),
                        Map.entry(
                                "pgbench_branches",
                                SchemaSampler.parseColumns(
                                        "bid BIGINT, bbalance BIGINT, filler STRING")),
                        Map.entry(
                                "pgbench_tellers",
                                SchemaSampler.parseColumns(
                                        "tid BIGINT, bid BIGINT, tbalance BIGINT, filler STRING")),
                        Map.entry(
                                "pgbench_history",
                                SchemaSampler.parseColumns(
                                        "tid BIGINT, bid BIGINT, aid BIGINT, delta BIGINT, mtime BIGINT, filler STRING")));
    }

    @Test
    void namespaceOnlyStopsAtTheFirstDebeziumRecord() throws IOException {
        java.nio.file.Path f =
                write(
                        "ns.jsonl",
                        false,
                        q(
                                "{'op':'c','after':{'id':1},'source':{'db':'shop','schema':'sales','table':'a'}}"),
                        q(
                                "{'op':'c','after':{'id':2},'source':{'db':'shop','schema':'other','table':'a'}}"));
        SchemaSampler.Result r =
                SchemaSampler.sample(List.of(f), ChangeRecordFormat.DEBEZIUM_JSON, List.of());
        assertThat(r.namespace()).isEqualTo("sales");
        assertThat(r.types()).isEmpty();
        assertThat(r.linesRead()).isEqualTo(1);
    }

    /**
     * Lines of other tables are passed over unparsed once the namespace is known; a line that names
     * a wanted table only through a {@code \}{@code u} escape, or only in its topic, is still
     * sampled.
     */
    @Test
    void linesOfOtherTablesArePassedOverWithTheSameSample() throws IOException {
        String[] lines = new String[1_005];
        int n = 0;
        lines[n++] =
                q(
                        "{'key':null,'value':{'op':'r','after':{'id':1},'source':{'connector':'mysql','db':'shop','table':'t1'}},'topic':'s.shop.t1'}");
        for (int i = 0; i < 1_000; i++) {
            lines[n++] =
                    q(
                            "{'key':null,'value':{'op':'r','after':{'x':"
                                    + i
                                    + "},'source':{'connector':'mysql','db':'shop','table':'t3','seq':'[null,\\'1\\']'}},'topic':'s.shop.t3'}");
        }
        lines[n++] =
                q(
                        "{'key':null,'value':{'op':'r','after':{'id':2.5,'y':true},'source':{'connector':'mysql','db':'shop','table':'t1'}},'topic':'s.shop.t1'}");
        // t2 spelt with an escape, in schema 'shop': routed to shop.t2
        lines[n++] =
                q(
                        "{'key':null,'value':{'op':'r','after':{'a':1},'source':{'connector':'\\u0070ostgresql','schema':'shop','table':'\\u00742'}},'topic':'s.shop.t3'}");
        // no table: routed by the topic's last segment
        lines[n++] =
                q(
                        "{'key':null,'value':{'op':'r','after':{'b':'v'},'source':{'connector':'oracle','db':'shop'}},'topic':'s.shop.t4'}");
        lines[n++] =
                q(
                        "{'key':null,'value':{'op':'r','after':{'z':1},'source':{'connector':'mysql','db':'shop','table':'t1'}},'topic':'s.shop.t1'}");
        java.nio.file.Path f = write("many.jsonl.gz", true, lines);
        SchemaSampler.Result r =
                SchemaSampler.sample(
                        List.of(f),
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        List.of("t1", "shop.t2", "t4"));
        assertThat(r.linesRead()).isEqualTo(1_004);
        assertThat(r.namespace()).isEqualTo("shop");
        assertThat(r.types())
                .containsExactly(
                        Map.entry("t1", SchemaSampler.parseColumns("id DOUBLE, y BOOLEAN")),
                        Map.entry("shop.t2", SchemaSampler.parseColumns("a BIGINT")),
                        Map.entry("t4", SchemaSampler.parseColumns("b STRING")));
        assertThat(r.connectors())
                .containsExactly(
                        Map.entry("t1", "mysql"),
                        Map.entry("shop.t2", "postgresql"),
                        Map.entry("t4", "oracle"));
    }

    /**
     * The sampler splits lines as {@link java.io.BufferedReader#readLine()} does ({@code \n},
     * {@code \r}, {@code \r\n}, a last line without terminator) and sees each line's bytes as
     * {@code readLine().getBytes(UTF_8)} gave them (malformed UTF-8 replaced), whatever the
     * stream's read sizes and however long the lines.
     */
    @Test
    void linesAreTheReadersLines() throws IOException {
        Random random = new Random(11);
        byte[] alphabet = {
            'a',
            '{',
            '"',
            '\n',
            '\r',
            (byte) 0xC3,
            (byte) 0xA9,
            (byte) 0xE2,
            (byte) 0x82,
            (byte) 0xAC,
            (byte) 0xF0,
            (byte) 0x9F,
            (byte) 0x98,
            (byte) 0x80,
            (byte) 0xFF,
            (byte) 0x80
        };
        for (int round = 0; round < 200; round++) {
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            int len = round == 0 ? 700_000 : random.nextInt(3_000);
            for (int i = 0; i < len; i++) {
                bytes.write(
                        round == 0 && i < 600_000
                                ? 'x'
                                : alphabet[random.nextInt(alphabet.length)]);
            }
            byte[] content = bytes.toByteArray();
            List<byte[]> expected = new java.util.ArrayList<>();
            try (java.io.BufferedReader r =
                    new java.io.BufferedReader(
                            new java.io.InputStreamReader(
                                    new java.io.ByteArrayInputStream(content),
                                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    expected.add(line.getBytes(StandardCharsets.UTF_8));
                }
            }
            List<byte[]> actual = new java.util.ArrayList<>();
            Random chunks = new Random(round);
            java.io.InputStream in =
                    new java.io.ByteArrayInputStream(content) {
                        @Override
                        public synchronized int read(byte[] b, int off, int n) {
                            return super.read(b, off, Math.min(n, 1 + chunks.nextInt(9_000)));
                        }
                    };
            try (SchemaSampler.SampleLines lines = new SchemaSampler.SampleLines(in)) {
                while (lines.next()) {
                    actual.add(lines.line());
                }
            }
            assertThat(actual).as("round %d", round).hasSameSizeAs(expected);
            for (int i = 0; i < expected.size(); i++) {
                assertThat(actual.get(i))
                        .as("round %d line %d", round, i)
                        .isEqualTo(expected.get(i));
            }
        }
    }

    /**
     * {@link SchemaSampler.LiteralNames#mayName} finds a segment wherever a naive search does
     * (segments of different lengths sharing bytes, at every offset) and every {@code \}{@code u}.
     */
    @Test
    void literalNamesFindEverySegment() {
        assertThat(SchemaSampler.LiteralNames.of(List.of("only"))).isNull();
        assertThat(SchemaSampler.LiteralNames.of(List.of("a", "x.y/z"))).isNull();
        assertThat(SchemaSampler.LiteralNames.of(List.of("a", "b."))).isNull();
        List<String> names = List.of("public.abca", "bcaab", "s.t.cabbac");
        SchemaSampler.LiteralNames literal = SchemaSampler.LiteralNames.of(names);
        byte[][] needles = {
            "abca".getBytes(StandardCharsets.UTF_8),
            "bcaab".getBytes(StandardCharsets.UTF_8),
            "cabbac".getBytes(StandardCharsets.UTF_8),
            "\\u".getBytes(StandardCharsets.UTF_8)
        };
        byte[] alphabet = {'a', 'b', 'c', 'a', 'c', '\\', 'u', '"'};
        Random random = new Random(3);
        int found = 0;
        for (int round = 0; round < 20_000; round++) {
            byte[] line = new byte[random.nextInt(40)];
            for (int i = 0; i < line.length; i++) {
                line[i] = alphabet[random.nextInt(alphabet.length)];
            }
            int start = line.length == 0 ? 0 : random.nextInt(line.length);
            boolean naive = false;
            for (byte[] n : needles) {
                for (int i = start; i + n.length <= line.length && !naive; i++) {
                    naive = Arrays.equals(line, i, i + n.length, n, 0, n.length);
                }
            }
            found += naive ? 1 : 0;
            assertThat(literal.mayName(line, start, line.length))
                    .as("%s from %d", new String(line, StandardCharsets.UTF_8), start)
                    .isEqualTo(naive);
        }
        assertThat(found).isBetween(1_000, 19_000);
    }

    @Test
    void parseColumns() {
        RowType t =
                SchemaSampler.parseColumns(
                        "tid INT, bid INT NOT NULL, aid INT, delta INT, mtime TIMESTAMP(6), filler STRING,"
                                + " price DECIMAL(10, 2), `select` MAP<STRING, ARRAY<INT>>, r ROW<a INT, b STRING>");
        assertThat(t.toString())
                .isEqualTo(
                        "ROW<`tid` INT, `bid` INT NOT NULL, `aid` INT, `delta` INT, `mtime` TIMESTAMP(6), "
                                + "`filler` STRING, `price` DECIMAL(10, 2), `select` MAP<STRING, ARRAY<INT>>, `r` ROW<`a` INT, `b` STRING>>");
        assertThatThrownBy(() -> SchemaSampler.parseColumns("a INT, b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("column 'b' has no type in column list 'a INT, b'");
        assertThatThrownBy(() -> SchemaSampler.parseColumns("a INT, a BIGINT"))
                .hasMessage("duplicate column 'a' in column list 'a INT, a BIGINT'");
        assertThatThrownBy(() -> SchemaSampler.parseColumns("a NOPE"))
                .hasMessageStartingWith("column 'a': cannot parse type 'NOPE'");
    }
}

package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The line reader and the damage-tolerant bulk format, without a cluster. */
class ChangeLineFormatTest {

    @TempDir java.nio.file.Path dir;

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static List<SourceLine> readAll(ChangeLineFormat.LineReader r) throws IOException {
        List<SourceLine> out = new ArrayList<>();
        SourceLine l;
        while ((l = r.read()) != null) {
            out.add(l);
        }
        return out;
    }

    @Test
    void readsLfAndCrlfLinesSkipsEmptyLinesAndKeepsALastLineWithoutNewline() throws IOException {
        byte[] input = b("{\"a\":1}\r\n\n{\"a\":2}\n\r\n{\"a\":3}");
        List<SourceLine> lines =
                readAll(new ChangeLineFormat.LineReader(new ByteArrayInputStream(input), 1000));
        assertThat(lines)
                .containsExactly(
                        new SourceLine(null, 1, b("{\"a\":1}"), 7, null, false),
                        new SourceLine(null, 3, b("{\"a\":2}"), 7, null, false),
                        new SourceLine(null, 5, b("{\"a\":3}"), 7, null, false),
                        SourceLine.endOfFile(null, 5));
    }

    @Test
    void sourceLineIsAFlinkPojo() throws IOException {
        TypeInformation<SourceLine> info = TypeInformation.of(SourceLine.class);
        assertThat(info).isInstanceOf(PojoTypeInfo.class);
        TypeSerializer<SourceLine> ser = info.createSerializer(new SerializerConfigImpl());
        for (SourceLine l :
                List.of(
                        SourceLine.data("f", 3, b("{}")),
                        SourceLine.damage("f", 4, "d", null),
                        SourceLine.damage("f", 1, QuarantineReason.DAMAGED_FILE, "d", b("{")),
                        SourceLine.endOfFile("f", 3))) {
            DataOutputSerializer out = new DataOutputSerializer(64);
            ser.serialize(l, out);
            assertThat(ser.deserialize(new DataInputDeserializer(out.getCopyOfBuffer())))
                    .isEqualTo(l);
        }
    }

    @Test
    void emptyInputIsJustTheEndOfFileMarker() throws IOException {
        assertThat(
                        readAll(
                                new ChangeLineFormat.LineReader(
                                        new ByteArrayInputStream(new byte[0]), 10)))
                .containsExactly(SourceLine.endOfFile(null, 0));
    }

    @Test
    void oversizedLineIsCutAndFlagged() throws IOException {
        byte[] big = new byte[200_000];
        Arrays.fill(big, (byte) 'x');
        byte[] input = new byte[big.length + 5];
        System.arraycopy(big, 0, input, 0, big.length);
        System.arraycopy(b("\r\nok\n"), 0, input, big.length, 5);
        List<SourceLine> lines =
                readAll(new ChangeLineFormat.LineReader(new ByteArrayInputStream(input), 100_000));
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0).oversized()).isTrue();
        assertThat(lines.get(0).getLength()).isEqualTo(200_000);
        assertThat(lines.get(0).getBytes())
                .isEqualTo(Arrays.copyOf(big, ChangeLineFormat.OVERSIZED_KEPT_BYTES));
        assertThat(lines.get(1)).isEqualTo(SourceLine.data(null, 2, b("ok")));
        assertThat(lines.get(2)).isEqualTo(SourceLine.endOfFile(null, 2));
    }

    @Test
    void damagedGzipYieldsItsIntactLinesThenDamageThenEndOfFile() throws IOException {
        GzipFixtures.Damaged d = GzipFixtures.damaged(dir.resolve("d.jsonl.gz"), 3000);
        List<SourceLine> lines =
                readAll(
                        new ChangeLineFormat.LineReader(
                                new GZIPInputStream(Files.newInputStream(d.file)), 1 << 20));
        assertThat(lines).containsExactlyElementsOf(d.expected(null));
    }

    private static FileSourceSplit split(java.nio.file.Path f, CheckpointedPosition position)
            throws IOException {
        long size = Files.size(f);
        return new FileSourceSplit(
                "s", new Path(f.toUri()), 0, size, 0, size, new String[0], position);
    }

    static List<SourceLine> readBulk(BulkFormat.Reader<SourceLine> reader) throws IOException {
        List<SourceLine> out = new ArrayList<>();
        BulkFormat.RecordIterator<SourceLine> batch;
        while ((batch = reader.readBatch()) != null) {
            RecordAndPosition<SourceLine> r;
            while ((r = batch.next()) != null) {
                out.add(r.getRecord());
            }
            batch.releaseBatch();
        }
        reader.close();
        return out;
    }

    @Test
    void bulkFormatSetsTheSourceAndRestoresBySkippingRecordsIncludingMarkers() throws IOException {
        GzipFixtures.Damaged d = GzipFixtures.damaged(dir.resolve("d.jsonl.gz"), 3000);
        ChangeLineBulkFormat format = new ChangeLineBulkFormat(1 << 20);
        String source = new Path(d.file.toUri()).toString();
        List<SourceLine> all =
                readBulk(format.createReader(new Configuration(), split(d.file, null)));
        assertThat(all).containsExactlyElementsOf(d.expected(source));
        for (int skip : new int[] {0, 1, all.size() - 2, all.size() - 1, all.size()}) {
            List<SourceLine> rest =
                    readBulk(
                            format.restoreReader(
                                    new Configuration(),
                                    split(
                                            d.file,
                                            new CheckpointedPosition(
                                                    CheckpointedPosition.NO_OFFSET, skip))));
            assertThat(rest)
                    .as("restore after %d records", skip)
                    .containsExactlyElementsOf(all.subList(skip, all.size()));
        }
    }

    @Test
    void bulkFormatTurnsAHeaderDamagedGzipAndAnEmptyFileIntoMarkers() throws IOException {
        ChangeLineBulkFormat format = new ChangeLineBulkFormat(1000);
        java.nio.file.Path notGzip = dir.resolve("plain-text.gz");
        Files.write(notGzip, b("this is not gzip\n"));
        String source = new Path(notGzip.toUri()).toString();
        List<SourceLine> markers =
                readBulk(format.createReader(new Configuration(), split(notGzip, null)));
        assertThat(markers)
                .containsExactly(
                        SourceLine.damage(
                                source,
                                1,
                                QuarantineReason.DAMAGED_FILE,
                                "damaged gzip file "
                                        + source
                                        + ": member 1 (at compressed byte 0): not in gzip format: starts with 0x74, not the gzip magic 0x1f 0x8b;"
                                        + " 0 member(s) before it verified; first untrusted line: 1",
                                null),
                        SourceLine.endOfFile(source, 0));
        assertThat(
                        readBulk(
                                format.restoreReader(
                                        new Configuration(),
                                        split(
                                                notGzip,
                                                new CheckpointedPosition(
                                                        CheckpointedPosition.NO_OFFSET, 1)))))
                .containsExactly(SourceLine.endOfFile(source, 0));

        java.nio.file.Path empty = dir.resolve("empty.jsonl");
        Files.write(empty, new byte[0]);
        assertThat(readBulk(format.createReader(new Configuration(), split(empty, null))))
                .containsExactly(SourceLine.endOfFile(new Path(empty.toUri()).toString(), 0));
    }

    private static final Configuration CONF = new Configuration();

    private String write(String name, byte[] content) throws IOException {
        Files.write(dir.resolve(name), content);
        return new Path(dir.resolve(name).toUri()).toString();
    }

    private List<SourceLine> read(String name) throws IOException {
        return readBulk(
                new ChangeLineBulkFormat(1 << 20)
                        .createReader(CONF, split(dir.resolve(name), null)));
    }

    /** Restores after every number of records emitted and checks the rest is the same. */
    private void assertRestoresEverywhere(String name, List<SourceLine> all) throws IOException {
        for (int skip = 0; skip <= all.size(); skip++) {
            List<SourceLine> rest =
                    readBulk(
                            new ChangeLineBulkFormat(1 << 20)
                                    .restoreReader(
                                            CONF,
                                            split(
                                                    dir.resolve(name),
                                                    new CheckpointedPosition(
                                                            CheckpointedPosition.NO_OFFSET,
                                                            skip))));
            assertThat(rest)
                    .as("restore after %d records", skip)
                    .containsExactlyElementsOf(all.subList(skip, all.size()));
        }
    }

    /**
     * The data lines of {@code text} (LF-terminated, no empty lines), numbered from {@code first}.
     */
    private static List<SourceLine> dataLines(String source, String text, int first) {
        List<SourceLine> out = new ArrayList<>();
        for (String l : text.split("\n")) {
            out.add(SourceLine.data(source, first++, b(l)));
        }
        return out;
    }

    @Test
    void damagedSingleMemberGzipEmitsNoLineJustOneDamagedFileMarkerAtLine1() throws IOException {
        GzipFixtures.Corrupted bad = GzipFixtures.corrupted(GzipFixtures.lines(1, 300));
        // without the verification, Java's gzip reader hands out garbage lines before its CRC check
        // fails
        assertThat(bad.garbage).isNotEmpty();
        String source = write("damaged.jsonl.gz", bad.gz);
        List<SourceLine> all = read("damaged.jsonl.gz");
        assertThat(all)
                .containsExactly(
                        SourceLine.damage(
                                source,
                                1,
                                QuarantineReason.DAMAGED_FILE,
                                String.format(
                                        "damaged gzip file %s: member 1 (at "
                                                + "compressed byte 0): CRC mismatch (trailer says 0x%08x, the data has 0x%08x); 0 member(s) before it "
                                                + "verified; first untrusted line: 1",
                                        source, bad.trailerCrc, bad.dataCrc),
                                null),
                        SourceLine.endOfFile(source, 0));
        assertRestoresEverywhere("damaged.jsonl.gz", all);
    }

    @Test
    void damagedSecondMemberKeepsTheLinesOfTheFirstAndQuarantinesFromTheFirstLineOfTheSecond()
            throws IOException {
        String first = GzipFixtures.lines(1, 100);
        byte[] member1 = GzipFixtures.gzip(first);
        GzipFixtures.Corrupted member2 = GzipFixtures.corrupted(GzipFixtures.lines(101, 300));
        String source = write("two-members.jsonl.gz", GzipFixtures.concat(member1, member2.gz));
        List<SourceLine> expected = dataLines(source, first, 1);
        expected.add(
                SourceLine.damage(
                        source,
                        101,
                        QuarantineReason.DAMAGED_FILE,
                        String.format(
                                "damaged gzip file %s: member 2 "
                                        + "(at compressed byte %d): CRC mismatch (trailer says 0x%08x, the data has 0x%08x); 1 member(s) before it "
                                        + "verified; first untrusted line: 101",
                                source, member1.length, member2.trailerCrc, member2.dataCrc),
                        null));
        expected.add(SourceLine.endOfFile(source, 100));
        List<SourceLine> all = read("two-members.jsonl.gz");
        assertThat(all).containsExactlyElementsOf(expected);
        assertRestoresEverywhere("two-members.jsonl.gz", all);
    }

    @Test
    void aLineAcrossTheLastVerifiedMemberBoundaryIsTheFirstUntrustedLineWithItsVerifiedBytes()
            throws IOException {
        String first = GzipFixtures.lines(1, 10);
        byte[] member1 = GzipFixtures.gzip(first + "{\"partial\":");
        GzipFixtures.Corrupted member2 =
                GzipFixtures.corrupted("1}\n" + GzipFixtures.lines(12, 200));
        String source = write("split-line.jsonl.gz", GzipFixtures.concat(member1, member2.gz));
        List<SourceLine> expected = dataLines(source, first, 1);
        expected.add(
                SourceLine.damage(
                        source,
                        11,
                        QuarantineReason.DAMAGED_FILE,
                        String.format(
                                "damaged gzip file %s: member 2 "
                                        + "(at compressed byte %d): CRC mismatch (trailer says 0x%08x, the data has 0x%08x); 1 member(s) before it "
                                        + "verified; first untrusted line: 11 (its first 11 bytes lie in verified members)",
                                source, member1.length, member2.trailerCrc, member2.dataCrc),
                        b("{\"partial\":")));
        expected.add(SourceLine.endOfFile(source, 10));
        assertThat(read("split-line.jsonl.gz")).containsExactlyElementsOf(expected);
    }

    @Test
    void damagedHeaderOfALaterMemberOrTrailingGarbageQuarantinesFromTheEndOfTheVerifiedMembers()
            throws IOException {
        String first = GzipFixtures.lines(1, 20);
        byte[] member1 = GzipFixtures.gzip(first);
        byte[] member2 = GzipFixtures.gzip(GzipFixtures.lines(21, 40));
        member2[2] = 9; // compression method
        // Java's gzip reader takes a broken second member for the end of the file and drops it
        // silently
        assertThat(
                        new GZIPInputStream(
                                        new ByteArrayInputStream(
                                                GzipFixtures.concat(member1, member2)))
                                .readAllBytes())
                .isEqualTo(b(first));
        String source = write("bad-second-header.jsonl.gz", GzipFixtures.concat(member1, member2));
        List<SourceLine> expected = dataLines(source, first, 1);
        expected.add(
                SourceLine.damage(
                        source,
                        21,
                        QuarantineReason.DAMAGED_FILE,
                        "damaged gzip file "
                                + source
                                + ": member 2 (at "
                                + "compressed byte "
                                + member1.length
                                + "): compression method 9 in the header, not 8 (deflate); 1 member(s) "
                                + "before it verified; first untrusted line: 21",
                        null));
        expected.add(SourceLine.endOfFile(source, 20));
        assertThat(read("bad-second-header.jsonl.gz")).containsExactlyElementsOf(expected);
    }

    @Test
    void goodGzipFilesReadAsBeforeSingleMultiMemberAndZeroPadded() throws IOException {
        String a = GzipFixtures.lines(1, 3000);
        String b = GzipFixtures.lines(3001, 3010);
        String single = write("single.jsonl.gz", GzipFixtures.gzip(a));
        assertThat(read("single.jsonl.gz"))
                .containsExactlyElementsOf(withEndOfFile(dataLines(single, a, 1), single, 3000));
        String multi =
                write(
                        "multi.jsonl.gz",
                        GzipFixtures.concat(
                                GzipFixtures.gzip(a), GzipFixtures.gzip(b), new byte[512]));
        assertThat(read("multi.jsonl.gz"))
                .containsExactlyElementsOf(withEndOfFile(dataLines(multi, a + b, 1), multi, 3010));
    }

    private static List<SourceLine> withEndOfFile(
            List<SourceLine> lines, String source, long count) {
        lines.add(SourceLine.endOfFile(source, count));
        return lines;
    }

    @Test
    void gzipCutInsideItsFirstHeaderStaysTruncatedAtItsStart() throws IOException {
        byte[] cut = Arrays.copyOf(GzipFixtures.gzip(GzipFixtures.lines(1, 10)), 6);
        String source = write("cut-header.jsonl.gz", cut);
        String javaSays;
        try {
            new GZIPInputStream(new ByteArrayInputStream(cut));
            throw new AssertionError("a cut header should fail");
        } catch (EOFException e) {
            javaSays = e.toString();
        }
        assertThat(read("cut-header.jsonl.gz"))
                .containsExactly(
                        SourceLine.damage(
                                source,
                                1,
                                "compressed stream damaged at its start: " + javaSays,
                                null),
                        SourceLine.endOfFile(source, 0));
    }

    @Test
    void gzipCutInsideTheHeaderOfALaterMemberIsTruncatedAfterTheVerifiedMembers()
            throws IOException {
        String first = GzipFixtures.lines(1, 30);
        byte[] member1 = GzipFixtures.gzip(first);
        String source =
                write(
                        "cut-second-header.jsonl.gz",
                        GzipFixtures.concat(
                                member1,
                                Arrays.copyOf(GzipFixtures.gzip(GzipFixtures.lines(31, 40)), 4)));
        List<SourceLine> expected = dataLines(source, first, 1);
        expected.add(
                SourceLine.damage(
                        source,
                        31,
                        QuarantineReason.TRUNCATED_FILE,
                        "gzip file "
                                + source
                                + " cut short: member 2 "
                                + "(at compressed byte "
                                + member1.length
                                + "): the file ends inside its header; 1 member(s) before it verified;"
                                + " first untrusted line: 31",
                        null));
        expected.add(SourceLine.endOfFile(source, 30));
        assertThat(read("cut-second-header.jsonl.gz")).containsExactlyElementsOf(expected);
    }
}

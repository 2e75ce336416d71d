package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
        List<SourceLine> lines = readAll(new ChangeLineFormat.LineReader(new ByteArrayInputStream(input), 1000));
        assertThat(lines).containsExactly(
                new SourceLine(null, 1, b("{\"a\":1}"), 7, null, false),
                new SourceLine(null, 3, b("{\"a\":2}"), 7, null, false),
                new SourceLine(null, 5, b("{\"a\":3}"), 7, null, false),
                SourceLine.endOfFile(null, 5));
    }

    @Test
    void sourceLineIsAFlinkPojo() throws IOException {
        org.apache.flink.api.common.typeinfo.TypeInformation<SourceLine> info =
                org.apache.flink.api.common.typeinfo.TypeInformation.of(SourceLine.class);
        assertThat(info).isInstanceOf(org.apache.flink.api.java.typeutils.PojoTypeInfo.class);
        org.apache.flink.api.common.typeutils.TypeSerializer<SourceLine> ser =
                info.createSerializer(new org.apache.flink.api.common.serialization.SerializerConfigImpl());
        for (SourceLine l : List.of(SourceLine.data("f", 3, b("{}")), SourceLine.damage("f", 4, "d", null),
                SourceLine.damage("f", 1, QuarantineReason.DAMAGED_FILE, "d", b("{")), SourceLine.endOfFile("f", 3))) {
            org.apache.flink.core.memory.DataOutputSerializer out = new org.apache.flink.core.memory.DataOutputSerializer(64);
            ser.serialize(l, out);
            assertThat(ser.deserialize(new org.apache.flink.core.memory.DataInputDeserializer(out.getCopyOfBuffer()))).isEqualTo(l);
        }
    }

    @Test
    void emptyInputIsJustTheEndOfFileMarker() throws IOException {
        assertThat(readAll(new ChangeLineFormat.LineReader(new ByteArrayInputStream(new byte[0]), 10)))
                .containsExactly(SourceLine.endOfFile(null, 0));
    }

    @Test
    void oversizedLineIsCutAndFlagged() throws IOException {
        byte[] big = new byte[200_000];
        Arrays.fill(big, (byte) 'x');
        byte[] input = new byte[big.length + 5];
        System.arraycopy(big, 0, input, 0, big.length);
        System.arraycopy(b("\r\nok\n"), 0, input, big.length, 5);
        List<SourceLine> lines = readAll(new ChangeLineFormat.LineReader(new ByteArrayInputStream(input), 100_000));
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0).oversized()).isTrue();
        assertThat(lines.get(0).getLength()).isEqualTo(200_000);
        assertThat(lines.get(0).getBytes()).isEqualTo(Arrays.copyOf(big, ChangeLineFormat.OVERSIZED_KEPT_BYTES));
        assertThat(lines.get(1)).isEqualTo(SourceLine.data(null, 2, b("ok")));
        assertThat(lines.get(2)).isEqualTo(SourceLine.endOfFile(null, 2));
    }

    @Test
    void damagedGzipYieldsItsIntactLinesThenDamageThenEndOfFile() throws IOException {
        GzipFixtures.Damaged d = GzipFixtures.damaged(dir.resolve("d.jsonl.gz"), 3000);
        List<SourceLine> lines = readAll(new ChangeLineFormat.LineReader(
                new java.util.zip.GZIPInputStream(Files.newInputStream(d.file)), 1 << 20));
        assertThat(lines).containsExactlyElementsOf(d.expected(null));
    }

    private static FileSourceSplit split(java.nio.file.Path f, CheckpointedPosition position) throws IOException {
        long size = Files.size(f);
        return new FileSourceSplit("s", new Path(f.toUri()), 0, size, 0, size, new String[0], position);
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
        List<SourceLine> all = readBulk(format.createReader(new Configuration(), split(d.file, null)));
        assertThat(all).containsExactlyElementsOf(d.expected(source));
        for (int skip : new int[] {0, 1, all.size() - 2, all.size() - 1, all.size()}) {
            List<SourceLine> rest = readBulk(format.restoreReader(new Configuration(),
                    split(d.file, new CheckpointedPosition(CheckpointedPosition.NO_OFFSET, skip))));
            assertThat(rest).as("restore after %d records", skip).containsExactlyElementsOf(all.subList(skip, all.size()));
        }
    }

    @Test
    void bulkFormatTurnsAHeaderDamagedGzipAndAnEmptyFileIntoMarkers() throws IOException {
        ChangeLineBulkFormat format = new ChangeLineBulkFormat(1000);
        java.nio.file.Path notGzip = dir.resolve("plain-text.gz");
        Files.write(notGzip, b("this is not gzip\n"));
        String source = new Path(notGzip.toUri()).toString();
        List<SourceLine> markers = readBulk(format.createReader(new Configuration(), split(notGzip, null)));
        assertThat(markers).containsExactly(
                SourceLine.damage(source, 1, "compressed stream damaged at its start: java.util.zip.ZipException: Not in GZIP format", null),
                SourceLine.endOfFile(source, 0));
        assertThat(readBulk(format.restoreReader(new Configuration(),
                split(notGzip, new CheckpointedPosition(CheckpointedPosition.NO_OFFSET, 1)))))
                .containsExactly(SourceLine.endOfFile(source, 0));

        java.nio.file.Path empty = dir.resolve("empty.jsonl");
        Files.write(empty, new byte[0]);
        assertThat(readBulk(format.createReader(new Configuration(), split(empty, null))))
                .containsExactly(SourceLine.endOfFile(new Path(empty.toUri()).toString(), 0));
    }
}

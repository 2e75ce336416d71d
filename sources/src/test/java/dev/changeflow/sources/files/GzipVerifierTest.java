package dev.changeflow.sources.files;

import dev.changeflow.sources.files.GzipVerifier.Result;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.GZIPInputStream;

import static dev.changeflow.sources.files.GzipFixtures.concat;
import static dev.changeflow.sources.files.GzipFixtures.gzip;
import static dev.changeflow.sources.files.GzipFixtures.lines;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link GzipVerifier} over intact, cut and damaged gzip streams. */
class GzipVerifierTest {

    private static Result verify(byte[] gz) throws IOException {
        return GzipVerifier.verify(new ByteArrayInputStream(gz));
    }

    private static String fields(Result r) {
        return r.outcome
                + " "
                + r.verifiedMembers
                + " "
                + r.verifiedBytes
                + " "
                + r.inHeader
                + " "
                + r.detail;
    }

    private static int size(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void intactSingleAndMultiMemberStreamsVerifyWholeIncludingZeroPaddingAndEmptyMembers()
            throws IOException {
        String a = lines(1, 3000);
        String b = lines(3001, 3100);
        assertThat(fields(verify(gzip(a)))).isEqualTo("INTACT 1 " + size(a) + " false null");
        // bigger than one buffer on both sides, an empty member in between, zero padding after
        assertThat(size(a)).isGreaterThan(GzipVerifier.BUFFER_BYTES);
        byte[] multi = concat(gzip(a), gzip(""), gzip(b), new byte[1000]);
        assertThat(fields(verify(multi)))
                .isEqualTo("INTACT 3 " + (size(a) + size(b)) + " false null");
    }

    @Test
    void headerWithExtraNameCommentAndHeaderCrcVerifies() throws IOException {
        byte[] plain = gzip("{\"a\":1}\n");
        byte[] header = fullHeader();
        CRC32 crc = new CRC32();
        crc.update(header);
        int crc16 = (int) crc.getValue() & 0xffff;
        byte[] gz = withHeader(plain, header, crc16);
        // Java's reader agrees that this is a valid member
        assertThat(new GZIPInputStream(new ByteArrayInputStream(gz)).readAllBytes())
                .isEqualTo("{\"a\":1}\n".getBytes(StandardCharsets.UTF_8));
        assertThat(fields(verify(gz))).isEqualTo("INTACT 1 8 false null");
        assertThat(fields(verify(concat(plain, withHeader(plain, header, crc16 ^ 1)))))
                .isEqualTo(
                        String.format(
                                "DAMAGED 1 8 false member 2 (at compressed byte %d): header CRC mismatch (header says 0x%04x, the header has 0x%04x)",
                                plain.length, crc16 ^ 1, crc16));
    }

    /** A member header with FEXTRA, FNAME, FCOMMENT and FHCRC set, without its CRC16. */
    private static byte[] fullHeader() {
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        h.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, 2 | 4 | 8 | 16, 1, 2, 3, 4, 0, 3});
        h.writeBytes(new byte[] {3, 0, 'x', 'y', 'z'}); // XLEN 3 + extra
        h.writeBytes("name.jsonl\0comment\0".getBytes(StandardCharsets.ISO_8859_1));
        return h.toByteArray();
    }

    /** {@code plain}'s member (10-byte header) with {@code header} and {@code crc16} instead. */
    private static byte[] withHeader(byte[] plain, byte[] header, int crc16) {
        ByteArrayOutputStream m = new ByteArrayOutputStream();
        m.writeBytes(header);
        m.write(crc16 & 0xff);
        m.write(crc16 >>> 8);
        m.write(plain, 10, plain.length - 10);
        return m.toByteArray();
    }

    @Test
    void flippedDeflateByteIsACrcMismatchOfItsMember() throws IOException {
        String a = lines(1, 100);
        String b = lines(101, 300);
        GzipFixtures.Corrupted bad = GzipFixtures.corrupted(b);
        byte[] first = gzip(a);
        assertThat(fields(verify(concat(first, bad.gz))))
                .isEqualTo(
                        String.format(
                                "DAMAGED 1 %d false member 2 (at compressed byte %d): CRC mismatch (trailer says 0x%08x, the data has 0x%08x)",
                                size(a), first.length, bad.trailerCrc, bad.dataCrc));
        assertThat(fields(verify(bad.gz)))
                .startsWith("DAMAGED 0 0 false member 1 (at compressed byte 0): CRC mismatch");
    }

    @Test
    void sizeMismatchDataErrorsAndBadHeadersAreDamage() throws IOException {
        byte[] gz = gzip(lines(1, 50));
        int n = size(lines(1, 50));

        byte[] wrongSize = gz.clone();
        wrongSize[gz.length - 4] ^= 1;
        assertThat(fields(verify(wrongSize)))
                .isEqualTo(
                        "DAMAGED 0 0 false member 1 (at compressed byte 0): size mismatch "
                                + "(trailer says "
                                + (n ^ 1)
                                + " bytes mod 2^32, the data has "
                                + n
                                + ")");

        byte[] badBlockType = gz.clone();
        badBlockType[10] |= 0x06; // BTYPE = 11, reserved
        assertThat(fields(verify(badBlockType)))
                .isEqualTo(
                        "DAMAGED 0 0 false member 1 (at compressed byte 0): deflate data error: invalid block type");

        assertThat(fields(verify("this is not gzip\n".getBytes(StandardCharsets.UTF_8))))
                .isEqualTo(
                        "DAMAGED 0 0 false member 1 (at compressed byte 0): not in gzip format: starts with 0x74, not the gzip magic 0x1f 0x8b");
        byte[] badMethod = gz.clone();
        badMethod[2] = 7;
        assertThat(fields(verify(badMethod)))
                .isEqualTo(
                        "DAMAGED 0 0 false member 1 (at compressed byte 0): compression method 7 in the header, not 8 (deflate)");
        byte[] reserved = gz.clone();
        reserved[3] = (byte) 0x20;
        assertThat(fields(verify(reserved)))
                .isEqualTo(
                        "DAMAGED 0 0 false member 1 (at compressed byte 0): reserved header flag bits set (flags 0x20)");

        // after a good member: another member with a broken magic, or trailing bytes that are not
        // padding
        byte[] secondMagic = concat(gz, gz);
        secondMagic[gz.length + 1] = 0x0b;
        assertThat(fields(verify(secondMagic)))
                .isEqualTo(
                        "DAMAGED 1 "
                                + n
                                + " false member 2 (at compressed byte "
                                + gz.length
                                + "): not in gzip format: starts with 0x1f 0x0b, not the gzip magic 0x1f 0x8b");
        assertThat(fields(verify(concat(gz, new byte[] {0, 0, 'x'}))))
                .isEqualTo(
                        "DAMAGED 1 "
                                + n
                                + " false member 2 (at compressed byte "
                                + gz.length
                                + "): byte 0x78 at compressed byte "
                                + (gz.length + 2)
                                + " after zero padding; neither a gzip member nor padding");
    }

    @Test
    void streamsEndingInsideAMemberAreTruncatedWithWhereTheyEnd() throws IOException {
        byte[] gz = gzip(lines(1, 200));
        int n = size(lines(1, 200));
        assertThat(fields(verify(Arrays.copyOf(gz, 5))))
                .isEqualTo(
                        "TRUNCATED 0 0 true member 1 (at compressed byte 0): the file ends inside its header");
        assertThat(fields(verify(Arrays.copyOf(gz, gz.length / 2))))
                .isEqualTo(
                        "TRUNCATED 0 0 false member 1 (at compressed byte 0): the file ends inside its deflate data");
        assertThat(fields(verify(Arrays.copyOf(gz, gz.length - 3))))
                .isEqualTo(
                        "TRUNCATED 0 0 false member 1 (at compressed byte 0): the file ends inside its trailer");
        assertThat(fields(verify(concat(gz, Arrays.copyOf(gz, 4)))))
                .isEqualTo(
                        "TRUNCATED 1 "
                                + n
                                + " true member 2 (at compressed byte "
                                + gz.length
                                + "): the file ends inside its header");
    }

    @Test
    void readsTheStreamInBufferSizedChunksWhateverTheSourceDelivers() throws IOException {
        // a source that hands out 7 bytes per read: header, data and trailer cross reads
        byte[] gz = concat(gzip(lines(1, 500)), gzip(lines(501, 600)));
        InputStream trickle =
                new ByteArrayInputStream(gz) {
                    @Override
                    public synchronized int read(byte[] b, int off, int len) {
                        return super.read(b, off, Math.min(len, 7));
                    }
                };
        assertThat(fields(GzipVerifier.verify(trickle)))
                .isEqualTo(
                        "INTACT 2 "
                                + (size(lines(1, 500)) + size(lines(501, 600)))
                                + " false null");
    }
}

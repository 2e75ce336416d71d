package dev.changeflow.state;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Decodes the stored state samples of every layout version (A4), so a later change cannot silently
 * break restoring existing state. The samples under {@code src/test/resources/state-samples/v1/}
 * were written with the v1 code, those under {@code v2/} by {@link #main} with the v2 code (SCD
 * type 2 head and history chunks); never regenerate an existing version's samples — add a directory
 * for a new version.
 */
class StateSamplesTest {
    static final SequenceCodec SEQ = new SequenceCodec(new BigIntType(false));
    static final SequenceCodec STRUCT_SEQ =
            new SequenceCodec(RowType.of(VarCharType.STRING_TYPE, new BigIntType()));
    static final RowCodec ROW = new RowCodec(RowCodecTest.ALL_TYPES);

    /** The hash in the AUTO CDC FROM SNAPSHOT sample: bytes 0..15 (the layout, not a real hash). */
    static final byte[] SNAPSHOT_HASH = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

    /**
     * The v1 samples this release still writes (SCD type 1 and sequence values), as the v1 code
     * wrote them.
     */
    static Map<String, byte[]> v1Samples() {
        byte[] seq42 = SEQ.encodeValue(42L);
        byte[] row = ROW.encode(RowCodecTest.sampleRow());
        Map<String, byte[]> m = new LinkedHashMap<>();
        ByteWriter w = new ByteWriter();
        Scd1RowValue.write(w, seq42, 0, seq42.length, row, 0, row.length);
        m.put("scd1-row.bin", w.toByteArray());
        m.put("sequence.bin", SequenceValue.encode(seq42, 0, seq42.length));
        byte[] structSeq =
                STRUCT_SEQ.encodeValue(
                        GenericRowData.of(StringData.fromString("binlog.000003"), 4711L));
        m.put("sequence-struct.bin", SequenceValue.encode(structSeq, 0, structSeq.length));
        byte[] hash = Hash128.hash(row);
        w.reset();
        Scd2HistoryEntry.writeUpsert(w, hash, 0, row, 0, row.length);
        m.put("scd2-history-upsert.bin", w.toByteArray());
        m.put("scd2-history-delete.bin", Scd2HistoryEntry.delete());
        m.put("snapshot-key.bin", SnapshotKeyValue.encode(42L, SNAPSHOT_HASH, 0));
        return m;
    }

    /**
     * The v2 samples: SCD type 2 heads (next chunk 3) and a history chunk (upsert, same, delete,
     * upsert).
     */
    static Map<String, byte[]> v2Samples() {
        byte[] seq42 = SEQ.encodeValue(42L);
        byte[] seq7 = SEQ.encodeValue(7L);
        byte[] row = ROW.encode(RowCodecTest.sampleRow());
        byte[] hash = Hash128.hash(row);
        Map<String, byte[]> m = new LinkedHashMap<>();
        ByteWriter w = new ByteWriter();
        Scd2CurrentValue.writeLive(
                w, 3, seq42, 0, seq42.length, seq7, 0, seq7.length, hash, 0, row, 0, row.length);
        m.put("scd2-current-live.bin", w.toByteArray());
        w.reset();
        Scd2CurrentValue.writeDeleted(w, 3, seq42, 0, seq42.length);
        m.put("scd2-current-deleted.bin", w.toByteArray());
        w.reset();
        Scd2HistoryChunk.start(w);
        for (long s = 7; s <= 10; s++) {
            byte[] seq = SEQ.encodeValue(s);
            if (s == 7 || s == 10) {
                Scd2HistoryChunk.appendUpsert(w, seq, 0, seq.length, hash, 0, row, 0, row.length);
            } else if (s == 8) {
                Scd2HistoryChunk.appendSame(w, seq, 0, seq.length);
            } else {
                Scd2HistoryChunk.appendDelete(w, seq, 0, seq.length);
            }
        }
        m.put("scd2-history-chunk.bin", w.toByteArray());
        return m;
    }

    static byte[] load(String version, String name) throws IOException {
        try (InputStream in =
                StateSamplesTest.class.getResourceAsStream(
                        "/state-samples/" + version + "/" + name)) {
            assertThat(in).as("sample %s/%s", version, name).isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    void v1SamplesDecode() throws IOException {
        String expectedRow = RowCodecTest.sampleRow().toString();

        byte[] scd1 = load("v1", "scd1-row.bin");
        Scd1RowValue v = new Scd1RowValue().wrap(scd1);
        assertThat(SEQ.decode(scd1, v.sequenceOffset(), v.sequenceLength())).isEqualTo(42L);
        assertThat(ROW.decode(scd1, v.rowOffset(), v.rowLength()).toString())
                .isEqualTo(expectedRow);

        assertThat(SEQ.decode(SequenceValue.sequence(load("v1", "sequence.bin")))).isEqualTo(42L);
        assertThat(
                        STRUCT_SEQ
                                .decode(SequenceValue.sequence(load("v1", "sequence-struct.bin")))
                                .toString())
                .isEqualTo("+I(binlog.000003,4711)");

        byte[] live = load("v1", "scd2-current-live.bin");
        Scd2CurrentValue c = new Scd2CurrentValue().wrap(live);
        assertThat(c.live()).isTrue();
        assertThat(c.nextChunk()).isZero();
        assertThat(SEQ.decode(live, c.maxOffset(), c.maxLength())).isEqualTo(42L);
        assertThat(SEQ.decode(live, c.startOffset(), c.startLength())).isEqualTo(7L);
        assertThat(ROW.decode(live, c.rowOffset(), c.rowLength()).toString())
                .isEqualTo(expectedRow);

        byte[] deleted = load("v1", "scd2-current-deleted.bin");
        c.wrap(deleted);
        assertThat(c.live()).isFalse();
        assertThat(SEQ.decode(deleted, c.maxOffset(), c.maxLength())).isEqualTo(42L);

        byte[] upsert = load("v1", "scd2-history-upsert.bin");
        Scd2HistoryEntry e = new Scd2HistoryEntry().wrap(upsert);
        assertThat(e.isDelete()).isFalse();
        assertThat(ROW.decode(upsert, e.rowOffset(), e.rowLength()).toString())
                .isEqualTo(expectedRow);
        assertThat(new Scd2HistoryEntry().wrap(load("v1", "scd2-history-delete.bin")).isDelete())
                .isTrue();
    }

    @Test
    void snapshotKeySampleDecodes() throws IOException {
        byte[] value = load("v1", "snapshot-key.bin");
        assertThat(value).hasSize(SnapshotKeyValue.V1_LENGTH);
        assertThat(SnapshotKeyValue.version(value)).isEqualTo(42L);
        assertThat(SnapshotKeyValue.sameHash(value, SNAPSHOT_HASH, 0)).isTrue();
        assertThat(SnapshotKeyValue.sameHash(value, new byte[16], 0)).isFalse();
        assertThatThrownBy(() -> SnapshotKeyValue.version(Arrays.copyOf(value, 9)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("corrupt changeflow snapshot key state value");
    }

    @Test
    void v2SamplesDecode() throws IOException {
        String expectedRow = RowCodecTest.sampleRow().toString();
        byte[] live = load("v2", "scd2-current-live.bin");
        Scd2CurrentValue c = new Scd2CurrentValue().wrap(live);
        assertThat(c.live()).isTrue();
        assertThat(c.nextChunk()).isEqualTo(3);
        assertThat(SEQ.decode(live, c.maxOffset(), c.maxLength())).isEqualTo(42L);
        assertThat(SEQ.decode(live, c.startOffset(), c.startLength())).isEqualTo(7L);
        assertThat(ROW.decode(live, c.rowOffset(), c.rowLength()).toString())
                .isEqualTo(expectedRow);
        byte[] deleted = load("v2", "scd2-current-deleted.bin");
        c.wrap(deleted);
        assertThat(c.live()).isFalse();
        assertThat(c.nextChunk()).isEqualTo(3);
        assertThat(SEQ.decode(deleted, c.maxOffset(), c.maxLength())).isEqualTo(42L);

        byte[] chunk = load("v2", "scd2-history-chunk.bin");
        Scd2HistoryChunk.Cursor cursor = new Scd2HistoryChunk.Cursor().wrap(chunk);
        List<String> read = new ArrayList<>();
        while (cursor.next()) {
            Object seq = SEQ.decode(chunk, cursor.sequenceOffset(), cursor.sequenceLength());
            read.add(
                    cursor.isDelete()
                            ? seq + ":delete"
                            : seq
                                    + ":"
                                    + ROW.decode(chunk, cursor.rowOffset(), cursor.rowLength()));
        }
        assertThat(read)
                .containsExactly(
                        "7:" + expectedRow, "8:" + expectedRow, "9:delete", "10:" + expectedRow);
    }

    @Test
    void corruptChunksFailWithAClearMessage() {
        byte[] seq = SEQ.encodeValue(1L);
        ByteWriter w = new ByteWriter();
        Scd2HistoryChunk.start(w);
        Scd2HistoryChunk.appendSame(w, seq, 0, seq.length); // SAME with nothing before it
        assertThatThrownBy(() -> new Scd2HistoryChunk.Cursor().wrap(w.toByteArray()).next())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("corrupt SCD2 history chunk");
        byte[] truncated = Arrays.copyOf(load2("scd2-history-chunk.bin"), 12);
        assertThatThrownBy(
                        () -> {
                            Scd2HistoryChunk.Cursor c =
                                    new Scd2HistoryChunk.Cursor().wrap(truncated);
                            while (c.next()) {
                                // read to the end
                            }
                        })
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("corrupt SCD2 history chunk");
        assertThatThrownBy(() -> new Scd2HistoryChunk.Cursor().wrap(new byte[] {1, 0}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("expected 2");
        assertThatThrownBy(() -> new Scd2HistoryChunk.Cursor().wrap(new byte[] {2, 1, 5, 9}).next())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("entry kind 9");
        assertThatThrownBy(() -> new Scd2CurrentValue().wrap(new byte[] {3, 0}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("format version 3");
        assertThat(Scd2HistoryChunk.isChunkKey(Scd2HistoryChunk.mapKey(0))).isTrue();
        assertThat(Scd2HistoryChunk.isChunkKey(SequenceCodec.toMapKey(seq, 0, seq.length)))
                .isFalse();
    }

    private static byte[] load2(String name) {
        try {
            return load("v2", name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void v1RowsDecodeWithColumnsAddedAtTheEndAsNull() throws IOException {
        // on-schema-change = add-columns: state rows written before the columns were added
        List<RowType.RowField> fields = new ArrayList<>(RowCodecTest.ALL_TYPES.getFields());
        fields.add(new RowType.RowField("w", VarCharType.STRING_TYPE));
        fields.add(new RowType.RowField("n", new BigIntType()));
        fields.add(new RowType.RowField("r", RowType.of(new BigIntType())));
        RowCodec wider = new RowCodec(new RowType(fields));
        assertThat(RowCodec.canWiden(RowCodecTest.ALL_TYPES.getFieldCount(), wider.arity()))
                .isTrue();
        GenericRowData expected = new GenericRowData(wider.arity());
        GenericRowData sample = RowCodecTest.sampleRow();
        for (int i = 0; i < sample.getArity(); i++) {
            expected.setField(i, sample.getField(i));
        }

        byte[] scd1 = load("v1", "scd1-row.bin");
        Scd1RowValue v = new Scd1RowValue().wrap(scd1);
        assertThat(wider.decode(scd1, v.rowOffset(), v.rowLength()).toString())
                .isEqualTo(expected.toString());
        byte[] live = load("v1", "scd2-current-live.bin");
        Scd2CurrentValue c = new Scd2CurrentValue().wrap(live);
        assertThat(wider.decode(live, c.rowOffset(), c.rowLength()).toString())
                .isEqualTo(expected.toString());
        byte[] upsert = load("v1", "scd2-history-upsert.bin");
        Scd2HistoryEntry e = new Scd2HistoryEntry().wrap(upsert);
        assertThat(wider.decode(upsert, e.rowOffset(), e.rowLength()).toString())
                .isEqualTo(expected.toString());
    }

    @Test
    void currentCodeWritesTheStoredSamplesByteForByte() throws IOException {
        // layouts still written at v1 (SCD type 1, sequences; v1 history entries only in tests) and
        // the v2 ones
        assertThat(StateFormat.CURRENT_VERSION).isEqualTo(StateFormat.V2);
        for (Map.Entry<String, byte[]> s : v1Samples().entrySet()) {
            assertThat(s.getValue()).as(s.getKey()).isEqualTo(load("v1", s.getKey()));
        }
        for (Map.Entry<String, byte[]> s : v2Samples().entrySet()) {
            assertThat(s.getValue()).as(s.getKey()).isEqualTo(load("v2", s.getKey()));
        }
    }

    @Test
    void unknownVersionFailsWithAClearMessage() {
        assertThatThrownBy(() -> new Scd1RowValue().wrap(new byte[] {9, 0}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("format version 9");
        assertThatThrownBy(() -> SequenceValue.sequence(new byte[0]))
                .isInstanceOf(IllegalStateException.class);
    }

    /** Writes the samples of the current version (v2); run once when a version is introduced. */
    public static void main(String[] args) throws IOException {
        Path dir =
                Paths.get(args.length > 0 ? args[0] : "state/src/test/resources/state-samples/v2");
        Files.createDirectories(dir);
        for (Map.Entry<String, byte[]> s : v2Samples().entrySet()) {
            Files.write(dir.resolve(s.getKey()), s.getValue());
        }
    }
}

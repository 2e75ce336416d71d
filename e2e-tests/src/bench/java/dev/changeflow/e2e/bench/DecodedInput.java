package dev.changeflow.e2e.bench;

import dev.changeflow.sources.changes.ChangeRecordDecoder;
import dev.changeflow.sources.changes.DecodeOutput;

import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * Change records decoded once by changeflow's {@link ChangeRecordDecoder} and kept as rows of the
 * decoder's source type ({@code aid, bid, abalance, filler} + Debezium metadata, {@code +I} for an
 * upsert, {@code -D} for a delete carrying the {@code before} row), so every system replays the
 * same rows and decoding is timed on its own.
 *
 * <p>File format: a count (int), then the rows written by Flink's {@link RowDataSerializer} of the
 * source type (row kind included).
 */
final class DecodedInput {
    final List<RowData> rows;

    /** Wall time of decoding, nanoseconds. */
    final long decodeNanos;

    /** Records given to the decoder (tombstones included). */
    final long records;

    private DecodedInput(List<RowData> rows, long decodeNanos, long records) {
        this.rows = rows;
        this.decodeNanos = decodeNanos;
        this.records = records;
    }

    /**
     * Decodes Debezium lines of {@code pgbench_accounts} with the flow's decoder, in order.
     * Tombstones (null values) produce no row, as in the ingest job.
     *
     * @throws IllegalStateException when a line is quarantined (the inputs are known to be valid)
     */
    static DecodedInput decode(List<byte[]> lines, BenchFlows flows) {
        ChangeRecordDecoder decoder = new ChangeRecordDecoder(List.of(flows.scd1.decoder));
        List<RowData> rows = new ArrayList<>(lines.size());
        DecodeOutput out =
                new DecodeOutput() {
                    @Override
                    public void upsertOrDelete(int flowIndex, RowData row) {
                        rows.add(row);
                    }

                    @Override
                    public void truncate(int flowIndex, RowData row) {
                        throw new IllegalStateException(
                                "unexpected truncate record in the benchmark input");
                    }

                    @Override
                    public void quarantine(RowData row) {
                        throw new IllegalStateException(
                                "benchmark input record quarantined: " + row);
                    }
                };
        long start = System.nanoTime();
        long line = 0;
        for (byte[] raw : lines) {
            decoder.decode(raw, "bench", null, ++line, 0L, out);
        }
        return new DecodedInput(rows, System.nanoTime() - start, lines.size());
    }

    /**
     * The lines of a (gzip) capture whose topic is {@code pgbench_accounts}, as UTF-8 bytes, in
     * file order.
     */
    static List<byte[]> accountLines(Path capture) throws IOException {
        List<byte[]> lines = new ArrayList<>();
        try (var r =
                new BufferedReader(
                        new InputStreamReader(
                                new GZIPInputStream(Files.newInputStream(capture), 1 << 16),
                                StandardCharsets.UTF_8))) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                if (l.contains("\"topic\":\"pgbench.public." + BenchFlows.TABLE + "\"")) {
                    lines.add(l.getBytes(StandardCharsets.UTF_8));
                }
            }
        }
        return lines;
    }

    /** Writes rows to {@code file} (format in the class comment). */
    static void write(Path file, List<RowData> rows, RowType type) throws IOException {
        RowDataSerializer ser = new RowDataSerializer(type);
        Files.createDirectories(file.getParent());
        try (DataOutputStream out =
                new DataOutputStream(
                        new BufferedOutputStream(Files.newOutputStream(file), 1 << 16))) {
            out.writeInt(rows.size());
            DataOutputViewStreamWrapper view = new DataOutputViewStreamWrapper(out);
            for (RowData r : rows) {
                ser.serialize(r, view);
            }
        }
    }

    /** Reads rows written by {@link #write}, as {@link GenericRowData} (row kind kept). */
    static List<RowData> read(Path file, RowType type) throws IOException {
        RowDataSerializer ser = new RowDataSerializer(type);
        RowData.FieldGetter[] getters = new RowData.FieldGetter[type.getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(type.getTypeAt(i), i);
        }
        try (DataInputStream in =
                new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            int n = in.readInt();
            List<RowData> rows = new ArrayList<>(n);
            DataInputViewStreamWrapper view = new DataInputViewStreamWrapper(in);
            for (int i = 0; i < n; i++) {
                RowData r = ser.deserialize(view);
                GenericRowData g = new GenericRowData(r.getRowKind(), getters.length);
                for (int f = 0; f < getters.length; f++) {
                    g.setField(f, getters[f].getFieldOrNull(r));
                }
                rows.add(g);
            }
            return rows;
        }
    }
}

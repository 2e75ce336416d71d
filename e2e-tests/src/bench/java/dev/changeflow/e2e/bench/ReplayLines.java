package dev.changeflow.e2e.bench;

import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * Expands batch number {@code b} of a paced source into capture lines {@code [b × batchLines, (b+1)
 * × batchLines)} of the pgbench accounts stream repeated without end: line {@code i} is line {@code
 * i mod n} of the capture's {@code pgbench_accounts} lines, raw Debezium JSON, with its {@code
 * "lsn":} value raised by {@code (i div n) × shift} (round {@code i div n}; tombstones unchanged),
 * so every round sorts after the previous one by {@code source.lsn} (semantics.md A2). The lines go
 * through changeflow's decoder like lines of a change file ({@link SourceLine}, source {@code
 * replay}, line number {@code i + 1}). The capture is read in {@link #open}, not shipped in the job
 * graph.
 */
final class ReplayLines extends RichFlatMapFunction<Long, SourceLine> {
    private static final long serialVersionUID = 1L;

    private static final byte[] LSN = "\"lsn\":".getBytes(StandardCharsets.UTF_8);

    private final String capture;
    private final long batchLines;
    private final long totalLines;
    private final long shift;
    private transient byte[][] prefix;
    private transient byte[][] suffix;
    private transient long[] lsn;
    private transient byte[][] raw;

    /**
     * @param capture the gzip capture ({@code capture-pgbench-s1.jsonl.gz})
     * @param batchLines lines per batch
     * @param totalLines lines in all (the last batch may be shorter)
     * @param shift added to {@code source.lsn} per round
     */
    ReplayLines(Path capture, long batchLines, long totalLines, long shift) {
        this.capture = capture.toString();
        this.batchLines = batchLines;
        this.totalLines = totalLines;
        this.shift = shift;
    }

    @Override
    public void open(OpenContext openContext) throws IOException {
        List<byte[]> lines = DecodedInput.accountLines(Path.of(capture));
        int n = lines.size();
        prefix = new byte[n][];
        suffix = new byte[n][];
        lsn = new long[n];
        raw = new byte[n][];
        for (int i = 0; i < n; i++) {
            byte[] l = lines.get(i);
            raw[i] = l;
            int at = indexOf(l, LSN, 0);
            if (at < 0) {
                lsn[i] = -1; // a tombstone: replayed as it is
                continue;
            }
            if (indexOf(l, LSN, at + 1) >= 0) {
                throw new IllegalStateException("capture line " + (i + 1) + " has two lsn fields");
            }
            int start = at + LSN.length;
            int end = start;
            while (end < l.length && l[end] >= '0' && l[end] <= '9') {
                end++;
            }
            lsn[i] = Long.parseLong(new String(l, start, end - start, StandardCharsets.US_ASCII));
            prefix[i] = java.util.Arrays.copyOfRange(l, 0, start);
            suffix[i] = java.util.Arrays.copyOfRange(l, end, l.length);
        }
    }

    @Override
    public void flatMap(Long batch, Collector<SourceLine> out) {
        long from = batch * batchLines;
        long to = Math.min(from + batchLines, totalLines);
        int n = raw.length;
        for (long i = from; i < to; i++) {
            int b = (int) (i % n);
            long round = i / n;
            byte[] bytes = raw[b];
            if (round > 0 && lsn[b] >= 0) {
                byte[] digits =
                        Long.toString(lsn[b] + round * shift).getBytes(StandardCharsets.US_ASCII);
                bytes = new byte[prefix[b].length + digits.length + suffix[b].length];
                System.arraycopy(prefix[b], 0, bytes, 0, prefix[b].length);
                System.arraycopy(digits, 0, bytes, prefix[b].length, digits.length);
                System.arraycopy(
                        suffix[b], 0, bytes, prefix[b].length + digits.length, suffix[b].length);
            }
            out.collect(SourceLine.data("replay", i + 1, bytes));
        }
    }

    private static int indexOf(byte[] s, byte[] p, int from) {
        outer:
        for (int i = from; i <= s.length - p.length; i++) {
            for (int j = 0; j < p.length; j++) {
                if (s[i + j] != p[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}

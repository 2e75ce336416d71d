package dev.changeflow.sources.changes;

import dev.changeflow.sources.testutil.SharedData;

import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole real pgbench capture (141,511 lines) through the decoder (shared/data/README.md
 * counts).
 */
class PgbenchCaptureDecodeTest {

    @Test
    void decodesEveryEventOfTheRealCapture() throws IOException {
        Path capture = SharedData.pgbenchCapture();
        List<DecoderFlow> flows = PgbenchFlows.flows();
        ChangeRecordDecoder decoder = new ChangeRecordDecoder(flows);
        long[][] byFlowAndOp = new long[4][128];
        long[] deletes = new long[4];
        long[] truncates = {0};
        long[] quarantined = {0};
        DecodeOutput out =
                new DecodeOutput() {
                    @Override
                    public void upsertOrDelete(int flowIndex, RowData row) {
                        if (row.getRowKind() == RowKind.DELETE) {
                            deletes[flowIndex]++;
                        } else {
                            int opIndex = flows.get(flowIndex).sourceType().getFieldIndex("_op");
                            byFlowAndOp[flowIndex][row.getString(opIndex).toString().charAt(0)]++;
                        }
                    }

                    @Override
                    public void truncate(int flowIndex, RowData row) {
                        truncates[0]++;
                    }

                    @Override
                    public void quarantine(RowData row) {
                        quarantined[0]++;
                    }
                };
        long lines = 0, tombstones = 0;
        try (InputStream in =
                new BufferedInputStream(
                        new GZIPInputStream(Files.newInputStream(capture), 1 << 16), 1 << 16)) {
            ByteArrayOutputStream line = new ByteArrayOutputStream(1024);
            int c;
            while ((c = in.read()) >= 0) {
                if (c != '\n') {
                    line.write(c);
                    continue;
                }
                lines++;
                if (decoder.decode(line.toByteArray(), capture.toString(), null, lines, 0L, out)
                        == DecodeOutcome.TOMBSTONE_SKIPPED) {
                    tombstones++;
                }
                line.reset();
            }
            assertThat(line.size()).isZero();
        }
        assertThat(lines).isEqualTo(141_511);
        assertThat(quarantined[0]).isZero();
        assertThat(truncates[0]).isZero();
        assertThat(tombstones).isEqualTo(500);
        // accounts: r 100000 + c 100 + u 10400 = 110500 upserts, 500 deletes
        assertThat(byFlowAndOp[0]['r']).isEqualTo(100_000);
        assertThat(byFlowAndOp[0]['c']).isEqualTo(100);
        assertThat(byFlowAndOp[0]['u']).isEqualTo(10_400);
        assertThat(deletes[0]).isEqualTo(500);
        // branches r 1 + u 10000, tellers r 10 + u 10000, history c 10000
        assertThat(byFlowAndOp[1]['r'] + byFlowAndOp[1]['u']).isEqualTo(10_001);
        assertThat(byFlowAndOp[2]['r'] + byFlowAndOp[2]['u']).isEqualTo(10_010);
        assertThat(byFlowAndOp[3]['c']).isEqualTo(10_000);
        assertThat(deletes[1] + deletes[2] + deletes[3]).isZero();
    }
}

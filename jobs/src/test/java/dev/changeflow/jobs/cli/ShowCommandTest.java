package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.CapturedOutput;

import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class ShowCommandTest {
    @Test
    void binaryUtf8IsPrintedAsTextAndOtherBytesAsHex() {
        Schema schema =
                new Schema(
                        Types.NestedField.optional(1, "reason", Types.StringType.get()),
                        Types.NestedField.optional(2, "raw", Types.BinaryType.get()));
        GenericRecord text = GenericRecord.create(schema);
        text.setField("reason", "NOT_JSON");
        text.setField("raw", ByteBuffer.wrap("plain, text".getBytes(StandardCharsets.UTF_8)));
        assertThat(ShowCommand.line(text)).isEqualTo("NOT_JSON,\"plain, text\"");
        GenericRecord bytes = GenericRecord.create(schema);
        bytes.setField("reason", "TRUNCATED_FILE");
        bytes.setField("raw", ByteBuffer.wrap(new byte[] {(byte) 0x1f, (byte) 0x8b, (byte) 0xff}));
        assertThat(ShowCommand.line(bytes)).isEqualTo("TRUNCATED_FILE,\\x1f8bff");
    }

    @TempDir Path dir;

    /**
     * A table in a namespace the warehouse does not have (or in a warehouse folder that does not
     * exist) is "no table", exit code 2 — not Iceberg's NoSuchNamespaceException.
     */
    @Test
    void aMissingNamespaceOrWarehouseIsNoTable() throws Exception {
        CapturedOutput.MainRun missing =
                CapturedOutput.main(
                        "show", "nons.t", "--warehouse", dir.resolve("does-not-exist").toString());
        assertThat(missing.code()).as(missing.stderr()).isEqualTo(2);
        assertThat(missing.stderr())
                .isEqualTo(
                        "error: TABLE_NOT_FOUND: no table nons.t in changeflow catalog (it has no tables; check"
                                + " --warehouse)\n");
        Path empty = Files.createDirectories(dir.resolve("empty"));
        CapturedOutput.MainRun noNamespace =
                CapturedOutput.main("show", "nons.t", "--warehouse", empty.toString());
        assertThat(noNamespace.code()).as(noNamespace.stderr()).isEqualTo(2);
        assertThat(noNamespace.stderr()).isEqualTo(missing.stderr());
    }
}

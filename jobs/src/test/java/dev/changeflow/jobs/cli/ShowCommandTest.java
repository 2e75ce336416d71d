package dev.changeflow.jobs.cli;

import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

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
}

package dev.changeflow.sinks.iceberg;

import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TableRowsTest {

    private static final Schema HISTORY =
            new Schema(
                    Types.NestedField.optional(1, "tid", Types.IntegerType.get()),
                    Types.NestedField.optional(2, "delta", Types.IntegerType.get()),
                    Types.NestedField.optional(3, "mtime", Types.TimestampType.withoutZone()),
                    Types.NestedField.optional(4, "filler", Types.StringType.get()));

    @Test
    void rowsPrintAsPostgresCsv() {
        GenericRecord r = GenericRecord.create(HISTORY);
        r.setField("tid", 4);
        r.setField("delta", -4018);
        r.setField("mtime", LocalDateTime.parse("2026-11-30T03:17:21.882801"));
        r.setField("filler", "    ");
        assertThat(TableRows.toCsvLine(r)).isEqualTo("4,-4018,2026-11-30 03:17:21.882801,    ");

        r.setField("mtime", LocalDateTime.parse("2026-11-30T03:17:21.880"));
        r.setField("filler", null);
        r.setField("delta", null);
        assertThat(TableRows.toCsvLine(r)).isEqualTo("4,,2026-11-30 03:17:21.88,");
        assertThat(TableRows.header(HISTORY)).isEqualTo("tid,delta,mtime,filler");
    }

    @Test
    void structsPrintAsPostgresCompositesAndListsAsArrays() {
        Schema period =
                new Schema(
                        Types.NestedField.required(1, "lsn", Types.LongType.get()),
                        Types.NestedField.optional(2, "file", Types.StringType.get()));
        GenericRecord start = GenericRecord.create(period);
        start.setField("lsn", 5L);
        start.setField("file", "bin.1");
        assertThat(TableRows.formatValue(start)).isEqualTo("\"(5,bin.1)\"");
        start.setField("file", null);
        assertThat(TableRows.formatValue(start)).isEqualTo("\"(5,)\"");
        start.setField("file", "a \"b\",c");
        // composite field quoted by PostgreSQL's rules, then the whole value by CSV's
        assertThat(TableRows.formatValue(start)).isEqualTo("\"(5,\"\"a \"\"\"\"b\"\"\"\",c\"\")\"");
        assertThat(TableRows.formatValue(Arrays.asList("x", null, "", "NULL", "y z")))
                .isEqualTo("\"{x,NULL,\"\"\"\",\"\"NULL\"\",\"\"y z\"\"}\"");
        assertThat(TableRows.formatValue(List.of(1, 2))).isEqualTo("\"{1,2}\"");
    }

    @Test
    void valuesFollowPostgresTextForms() {
        assertThat(TableRows.formatValue(LocalDateTime.parse("2026-11-30T03:17:21")))
                .isEqualTo("2026-11-30 03:17:21");
        assertThat(TableRows.formatValue(LocalDateTime.parse("2026-11-30T03:17:21.000001")))
                .isEqualTo("2026-11-30 03:17:21.000001");
        assertThat(
                        TableRows.formatValue(
                                OffsetDateTime.of(
                                        2026,
                                        11,
                                        30,
                                        4,
                                        17,
                                        21,
                                        500_000_000,
                                        ZoneOffset.ofHours(1))))
                .isEqualTo("2026-11-30 03:17:21.5+00");
        assertThat(TableRows.formatValue(true)).isEqualTo("t");
        assertThat(TableRows.formatValue(new BigDecimal("10.50"))).isEqualTo("10.50");
        assertThat(TableRows.formatValue(ByteBuffer.wrap(new byte[] {0x0a, (byte) 0xff})))
                .isEqualTo("\\x0aff");
        assertThat(TableRows.formatValue("")).isEqualTo("\"\"");
        assertThat(TableRows.formatValue("a,\"b\"")).isEqualTo("\"a,\"\"b\"\"\"");
        assertThat(TableRows.formatValue("  padded  ")).isEqualTo("  padded  ");
        assertThat(TableRows.formatValue(null)).isEmpty();
        assertThat(TableRows.formatValue(12345678901L)).isEqualTo("12345678901");
    }
}

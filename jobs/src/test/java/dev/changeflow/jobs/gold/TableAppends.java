package dev.changeflow.jobs.gold;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.OutputFile;

import java.io.IOException;
import java.util.UUID;

/**
 * Test helper: new versions of an unpartitioned Iceberg table written with Iceberg's own writers.
 */
final class TableAppends {

    private TableAppends() {}

    /**
     * Commits one new version of {@code table}: an append of one Parquet data file holding {@code
     * rows} (records of {@code schema}), written in {@code schema}. The table is refreshed
     * afterwards.
     */
    static void append(Table table, Schema schema, Record... rows) throws IOException {
        OutputFile out =
                table.io()
                        .newOutputFile(
                                table.location() + "/data/" + UUID.randomUUID() + ".parquet");
        FileAppender<Record> appender =
                new GenericAppenderFactory(schema).newAppender(out, FileFormat.PARQUET);
        try (appender) {
            for (Record r : rows) {
                appender.add(r);
            }
        }
        DataFile file =
                DataFiles.builder(PartitionSpec.unpartitioned())
                        .withInputFile(out.toInputFile())
                        .withMetrics(appender.metrics())
                        .withFormat(FileFormat.PARQUET)
                        .build();
        table.newAppend().appendFile(file).commit();
        table.refresh();
    }
}

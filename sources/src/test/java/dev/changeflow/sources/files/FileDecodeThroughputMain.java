package dev.changeflow.sources.files;

import dev.changeflow.sources.changes.ChangeRecordFormat;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.testutil.SharedData;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.data.RowData;

import java.nio.file.Path;
import java.util.List;

/**
 * End-to-end read + decode throughput of the real capture on a local environment (parallelism 1):
 * {@link ChangeFiles} (gzip) → {@link DecodeFunction} → discarding sinks. Not a test.
 */
public final class FileDecodeThroughputMain {
    public static void main(String[] args) throws Exception {
        Path capture = SharedData.pgbenchCapture();
        List<DecoderFlow> flows =
                List.of(
                        flow(
                                "accounts",
                                "pgbench_accounts",
                                "aid INT, bid INT, abalance INT, filler CHAR(84)",
                                "aid"),
                        flow(
                                "branches",
                                "pgbench_branches",
                                "bid INT, bbalance INT, filler CHAR(88)",
                                "bid"),
                        flow(
                                "tellers",
                                "pgbench_tellers",
                                "tid INT, bid INT, tbalance INT, filler CHAR(84)",
                                "tid"),
                        DecoderFlow.builder(
                                        "history",
                                        ChangeRecordFormat.DEBEZIUM_JSON,
                                        SchemaSampler.parseColumns(
                                                "tid INT, bid INT, aid INT, delta INT, mtime TIMESTAMP(6), filler CHAR(22)"))
                                .sourceNames("pgbench_history")
                                .appendOnly(true)
                                .sequenceBy("source.lsn")
                                .build());
        for (int round = 0; round < (args.length > 0 ? Integer.parseInt(args[0]) : 3); round++) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
            DecodeFunction fn = new DecodeFunction(flows);
            SingleOutputStreamOperator<RowData> decoded =
                    env.fromSource(
                                    ChangeFiles.source(List.of(capture), null),
                                    WatermarkStrategy.noWatermarks(),
                                    "files")
                            .process(fn);
            for (int i = 0; i < flows.size(); i++) {
                decoded.getSideOutput(fn.changesTag(i)).sinkTo(new DiscardingSink<>());
            }
            decoded.getSideOutput(DecodeFunction.quarantineTag()).sinkTo(new DiscardingSink<>());
            long t0 = System.nanoTime();
            JobExecutionResult r = env.execute("throughput");
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf(
                    "round %d: 141511 lines in %.2f s = %.0f lines/s (job net runtime %d ms)%n",
                    round, secs, 141511 / secs, r.getNetRuntime());
        }
    }

    private static DecoderFlow flow(String id, String table, String columns, String key) {
        return DecoderFlow.builder(
                        id, ChangeRecordFormat.DEBEZIUM_JSON, SchemaSampler.parseColumns(columns))
                .sourceNames(table)
                .keys(key)
                .sequenceBy("_source_lsn")
                .build();
    }
}

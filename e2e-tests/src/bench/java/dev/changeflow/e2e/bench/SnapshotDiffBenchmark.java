package dev.changeflow.e2e.bench;

import dev.changeflow.operators.AutoCdcKeySelector;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotDiffOperator;
import dev.changeflow.operators.SnapshotVersions;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;

import java.util.List;

/**
 * Benchmark (not a test) of AUTO CDC FROM SNAPSHOT's diff (docs/semantics.md A6, issue #15): the
 * keyed diff operator ({@link SnapshotDiffOperator}) alone, one subtask on the embedded RocksDB
 * backend with 128 MiB of memory (a slot's managed memory; the harness alone gives it almost none),
 * in Flink's keyed operator test harness. Snapshot 1 holds {@code rows} keys ({@code id BIGINT,
 * name STRING (24 chars), amount INT}); snapshot 2 the same keys with 1% of the rows changed (every
 * 100th key gets a new amount). Prints the time to diff snapshot 2 (its rows, then the pass over
 * the keys at its end) and the diff state per key in a full (canonical) snapshot of the RocksDB
 * state: key, 25-byte value and the backend's framing.
 *
 * <p>Run: {@code ./mvnw -B -q -Pbench -pl e2e-tests -am verify -DskipTests
 * -Dbench.class=dev.changeflow.e2e.bench.SnapshotDiffBenchmark -Dbench.args=1000000} (first
 * argument: rows, default 1,000,000).
 */
public final class SnapshotDiffBenchmark {
    /** RocksDB memory of the subtask (block cache and write buffers), MiB. */
    private static final int ROCKSDB_MIB = 128;

    /** Change records the diff emitted in the last {@link #snapshot}. */
    private static long emitted;

    private SnapshotDiffBenchmark() {}

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        RowType type =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(false),
                            VarCharType.STRING_TYPE,
                            new IntType(),
                            new BigIntType()
                        },
                        new String[] {"id", "name", "amount", SnapshotVersions.VERSION_COLUMN});
        AutoCdcSpec spec =
                AutoCdcSpec.builder("bench", type)
                        .metadataColumns(List.of(SnapshotVersions.VERSION_COLUMN))
                        .keys("id")
                        .sequenceBy(SnapshotVersions.VERSION_COLUMN)
                        .build();
        AutoCdcKeySelector keys = new AutoCdcKeySelector(spec);
        try (KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new SnapshotDiffOperator(spec),
                        keys,
                        InternalTypeInfo.of(keys.keyType()))) {
            EmbeddedRocksDBStateBackend rocksDb = new EmbeddedRocksDBStateBackend(false);
            // the harness gives RocksDB no managed memory (512 KiB of write buffers: a flush per
            // few hundred keys); a slot of a local run or a TaskManager has far more
            rocksDb.getMemoryConfiguration()
                    .setFixedMemoryPerSlot(MemorySize.ofMebiBytes(ROCKSDB_MIB));
            h.setStateBackend(rocksDb);
            // the state of 1,000,000 keys exceeds the 5 MiB default of in-memory checkpoints
            h.setCheckpointStorage(new JobManagerCheckpointStorage(Integer.MAX_VALUE));
            // typed output copies (the harness falls back to Kryo without it)
            h.setup(InternalTypeInfo.of(type).createSerializer(new SerializerConfigImpl()));
            h.open();
            long load = snapshot(h, rows, 1, 0);
            long emittedLoad = emitted;
            long diff = snapshot(h, rows, 2, 100);
            long changes = emitted;
            OperatorSubtaskState state = h.snapshot(1, 1);
            long bytes = state.getStateSize();
            System.out.printf(
                    "AUTO CDC FROM SNAPSHOT diff, %,d keys, one subtask, RocksDB (%d MiB):%n"
                            + "  snapshot 1 (all inserts): %,d ms (%,d outputs)%n"
                            + "  snapshot 2 (1%% changed): %,d ms, %,.0f rows/s, %,d changes emitted%n"
                            + "  diff state: %,d bytes in a full snapshot = %.1f bytes per key"
                            + " (value: 25 bytes)%n",
                    rows,
                    ROCKSDB_MIB,
                    load,
                    emittedLoad,
                    diff,
                    rows / (diff / 1000.0),
                    changes,
                    bytes,
                    bytes / (double) rows);
        }
    }

    private static void drain(KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h) {
        for (Object o = h.getOutput().poll(); o != null; o = h.getOutput().poll()) {
            if (o instanceof StreamRecord) {
                emitted++;
            }
        }
    }

    /**
     * Feeds snapshot {@code version} (every {@code changeEvery}-th key with a changed amount; 0 =
     * none) and its end watermark; returns the milliseconds it took.
     */
    private static long snapshot(
            KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h,
            int rows,
            long version,
            int changeEvery)
            throws Exception {
        long t0 = System.nanoTime();
        emitted = 0;
        for (int i = 0; i < rows; i++) {
            boolean changed = changeEvery > 0 && i % changeEvery == 0;
            GenericRowData r =
                    GenericRowData.of(
                            (long) i,
                            StringData.fromString(String.format("customer-%015d", i)),
                            changed ? i + 1 : i,
                            version);
            h.processElement(new StreamRecord<>(r));
            if ((i & 0xFFFF) == 0) {
                drain(h);
            }
        }
        long t1 = System.nanoTime();
        h.processWatermark(new Watermark(version));
        drain(h);
        long t2 = System.nanoTime();
        System.out.printf(
                "  snapshot %d: rows %,d ms, end of snapshot (pass over the keys) %,d ms%n",
                version, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000);
        return (t2 - t0) / 1_000_000;
    }
}

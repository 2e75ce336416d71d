package dev.changeflow.state;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.state.rocksdb.RocksDBOptions;

import java.time.Duration;

/**
 * State backend and state TTL settings of changeflow's AUTO CDC operators (design.md "state/").
 *
 * <p>Jobs apply {@link #applyRocksDbIncremental(Configuration)} to the configuration they build the
 * {@code StreamExecutionEnvironment} from ({@code state.backend.type: rocksdb}, {@code
 * execution.checkpointing.incremental: true}); keyed state then lives in RocksDB, whose compaction
 * filter removes expired tombstones (A3).
 */
@PublicEvolving
public final class ChangeflowStateBackends {
    /**
     * How many state entries the RocksDB compaction filter processes before refreshing its clock.
     */
    public static final long TTL_COMPACTION_QUERY_TIME_AFTER_ENTRIES = 1000L;

    private ChangeflowStateBackends() {}

    /**
     * Sets the RocksDB state backend with incremental checkpoints on {@code conf} (Flink 2.x keys
     * {@code state.backend.type = rocksdb}, {@code execution.checkpointing.incremental = true}).
     * Leaves the checkpoint directory, interval and memory settings to the caller.
     *
     * @return {@code conf}, for chaining
     */
    public static Configuration applyRocksDbIncremental(Configuration conf) {
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(RocksDBOptions.USE_MANAGED_MEMORY, true);
        return conf;
    }

    /**
     * A fresh configuration holding only {@link #applyRocksDbIncremental(Configuration)}'s
     * settings.
     */
    public static Configuration rocksDbIncremental() {
        return applyRocksDbIncremental(new Configuration());
    }

    /** The same backend as an object, for operator test harnesses and programmatic setups. */
    public static EmbeddedRocksDBStateBackend rocksDbBackend() {
        return new EmbeddedRocksDBStateBackend(true);
    }

    /**
     * TTL of SCD1 tombstones (A3): {@code threshold} of processing time from the tombstone's last
     * write (OnCreateAndWrite), never returning expired values, removed by RocksDB compaction.
     * Processing time keeps running while the job is down, so downtime counts toward the threshold.
     *
     * @throws IllegalArgumentException when {@code threshold} is zero or negative
     */
    public static StateTtlConfig tombstoneTtl(Duration threshold) {
        if (threshold.isZero() || threshold.isNegative()) {
            throw new IllegalArgumentException(
                    "tombstone-gc-threshold must be positive, got " + threshold);
        }
        return StateTtlConfig.newBuilder(threshold)
                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                .cleanupInRocksdbCompactFilter(TTL_COMPACTION_QUERY_TIME_AFTER_ENTRIES)
                .build();
    }
}

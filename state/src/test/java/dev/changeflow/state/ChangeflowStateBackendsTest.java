package dev.changeflow.state;

import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChangeflowStateBackendsTest {

    @Test
    void configuresRocksDbWithIncrementalCheckpoints() {
        Configuration conf = ChangeflowStateBackends.rocksDbIncremental();
        assertThat(conf.toMap())
                .containsEntry("state.backend.type", "rocksdb")
                .containsEntry("execution.checkpointing.incremental", "true");
        assertThat(ChangeflowStateBackends.rocksDbBackend().isIncrementalCheckpointsEnabled())
                .isTrue();
    }

    @Test
    void tombstoneTtlIsProcessingTimeOnCreateAndWriteNeverReturnExpiredCompactionCleaned() {
        StateTtlConfig ttl = ChangeflowStateBackends.tombstoneTtl(Duration.ofDays(2));
        assertThat(ttl.getTimeToLive()).isEqualTo(Duration.ofDays(2));
        assertThat(ttl.getUpdateType()).isEqualTo(StateTtlConfig.UpdateType.OnCreateAndWrite);
        assertThat(ttl.getStateVisibility())
                .isEqualTo(StateTtlConfig.StateVisibility.NeverReturnExpired);
        assertThat(ttl.getTtlTimeCharacteristic())
                .isEqualTo(StateTtlConfig.TtlTimeCharacteristic.ProcessingTime);
        assertThat(ttl.getCleanupStrategies().getRocksdbCompactFilterCleanupStrategy()).isNotNull();
        assertThatThrownBy(() -> ChangeflowStateBackends.tombstoneTtl(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tombstone-gc-threshold");
    }
}

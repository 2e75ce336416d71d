package dev.changeflow.sinks.iceberg;

import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StreamingTableOptionsTest {

    @Test
    void defaultsAndRoundTrip() throws Exception {
        StreamingTableOptions defaults = StreamingTableOptions.defaults();
        assertThat(defaults.formatVersion()).isEqualTo(2);
        assertThat(defaults.partitionBy()).isEmpty();
        assertThat(defaults.bloomFilters()).isTrue();
        assertThat(defaults.targetFileSizeBytes()).isEmpty();
        assertThat(defaults.writeParallelism()).isEmpty();

        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .formatVersion(3)
                        .partitionBy("bucket(16, aid)", "day(ts)", "`region`")
                        .writeParallelism(4)
                        .targetFileSizeBytes(1024)
                        .property("k", "v")
                        .build();
        assertThat(InstantiationUtil.clone(options)).isEqualTo(options);
        assertThat(options.toBuilder().build()).isEqualTo(options);
        assertThat(options.writeParallelism()).hasValue(4);
    }

    @Test
    void invalidOptionsNameTheOptionAndAcceptedValues() {
        assertThatThrownBy(() -> StreamingTableOptions.builder().formatVersion(1).build())
                .hasMessage("formatVersion 1 is not supported; accepted: 2, 3");
        assertThatThrownBy(
                        () ->
                                StreamingTableOptions.builder()
                                        .property("format-version", "3")
                                        .build())
                .hasMessageContaining("contradicts formatVersion 2");
        assertThatThrownBy(() -> StreamingTableOptions.builder().writeParallelism(0).build())
                .hasMessage("writeParallelism must be > 0, got 0");
        assertThatThrownBy(
                        () ->
                                StreamingTableOptions.builder()
                                        .partitionBy(List.of("bucket(aid)"))
                                        .build())
                .hasMessage(
                        "partitionBy 'bucket(aid)' is invalid: bucket needs a number and a column, e.g. "
                                + "bucket(16, c); accepted: "
                                + PartitionTransforms.ACCEPTED);
        assertThatThrownBy(() -> StreamingTableOptions.builder().partitionBy("zorder(a)").build())
                .hasMessageContaining("unknown transform 'zorder'");
        assertThatThrownBy(() -> StreamingTableOptions.builder().partitionBy("a b").build())
                .hasMessageContaining("not a column or transform");
    }
}

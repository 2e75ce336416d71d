package dev.changeflow.sources.kafka;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Per-partition starting offsets ({@link StartingOffsets#parse} of Spark's JSON form). */
class StartingOffsetsTest {

    @Test
    void perPartitionOffsetsParseResolveAndPrintBack() {
        StartingOffsets s =
                StartingOffsets.parse(" {\"orders\":{\"1\":-2,\"0\":23},\"items\":{\"0\":-1}} ");
        assertThat(s.kind()).isEqualTo(StartingOffsets.Kind.OFFSETS);
        assertThat(s.offsets())
                .isEqualTo(Map.of("orders", Map.of(0, 23L, 1, -2L), "items", Map.of(0, -1L)));
        assertThat(s.toString()).isEqualTo("{\"items\":{\"0\":-1},\"orders\":{\"0\":23,\"1\":-2}}");
        assertThat(StartingOffsets.parse(s.toString())).isEqualTo(s);
        // named offset, -2 = earliest, -1 = end, an unnamed partition = earliest
        assertThat(s.startOf(new TopicPartition("orders", 0), 5, 40)).isEqualTo(23);
        assertThat(s.startOf(new TopicPartition("orders", 1), 5, 40)).isEqualTo(5);
        assertThat(s.startOf(new TopicPartition("items", 0), 5, 40)).isEqualTo(40);
        assertThat(s.startOf(new TopicPartition("orders", 2), 7, 40)).isEqualTo(7);
        assertThat(s.startOf(new TopicPartition("other", 0), 3, 40)).isEqualTo(3);
        // the edges of a partition's records are valid starts
        assertThat(s.startOf(new TopicPartition("orders", 0), 23, 23)).isEqualTo(23);
        assertThat(
                        s.unknownPartitions(
                                List.of(
                                        new TopicPartition("orders", 0),
                                        new TopicPartition("items", 0))))
                .containsExactly("orders-1");
    }

    @Test
    void anOffsetOutsideThePartitionsRecordsIsRefused() {
        StartingOffsets s = StartingOffsets.parse("{\"orders\":{\"0\":23}}");
        assertThatThrownBy(() -> s.startOf(new TopicPartition("orders", 0), 30, 90))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "starting-offsets: partition 0 of topic 'orders' starts at offset 23,"
                                + " outside its records [30, 90] (earliest offset, end)");
        assertThatThrownBy(() -> s.startOf(new TopicPartition("orders", 0), 0, 20))
                .hasMessage(
                        "starting-offsets: partition 0 of topic 'orders' starts at offset 23,"
                                + " outside its records [0, 20] (earliest offset, end)");
    }

    @Test
    void malformedPerPartitionOffsetsAreRefusedWithWhatIsWrong() {
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{\"0\":23}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "starting-offsets: per-partition offsets are not valid JSON (")
                .hasMessageEndingWith("): {\"orders\":{\"0\":23}");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":23}"))
                .hasMessage(
                        "starting-offsets: expected per-partition offsets as"
                                + " {\"topic\":{\"<partition>\":<offset>, ...}, ...}, got"
                                + " {\"orders\":23}");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{\"p0\":23}}"))
                .hasMessage("starting-offsets: 'p0' of topic 'orders' is not a partition number");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{\"0\":2.5}}"))
                .hasMessage(
                        "starting-offsets: the offset of partition 0 of topic 'orders' is not a"
                                + " whole number: 2.5");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{\"0\":\"earliest\"}}"))
                .hasMessage(
                        "starting-offsets: the offset of partition 0 of topic 'orders' is not a"
                                + " whole number: \"earliest\"");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{\"0\":-3}}"))
                .hasMessage(
                        "starting-offsets: partition 0 of topic 'orders' at offset -3: partitions"
                                + " are numbers >= 0, offsets are >= 0, -2 (earliest) or -1"
                                + " (latest)");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{\"-1\":0}}"))
                .hasMessage(
                        "starting-offsets: partition -1 of topic 'orders' at offset 0: partitions"
                                + " are numbers >= 0, offsets are >= 0, -2 (earliest) or -1"
                                + " (latest)");
        assertThatThrownBy(() -> StartingOffsets.parse("{\"orders\":{}}"))
                .hasMessage("starting-offsets: topic 'orders' names no partition");
        assertThatThrownBy(() -> StartingOffsets.parse("{}"))
                .hasMessage("starting-offsets: the per-partition offsets name no topic");
        assertThatThrownBy(() -> StartingOffsets.parse("first"))
                .hasMessage(
                        "starting-offsets: expected earliest, latest, committed, timestamp:<epoch"
                                + " ms> or per-partition offsets {\"topic\":{\"0\":23,\"1\":-2}},"
                                + " got 'first'");
    }
}

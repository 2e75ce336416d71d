package dev.changeflow.jobs.sql;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SourceVersionFunction} (docs/semantics.md G2, {@code _source_version}): the largest value
 * among the accumulated and the retracted rows, directly and as Flink's planner runs it over a
 * changelog.
 */
class SourceVersionFunctionTest {

    @Test
    void accumulatedAndRetractedValuesBothCountAndNullsAreIgnored() {
        SourceVersionFunction f = new SourceVersionFunction();
        SourceVersionFunction.Accumulator acc = f.createAccumulator();
        assertThat(f.getValue(acc)).isNull();
        f.accumulate(acc, null);
        f.retract(acc, null);
        assertThat(f.getValue(acc)).isNull();
        f.accumulate(acc, 3L);
        f.accumulate(acc, 1L);
        assertThat(f.getValue(acc)).isEqualTo(3L);
        // the row carrying 3 leaves (MAX would drop back to 1); a retraction of version 5 is a
        // change at 5
        f.retract(acc, 3L);
        assertThat(f.getValue(acc)).isEqualTo(3L);
        f.retract(acc, 5L);
        assertThat(f.getValue(acc)).isEqualTo(5L);
        f.accumulate(acc, 4L);
        assertThat(f.getValue(acc)).isEqualTo(5L);
        // negative values (not versions, but BIGINT) order as numbers
        SourceVersionFunction.Accumulator negative = f.createAccumulator();
        f.accumulate(negative, -7L);
        assertThat(f.getValue(negative)).isEqualTo(-7L);
        f.resetAccumulator(acc);
        assertThat(f.getValue(acc)).isNull();
    }

    @Test
    void mergeTakesTheLargestOfTheSeenAccumulators() {
        SourceVersionFunction f = new SourceVersionFunction();
        SourceVersionFunction.Accumulator acc = f.createAccumulator();
        SourceVersionFunction.Accumulator empty = f.createAccumulator();
        f.merge(acc, List.of(empty));
        assertThat(f.getValue(acc)).isNull();
        SourceVersionFunction.Accumulator a = f.createAccumulator();
        f.accumulate(a, 7L);
        SourceVersionFunction.Accumulator b = f.createAccumulator();
        f.retract(b, 9L);
        f.merge(acc, List.of(a, empty));
        assertThat(f.getValue(acc)).isEqualTo(7L);
        f.merge(acc, List.of(b));
        assertThat(f.getValue(acc)).isEqualTo(9L);
        SourceVersionFunction.Accumulator c = f.createAccumulator();
        f.accumulate(c, 2L);
        f.merge(acc, List.of(c));
        assertThat(f.getValue(acc)).isEqualTo(9L);
    }

    /**
     * Registered as {@code FlinkSqlSession} does, over a changelog of (id, grp, v): group a gets
     * inserts at 1, an update at 2 and the delete of its updated row at 3 (its last change: 3);
     * group b an insert at 1 and one at 4; group c an insert at 2 whose update moves the row to
     * group b at 5 (c is deleted, b's last change is 5). The final rows of the group aggregation
     * are exact.
     */
    @Test
    void flinksGroupAggregationOverAChangelogGivesTheLastChangingVersion() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(env, EnvironmentSettings.inStreamingMode());
        SourceVersionFunction.register(tEnv);
        List<Row> changes =
                List.of(
                        Row.ofKind(RowKind.INSERT, 1L, "a", 1L),
                        Row.ofKind(RowKind.INSERT, 2L, "a", 1L),
                        Row.ofKind(RowKind.INSERT, 3L, "b", 1L),
                        Row.ofKind(RowKind.UPDATE_BEFORE, 2L, "a", 2L),
                        Row.ofKind(RowKind.UPDATE_AFTER, 2L, "a", 2L),
                        Row.ofKind(RowKind.INSERT, 4L, "c", 2L),
                        Row.ofKind(RowKind.DELETE, 2L, "a", 3L),
                        Row.ofKind(RowKind.INSERT, 5L, "b", 4L),
                        Row.ofKind(RowKind.UPDATE_BEFORE, 4L, "c", 5L),
                        Row.ofKind(RowKind.UPDATE_AFTER, 4L, "b", 5L));
        tEnv.createTemporaryView(
                "t",
                tEnv.fromChangelogStream(
                        env.fromData(changes)
                                .returns(
                                        org.apache.flink.api.common.typeinfo.Types.ROW_NAMED(
                                                new String[] {"id", "grp", "v"},
                                                org.apache.flink.api.common.typeinfo.Types.LONG,
                                                org.apache.flink.api.common.typeinfo.Types.STRING,
                                                org.apache.flink.api.common.typeinfo.Types.LONG)),
                        Schema.newBuilder()
                                .column("id", DataTypes.BIGINT())
                                .column("grp", DataTypes.STRING())
                                .column("v", DataTypes.BIGINT())
                                .build()));
        Map<String, String> rows = new TreeMap<>();
        try (CloseableIterator<Row> it =
                tEnv.executeSql(
                                "SELECT grp, COUNT(*) AS n, source_version(v) AS sv FROM t GROUP"
                                        + " BY grp")
                        .collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                String grp = (String) r.getField(0);
                if (r.getKind() == RowKind.INSERT || r.getKind() == RowKind.UPDATE_AFTER) {
                    rows.put(grp, r.getField(1) + "," + r.getField(2));
                } else {
                    rows.remove(grp);
                }
            }
        }
        assertThat(rows).isEqualTo(Map.of("a", "1,3", "b", "3,5"));
    }
}
